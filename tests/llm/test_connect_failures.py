"""A connection that cannot be opened: the failure names the cause and host:port, never a key."""

from __future__ import annotations

import socket
import ssl

import httpx
import pytest

from meta_evaluator.llm.classify import CallFailed, classify
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
        pytest.param(
            "http://[::1]:9/v1",
            httpx.ConnectError("[Errno 111] Connection refused"),
            "connection refused at [::1]:9",
            "[::1]:9",
            id="ipv6-in-brackets",
        ),
        pytest.param(
            "https://[fe80::1]/v1",
            httpx.ConnectError("[Errno 113] No route to host"),
            "cannot connect to [fe80::1]:443 (ConnectError: [Errno 113] No route to host)",
            "[fe80::1]:443",
            id="ipv6-default-port",
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


def mapped(outer: type[httpx.HTTPError], cause: BaseException) -> httpx.HTTPError:
    """`outer` raised from `cause`, as httpx's transports (and ours) chain them."""
    try:
        raise outer(str(cause)) from cause
    except httpx.HTTPError as exc:
        return exc


@pytest.mark.anyio
async def test_a_connect_timeout_is_unreachable() -> None:
    """No TCP connection within the connect timeout: packets dropped, the host is not there."""
    exc = await failure("http://10.9.9.9:8000/v1", httpx.ConnectTimeout("timed out"))
    assert str(exc) == "no answer to connect within 5 s at 10.9.9.9:8000"  # httpx's default
    assert exc.status == "timeout"
    assert exc.unreachable == "10.9.9.9:8000"


@pytest.mark.anyio
async def test_a_read_timeout_is_not_unreachable() -> None:
    exc = await failure("http://127.0.0.1:9/v1", httpx.ReadTimeout("timed out"))
    assert exc.status == "timeout"
    assert exc.unreachable is None


CERT_FAILED = (
    "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate "
    "(_ssl.c:1006)"
)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "error",
    [
        pytest.param(
            mapped(httpx.ConnectError, ssl.SSLCertVerificationError(1, CERT_FAILED)),
            id="httpcore",
        ),
        pytest.param(httpx.ConnectError(CERT_FAILED), id="message-only"),
    ],
)
async def test_a_certificate_failure_says_tls_not_unreachable_host(error: Exception) -> None:
    exc = await failure("https://llm.test/v1", error)
    assert str(exc) == (
        "TLS handshake failed at llm.test:443 (certificate verify failed: self-signed "
        "certificate): check the certificate or SSL_CERT_FILE/ca bundle"
    )
    assert "refused" not in str(exc) and "not found" not in str(exc)
    assert exc.unreachable == "llm.test:443"  # retrying cannot help: the judge still stops
    assert exc.advice is not None
