"""The breaker that stops a judge whose endpoint was never reached.

A judge whose first calls all fail to connect (refused, no such host, no answer to connect,
TLS handshake failed) would otherwise spend every row's retries and backoff on an address where
nothing listens: 400 rows, 95 s, 400 error rows. The breaker trips on the `threshold`-th such
failure when no call of the judge has been answered yet; from then on no new row starts, and
rows waiting between attempts or in flight are cancelled through their `guard` scope.

One answer of the server (a success, an HTTP status of any kind, a 2xx body we cannot read)
shows the endpoint is there, and disarms the breaker for the rest of the run. A failure that is
no answer (a timeout after connecting, a connection reset) says nothing either way: it neither
counts towards tripping nor disarms, so a blackholed host whose connects time out is stopped
like one that refuses.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import anyio

from meta_evaluator.llm.classify import CallFailed, EndpointRejected, MalformedResponse

__all__ = ["CONNECT_FAILURES_TO_STOP", "Breaker"]

CONNECT_FAILURES_TO_STOP = 5
"""Attempts that failed to connect, with none answered, after which a judge is stopped."""


@dataclass
class Breaker:
    """Counts a judge's attempts that failed to connect until one is answered."""

    threshold: int = CONNECT_FAILURES_TO_STOP
    failures: int = 0
    answered: bool = False
    cause: CallFailed | None = None
    """The failure that tripped the breaker (None while it has not)."""
    _scopes: set[anyio.CancelScope] = field(default_factory=set)

    @property
    def tripped(self) -> bool:
        """Whether the judge must stop."""
        return self.cause is not None

    def record(self, failure: BaseException | None) -> None:
        """Count one finished attempt: None when answered, else what it raised."""
        if self.answered or self.tripped:
            return
        if _is_answer(failure):
            self.answered = True
            return
        if not (isinstance(failure, CallFailed) and failure.unreachable is not None):
            return  # no answer, but no proof that nothing is there either
        self.failures += 1
        if self.failures >= self.threshold:
            self.cause = failure
            for scope in self._scopes:
                scope.cancel()

    @contextmanager
    def guard(self) -> Iterator[anyio.CancelScope | None]:
        """A scope for one row's attempts, cancelled when the breaker trips.

        None once the endpoint has answered: the breaker can no longer trip, so rows started
        after that pay for no scope (this runs once per row).
        """
        if self.answered:
            yield None
            return
        with anyio.CancelScope() as scope:
            if self.tripped:
                scope.cancel()
            self._scopes.add(scope)
            try:
                yield scope
            finally:
                self._scopes.discard(scope)


def _is_answer(outcome: BaseException | None) -> bool:
    """Whether the server answered: a success, any HTTP status, or a 2xx body we cannot read."""
    if outcome is None or isinstance(outcome, EndpointRejected | MalformedResponse):
        return True
    return isinstance(outcome, CallFailed) and outcome.http_status is not None
