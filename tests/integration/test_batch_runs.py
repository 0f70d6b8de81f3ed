"""Batch mode against the fake server's batch endpoints (OpenAI Batch, Anthropic Message Batches).

Every run goes over real HTTP on 127.0.0.1: submission, reconnection after a kill or a lost
batch id, faults inside batches, retries of error rows, the ledger files of the run folder, and
the `run --batch` command line.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.errors import JudgeConfigError, JudgeRunError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge import fingerprint
from meta_evaluator.judge._clients import build_batch_client
from meta_evaluator.judge._prompting import build_request, prompt_hash
from meta_evaluator.judge.batch_ledger import BatchLedger, BatchRecord, new_batch_key
from meta_evaluator.judge.row_store import read_rows
from meta_evaluator.judge.run_files import RunFiles, RunState, now_iso
from meta_evaluator.results.judge_results import JudgeResults
from tests.conftest import Main
from tests.fake_llm.server import ThreadHandle, start_in_thread
from tests.integration.test_loopback_runs import frame, meant

ROOT = Path(__file__).parents[2]
ROWS = 48
POLL = 0.05
MODEL = {"openai": "gpt-4o-mini", "anthropic": "claude-x"}
PROMPT = "Did {response} refuse {prompt}?"
ERROR_STATUSES = {"rate_limited", "http_error", "malformed_response", "batch_expired"}
CLIENTS = pytest.mark.parametrize("client", ["openai", "anthropic"])


def make_project(
    folder: Path, n: int, server: ThreadHandle, client: str = "openai", **judge: Any
) -> MetaEvaluator:
    """A project of `n` rows with one judge `j` of `client` at the fake server."""
    evaluator = MetaEvaluator(folder)
    evaluator.add_data(DataLoader.load_from_dataframe("chats", frame(n), "qid"))
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"rejection": ["rejection", "not rejection"], "explanation": None},
            prompt_columns=["prompt"],
            response_columns=["response"],
        )
    )
    # The OpenAI client takes the URL with /v1; the Anthropic batch client either way.
    base_url = f"{server.base_url}/v1" if client == "openai" else server.base_url
    evaluator.add_judge("j", client, MODEL[client], PROMPT, base_url=base_url, **judge)
    evaluator.save_state()
    return evaluator


def run(evaluator: MetaEvaluator, **settings: Any) -> JudgeResults:
    """Judge `j`'s results of a batch run with quick polls and backoffs."""
    options: dict[str, Any] = {"batch": True, "batch_poll_interval": POLL, "backoff_base": 0.01}
    return evaluator.run_judges_async(["j"], **{**options, **settings})["j"]


def batch_stats(server: ThreadHandle) -> dict[str, int]:
    counts = server.stats()["batch"]
    names = ("files_uploaded", "batches_created", "requests_submitted", "requests_answered")
    return {name: counts.get(name, 0) for name in (*names, "polls", "downloads")}


def ledger(project: Path, judge: str = "j") -> list[dict[str, Any]]:
    """Every batch record of `judge` in every run of the project (its JSON), oldest first."""
    paths = sorted((project / "results").glob(f"*/{judge}.batches/*.json"))
    records = [json.loads(path.read_text(encoding="utf-8")) for path in paths]
    return sorted(records, key=lambda record: (record["submitted_at"], record["key"]))


def assert_labels_meant(evaluator: MetaEvaluator, results: pl.DataFrame) -> None:
    """Every valid row carries exactly the labels the server means for its prompt."""
    expected = meant(evaluator)
    valid = results.filter(pl.col("outcome") == "valid")
    assert valid.height > 0
    for row in valid.iter_rows(named=True):
        _, answer = expected[row["original_id"]]
        assert row["rejection"] == answer["rejection"], row
        assert row["explanation"] == answer["explanation"], row


def asked(evaluator: MetaEvaluator, server: ThreadHandle) -> dict[Any, int]:
    """Per row id: how many times the server answered its prompt."""
    per_prompt = server.stats()["per_prompt"]
    return {row_id: per_prompt.get(key, 0) for row_id, (key, _) in meant(evaluator).items()}


def stored_ids(path: Path) -> list[Any]:
    return [row["original_id"] for row in read_rows(path)] if path.is_file() else []


# ----- complete batch runs ------------------------------------------------------------------


