"""The retry policy (STYLE.md I1) and the shared endpoint limits, on tiny time scales."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any

import pytest

from meta_evaluator.llm import retry as _retry
from meta_evaluator.llm.classify import CallFailed, EndpointRejected
from meta_evaluator.llm.limits import EndpointLimits, RateBudget, endpoint_key
from meta_evaluator.llm.retry import MAX_SERVER_WAIT, retrying

LOGGER = "meta_evaluator.llm.retry"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Flaky:
    """An async call that raises the given exceptions in turn, then returns "ok"."""

    def __init__(self, *failures: BaseException) -> None:
        self.failures = list(failures)
        self.calls: list[float] = []

    async def __call__(self) -> str:
        self.calls.append(time.perf_counter())
        if self.failures:
            raise self.failures.pop(0)
        return "ok"


async def run(
    call: Callable[[], Awaitable[str]],
    *,
    max_retries: int = 2,
    backoff_base: float = 0.001,
    backoff_cap: float = 0.005,
    on_retry: Callable[[], None] | None = None,
) -> str:
    """Drive `call` the way the runner does: `async for attempt in retrying(...)`."""
    result = ""
    async for attempt in retrying(
        max_retries=max_retries,
        backoff_base=backoff_base,
        backoff_cap=backoff_cap,
        describe=lambda: "judge=j1 row='r7'",
        on_retry=on_retry,
    ):
        with attempt:
            result = await call()
    return result


def server_error(status: int = 500, **kwargs: Any) -> CallFailed:
    return CallFailed(f"HTTP {status}", status="http_error", http_status=status, **kwargs)


@pytest.mark.anyio
async def test_transient_failures_are_retried_until_the_last_attempt_then_reraised() -> None:
    errors = [server_error(), server_error(), server_error()]
    call = Flaky(*errors)
    with pytest.raises(CallFailed) as caught:
        await run(call)
    assert len(call.calls) == 3
    assert caught.value is errors[-1]


@pytest.mark.anyio
async def test_success_after_retries_returns_the_value() -> None:
    call = Flaky(server_error(503), CallFailed("t", status="timeout"))
    assert await run(call) == "ok"
    assert len(call.calls) == 3


@pytest.mark.anyio
@pytest.mark.parametrize("max_retries", [0, 1, 4])
async def test_max_retries_means_one_more_attempt(max_retries: int) -> None:
    call = Flaky(*[server_error() for _ in range(10)])
    with pytest.raises(CallFailed):
        await run(call, max_retries=max_retries)
    assert len(call.calls) == max_retries + 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    "exc",
    [
        pytest.param(EndpointRejected("HTTP 401", http_status=401), id="401"),
        pytest.param(server_error(418), id="418"),
        pytest.param(server_error(500, retryable=False), id="not-retryable"),
        pytest.param(ValueError("a bug"), id="value-error"),
    ],
)
async def test_fatal_failures_are_tried_once(exc: BaseException) -> None:
    call = Flaky(exc, exc, exc)
    retried: list[None] = []
    with pytest.raises(type(exc)) as caught:
        await run(call, on_retry=lambda: retried.append(None))
    assert caught.value is exc
    assert len(call.calls) == 1
    assert retried == []


@pytest.mark.anyio
async def test_the_servers_retry_after_is_waited_for() -> None:
    call = Flaky(CallFailed("HTTP 429", status="rate_limited", http_status=429, retry_after=0.2))
    assert await run(call, backoff_base=0.001, backoff_cap=0.001) == "ok"
    assert len(call.calls) == 2
    # 1 ms of slack for the event loop's clock resolution; the backoff alone is at most 1 ms.
    assert call.calls[1] - call.calls[0] >= 0.2 - 0.001


@pytest.mark.anyio
async def test_backoff_alone_is_short() -> None:
    call = Flaky(server_error(), server_error())
    started = time.perf_counter()
    await run(call, backoff_base=0.001, backoff_cap=0.005)
    assert time.perf_counter() - started < 0.15


@pytest.mark.anyio
async def test_one_log_line_per_retry_and_on_retry(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    retried: list[None] = []
    call = Flaky(server_error(), CallFailed("HTTP 429", status="rate_limited", http_status=429))
    assert await run(call, on_retry=lambda: retried.append(None)) == "ok"
    lines = [r for r in caplog.records if r.name == LOGGER]
    assert len(lines) == 2
    assert len(retried) == 2
    first, second = (r.getMessage() for r in lines)
    assert "judge=j1 row='r7'" in first
    assert "attempt=1/3" in first
    assert "status=http_error" in first
    assert "attempt=2/3" in second
    assert "status=rate_limited" in second
    assert all(r.levelno == logging.INFO for r in lines)


@pytest.mark.anyio
async def test_log_line_for_a_connection_error(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    call = Flaky(CallFailed("boom", status="connection_error"))
    await run(call)
    (line,) = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert "attempt=1/3" in line and "status=connection_error" in line


@pytest.mark.anyio
async def test_long_server_waits_are_capped_and_logged_as_warnings(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    # retrying() reads `anyio.sleep` when it is built; give it one that only records.
    monkeypatch.setattr(_retry, "anyio", SimpleNamespace(sleep=fake_sleep))
    caplog.set_level(logging.INFO, logger=LOGGER)
    call = Flaky(
        CallFailed("429", status="rate_limited", http_status=429, retry_after=30.0),
        CallFailed("429", status="rate_limited", http_status=429, retry_after=3600.0),
    )
    assert await run(call) == "ok"
    assert slept == [pytest.approx(30.0, abs=0.01), pytest.approx(MAX_SERVER_WAIT, abs=0.01)]
    lines = [r for r in caplog.records if r.name == LOGGER]
    assert [r.levelno for r in lines] == [logging.WARNING, logging.WARNING]
    assert "wait=30.0s" in lines[0].getMessage()
    assert "wait=60.0s" in lines[1].getMessage()


# --- limits ------------------------------------------------------------------------------------


def test_rate_budget_must_be_positive() -> None:
    for bad in (0, -5):
        with pytest.raises(ValueError, match="> 0"):
            RateBudget(per_minute=bad)


@pytest.mark.anyio
async def test_rate_budget_bursts_ten_then_paces_the_eleventh() -> None:
    budget = RateBudget(per_minute=600)  # 10 per second
    started = time.perf_counter()
    for _ in range(10):
        await budget.acquire()
    assert time.perf_counter() - started < 0.05
    await budget.acquire()
    waited = time.perf_counter() - started
    assert 0.05 <= waited <= 0.5


@pytest.mark.anyio
async def test_rate_budget_refills_at_its_rate_once_drained() -> None:
    budget = RateBudget(per_minute=600)  # 10 per second, a bucket of 10
    await budget.acquire(10)
    started = time.perf_counter()
    await budget.acquire()
    assert 0.05 <= time.perf_counter() - started <= 0.5


@pytest.mark.anyio
async def test_a_request_larger_than_the_bucket_passes_and_leaves_a_debt() -> None:
    """Charging only the bucket let tokens-per-minute budgets through 11 times over."""
    budget = RateBudget(per_minute=6000)  # 100 per second, a bucket of 100
    started = time.perf_counter()
    await budget.acquire(150)  # not stuck: it waits only for a full bucket
    assert time.perf_counter() - started < 0.1
    await budget.acquire(1)  # waits off the debt of 50, then 1: about 0.51 s
    assert 0.4 <= time.perf_counter() - started <= 1.0


@pytest.mark.anyio
async def test_endpoint_limits_admit_takes_from_both_budgets() -> None:
    none = EndpointLimits(2)
    assert none.requests is None and none.tokens is None
    await none.admit(10**9)  # no budgets: never waits

    limits = EndpointLimits(2, requests_per_minute=6000, tokens_per_minute=6000)  # 100 per second
    await limits.admit(100)  # drains the token bucket
    started = time.perf_counter()
    await limits.admit(10)  # 10 tokens at 100 per second
    assert 0.05 <= time.perf_counter() - started <= 0.5


def test_endpoint_key_hides_the_api_key() -> None:
    key = endpoint_key("openai", "https://llm.test/v1", "sk-SECRET-123")
    assert "sk-SECRET-123" not in repr(key) and "sk-SECRET-123" not in str(key)
    assert str(key) == "openai https://llm.test/v1"
    assert key == endpoint_key("openai", "https://llm.test/v1", "sk-SECRET-123")
    assert key != endpoint_key("openai", "https://llm.test/v1", "sk-OTHER")
