"""The HTTP transport every judge call goes through: HTTP/1.1 keep-alive over asyncio.

A custom transport is httpx's extension point: clients keep httpx's API (`httpx.AsyncClient`,
`httpx.Request`, `httpx.Response`, respx in tests), and only the wire work is ours. Ours does the
one thing a judge needs, many small JSON requests over a few hundred kept-alive connections,
with no per-request machinery: one write per request, one parse of the head, the body collected
in place. Measured by benchmarks/transport_choice.py (2,000 POSTs, 200 ms latency, 64 and 256
in flight): httpx over aiohttp's pool cost 0.40-0.44 ms of client CPU per call, aiohttp alone
0.16-0.20, `post` 0.07-0.11 and httpx over this transport 0.24-0.27.

Not supported, as judges do not need them: HTTP/2, proxies (`make_transport` gives None for a
URL the environment proxies, and httpx's own transport carries those calls), request bodies
streamed without a length (they are read whole first), `Expect: 100-continue`.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import re
import select
import ssl
import sys
import urllib.request
from collections import deque
from collections.abc import Iterable, Mapping
from typing import NamedTuple

import httpx

__all__ = ["Answer", "PooledTransport", "connections_that_fit", "make_transport", "proxied"]

_HEX = re.compile(rb"[0-9A-Fa-f]+")

_MAX_HEAD = 64 * 1024
"""Most bytes of a response's status line and headers; more is a protocol error."""


def make_transport(size: int, *urls: str) -> PooledTransport | None:
    """The transport calls to `urls` go through, holding at most `size` connections.

    None when the environment names a proxy for one of them (`proxied`): the caller then gives
    `httpx.AsyncClient` no transport, so that httpx's own one carries the calls through the
    proxy (httpx honours proxy variables only then), sized by the client's `limits=`.
    """
    if any(proxied(url) for url in urls):
        return None
    return PooledTransport(max_connections=size)


def connections_that_fit(wanted: int, *, spare: int = 64) -> int:
    """How many of `wanted` connections this process can hold open, its file limit raised first.

    Each connection is a file descriptor, and a thousand in flight pass the soft limit many
    systems set (`ulimit -n`: 1,024), where the run's next file or socket fails (EMFILE). The
    soft limit is raised as far as needed, up to the hard one; what it then leaves, minus the
    descriptors open now and `spare` for the files a run writes, is how many fit (at least 1).
    """
    try:
        import resource
    except ImportError:  # Windows: sockets have no such limit
        return wanted
    infinity = resource.RLIM_INFINITY
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    open_now = _open_descriptors()
    needed = open_now + spare + wanted
    if soft != infinity and soft < needed:
        raised = needed if hard == infinity else min(hard, needed)
        with contextlib.suppress(ValueError, OSError):  # macOS caps it below an infinite hard
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
    if soft == infinity:
        return wanted
    return max(1, min(wanted, soft - open_now - spare))