@CLIENTS
def test_a_batch_run_answers_every_row_once_with_what_the_server_meant(
    tmp_path: Path, client: str
) -> None:
    with start_in_thread(batch_seconds=0.1, seed=1) as server:
        evaluator = make_project(tmp_path / "p", ROWS, server, client)
        result = run(evaluator)
        stats, full = batch_stats(server), server.stats()
        counts = asked(evaluator, server)
    assert result.complete
    data = result.results_data
    assert data["original_id"].to_list() == frame(ROWS)["qid"].to_list()
    assert set(data["outcome"]) == {"valid"}
    assert_labels_meant(evaluator, data)
    assert set(counts.values()) == {1}  # every prompt answered exactly once
    assert stats["batches_created"] == 1
    assert stats["requests_submitted"] == stats["requests_answered"] == ROWS
    assert stats["downloads"] >= 1
    assert stats["files_uploaded"] == (1 if client == "openai" else 0)
    assert full["total_requests"] == 0  # no live call
    [record] = ledger(tmp_path / "p")
    assert record["status"] == "collected"
    assert record["provider"] == client
    assert record["ids"] == data["original_id"].to_list()
    assert record["batch_id"].startswith("batch_" if client == "openai" else "msgbatch_")
    rows = list(read_rows(RunFiles(tmp_path / "p" / "results", result.run_id, "j").rows))
    assert sorted(r["original_id"] for r in rows) == sorted(frame(ROWS)["qid"].to_list())
    assert {r["batch_id"] for r in rows} == {record["batch_id"]}
    assert set(data["batch_id"]) == {record["batch_id"]}  # the results name their batch
    assert (tmp_path / "p" / "results" / result.run_id / "j.parquet").is_file()


@CLIENTS
def test_faults_inside_a_batch_become_error_rows_and_only_those_are_resubmitted(
    tmp_path: Path, client: str
) -> None:
    n = 60
    faults = {"rate_429": 0.1, "rate_500": 0.1, "rate_malformed": 0.1, "batch_expire_rate": 0.1}
    with start_in_thread(batch_seconds=0.1, seed=3, **faults) as server:
        evaluator = make_project(tmp_path / "p", n, server, client)
        first = run(evaluator)
        after_first = batch_stats(server)
        data = first.results_data
        # Every row has exactly one outcome: none lost, none twice, in data order.
        assert first.complete
        assert data["original_id"].to_list() == frame(n)["qid"].to_list()
        rows_file = RunFiles(tmp_path / "p" / "results", first.run_id, "j").rows
        assert sorted(stored_ids(rows_file)) == sorted(frame(n)["qid"].to_list())
        errors = data.filter(pl.col("outcome") == "error")
        assert set(errors["status"]) == ERROR_STATUSES  # each fault shows as its status
        assert errors["error_message"].null_count() == 0
        assert set(data["outcome"]) == {"valid", "error"}
        assert_labels_meant(evaluator, data)
        assert set(asked(evaluator, server).values()) == {1}
        assert after_first["requests_submitted"] == after_first["requests_answered"] == n

        second = run(evaluator, retry=["error"])
        after_second = batch_stats(server)
        counts = asked(evaluator, server)
    error_ids = set(errors["original_id"])
    assert after_second["batches_created"] == 2
    assert after_second["requests_submitted"] == n + len(error_ids)  # only the error rows
    assert {i for i, c in counts.items() if c == 2} == error_ids
    assert {i for i, c in counts.items() if c == 1} == set(frame(n)["qid"]) - error_ids
    again = second.results_data
    assert second.complete
    assert again["original_id"].to_list() == frame(n)["qid"].to_list()
    columns = ["original_id", "outcome", "status", "rejection", "explanation", "timestamp"]
    kept = again.filter(~pl.col("original_id").is_in(list(error_ids))).select(columns)
    assert kept.equals(data.filter(pl.col("outcome") == "valid").select(columns))
    retried = again.filter(pl.col("original_id").is_in(list(error_ids)))
    assert retried.height == len(error_ids)
    assert set(retried["outcome"]) <= {"valid", "error"}
    assert set(retried.filter(pl.col("outcome") == "error")["status"]) <= ERROR_STATUSES
    assert (retried["outcome"] == "valid").sum() > 0
    first_batch, second_batch = (r["batch_id"] for r in ledger(tmp_path / "p"))
    assert set(again["batch_id"]) == {first_batch, second_batch}
    assert set(retried["batch_id"]) == {second_batch}
    assert_labels_meant(evaluator, again)


# ----- waiting, reconnecting ----------------------------------------------------------------


