"""Pure retry classification: `parse_retry_after` and `classify` (STYLE.md I2)."""

from __future__ import annotations

import email.utils

import pytest

from meta_evaluator.llm.classify import (
    CallFailed,
    EndpointRejected,
    MalformedResponse,
    RetryDecision,
    classify,
    parse_retry_after,
)

NOW = 1_700_000_000.0  # a whole second, so an HTTP date (second resolution) is exact
IN_FIVE_SECONDS = email.utils.formatdate(NOW + 5, usegmt=True)
FIVE_SECONDS_AGO = email.utils.formatdate(NOW - 5, usegmt=True)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        pytest.param({"Retry-After": "3"}, 3.0, id="retry-after-seconds"),
        pytest.param({"retry-after": "2.5"}, 2.5, id="retry-after-fraction-lowercase"),
        pytest.param({"Retry-After": IN_FIVE_SECONDS}, 5.0, id="retry-after-http-date"),
        pytest.param({"retry-after-ms": "1500"}, 1.5, id="retry-after-ms"),
        pytest.param({"x-ratelimit-reset-requests": "1m30s"}, 90.0, id="reset-1m30s"),
        pytest.param({"x-ratelimit-reset-tokens": "250ms"}, 0.25, id="reset-250ms"),
        pytest.param({"X-RateLimit-Reset-Requests": "1h2m3.5s"}, 3723.5, id="reset-h-m-s"),
        pytest.param({"x-ratelimit-reset-tokens": "12"}, 12.0, id="reset-plain-number"),
        pytest.param(
            {
                "Retry-After": "3",
                "retry-after-ms": "1500",
                "x-ratelimit-reset-requests": "1m30s",
                "x-ratelimit-reset-tokens": "250ms",
            },
            3.0,
            id="explicit-retry-after-wins-over-resets",
        ),
        pytest.param(
            {"Retry-After": "3", "retry-after-ms": "7000", "x-ratelimit-reset-tokens": "4s"},
            7.0,
            id="largest-explicit-wins",
        ),
        pytest.param(
            # What @copilotkit/aimock (like OpenAI) sends with a 429.
            {
                "Retry-After": "1",
                "x-ratelimit-remaining-requests": "0",
                "x-ratelimit-remaining-tokens": "0",
                "x-ratelimit-reset-requests": "1s",
                "x-ratelimit-reset-tokens": "6m0s",
            },
            1.0,
            id="aimock-429",
        ),
        pytest.param(
            {
                "x-ratelimit-remaining-requests": "0",
                "x-ratelimit-remaining-tokens": "5000",
                "x-ratelimit-reset-requests": "2s",
                "x-ratelimit-reset-tokens": "6m0s",
            },
            2.0,
            id="reset-of-the-exhausted-budget",
        ),
        pytest.param(
            {"x-ratelimit-reset-requests": "2s", "x-ratelimit-reset-tokens": "6m0s"},
            2.0,
            id="smallest-reset-without-remaining",
        ),
        pytest.param({"Retry-After": "-1"}, None, id="negative-seconds"),
        pytest.param({"retry-after-ms": "-200"}, None, id="negative-ms"),
        pytest.param({"x-ratelimit-reset-requests": "-2s"}, None, id="negative-duration"),
        pytest.param({"Retry-After": FIVE_SECONDS_AGO}, None, id="date-in-the-past"),
        pytest.param({"Retry-After": "nan"}, None, id="nan"),
        pytest.param({"Retry-After": "inf"}, None, id="infinite"),
        pytest.param({"retry-after-ms": "soon"}, None, id="garbage-ms"),
        pytest.param({"x-ratelimit-reset-requests": "abc"}, None, id="garbage-duration"),
        pytest.param({"x-ratelimit-reset-requests": "5x"}, None, id="garbage-unit"),
        pytest.param({"x-ratelimit-reset-requests": "1m30"}, None, id="dangling-number"),
        pytest.param({"Retry-After": ""}, None, id="empty"),
        pytest.param({"Retry-After": "soon"}, None, id="garbage-retry-after"),
        pytest.param({"x-ratelimit-reset-tokens": "1.5.2s"}, None, id="garbage-two-dots"),
        pytest.param({"Retry-After": "soon", "retry-after-ms": "800"}, 0.8, id="garbage-and-good"),
        pytest.param(
            {"Retry-After": "-4", "x-ratelimit-reset-tokens": "2s"}, 2.0, id="neg-and-good"
        ),
        pytest.param({}, None, id="none"),
        pytest.param({"Content-Type": "application/json"}, None, id="unrelated-headers"),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers, now=NOW) == pytest.approx(expected)


def test_parse_retry_after_date_uses_now() -> None:
    # The same date read one second later asks for one second less.
    assert parse_retry_after({"Retry-After": IN_FIVE_SECONDS}, now=NOW + 1) == pytest.approx(4.0)


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        pytest.param(
            CallFailed("x", status="rate_limited", http_status=429, retry_after=2.5),
            RetryDecision(retry=True, min_wait=2.5),
            id="429",
        ),
        pytest.param(
            CallFailed("x", status="rate_limited", http_status=429),
            RetryDecision(retry=True, min_wait=0.0),
            id="429-no-retry-after",
        ),
        pytest.param(
            CallFailed("x", status="http_error", http_status=408, retry_after=1.0),
            RetryDecision(retry=True, min_wait=1.0),
            id="408",
        ),
        pytest.param(
            CallFailed("x", status="http_error", http_status=409, retry_after=0.5),
            RetryDecision(retry=True, min_wait=0.5),
            id="409",
        ),
        pytest.param(
            CallFailed("x", status="http_error", http_status=500, retry_after=4.0),
            RetryDecision(retry=True, min_wait=4.0),
            id="500",
        ),
        pytest.param(
            CallFailed("x", status="http_error", http_status=503, retry_after=30.0),
            RetryDecision(retry=True, min_wait=30.0),
            id="503",
        ),
        pytest.param(
            CallFailed("x", status="timeout"), RetryDecision(retry=True), id="timeout-no-http"
        ),
        pytest.param(
            CallFailed("x", status="connection_error"),
            RetryDecision(retry=True),
            id="connection-error",
        ),
        pytest.param(
            CallFailed("x", status="http_error", http_status=418, retry_after=3.0),
            RetryDecision(retry=False),
            id="418",
        ),
        pytest.param(
            CallFailed("x", status="http_error", http_status=500, retryable=False),
            RetryDecision(retry=False),
            id="500-not-retryable",
        ),
        pytest.param(
            CallFailed("x", status="rate_limited", http_status=429, retryable=False),
            RetryDecision(retry=False),
            id="429-not-retryable",
        ),
        pytest.param(
            MalformedResponse("body is not JSON"), RetryDecision(retry=True), id="malformed"
        ),
        pytest.param(
            EndpointRejected("HTTP 401", http_status=401), RetryDecision(retry=False), id="401"
        ),
        pytest.param(
            EndpointRejected("HTTP 400", http_status=400, structured=True),
            RetryDecision(retry=False),
            id="400-structured",
        ),
        pytest.param(ValueError("bug"), RetryDecision(retry=False), id="value-error"),
        pytest.param(RuntimeError("bug"), RetryDecision(retry=False), id="runtime-error"),
    ],
)
def test_classify(exc: BaseException, expected: RetryDecision) -> None:
    assert classify(exc) == expected


def test_malformed_response_is_a_call_failure_with_its_status() -> None:
    exc = MalformedResponse("nope")
    assert isinstance(exc, CallFailed)
    assert exc.status == "malformed_response"
    assert exc.http_status is None
    assert exc.retryable is True
