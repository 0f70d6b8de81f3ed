"""Rate-limit headers: parsed (`parse_rate_limits`), carried by answers and failures, and fed
to an endpoint's adaptive window (`EndpointLimits`). Requests go through respx (STYLE.md X4)."""

from __future__ import annotations

import datetime

import httpx
import pytest
import respx

from meta_evaluator.llm.anthropic import AnthropicClient
from meta_evaluator.llm.classify import CallFailed, parse_rate_limits, parse_retry_after
from meta_evaluator.llm.limits import EndpointLimits
from meta_evaluator.llm.openai import OpenAIClient
from meta_evaluator.llm.types import ChatRequest, ChatResponse, RateLimits

BASE = "https://llm.test/v1"
ANTHROPIC = "https://anthropic.test"
NOW = 1_800_000_000.0
COMPLETION = {
    "choices": [{"message": {"role": "assistant", "content": "yes"}, "finish_reason": "stop"}]
}
MESSAGE = {"content": [{"type": "text", "text": "yes"}], "stop_reason": "end_turn"}
OPENAI_HEADERS = {
    "x-ratelimit-limit-requests": "3000",
    "x-ratelimit-remaining-requests": "2999",
    "x-ratelimit-reset-requests": "20ms",
    "x-ratelimit-limit-tokens": "150000",
    "x-ratelimit-remaining-tokens": "149984",
    "x-ratelimit-reset-tokens": "6m0s",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def rfc3339(seconds_from_now: float) -> str:
    moment = datetime.datetime.fromtimestamp(NOW + seconds_from_now, datetime.UTC)
    return moment.isoformat().replace("+00:00", "Z")


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        (OPENAI_HEADERS, RateLimits(2999, 3000, 0.02)),
        # Names in any case (httpx.Headers), durations as OpenAI writes them.
        (
            {"X-RateLimit-Remaining-Requests": "0", "X-RateLimit-Reset-Requests": "1m30.5s"},
            RateLimits(0, None, 90.5),
        ),
        ({"x-ratelimit-remaining-requests": "12"}, RateLimits(12, None, None)),
        (
            {
                "anthropic-ratelimit-requests-limit": "50",
                "anthropic-ratelimit-requests-remaining": "49",
                "anthropic-ratelimit-requests-reset": rfc3339(1.2),
                "anthropic-ratelimit-tokens-remaining": "39000",
            },
            RateLimits(49, 50, pytest.approx(1.2)),
        ),
        (  # RFC 3339 with an offset; a reset already past counts as now
            {
                "anthropic-ratelimit-requests-remaining": "0",
                "anthropic-ratelimit-requests-reset": "2020-01-01T00:00:00+01:00",
            },
            RateLimits(0, None, 0.0),
        ),
        (
            {
                "anthropic-ratelimit-requests-remaining": "3",
                "anthropic-ratelimit-requests-reset": "soon",
            },
            RateLimits(3, None, None),
        ),
        ({"retry-after": "1", "content-type": "application/json"}, None),
        ({"x-ratelimit-remaining-tokens": "0"}, None),  # tokens alone: not the requests budget
        ({"x-ratelimit-remaining-requests": "many"}, None),
        (
            {
                "x-ratelimit-remaining-requests": "5",
                "x-ratelimit-limit-requests": "-1",
                "x-ratelimit-reset-requests": "later",
            },
            RateLimits(5, None, None),
        ),
    ],
)
def test_parse_rate_limits(headers: dict[str, str], expected: RateLimits | None) -> None:
    assert parse_rate_limits(httpx.Headers(headers), now=NOW) == expected


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "86"}, 0.086),
        # Both, as the fake server (and OpenAI) send: the larger, rounded-up word wins.
        ({"retry-after-ms": "86", "retry-after": "1"}, 1.0),
    ],
)
def test_retry_after_ms(headers: dict[str, str], expected: float) -> None:
    assert parse_retry_after(headers) == pytest.approx(expected)