def test_batch_wait_zero_submits_and_a_later_call_collects_the_same_batch(tmp_path: Path) -> None:
    n = 40
    with start_in_thread(batch_seconds=0.5, seed=2) as server:
        evaluator = make_project(tmp_path / "p", n, server)
        first = run(evaluator, batch_wait=0)
        assert not first.complete
        assert first.results_data.height == 0
        files = RunFiles(tmp_path / "p" / "results", first.run_id, "j")
        assert stored_ids(files.rows) == []
        assert not files.table.exists()
        [path] = (files.rows.parent / "j.batches").glob("*.json")
        record = json.loads(path.read_text(encoding="utf-8"))
        assert record["status"] == "submitted"
        assert isinstance(record["batch_id"], str) and record["batch_id"]
        assert record["ids"] == frame(n)["qid"].to_list()
        state = files.read_state()
        assert state is not None and not state.complete

        second = run(evaluator)  # no run_id: the unfinished run is found and reconnected
        stats = batch_stats(server)
    assert second.run_id == first.run_id
    assert second.complete
    assert second.results_data["original_id"].to_list() == frame(n)["qid"].to_list()
    assert_labels_meant(evaluator, second.results_data)
    assert stats["batches_created"] == 1
    assert stats["requests_submitted"] == stats["requests_answered"] == n
    [again] = ledger(tmp_path / "p")
    assert again["status"] == "collected" and again["batch_id"] == record["batch_id"]


@CLIENTS
def test_canceled_batches_are_collected_as_canceled_rows_and_asked_again(
    tmp_path: Path, client: str
) -> None:
    n = 30
    with start_in_thread(batch_seconds=60.0, seed=4) as server:
        evaluator = make_project(tmp_path / "p", n, server, client)
        first = run(evaluator, batch_wait=0)
        assert not first.complete
        canceled = run(evaluator, cancel_batches=True)
        after_cancel = batch_stats(server)
        [record] = ledger(tmp_path / "p")
        retried = run(evaluator, retry=["error"], batch_wait=0.2)
        final = batch_stats(server)
    # Nothing was answered before the cancel: every row is a canceled error, none asked twice.
    assert canceled.run_id == first.run_id and canceled.complete
    frame_ = canceled.results_data
    assert frame_.height == n
    assert set(frame_["outcome"]) == {"error"} and set(frame_["status"]) == {"batch_canceled"}
    assert after_cancel["batches_created"] == 1 and after_cancel["requests_answered"] == 0
    assert record["status"] == "collected"
    assert record["provider_status"] in ("cancelled", "ended")
    # retry=["error"] submits them again, in a new batch that is left to finish.
    assert final["batches_created"] == 2 and final["requests_submitted"] == 2 * n
    assert not retried.complete  # the new batch takes 60 s: still running when the wait ends
    assert retried.run_id != first.run_id  # a new run, seeded with nothing valid to keep


def test_cancel_batches_needs_batch_mode(tmp_path: Path) -> None:
    with start_in_thread() as server:
        evaluator = make_project(tmp_path / "p", 5, server)
        with pytest.raises(JudgeConfigError, match="cancel_batches needs batch=True"):
            evaluator.run_judges_async(["j"], cancel_batches=True)
        assert server.stats()["total_requests"] == 0


def test_a_killed_cli_batch_run_reconnects_without_submitting_again(tmp_path: Path) -> None:
    columns = ["original_id", "outcome", "status", "rejection", "explanation"]
    with start_in_thread(batch_seconds=0.1, seed=4) as reference_server:
        reference = make_project(tmp_path / "ref", ROWS, reference_server)
        expected = run(reference).results_data.select(columns)
    project = tmp_path / "killed"
    with start_in_thread(batch_seconds=3.0, seed=4) as server:
        make_project(project, ROWS, server)
        command = [sys.executable, "-m", "meta_evaluator.cli", "run", str(project), "--batch",
                   "--batch-poll", "0.1"]  # fmt: skip
        child = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and child.poll() is None:
                if any(r["status"] == "submitted" for r in ledger(project)):
                    break
                time.sleep(0.01)
            assert child.poll() is None, "the run should still be waiting for its batch"
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=10)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=10)
        [record] = ledger(project)
        assert record["status"] == "submitted"
        killed_at = batch_stats(server)
        assert killed_at["batches_created"] == 1 and killed_at["requests_answered"] == 0

        resumed = MetaEvaluator(project, load=True).run_judges_async(
            batch=True, batch_poll_interval=POLL
        )["j"]
        stats = batch_stats(server)
    assert resumed.complete
    assert (project / "results" / resumed.run_id / "j.batches").is_dir()  # the killed run
    assert stats["batches_created"] == 1
    assert stats["requests_submitted"] == stats["requests_answered"] == ROWS
    assert resumed.results_data.select(columns).equals(expected)
    [collected] = ledger(project)
    assert collected["status"] == "collected" and collected["batch_id"] == record["batch_id"]


@dataclass
class Lost:
    """A run killed between the provider accepting a batch and the ledger naming its id."""

    evaluator: MetaEvaluator
    files: RunFiles
    record: BatchRecord


