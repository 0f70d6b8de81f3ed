"""PooledTransport against real loopback servers: the request it writes, the answers it reads,
its pool and keep-alive, and how its failures reach a judge's call (`post_json`).

Each server is an `asyncio.start_server` on 127.0.0.1 run by the test itself, with a handler of
(reader, writer) that writes raw bytes, so the wire is exactly what the test says. Time bounds
here only stop a broken transport from hanging the run; nothing asserts on elapsed time.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import os
import shutil
import socket
import ssl
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from meta_evaluator.llm._http import post_json
from meta_evaluator.llm.classify import CallFailed, EndpointRejected, MalformedResponse, classify
from meta_evaluator.llm.transport import PooledTransport, make_transport, proxied
from tests.conftest import unused_port

BOUND = 5.0
"""Seconds any one step of a test may take before the test fails instead of hanging."""

TIMEOUTS = {"connect": BOUND, "read": BOUND, "write": BOUND, "pool": BOUND}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the transport is built on asyncio's protocols


# ----- a scripted loopback server -------------------------------------------------------------

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@dataclass
class Server:
    """What a running `serve` saw: connections accepted, open now, and the most open at once."""

    port: int = 0
    connections: int = 0
    open: int = 0
    most_open: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set each time a connection opens or its handler returns (cleared by `until_open`)."""
    errors: list[BaseException] = field(default_factory=list)

    def url(self, path: str = "/", scheme: str = "http") -> str:
        return f"{scheme}://127.0.0.1:{self.port}{path}"

    async def until_open(self, count: int) -> None:
        """Wait until exactly `count` connections are open (their handlers still running)."""
        with anyio.fail_after(BOUND):
            while self.open != count:
                self.changed.clear()
                await self.changed.wait()


@contextlib.asynccontextmanager
async def serve(handler: Handler, *, tls: ssl.SSLContext | None = None) -> AsyncIterator[Server]:
    """A server on a free loopback port running `handler` for each connection, until the block
    ends; then the handlers still running are cancelled and their connections closed.

    A client going away (reset, EOF in the middle of a read) ends a handler quietly, as several
    tests do it on purpose; any other exception in a handler fails the test.
    """
    state = Server()
    tasks: set[asyncio.Task[Any]] = set()

    async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.add(task)
        state.connections += 1
        state.open += 1
        state.most_open = max(state.most_open, state.open)
        state.changed.set()
        try:
            await handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except Exception as exc:
            state.errors.append(exc)
        finally:
            state.open -= 1
            state.changed.set()
            writer.close()
            with contextlib.suppress(ConnectionError, ssl.SSLError, TimeoutError):
                await asyncio.wait_for(writer.wait_closed(), 1)
            tasks.discard(task)

    server = await asyncio.start_server(connected, "127.0.0.1", 0, ssl=tls)
    state.port = int(server.sockets[0].getsockname()[1])
    try:
        yield state
    finally:
        server.close()
        for task in list(tasks):
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()
    if state.errors:
        raise state.errors[0]


@dataclass(frozen=True)
class Received:
    """One request as the server read it off the wire."""

    line: bytes
    headers: list[tuple[bytes, bytes]]
    body: bytes

    def values(self, name: bytes) -> list[bytes]:
        return [v for n, v in self.headers if n.lower() == name.lower()]


async def read_request(reader: asyncio.StreamReader) -> Received | None:
    """The next request on the connection (framed by Content-Length), or None at a clean EOF."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial:
            raise
        return None
    line, *lines = head[:-4].split(b"\r\n")
    headers = []
    for raw in lines:
        name, colon, value = raw.partition(b":")
        assert colon, raw
        headers.append((name, value.strip()))
    lengths = [v for n, v in headers if n.lower() == b"content-length"]
    body = await reader.readexactly(int(lengths[0])) if lengths else b""
    return Received(line, headers, body)


def answer(body: bytes = b"ok", *, status: bytes = b"200 OK", headers: bytes = b"") -> bytes:
    """An HTTP/1.1 answer with `body` framed by Content-Length; `headers`: lines ending CRLF."""
    return b"HTTP/1.1 %s\r\nContent-Length: %d\r\n%s\r\n%s" % (status, len(body), headers, body)


OK = answer()


def replying(*replies: bytes, log: list[Received] | None = None) -> Handler:
    """A handler answering the requests of a connection with `replies` in turn (the last one
    again for any more), logging each request; it ends at the client's EOF."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        count = 0
        while (request := await read_request(reader)) is not None:
            if log is not None:
                log.append(request)
            writer.write(replies[min(count, len(replies) - 1)])
            await writer.drain()
            count += 1

    return handler


def per_connection(*handlers: Handler) -> Handler:
    """The first connection gets `handlers[0]`, the second `handlers[1]`, ...; later ones the
    last handler."""
    taken = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal taken
        mine = handlers[min(taken, len(handlers) - 1)]
        taken += 1
        await mine(reader, writer)

    return handler


async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Read whatever comes and never answer, until the client closes."""
    while await reader.read(65536):
        pass


async def dribble(writer: asyncio.StreamWriter, data: bytes, step: int | None) -> None:
    """Write `data` in pieces of `step` bytes (all at once for None), yielding between them so
    the client reads the pieces apart."""
    step = step or len(data)
    for start in range(0, len(data), step):
        writer.write(data[start : start + step])
        await writer.drain()
        await asyncio.sleep(0)


# ----- the client's side ----------------------------------------------------------------------


async def fetch(transport: PooledTransport, method: str, url: str, **kwargs: Any) -> httpx.Response:
    """`method url` straight through `transport`, the body read; bounded by BOUND seconds."""
    kwargs.setdefault("extensions", {"timeout": TIMEOUTS})
    with anyio.fail_after(BOUND):
        response = await transport.handle_async_request(httpx.Request(method, url, **kwargs))
        await response.aread()
    return response


async def get(transport: PooledTransport, url: str, **kwargs: Any) -> httpx.Response:
    return await fetch(transport, "GET", url, **kwargs)


async def post_failure(transport: PooledTransport, url: str) -> CallFailed:
    """The CallFailed a judge's `post_json` through `transport` raises for `url`."""
    http = httpx.AsyncClient(transport=transport)  # not closed: that is the test's `transport`
    with anyio.fail_after(BOUND + 1), pytest.raises(CallFailed) as caught:
        await post_json(http, url, headers={}, body={"q": 1}, timeout=BOUND, direct=transport)
    return caught.value


