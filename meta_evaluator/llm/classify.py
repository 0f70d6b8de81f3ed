"""Which failures of a call are worth another attempt, and how long to wait: pure functions.

Every failure a client raises is one of the exceptions below; `classify` turns it into a
`RetryDecision`, and the row's `status` comes from the same place, so one failure has one name.
"""

from __future__ import annotations

import datetime
import email.utils
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from meta_evaluator.llm.types import RateLimits

__all__ = [
    "CallFailed",
    "EndpointRejected",
    "MalformedResponse",
    "RetryDecision",
    "classify",
    "parse_rate_limits",
    "parse_retry_after",
]

Status = Literal[
    "rate_limited",
    "timeout",
    "http_error",
    "connection_error",
    "malformed_response",
    "batch_expired",
    "batch_canceled",
    "batch_failed",
]

RETRYABLE_STATUSES = frozenset({408, 409, 429})
FATAL_STATUSES = frozenset({400, 401, 403, 404, 422})


class CallFailed(Exception):
    """One attempt failed in a way that may pass on the next attempt (or may not: see classify)."""

    def __init__(
        self,
        message: str,
        *,
        status: Status,
        http_status: int | None = None,
        retry_after: float | None = None,
        retryable: bool = True,
        unreachable: str | None = None,
        advice: str | None = None,
        rate_limits: RateLimits | None = None,
    ) -> None:
        super().__init__(message)
        self.status: Status = status
        self.http_status = http_status
        self.retry_after = retry_after
        self.rate_limits = rate_limits
        """The rate-limit headers of an HTTP failure (a 429 says remaining 0); None without."""
        self.retryable = retryable
        self.unreachable = unreachable
        """`host:port` when no connection could be opened at all (refused, no such host, no
        answer to connect, TLS handshake failed): the endpoint, not the row, is at fault. None
        for every other failure."""
        self.advice = advice
        """How to fix an endpoint that is never reached, when the message already says it (a TLS
        failure); None when the fix is to start the server or correct `base_url`."""


class MalformedResponse(CallFailed):
    """The server answered 2xx with a body that is not the provider's JSON shape."""

    def __init__(self, message: str) -> None:
        super().__init__(message, status="malformed_response")


class EndpointRejected(Exception):
    """The endpoint refused the request itself (400/401/403/404/422).

    Retrying cannot help, and every other row of the judge would fail the same way.
    """

    def __init__(self, message: str, *, http_status: int, structured: bool = False) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.structured = structured


@dataclass(frozen=True)
class RetryDecision:
    """Whether to try again, and the least time to wait first (the server's word)."""

    retry: bool
    min_wait: float = 0.0


