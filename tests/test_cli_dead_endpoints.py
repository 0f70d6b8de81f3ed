"""Failures said plainly: the end-of-run error summary, `--check` of endpoints, and `score` of a
judge without one valid row. All through the command line, not on a terminal (as in a scheduler).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from meta_evaluator import MetaEvaluator
from meta_evaluator.cli import app
from tests.conftest import Main, unused_port
from tests.loopback import JsonHandler, serving

JUDGE = "mock_refusal_judge"
KEY = "sk-check-endpoint-SECRET"


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(app, list(map(str, args)))


def add_judge(project: Path, judge_id: str, client: str, **settings: object) -> None:
    evaluator = MetaEvaluator(project, load=True)
    prompt = evaluator.judge_registry[JUDGE].prompt
    evaluator.add_judge(judge_id, client, "m", prompt, **settings)
    evaluator.save_state()


class _Models(JsonHandler):
    """GET /v1/models answers 200 with the right key, 401 otherwise."""

    def do_GET(self) -> None:
        good = self.headers.get("Authorization") == f"Bearer {KEY}"
        if good and self.path == "/v1/models":
            self.send_json(200, {"data": []})
        else:
            self.send_json(401, {"error": "bad key"})


@pytest.fixture
def models_server() -> Iterator[str]:
    with serving(_Models) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"


# ----- the summary at the end of a run -------------------------------------------------------


def test_every_run_ends_with_each_judges_top_error_reasons(project: Path) -> None:
    add_judge(project, "flaky", "mock", mock={"error_rate": 0.5})
    done = invoke("run", project)
    assert done.exit_code == 1, done.output
    errors = json.loads(
        next((project / "results").glob("*/flaky_state.json")).read_text(encoding="utf-8")
    )["counts"]["error"]
    assert errors > 0
    assert f"judge flaky: {errors} errors — {errors}× mock: simulated server error" in done.output
    assert f"judge {JUDGE}:" not in done.output  # a judge without errors has no reasons line


def test_a_run_with_an_unreachable_judge_names_the_address(project: Path, entry: Main) -> None:
    port = unused_port()
    add_judge(project, "dead", "openai", base_url=f"http://127.0.0.1:{port}/v1")
    done = entry("run", project)
    out, err = done.stdout, done.stderr
    assert done.returncode != 0
    assert f"connection refused at 127.0.0.1:{port}" in err
    assert "judge dead: " in out and f"× connection refused at 127.0.0.1:{port}" in out
    assert f"{JUDGE}: valid=" in out  # the mock judge finished, and is saved
    assert JUDGE in MetaEvaluator(project, load=True).load_all_judge_results()


# ----- --check ---------------------------------------------------------------------------------


def test_dry_run_check_asks_each_endpoint_once(
    project: Path, models_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = unused_port()
    monkeypatch.setenv("CHECK_GOOD_KEY", KEY)
    monkeypatch.setenv("CHECK_BAD_KEY", "sk-wrong-SECRET")
    add_judge(project, "alive", "openai", base_url=models_server, api_key_env="CHECK_GOOD_KEY")
    add_judge(project, "alive_too", "openai", base_url=models_server, api_key_env="CHECK_GOOD_KEY")
    add_judge(project, "wrong_key", "openai", base_url=models_server, api_key_env="CHECK_BAD_KEY")
    add_judge(project, "dead", "openai", base_url=f"http://127.0.0.1:{port}/v1")
    done = invoke("run", project, "--dry-run", "--check")
    assert done.exit_code == 1, done.output
    out = done.output
    assert "Dry run" in out  # the plan, then the check
    lines = [line.strip() for line in out.splitlines()]
    assert f"mock mock://offline ({JUDGE}): ok" in lines
    assert f"openai {models_server} (alive, alive_too): ok" in lines
    assert any(
        line.startswith(f"openai {models_server} (wrong_key): HTTP 401") for line in lines
    ), out
    assert f"openai http://127.0.0.1:{port}/v1 (dead): connection refused at 127.0.0.1:{port}" in (
        lines
    )
    assert "2 of 4 endpoints failed" in out
    assert KEY not in out and "sk-wrong-SECRET" not in out
    assert not (project / "results").exists()  # a check writes nothing


def test_status_check_passes_when_every_endpoint_answers(
    project: Path, models_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHECK_GOOD_KEY", KEY)
    add_judge(project, "alive", "openai", base_url=models_server, api_key_env="CHECK_GOOD_KEY")
    done = invoke("status", project, "--check")
    assert done.exit_code == 0, done.output
    assert f"openai {models_server} (alive): ok" in done.output
    assert "every endpoint answered" in done.output.lower()


# ----- score -----------------------------------------------------------------------------------


def test_score_says_why_a_judge_has_no_valid_rows(project: Path) -> None:
    add_judge(project, "broken", "mock", mock={"error_rate": 1.0})
    assert invoke("run", project).exit_code == 1
    done = invoke("score", project)
    assert done.exit_code == 1, done.output
    assert (
        "judge 'broken' has no valid rows (40 errors: 40× mock: simulated server error)"
        in done.output
    )
    assert "0 of 0 ids" not in done.output


def test_score_names_each_judge_without_a_complete_run_and_exits_1(
    project: Path, entry: Main
) -> None:
    """A judge stopped by a dead endpoint keeps an unfinished run; one never run has none."""
    import re

    port = unused_port()
    add_judge(project, "closed", "openai", base_url=f"http://127.0.0.1:{port}/v1")
    entry("run", project)
    add_judge(project, "later", "mock")  # registered after the run: never run
    done = invoke("score", project)
    assert done.exit_code == 1, done.output
    out = done.output
    found = re.search(
        r"judge 'closed' not scored: its latest run (run_\S+) is unfinished \((\d+) errors: "
        rf"\2× connection refused at 127\.0\.0\.1:{port}; (\d+) rows not asked\); fix the "
        rf"cause, then run `meta-evaluator run {re.escape(str(project))} --judges closed "
        r"--retry error`",
        out,
    )
    assert found, out
    assert int(found[2]) + int(found[3]) == 40
    assert (project / "results" / found[1] / "closed.jsonl").is_file()
    assert (
        f"judge 'later' not scored: never run; run `meta-evaluator run {project} --judges later`"
    ) in out
    assert f"  {JUDGE}: " in out and "not scored" not in out.split(f"  {JUDGE}: ")[1].split("\n")[0]
    assert "0 of 0 ids" not in out
    # the Python API warns of the stopped judge (a judge never run may be on purpose)
    from meta_evaluator.scores.compare import IncompleteScoresWarning
    from meta_evaluator.scores.yaml_config import read_metrics_yaml

    evaluator = MetaEvaluator(project, load=True)
    config = read_metrics_yaml(project / "metrics.yaml")
    with pytest.warns(IncompleteScoresWarning) as warned:
        table = evaluator.compare_async(config)
    message = str(warned[0].message)
    assert f"judge 'closed' not scored: its latest run {found[1]} is unfinished" in message
    assert "later" not in message
    assert all([r.judge_id for r in results] == [JUDGE] for _, results in table.values())


def test_score_with_no_judge_run_to_completion_names_them_and_exits_1(project: Path) -> None:
    add_judge(project, "later", "mock")
    done = invoke("score", project)
    assert done.exit_code == 1, done.output
    assert f"judge '{JUDGE}' not scored: never run" in done.output
    assert "judge 'later' not scored: never run" in done.output
    assert "no judge results" not in done.output


def test_the_facade_checks_the_endpoints_of_the_judges_named(project: Path) -> None:
    """`MetaEvaluator.check_endpoints`: what `--check` prints, for scripts; ids are checked."""
    import httpx

    from meta_evaluator.errors import JudgeConfigError

    evaluator = MetaEvaluator(project, load=True)
    evaluator.add_judge(
        "local", "openai", "m", "Judge {llm_response}", base_url="http://server.test:8000/v1"
    )
    asked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        return httpx.Response(401, json={"error": {"message": "bad key"}})

    checks = evaluator.check_endpoints(transport=httpx.MockTransport(handler))
    assert [(c.judge_ids, c.ok) for c in checks] == [((JUDGE,), True), (("local",), False)]
    assert "401" in checks[1].detail
    assert asked == ["http://server.test:8000/v1/models"]
    assert [c.judge_ids for c in evaluator.check_endpoints([JUDGE])] == [(JUDGE,)]
    with pytest.raises(JudgeConfigError, match="no registered judge"):
        evaluator.check_endpoints(["nobody"])


def test_a_stopped_judge_beside_running_batches_keeps_their_label_and_exit_3(
    project: Path, monkeypatch: pytest.MonkeyPatch, entry: Main
) -> None:
    """Only the judges the error names are labelled stopped; batches still running exit 3."""
    from tests.fake_llm.server import start_in_thread

    monkeypatch.delenv("ME_TEST_UNSET_KEY_9", raising=False)
    add_judge(project, "nokey", "openai", base_url="http://127.0.0.1:9/v1",
              api_key_env="ME_TEST_UNSET_KEY_9")  # fmt: skip
    with start_in_thread(batch_seconds=5.0, seed=3) as server:
        add_judge(project, "batched", "openai", base_url=f"{server.base_url}/v1")
        done = entry("run", project, "--batch", "--batch-wait", "0")
    out, err = done.stdout, done.stderr
    assert done.returncode == 3, (out, err)
    [line] = [line for line in out.splitlines() if line.startswith("batched: ")]
    assert "batches still running" in line and "stopped" not in line
    assert "judge 'nokey': api_key_env: variable ME_TEST_UNSET_KEY_9 is not set" in err
