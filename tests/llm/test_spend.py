"""The run's spend tracker: reserve the estimate, settle the actual, stop at the ceiling.

The bound under test (llm/spend.py): at every admission `spent + reserved <= ceiling`, so the
final spend is at most the ceiling plus the excess (actual - estimate, where positive) of the
calls in flight at the last admission; and the ceiling is reached only with no call in flight,
so the run stops having spent more than `ceiling - estimate` of the call it refused.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import anyio
import pytest

from meta_evaluator.llm.classify import CallFailed, EndpointRejected, MalformedResponse
from meta_evaluator.llm.prices import PICO, Price
from meta_evaluator.llm.spend import DEFAULT_COMPLETION_TOKENS, CeilingReached, JudgeSpend, Spend
from meta_evaluator.llm.types import ChatRequest, ChatResponse


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_reserve_fits_up_to_the_ceiling_exactly_and_settle_replaces_the_reservation() -> None:
    spend = Spend(100 / PICO)  # a ceiling of 100 units
    assert spend.ceiling == 100
    assert spend.try_reserve(60)
    assert spend.try_reserve(40)  # 60 + 40 == 100: fits
    assert not spend.try_reserve(1)
    assert (spend.spent, spend.reserved, spend.in_flight) == (0, 100, 2)
    spend.settle(60, 25, "a")  # cost less than reserved: the rest is free again
    assert (spend.spent, spend.reserved, spend.in_flight) == (25, 40, 1)
    assert spend.try_reserve(35)  # 25 + 40 + 35 == 100
    spend.settle(40, 40, "b")
    spend.settle(35, 50, "a")  # cost more than reserved: counted as spent
    assert (spend.spent, spend.reserved, spend.in_flight) == (115, 0, 0)
    assert spend.by_judge == {"a": 75, "b": 40}
    assert spend.judge_usd("a") == 75 / PICO and spend.judge_usd("c") == 0.0
    assert not spend.reached  # nothing was refused with nothing in flight yet


@pytest.mark.anyio
async def test_a_call_that_does_not_fit_waits_for_calls_in_flight_then_stops_the_run() -> None:
    spend = Spend(100 / PICO)
    await spend.reserve(60)
    order: list[str] = []

    async def second() -> None:
        await spend.reserve(60)  # 60 in flight: waits
        order.append("second admitted")

    async def third() -> None:
        try:
            await spend.reserve(60)
        except CeilingReached:
            order.append("third refused")

    async with anyio.create_task_group() as group:
        group.start_soon(second)
        await anyio.wait_all_tasks_blocked()
        assert order == []
        spend.settle(60, 30, "j")  # the first cost 30: 30 + 60 fits
        await anyio.wait_all_tasks_blocked()
        assert order == ["second admitted"]
        group.start_soon(third)  # 30 + 60 + 60 > 100, one in flight: waits
        await anyio.wait_all_tasks_blocked()
        assert order == ["second admitted"]
        spend.settle(60, 60, "j")  # 90 spent, none in flight: 90 + 60 > 100
    assert order == ["second admitted", "third refused"]
    assert spend.reached and spend.spent == 90
    assert not spend.try_reserve(1)  # reached is final, even for a call that would fit
    with pytest.raises(CeilingReached):
        await spend.reserve(1)


@pytest.mark.anyio
@pytest.mark.parametrize("excess", [0, 40], ids=["within-estimate", "over-estimate"])
@pytest.mark.parametrize("seed", range(5))
async def test_many_workers_pass_the_ceiling_by_at_most_the_excess_in_flight(
    seed: int, excess: int
) -> None:
    """64 workers, random estimates and costs, random interleaving: the bound holds."""
    rng = random.Random(seed)
    spend = Spend(10_000 / PICO)
    in_flight: dict[int, int] = {}  # call -> its excess (actual - estimate)
    at_last_admission: dict[int, int] = {}
    refused: list[tuple[int, int]] = []  # (estimate, spent) of refusals with none in flight
    calls = iter(range(10**6))

    async def worker() -> None:
        nonlocal at_last_admission
        while True:
            estimate = rng.randint(50, 400)
            if not spend.try_reserve(estimate):
                try:
                    await spend.reserve(estimate)
                except CeilingReached:
                    if spend.in_flight == 0 and not refused:
                        refused.append((estimate, spend.spent))
                    return
            assert spend.spent + spend.reserved <= spend.ceiling  # at every admission
            call = next(calls)
            # Within: any cost up to the estimate; over: every call costs more than it.
            actual = estimate + rng.randint(1, excess) if excess else rng.randint(0, estimate)
            in_flight[call] = actual - estimate
            at_last_admission = dict(in_flight)
            for _ in range(rng.randint(0, 6)):
                await anyio.sleep(0)
            del in_flight[call]
            spend.settle(estimate, actual, "j")

    async with anyio.create_task_group() as group:
        for _ in range(64):
            group.start_soon(worker)
    assert spend.reached and spend.in_flight == 0 and spend.reserved == 0
    bound = spend.ceiling + sum(max(0, e) for e in at_last_admission.values())
    assert spend.spent <= bound
    if excess == 0:
        assert spend.spent <= spend.ceiling
    else:
        assert spend.spent > spend.ceiling  # the case the bound is about did happen
    # Stopped only when even an empty pipeline could not fit the next call.
    ((estimate, spent),) = refused
    assert spent == spend.spent and spent + estimate > spend.ceiling


def request(max_tokens: int | None) -> ChatRequest:
    return ChatRequest("m", [{"role": "user", "content": "x" * 400}], max_tokens=max_tokens)


@pytest.mark.anyio
async def test_a_call_reserves_its_estimate_and_settles_its_reported_tokens() -> None:
    spend = Spend(1.0)
    judge = JudgeSpend(spend, Price(prompt=1.0, completion=2.0), "j")
    reserved = await judge.reserve(request(50))
    assert reserved == (101, 50, 101 * 10**6 + 50 * 2 * 10**6)  # 400 characters / 4 + 1
    assert spend.reserved == reserved[2]
    judge.settle(reserved, ChatResponse("ok", prompt_tokens=90, completion_tokens=7))
    assert spend.spent == 90 * 10**6 + 7 * 2 * 10**6 and spend.reserved == 0
    # A count the server left out is the estimate's.
    reserved = await judge.reserve(request(None))
    assert reserved[1] == DEFAULT_COMPLETION_TOKENS
    judge.settle(reserved, ChatResponse("ok", prompt_tokens=None, completion_tokens=3))
    assert spend.spent == (90 + 101) * 10**6 + (7 + 3) * 2 * 10**6


@pytest.mark.parametrize(
    ("failure", "billed"),
    [
        (CallFailed("HTTP 503", status="http_error", http_status=503), False),
        (CallFailed("HTTP 429", status="rate_limited", http_status=429), False),
        (EndpointRejected("HTTP 401", http_status=401), False),
        (CallFailed("refused", status="connection_error", unreachable="127.0.0.1:9"), False),
        (CallFailed("no answer in 60 s", status="timeout"), True),
        (CallFailed("connection lost", status="connection_error"), True),
        (MalformedResponse("not JSON"), True),
        (asyncio.CancelledError(), True),
    ],
    ids=["503", "429", "401", "unreachable", "timeout", "lost", "malformed", "cancelled"],
)
def test_a_failed_call_costs_its_estimate_when_the_server_may_have_billed_it(
    failure: BaseException, billed: bool
) -> None:
    spend = Spend(1.0)
    judge = JudgeSpend(spend, Price(prompt=1.0, completion=2.0), "j")
    units = judge.price.units(101, 50)
    assert spend.try_reserve(units)
    judge.settle((101, 50, units), None, failure)
    assert spend.spent == (units if billed else 0) and spend.in_flight == 0


@pytest.mark.anyio
async def test_call_settles_a_failure_and_refuses_past_the_ceiling_without_calling() -> None:
    price = Price(prompt=0.0, completion=1.0)
    spend = Spend(price.units(0, 150) / PICO)  # room for one call of max_tokens=100
    judge = JudgeSpend(spend, price, "j")
    made: list[str] = []

    async def timed_out(sending: Callable[[], None]) -> ChatResponse:
        sending()
        made.append("call")
        raise CallFailed("no answer", status="timeout")

    with pytest.raises(CallFailed):
        await judge.call(request(100), timed_out)
    assert spend.spent == price.units(0, 100)  # may have been billed: its whole estimate
    with pytest.raises(CeilingReached):
        await judge.call(request(100), timed_out)
    assert made == ["call"] and spend.reached


def test_a_call_never_sent_costs_nothing_whatever_ended_it() -> None:
    spend = Spend(1.0)
    judge = JudgeSpend(spend, Price(prompt=1.0, completion=2.0), "j")
    units = judge.price.units(101, 50)
    for failure in (asyncio.CancelledError(), CallFailed("timeout", status="timeout"), None):
        assert spend.try_reserve(units)
        judge.settle((101, 50, units), None, failure, sent=False)
    assert spend.spent == 0 and spend.reserved == 0 and spend.in_flight == 0


@pytest.mark.anyio
async def test_calls_cancelled_before_they_are_sent_cost_nothing_and_free_the_ceiling() -> None:
    # The runner reserves before `limits.admit`; a judge whose endpoint refused the request
    # (or whose breaker tripped) cancels its calls still waiting there: they were never sent.
    price = Price(prompt=2.5, completion=10.0)
    req = ChatRequest("m", [{"role": "user", "content": "x" * 8000}], max_tokens=1024)
    estimate = price.units(2001, 1024)
    spend = Spend(50 * estimate / PICO)  # room for every call below
    queued, sent = JudgeSpend(spend, price, "a"), JudgeSpend(spend, price, "b")
    never = anyio.Event()

    async def waits_for_admission(sending: Callable[[], None]) -> ChatResponse:
        await never.wait()  # as in `limits.admit`: `sending()` is never reached
        sending()
        raise AssertionError("not reached")

    async def in_flight(sending: Callable[[], None]) -> ChatResponse:
        sending()
        await never.wait()  # the request is with the client: it may be billed
        raise AssertionError("not reached")

    async with anyio.create_task_group() as group:
        for _ in range(48):
            group.start_soon(queued.call, req, waits_for_admission)
        group.start_soon(sent.call, req, in_flight)
        await anyio.sleep(0.01)
        assert spend.reserved == 49 * estimate and spend.in_flight == 49
        group.cancel_scope.cancel()
    assert spend.judge_usd("a") == 0.0 and spend.by_judge.get("a", 0) == 0
    assert spend.by_judge["b"] == estimate  # cancelled after sending: its whole estimate
    assert spend.spent == estimate and spend.reserved == 0 and spend.in_flight == 0
    assert not spend.reached
