"""Limits shared by every judge on one endpoint and key.

Requests in flight (a fixed number, or an adaptive window under it), requests per minute and
tokens per minute, keyed by (client, base URL, digest of the key) so the key itself is never held.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass, field

import anyio

from meta_evaluator.llm._window import Ticket, Window
from meta_evaluator.llm.classify import CallFailed
from meta_evaluator.llm.types import ChatResponse

__all__ = ["REFUSALS", "EndpointKey", "EndpointLimits", "RateBudget", "endpoint_key"]

REFUSALS = frozenset({429, 503, 529})
"""HTTP statuses that slow an adaptive window: rate limited (429) and overloaded (503, 529)."""


@dataclass(frozen=True)
class EndpointKey:
    """Which endpoint and account a call goes to; shows no secret."""

    client: str
    base_url: str
    key_digest: str = field(repr=False)
    """A digest of the key's value: judges with the same key share limits. Kept out of reprs
    (a plan may be logged), as it could confirm a guessed key."""

    def __str__(self) -> str:
        return f"{self.client} {self.base_url}"


def endpoint_key(client: str, base_url: str, api_key: str | None) -> EndpointKey:
    """The key under which judges share limits."""
    digest = hashlib.sha256((api_key or "").encode()).hexdigest()[:12]
    return EndpointKey(client, base_url, digest)


class RateBudget:
    """A per-minute budget (requests or tokens) refilled continuously, shared by its users.

    The bucket holds one second's worth (at least one unit), so calls are paced evenly rather
    than sent as a minute's burst that a server enforcing shorter windows would answer with 429.
    `acquire(n)` waits until `min(n, bucket)` units are there, then takes all `n`: a request
    larger than the bucket leaves a debt (at most a minute's budget) that later callers wait
    off, so the budget holds on average and no request is stuck.
    """

    def __init__(self, per_minute: float) -> None:
        if not per_minute > 0:
            raise ValueError(f"a per-minute budget must be > 0, got {per_minute}")
        self._rate = per_minute / 60.0
        self._capacity = max(1.0, self._rate)
        self._level = self._capacity
        self._updated = time.monotonic()
        self._lock = anyio.Lock()

    async def acquire(self, amount: float = 1.0) -> None:
        """Take `amount` units, sleeping until they are there."""
        needed = min(amount, self._capacity)
        async with self._lock:  # first come, first served
            while True:
                now = time.monotonic()
                self._level = min(self._capacity, self._level + (now - self._updated) * self._rate)
                self._updated = now
                if self._level >= needed:
                    # May go below zero: a debt the next callers wait off (at most a minute's).
                    self._level = max(self._level - amount, -self._capacity * 60)
                    return
                await anyio.sleep(math.ceil((needed - self._level) / self._rate * 1000) / 1000)


class EndpointLimits:
    """In-flight requests, their pace and optional per-minute budgets for one endpoint and key.

    `max_in_flight` sizes the endpoint's connection pool and is the ceiling: each judge runs as
    many workers as it may have rows in flight, and the endpoint's bound is the sum over its
    judges. With `adaptive`, a `Window` shared by those judges decides how many of them may
    have a call in flight, and when (cut on refusals, grown while healthy, paced by the
    server's rate-limit headers: `_window.py`).

    Every `admit` is matched by one `done` (or `failed`), whatever happens to the call.
    """

    def __init__(
        self,
        max_in_flight: int,
        *,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        adaptive: bool = False,
        name: str = "",
    ) -> None:
        self.max_in_flight = max_in_flight
        self.requests = RateBudget(requests_per_minute) if requests_per_minute else None
        self.tokens = RateBudget(tokens_per_minute) if tokens_per_minute else None
        self.window = Window(max_in_flight, name=name) if adaptive else None
        """The adaptive window (None: a fixed pool of `max_in_flight`)."""

    async def admit(self, estimated_tokens: int) -> Ticket | None:
        """Wait for the per-minute budgets, then for the window; its ticket (None without)."""
        if self.requests is not None:
            await self.requests.acquire(1)
        if self.tokens is not None:
            await self.tokens.acquire(estimated_tokens)
        if self.window is not None:
            return await self.window.acquire()
        return None

    def done(self, ticket: Ticket | None, response: ChatResponse | None) -> None:
        """The call admitted with `ticket` ended: answered (`response`), or None: cancelled."""
        if ticket is None or self.window is None:
            return
        if response is None:
            self.window.release(ticket)
        else:
            self.window.answered(ticket, response.rate_limits)

    def failed(self, ticket: Ticket | None, exc: BaseException) -> None:
        """The call admitted with `ticket` failed with `exc`: a 429 or 503/529 slows the window."""
        if ticket is None or self.window is None:
            return
        if isinstance(exc, CallFailed) and exc.http_status in REFUSALS:
            overload = exc.http_status != 429
            self.window.refused(
                ticket, wait=exc.retry_after, limits=exc.rate_limits, overload=overload
            )
        else:  # a timeout, a connection error, another status: it says nothing of the load
            self.window.release(ticket)