def lose_a_batch(evaluator: MetaEvaluator, client: str, *, create: bool) -> tuple[Lost, str | None]:
    """Leave a `submitting` record (and the run's state) as a kill would; create its batch."""
    assert evaluator.data is not None and evaluator.eval_task is not None
    judge, task = evaluator.judge_registry["j"], evaluator.eval_task
    rows = evaluator.data.data.to_dicts()
    requests = [build_request(judge, task, row, "structured") for row in rows]
    record = BatchRecord(
        key=new_batch_key(),
        provider=client,
        fingerprint=fingerprint(judge, task),
        submitted_at=now_iso(),
        ids=[row["qid"] for row in rows],
        prompt_hashes=[prompt_hash(request) for request in requests],
    )
    files = RunFiles(evaluator.paths.results_dir, "killed-run", "j")
    files.write_state(RunState("j", "killed-run", record.fingerprint, now_iso(), None, {}))
    BatchLedger(files).write(record)  # the runner writes the record before the call

    async def submit() -> str:
        async with httpx.AsyncClient() as http:
            batch_client = build_batch_client(judge, http, None, timeout=30)
            lines = [
                batch_client.line(record.custom_id(i), batch_client.encode(r))
                for i, r in enumerate(requests)
            ]
            file_id = await batch_client.upload(lines, record.key)
            return await batch_client.create(lines, record.key, file_id)

    batch_id = anyio.run(submit) if create else None
    return Lost(evaluator, files, record), batch_id


@CLIENTS
def test_a_batch_whose_id_was_never_saved_is_found_at_the_provider(
    tmp_path: Path, client: str
) -> None:
    with start_in_thread(batch_seconds=0.1, seed=5) as server:
        evaluator = make_project(tmp_path / "p", ROWS, server, client)
        lost, batch_id = lose_a_batch(evaluator, client, create=True)
        assert batch_stats(server)["batches_created"] == 1
        result = run(evaluator)
        stats = batch_stats(server)
        counts = asked(evaluator, server)
    assert result.run_id == "killed-run"  # the unfinished run is continued
    assert result.complete
    assert stats["batches_created"] == 1  # found, not submitted again
    assert stats["requests_submitted"] == ROWS
    assert set(counts.values()) == {1}
    assert_labels_meant(evaluator, result.results_data)
    [record] = ledger(tmp_path / "p")
    assert record["key"] == lost.record.key
    assert record["status"] == "collected" and record["batch_id"] == batch_id


def test_a_submitting_record_never_created_is_abandoned_and_its_rows_submitted(
    tmp_path: Path,
) -> None:
    with start_in_thread(batch_seconds=0.1, seed=5) as server:
        evaluator = make_project(tmp_path / "p", ROWS, server)
        lost, _ = lose_a_batch(evaluator, "openai", create=False)
        result = run(evaluator)
        stats = batch_stats(server)
    assert result.run_id == "killed-run" and result.complete
    assert stats["batches_created"] == 1 and stats["requests_submitted"] == ROWS
    by_key = {r["key"]: r for r in ledger(tmp_path / "p")}
    assert by_key.pop(lost.record.key)["status"] == "abandoned"
    [new] = by_key.values()
    assert new["status"] == "collected" and new["ids"] == lost.record.ids


def test_a_live_run_over_pending_batches_is_refused_before_any_call(tmp_path: Path) -> None:
    with start_in_thread(batch_seconds=30.0, seed=6) as server:
        evaluator = make_project(tmp_path / "p", ROWS, server)
        pending = run(evaluator, batch_wait=0)
        assert not pending.complete
        before = (tmp_path / "p" / "results" / pending.run_id / "j.batches").iterdir()
        snapshot = {p.name: p.read_bytes() for p in before}
        with pytest.raises(JudgeConfigError, match=r"--batch") as refused:
            evaluator.run_judges_async(["j"])
        assert refused.value.field == "batch"
        # Another configuration of the judge may not collect them under the same run either.
        evaluator.add_judge("j", "openai", MODEL["openai"], PROMPT, overwrite=True,
                            base_url=f"{server.base_url}/v1", temperature=0.5)  # fmt: skip
        with pytest.raises(JudgeConfigError, match="another configuration") as mixed:
            run(evaluator, run_id=pending.run_id)
        assert mixed.value.field == "run_id"
        stats, full = batch_stats(server), server.stats()
    assert full["total_requests"] == 0
    assert stats["batches_created"] == 1 and stats["requests_submitted"] == ROWS
    after = (tmp_path / "p" / "results" / pending.run_id / "j.batches").iterdir()
    assert {p.name: p.read_bytes() for p in after} == snapshot


# ----- the provider refusing -----------------------------------------------------------------