def _open_descriptors() -> int:
    """The file descriptors this process has open now (Linux and macOS; else a guess of 16)."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        with contextlib.suppress(OSError):
            return len(os.listdir(folder))
    return 16


def proxied(url: str) -> bool:
    """Whether a proxy variable (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) applies to `url`'s scheme.

    httpx sends such calls through the proxy (unless NO_PROXY names the host); ours does not
    speak to proxies, so they keep httpx's transport. Erring this way (NO_PROXY is not read)
    costs speed, never a call that bypasses a proxy.
    """
    proxies = urllib.request.getproxies_environment()
    return bool(proxies.get(httpx.URL(url).scheme) or proxies.get("all"))


class PooledTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 with keep-alive: at most `max_connections` open, idle ones reused (last in first).

    TLS is verified with httpx's default context (certifi, or SSL_CERT_FILE / SSL_CERT_DIR).
    """

    def __init__(
        self, *, max_connections: int = 100, ssl_context: ssl.SSLContext | None = None
    ) -> None:
        if max_connections < 1:
            raise ValueError(f"max_connections must be >= 1, got {max_connections}")
        self._max = max_connections
        self._ssl = ssl_context
        self._idle: dict[tuple[bytes, bytes, int], list[_Connection]] = {}
        self._open = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._closed = False

    def _ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context()
        return self._ssl

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send `request` and read the whole answer; httpx's exceptions for every failure."""
        url = request.url
        timeouts = request.extensions.get("timeout", {})
        try:
            body = request.content
        except httpx.RequestNotRead:
            body = await request.aread()
        answer = await self._round_trip(
            url,
            _request_head(request, len(body)) + body,
            connect=timeouts.get("connect"),
            pool=timeouts.get("pool"),
            read=timeouts.get("read"),
            has_body=request.method != "HEAD",
        )
        return httpx.Response(
            answer.status,
            headers=answer.headers,
            stream=httpx.ByteStream(answer.content),
            request=request,
            extensions={"http_version": answer.version, "reason_phrase": answer.reason},
        )

    async def post(
        self,
        url: httpx.URL,
        headers: Mapping[str, str],
        body: bytes,
        *,
        timeout: float,
        connect: float | None,
    ) -> Answer:
        """POST `body` to `url` and read the whole answer within `timeout` seconds in all.

        The judges' lane: the same wire as `handle_async_request`, without making an
        `httpx.Request` and `httpx.Response` (40 µs of CPU per call, a sixth of a call's cost).
        `connect` bounds opening a connection, within the whole. Raises httpx's exceptions.
        """
        lines = [
            f"POST {url.raw_path.decode('ascii')} HTTP/1.1\r\nHost: {url.netloc.decode('ascii')}"
        ]
        for name, value in headers.items():
            if "\r" in value or "\n" in value or "\r" in name or "\n" in name or ":" in name:
                raise httpx.LocalProtocolError(f"header {name!r} holds a line break or colon")
            lines.append(f"{name}: {value}")
        lines.append(f"Content-Length: {len(body)}\r\n\r\n")
        head = "\r\n".join(lines).encode("latin-1")
        return await self._round_trip(
            url, head + body, connect=connect, pool=timeout, total=timeout
        )

    async def _round_trip(
        self,
        url: httpx.URL,
        data: bytes,
        *,
        connect: float | None,
        pool: float | None,
        read: float | None = None,
        total: float | None = None,
        has_body: bool = True,
    ) -> Answer:
        """Send `data` (a whole request) to `url`'s origin; its answer, read whole.

        `read` bounds the wait for the answer once sent; `total` bounds everything, waiting for
        a connection and connecting included: when it runs out first, TimeoutError (the
        attempt's deadline, not a sign that the host is not there). `has_body` is False for
        HEAD, whose answer has none whatever its headers say.
        """
        if self._closed:
            raise RuntimeError("the transport is closed")
        if url.scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(f"unsupported URL scheme {url.scheme!r}: {url}")
        loop = asyncio.get_running_loop()
        deadline = None if total is None else loop.time() + total
        origin = (url.raw_scheme, url.raw_host, url.port or (443 if url.scheme == "https" else 80))
        while True:
            if deadline is None:
                connection = await self._acquire(origin, connect, pool)
            else:
                left = deadline - loop.time()
                try:
                    connection = await self._acquire(
                        origin, left if connect is None else min(connect, left), left
                    )
                except (httpx.ConnectTimeout, httpx.PoolTimeout):
                    if deadline - loop.time() > 0.001:
                        raise  # the connect timeout itself, within the deadline
                    raise TimeoutError from None
            wait = read if deadline is None else max(0.0, deadline - loop.time())
            try:
                version, status, reason, headers, content, keep_alive = await connection.exchange(
                    data, wait, has_body
                )
            except _StaleConnection:
                # A kept-alive connection the server had closed before our request was written
                # to it: sending it on another connection is safe.
                self._discard(connection)
                continue
            except BaseException:
                self._discard(connection)  # a cancelled or failed exchange leaves it unusable
                raise
            break
        if keep_alive and not self._closed:
            self._release(origin, connection)
        else:
            self._discard(connection)
        return Answer(status, reason, headers, content, version)

    async def _acquire(
        self, origin: tuple[bytes, bytes, int], connect: float | None, pool: float | None
    ) -> _Connection:
        """An idle connection to `origin`, a new one, or the next one freed (pool timeout)."""
        while True:
            idle = self._idle.get(origin)
            while idle:
                connection = idle.pop()
                if connection.usable:
                    return connection
                self._open -= 1
            if self._open < self._max:
                self._open += 1
                try:
                    return await self._connect(origin, connect)
                except BaseException:
                    self._open -= 1
                    self._wake()
                    raise
            if not self._evict_idle():
                await self._wait_for_slot(pool)

    def _evict_idle(self) -> bool:
        """Close one idle connection to another origin, making room; False if there is none."""
        for connections in self._idle.values():
            if connections:
                connections.pop(0).close()
                self._open -= 1
                return True
        return False

    async def _wait_for_slot(self, timeout: float | None) -> None:
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, _expire, waiter)
        self._waiters.append(waiter)
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                self._wake()  # woken, then cancelled: the slot goes to the next in line
            raise
        finally:
            if timer is not None:
                timer.cancel()
            with contextlib.suppress(ValueError):  # already taken by _wake
                self._waiters.remove(waiter)

    def _wake(self) -> None:
        """Let the first task waiting for a connection look again."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def _connect(
        self, origin: tuple[bytes, bytes, int], timeout: float | None
    ) -> _Connection:
        scheme, host, port = origin
        hostname = host.decode("ascii")
        tls = self._ssl_context() if scheme == b"https" else None
        loop = asyncio.get_running_loop()
        server_hostname = hostname if tls else None
        # Every address's failure is kept (3.12+), so a refusal at each reads as a refusal.
        if sys.version_info >= (3, 12):
            connecting = loop.create_connection(
                _Connection, hostname, port, ssl=tls, server_hostname=server_hostname,
                all_errors=True,
            )  # fmt: skip
        else:
            connecting = loop.create_connection(
                _Connection, hostname, port, ssl=tls, server_hostname=server_hostname
            )
        try:
            _, connection = await asyncio.wait_for(connecting, timeout)
        except TimeoutError:
            raise httpx.ConnectTimeout(f"no connection to {hostname}:{port} in time") from None
        except ExceptionGroup as group:  # one failure per address (3.12+)
            raise _connect_error(list(group.exceptions)) from None
        except (OSError, ssl.SSLError) as exc:  # refused, no such host, TLS handshake ...
            raise _connect_error([exc]) from None
        return connection

    def _release(self, origin: tuple[bytes, bytes, int], connection: _Connection) -> None:
        self._idle.setdefault(origin, []).append(connection)
        self._wake()

    def _discard(self, connection: _Connection) -> None:
        connection.close()
        self._open -= 1
        self._wake()

    async def aclose(self) -> None:
        """Close every idle connection; connections in use close when their exchange ends."""
        self._closed = True
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
                self._open -= 1
        self._idle.clear()
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_exception(RuntimeError("the transport is closed"))


_ERRNO = re.compile(r"\[Errno (\d+)\]")


def _connect_error(errors: list[BaseException]) -> httpx.ConnectError:
    """The ConnectError for failures to connect, one per address tried, chained to the cause.

    Refused at every address, it is chained to a ConnectionRefusedError: Python 3.11 reports
    several addresses' refusals as one plain OSError("Multiple exceptions: [Errno 111] ...").
    """
    first = errors[0]
    if len(errors) == 1 and str(first).startswith("Multiple exceptions:"):
        codes = {int(code) for code in _ERRNO.findall(str(first))}
        if codes == {errno.ECONNREFUSED}:
            errors = [ConnectionRefusedError(errno.ECONNREFUSED, str(first))]
    if all(isinstance(error, ConnectionRefusedError) for error in errors):
        cause = errors[0]
    else:  # a failure other than a refusal says more (a TLS handshake, a name not found)
        cause = next(e for e in errors if not isinstance(e, ConnectionRefusedError))
    error = httpx.ConnectError(f"{type(cause).__name__}: {cause}")
    error.__cause__ = cause
    return error


def _expire(waiter: asyncio.Future[None]) -> None:
    """End a wait for a connection that took longer than the pool timeout."""
    if not waiter.done():
        waiter.set_exception(httpx.PoolTimeout("no connection free within the pool timeout"))


def _request_head(request: httpx.Request, length: int) -> bytes:
    """The request line and headers, with the body's exact length."""
    url = request.url
    lines = [request.method.encode("ascii"), b" ", url.raw_path, b" HTTP/1.1\r\n"]
    has_length = False
    for name, value in request.headers.raw:
        lowered = name.lower()
        if lowered == b"transfer-encoding":
            continue  # the body is read whole: it is sent with its length instead
        if lowered == b"content-length":
            has_length = True
            value = str(length).encode("ascii")
        lines += (name, b": ", value, b"\r\n")
    if not has_length and (length or request.method not in ("GET", "HEAD")):
        lines += (b"Content-Length: ", str(length).encode("ascii"), b"\r\n")
    lines.append(b"\r\n")
    return b"".join(lines)