# ----- the answer read ------------------------------------------------------------------------

SPLITS = [
    pytest.param(None, id="whole"),
    pytest.param(7, id="in-pieces"),
    pytest.param(1, id="bytewise"),
]


@pytest.mark.anyio
@pytest.mark.parametrize("step", SPLITS)
async def test_a_content_length_body(step: int | None) -> None:
    wire = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello world"

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader) is not None:
            await dribble(writer, wire, step)

    async with serve(handler) as server, PooledTransport() as transport:
        first = await get(transport, server.url())
        second = await get(transport, server.url())
    for response in (first, second):
        assert response.status_code == 200
        assert response.content == b"hello world"
        assert response.headers["content-type"] == "text/plain"
        assert response.http_version == "HTTP/1.1"
    assert server.connections == 1  # the answer was framed right: the connection was reusable


@pytest.mark.anyio
async def test_a_large_body_in_many_reads() -> None:
    body = bytes(range(256)) * 4096  # 1 MiB

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await dribble(writer, answer(body), 100_000)
        await silent(reader, writer)

    async with serve(handler) as server, PooledTransport() as transport:
        response = await get(transport, server.url())
    assert response.content == body


CHUNKED = (
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Before: 1\r\n\r\n"
    b"5\r\nhello\r\n"
    b"1;name=value\r\n \r\n"  # a chunk extension
    b'A; a=1; b="quoted"\r\nworld, and\r\n'  # upper-case hex, several extensions
    b"0006\r\n more!\r\n"
    b"0\r\nX-Trailer: yes\r\nX-Other: too\r\n\r\n"  # trailers
)


@pytest.mark.anyio
@pytest.mark.parametrize("step", SPLITS)
async def test_a_chunked_body_with_extensions_and_trailers(step: int | None) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader) is not None:
            await dribble(writer, CHUNKED, step)

    async with serve(handler) as server, PooledTransport() as transport:
        first = await get(transport, server.url())
        second = await get(transport, server.url())
    assert first.content == second.content == b"hello world, and more!"
    assert first.headers["x-before"] == "1"
    assert server.connections == 1  # the final chunk and trailers end the answer: kept alive


@pytest.mark.anyio
async def test_a_chunked_body_without_trailers_keeps_the_connection() -> None:
    wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"
    async with serve(replying(wire, OK)) as server, PooledTransport() as transport:
        first = await get(transport, server.url())
        second = await get(transport, server.url())
    assert (first.content, second.content) == (b"ok", b"ok")
    assert server.connections == 1


@pytest.mark.anyio
@pytest.mark.parametrize("version", [b"HTTP/1.1", b"HTTP/1.0"])
async def test_a_body_without_length_is_read_to_the_close(version: bytes) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await dribble(writer, version + b" 200 OK\r\nX-A: b\r\n\r\nall of", None)
        await dribble(writer, b" this, until the end", 5)
        # the handler returns: the connection closes, which ends the body

    async with serve(handler) as server, PooledTransport() as transport:
        first = await get(transport, server.url())
        second = await get(transport, server.url())
    assert first.content == second.content == b"all of this, until the end"
    assert server.connections == 2  # a connection read to its end is not used again


@pytest.mark.anyio
@pytest.mark.parametrize(
    "head",
    [
        pytest.param(b"HTTP/1.1 204 No Content\r\n\r\n", id="204"),
        pytest.param(b"HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n", id="304"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", id="200-empty"),
    ],
)
async def test_answers_without_a_body(head: bytes) -> None:
    """No body to wait for (304's Content-Length is that of the unsent representation); the
    connection stays usable for the next answer."""
    async with serve(replying(head, OK)) as server, PooledTransport() as transport:
        with anyio.fail_after(BOUND):
            empty = await get(transport, server.url())
        after = await get(transport, server.url())
    assert empty.content == b""
    assert empty.status_code == int(head[9:12])
    assert after.content == b"ok"
    assert server.connections == 1


@pytest.mark.anyio
@pytest.mark.parametrize("step", SPLITS)
async def test_a_100_continue_before_the_answer_is_skipped(step: int | None) -> None:
    wire = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\nX-Interim: 1\r\n\r\n" + answer(
        b"done", status=b"201 Created", headers=b"X-Final: 1\r\n"
    )

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader) is not None:
            await dribble(writer, wire, step)

    async with serve(handler) as server, PooledTransport() as transport:
        response = await fetch(transport, "POST", server.url(), content=b"{}")
        again = await fetch(transport, "POST", server.url(), content=b"{}")
    assert response.status_code == again.status_code == 201
    assert response.content == b"done"
    assert response.headers["x-final"] == "1"
    assert "x-interim" not in response.headers
    assert server.connections == 1