def test_a_batch_refused_in_validation_fails_the_judge_and_leaves_its_rows_to_do(
    tmp_path: Path,
) -> None:
    with start_in_thread(batch_seconds=0.1, fail_status_for_model={MODEL["openai"]: 404}) as server:
        evaluator = make_project(tmp_path / "p", ROWS, server)
        with pytest.raises(JudgeRunError, match="refused batch"):
            run(evaluator)
        [record] = ledger(tmp_path / "p")
        assert record["status"] == "failed"
        assert record["provider_status"] == "failed"
        assert "fails" in record["message"]
        [state_file] = (tmp_path / "p" / "results").glob("*/j_state.json")
        files = RunFiles(tmp_path / "p" / "results", state_file.parent.name, "j")
        assert stored_ids(files.rows) == []  # no row for any id of the refused batch
        state = files.read_state()
        assert state is not None and not state.complete
        assert not files.table.exists()

        with pytest.raises(JudgeRunError, match="refused batch"):
            run(evaluator)  # the rows are still to do: submitted again
        stats, full = batch_stats(server), server.stats()
    assert stats["batches_created"] == 2
    assert stats["requests_submitted"] == 2 * ROWS
    assert stats["requests_answered"] == 0
    assert full["per_prompt"] == {} and full["total_requests"] == 0
    assert [r["status"] for r in ledger(tmp_path / "p")] == ["failed", "failed"]
    assert stored_ids(files.rows) == []


@CLIENTS
def test_failed_batch_creations_are_retried_and_one_batch_is_accepted(
    tmp_path: Path, client: str
) -> None:
    with start_in_thread(batch_seconds=0.1, batch_create_failures=2, seed=7) as server:
        evaluator = make_project(tmp_path / "p", ROWS, server, client)
        result = run(evaluator)
        stats = batch_stats(server)
        counts = asked(evaluator, server)
    assert result.complete
    assert set(result.results_data["outcome"]) == {"valid"}
    assert stats["batches_created"] == 1
    assert stats["requests_submitted"] == stats["requests_answered"] == ROWS
    assert set(counts.values()) == {1}
    [record] = ledger(tmp_path / "p")
    assert record["status"] == "collected"


# ----- keys, consistency, mock judges -------------------------------------------------------