class Answer(NamedTuple):
    """An answer read whole: what `PooledTransport.post` returns."""

    status: int
    reason: bytes
    headers: list[tuple[bytes, bytes]]
    content: bytes
    version: bytes = b"HTTP/1.1"

    def response(self, request: httpx.Request | None = None) -> httpx.Response:
        """The answer as an `httpx.Response`, for the code that reads one (errors, messages)."""
        return httpx.Response(
            self.status,
            headers=self.headers,
            content=self.content,
            request=request,
            extensions={"http_version": self.version, "reason_phrase": self.reason},
        )


class _StaleConnection(Exception):
    """The kept-alive connection was found closed before the request was written to it."""


_Head = tuple[bytes, int, bytes, list[tuple[bytes, bytes]], bool]
"""An answer's version, status, reason phrase, headers, and whether it keeps the connection."""

_Exchanged = tuple[bytes, int, bytes, list[tuple[bytes, bytes]], bytes, bool]
"""Version, status, reason phrase, headers, body, and whether the connection may be used again."""


def _readable(fd: int) -> bool:
    """Whether `fd` has bytes (or the peer's close) waiting to be read, without waiting.

    `poll`, not `select`: select refuses descriptors from FD_SETSIZE (1,024) on, which a run
    with a thousand connections open reaches. `select` only where there is no `poll` (Windows).
    """
    if not hasattr(select, "poll"):
        return bool(select.select([fd], [], [], 0)[0])
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: one exchange at a time, the answer parsed as its bytes come."""

    def __init__(self) -> None:
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._waiter: asyncio.Future[_Exchanged] | None = None
        self._head: _Head | None = None
        self._has_body = True
        self._length: int | None = None  # body bytes expected (None: chunked or to the end)
        self._chunked = False
        self._received = False
        self._lost = False
        self.requests = 0

    @property
    def usable(self) -> bool:
        """Open, not closing, and with nothing to read: the server has not closed it.

        An idle connection with bytes waiting (most often the server's close, which the event
        loop has not read yet) is not used: a request written to it would be lost.
        """
        transport = self._transport
        if self._lost or transport is None or transport.is_closing():
            return False
        sock = transport.get_extra_info("socket")
        return sock is None or not _readable(sock.fileno())

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    async def exchange(
        self, data: bytes, read_timeout: float | None, has_body: bool = True
    ) -> _Exchanged:
        """Write one request and wait for its whole answer (`has_body`: False for HEAD)."""
        assert self._transport is not None and self._waiter is None
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        self._buffer.clear()
        self._head, self._length, self._chunked, self._received = None, None, False, False
        self._has_body = has_body
        self.requests += 1
        if self._lost:
            raise _StaleConnection
        self._transport.write(data)
        timer = (
            None
            if read_timeout is None
            else asyncio.get_running_loop().call_later(read_timeout, self._read_timed_out)
        )  # a timer, not asyncio.wait_for: a tenth of its cost
        try:
            answer: _Exchanged = await waiter
            return answer
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()

    def _read_timed_out(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(httpx.ReadTimeout("no complete answer within the read timeout"))

    def data_received(self, data: bytes) -> None:
        self._received = True
        self._buffer += data
        waiter = self._waiter
        if waiter is None or waiter.done():
            if waiter is None and self._transport is not None:
                self._transport.close()  # bytes nobody asked for: the connection is not sound
            return
        try:
            answer = self._parse()
        except httpx.RemoteProtocolError as exc:
            waiter.set_exception(exc)
            return
        if answer is not None:
            waiter.set_result(answer)

    def eof_received(self) -> bool | None:
        return None  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._head is not None and self._length is None and not self._chunked:
            waiter.set_result(self._answer(bytes(self._buffer), keep_alive=False))  # to the end
        elif not self._received:
            # The request was written: the server may have acted on it, so it is not sent
            # again here (a POST could be paid twice); the caller's retry policy decides.
            waiter.set_exception(
                httpx.RemoteProtocolError("the server closed the connection without answering")
            )
        else:
            error = httpx.RemoteProtocolError(
                "the server closed the connection before the answer was complete"
            )
            error.__cause__ = exc
            waiter.set_exception(error)

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def _parse(self) -> _Exchanged | None:
        """The whole answer once it is in the buffer; None while bytes are still to come."""
        buffer = self._buffer
        while self._head is None:
            end = buffer.find(b"\r\n\r\n")
            if end > _MAX_HEAD or (end < 0 and len(buffer) > _MAX_HEAD):
                raise httpx.RemoteProtocolError("the answer's headers are too long")
            if end < 0:
                return None
            head = _parse_head(bytes(buffer[:end]))
            del buffer[: end + 4]
            if 100 <= head[1] < 200:
                continue  # an informational answer: the real one follows
            self._head = head
            _, status, _, headers, _ = head
            if self._has_body:
                self._length, self._chunked = _body_framing(status, headers)
            else:
                self._length, self._chunked = 0, False
        if self._chunked:
            content = _dechunk(buffer)
            return None if content is None else self._answer(content, keep_alive=True)
        if self._length is None:
            return None  # read to the end: connection_lost completes it
        if len(buffer) < self._length:
            return None
        if len(buffer) > self._length:
            raise httpx.RemoteProtocolError("the server sent more bytes than the answer holds")
        return self._answer(bytes(buffer), keep_alive=True)

    def _answer(self, content: bytes, *, keep_alive: bool) -> _Exchanged:
        assert self._head is not None
        version, status, reason, headers, persistent = self._head
        return version, status, reason, headers, content, keep_alive and persistent


def _parse_head(head: bytes) -> _Head:
    """Status, reason, headers and keep-alive from an answer's head (without its blank line)."""
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        raise httpx.RemoteProtocolError(f"not an HTTP/1.x answer: {lines[0][:60]!r}")
    version, status = parts[0], int(parts[1])
    reason = parts[2] if len(parts) > 2 else b""
    headers: list[tuple[bytes, bytes]] = []
    keep_alive = version == b"HTTP/1.1"
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name or name != name.strip():
            raise httpx.RemoteProtocolError(f"malformed header line: {line[:60]!r}")
        value = value.strip()
        if name.lower() == b"connection":
            tokens = {token.strip().lower() for token in value.split(b",")}
            if b"close" in tokens:
                keep_alive = False
            elif b"keep-alive" in tokens:
                keep_alive = True
        headers.append((name, value))
    return version, status, reason, headers, keep_alive


