"""The retry policy, in one place: the only module that imports tenacity.

Exponential backoff with full jitter, at least as long as the server asked (Retry-After and
friends, capped), at most `max_retries + 1` attempts, one log line before each sleep.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import anyio
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_base, wait_random_exponential

from meta_evaluator.llm._classify import CallFailed, classify

__all__ = ["MAX_SERVER_WAIT", "retrying"]

logger = logging.getLogger(__name__)

MAX_SERVER_WAIT = 60.0  # seconds: a longer Retry-After is capped to this


class _Wait(wait_base):
    """The larger of exponential-with-jitter and the server's requested wait."""

    def __init__(self, base: float, cap: float) -> None:
        self._backoff = wait_random_exponential(multiplier=base, max=cap)

    def __call__(self, retry_state: RetryCallState) -> float:
        backoff = float(self._backoff(retry_state))
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        server = classify(exc).min_wait if exc is not None else 0.0
        return max(backoff, min(server, MAX_SERVER_WAIT))


def retrying(
    *,
    max_retries: int,
    backoff_base: float,
    backoff_cap: float,
    describe: Callable[[], str],
    on_retry: Callable[[], None] | None = None,
) -> AsyncRetrying:
    """An AsyncRetrying that retries what `classify` says is worth it.

    Args:
        max_retries: Retries after the first attempt (2 allows 3 attempts).
        backoff_base: Seconds of the first backoff window (doubling each retry).
        backoff_cap: Most seconds of one backoff window.
        describe: Names the call in log lines (`judge=… row=…`), never a secret.
        on_retry: Called before each sleep (to count retries for the progress display).
    """

    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None
        status = exc.status if isinstance(exc, CallFailed) else type(exc).__name__
        wait = state.next_action.sleep if state.next_action is not None else 0.0
        level = logging.WARNING if wait >= 10 else logging.INFO
        logger.log(
            level,
            "%s attempt=%d/%d wait=%.1fs status=%s",
            describe(),
            state.attempt_number,
            max_retries + 1,
            wait,
            status,
        )
        if on_retry is not None:
            on_retry()

    return AsyncRetrying(
        stop=stop_after_attempt(max_retries + 1),
        wait=_Wait(backoff_base, backoff_cap),
        retry=retry_if_exception(lambda exc: classify(exc).retry),
        before_sleep=before_sleep,
        sleep=anyio.sleep,
        reraise=True,
    )