@CLIENTS
def test_the_api_key_is_never_written_to_the_project(
    tmp_path: Path, client: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-secret-123"
    monkeypatch.setenv("FAKE_KEY", secret)
    with start_in_thread(batch_seconds=0.3, rate_500=0.2, rate_429=0.2, seed=8) as server:
        evaluator = make_project(tmp_path / "p", ROWS, server, client, api_key_env="FAKE_KEY")
        pending = run(evaluator, batch_wait=0)  # the ledger holds a pending batch here
        assert not pending.complete
        on_disk_while_pending = [p for p in (tmp_path / "p").rglob("*") if p.is_file()]
        assert any(p.parent.name == "j.batches" for p in on_disk_while_pending)
        assert not [p for p in on_disk_while_pending if secret.encode() in p.read_bytes()]
        result = run(evaluator)
    assert result.complete
    assert (result.results_data["outcome"] == "error").sum() > 0  # error messages are stored
    files = [p for p in (tmp_path / "p").rglob("*") if p.is_file()]
    assert not [p for p in files if secret.encode() in p.read_bytes()]
    assert any(b"FAKE_KEY" in p.read_bytes() for p in files)  # the variable's name is kept


def test_consistency_asks_each_row_several_times_in_one_batch(tmp_path: Path) -> None:
    n = 20
    with start_in_thread(batch_seconds=0.1, seed=9) as server:
        evaluator = make_project(tmp_path / "p", n, server)
        result = run(evaluator, consistency=3)
        stats = batch_stats(server)
        counts = asked(evaluator, server)
    assert result.complete
    assert stats["batches_created"] == 1
    assert stats["requests_submitted"] == stats["requests_answered"] == 3 * n
    assert set(counts.values()) == {3}
    assert set(result.results_data["outcome"]) == {"valid"}
    assert_labels_meant(evaluator, result.results_data)
    assert set(result.results_data["attempts"]) == {3}


def test_a_mock_judge_answers_live_beside_a_batch_judge(tmp_path: Path) -> None:
    with start_in_thread(batch_seconds=0.1, seed=10) as server:
        evaluator = make_project(tmp_path / "p", ROWS, server)
        evaluator.add_judge("m", "mock", "mock-1", PROMPT)
        evaluator.save_state()
        results = evaluator.run_judges_async(batch=True, batch_poll_interval=POLL)
        stats, full = batch_stats(server), server.stats()
    mock = results["m"]
    assert mock.complete and len(mock) == ROWS
    assert results["j"].complete and len(results["j"]) == ROWS
    assert stats["batches_created"] == 1
    assert stats["requests_submitted"] == ROWS  # the batch judge's rows only
    assert full["total_requests"] == 0
    run_folder = tmp_path / "p" / "results" / mock.run_id
    assert not (run_folder / "m.batches").exists()
    assert ledger(tmp_path / "p", "m") == []
    assert [r["status"] for r in ledger(tmp_path / "p")] == ["collected"]


def test_a_mock_judge_alone_never_touches_batch_endpoints(tmp_path: Path) -> None:
    with start_in_thread(batch_seconds=0.1, seed=10) as server:
        evaluator = make_project(tmp_path / "p", ROWS, server)
        evaluator.add_judge("m", "mock", "mock-1", PROMPT)
        evaluator.save_state()
        result = evaluator.run_judges_async(["m"], batch=True, batch_wait=0)["m"]
        full = server.stats()
    assert result.complete and len(result) == ROWS
    assert full["batch"] == {} and full["total_requests"] == 0


# ----- command line -------------------------------------------------------------------------


def test_cli_batch_wait_zero_exits_3_and_a_later_run_collects(tmp_path: Path, entry: Main) -> None:
    project = tmp_path / "p"
    with start_in_thread(batch_seconds=0.5, seed=11) as server:
        make_project(project, ROWS, server)
        ahead = entry("run", project, "--batch", "--dry-run")
        assert ahead.returncode == 0, ahead
        assert re.search(r"^  new batches: +1 \(0\.\d MB of requests\)$", ahead.stdout, re.M)
        assert re.search(rf"^  calls: +{ROWS}$", ahead.stdout, re.M), ahead.stdout
        assert batch_stats(server)["batches_created"] == 0
        first = entry("run", project, "--batch", "--batch-wait", "0")
        assert first.returncode == 3, first
        assert "batches still running" in first.stdout
        assert "--batch" in first.stdout
        [record] = ledger(project)
        assert record["status"] == "submitted"

        before = batch_stats(server)
        plan = entry("run", project, "--batch", "--dry-run")
        assert plan.returncode == 0, plan
        assert re.search(rf"^  in batches: +{ROWS} ", plan.stdout, re.M), plan.stdout
        assert re.search(r"^  calls: +0$", plan.stdout, re.M), plan.stdout
        assert re.search(r"^  new batches: +0 ", plan.stdout, re.M), plan.stdout
        assert re.search(r"^  mode: +batch", plan.stdout, re.M), plan.stdout
        assert batch_stats(server) == before  # a dry run calls nothing

        live = entry("run", project, "--dry-run")  # without --batch: refused, nothing asked
        assert live.returncode == 2, live
        assert "--batch" in live.stderr

        second = entry("run", project, "--batch", "--batch-poll", "0.05")
        assert second.returncode == 0, second
        assert f"j: valid={ROWS} invalid=0 error=0" in second.stdout
        assert "still running" not in second.stdout
        stats, full = batch_stats(server), server.stats()
    assert stats["batches_created"] == 1
    assert stats["requests_submitted"] == stats["requests_answered"] == ROWS
    assert full["total_requests"] == 0
    [collected] = ledger(project)
    assert collected["status"] == "collected"


# ----- never paying twice: the review's cases ------------------------------------------------


class Recorder(httpx.AsyncBaseTransport):
    """Sends through a real transport and keeps every request."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.seen: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class LoseTheFirstCreateAnswer(httpx.AsyncBaseTransport):
    """Lets the first batch-create request reach the server, then loses its answer."""

    def __init__(self, suffix: str) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.suffix = suffix
        self.lost = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if not self.lost and request.method == "POST" and request.url.path.endswith(self.suffix):
            self.lost += 1
            await response.aread()
            await response.aclose()
            raise httpx.ReadTimeout(
                "the answer was lost after the batch was created", request=request
            )
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


@CLIENTS
def test_a_create_whose_answer_is_lost_is_found_not_created_again(
    tmp_path: Path, client: str
) -> None:
    suffix = "/v1/batches" if client == "openai" else "/messages/batches"
    transport = LoseTheFirstCreateAnswer(suffix)
    with start_in_thread(batch_seconds=0.1, seed=1) as server:
        evaluator = make_project(tmp_path / "p", 10, server, client)
        result = run(evaluator, transport=transport)
        stats = batch_stats(server)
    assert transport.lost == 1
    assert result.complete and result.results_data.height == 10
    assert stats["batches_created"] == 1 and stats["requests_submitted"] == 10
    [record] = ledger(tmp_path / "p")
    assert record["status"] == "collected"


def test_a_lost_anthropic_batch_is_not_taken_for_another_judges(tmp_path: Path) -> None:
    """Two judges' batches of one size at one time: the lost one is still told apart."""
    with start_in_thread(batch_seconds=0.3, seed=1) as server:
        evaluator = make_project(tmp_path / "p", 6, server, "anthropic")
        evaluator.add_judge("k", "anthropic", MODEL["anthropic"], "Judge: " + PROMPT,
                            base_url=server.base_url)  # fmt: skip
        options: dict[str, Any] = {"batch": True, "batch_poll_interval": POLL}
        evaluator.run_judges_async(["j", "k"], "r", batch_wait=0, **options)
        [path] = (tmp_path / "p/results/r").glob("j.batches/*.json")
        record = json.loads(path.read_text(encoding="utf-8"))
        lost = record["batch_id"]
        path.write_text(json.dumps({**record, "batch_id": None, "status": "submitting"}))
        results = evaluator.run_judges_async(["j", "k"], "r", **options)
        stats = batch_stats(server)
    assert stats["batches_created"] == 2  # j's lost batch was found again, nothing resubmitted
    assert all(r.complete for r in results.values())
    assert set(results["j"].results_data["batch_id"]) == {lost}
    assert lost not in set(results["k"].results_data["batch_id"])


def test_a_lost_anthropic_batch_with_several_candidates_stops_the_judge(tmp_path: Path) -> None:
    with start_in_thread(batch_seconds=0.3, seed=1) as server:
        evaluator = make_project(tmp_path / "p", 6, server, "anthropic")
        run(evaluator, run_id="r", batch_wait=0)
        [path] = (tmp_path / "p/results/r").glob("j.batches/*.json")
        record = json.loads(path.read_text(encoding="utf-8"))
        # Another tool made a batch of the same size just then: two candidates.
        lines = [json.dumps({"custom_id": f"x-{i}", "params": {"model": "m", "max_tokens": 5,
                 "messages": [{"role": "user", "content": "hi"}]}}) for i in range(6)]  # fmt: skip
        with httpx.Client() as http_client:
            http_client.post(f"{server.base_url}/v1/messages/batches",
                             content="{\"requests\":[" + ",".join(lines) + "]}")  # fmt: skip
        path.write_text(json.dumps({**record, "batch_id": None, "status": "submitting"}))
        with pytest.raises(JudgeRunError, match="could be it") as caught:
            run(evaluator, run_id="r")
        stats = batch_stats(server)
    assert record["batch_id"] in str(caught.value) and str(path.parent.name) in str(caught.value)
    assert stats["batches_created"] == 2  # nothing was submitted again
    [kept] = ledger(tmp_path / "p")
    assert kept["status"] == "submitting"  # left for the user to settle


def test_resume_false_is_refused_while_batches_are_pending(tmp_path: Path) -> None:
    with start_in_thread(batch_seconds=30.0, seed=1) as server:
        evaluator = make_project(tmp_path / "p", 6, server)
        run(evaluator, run_id="r", batch_wait=0)
        for batch in (False, True):
            with pytest.raises(JudgeConfigError, match="cancel") as caught:
                evaluator.run_judges_async(["j"], "r", resume=False, batch=batch)
            assert caught.value.field == "resume"
        assert server.stats()["total_requests"] == 0
        assert batch_stats(server)["batches_created"] == 1


def test_a_batch_the_provider_no_longer_knows_stays_pending_with_a_way_out(
    tmp_path: Path,
) -> None:
    with start_in_thread(batch_seconds=0.2, seed=1) as server:
        evaluator = make_project(tmp_path / "p", 4, server)
        run(evaluator, run_id="r", batch_wait=0)
        [path] = (tmp_path / "p/results/r").glob("j.batches/*.json")
        record = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps({**record, "batch_id": "batch_gone"}))
        for settings in ({}, {"cancel_batches": True}):
            with pytest.raises(JudgeRunError, match="no longer knows batch batch_gone") as caught:
                run(evaluator, run_id="r", **settings)
            assert str(path) in str(caught.value) and '"abandoned"' in str(caught.value)
        assert json.loads(path.read_text(encoding="utf-8"))["status"] == "submitted"
        # Giving it up, as the message says: its rows are submitted again.
        path.write_text(json.dumps({**record, "batch_id": "batch_gone", "status": "abandoned"}))
        result = run(evaluator, run_id="r")
        stats = batch_stats(server)
    assert result.complete and stats["batches_created"] == 2