@pytest.mark.anyio
async def test_headers_with_odd_spacing_and_repeats_keep_their_values() -> None:
    wire = (
        b"HTTP/1.1 200 OK\r\n"
        b"X-Tight:packed\r\n"
        b"X-Loose:    spaced   out   \r\n"
        b"X-Tab:\tvalue\t\r\n"
        b"X-Empty:\r\n"
        b"X-Url: http://host:8000/path?a=b\r\n"
        b"Set-Cookie: a=1\r\n"
        b"set-cookie: b=2\r\n"
        b"content-length: 2\r\n"
        b"\r\nok"
    )
    async with serve(replying(wire)) as server, PooledTransport() as transport:
        response = await get(transport, server.url())
    headers = response.headers
    assert headers["x-tight"] == "packed"
    assert headers["x-loose"] == "spaced   out"  # ends trimmed, the inside kept
    assert headers["x-tab"] == "value"
    assert headers["x-empty"] == ""
    assert headers["x-url"] == "http://host:8000/path?a=b"  # only the first colon splits
    assert headers.get_list("set-cookie") == ["a=1", "b=2"]
    assert (b"X-Tight", b"packed") in headers.raw  # names as sent
    assert response.content == b"ok"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status_line", "status", "reason"),
    [
        (b"HTTP/1.1 418 I'm a teapot", 418, "I'm a teapot"),
        (b"HTTP/1.1 503 Slow Down  Please", 503, "Slow Down  Please"),
        (b"HTTP/1.1 200 ", 200, ""),
        (b"HTTP/1.1 200", 200, ""),
    ],
)
async def test_the_reason_phrase_is_the_servers(
    status_line: bytes, status: int, reason: str
) -> None:
    wire = status_line + b"\r\nContent-Length: 0\r\n\r\n"
    async with serve(replying(wire)) as server, PooledTransport() as transport:
        response = await get(transport, server.url())
    assert (response.status_code, response.reason_phrase) == (status, reason)


@pytest.mark.anyio
async def test_a_gzip_body_is_decoded_by_an_async_client() -> None:
    packed = gzip.compress(b'{"answer": "rejection"}')
    wire = answer(packed, headers=b"Content-Encoding: gzip\r\nContent-Type: application/json\r\n")
    log: list[Received] = []
    async with (
        serve(replying(wire, log=log)) as server,
        httpx.AsyncClient(transport=PooledTransport(max_connections=2)) as http,
    ):
        with anyio.fail_after(BOUND):
            response = await http.post(server.url("/v1/x"), json={"q": "é"})
    assert response.json() == {"answer": "rejection"}
    assert log[0].body == b'{"q":"\xc3\xa9"}'
    assert log[0].values(b"content-type") == [b"application/json"]


# ----- the request written --------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_request_on_the_wire() -> None:
    log: list[Received] = []
    async with serve(replying(OK, log=log)) as server, PooledTransport() as transport:
        await fetch(
            transport,
            "POST",
            server.url("/v1/chat completions"),
            params={"x": "1", "y": "a b&c"},
            headers={"X-Custom": "Value", "Authorization": "Bearer k"},
            content=b'{"q":1}',
        )
    (sent,) = log
    assert sent.line == b"POST /v1/chat%20completions?x=1&y=a+b%26c HTTP/1.1"
    assert sent.values(b"host") == [b"127.0.0.1:%d" % server.port]
    assert sent.values(b"content-length") == [b"7"]
    assert sent.values(b"x-custom") == [b"Value"]
    assert sent.values(b"authorization") == [b"Bearer k"]
    assert sent.values(b"transfer-encoding") == []
    assert sent.body == b'{"q":1}'


@pytest.mark.anyio
async def test_a_request_without_a_body() -> None:
    log: list[Received] = []
    async with serve(replying(OK, log=log)) as server, PooledTransport() as transport:
        await get(transport, server.url("/models"))
        await fetch(transport, "POST", server.url("/files/1/cancel"))
    get_sent, post_sent = log
    assert get_sent.line == b"GET /models HTTP/1.1"
    assert get_sent.values(b"content-length") == []
    assert get_sent.body == b""
    assert post_sent.line == b"POST /files/1/cancel HTTP/1.1"
    assert post_sent.values(b"content-length") == [b"0"]  # some servers answer 411 without it


@pytest.mark.anyio
async def test_a_streamed_body_is_sent_with_its_length_not_chunked() -> None:
    async def parts() -> AsyncIterator[bytes]:
        for part in (b'{"messages": ', b"[1, 2, 3]", b"}"):
            yield part

    log: list[Received] = []
    async with serve(replying(OK, log=log)) as server, PooledTransport() as transport:
        request = httpx.Request("POST", server.url("/up"), content=parts())
        assert request.headers["transfer-encoding"] == "chunked"  # what httpx would send
        with anyio.fail_after(BOUND):
            response = await transport.handle_async_request(request)
            await response.aread()
    (sent,) = log
    assert sent.values(b"transfer-encoding") == []
    assert sent.values(b"content-length") == [b"23"]
    assert sent.body == b'{"messages": [1, 2, 3]}'
    assert response.content == b"ok"


@pytest.mark.anyio
async def test_an_async_client_posts_json_through_it() -> None:
    log: list[Received] = []
    reply = answer(b'{"ok": true}', headers=b"Content-Type: application/json\r\n")
    async with (
        serve(replying(reply, log=log)) as server,
        httpx.AsyncClient(transport=PooledTransport(max_connections=4)) as http,
    ):
        with anyio.fail_after(BOUND):
            responses = [await http.post(server.url("/v1/x"), json={"n": n}) for n in range(3)]
    assert [r.json() for r in responses] == [{"ok": True}] * 3
    assert [r.body for r in log] == [b'{"n":0}', b'{"n":1}', b'{"n":2}']
    assert server.connections == 1


# ----- keep-alive -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_two_requests_reuse_one_connection() -> None:
    async with serve(replying(answer(b"one"), answer(b"two"))) as server:
        async with PooledTransport() as transport:
            first = await get(transport, server.url())
            second = await get(transport, server.url())
            assert server.connections == 1
            assert server.open == 1  # kept open, idle
        await server.until_open(0)  # closed with the transport
    assert (first.content, second.content) == (b"one", b"two")


