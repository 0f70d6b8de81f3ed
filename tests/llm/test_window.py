"""The adaptive window (llm/_window.py): its rule, step by step, on a clock the test moves.

Time-driven decisions (slow start, pauses, pacing) are read from `_blocked_for` and the
window's state at a given clock time, so no test waits on real time; the queue itself (order,
hand-over, cancellation) is checked with real tasks, asserting order and counts only.
"""

from __future__ import annotations

import asyncio
import math

import anyio
import pytest

from meta_evaluator.llm._window import CUT, GROWTH_STEP, START, Ticket, Window
from meta_evaluator.llm.types import RateLimits


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def fill(window: Window) -> list[Ticket]:
    """Take every free slot through the fast path (it never awaits when a slot is free)."""
    tickets = []
    while window.in_flight < window.size:
        coroutine = window.acquire()
        try:
            coroutine.send(None)
        except StopIteration as done:
            tickets.append(done.value)
        else:  # pragma: no cover - the fast path awaited
            coroutine.close()
            raise AssertionError("acquire waited with a free slot")
    return tickets


def test_a_window_starts_at_16_or_its_ceiling() -> None:
    assert Window(1024).size == START == 16
    assert Window(8).size == 8
    with pytest.raises(ValueError, match="ceiling must be >= 1, got 0"):
        Window(0)


def test_free_slots_are_taken_without_waiting_and_numbered() -> None:
    clock = Clock()
    window = Window(64, clock=clock)
    tickets = fill(window)
    assert [serial for serial, _, _ in tickets] == list(range(1, 17))
    assert {sent for _, sent, _ in tickets} == {clock.now}
    assert all(math.isnan(predicted) for _, _, predicted in tickets)  # not pacing yet
    assert window.in_flight == 16


def test_slow_start_doubles_each_step_the_window_stays_full() -> None:
    clock = Clock()
    window = Window(1024, clock=clock)
    fill(window)
    assert window._blocked_for(clock.now) == pytest.approx(GROWTH_STEP)  # full: a step begins
    clock.now += GROWTH_STEP
    assert window._blocked_for(clock.now) == 0.0  # doubled: a slot is free
    assert window.size == 32
    sizes = [32]
    while window.size < 1024:
        fill(window)
        clock.now += GROWTH_STEP
        window._blocked_for(clock.now)  # the step starts when it is found full ...
        clock.now += GROWTH_STEP
        window._blocked_for(clock.now)  # ... and it doubles one step later
        sizes.append(window.size)
    assert sizes == [32, 64, 128, 256, 512, 1024]
    fill(window)
    assert window._blocked_for(clock.now + 10) == math.inf  # at the ceiling: wait for a call


def test_slow_start_waits_for_a_busy_loop() -> None:
    """Woken late (the loop was sending), the window looks again a step later, not doubling."""
    clock = Clock()
    window = Window(1024, clock=clock)
    fill(window)
    window._blocked_for(clock.now)
    clock.now += 4 * GROWTH_STEP
    assert window._blocked_for(clock.now) == pytest.approx(GROWTH_STEP)
    assert window.size == 16
    clock.now += GROWTH_STEP
    window._blocked_for(clock.now)
    assert window.size == 32


def test_a_refusal_without_headers_cuts_once_per_window_of_calls() -> None:
    clock = Clock()
    window = Window(512, clock=clock)
    first = fill(window)
    window.refused(first[0], wait=None, limits=None, overload=False)
    assert window.size == int(16 * CUT) == 12
    assert not window.slow_start and window.cuts == 1
    # The other calls of the same window were sent before the cut: they do not cut again.
    for ticket in first[1:6]:
        window.refused(ticket, wait=None, limits=None, overload=False)
    assert window.size == 12 and window.refusals == 6
    later = fill(window)[-1]  # sent after the cut
    window.refused(later, wait=None, limits=None, overload=False)
    assert window.size == 9 and window.cuts == 2


def test_refusals_never_cut_below_one() -> None:
    window = Window(1)
    for _ in range(3):
        (ticket,) = fill(window)
        window.refused(ticket, wait=None, limits=None, overload=True)
    assert window.size == 1


def test_after_a_cut_a_full_window_of_answers_adds_an_eighth() -> None:
    clock = Clock()
    window = Window(512, clock=clock)
    tickets = fill(window)
    window.refused(tickets.pop(), wait=None, limits=None, overload=False)  # 16 -> 12
    for ticket in tickets[:12]:  # 12 answers; the window was full
        window.answered(ticket, None)
    assert window.size == 13  # 12 + max(1, 12 // 8)
    for ticket in tickets[12:]:
        window.answered(ticket, None)
    # A round in which the window was never full does not grow it.
    for _ in range(13):
        coroutine = window.acquire()
        with pytest.raises(StopIteration) as done:
            coroutine.send(None)
        window.answered(done.value.value, None)
    assert window.size == 13


def test_a_retry_after_pauses_every_call() -> None:
    clock = Clock()
    window = Window(64, clock=clock)
    first, *others = fill(window)
    window.refused(first, wait=2.5, limits=None, overload=False)
    for ticket in others:
        window.answered(ticket, None)
    assert window.paused_until == clock.now + 2.5
    assert window._blocked_for(clock.now + 1.0) == pytest.approx(1.5)
    assert window._blocked_for(clock.now + 2.5) == 0.0


