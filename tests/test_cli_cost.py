"""`meta-evaluator run --max-cost USD`: exit 5 at the ceiling, with what was spent and left.

A loopback server answers every call with 10 completion tokens; prompts are free and an answer
costs $1,000 per million tokens, so every call reserves max_tokens=100 ($0.10) and costs $0.01.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from meta_evaluator import MetaEvaluator
from tests.conftest import Main
from tests.loopback import JsonHandler, serving

ROWS = 40  # the refusal example's


class _Counted(JsonHandler):
    calls = 0

    def do_POST(self) -> None:
        self.read_body()
        type(self).calls += 1
        self.send_json(
            200,
            {
                "choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 10},
            },
        )


@pytest.fixture
def server() -> Iterator[str]:
    _Counted.calls = 0
    with serving(_Counted) as httpd:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"


@pytest.fixture
def paid(project: Path, server: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cost-ceiling")
    evaluator = MetaEvaluator(project, load=True)
    evaluator.add_judge(
        "paid", "openai", "m", "Did it refuse? {prompt} {llm_response}",
        base_url=server, max_tokens=100, max_concurrency=1,
    )  # fmt: skip
    evaluator.save_state(include_data=False)
    (project / "prices.yaml").write_text("m: {prompt: 0, completion: 1000}\n", encoding="utf-8")
    return project


def test_run_stops_at_the_ceiling_with_exit_5_and_goes_on_with_a_higher_one(
    paid: Path, entry: Main
) -> None:
    # The (k+1)-th call starts while k * $0.01 + $0.10 <= $0.15: six calls.
    first = entry("run", paid, "--judges", "paid", "--max-cost", "0.15", "--max-retries", "0")
    assert first.returncode == 5, (first.stdout, first.stderr)
    assert _Counted.calls == 6
    assert "Traceback" not in first.stderr
    assert (
        "stopped at the cost ceiling: the run's calls cost $0.0600 of max_cost $0.1500"
        in first.stderr
    )
    assert f"{ROWS - 6} rows not asked (paid: {ROWS - 6})" in first.stderr
    assert "run again" in first.stderr and "--max-cost" in first.stderr
    assert "paid: valid=0 invalid=6 error=0 cost=$0.0600 (stopped at the cost ceiling" in (
        first.stdout
    )
    assert "Spent $0.0600 of --max-cost $0.1500" in first.stdout
    # Again, with room for the rest: the 6 rows are kept, only the 34 others are asked.
    second = entry("run", paid, "--judges", "paid", "--max-cost", "1")
    assert second.returncode == 0, (second.stdout, second.stderr)
    assert _Counted.calls == ROWS
    assert f"paid: valid=0 invalid={ROWS} error=0 cost=$0.3400" in second.stdout
    assert "Spent $0.3400 of --max-cost $1.0000" in second.stdout


def test_a_judge_without_a_price_exits_2_before_any_call(paid: Path, entry: Main) -> None:
    (paid / "prices.yaml").write_text("other: {prompt: 1, completion: 2}\n", encoding="utf-8")
    done = entry("run", paid, "--judges", "paid", "--max-cost", "1")
    assert done.returncode == 2 and _Counted.calls == 0
    assert (
        "judge 'paid': a cost ceiling (--max-cost, max_cost=) needs the price of its model 'm'"
        in (done.stderr)
    )
    assert str(paid / "prices.yaml") in done.stderr


def test_a_negative_ceiling_is_bad_input(paid: Path, entry: Main) -> None:
    done = entry("run", paid, "--judges", "paid", "--max-cost", "-1")
    assert done.returncode == 2 and _Counted.calls == 0
    assert "--max-cost: Input should be greater than or equal to 0" in done.stderr


def test_a_stopped_judge_wins_with_exit_2_and_the_ceiling_is_said_too(
    paid: Path, entry: Main, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COST_TEST_UNSET_KEY", raising=False)
    evaluator = MetaEvaluator(paid, load=True)
    evaluator.add_judge(
        "keyless", "openai", "m", "Did it refuse? {prompt} {llm_response}",
        api_key_env="COST_TEST_UNSET_KEY",
    )  # fmt: skip
    evaluator.save_state(include_data=False)
    done = entry("run", paid, "--judges", "paid,keyless", "--max-cost", "0.15")
    assert done.returncode == 2, (done.stdout, done.stderr)  # not 3: no batch is running
    assert _Counted.calls == 6
    assert "COST_TEST_UNSET_KEY" in done.stderr
    assert "stopped at the cost ceiling" in done.stderr
    assert "paid: valid=0 invalid=6 error=0 cost=$0.0600 (stopped at the cost ceiling" in (
        done.stdout
    )


def test_a_dry_run_prints_the_estimated_cost_against_the_ceiling(paid: Path, entry: Main) -> None:
    done = entry("run", paid, "--dry-run", "--max-cost", "0.15")
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert _Counted.calls == 0
    # paid: 40 calls at max_tokens=100 ($0.10 each, prompts free); the mock costs nothing.
    assert "  estimated cost:   $4.0000" in done.stdout
    assert "  estimated cost:   $0.0000" in done.stdout
    assert "Estimated cost $4.0000 against --max-cost $0.1500" in done.stdout
    assert "worst" not in done.stdout.lower()  # an estimate, not a bound
    assert "the run may stop at the ceiling" in done.stdout
    roomy = entry("run", paid, "--dry-run", "--max-cost", "4")
    assert "the ceiling should not be in the way" in roomy.stdout
    assert "estimated cost" not in entry("run", paid, "--dry-run").stdout.lower()
