"""Runs that reuse stored answers (the response cache), through the public API.

The in-process transport (`httpx.MockTransport`) counts the calls that reach the "server";
each test has its own cache folder (the autouse fixture in tests/conftest.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.judge.result_row import ResultRow
from meta_evaluator.llm.cache import CACHE_FILE
from tests.conftest import chats, rejection_project
from tests.judge.test_runner import BASE, Server

ROWS = 12


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


SAME = ["original_id", "outcome", "status", "rejection", "llm_raw_response_content",
        "llm_prompt_tokens", "llm_completion_tokens"]  # fmt: skip


def project(tmp_path: Path, **judge: Any) -> MetaEvaluator:
    evaluator = rejection_project(tmp_path / "p", chats(ROWS))
    evaluator.add_judge("j", "openai", "m", "Did {response} refuse {prompt}?", base_url=BASE,
                        **judge)  # fmt: skip
    return evaluator


def run(evaluator: MetaEvaluator, server: Server, **options: Any) -> pl.DataFrame:
    options.setdefault("backoff_base", 0.001)
    results = evaluator.run_judges_async(transport=httpx.MockTransport(server), **options)
    return results["j"].results_data


def test_a_new_run_id_makes_no_call_and_gives_the_same_results(tmp_path: Path) -> None:
    evaluator, server = project(tmp_path), Server(lambda request, n: None)
    first = run(evaluator, server, run_id="monday")
    assert server.total == ROWS and not first["cached"].any()
    again = run(evaluator, server, run_id="tuesday")
    assert server.total == ROWS  # not one more call
    assert again.select(SAME).equals(first.select(SAME))
    assert again["cached"].all() and (again["attempts"] == 0).all()
    assert again["llm_call_duration_seconds"].is_null().all()  # no call, no duration
    # The row store says so too, and reads back as the table does.
    lines = (evaluator.paths.results_dir / "tuesday" / "j.jsonl").read_text().splitlines()
    assert all(json.loads(line)["cached"] is True for line in lines)
    first_lines = (evaluator.paths.results_dir / "monday" / "j.jsonl").read_text().splitlines()
    assert all("cached" not in json.loads(line) for line in first_lines)  # as before the cache
    # Another project on the machine that sends the same requests pays nothing either.
    other = rejection_project(tmp_path / "other", chats(ROWS))
    other.add_judge("k", "openai", "m", "Did {response} refuse {prompt}?", base_url=BASE)
    other.run_judges_async(transport=httpx.MockTransport(server))
    assert server.total == ROWS


def test_cache_false_asks_every_row_and_stores_nothing(tmp_path: Path) -> None:
    evaluator, server = project(tmp_path), Server(lambda request, n: None)
    run(evaluator, server, run_id="a", cache=False)
    run(evaluator, server, run_id="b", cache=False)
    assert server.total == 2 * ROWS
    assert not any(Path(p).name == CACHE_FILE for p in _cache_files())  # never opened
    run(evaluator, server, run_id="c")
    run(evaluator, server, run_id="d")
    assert server.total == 3 * ROWS  # c asked and stored, d reused


def test_a_judge_measuring_drift_turns_the_cache_off(tmp_path: Path) -> None:
    evaluator, server = project(tmp_path, cache=False), Server(lambda request, n: None)
    assert evaluator.judge_registry["j"].cache is False
    run(evaluator, server, run_id="a")
    again = run(evaluator, server, run_id="b")
    assert server.total == 2 * ROWS and not again["cached"].any()
    # The setting survives the project's state file, and does not change the fingerprint.
    evaluator.save_state()
    loaded = MetaEvaluator(tmp_path / "p", load=True)
    assert loaded.judge_registry["j"].cache is False
    # Written only when off: the state of a judge with the default is as it was before.
    judges = json.loads((tmp_path / "p" / "main_state.json").read_text())["judges"]
    assert judges["j"]["cache"] is False
    loaded.add_judge("k", "openai", "m", "Judge {response}", base_url=BASE)
    loaded.save_state()
    judges = json.loads((tmp_path / "p" / "main_state.json").read_text())["judges"]
    assert "cache" not in judges["k"]


def test_a_judge_yaml_says_cache_false(tmp_path: Path) -> None:
    evaluator = rejection_project(tmp_path / "p", chats(ROWS))
    (tmp_path / "judges.yaml").write_text(
        f"judges:\n  - id: drift\n    llm_client: openai\n    model: m\n    base_url: {BASE}\n"
        "    prompt: 'Did {response} refuse?'\n    cache: false\n",
        encoding="utf-8",
    )
    (judge,) = evaluator.load_judges_from_yaml(tmp_path / "judges.yaml")
    assert judge.cache is False


def test_each_of_several_answers_has_its_own_entry(tmp_path: Path) -> None:
    """consistency=k at temperature > 0: k calls per row, never one answer repeated k times."""
    evaluator, server = project(tmp_path, temperature=0.8), Server(lambda request, n: None)
    first = run(evaluator, server, run_id="a", consistency=3)
    assert server.total == 3 * ROWS and set(server.calls.values()) == {3}
    assert (first["attempts"] == 3).all()
    again = run(evaluator, server, run_id="b", consistency=3)
    assert server.total == 3 * ROWS and again["cached"].all()
    once = run(evaluator, server, run_id="c")  # the first answer serves a single-answer run
    assert server.total == 3 * ROWS and once["cached"].all()
    more = run(evaluator, server, run_id="d", consistency=4)  # only the fourth is new
    assert server.total == 4 * ROWS and not more["cached"].any()


def test_retry_invalid_asks_a_stored_invalid_answer_again(tmp_path: Path) -> None:
    def refuse_first(request: httpx.Request, n: int) -> httpx.Response | None:
        if n == 1 and "question 3" in request.content.decode():  # one row answers badly first
            choice = {"message": {"content": "no idea"}, "finish_reason": "stop"}
            return httpx.Response(200, json={"choices": [choice]})
        return None

    evaluator, server = project(tmp_path), Server(refuse_first)
    first = run(evaluator, server, run_id="a")
    assert first["outcome"].to_list().count("invalid") == 1
    second = run(evaluator, server, run_id="b")  # the invalid answer is reused as stored
    assert server.total == ROWS and second["outcome"].to_list().count("invalid") == 1
    third = run(evaluator, server, run_id="c", retry=["invalid"])  # asked again, and stored
    assert server.total == ROWS + 1 and (third["outcome"] == "valid").all()
    assert third["cached"].to_list().count(False) == 1
    run(evaluator, server, run_id="d")
    assert server.total == ROWS + 1


def test_errors_are_never_stored(tmp_path: Path) -> None:
    def fail_first(request: httpx.Request, n: int) -> httpx.Response | None:
        return httpx.Response(503, text="busy") if n == 1 else None

    evaluator, server = project(tmp_path), Server(fail_first)
    first = run(evaluator, server, run_id="a", max_retries=0)
    assert (first["outcome"] == "error").all()
    again = run(evaluator, server, run_id="b", max_retries=0)
    assert server.total == 2 * ROWS and (again["outcome"] == "valid").all()


def test_no_key_reaches_the_cache_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-proj-" + "Zq8" * 16
    monkeypatch.setenv("JUDGE_KEY", secret)
    seen: list[str] = []

    def check_key(request: httpx.Request, n: int) -> httpx.Response | None:
        seen.append(request.headers["authorization"])
        return None

    evaluator, server = project(tmp_path, api_key_env="JUDGE_KEY"), Server(check_key)
    run(evaluator, server)
    assert seen and all(secret in header for header in seen)  # the key was sent...
    files = _cache_files()
    assert any(p.name == CACHE_FILE for p in files)
    for path in files:  # ...and nothing of it was stored
        assert secret.encode() not in path.read_bytes(), path
        assert secret[8:20].encode() not in path.read_bytes(), path


def test_an_unusable_cache_file_never_stops_a_run(
    tmp_path: Path, response_cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (response_cache_dir / CACHE_FILE).write_bytes(b"garbage" * 1000)
    evaluator, server = project(tmp_path), Server(lambda request, n: None)
    first = run(evaluator, server, run_id="a")
    run(evaluator, server, run_id="b")
    assert (first["outcome"] == "valid").all() and server.total == 2 * ROWS
    assert caplog.text.count("cannot be used") == 2  # once per run


def test_a_named_cache_dir_is_used(tmp_path: Path) -> None:
    evaluator, server = project(tmp_path), Server(lambda request, n: None)
    run(evaluator, server, run_id="a", cache_dir=tmp_path / "mine")
    assert (tmp_path / "mine" / CACHE_FILE).is_file()
    run(evaluator, server, run_id="b", cache_dir=str(tmp_path / "mine"))
    assert server.total == ROWS


def test_old_rows_read_as_not_cached() -> None:
    line = {"original_id": 1, "judge_id": "j", "run_id": "r", "outcome": "valid"}
    assert ResultRow.from_record(line, []).cached is False
    cached = ResultRow(1, "j", "r", "valid", "success", cached=True)
    assert cached.to_record()["cached"] is True
    assert ResultRow.from_record(cached.to_record(), []).cached is True


def _cache_files() -> list[Path]:
    import os

    folder = Path(os.environ["META_EVALUATOR_CACHE_DIR"])
    return [p for p in folder.iterdir() if p.is_file()]


@pytest.mark.anyio
async def test_answers_of_a_cancelled_run_are_stored(tmp_path: Path) -> None:
    """Fewer than a batch and sooner than its time: only the close on cancellation stores them."""
    from tests.judge.test_cancel import SlowTransport

    n = 60
    evaluator = rejection_project(tmp_path / "p", chats(n))
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE)
    slow = SlowTransport(0.05)
    with anyio.move_on_after(0.3) as scope:
        await evaluator.arun_judges(run_id="r", max_concurrency=4, transport=slow)
    assert scope.cancelled_caught
    done = len((evaluator.paths.results_dir / "r" / "j.jsonl").read_text().splitlines())
    assert 0 < done < n
    fast = SlowTransport(0.0)
    results = await evaluator.arun_judges(run_id="other", max_concurrency=4, transport=fast)
    assert fast.calls == n - done  # what the cancelled run received was not paid again
    assert results["j"].results_data["cached"].sum() == done


def test_rows_from_the_cache_cost_nothing_under_a_cost_ceiling(tmp_path: Path) -> None:
    evaluator, server = project(tmp_path), Server(lambda request, n: None)
    run(evaluator, server, run_id="a")
    (tmp_path / "p" / "prices.yaml").write_text("m: {prompt: 1.0, completion: 1.0}\n")
    results = evaluator.run_judges_async(
        run_id="b", max_cost=0.0, transport=httpx.MockTransport(server)
    )["j"]  # no CostCeilingError: nothing is reserved nor spent for a stored answer
    assert server.total == ROWS and results.results_data["cached"].all()
    assert results.cost_usd == 0.0


def test_a_dry_run_the_next_day_writes_nothing_and_counts_every_answer(
    tmp_path: Path, response_cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Answers stored 2 h ago (past the hour after which a hit refreshes its entry): the dry run
    counts them all, leaves the file as it was, and says nothing; the run after it reuses all."""
    import sqlite3
    import time

    evaluator, server = project(tmp_path), Server(lambda request, n: None)
    run(evaluator, server, run_id="a")
    with sqlite3.connect(response_cache_dir / CACHE_FILE) as db:
        db.execute("UPDATE answers SET used = used - 7200")
    # (but -shm: SQLite's shared lock memory, which every reader writes)
    files = {p.name: p.read_bytes() for p in _cache_files() if not p.name.endswith("-shm")}
    plan = evaluator.plan_run(["j"], run_id="b")
    time.sleep(0.6)  # past FLUSH_SECONDS: a cache that writes would commit now
    summary = plan.summary()
    assert summary.from_cache == ROWS and summary.judges[0].calls == 0
    assert caplog.text == ""
    assert {p.name: p.read_bytes() for p in _cache_files() if not p.name.endswith("-shm")} == files
    assert run(evaluator, server, run_id="b")["cached"].all() and server.total == ROWS