@pytest.mark.anyio
async def test_answers_and_429s_carry_the_headers() -> None:
    request = ChatRequest("m", [{"role": "user", "content": "hi"}])
    refusal = {
        "retry-after": "1",
        "x-ratelimit-limit-requests": "3000",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "20ms",
    }
    async with httpx.AsyncClient() as http:
        with respx.mock(assert_all_called=True) as router:
            router.post(f"{BASE}/chat/completions").mock(
                side_effect=[
                    httpx.Response(200, json=COMPLETION, headers=OPENAI_HEADERS),
                    httpx.Response(200, json=COMPLETION),
                    httpx.Response(429, json={"error": {}}, headers=refusal),
                ]
            )
            client = OpenAIClient(http, base_url=BASE)
            answer = await client.complete(request)
            bare = await client.complete(request)
            with pytest.raises(CallFailed) as caught:
                await client.complete(request)
    assert answer.text == "yes" and answer.rate_limits == RateLimits(2999, 3000, 0.02)
    assert bare.rate_limits is None
    assert caught.value.http_status == 429 and caught.value.retry_after == 1.0
    assert caught.value.rate_limits == RateLimits(0, 3000, 0.02)


@pytest.mark.anyio
async def test_anthropic_answers_carry_its_headers() -> None:
    reset = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=30)
    headers = {
        "anthropic-ratelimit-requests-limit": "4000",
        "anthropic-ratelimit-requests-remaining": "3999",
        "anthropic-ratelimit-requests-reset": reset.isoformat(),
    }
    async with httpx.AsyncClient() as http:
        with respx.mock(assert_all_called=True) as router:
            router.post(f"{ANTHROPIC}/v1/messages").respond(200, json=MESSAGE, headers=headers)
            answer = await AnthropicClient(http, base_url=ANTHROPIC).complete(
                ChatRequest("claude", [{"role": "user", "content": "hi"}])
            )
    limits = answer.rate_limits
    assert limits is not None and (limits.remaining, limits.limit) == (3999, 4000)
    assert limits.reset is not None and 25 < limits.reset <= 30


@pytest.mark.anyio
async def test_endpoint_limits_feed_the_window() -> None:
    limits = EndpointLimits(64, adaptive=True, name="openai https://llm.test/v1")
    window = limits.window
    assert window is not None and window.ceiling == 64 and window.size == 16
    tickets = [await limits.admit(10) for _ in range(4)]
    assert window.in_flight == 4
    limits.done(tickets[0], ChatResponse("ok", rate_limits=RateLimits(100, 600, 1.0)))
    assert window.rate == 10.0  # 600 a minute
    limits.failed(tickets[1], CallFailed("HTTP 500", status="http_error", http_status=500))
    assert window.size == 16 and window.refusals == 0  # says nothing of the load
    overloaded = CallFailed("HTTP 529", status="http_error", http_status=529, retry_after=2.0)
    limits.failed(tickets[2], overloaded)
    assert window.size == 12 and window.paused_until > 0
    limits.done(tickets[3], None)  # cancelled
    assert window.in_flight == 0 and window.refusals == 1


@pytest.mark.anyio
async def test_without_adaptive_there_is_no_window() -> None:
    limits = EndpointLimits(8)
    assert limits.window is None
    ticket = await limits.admit(10)
    assert ticket is None
    limits.done(ticket, ChatResponse("ok"))
    limits.failed(ticket, CallFailed("429", status="rate_limited", http_status=429))


def test_raw_headers_of_the_direct_path() -> None:
    """Answers read by our transport keep raw header names: one pass finds the known ones."""
    from meta_evaluator.llm._http import _rate_limits

    raw = [
        (b"Content-Type", b"application/json"),
        (b"X-RateLimit-Limit-Requests", b"3000"),
        (b"x-ratelimit-remaining-requests", b"7"),
        (b"X-Ratelimit-Reset-Requests", b"1s"),
    ]
    assert _rate_limits(raw) == RateLimits(7, 3000, 1.0)
    assert _rate_limits([(b"Content-Length", b"2")]) is None
