"""`meta-evaluator run --dry-run`, the project lock of `run`, and `status` after runs.

Everything uses the built-in refusal example and its offline mock judge. Exit codes go through
the real entry point, `main()`, in-process (a subprocess where two processes are needed); the
other calls run the typer app in-process through typer's runner.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from meta_evaluator import MetaEvaluator
from meta_evaluator.cli import app
from meta_evaluator.errors import JudgeConfigError, JudgeRunError
from meta_evaluator.judge._prompting import answering_method, build_request
from meta_evaluator.judge.row_store import read_rows
from meta_evaluator.judge.run_files import RunFiles, RunState, latest_run
from meta_evaluator.locks import LOCK_FILE
from tests.conftest import Main, snapshot
from tests.loopback import JsonHandler

JUDGE = "mock_refusal_judge"


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "meta_evaluator.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(app, list(map(str, args)))


def ok(*args: str | Path) -> str:
    done = invoke(*args)
    assert done.exit_code == 0, (done.output, done.exception)
    return done.output


def plan_numbers(output: str) -> dict[str, int]:
    """The per-judge numbers of a dry run's output (one judge)."""
    found = dict(re.findall(r"^  (rows|reused|calls|estimated tokens): +(\d+)$", output, re.M))
    assert set(found) == {"rows", "reused", "calls", "estimated tokens"}, output
    return {key: int(value) for key, value in found.items()}


def run_line(output: str) -> str:
    match = re.search(r"^  run: +(.+)$", output, re.M)
    assert match, output
    return match.group(1)


def all_rows(project: Path) -> set[tuple[str, str]]:
    """(id, timestamp) of every line of every run: a row asked anew has a new timestamp."""
    return {
        (json.dumps(row["original_id"]), row["timestamp"])
        for path in (project / "results").glob("*/*.jsonl")
        for row in read_rows(path)
    }


def make_unfinished(project: Path, keep: int) -> str:
    """Run, then cut the run back to its first `keep` rows, as a killed process leaves it."""
    ok("run", project)
    files = latest_run(project / "results", JUDGE, complete=True)
    assert files is not None
    lines = files.rows.read_text(encoding="utf-8").splitlines(keepends=True)
    files.rows.write_text("".join(lines[:keep]), encoding="utf-8")
    files.table.unlink()
    state = files.read_state()
    assert state is not None
    files.write_state(
        RunState(JUDGE, state.run_id, state.fingerprint, state.created_at, None, counts={})
    )
    return files.run_id


# ----- dry run ------------------------------------------------------------------------------


def test_dry_run_prints_the_plan_and_writes_nothing(project: Path) -> None:
    before = snapshot(project)
    output = ok("run", project, "--dry-run")
    assert snapshot(project) == before
    assert not (project / "results").exists() and not (project / LOCK_FILE).exists()
    assert "nothing is called and nothing is written" in output
    assert f"{JUDGE}: mock 'mock-refusal-1' at mock://offline" in output
    assert run_line(output) == "a new run"
    numbers = plan_numbers(output)
    assert numbers["rows"] == 40 and numbers["reused"] == 0 and numbers["calls"] == 40
    assert numbers["estimated tokens"] > 40 * 512  # each call: its prompt plus the answer
    assert re.search(r"^Total: 1 judge, 40 rows, 0 reused, 40 calls, \d+ estimated tokens$",
                     output, re.M)  # fmt: skip


def test_dry_run_after_runs_writes_nothing(project: Path) -> None:
    make_unfinished(project, keep=10)
    ok("run", project, "--retry", "invalid")  # completes the run
    before = snapshot(project)
    for args in ([], ["--retry", "invalid,error"], ["--no-resume"], ["--run-id", "other"]):
        ok("run", project, "--dry-run", *args)
    assert snapshot(project) == before


def asked_by_the_real_run(
    project: Path, *args: str
) -> tuple[dict[str, int], str, list[dict[str, Any]]]:
    """Dry-run, then run with the same arguments: the plan, and the rows the run asked."""
    output = ok("run", project, "--dry-run", *args)
    numbers = plan_numbers(output)
    before = all_rows(project)
    done = ok("run", project, *args)
    run_id = re.search(r"\(run (\S+)\)", done)
    assert run_id, done
    rows = read_rows(RunFiles(project / "results", run_id.group(1), JUDGE).rows)
    asked = {
        json.dumps(r["original_id"]): r
        for r in rows
        if (json.dumps(r["original_id"]), r["timestamp"]) not in before
    }
    kept = [r for r in rows if json.dumps(r["original_id"]) not in asked]
    assert numbers["rows"] == 40
    assert numbers["calls"] == len(asked) == sum(r["attempts"] for r in asked.values())
    assert numbers["reused"] == len({json.dumps(r["original_id"]) for r in kept})
    # The tokens were estimated for exactly the requests that were sent.
    evaluator = MetaEvaluator(project, load=True)
    judge, task, data = evaluator.judge_registry[JUDGE], evaluator.eval_task, evaluator.data
    assert task is not None and data is not None
    by_id = {json.dumps(row[data.id_column]): row for row in data.data.to_dicts()}
    method = answering_method(judge, task)
    sent = sum(build_request(judge, task, by_id[i], method).estimated_tokens() for i in asked)
    assert numbers["estimated tokens"] == sent
    return numbers, run_line(output), list(asked.values())