def _body_framing(status: int, headers: Iterable[tuple[bytes, bytes]]) -> tuple[int | None, bool]:
    """(Content-Length, chunked) of an answer; (None, False) means read to the end."""
    if status in (204, 304):
        return 0, False
    length: int | None = None
    for name, value in headers:
        lowered = name.lower()
        if lowered == b"transfer-encoding" and b"chunked" in value.lower():
            return None, True
        if lowered == b"content-length":
            if not value.isdigit() or (length is not None and int(value) != length):
                raise httpx.RemoteProtocolError(f"bad Content-Length: {value[:30]!r}")
            length = int(value)
    return length, False


def _dechunk(buffer: bytearray) -> bytes | None:
    """The body of a complete chunked answer in `buffer`, or None if it is not complete yet."""
    parts: list[bytes] = []
    position = 0
    while True:
        end = buffer.find(b"\r\n", position)
        if end < 0:
            return None
        size_field = bytes(buffer[position:end]).split(b";", 1)[0].strip()
        if not _HEX.fullmatch(size_field):
            raise httpx.RemoteProtocolError(f"bad chunk size: {size_field[:20]!r}")
        size = int(size_field, 16)
        start = end + 2
        if size == 0:
            trailer_end = buffer.find(b"\r\n\r\n", end)
            if trailer_end < 0:
                return None  # the trailers (usually none) and the final blank line
            return b"".join(parts)
        if len(buffer) < start + size + 2:
            return None
        if buffer[start + size : start + size + 2] != b"\r\n":
            raise httpx.RemoteProtocolError("a chunk is longer than its size says")
        parts.append(bytes(buffer[start : start + size]))
        position = start + size + 2
