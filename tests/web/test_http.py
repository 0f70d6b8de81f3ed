"""The request plumbing both pages share (web/http.py): one answer to ASGI events, one way of
writing a host into an address."""

from __future__ import annotations

from typing import Any

import pytest

from meta_evaluator.web import announced_address, http_request, url_host


class Recorder:
    """An ASGI `receive`/`send` pair: hands out `events` in turn and keeps what is sent."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = list(events)
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        return self.events.pop(0)

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)


@pytest.mark.anyio
async def test_a_lifespan_is_acknowledged_and_is_no_request() -> None:
    asgi = Recorder([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
    assert await http_request({"type": "lifespan"}, asgi.receive, asgi.send) is None
    assert [m["type"] for m in asgi.sent] == [
        "lifespan.startup.complete",
        "lifespan.shutdown.complete",
    ]
    assert asgi.events == []


@pytest.mark.anyio
async def test_an_http_scope_is_read_into_a_request_and_nothing_is_sent() -> None:
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/rows/a/b",
        "raw_path": b"/rows/a%2Fb?x=1",
        "query_string": b"x=1&x=2",
        "headers": [(b"Host", b"127.0.0.1:8000")],
    }
    asgi = Recorder([])
    request = await http_request(scope, asgi.receive, asgi.send)
    assert request is not None
    assert (request.method, request.segments) == ("GET", ("rows", "a/b"))
    assert request.query == {"x": ["1", "2"]}
    assert request.headers == {"host": "127.0.0.1:8000"}
    assert asgi.sent == []


@pytest.mark.anyio
async def test_other_events_are_ignored() -> None:
    asgi = Recorder([])
    assert await http_request({"type": "websocket"}, asgi.receive, asgi.send) is None
    assert asgi.sent == []


@pytest.mark.parametrize(
    ("host", "shown"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("localhost", "localhost"),
        ("::1", "[::1]"),
        ("fe80::1", "[fe80::1]"),
    ],
)
def test_an_ipv6_host_is_bracketed_in_an_address(host: str, shown: str) -> None:
    assert url_host(host) == shown
    assert announced_address(host, 8000, None) == f"http://{shown}:8000/"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
