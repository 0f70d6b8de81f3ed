"""The breaker: which finished attempts count as the endpoint answering, which as no answer."""

from __future__ import annotations

import pytest

from meta_evaluator.judge._breaker import Breaker
from meta_evaluator.llm.classify import CallFailed, EndpointRejected, MalformedResponse

REFUSED = CallFailed("connection refused at h:1", status="connection_error", unreachable="h:1")


@pytest.mark.parametrize(
    "first",
    [
        pytest.param(CallFailed("no complete answer within 60 s", status="timeout"), id="attempt"),
        pytest.param(CallFailed("timed out (ReadTimeout)", status="timeout"), id="read-timeout"),
        pytest.param(
            CallFailed("connection failed (ReadError: reset)", status="connection_error"),
            id="reset",
        ),
    ],
)
def test_failures_that_are_no_answer_neither_trip_nor_disarm(first: CallFailed) -> None:
    breaker = Breaker(threshold=2)
    breaker.record(first)
    assert not breaker.answered and not breaker.tripped
    breaker.record(REFUSED)
    breaker.record(REFUSED)
    assert breaker.tripped and breaker.cause is REFUSED


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(None, id="success"),
        pytest.param(EndpointRejected("HTTP 401", http_status=401), id="rejected"),
        pytest.param(CallFailed("HTTP 503", status="http_error", http_status=503), id="5xx"),
        pytest.param(CallFailed("HTTP 429", status="rate_limited", http_status=429), id="429"),
        pytest.param(MalformedResponse("HTTP 200 body is not JSON"), id="malformed-2xx"),
    ],
)
def test_any_answer_of_the_server_disarms(answer: BaseException | None) -> None:
    breaker = Breaker(threshold=2)
    breaker.record(answer)
    assert breaker.answered
    breaker.record(REFUSED)
    breaker.record(REFUSED)
    assert not breaker.tripped
