"""A connection that cannot be opened: the failure names the cause and host:port, never a key."""

from __future__ import annotations

import socket

import httpx
import pytest

from meta_evaluator.llm._classify import CallFailed, classify
from meta_evaluator.llm.openai import OpenAIClient
from meta_evaluator.llm.types import ChatRequest

KEY = "sk-test-connect-SECRET"
MESSAGES = [{"role": "user", "content": "Did the reply refuse?"}]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def failure(base_url: str, error: Exception) -> CallFailed:
    def handler(request: httpx.Request) -> httpx.Response:
        raise error

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        client = OpenAIClient(http, base_url=base_url, api_key=KEY)
        with pytest.raises(CallFailed) as caught:
            await client.complete(ChatRequest(model="m", messages=MESSAGES))
    return caught.value


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("base_url", "error", "message", "address"),
    [
        pytest.param(
            "http://127.0.0.1:9/v1",
            httpx.ConnectError("[Errno 111] Connection refused"),
            "connection refused at 127.0.0.1:9",
            "127.0.0.1:9",
            id="refused",
        ),
        pytest.param(
            "http://nonexistent.invalid:8000/v1",
            httpx.ConnectError("[Errno -2] Name or service not known"),
            "host not found (DNS lookup failed) at nonexistent.invalid:8000",
            "nonexistent.invalid:8000",
            id="dns",
        ),
        pytest.param(
            "https://llm.test/v1",
            socket.gaierror(-3, "Temporary failure in name resolution"),
            "host not found (DNS lookup failed) at llm.test:443",
            "llm.test:443",
            id="dns-oserror-default-port",
        ),
        pytest.param(
            "http://10.9.9.9/v1",
            httpx.ConnectError("[Errno 113] No route to host"),
            "cannot connect to 10.9.9.9:80 (ConnectError: [Errno 113] No route to host)",
            "10.9.9.9:80",
            id="other",
        ),
    ],
)
async def test_connect_failure_names_cause_and_address(
    base_url: str, error: Exception, message: str, address: str
) -> None:
    exc = await failure(base_url, error)
    assert str(exc) == message
    assert exc.status == "connection_error"
    assert exc.unreachable == address
    assert classify(exc).retry  # a row is still retried; the runner's breaker stops the judge
    assert KEY not in str(exc)


@pytest.mark.anyio
async def test_a_failure_after_connecting_is_not_unreachable() -> None:
    exc = await failure("http://127.0.0.1:9/v1", httpx.ReadError("connection reset"))
    assert exc.status == "connection_error"
    assert exc.unreachable is None