def test_rows_edited_after_submission_are_asked_again(tmp_path: Path) -> None:
    with start_in_thread(batch_seconds=0.2, seed=1) as server:
        evaluator = make_project(tmp_path / "p", 8, server)
        run(evaluator, run_id="r", batch_wait=0)
        assert evaluator.data is not None
        edited = evaluator.data.data.with_columns(
            pl.when(pl.col("qid") < 1003)
            .then(pl.col("response") + " (edited)")
            .otherwise(pl.col("response"))
        )
        evaluator.add_data(DataLoader.load_from_dataframe("chats", edited, "qid"), overwrite=True)
        collected = run(evaluator, run_id="r")
        assert not collected.complete
        assert sorted(collected.results_data["original_id"]) == list(range(1003, 1008))
        final = run(evaluator, run_id="r")
        stats = batch_stats(server)
    assert final.complete and stats["batches_created"] == 2
    assert stats["requests_submitted"] == 8 + 3
    assert_labels_meant(evaluator, final.results_data)  # the edited rows' new answers


def test_batch_requests_carry_the_judges_extra_headers(tmp_path: Path) -> None:
    recorder = Recorder()
    with start_in_thread(batch_seconds=0.05, seed=1) as server:
        evaluator = make_project(
            tmp_path / "p", 3, server, extra_headers={"OpenAI-Project": "proj_eval"}
        )
        assert run(evaluator, transport=recorder).complete
    headers = [request.headers for request in recorder.seen]
    assert headers and all(h.get("openai-project") == "proj_eval" for h in headers)