@contextlib.contextmanager
def descriptors_past(number: int) -> Iterator[None]:
    """Hold open descriptors until the next one opened is numbered above `number`."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = number + 64
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"the descriptor limit ({hard}) is below {needed}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    held: list[int] = []
    try:
        while not held or held[-1] <= number:
            held.append(os.open(os.devnull, os.O_RDONLY))
        yield
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.anyio
async def test_a_connection_numbered_past_1024_is_reused() -> None:
    """A thousand connections open: a kept-alive one is checked for reuse without `select`."""
    async with serve(replying(answer(b"one"), answer(b"two"))) as server:
        with descriptors_past(1100):
            async with PooledTransport() as transport:
                first = await get(transport, server.url())
                second = await get(transport, server.url())
    assert (first.content, second.content) == (b"one", b"two")
    assert server.connections == 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("reply", "connections"),
    [
        pytest.param(answer(headers=b"Connection: close\r\n"), 2, id="1.1-close"),
        pytest.param(answer(headers=b"Connection: Keep-Alive, Close\r\n"), 2, id="1.1-tokens"),
        pytest.param(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 2, id="1.0"),
        pytest.param(
            b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok",
            1,
            id="1.0-keep-alive",
        ),
        pytest.param(answer(headers=b"Connection: keep-alive\r\n"), 1, id="1.1-keep-alive"),
    ],
)
async def test_when_the_answer_lets_the_connection_be_used_again(
    reply: bytes, connections: int
) -> None:
    async with serve(replying(reply)) as server, PooledTransport() as transport:
        first = await get(transport, server.url())
        if connections == 2:
            await server.until_open(0)  # we closed the first connection (the server saw EOF)
        second = await get(transport, server.url())
    assert first.content == second.content == b"ok"
    assert server.connections == connections


@pytest.mark.anyio
async def test_an_http_1_0_answer_is_reported_as_such() -> None:
    wire = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"
    async with serve(replying(wire)) as server, PooledTransport() as transport:
        response = await get(transport, server.url())
    assert response.http_version == "HTTP/1.0"


# ----- the pool -------------------------------------------------------------------------------


def slow(seconds: float) -> Handler:
    """Answer each request `seconds` after it came, with its path as the body."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (request := await read_request(reader)) is not None:
            await asyncio.sleep(seconds)
            writer.write(answer(request.line.split(b" ")[1]))
            await writer.drain()

    return handler


@pytest.mark.anyio
@pytest.mark.parametrize("via", ["transport", "client"])
async def test_the_pool_holds_at_most_max_connections(via: str) -> None:
    bodies: dict[int, bytes] = {}
    async with (
        serve(slow(0.03)) as server,
        PooledTransport(max_connections=3) as transport,
        httpx.AsyncClient(transport=transport) as http,
    ):

        async def one(n: int) -> None:
            if via == "transport":
                bodies[n] = (await get(transport, server.url(f"/{n}"))).content
            else:
                with anyio.fail_after(BOUND):
                    bodies[n] = (await http.get(server.url(f"/{n}"))).content

        async with anyio.create_task_group() as group:
            for n in range(10):
                group.start_soon(one, n)
    assert bodies == {n: b"/%d" % n for n in range(10)}
    assert server.most_open == 3
    assert server.connections == 3  # the three were reused, none opened beyond them


@pytest.mark.anyio
async def test_make_transport_sizes_the_pool() -> None:
    transport = make_transport(2)
    assert isinstance(transport, PooledTransport)
    async with serve(slow(0.02)) as server, transport, anyio.create_task_group() as group:
        for n in range(5):
            group.start_soon(get, transport, server.url(f"/{n}"))
    assert server.most_open == 2


def test_a_pool_needs_room_for_one() -> None:
    with pytest.raises(ValueError, match="max_connections"):
        PooledTransport(max_connections=0)


def held(release: asyncio.Event) -> Handler:
    """Answer each request once `release` is set."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader) is not None:
            await release.wait()
            writer.write(OK)
            await writer.drain()

    return handler


@pytest.mark.anyio
async def test_a_pool_timeout_when_every_connection_is_busy() -> None:
    release = asyncio.Event()
    async with serve(held(release)) as server, PooledTransport(max_connections=1) as transport:
        async with anyio.create_task_group() as group:
            first: list[httpx.Response] = []

            async def busy() -> None:
                first.append(await get(transport, server.url("/busy")))

            group.start_soon(busy)
            await server.until_open(1)
            with pytest.raises(httpx.PoolTimeout):
                await get(
                    transport,
                    server.url("/waits"),
                    extensions={"timeout": {**TIMEOUTS, "pool": 0.05}},
                )
            release.set()
        after = await get(transport, server.url("/after"))
    assert first[0].content == after.content == b"ok"
    assert server.connections == 1


@pytest.mark.anyio
async def test_a_full_pool_closes_an_idle_connection_to_another_origin() -> None:
    async with (
        serve(replying(answer(b"a"))) as a,
        serve(replying(answer(b"b"))) as b,
        PooledTransport(max_connections=1) as transport,
    ):
        assert (await get(transport, a.url())).content == b"a"
        assert (await get(transport, b.url())).content == b"b"
        await a.until_open(0)  # a's idle connection made room for b's
        assert (await get(transport, a.url())).content == b"a"
        await b.until_open(0)
    assert (a.connections, b.connections) == (2, 1)


# ----- connections closed by the server -------------------------------------------------------


async def answer_once_then_close(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Answer one request (keep-alive by its headers), then close the connection while idle."""
    await read_request(reader)
    writer.write(answer(b"first"))
    await writer.drain()


