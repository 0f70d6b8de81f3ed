"""Judge runs against a server nobody here wrote: @copilotkit/aimock (npm, MIT), on 127.0.0.1.

Its fixtures map text in the prompt to an answer; its chaos options inject 429 + Retry-After,
500s, malformed bodies and disconnects. Skipped, with the reason, where node/npm are missing.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask
from tests.conftest import stop, unused_port

VERSION = "1.43.0"
CACHE = Path(__file__).parents[2] / ".cache" / f"aimock-{VERSION}"
#: Rows judged. After aimock's first chaos 429 (which states a budget of 60 requests a minute)
#: every call is paced at one a second, so each row beyond the first burst costs about a second.
N = 20


def label(i: int) -> str:
    return "rejection" if i % 3 else "not rejection"


def install() -> Path:
    cli = CACHE / "node_modules" / "@copilotkit" / "aimock" / "dist" / "cli.js"
    if cli.is_file():
        return cli
    if not (shutil.which("node") and shutil.which("npm")):
        pytest.skip("node and npm are needed to install @copilotkit/aimock")
    CACHE.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["npm", "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", "--silent",
         f"@copilotkit/aimock@{VERSION}"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if done.returncode != 0 or not cli.is_file():
        pytest.skip(f"could not install @copilotkit/aimock: {done.stderr.strip()[-300:]}")
    return cli


@pytest.fixture(scope="module")
def aimock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    cli = install()
    folder = tmp_path_factory.mktemp("aimock")
    fixtures = {
        "fixtures": [
            {
                "match": {"userMessage": f"item-token-{i:03d}."},
                "response": {
                    "content": json.dumps({"rejection": label(i), "explanation": f"e{i}"})
                },
            }
            for i in range(N)
        ]
    }
    (folder / "fixtures.json").write_text(json.dumps(fixtures))
    port = unused_port()
    process = subprocess.Popen(
        ["node", str(cli), "-p", str(port), "-f", str(folder / "fixtures.json"),
         "--log-level", "warn", "--chaos-ratelimit", "0.15", "--chaos-drop", "0.1",
         "--chaos-malformed", "0.1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("aimock did not start within 30 s")
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


@pytest.mark.parametrize("client", ["openai", "anthropic"])
def test_judges_against_aimock_with_chaos(tmp_path: Path, aimock: str, client: str) -> None:
    frame = pl.DataFrame(
        {"qid": list(range(N)), "response": [f"Answer with item-token-{i:03d}." for i in range(N)]}
    )
    evaluator = MetaEvaluator(tmp_path / "p")
    evaluator.add_data(DataLoader.load_from_dataframe("d", frame, "qid"))
    evaluator.add_eval_task(
        EvalTask(
            {"rejection": ["rejection", "not rejection"], "explanation": None}, None, ["response"]
        )
    )
    evaluator.add_judge("j", client, "gpt-4o-mini", "Judge: {response}", base_url=f"{aimock}/v1")
    results = evaluator.run_judges_async(max_retries=10, backoff_base=0.05, timeout=10)["j"]
    data = results.results_data
    assert data["original_id"].to_list() == list(range(N))
    assert set(data["outcome"]) == {"valid"}, data.filter(pl.col("outcome") != "valid").rows()
    assert data["rejection"].to_list() == [label(i) for i in range(N)]
    assert data["explanation"].to_list() == [f"e{i}" for i in range(N)]
    assert data["attempts"].max() > 1  # the chaos did reach us and was retried