def test_pauses_are_capped_and_an_anthropic_reset_stands_for_retry_after() -> None:
    clock = Clock()
    window = Window(64, clock=clock)
    first = fill(window)[0]
    window.refused(first, wait=3600, limits=None, overload=False)
    assert window.paused_until == clock.now + 60
    window = Window(64, clock=clock)
    first = fill(window)[0]
    window.refused(first, wait=None, limits=RateLimits(0, None, 4.0), overload=False)
    assert window.paused_until == clock.now + 4.0


def test_an_answer_stating_the_budget_starts_pacing() -> None:
    clock = Clock()
    window = Window(512, clock=clock)
    tickets = fill(window)
    clock.now += 0.1
    # Sent 0.1 s ago, 15 calls sent after it; the server had 20 left when it counted it.
    window.answered(tickets[0], RateLimits(remaining=20, limit=3000, reset=0.4))
    assert window.rate == 50.0
    # min(bucket 25, 20 + 0.1 s x 50/s) - 15 sent since - 1 kept in hand = 9
    assert window._level == pytest.approx(9.0)
    assert window._blocked_for(clock.now) == 0.0
    window._level = 0.5
    assert window._blocked_for(clock.now) == pytest.approx(0.5 / 50)


def test_paced_answers_correct_the_bucket_by_the_servers_count() -> None:
    clock = Clock()
    window = Window(512, clock=clock)
    tickets = fill(window)
    window.answered(tickets[0], RateLimits(remaining=30, limit=3000))  # pacing at 50/s
    assert window._level == pytest.approx(25 - 15)  # half a second's worth, less the rest
    for ticket in tickets[1:3]:
        window.answered(ticket, None)
    clock.now += 0.2  # refilled to 20
    first, second = fill(window)[:2]  # the bucket holds 19, then 18
    assert (first[2], second[2]) == (pytest.approx(19.0), pytest.approx(18.0))
    clock.now += 2.0  # answered 2 s later: the server counted 3 fewer than we did
    window.answered(first, RateLimits(remaining=16, limit=3000))
    assert window._level == pytest.approx(25 - 3 - 1)  # full again, less them and one in hand
    # The same difference seen again on the next call is not made up twice.
    window.answered(second, RateLimits(remaining=15, limit=3000))
    assert window._level == pytest.approx(21.0)


def test_a_refusal_the_headers_explain_paces_without_a_cut() -> None:
    clock = Clock()
    window = Window(512, clock=clock)
    tickets = fill(window)
    window.refused(tickets[-1], wait=1.0, limits=RateLimits(0, 3000, 0.02), overload=False)
    assert window.size == 16 and window.slow_start  # the pace was at fault, not the window
    assert window.rate == 50.0 and window.paused_until == clock.now + 1.0
    # Another budget ran out (tokens): the requests budget says calls remain, so it cuts.
    window.refused(tickets[0], wait=1.0, limits=RateLimits(7, 3000, 0.02), overload=False)
    assert window.size == 12 and not window.slow_start


def test_a_paced_call_refused_halves_the_burst_once_per_burst() -> None:
    clock = Clock()
    window = Window(512, clock=clock)
    window.answered(fill(window)[0], RateLimits(remaining=40, limit=3000))  # 50/s, bucket 25
    refused = RateLimits(0, 3000)  # no reset, no Retry-After: no pause in the way here

    def paced() -> list[Ticket]:
        window._level = window._capacity  # as if refilled
        return fill(window)

    burst = paced()
    assert not math.isnan(burst[0][2])
    for ticket in burst[-3:]:  # three of one burst refused: halved once
        window.refused(ticket, wait=None, limits=refused, overload=False)
    assert window._capacity == 12.5 and window.size == 16
    window.refused(paced()[0], wait=None, limits=refused, overload=False)
    assert window._capacity == 6.25
    for _ in range(5):
        window.refused(paced()[0], wait=None, limits=refused, overload=False)
    assert window._capacity == 1.0  # one call at a time at most, never less


def test_an_overload_cuts_even_when_headers_are_sent() -> None:
    window = Window(512)
    ticket = fill(window)[0]
    window.refused(ticket, wait=None, limits=RateLimits(0, 3000, 1.0), overload=True)
    assert window.size == 12


@pytest.mark.anyio
async def test_waiting_calls_go_in_order_and_a_cancelled_one_gives_its_place_back() -> None:
    window = Window(2)
    held = fill(window)
    order: list[int] = []

    async def call(number: int) -> None:
        ticket = await window.acquire()
        order.append(number)
        window.answered(ticket, None)

    async with anyio.create_task_group() as group:
        for number in range(3):
            group.start_soon(call, number)
            await anyio.sleep(0)
        with anyio.CancelScope() as scope:  # one more, cancelled while it waits
            scope.cancel()
            await window.acquire()
        await anyio.sleep(0.01)
        assert order == [] and len(window._queue) == 3
        window.release(held[0])
        window.answered(held[1], None)
    assert order == [0, 1, 2]
    assert window.in_flight == 0 and not window._queue


@pytest.mark.anyio
async def test_a_call_granted_then_cancelled_releases_its_slot() -> None:
    window = Window(1)
    (held,) = fill(window)
    task = asyncio.ensure_future(window.acquire())
    await asyncio.sleep(0.01)
    window.release(held)  # hands the slot to the waiting call ...
    task.cancel()  # ... which is cancelled before it runs
    with pytest.raises(asyncio.CancelledError):
        await task
    assert window.in_flight == 0 and not window._queue and window._starting == 0