def test_shards_in_batch_mode_submit_their_own_rows_and_merge(tmp_path: Path) -> None:
    with start_in_thread(batch_seconds=0.05, seed=3) as server:
        evaluator = make_project(tmp_path / "p", 20, server)
        parts = [run(evaluator, run_id="nightly", shard=(k, 2)) for k in (1, 2)]
        stats = batch_stats(server)
        merged = evaluator.load_all_judge_results()["j"]
    assert [len(part) for part in parts] != [0, 0] and sum(len(p) for p in parts) == 20
    assert stats["batches_created"] == 2 and stats["requests_submitted"] == 20
    folder = tmp_path / "p" / "results" / "nightly"
    assert sorted(p.name for p in folder.glob("*.batches")) == [
        "j.shard-1-of-2.batches",
        "j.shard-2-of-2.batches",
    ]
    assert merged.results_data["original_id"].to_list() == frame(20)["qid"].to_list()
    assert_labels_meant(evaluator, merged.results_data)


def test_status_names_the_rows_still_in_batches(tmp_path: Path, entry: Main) -> None:
    project = tmp_path / "p"
    with start_in_thread(batch_seconds=30.0, seed=5) as server:
        evaluator = make_project(project, 10, server)
        run(evaluator, batch_wait=0)
        shown = entry("status", project)
        assert shown.returncode == 0, shown
        assert re.search(r"10 rows in 1 submitted batch\(es\) \(batch_\d+\)", shown.stdout)
        evaluator.add_judge("s", "openai", MODEL["openai"], "Sharded: " + PROMPT,
                            base_url=f"{server.base_url}/v1")  # fmt: skip
        evaluator.save_state()
        for k in (1, 2):
            evaluator.run_judges_async(["s"], "night", shard=(k, 2), batch=True, batch_wait=0)
        shown = entry("status", project)
    assert re.search(r"s: .*\n.*0 of 2 shard\(s\) complete, 0 rows in them; 10 rows in 2 "
                     r"submitted batch\(es\)", shown.stdout), shown.stdout  # fmt: skip


def test_an_azure_openai_judge_runs_in_batch_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-secret-456")
    recorder = Recorder()
    with start_in_thread(batch_seconds=0.05, seed=8) as server:
        evaluator = make_project(tmp_path / "p", 12, server)
        evaluator.add_judge("az", "azure_openai", "eval-batch-deployment", PROMPT,
                            base_url=server.base_url, api_version="2024-10-21")  # fmt: skip
        result = evaluator.run_judges_async(
            ["az"], batch=True, batch_poll_interval=POLL, transport=recorder
        )["az"]
        stats = batch_stats(server)
    assert result.complete and result.counts()["valid"] == 12
    assert stats["batches_created"] == 1 and stats["requests_submitted"] == 12
    assert_labels_meant(evaluator, result.results_data)  # the same prompts as judge j's
    seen = recorder.seen
    paths = {request.url.path for request in seen}
    assert {"/openai/files", "/openai/batches"} <= paths
    assert all(request.url.params["api-version"] == "2024-10-21" for request in seen)
    assert all(request.headers["api-key"] == "azure-secret-456" for request in seen)
    assert not any("authorization" in request.headers for request in seen)
    for path in (tmp_path / "p").rglob("*"):
        if path.is_file():
            assert b"azure-secret-456" not in path.read_bytes(), path