def test_dry_run_equals_the_run_on_a_fresh_project(project: Path) -> None:
    numbers, where, asked = asked_by_the_real_run(project)
    assert where == "a new run"
    assert (numbers["reused"], numbers["calls"], len(asked)) == (0, 40, 40)


def test_dry_run_equals_the_run_continuing_an_unfinished_one(project: Path) -> None:
    unfinished = make_unfinished(project, keep=15)
    numbers, where, asked = asked_by_the_real_run(project)
    assert where == f"continues run {unfinished}"
    assert (numbers["reused"], numbers["calls"]) == (15, 25)
    assert {r["run_id"] for r in asked} == {unfinished}


def test_dry_run_equals_the_run_retrying_invalid_rows(project: Path) -> None:
    ok("run", project)
    first = latest_run(project / "results", JUDGE, complete=True)
    assert first is not None
    state = first.read_state()
    assert state is not None and state.counts["invalid"] > 0
    numbers, where, asked = asked_by_the_real_run(project, "--retry", "invalid,error")
    assert where == f"a new run, reusing rows of the complete run {first.run_id}"
    assert numbers["calls"] == state.counts["invalid"] + state.counts["error"]
    assert numbers["reused"] == state.counts["valid"]
    assert {r["run_id"] for r in asked} != {first.run_id}


def test_dry_run_of_a_named_run_that_already_exists(project: Path) -> None:
    ok("run", project, "--run-id", "nightly")
    numbers, where, asked = asked_by_the_real_run(project, "--run-id", "nightly")
    # complete with every row: nothing asked, nothing written (it stays as it was)
    assert where == "run nightly is complete with every row; nothing to ask"
    assert (numbers["reused"], numbers["calls"], asked) == (40, 0, [])
    numbers, where, asked = asked_by_the_real_run(project, "--run-id", "nightly", "--no-resume")
    assert where.startswith("starts run nightly over")
    assert (numbers["reused"], numbers["calls"], len(asked)) == (0, 40, 40)


def test_dry_run_when_a_complete_run_has_every_row(project: Path) -> None:
    ok("run", project)
    files = latest_run(project / "results", JUDGE, complete=True)
    assert files is not None
    output = ok("run", project, "--dry-run")
    assert run_line(output) == f"run {files.run_id} is complete with every row; nothing to ask"
    assert plan_numbers(output)["calls"] == 0
    before = snapshot(project)
    ok("run", project)  # and the real run asks nothing, writes nothing
    assert snapshot(project) == before


def add_openai_judges(project: Path, *variables: str) -> None:
    evaluator = MetaEvaluator(project, load=True)
    for number, variable in enumerate(variables):
        evaluator.add_judge(
            f"gpt_{number}", "openai", "gpt-4o-mini", "Did it refuse? {prompt} {llm_response}",
            api_key_env=variable,
        )  # fmt: skip
    evaluator.save_state(include_data=False)