def classify(exc: BaseException) -> RetryDecision:
    """Retry rate limits, timeouts, connection errors, 408/409/5xx and malformed bodies."""
    if isinstance(exc, CallFailed):
        if not exc.retryable:
            return RetryDecision(retry=False)
        if exc.http_status is not None and not (
            exc.http_status in RETRYABLE_STATUSES or exc.http_status >= 500
        ):
            return RetryDecision(retry=False)
        return RetryDecision(retry=True, min_wait=exc.retry_after or 0.0)
    return RetryDecision(retry=False)


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds the server asks us to wait, or None when it does not say.

    `retry-after-ms` and `Retry-After` (seconds or an HTTP date) are the server's explicit word:
    the larger of them wins, and the `x-ratelimit-reset-*` headers are then ignored, since they
    say when a whole budget refills (OpenAI-style servers send `reset-tokens: 6m0s` beside
    `Retry-After: 1`). Without them, a reset header counts only for a budget whose
    `x-ratelimit-remaining-*` is 0 (the largest such), or, with no remaining headers, the
    smallest reset.
    """
    waits: list[float] = []
    lowered = {k.lower(): v for k, v in headers.items()}
    if (value := lowered.get("retry-after-ms")) is not None:
        seconds = _number(value)
        if seconds is not None:
            waits.append(seconds / 1000)
    if (value := lowered.get("retry-after")) is not None:
        seconds = _number(value)
        if seconds is None:
            try:
                parsed = email.utils.parsedate_to_datetime(value)
            except (ValueError, TypeError, IndexError):
                parsed = None  # neither seconds nor a date: ignored
            if parsed is not None:
                seconds = parsed.timestamp() - (time.time() if now is None else now)
        if seconds is not None:
            waits.append(seconds)
    waits = [w for w in waits if math.isfinite(w) and w >= 0]
    if waits:
        return max(waits)
    resets = {}
    for key, value in lowered.items():
        if key.startswith("x-ratelimit-reset"):
            seconds = _duration(value)
            if seconds is not None and math.isfinite(seconds) and seconds >= 0:
                resets[key.removeprefix("x-ratelimit-reset")] = seconds
    if not resets:
        return None
    remaining = {
        k.removeprefix("x-ratelimit-remaining"): v
        for k, v in lowered.items()
        if k.startswith("x-ratelimit-remaining")
    }
    if not remaining:
        return min(resets.values())
    exhausted = [s for kind, s in resets.items() if _number(remaining.get(kind, "")) == 0]
    return max(exhausted) if exhausted else None


RATE_LIMIT_HEADERS = frozenset(
    {
        b"x-ratelimit-limit-requests",
        b"x-ratelimit-remaining-requests",
        b"x-ratelimit-reset-requests",
        b"anthropic-ratelimit-requests-limit",
        b"anthropic-ratelimit-requests-remaining",
        b"anthropic-ratelimit-requests-reset",
    }
)
"""The headers `parse_rate_limits` reads, lower-cased, as raw header names come."""


def parse_rate_limits(headers: Mapping[str, str], *, now: float | None = None) -> RateLimits | None:
    """The requests budget a response's headers state, or None when they state none.

    Looks up known names only (cheap: this runs on every answer): OpenAI's
    `x-ratelimit-remaining-requests`, `x-ratelimit-limit-requests` and
    `x-ratelimit-reset-requests` (`6m0s`, `20ms`), else Anthropic's
    `anthropic-ratelimit-requests-remaining`, `-limit` and `-reset` (an RFC 3339 time). Names are
    matched as written, in lower case: `httpx.Headers` ignores case. A remaining count that is
    not a number counts as not sent; a limit or reset that is not one is left out.
    """
    remaining = headers.get("x-ratelimit-remaining-requests")
    if remaining is not None:
        limit = headers.get("x-ratelimit-limit-requests")
        reset_text = headers.get("x-ratelimit-reset-requests")
        reset = _duration(reset_text) if reset_text is not None else None
    else:
        remaining = headers.get("anthropic-ratelimit-requests-remaining")
        if remaining is None:
            return None
        limit = headers.get("anthropic-ratelimit-requests-limit")
        reset_text = headers.get("anthropic-ratelimit-requests-reset")
        reset = _seconds_until(reset_text, now) if reset_text is not None else None
    left = _number(remaining)
    if left is None or not math.isfinite(left) or left < 0:
        return None
    per_minute = _number(limit) if limit is not None else None
    if per_minute is not None and not (math.isfinite(per_minute) and per_minute > 0):
        per_minute = None
    if reset is not None and not (math.isfinite(reset) and reset >= 0):
        reset = max(0.0, reset) if math.isfinite(reset) else None
    return RateLimits(left, per_minute, reset)


def _seconds_until(text: str, now: float | None) -> float | None:
    """Seconds from now until the RFC 3339 time `text` (negative when past); None if not one."""
    try:
        moment = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.timestamp() - (time.time() if now is None else now)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _duration(text: str) -> float | None:
    """`6m0s`, `1.5s`, `250ms`, `12` → seconds."""
    text = text.strip()
    if (plain := _number(text)) is not None:
        return plain
    total, number = 0.0, ""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    index = 0
    while index < len(text):
        char = text[index]
        if char.isdigit() or char == ".":
            number += char
            index += 1
            continue
        unit = "ms" if text[index : index + 2] == "ms" else char
        value = _number(number)
        if unit not in units or value is None:
            return None
        total += value * units[unit]
        number = ""
        index += len(unit)
    return total if not number else None
