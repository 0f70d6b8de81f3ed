"""The retry policy, in one place: the only module that imports tenacity.

Exponential backoff with full jitter, at least as long as the server asked (Retry-After and
friends, capped), at most `max_retries + 1` attempts, one log line before each sleep.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_base

from meta_evaluator.llm.classify import CallFailed, classify

__all__ = ["MAX_SERVER_WAIT", "backoff_seconds", "call_with_retries", "retrying"]

T = TypeVar("T")

logger = logging.getLogger(__name__)

MAX_SERVER_WAIT = 60.0  # seconds: a longer Retry-After is capped to this


def backoff_seconds(
    attempt_number: int, exc: BaseException | None, *, base: float, cap: float
) -> float:
    """Seconds to wait after failed attempt number `attempt_number`.

    The larger of exponential backoff with full jitter (uniform in [0, min(cap, base * 2**(n-1))])
    and the wait the server asked for (capped at MAX_SERVER_WAIT).
    """
    backoff = random.uniform(0, min(cap, base * 2 ** (attempt_number - 1)))
    server = classify(exc).min_wait if exc is not None else 0.0
    return max(backoff, min(server, MAX_SERVER_WAIT))


class _Wait(wait_base):
    """`backoff_seconds` for tenacity, counting attempts made before tenacity took over."""

    def __init__(self, base: float, cap: float, offset: int) -> None:
        self._base, self._cap, self._offset = base, cap, offset

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        return backoff_seconds(
            retry_state.attempt_number + self._offset, exc, base=self._base, cap=self._cap
        )


def _log_retry(
    describe: Callable[[], str], attempt: int, attempts: int, wait: float, exc: BaseException | None
) -> None:
    status = exc.status if isinstance(exc, CallFailed) else type(exc).__name__
    level = logging.WARNING if wait >= 10 else logging.INFO
    logger.log(
        level, "%s attempt=%d/%d wait=%.1fs status=%s", describe(), attempt, attempts, wait, status
    )


def retrying(
    *,
    max_retries: int,
    backoff_base: float,
    backoff_cap: float,
    describe: Callable[[], str],
    on_retry: Callable[[], None] | None = None,
    attempts_made: int = 0,
) -> AsyncRetrying:
    """An AsyncRetrying that retries what `classify` says is worth it.

    Args:
        max_retries: Retries after the first attempt (2 allows 3 attempts).
        backoff_base: Seconds of the first backoff window (doubling each retry).
        backoff_cap: Most seconds of one backoff window.
        describe: Names the call in log lines (`judge=… row=…`), never a secret.
        on_retry: Called before each sleep (to count retries for the progress display).
        attempts_made: Attempts already made before this AsyncRetrying (see `call_with_retries`).
    """
    total = max_retries + 1

    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None
        wait = state.next_action.sleep if state.next_action is not None else 0.0
        _log_retry(describe, state.attempt_number + attempts_made, total, wait, exc)
        if on_retry is not None:
            on_retry()

    return AsyncRetrying(
        stop=stop_after_attempt(total - attempts_made),
        wait=_Wait(backoff_base, backoff_cap, attempts_made),
        retry=retry_if_exception(lambda exc: classify(exc).retry),
        before_sleep=before_sleep,
        sleep=anyio.sleep,
        reraise=True,
    )


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    max_retries: int,
    backoff_base: float,
    backoff_cap: float,
    describe: Callable[[], str],
    on_retry: Callable[[], None] | None = None,
) -> T:
    """Await `call()`, retrying as `retrying` does; the first attempt runs without tenacity.

    Most calls succeed at once, and tenacity's bookkeeping costs about 0.15 ms of CPU per call,
    a tenth of the whole client cost; so it is set up only once a first attempt has failed.
    """
    try:
        return await call()
    except Exception as exc:
        if max_retries == 0 or not classify(exc).retry:
            raise
        wait = backoff_seconds(1, exc, base=backoff_base, cap=backoff_cap)
        _log_retry(describe, 1, max_retries + 1, wait, exc)
    if on_retry is not None:
        on_retry()
    await anyio.sleep(wait)
    async for attempt in retrying(
        max_retries=max_retries,
        backoff_base=backoff_base,
        backoff_cap=backoff_cap,
        describe=describe,
        on_retry=on_retry,
        attempts_made=1,
    ):
        with attempt:
            return await call()
    raise AssertionError("unreachable: tenacity re-raises the last failure")  # pragma: no cover
