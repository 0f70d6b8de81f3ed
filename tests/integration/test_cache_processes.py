"""The response cache against a real HTTP server on 127.0.0.1 (tests/fake_llm, its own process):
the demo project run twice from the command line, and processes sharing one cache folder."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.llm.cache import CACHE_FILE, _decode
from tests.conftest import Main
from tests.fake_llm.server import ServerHandle, run_server

ROOT = Path(__file__).parents[2]
SAME = ["original_id", "outcome", "status", "rejection", "explanation",
        "llm_raw_response_content", "llm_prompt_tokens", "llm_completion_tokens"]  # fmt: skip


@pytest.fixture(scope="module")
def server() -> Iterator[ServerHandle]:
    with run_server(latency=0.02, seed=3) as handle:
        yield handle


def add_live_judge(project: Path, server: ServerHandle) -> int:
    """Give the demo project a judge on the loopback server; the number of its data rows."""
    evaluator = MetaEvaluator(project, load=True)
    prompt = "Did the assistant refuse?\nRequest: {prompt}\nResponse: {llm_response}"
    evaluator.add_judge("live", "openai", "m", prompt, base_url=f"{server.base_url}/v1")
    evaluator.save_state(include_data=False)
    assert evaluator.data is not None
    return len(evaluator.data)


def calls(server: ServerHandle) -> int:
    return int(server.stats()["total_requests"])


def table(project: Path, run_id: str) -> pl.DataFrame:
    return pl.read_parquet(project / "results" / run_id / "live.parquet")


def test_the_demo_run_twice_pays_once_and_no_cache_pays_again(
    project: Path, server: ServerHandle, entry: Main
) -> None:
    rows = add_live_judge(project, server)
    server.reset()
    first = entry("run", project, "--judges", "live", "--run-id", "first")
    assert first.returncode == 0, first
    assert calls(server) == rows
    second = entry("run", project, "--judges", "live", "--run-id", "second")
    assert second.returncode == 0, second
    assert calls(server) == rows  # 0 HTTP calls
    assert f"({rows} from the response cache)" in second.stdout
    assert table(project, "second").select(SAME).equals(table(project, "first").select(SAME))
    assert table(project, "second")["cached"].all()
    fresh = entry("run", project, "--judges", "live", "--run-id", "third", "--no-cache")
    assert fresh.returncode == 0, fresh
    assert calls(server) == 2 * rows  # N calls
    assert "from the response cache" not in fresh.stdout
    assert not table(project, "third")["cached"].any()


def test_a_cache_dir_that_cannot_be_made_stops_the_run_before_any_call(
    project: Path, server: ServerHandle, entry: Main, tmp_path: Path
) -> None:
    add_live_judge(project, server)
    (tmp_path / "file").write_text("in the way")
    server.reset()
    done = entry("run", project, "--judges", "live", "--cache-dir", tmp_path / "file" / "cache")
    assert done.returncode == 2, done  # a StorageError; 4 when it is a permission or a full disk
    assert str(tmp_path / "file" / "cache") in done.stderr and "--no-cache" in done.stderr
    assert calls(server) == 0


RUN = textwrap.dedent(
    """
    import sys
    from meta_evaluator import MetaEvaluator
    MetaEvaluator(sys.argv[1], load=True).run_judges_async(
        ["live"], sys.argv[2], max_concurrency=4)
    """
)


def start(project: Path, run_id: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the cache folder: the test's own
    return subprocess.Popen([sys.executable, "-c", RUN, str(project), run_id], cwd=ROOT, env=env)


def check_cache_file(folder: Path) -> int:
    """Every entry of the cache file reads back as an answer; how many there are."""
    with sqlite3.connect(folder / CACHE_FILE) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        values = [v for (v,) in db.execute("SELECT value FROM answers")]
        keys = [k for (k,) in db.execute("SELECT key FROM answers")]
    assert all(_decode(v) is not None for v in values)
    assert len(set(keys)) == len(keys)
    return len(values)


def test_two_processes_share_one_cache_folder(
    project: Path, server: ServerHandle, tmp_path: Path, response_cache_dir: Path
) -> None:
    rows = add_live_judge(project, server)
    copies = []
    for name in ("a", "b", "c"):
        copies.append(tmp_path / name)
        subprocess.run(["cp", "-r", str(project), str(copies[-1])], check=True)
    server.reset()
    # At the same time, on the same rows: neither can count on the other's answers...
    both = [start(copies[0], "together"), start(copies[1], "together")]
    assert [p.wait(timeout=120) for p in both] == [0, 0]
    per_prompt = server.stats()["per_prompt"]
    assert len(per_prompt) == rows and max(per_prompt.values()) <= 2  # each paid at most twice
    assert rows <= calls(server) <= 2 * rows
    assert check_cache_file(response_cache_dir) == rows  # one whole entry per request
    together = [table(copy, "together").select(SAME) for copy in copies[:2]]
    assert together[0].equals(together[1])
    # ...but a process started after they finished pays nothing.
    before = calls(server)
    assert start(copies[2], "after").wait(timeout=120) == 0
    assert calls(server) == before
    assert table(copies[2], "after")["cached"].all()
    assert table(copies[2], "after").select(SAME).equals(together[0])
    assert check_cache_file(response_cache_dir) == rows


def test_a_dry_run_counts_the_answers_the_cache_holds(
    project: Path, server: ServerHandle, entry: Main, response_cache_dir: Path
) -> None:
    rows = add_live_judge(project, server)
    before = entry("run", project, "--judges", "live", "--dry-run")
    assert f"  calls:            {rows}\n" in before.stdout
    assert "from the cache" not in before.stdout
    assert not (response_cache_dir / CACHE_FILE).exists()  # a dry run creates nothing
    assert entry("run", project, "--judges", "live", "--run-id", "first").returncode == 0
    server.reset()
    after = entry("run", project, "--judges", "live", "--run-id", "second", "--dry-run")
    assert "  calls:            0\n" in after.stdout, after.stdout
    assert f"  from the cache:   {rows} " in after.stdout
    assert "  estimated tokens: 0\n" in after.stdout
    again = entry("run", project, "--judges", "live", "--run-id", "second", "--dry-run",
                  "--no-cache")  # fmt: skip
    assert f"  calls:            {rows}\n" in again.stdout
    assert calls(server) == 0  # the dry runs called nothing