async def answer_once_then_drop_the_next(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Answer one request; read the next and close without a byte of answer."""
    await read_request(reader)
    writer.write(answer(b"first"))
    await writer.drain()
    await read_request(reader)


async def drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Read the request and close without answering."""
    await read_request(reader)


async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Close at once, the request unread."""


@pytest.mark.anyio
async def test_a_kept_alive_connection_the_server_closed_while_idle_is_replaced() -> None:
    log: list[Received] = []
    handler = per_connection(answer_once_then_close, replying(answer(b"second"), log=log))
    async with serve(handler) as server, PooledTransport(max_connections=1) as transport:
        first = await get(transport, server.url())
        await server.until_open(0)
        second = await get(transport, server.url("/again"))
    assert (first.content, second.content) == (b"first", b"second")
    assert server.connections == 2
    assert [r.line for r in log] == [b"GET /again HTTP/1.1"]


@pytest.mark.anyio
async def test_a_request_on_a_reused_connection_closed_unanswered_is_not_sent_again() -> None:
    """The server read the request on a kept-alive connection and closed it unanswered: it may
    have acted on it, so the transport does not send it again (a POST would be paid twice); the
    caller's retry policy decides."""
    log: list[Received] = []
    handler = per_connection(answer_once_then_drop_the_next, replying(answer(b"second"), log=log))
    async with serve(handler) as server, PooledTransport(max_connections=1) as transport:
        first = await get(transport, server.url())
        with pytest.raises(httpx.RemoteProtocolError):
            await fetch(transport, "POST", server.url("/again"), content=b"body")
        assert first.content == b"first" and server.connections == 1 and not log
        second = await fetch(transport, "POST", server.url("/again"), content=b"body")
    assert second.content == b"second" and server.connections == 2  # the slot was given back


@pytest.mark.anyio
@pytest.mark.parametrize("handler", [drop, hang_up], ids=["request-read", "request-unread"])
async def test_a_fresh_connection_closed_unanswered_is_a_protocol_error(handler: Handler) -> None:
    async with serve(handler) as server, PooledTransport(max_connections=1) as transport:
        with anyio.fail_after(BOUND), pytest.raises(httpx.RemoteProtocolError):
            await get(transport, server.url())
        assert server.connections == 1  # not sent again: a fresh connection was not stale
        with pytest.raises(httpx.RemoteProtocolError):
            await get(transport, server.url())  # the slot was given back
    assert server.connections == 2


@pytest.mark.anyio
async def test_a_request_is_sent_again_only_when_its_connection_was_closed_before() -> None:
    """A kept-alive connection found closed before the request is written is replaced at once;
    one closed after the request was written is an error, sent nowhere else."""
    handler = per_connection(answer_once_then_close, answer_once_then_drop_the_next, drop)
    async with serve(handler) as server, PooledTransport(max_connections=1) as transport:
        await get(transport, server.url())
        await server.until_open(0)
        assert (await get(transport, server.url())).content == b"first"  # on a new connection
        assert server.connections == 2
        with pytest.raises(httpx.RemoteProtocolError):
            await get(transport, server.url())
    assert server.connections == 2


@pytest.mark.anyio
async def test_a_fresh_connection_closed_unanswered_via_post_json() -> None:
    async with serve(drop) as server, PooledTransport(max_connections=1) as transport:
        exc = await post_failure(transport, server.url("/v1/chat/completions"))
    assert exc.status == "connection_error"
    assert "RemoteProtocolError" in str(exc)
    assert exc.unreachable is None  # something listens there
    assert exc.retryable and classify(exc).retry


CUT_SHORT = [
    pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", id="length-body"),
    pytest.param(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\nab",
        id="chunked-body",
    ),
    pytest.param(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n", id="chunked-no-end"
    ),
    pytest.param(b"HTTP/1.1 200 OK\r\nContent-Len", id="head"),
    pytest.param(b"HTTP/1.1 100 Continue\r\n\r\n", id="only-interim"),
]


def cut_short(wire: bytes) -> Handler:
    """Read the request, write `wire` (an answer's start) and close."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(wire)
        await writer.drain()

    return handler


@pytest.mark.anyio
@pytest.mark.parametrize("wire", CUT_SHORT)
async def test_a_connection_closed_mid_answer_is_a_protocol_error(wire: bytes) -> None:
    handler = per_connection(cut_short(wire), replying(OK))
    async with serve(handler) as server, PooledTransport(max_connections=1) as transport:
        with pytest.raises(httpx.RemoteProtocolError):
            await get(transport, server.url())
        assert (await get(transport, server.url())).content == b"ok"
    assert server.connections == 2


@pytest.mark.anyio
@pytest.mark.parametrize("wire", CUT_SHORT[:2])
async def test_a_connection_closed_mid_answer_via_post_json(wire: bytes) -> None:
    async with serve(cut_short(wire)) as server, PooledTransport() as transport:
        exc = await post_failure(transport, server.url("/v1/chat/completions"))
    assert exc.status == "connection_error"
    assert str(exc).startswith("connection failed (RemoteProtocolError: ")
    assert exc.unreachable is None
    assert exc.retryable and classify(exc).retry


@pytest.mark.anyio
async def test_bytes_on_an_idle_connection_make_it_unusable() -> None:
    """A server writing when nothing was asked: that connection is closed, not reused."""

    async def chatty(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(OK)
        await writer.drain()
        await asyncio.sleep(0.02)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale")
        await writer.drain()
        await silent(reader, writer)

    async with (
        serve(per_connection(chatty, replying(answer(b"fresh")))) as server,
        PooledTransport() as transport,
    ):
        assert (await get(transport, server.url())).content == b"ok"
        await server.until_open(0)  # the unasked answer made us close it
        assert (await get(transport, server.url())).content == b"fresh"
    assert server.connections == 2


# ----- malformed answers ----------------------------------------------------------------------

MALFORMED = [
    pytest.param(b"garbage\r\n\r\n", id="not-http"),
    pytest.param(b"HTTP/2 200\r\n\r\n", id="http-2"),
    pytest.param(b"HTTP/1.1 OK\r\n\r\n", id="no-status"),
    pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\nok", id="length-not-a-number"),
    pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nok", id="length-negative"),
    pytest.param(
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", id="two-lengths"
    ),
    pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokAND MORE", id="too-many-bytes"),
    pytest.param(b"HTTP/1.1 200 OK\r\nNo colon here\r\nContent-Length: 0\r\n\r\n", id="no-colon"),
    pytest.param(b"HTTP/1.1 200 OK\r\nX-Name : v\r\nContent-Length: 0\r\n\r\n", id="space-name"),
    pytest.param(b"HTTP/1.1 200 OK\r\n: v\r\nContent-Length: 0\r\n\r\n", id="empty-name"),
    pytest.param(
        b"HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\nContent-Length: 0\r\n\r\n", id="obs-fold"
    ),
    pytest.param(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n",
        id="chunk-size-not-hex",
    ),
    pytest.param(
        b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * (70 * 1024), id="head-too-long-without-end"
    ),
]


def malformed_first(wire: bytes) -> Handler:
    """The first connection gets `wire` to its request (and stays open until the client closes
    it); later ones a sound answer."""

    async def bad(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(wire)
        await writer.drain()
        await silent(reader, writer)

    return per_connection(bad, replying(OK))


@pytest.mark.anyio
@pytest.mark.parametrize("wire", MALFORMED)
async def test_a_malformed_answer_is_a_protocol_error(wire: bytes) -> None:
    async with (
        serve(malformed_first(wire)) as server,
        PooledTransport(max_connections=1) as transport,
    ):
        with pytest.raises(httpx.RemoteProtocolError):
            await get(transport, server.url())
        await server.until_open(0)  # the transport closed that connection itself
        assert (await get(transport, server.url())).content == b"ok"  # and freed its slot
    assert server.connections == 2


@pytest.mark.anyio
async def test_a_malformed_answer_via_post_json() -> None:
    async with serve(malformed_first(b"garbage\r\n\r\n")) as server, PooledTransport() as transport:
        exc = await post_failure(transport, server.url("/v1/chat/completions"))
    assert exc.status == "connection_error"
    assert str(exc).startswith("connection failed (RemoteProtocolError: ")
    assert "garbage" in str(exc)
    assert exc.retryable and classify(exc).retry


@pytest.mark.anyio
async def test_chunk_data_longer_than_its_size_is_a_protocol_error() -> None:
    wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n"
    async with serve(malformed_first(wire)) as server, PooledTransport() as transport:
        with pytest.raises(httpx.RemoteProtocolError):
            await get(transport, server.url())


@pytest.mark.anyio
async def test_an_answer_to_head_has_no_body() -> None:
    wire = b"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n"
    async with serve(replying(wire, OK)) as server, PooledTransport() as transport:
        response = await fetch(
            transport, "HEAD", server.url(), extensions={"timeout": {**TIMEOUTS, "read": 0.2}}
        )
        assert response.headers["content-length"] == "1234"
        assert response.content == b""


# ----- answers through post_json --------------------------------------------------------------


@pytest.mark.anyio
async def test_post_json_reads_the_object_answered() -> None:
    log: list[Received] = []
    reply = answer(b'{"choices": []}', headers=b"Content-Type: application/json\r\n")
    async with (
        serve(replying(reply, log=log)) as server,
        PooledTransport() as transport,
        httpx.AsyncClient(transport=transport) as http,
    ):
        with anyio.fail_after(BOUND):
            found, _, _ = await post_json(
                http,
                server.url("/v1/chat/completions?api-version=1"),
                headers={"Authorization": "Bearer k"},
                body={"model": "m"},
                timeout=BOUND,
                direct=transport,
            )
    assert found == {"choices": []}
    (sent,) = log
    assert sent.line == b"POST /v1/chat/completions?api-version=1 HTTP/1.1"
    assert sent.values(b"host") == [b"127.0.0.1:%d" % server.port]
    assert sent.values(b"authorization") == [b"Bearer k"]
    assert sent.values(b"content-type") == [b"application/json"]
    assert sent.values(b"content-length") == [b"%d" % len(sent.body)]
    assert sent.body == b'{"model":"m"}'


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("reply", "expected", "status"),
    [
        pytest.param(answer(b"not json"), MalformedResponse, "malformed_response", id="200-text"),
        pytest.param(answer(b"[1]"), MalformedResponse, "malformed_response", id="200-list"),
        pytest.param(
            answer(b"overloaded", status=b"503 Service Unavailable"),
            CallFailed,
            "http_error",
            id="503",
        ),
        pytest.param(
            answer(b"slow down", status=b"429 Too Many Requests", headers=b"Retry-After: 7\r\n"),
            CallFailed,
            "rate_limited",
            id="429",
        ),
    ],
)
async def test_post_json_maps_the_answer(
    reply: bytes, expected: type[CallFailed], status: str
) -> None:
    async with serve(replying(reply)) as server, PooledTransport() as transport:
        exc = await post_failure(transport, server.url("/v1/chat/completions"))
    assert type(exc) is expected
    assert exc.status == status
    if status == "rate_limited":
        assert exc.retry_after == 7


@pytest.mark.anyio
async def test_post_json_a_rejected_request() -> None:
    reply = answer(b'{"error": "bad key"}', status=b"401 Unauthorized")
    async with (
        serve(replying(reply)) as server,
        PooledTransport() as transport,
        httpx.AsyncClient(transport=transport) as http,
    ):
        with anyio.fail_after(BOUND), pytest.raises(EndpointRejected) as caught:
            await post_json(
                http, server.url("/v1/x"), headers={}, body={}, timeout=BOUND, direct=transport
            )
    assert caught.value.http_status == 401
    assert "bad key" in str(caught.value)


# ----- timeouts and cancellation --------------------------------------------------------------


@pytest.mark.anyio
async def test_a_read_timeout_and_the_connection_is_not_reused() -> None:
    async with (
        serve(per_connection(silent, replying(OK))) as server,
        PooledTransport(max_connections=1) as transport,
    ):
        with pytest.raises(httpx.ReadTimeout):
            await get(transport, server.url(), extensions={"timeout": {**TIMEOUTS, "read": 0.1}})
        await server.until_open(0)  # the transport closed it
        assert (await get(transport, server.url())).content == b"ok"
    assert server.connections == 2


@pytest.mark.anyio
async def test_a_read_timeout_via_post_json() -> None:
    async with (
        serve(per_connection(silent, replying(answer(b"{}")))) as server,
        PooledTransport(max_connections=1) as transport,
        httpx.AsyncClient(transport=transport, timeout=httpx.Timeout(BOUND, read=0.1)) as http,
    ):
        with anyio.fail_after(BOUND), pytest.raises(CallFailed) as caught:
            await post_json(http, server.url(), headers={}, body={}, timeout=0.2, direct=transport)
        await server.until_open(0)
        with anyio.fail_after(BOUND):
            found, _, _ = await post_json(
                http, server.url(), headers={}, body={}, timeout=BOUND, direct=transport
            )
    exc = caught.value
    assert exc.status == "timeout"
    assert exc.unreachable is None
    assert exc.retryable and classify(exc).retry
    assert found == {}
    assert server.connections == 2


@pytest.mark.anyio
async def test_cancelling_a_request_in_flight_frees_its_slot() -> None:
    async with (
        serve(per_connection(silent, replying(OK))) as server,
        PooledTransport(max_connections=1) as transport,
    ):
        with pytest.raises(TimeoutError), anyio.fail_after(0.1):
            await transport.handle_async_request(httpx.Request("GET", server.url()))
        await server.until_open(0)  # the cancelled exchange's connection was closed
        assert (await get(transport, server.url())).content == b"ok"
    assert server.connections == 2


@pytest.mark.anyio
async def test_cancelling_a_request_waiting_for_a_slot_leaves_the_pool_sound() -> None:
    release = asyncio.Event()
    async with serve(held(release)) as server, PooledTransport(max_connections=1) as transport:
        async with anyio.create_task_group() as group:
            group.start_soon(get, transport, server.url("/first"))
            await server.until_open(1)
            with anyio.move_on_after(0.05) as scope:
                await get(transport, server.url("/cancelled"))
            assert scope.cancelled_caught
            release.set()
        assert (await get(transport, server.url("/after"))).content == b"ok"
    assert server.connections == 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    "pool",
    [
        pytest.param(None, id="no-pool-timeout"),
        pytest.param(BOUND, id="pool-timeout"),
    ],
)
async def test_a_waiter_cancelled_as_it_is_woken_passes_the_slot_on(pool: float | None) -> None:
    """Room for one, three requests: the first ends, which wakes the second, and the second is
    cancelled before it runs again. The third must still get the connection."""
    release = asyncio.Event()
    timeouts = {**TIMEOUTS, "pool": pool}
    async with serve(held(release)) as server, PooledTransport(max_connections=1) as transport:

        async def request(path: str) -> httpx.Response:
            return await transport.handle_async_request(
                httpx.Request("GET", server.url(path), extensions={"timeout": timeouts})
            )

        async def first_then_cancel_second() -> httpx.Response:
            response = await request("/1")  # gives the connection back: the second is woken
            second.cancel()  # in the same step, before the second runs
            return response

        first = asyncio.create_task(first_then_cancel_second())
        await server.until_open(1)
        second = asyncio.create_task(request("/2"))
        await asyncio.sleep(0.01)  # waiting for the slot
        third = asyncio.create_task(request("/3"))
        await asyncio.sleep(0.01)  # waiting behind the second
        release.set()
        try:
            with anyio.fail_after(1):
                done = await asyncio.shield(third)
        finally:
            for task in (first, second, third):
                task.cancel()
            await asyncio.gather(first, second, third, return_exceptions=True)
    assert (await done.aread()) == b"ok"


@pytest.mark.anyio
async def test_a_whole_call_timeout_via_post_json_closes_the_connection() -> None:
    """post_json's own bound (no read timeout set) cancels the exchange: a timeout, and the
    connection is not used again."""
    async with (
        serve(per_connection(silent, replying(answer(b"{}")))) as server,
        PooledTransport(max_connections=1) as transport,
        httpx.AsyncClient(transport=transport, timeout=None) as http,
    ):
        with anyio.fail_after(BOUND), pytest.raises(CallFailed) as caught:
            await post_json(http, server.url(), headers={}, body={}, timeout=0.1, direct=transport)
        await server.until_open(0)
        with anyio.fail_after(BOUND):
            found, _, _ = await post_json(
                http, server.url(), headers={}, body={}, timeout=BOUND, direct=transport
            )
    assert caught.value.status == "timeout"
    assert found == {}
    assert server.connections == 2


# ----- connections that cannot be opened ------------------------------------------------------


@pytest.mark.anyio
async def test_a_refused_connection() -> None:
    port = unused_port()
    async with PooledTransport(max_connections=1) as transport:
        with pytest.raises(httpx.ConnectError):
            await get(transport, f"http://127.0.0.1:{port}/")
        with pytest.raises(httpx.ConnectError):
            await get(transport, f"http://127.0.0.1:{port}/")  # the slot was given back
        exc = await post_failure(transport, f"http://127.0.0.1:{port}/v1/chat/completions")
    assert str(exc) == f"connection refused at 127.0.0.1:{port}"
    assert exc.status == "connection_error"
    assert exc.unreachable == f"127.0.0.1:{port}"


@pytest.mark.anyio
async def test_a_host_refusing_on_each_of_its_addresses(monkeypatch: pytest.MonkeyPatch) -> None:
    port = unused_port()
    loop = asyncio.get_running_loop()

    async def two_addresses(host: str, port: int, **kwargs: Any) -> list[Any]:
        assert host == "judge.test"
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.2", port)),
        ]

    monkeypatch.setattr(loop, "getaddrinfo", two_addresses)
    async with PooledTransport() as transport:
        exc = await post_failure(transport, f"http://judge.test:{port}/v1/chat/completions")
    assert str(exc) == f"connection refused at judge.test:{port}"


@pytest.mark.anyio
async def test_an_unsupported_scheme() -> None:
    async with PooledTransport() as transport:
        for url in ("ftp://127.0.0.1/file", "ws://127.0.0.1/socket"):
            with pytest.raises(httpx.UnsupportedProtocol):
                await get(transport, url)


# ----- TLS ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        return context

    def trusting_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.cert))


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    """A self-signed certificate for 127.0.0.1, made with openssl."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a self-signed certificate (cryptography is not)")
    folder = tmp_path_factory.mktemp("tls")
    made = Certificate(folder / "cert.pem", folder / "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1",
         "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,digitalSignature,keyCertSign",
         "-keyout", str(made.key), "-out", str(made.cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return made


@pytest.mark.anyio
async def test_https_to_a_plain_http_server_is_a_tls_failure_with_advice() -> None:
    async def plain(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1024)  # a TLS ClientHello, not a request
        writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        await silent(reader, writer)

    async with serve(plain) as server, PooledTransport() as transport:
        with pytest.raises(httpx.ConnectError):
            await get(transport, server.url(scheme="https"))
        exc = await post_failure(transport, server.url("/v1/x", scheme="https"))
    address = f"127.0.0.1:{server.port}"
    assert str(exc).startswith(f"TLS handshake failed at {address} (")
    assert exc.advice is not None and "use http://" in exc.advice
    assert exc.unreachable == address
    assert exc.status == "connection_error"


@pytest.mark.anyio
async def test_a_self_signed_certificate_fails_verification(certificate: Certificate) -> None:
    tls = certificate.server_context()
    async with serve(replying(OK), tls=tls) as server, PooledTransport() as transport:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await get(transport, server.url(scheme="https"))
        exc = await post_failure(transport, server.url("/v1/x", scheme="https"))
    address = f"127.0.0.1:{server.port}"
    assert str(exc).startswith(f"TLS handshake failed at {address} (certificate verify failed: ")
    assert exc.advice is not None and "SSL_CERT_FILE" in exc.advice
    assert exc.unreachable == address
    assert server.connections == 0  # no handshake completed


@pytest.mark.anyio
async def test_a_context_trusting_the_certificate_connects(certificate: Certificate) -> None:
    log: list[Received] = []
    tls = certificate.server_context()
    async with (
        serve(replying(answer(b"secret"), log=log), tls=tls) as server,
        PooledTransport(ssl_context=certificate.trusting_context()) as transport,
    ):
        first = await get(transport, server.url("/a", scheme="https"))
        second = await fetch(transport, "POST", server.url("/b", scheme="https"), content=b"x")
    assert first.content == second.content == b"secret"
    assert [r.line for r in log] == [b"GET /a HTTP/1.1", b"POST /b HTTP/1.1"]
    assert log[0].values(b"host") == [b"127.0.0.1:%d" % server.port]
    assert server.connections == 1  # kept alive over TLS too


# ----- closing --------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_aclose_closes_idle_connections() -> None:
    async with serve(replying(OK)) as server:
        transport = PooledTransport()
        await get(transport, server.url("/a"))
        await get(transport, server.url("/b"))
        assert server.open == 1
        await transport.aclose()
        await server.until_open(0)  # the server read EOF
        with pytest.raises(RuntimeError, match="closed"):
            await get(transport, server.url("/c"))
    assert server.connections == 1


@pytest.mark.anyio
async def test_aclose_during_a_request_closes_its_connection_after() -> None:
    release = asyncio.Event()
    async with serve(held(release)) as server:
        transport = PooledTransport()
        async with anyio.create_task_group() as group:
            responses: list[httpx.Response] = []

            async def one() -> None:
                responses.append(await get(transport, server.url()))

            group.start_soon(one)
            await server.until_open(1)
            await transport.aclose()
            release.set()
        await server.until_open(0)
    assert responses[0].content == b"ok"


# ----- proxied --------------------------------------------------------------------------------


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """An environment without proxy variables (any case); tests add theirs."""
    for name in list(os.environ):
        if name.lower().endswith("_proxy") or name == "REQUEST_METHOD":
            monkeypatch.delenv(name)
    yield monkeypatch


@pytest.mark.parametrize(
    ("env", "http", "https"),
    [
        pytest.param({}, False, False, id="none"),
        pytest.param({"HTTP_PROXY": "http://proxy:3128"}, True, False, id="HTTP_PROXY"),
        pytest.param({"http_proxy": "http://proxy:3128"}, True, False, id="http_proxy"),
        pytest.param({"HTTPS_PROXY": "http://proxy:3128"}, False, True, id="HTTPS_PROXY"),
        pytest.param({"https_proxy": "http://proxy:3128"}, False, True, id="https_proxy"),
        pytest.param({"ALL_PROXY": "socks5://proxy:1080"}, True, True, id="ALL_PROXY"),
        pytest.param({"all_proxy": "socks5://proxy:1080"}, True, True, id="all_proxy"),
        pytest.param({"NO_PROXY": "*"}, False, False, id="NO_PROXY-alone"),
        pytest.param(  # erring towards httpx's path: NO_PROXY is not consulted
            {"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "llm.test"}, False, True, id="NO_PROXY"
        ),
        pytest.param({"FTP_PROXY": "http://proxy:3128"}, False, False, id="other-scheme"),
    ],
)
def test_proxied(
    no_proxy_env: pytest.MonkeyPatch, env: dict[str, str], http: bool, https: bool
) -> None:
    for name, value in env.items():
        no_proxy_env.setenv(name, value)
    assert proxied("http://llm.test:8000/v1") is http
    assert proxied("https://llm.test/v1") is https
