"""`max_cost`: the runner stops starting calls at the ceiling; the rows not asked stay to do.

Through the public API, with respx as the server, known token usage and known prices, so the
number of calls the ceiling lets through is worked out exactly.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import httpx
import polars as pl
import pytest
import respx

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.errors import (
    CostCeilingError,
    JudgeConfigError,
    JudgeRunError,
    PricesError,
)
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge._prompting import build_request
from meta_evaluator.llm.mock import mock_answer
from meta_evaluator.llm.prices import PICO, Price

BASE = "http://llm.test/v1"
ROWS = 10
PRICE = Price(prompt=3.0, completion=15.0)  # US dollars per million tokens
MAX_TOKENS = 100
COMPLETION = 7  # completion tokens every answer reports


def project(tmp_path: Path, prices: str | None = "m: {prompt: 3.0, completion: 15.0}\n") -> Any:
    evaluator = MetaEvaluator(tmp_path / "p")
    frame = pl.DataFrame(
        {  # rows of one length: every call has the same estimate
            "qid": list(range(ROWS)),
            "response": [f"answer {i:02d}" for i in range(ROWS)],
        }
    )
    evaluator.add_data(DataLoader.load_from_dataframe("chats", frame, "qid"))
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"rejection": ["rejection", "not rejection"]},
            prompt_columns=None,
            response_columns=["response"],
        )
    )
    if prices is not None:
        evaluator.project_dir.mkdir(parents=True, exist_ok=True)
        (evaluator.project_dir / "prices.yaml").write_text(prices, encoding="utf-8")
    return evaluator


class Server:
    """An OpenAI-compatible server reporting the prompt tokens of the estimate and 7 completion
    tokens, counting calls per prompt."""

    def __init__(self) -> None:
        self.router = respx.Router(assert_all_called=False)
        self.router.post(f"{BASE}/chat/completions").mock(side_effect=self.answer)
        self.calls: dict[str, int] = {}

    def answer(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        prompt = body["messages"][-1]["content"]
        self.calls[prompt] = self.calls.get(prompt, 0) + 1
        schema = body["response_format"]["json_schema"]["schema"]
        text = sum(len(m["content"]) for m in body["messages"]) // 4 + 1
        return httpx.Response(
            200,
            json={
                "choices": [
                    {"message": {"content": json.dumps(mock_answer(prompt, schema))},
                     "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": text, "completion_tokens": COMPLETION},
            },
        )  # fmt: skip

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def run(self, evaluator: MetaEvaluator, **options: Any) -> Any:
        options.setdefault("backoff_base", 0.001)
        return evaluator.run_judges_async(
            transport=httpx.MockTransport(self.router.async_handler), **options
        )


def costs(evaluator: MetaEvaluator) -> tuple[int, int]:
    """(estimate, actual) of one call, in picodollars: the estimate reserves MAX_TOKENS."""
    judge = evaluator.judge_registry["j"]
    assert evaluator.eval_task is not None and evaluator.data is not None
    row = evaluator.data.data.row(0, named=True)
    prompt = build_request(judge, evaluator.eval_task, row, "structured").estimated_prompt_tokens()
    return PRICE.units(prompt, MAX_TOKENS), PRICE.units(prompt, COMPLETION)


@pytest.mark.parametrize("concurrency", [1, 8])
def test_the_ceiling_lets_exactly_the_calls_that_fit_and_a_second_run_finishes(
    tmp_path: Path, concurrency: int, caplog: pytest.LogCaptureFixture
) -> None:
    evaluator = project(tmp_path)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE,
                        max_tokens=MAX_TOKENS, max_concurrency=concurrency)  # fmt: skip
    estimate, actual = costs(evaluator)
    assert actual < estimate
    # Calls start while spent + in flight + the next estimate fit. One at a time: the k-th
    # call starts at (k - 1) * actual spent, so a ceiling of estimate + 3 * actual lets 4.
    # Eight at a time: each reserves its estimate, so the fourth waits for the first three
    # to settle, then starts (3 * actual + estimate fits); the fifth no longer fits.
    ceiling = estimate + 3 * actual
    server = Server()
    with caplog.at_level(logging.WARNING), pytest.raises(CostCeilingError) as caught:
        server.run(evaluator, run_id="r1", max_cost=ceiling / PICO)
    error = caught.value
    (said,) = [r.getMessage() for r in caplog.records if "cost ceiling reached" in r.getMessage()]
    assert f"spent ${4 * actual / PICO:.4f} of max_cost ${ceiling / PICO:.4f}" in said
    assert server.total == 4
    assert error.spent == pytest.approx(4 * actual / PICO, rel=1e-12)
    assert error.max_cost == pytest.approx(ceiling / PICO, rel=1e-12)
    assert error.remaining == {"j": ROWS - 4}
    result = error.results["j"]
    assert not result.complete and len(result) == 4
    assert set(result.results_data["outcome"]) == {"valid"}  # none left as an error row
    assert result.cost_usd == pytest.approx(4 * actual / PICO, rel=1e-12)
    message = str(error)
    assert f"${4 * actual / PICO:.4f} of max_cost ${ceiling / PICO:.4f}" in message
    assert f"{ROWS - 4} rows not asked (j: {ROWS - 4})" in message
    assert "run again" in message and "--max-cost" in message
    assert evaluator.load_all_judge_results() == {}  # not complete: nothing to score yet
    # Again with room for everything: only the rows not asked are asked.
    done = server.run(evaluator, run_id="r1", max_cost=1.0)["j"]
    assert server.total == ROWS and set(server.calls.values()) == {1}
    assert done.complete and len(done) == ROWS
    assert done.cost_usd == pytest.approx((ROWS - 4) * actual / PICO, rel=1e-12)


def test_retries_are_calls_too_and_an_http_error_costs_nothing(tmp_path: Path) -> None:
    evaluator = project(tmp_path)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE,
                        max_tokens=MAX_TOKENS, max_concurrency=1)  # fmt: skip
    estimate, actual = costs(evaluator)
    server = Server()
    failed: list[int] = []

    def first_fails(request: httpx.Request) -> httpx.Response:
        if not failed:
            failed.append(1)
            return httpx.Response(503, json={"error": {"message": "busy"}})
        return server.answer(request)

    server.router.routes[0].side_effect = first_fails
    # Room for the failed call's estimate and one more: the 503 is settled at 0, so the
    # retry fits, and then one more row (estimate + actual <= ceiling), not a third.
    ceiling = estimate + actual
    with pytest.raises(CostCeilingError) as caught:
        server.run(evaluator, max_cost=ceiling / PICO, max_retries=2)
    assert failed == [1] and server.total == 2
    result = caught.value.results["j"]
    assert len(result) == 2 and result.results_data["attempts"].to_list() == [2, 1]
    assert caught.value.spent == pytest.approx(2 * actual / PICO, rel=1e-12)


def test_calls_cancelled_before_they_are_sent_cost_nothing(tmp_path: Path) -> None:
    # One request a minute: the first call goes out, the other seven workers wait in
    # `limits.admit` with their estimates reserved. The 404 stops the judge and cancels them:
    # never sent, they cost nothing (and leave the ceiling's room to the other judges).
    evaluator = project(tmp_path)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE,
                        max_tokens=MAX_TOKENS, max_concurrency=8)  # fmt: skip
    estimate, _ = costs(evaluator)
    server = Server()
    server.router.routes[0].side_effect = lambda request: httpx.Response(
        404, json={"error": {"message": "model not found"}}
    )
    with pytest.raises(JudgeRunError, match="404") as caught:
        server.run(evaluator, max_cost=8 * estimate / PICO, requests_per_minute=1)
    assert len(server.router.routes[0].calls) == 1
    assert caught.value.results["j"].cost_usd == 0.0


def test_a_row_whose_retry_does_not_fit_stays_unasked_not_an_error_row(tmp_path: Path) -> None:
    evaluator = project(tmp_path)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE,
                        max_tokens=MAX_TOKENS, max_concurrency=1)  # fmt: skip
    estimate, _ = costs(evaluator)
    server = Server()
    server.router.routes[0].side_effect = lambda request: httpx.Response(200, text="not JSON")
    # An unreadable 2xx body may have been billed: it costs its estimate, and the retry
    # (another estimate) no longer fits.
    with pytest.raises(CostCeilingError) as caught:
        server.run(evaluator, max_cost=(2 * estimate - 1) / PICO, max_retries=3)
    assert len(server.router.routes[0].calls) == 1
    assert caught.value.spent == pytest.approx(estimate / PICO, rel=1e-12)
    assert caught.value.remaining == {"j": ROWS}
    assert len(caught.value.results["j"]) == 0  # no error row: a later run asks it whole


def test_a_mock_judge_costs_nothing_and_runs_beside_a_stopped_one(tmp_path: Path) -> None:
    evaluator = project(tmp_path)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE,
                        max_tokens=MAX_TOKENS, max_concurrency=2)  # fmt: skip
    evaluator.add_judge("free", "mock", "mock-1", "Judge {response}")  # no price needed
    server = Server()
    with pytest.raises(CostCeilingError) as caught:
        server.run(evaluator, max_cost=0.0)
    assert server.total == 0
    assert caught.value.remaining == {"j": ROWS}
    assert caught.value.results["free"].complete and len(caught.value.results["free"]) == ROWS
    assert caught.value.results["free"].cost_usd == 0.0
    assert len(caught.value.results["j"]) == 0


def test_a_ceiling_not_reached_reports_the_spend(tmp_path: Path) -> None:
    evaluator = project(tmp_path)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE,
                        max_tokens=MAX_TOKENS)  # fmt: skip
    _, actual = costs(evaluator)
    server = Server()
    result = server.run(evaluator, max_cost=5.0)["j"]
    assert result.complete and server.total == ROWS
    assert result.cost_usd == pytest.approx(ROWS * actual / PICO, rel=1e-12)
    assert server.run(evaluator)["j"].cost_usd is None  # no ceiling: no cost is tracked


@pytest.mark.parametrize(
    ("prices", "said"),
    [(None, "does not exist"), ("other-model: {prompt: 1, completion: 2}\n", "has no price")],
    ids=["no-file", "no-entry"],
)
def test_a_judge_without_a_price_is_refused_before_any_call(
    tmp_path: Path, prices: str | None, said: str
) -> None:
    evaluator = project(tmp_path, prices)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE)
    evaluator.add_judge("free", "mock", "mock-1", "Judge {response}")
    server = Server()
    with pytest.raises(JudgeConfigError) as caught:
        server.run(evaluator, max_cost=1.0)
    assert server.total == 0
    results = evaluator.paths.results_dir
    assert not results.exists() or not any(results.iterdir())
    error = caught.value
    assert error.judge_id == "j" and error.field == "max_cost"
    message = str(error)
    assert "judge 'j'" in message and "'m'" in message and said in message
    assert str(evaluator.project_dir / "prices.yaml") in message
    server.run(evaluator)  # without a ceiling, no price is needed


def test_a_bad_prices_file_is_refused_before_any_call(tmp_path: Path) -> None:
    evaluator = project(tmp_path, "m: {prompt: 3.0}\n")
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE)
    server = Server()
    with pytest.raises(PricesError, match=r"m\.completion: missing"):
        server.run(evaluator, max_cost=1.0)
    assert server.total == 0


def test_a_ceiling_is_refused_for_batches(tmp_path: Path) -> None:
    evaluator = project(tmp_path)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE)
    with pytest.raises(JudgeConfigError, match="max_cost does not apply to batch"):
        evaluator.plan_run(max_cost=1.0, batch=True)


def test_the_plan_summary_gives_the_estimate_the_ceiling_would_reserve(tmp_path: Path) -> None:
    evaluator = project(tmp_path)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE,
                        max_tokens=MAX_TOKENS)  # fmt: skip
    evaluator.add_judge("free", "mock", "mock-1", "Judge {response}")
    estimate, _ = costs(evaluator)
    summary = evaluator.plan_run(max_cost=1.0, consistency=3).summary()
    by_judge = {j.judge_id: j.estimated_cost for j in summary.judges}
    assert by_judge == {"j": pytest.approx(3 * ROWS * estimate / PICO, rel=1e-12), "free": 0.0}
    assert summary.estimated_cost == pytest.approx(3 * ROWS * estimate / PICO, rel=1e-12)
    assert evaluator.plan_run().summary().estimated_cost is None


def test_a_stop_past_the_ceiling_says_it_has_passed_it(caplog: pytest.LogCaptureFixture) -> None:
    """Calls that cost more than estimated leave spent above the ceiling: the stop then said
    "the next call would pass it" of a ceiling already passed (trial 2 #11)."""
    import anyio

    from meta_evaluator.judge.runner import _ceiling_error
    from meta_evaluator.llm.spend import CeilingReached, Spend

    spend = Spend(0.5)
    assert spend.try_reserve(round(0.4 * PICO))
    spend.settle(round(0.4 * PICO), round(0.714 * PICO), "j")  # reported 1.8x the estimate

    async def ask() -> None:
        await spend.reserve(round(0.01 * PICO))

    with caplog.at_level(logging.WARNING), pytest.raises(CeilingReached):
        anyio.run(ask)
    (said,) = [r.getMessage() for r in caplog.records if "cost ceiling reached" in r.getMessage()]
    assert "spent $0.7140 of max_cost $0.5000, which has passed it" in said
    assert "next call" not in said
    message = str(_ceiling_error(spend, {}, 0))
    assert "cost $0.7140 of max_cost $0.5000 (priced by prices.yaml), which has passed it" in (
        message
    )
    assert "would pass it" not in message
    # under the ceiling, the next call is what would pass it
    under = Spend(0.5)
    under.reached = True
    assert "and the next call would pass it" in str(_ceiling_error(under, {}, 0))
