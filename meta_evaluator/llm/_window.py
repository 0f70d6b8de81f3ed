"""The adaptive window: how many calls one endpoint and key may have in flight, and when.

One `Window` per endpoint and key, shared by every judge on it (`limits.EndpointLimits`). The
rule (docs/judges-and-endpoints.md, "Adaptive concurrency"):

- **Start** at `START` calls in flight (the ceiling if lower: the run's or judges'
  `max_concurrency`, summed over the judges on the endpoint).
- **Slow start**: until a refusal has cut the window, it doubles each `GROWTH_STEP` seconds during
  which it stayed full (calls waiting for a slot), once the calls the last doubling admitted all
  run, and only on a loop that kept time (refusals may wait unread on a busy one). Growth goes by
  the clock, not by answers: a server that takes 2 s to answer would leave a window growing per
  answer at 16 for 2 s.
- **Cut**: a 429 the rate-limit headers do not explain (below), or an overload (503, 529), cuts
  the window to `CUT` of its size (at least 1) and ends slow start. Only once per window of
  calls: refusals of calls sent before the last cut do not cut again.
- **Additive increase**: after that, every window's worth of answered calls during which the
  window was full adds an eighth of it (at least 1).
- **Pause**: a refusal or overload that says how long to wait (`Retry-After`, `retry-after-ms`,
  or a reset time with nothing remaining) holds every call to the endpoint until then.
- **Pacing**: once an answer states the requests budget (`x-ratelimit-limit-requests`,
  `anthropic-ratelimit-requests-limit`: per minute), calls are paced by a local token bucket of
  that rate holding half a second's worth. Each answer's `remaining` count corrects it: the
  server's count when it counted that call, against what the bucket held then (one call kept in
  hand). The first answer, of a call sent before pacing began, sets it: the count less the calls
  sent since, plus the refill since, capped at what the bucket holds. A 429 that says nothing
  remains of the requests budget is then explained: it corrects the bucket and pauses, and
  leaves the window as it is (the pace, not the number in flight, was at fault); if the call
  refused was itself paced, the bucket is halved (once per burst, down to one call).

Cost: a call that finds a free slot takes it without awaiting (a few attribute updates); calls
that must wait queue in arrival order, and the first of them keeps the time (sleeps until the
pause ends, the next paced slot or the next growth step). No task per call, no lock.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Callable

import anyio

from meta_evaluator.llm.types import RateLimits

__all__ = ["CUT", "GROWTH_STEP", "MAX_PAUSE", "START", "Ticket", "Window"]

logger = logging.getLogger(__name__)

START = 16
"""Calls in flight a window starts with (the run's default `max_concurrency`)."""
GROWTH_STEP = 0.01
"""Seconds a full window waits to double during slow start (16 to 1,024: six steps). Measured
(judge_throughput, 256 in flight, 200 ms): 20 ms steps cost 0.02-0.03 of efficiency against a
fixed pool, 10 ms steps 0.01; against the 50/s token bucket both refuse 1.3-1.4% of calls."""
CUT = 0.75
"""What a refusal the headers do not explain leaves of the window."""
MAX_PAUSE = 60.0
"""Most seconds one refusal pauses the endpoint (the retry policy caps waits the same way)."""
BURST_SECONDS = 0.5
"""The pacing bucket holds this many seconds' worth of the stated rate: after a pause, half a
second's calls go at once, not the whole second's a server's bucket may not hold yet."""

Ticket = tuple[int, float, float]
"""A call's admission: its serial number among the window's calls, when it was sent, and what
the pacing bucket held once it was taken, less the corrections made so far (nan: no pacing)."""


class _Waiter:
    __slots__ = ("deadline", "event", "ticket")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.ticket: Ticket | None = None
        self.deadline = math.inf  # when the first in line wakes by itself to look again


class Window:
    """Calls in flight and their pace for one endpoint and key (see the module docstring).

    Every `acquire` is matched by exactly one of `answered`, `refused` or `release`.
    """

    def __init__(
        self, ceiling: int, *, name: str = "", clock: Callable[[], float] = time.monotonic
    ) -> None:
        if ceiling < 1:
            raise ValueError(f"a window's ceiling must be >= 1, got {ceiling}")
        self.ceiling = ceiling
        self.size = min(START, ceiling)
        """Calls that may be in flight now."""
        self.in_flight = 0
        self.paused_until = 0.0
        """Clock time before which no call is sent (a refusal's wait)."""
        self.rate = 0.0
        """Requests per second the endpoint's headers state; 0 until one does (no pacing)."""
        self.refusals = 0
        """429s and overloads answered so far."""
        self.cuts = 0
        self._name = name
        self._clock = clock
        self._queue: deque[_Waiter] = deque()
        self._sent = 0  # serial of the last call admitted
        self._cut_after = 0  # refusals of calls up to this serial do not cut again
        self._slow_start = True
        self._grow_at = 0.0  # slow start: when a window full since then doubles (0: not full)
        self._starting = 0  # calls admitted from the line that have not run yet
        self._answered = 0  # answers since the size last changed
        self._was_full = False  # the window was full since the size last changed
        self._capacity = 0.0  # pacing bucket: size, level and when the level was computed
        self._level = 0.0
        self._stamp = 0.0
        self._corrected = 0.0  # the sum of the corrections made to the level from answers
        self._synced = False  # the bucket's level was set from an answer
        self._burst_cut_after = 0  # refusals of calls up to this serial do not halve it again

    @property
    def slow_start(self) -> bool:
        """Whether the window still doubles by the clock (no refusal has cut it yet)."""
        return self._slow_start

    async def acquire(self) -> Ticket:
        """Wait for a slot (and the pace); the ticket to hand back when the call ends."""
        now = self._clock()
        if (
            not self._queue
            and self.in_flight < self.size
            and now >= self.paused_until
            and (not self.rate or self._refill(now) >= 1.0)
        ):
            return self._take(now)
        return await self._wait()

    def answered(self, ticket: Ticket, limits: RateLimits | None) -> None:
        """The call got an answer (any but a refusal or overload); `limits` from its headers."""
        now = self._clock()
        if self.in_flight >= self.size:
            self._was_full = True
        self.in_flight -= 1
        if limits is not None:
            self._sync(ticket, limits, now)
        if not self._slow_start:
            self._answered += 1
            if self._answered >= self.size:
                if self._was_full and self.size < self.ceiling:
                    self._resize(min(self.ceiling, self.size + max(1, self.size // 8)), "grow")
                self._answered, self._was_full = 0, False
        if self._queue:
            self._wake(now)

    def refused(
        self, ticket: Ticket, *, wait: float | None, limits: RateLimits | None, overload: bool
    ) -> None:
        """The call was refused (429; `overload`: 503/529), the server asking to `wait` seconds.

        A 429 is explained when its headers state the requests budget and that nothing remains
        of it: pacing then takes over, and the window is not cut.
        """
        now = self._clock()
        self.in_flight -= 1
        self.refusals += 1
        explained = False
        if limits is not None:
            self._sync(ticket, limits, now)
            explained = not overload and bool(self.rate) and limits.remaining < 1
            if explained and not math.isnan(ticket[2]) and ticket[0] > self._burst_cut_after:
                # A paced call refused: the server holds less at once than we let go at once.
                # Halved once per burst: the others refused with it were sent before.
                self._burst_cut_after = self._sent
                self._capacity = max(1.0, self._capacity / 2)
                self._level = min(self._level, self._capacity)
                logger.info("%s: pacing bursts of %d at most", self._name, self._capacity)
            if wait is None and limits.remaining < 1 and limits.reset is not None:
                wait = limits.reset
        if wait is not None and wait > 0:
            until = now + min(wait, MAX_PAUSE)
            if until > self.paused_until:
                if now >= self.paused_until:  # one line per pause, not per refusal
                    logger.info("%s: paused %.2f s (the server's wait)", self._name, until - now)
                self.paused_until = until
        if not explained and ticket[0] > self._cut_after:
            self.cuts += 1
            self._slow_start = False
            self._cut_after = self._sent
            self._resize(max(1, int(self.size * CUT)), "HTTP 503/529" if overload else "HTTP 429")
            self._answered, self._was_full = 0, False
        if self._queue:
            self._wake(now)

    def release(self, ticket: Ticket) -> None:
        """The call ended saying nothing of the endpoint's load (timeout, 5xx, cancelled)."""
        self.in_flight -= 1
        if self._queue:
            self._wake(self._clock())

    # -- internals

    def _take(self, now: float) -> Ticket:
        self.in_flight += 1
        self._sent += 1
        if self.in_flight >= self.size:
            self._was_full = True
        if self.rate:
            self._level -= 1.0
            return self._sent, now, self._level - self._corrected
        return self._sent, now, math.nan

    def _refill(self, now: float) -> float:
        level = self._level + (now - self._stamp) * self.rate
        self._level = level if level < self._capacity else self._capacity
        self._stamp = now
        return self._level

    def _sync(self, ticket: Ticket, limits: RateLimits, now: float) -> None:
        """Learn the rate from `limits`, and where the server's budget stands now."""
        if limits.limit is not None:
            rate = limits.limit / 60.0
            if rate != self.rate:
                if not self.rate:
                    logger.info("%s: pacing at %.3g requests/s (its headers)", self._name, rate)
                    self._stamp = now
                self.rate, self._capacity = rate, max(1.0, rate * BURST_SECONDS)
        if not self.rate:
            return
        serial, sent_at, predicted = ticket
        # One call's worth is kept in hand for a server that counted the call later than it was
        # sent (a busy loop on either side): it costs one call's delay once, not the pace.
        counted = limits.remaining - 1.0
        if math.isnan(predicted):  # sent before pacing began
            if self._synced:  # the bucket runs already: paced calls' answers will correct it
                return
            # Where the budget stands at least: the server's count when it admitted this call,
            # refilled since, less the calls sent after it (each took one, or was refused and
            # took none: counting it errs on the safe side).
            refilled = min(self._capacity, counted + (now - sent_at) * self.rate)
            self._level = min(self._capacity, refilled - (self._sent - serial))
            self._stamp = now
            self._synced = True
            return
        # Paced: the server's count against ours when it counted this call (corrections made
        # since included); the difference is ours to make up.
        error = counted - (predicted + self._corrected)
        self._corrected += error
        self._level = min(self._capacity, self._refill(now) + error)

    def _resize(self, size: int, why: str) -> None:
        if size == self.size:
            return
        level = logging.INFO if size < self.size else logging.DEBUG
        logger.log(level, "%s: window %d -> %d (%s)", self._name, self.size, size, why)
        self.size = size

    def _blocked_for(self, now: float) -> float:
        """Seconds before the first in line may go (0: now; inf: until a call ends)."""
        if now < self.paused_until:
            return self.paused_until - now
        if self.in_flight >= self.size:
            if not self._slow_start or self.size >= self.ceiling:
                return math.inf
            if self._starting:  # the last step's calls are not all out yet: wait for them
                return math.inf
            if not self._grow_at:
                self._grow_at = now + GROWTH_STEP
            if now < self._grow_at:
                return self._grow_at - now
            if now - self._grow_at > GROWTH_STEP / 2:
                # The loop was busy (sending what the last step let go): refusals may be waiting
                # to be read. Look again after a step in which it kept time.
                self._grow_at = now + GROWTH_STEP
                return GROWTH_STEP
            self._resize(min(self.ceiling, self.size * 2), "slow start")
            self._grow_at = now + GROWTH_STEP
        else:
            self._grow_at = 0.0
        if self.rate:
            level = self._refill(now)
            if level < 1.0:
                return (1.0 - level) / self.rate
        return 0.0

    def _dispatch(self, now: float) -> float:
        """Admit those in line who may go now; seconds until the first left may go.

        inf: until a call ends; 0: nobody is left in line.
        """
        queue = self._queue
        while queue:
            delay = self._blocked_for(now)
            if delay > 0.0:
                return delay
            waiter = queue.popleft()
            waiter.ticket = self._take(now)
            waiter.event.set()
            self._starting += 1
        self._grow_at = 0.0
        return 0.0

    def _wake(self, now: float) -> None:
        """Admit who may go; make the first left in line wake in time to look again."""
        delay = self._dispatch(now)
        if self._queue and delay < math.inf and self._queue[0].deadline > now + delay:
            self._queue[0].event.set()  # it sleeps too long, or without a time: it looks again

    def _restamp(self, ticket: Ticket) -> Ticket:
        """`ticket` with the time its call runs (see `_started`)."""
        serial, _, predicted = ticket
        return serial, self._started(), predicted

    def _started(self) -> float:
        """A call admitted from the line runs: the time; slow start goes on once all run."""
        now = self._clock()
        self._starting -= 1
        if not self._starting and self._queue and self._slow_start:
            self._grow_at = 0.0  # a full step from now, when refusals of those calls are in
            self._wake(now)
        return now

    async def _wait(self) -> Ticket:
        waiter = _Waiter()
        queue = self._queue
        queue.append(waiter)
        try:
            while True:
                if queue[0] is waiter:  # the first in line keeps the time
                    now = self._clock()
                    delay = self._dispatch(now)
                    if waiter.ticket is not None:
                        if queue:  # the next one keeps the time now
                            self._wake(now)
                        return self._restamp(waiter.ticket)
                    waiter.deadline = now + delay
                else:
                    delay, waiter.deadline = math.inf, math.inf
                waiter.event = anyio.Event()
                if delay < math.inf:
                    with anyio.move_on_after(delay):
                        await waiter.event.wait()
                else:
                    await waiter.event.wait()
                if waiter.ticket is not None:
                    # Stamped again now that it runs: on a busy loop a call admitted with many
                    # others goes out well after its admission, and its answer's `remaining`
                    # is refilled from when it went.
                    return self._restamp(waiter.ticket)
        except BaseException:
            if waiter.ticket is not None:  # admitted, then cancelled before it could go
                self._started()
                self.release(waiter.ticket)
            else:
                first = queue[0] is waiter
                queue.remove(waiter)
                if first and queue:
                    self._wake(self._clock())
            raise