def test_dry_run_names_real_endpoints_never_their_key(
    project: Path, entry: Main, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_openai_judges(project, "ME_TEST_KEY_FOR_DRY_RUN")
    before = snapshot(project)
    monkeypatch.setenv("ME_TEST_KEY_FOR_DRY_RUN", "sk-very-secret-value")
    done = entry("run", project, "--dry-run", "--judges", f"gpt_0,{JUDGE}")
    assert done.returncode == 0, done.stderr
    assert "gpt_0: openai 'gpt-4o-mini' at https://api.openai.com/v1" in done.stdout
    assert "sk-very-secret-value" not in done.stdout + done.stderr
    assert "Total: 2 judges, 80 rows, 0 reused, 80 calls" in done.stdout
    assert snapshot(project) == before


def test_dry_run_with_bad_configuration_exits_2(
    project: Path, entry: Main, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_openai_judges(project, "ME_TEST_UNSET_KEY_1")
    before = snapshot(project)
    monkeypatch.delenv("ME_TEST_UNSET_KEY_1", raising=False)
    unset = entry("run", project, "--dry-run")
    assert unset.returncode == 2
    assert "variable ME_TEST_UNSET_KEY_1 is not set" in unset.stderr
    assert "Traceback" not in unset.stderr
    # The plan is printed: the mock judge would run; the keyless ones are refused, as the run
    # would refuse them (exit 2 all the same).
    assert f"{JUDGE}: mock" in unset.stdout
    assert "Refused (makes no call; the others run): judge 'gpt_0'" in unset.stdout
    alone = entry("run", project, "--dry-run", "--judges", "gpt_0")  # no other judge to run
    assert alone.returncode == 2
    assert "Refused (makes no call; no judge is left to run): judge 'gpt_0'" in alone.stdout
    unknown = entry("run", project, "--dry-run", "--judges", f"{JUDGE},nope")
    assert unknown.returncode == 2
    assert "no registered judge ['nope']" in unknown.stderr and JUDGE in unknown.stderr
    bad_retry = entry("run", project, "--dry-run", "--retry", "valid")
    assert bad_retry.returncode == 2
    assert "--retry[0]: Input should be 'invalid' or 'error'" in bad_retry.stderr
    bad_poll = entry("run", project, "--dry-run", "--batch-poll", "0", "--batch-wait", "-1")
    assert bad_poll.returncode == 2
    assert "--batch-poll: Input should be greater than 0" in bad_poll.stderr
    assert "--batch-wait: Input should be greater than or equal to 0" in bad_poll.stderr
    assert snapshot(project) == before


def test_dry_run_reports_every_judge_that_cannot_run(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_openai_judges(project, "ME_TEST_UNSET_KEY_1", "ME_TEST_UNSET_KEY_2")
    monkeypatch.delenv("ME_TEST_UNSET_KEY_1", raising=False)
    monkeypatch.delenv("ME_TEST_UNSET_KEY_2", raising=False)
    done = invoke("run", project, "--dry-run")
    assert isinstance(done.exception, JudgeConfigError)
    message = str(done.exception)
    assert "ME_TEST_UNSET_KEY_1 is not set" in message
    assert "ME_TEST_UNSET_KEY_2 is not set" in message
    assert [e["loc"] for e in done.exception.errors] == [
        ("gpt_0", "api_key_env"),
        ("gpt_1", "api_key_env"),
    ]


def test_a_missing_key_blocks_only_its_judge_and_the_mock_still_runs(
    project: Path, entry: Main, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_openai_judges(project, "ME_TEST_UNSET_KEY_1")
    monkeypatch.delenv("ME_TEST_UNSET_KEY_1", raising=False)
    done = entry("run", project)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "judge 'gpt_0': api_key_env: variable ME_TEST_UNSET_KEY_1 is not set" in done.stderr
    assert f"The other judges ran ('{JUDGE}')" in done.stderr
    mock_run = latest_run(project / "results", JUDGE, complete=True)
    assert mock_run is not None  # the offline judge ran and was saved
    assert latest_run(project / "results", "gpt_0", complete=False) is None
    selected = entry("run", project, "--judges", JUDGE)  # not selected: no obstacle
    assert selected.returncode == 0, selected.stderr


# ----- the project lock ---------------------------------------------------------------------


def test_a_second_run_exits_2_naming_the_holder(project: Path, entry: Main) -> None:
    lock = project / LOCK_FILE
    lock.write_text(f"{socket.gethostname()} {os.getpid()}", encoding="utf-8")  # alive: us
    done = entry("run", project)
    assert done.returncode == 2
    assert str(lock) in done.stderr
    assert f"host {socket.gethostname()}, pid {os.getpid()}" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (project / "results").exists()
    assert lock.read_text(encoding="utf-8") == f"{socket.gethostname()} {os.getpid()}"
    # A dry run still works, and says that a run is going on.
    output = ok("run", project, "--dry-run")
    assert f"another command is changing this project now (host {socket.gethostname()}" in output


def test_a_lock_held_on_another_host_is_respected(project: Path, entry: Main) -> None:
    (project / LOCK_FILE).write_text("some-other-host 4242", encoding="utf-8")
    done = entry("run", project)
    assert done.returncode == 2
    assert "host some-other-host, pid 4242" in done.stderr
    assert "delete the lock file" in done.stderr


def test_a_stale_lock_of_a_dead_process_is_taken_over(project: Path, entry: Main) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    lock = project / LOCK_FILE
    lock.write_text(f"{socket.gethostname()} {gone.pid}", encoding="utf-8")
    done = entry("run", project)
    assert done.returncode == 0, done.stderr
    assert f"{JUDGE}: valid=" in done.stdout
    assert not lock.exists()  # released on exit
    assert not list(project.glob(f"{LOCK_FILE}*"))  # nothing left aside either


def test_the_lock_is_released_when_the_run_fails(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_openai_judges(project, "ME_TEST_UNSET_KEY_1")
    monkeypatch.delenv("ME_TEST_UNSET_KEY_1", raising=False)
    done = invoke("run", project)
    assert isinstance(done.exception, JudgeRunError)  # the mock judge ran, gpt_0 was stopped
    assert not (project / LOCK_FILE).exists()
    ok("run", project, "--judges", JUDGE)  # and the next run may go
    assert not (project / LOCK_FILE).exists()


def add_slow_judge(project: Path, latency: float) -> None:
    """Save `slow_judge` in `project`: a mock taking `latency` seconds a row, one row at a time,
    so that a run of it is still going when a test stops it."""
    evaluator = MetaEvaluator(project, load=True)
    evaluator.add_judge(
        "slow_judge", "mock", "mock-slow", "Did it refuse? {prompt} {llm_response}",
        mock={"latency": latency}, max_concurrency=1,
    )  # fmt: skip
    evaluator.save_state(include_data=False)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_two_runs_at_once_and_a_stopped_run_releases_the_lock(
    project: Path, stop: signal.Signals
) -> None:
    add_slow_judge(project, latency=0.3)
    lock = project / LOCK_FILE
    first = subprocess.Popen(
        [sys.executable, "-m", "meta_evaluator.cli", "run", str(project), "--judges",
         "slow_judge"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        rows = project / "results"
        while not list(rows.glob("*/slow_judge.jsonl")) and time.monotonic() < deadline:
            assert first.poll() is None, first.communicate()
            time.sleep(0.05)
        assert lock.read_text(encoding="utf-8") == f"{socket.gethostname()} {first.pid}"
        second = cli("run", project, "--judges", JUDGE)
        assert second.returncode == 2
        assert f"pid {first.pid}" in second.stderr and str(lock) in second.stderr
        first.send_signal(stop)
        _, stderr = first.communicate(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert first.returncode == 128 + stop, stderr  # 130 for Ctrl-C, 143 for SIGTERM
    assert "Traceback" not in stderr
    assert not lock.exists()
    (files,) = rows.glob("*/slow_judge.jsonl")
    done = read_rows(files)
    assert 1 <= len(done) < 40
    assert files.read_bytes().endswith(b"\n")  # whole rows only
    assert not (project / "results" / files.parent.name / "slow_judge.lock").exists()


class _SlowServerError(JsonHandler):
    """Every POST answers HTTP 500 after 0.1 s: rows end in errors, slowly."""

    def do_POST(self) -> None:
        self.read_body()
        time.sleep(0.1)
        self.send_json(500, {"error": {"message": "overloaded"}})


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # the stopped client hangs up mid-answer: a broken pipe, expected


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_stopped_run_prints_what_each_judge_saved(project: Path, stop: signal.Signals) -> None:
    """Stopped mid-run, `run` still ends with each judge's counts and top error reasons."""
    server = _QuietServer(("127.0.0.1", 0), _SlowServerError)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    evaluator = MetaEvaluator(project, load=True)
    evaluator.add_judge(
        "overloaded", "openai", "m", "Did it refuse? {prompt} {llm_response}",
        base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", max_concurrency=1,
    )  # fmt: skip
    evaluator.save_state(include_data=False)
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-stopped-run"}
    first = subprocess.Popen(
        [sys.executable, "-m", "meta_evaluator.cli", "run", str(project), "--no-resume",
         "--max-retries", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        rows = project / "results"
        while time.monotonic() < deadline:
            found = list(rows.glob("*/overloaded.jsonl"))
            if found and len(read_rows(found[0])) >= 2:
                break
            assert first.poll() is None, first.communicate()
            time.sleep(0.05)
        first.send_signal(stop)
        stdout, stderr = first.communicate(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
        server.shutdown()
        server.server_close()
    assert first.returncode == 128 + stop, (stdout, stderr)  # the interrupt is not swallowed
    assert "Traceback" not in stderr
    (files,) = rows.glob("*/overloaded.jsonl")
    saved = read_rows(files)
    errors = sum(row["outcome"] == "error" for row in saved)
    assert errors == len(saved) >= 2
    run_id = files.parent.name
    assert f"overloaded: valid=0 invalid=0 error={errors} (run {run_id}, {errors} of 40 rows" in (
        stdout
    )
    assert f"judge overloaded: {errors} errors — {errors}× HTTP 500: " in stdout
    assert "overloaded" in stdout.split("judge overloaded:")[1]
    # the mock judge finished (or not) before the signal: its line is there either way
    assert re.search(rf"^{JUDGE}: ", stdout, re.M), stdout
    assert f"Results are in {rows}" in stdout


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_stopped_run_with_json_gives_each_judges_counts(project: Path) -> None:
    """`run --json` stopped by SIGTERM: the JSON has what each judge saved, not the error alone."""
    add_slow_judge(project, latency=0.2)
    first = subprocess.Popen(
        [sys.executable, "-m", "meta_evaluator.cli", "run", str(project), "--judges",
         "slow_judge", "--run-id", "termtest", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        rows = project / "results" / "termtest" / "slow_judge.jsonl"
        while (not rows.exists() or len(read_rows(rows)) < 2) and time.monotonic() < deadline:
            assert first.poll() is None, first.communicate()
            time.sleep(0.05)
        first.send_signal(signal.SIGTERM)
        stdout, stderr = first.communicate(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert first.returncode == 143, stderr
    summary = json.loads(stdout.strip().splitlines()[-1])
    saved = read_rows(rows)
    valid = sum(row["outcome"] == "valid" for row in saved)
    assert (summary["exit_status"], summary["error"], summary["run_ids"]) == (
        143, "stopped", ["termtest"],
    )  # fmt: skip
    judge = summary["judges"]["slow_judge"]
    assert judge["rows"] == len(saved) >= 2 and judge["valid"] == valid
    assert judge["invalid"] == len(saved) - valid and judge["error"] == 0
    assert (judge["run_id"], judge["complete"], judge["reused"]) == ("termtest", False, 0)
    assert summary["totals"]["rows"] == len(saved)
    assert "slow_judge: valid=" in stderr  # the text went to standard error


# ----- status -------------------------------------------------------------------------------


def judge_status(output: str) -> str:
    lines = output.splitlines()
    index = next(i for i, line in enumerate(lines) if line.strip().startswith(f"{JUDGE}:"))
    return lines[index + 1].strip()


def test_status_before_any_run(project: Path) -> None:
    output = ok("status", project)
    assert judge_status(output) == "no runs yet"


def test_status_after_an_unfinished_and_a_complete_run(project: Path) -> None:
    unfinished = make_unfinished(project, keep=15)
    rows = read_rows(RunFiles(project / "results", unfinished, JUDGE).rows)
    valid = sum(r["outcome"] == "valid" for r in rows)
    line = judge_status(ok("status", project))
    assert line.startswith(
        f"latest run {unfinished}: 15 of 40 rows done (valid {valid}, invalid {15 - valid}, "
        "error 0), unfinished, last changed "
    ), line
    assert re.search(r"last changed \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$", line), line

    ok("run", project)
    files = latest_run(project / "results", JUDGE, complete=True)
    assert files is not None and files.run_id == unfinished
    state = files.read_state()
    assert state is not None
    counts = state.counts
    line = judge_status(ok("status", project))
    assert line.startswith(
        f"latest run {unfinished}: 40 of 40 rows done (valid {counts['valid']}, "
        f"invalid {counts['invalid']}, error 0), complete, last changed "
    ), line


def test_status_says_when_the_judge_changed_since_its_run(project: Path) -> None:
    ok("run", project)
    assert "configuration has changed" not in ok("status", project)
    evaluator = MetaEvaluator(project, load=True)
    judge = evaluator.judge_registry[JUDGE]
    evaluator.add_judge(JUDGE, "mock", "mock-refusal-2", judge.prompt, overwrite=True)
    evaluator.save_state(include_data=False)
    assert "configuration has changed since" in judge_status(ok("status", project))


def test_status_counts_each_annotators_valid_labels(project: Path, tmp_path: Path) -> None:
    labels = tmp_path / "zoe.csv"
    labels.write_text(
        "original_id,rejection\n101,rejection\n102,not rejection\n103,maybe\n", encoding="utf-8"
    )
    MetaEvaluator(project, load=True).add_external_annotation_results(labels, "zoe")
    output = ok("status", project)
    assert re.search(r"^  annotators: \d+$", output, re.M), output
    assert "zoe: 2 valid labels of 40 rows (1 invalid), run " in output


def test_status_of_a_project_without_annotators(tmp_path: Path) -> None:
    ok("init", tmp_path / "empty")
    output = ok("status", tmp_path / "empty")
    assert "  annotators: none yet" in output
