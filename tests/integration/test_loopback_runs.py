"""Judge runs against a real HTTP server on 127.0.0.1 (tests/fake_llm, its own process):
injected faults, a killed run resumed, the same answers as an uninterrupted run."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge._prompting import build_request
from tests.fake_llm.server import ServerHandle, expected_answer, run_server

ROOT = Path(__file__).parents[2]


def frame(n: int) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "qid": [1000 + i for i in range(n)],
            "prompt": [f"Request number {i}: can you help me with task {i % 7}?" for i in range(n)],
            "response": [
                f"Answer {i}: " + ("I can't help." if i % 3 else "Sure, here.") for i in range(n)
            ],
        }
    )


def make_project(folder: Path, n: int, base_url: str) -> MetaEvaluator:
    evaluator = MetaEvaluator(folder)
    evaluator.add_data(DataLoader.load_from_dataframe("chats", frame(n), "qid"))
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"rejection": ["rejection", "not rejection"], "explanation": None},
            prompt_columns=["prompt"],
            response_columns=["response"],
        )
    )
    evaluator.add_judge("j", "openai", "gpt-4o-mini", "Did {response} refuse {prompt}?",
                        base_url=f"{base_url}/v1")  # fmt: skip
    evaluator.save_state()
    return evaluator


def meant(evaluator: MetaEvaluator) -> dict[Any, tuple[str, dict[str, Any]]]:
    """Per row id: the prompt's key on the server, and the answer the server means."""
    assert evaluator.data is not None and evaluator.eval_task is not None
    judge = evaluator.judge_registry["j"]
    out = {}
    for row in evaluator.data.data.to_dicts():
        request = build_request(judge, evaluator.eval_task, row, "structured")
        prompt = request.messages[-1]["content"]
        assert request.output_schema is not None
        key = hashlib.sha256(prompt.encode()).hexdigest()
        out[row["qid"]] = (key, expected_answer(prompt, request.output_schema.schema))
    return out


@pytest.fixture
def faulty_server() -> Iterator[ServerHandle]:
    # retry-after-ms: each 429 pauses the endpoint 0.3 s rather than Retry-After's 1 s (the
    # test took 33 s, now about 10)
    with run_server(
        latency=0.01, rate_429=0.10, rate_500=0.05, rate_malformed=0.02, rate_hang=0.02,
        hang_seconds=1.5, retry_after_ms=True, seed=7,
    ) as server:  # fmt: skip
        yield server


def test_injected_faults_every_row_ends_once_with_what_the_server_meant(
    tmp_path: Path, faulty_server: ServerHandle
) -> None:
    n, max_retries = 300, 4
    evaluator = make_project(tmp_path / "p", n, faulty_server.base_url)
    results = evaluator.run_judges_async(
        max_concurrency=32, max_retries=max_retries, timeout=0.5, backoff_base=0.05
    )["j"].results_data
    stats = faulty_server.stats()
    assert stats["by_fault"]["429"] > 10 and stats["by_fault"]["hang"] > 0  # faults did happen
    assert results["original_id"].to_list() == frame(n)["qid"].to_list()  # none lost, none twice
    assert set(results["outcome"]) <= {"valid", "invalid", "error"}
    expected = meant(evaluator)
    for row in results.iter_rows(named=True):
        key, answer = expected[row["original_id"]]
        calls = stats["per_prompt"].get(key, 0)
        assert 1 <= calls <= max_retries + 1
        assert row["attempts"] == calls, row  # every call the server saw is counted
        if row["outcome"] == "valid":
            assert row["rejection"] == answer["rejection"]
            assert row["explanation"] == answer["explanation"]
        else:
            assert row["attempts"] == max_retries + 1 and row["outcome"] == "error", row
    assert (results["outcome"] == "valid").sum() >= n - 3


def test_a_killed_run_resumes_without_paying_twice(tmp_path: Path) -> None:
    n, concurrency = 400, 16
    # 0.08 s a call: the run takes 2 s, and the kill, once a quarter of the rows are stored,
    # leaves 1.5 s of slack for a loaded machine
    with run_server(latency=0.08, seed=1) as server:
        # The uninterrupted reference, on the same server.
        reference = make_project(tmp_path / "ref", n, server.base_url)
        expected = reference.run_judges_async(max_concurrency=concurrency)["j"].results_data
        server.reset()
        project = tmp_path / "killed"
        make_project(project, n, server.base_url)
        script = textwrap.dedent(
            f"""
            from meta_evaluator import MetaEvaluator
            MetaEvaluator({str(project)!r}, load=True).run_judges_async(
                run_id="r1", max_concurrency={concurrency})
            """
        )
        child = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
        rows = project / "results" / "r1" / "j.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if rows.is_file() and rows.read_bytes().count(b"\n") >= n // 4:
                break
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
        done_before = rows.read_bytes().count(b"\n")
        assert n // 4 <= done_before < n, "the kill should land mid-run"
        assert not (project / "results" / "r1" / "j.parquet").exists()
        resumed = MetaEvaluator(project, load=True).run_judges_async(max_concurrency=concurrency)
        final = resumed["j"]
        assert final.run_id == "r1"  # the unfinished run was continued
        total = server.stats()["total_requests"]
    assert total <= n + concurrency
    columns = ["original_id", "outcome", "status", "rejection", "explanation"]
    assert final.results_data.select(columns).equals(expected.select(columns))
    lines = [json.loads(x) for x in rows.read_text().splitlines()]
    assert len({x["original_id"] for x in lines}) == n


@pytest.mark.parametrize(
    ("client", "method"),
    [("anthropic", "structured"), ("anthropic", "xml"), ("openai", "xml")],
)
def test_other_clients_and_methods_against_the_server(
    tmp_path: Path, client: str, method: str
) -> None:
    with run_server(latency=0.0, seed=2) as server:
        evaluator = make_project(tmp_path / "p", 30, server.base_url)
        evaluator.add_judge("j", client, "claude-x", "Did {response} refuse {prompt}?",
                            base_url=f"{server.base_url}/v1", answering_method=method,
                            overwrite=True)  # fmt: skip
        results = evaluator.run_judges_async()["j"].results_data
        stats = server.stats()
    endpoint = "/v1/messages" if client == "anthropic" else "/v1/chat/completions"
    assert stats["by_endpoint"] == {endpoint: 30}
    assert set(results["outcome"]) == {"valid"}
    assert results["llm_prompt_tokens"].min() > 0
    assert set(results["rejection"]) <= {"rejection", "not rejection"}
