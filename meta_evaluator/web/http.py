"""The HTTP plumbing of our pages: a request read from its ASGI scope, bodies, replies.

No framework: each app (the annotation page, the results viewer) routes a handful of paths
itself. A request is read once into a `Request`; bodies are read whole up to `MAX_BODY`;
`respond` sends a whole reply, never cached.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote

__all__ = [
    "MAX_BODY",
    "Receive",
    "Request",
    "Scope",
    "Send",
    "TooLarge",
    "declared_length",
    "http_request",
    "lifespan",
    "read_form",
    "respond",
    "respond_json",
    "url_host",
]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
#: The largest request body read (bytes); a larger one is refused with 413.
MAX_BODY = 1_000_000


class TooLarge(Exception):
    """A request body over `MAX_BODY`."""


@dataclass(frozen=True)
class Request:
    """One HTTP request as the apps read it: method, path, query and headers (lower-case names).

    `segments` are the path's parts between slashes, each percent-decoded on its own, so an
    encoded slash (`%2F`) stays inside its segment (an id may hold one).
    """

    method: str
    path: str
    segments: tuple[str, ...]
    query: dict[str, list[str]]
    headers: dict[str, str]

    @classmethod
    def of(cls, scope: Scope) -> Request:
        """The request an ASGI `http` scope describes."""
        raw = scope.get("raw_path")
        encoded = raw.decode("latin-1") if raw else scope["path"]
        encoded = encoded.split("?", 1)[0]
        segments = tuple(unquote(part) for part in encoded.split("/") if part)
        return cls(
            method=scope["method"],
            path=scope["path"],
            segments=segments,
            query=parse_qs(scope.get("query_string", b"").decode("latin-1")),
            headers={k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]},
        )


async def lifespan(receive: Receive, send: Send) -> None:
    """Acknowledge an ASGI lifespan's startup and shutdown (the apps hold nothing to open)."""
    while True:
        event = await receive()
        if event["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif event["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def http_request(scope: Scope, receive: Receive, send: Send) -> Request | None:
    """The HTTP request an ASGI event carries, or None for any other (a lifespan's acknowledged).

    The first step of every app's `__call__`, so that the apps answer lifespans alike.
    """
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
    if scope["type"] != "http":
        return None
    return Request.of(scope)


async def read_form(receive: Receive) -> dict[str, list[str]]:
    """The form posted, read whole; raises TooLarge past `MAX_BODY` (nothing is cut)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise TooLarge
        chunks.append(chunk)
        if not message.get("more_body"):
            break
    return parse_qs(b"".join(chunks).decode("utf-8", errors="replace"), keep_blank_values=True)


def declared_length(headers: dict[str, str]) -> int:
    """The `Content-Length` announced (0 without one; the server rejects malformed ones)."""
    value = headers.get("content-length", "").strip()
    return int(value) if value.isascii() and value.isdigit() else 0


def url_host(host: str) -> str:
    """`host` as an address is written in a URL and shown to users: an IPv6 one in brackets."""
    return f"[{host}]" if ":" in host else host


async def respond(
    send: Send,
    status: int,
    body: str,
    headers: list[tuple[str, str]] | None = None,
    *,
    head: bool = False,
) -> None:
    """Send a whole response: `body` (HTML unless a content-type is given), never cached.

    No other site may show it in a frame (`X-Frame-Options`, CSP `frame-ancestors`): a page
    framed out of sight could be clicked through (the annotation page's buttons save labels).
    With `head` (a HEAD request) the headers are those of the body, which is not sent.
    """
    names = {k for k, _ in headers or []}
    out = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers or []]
    if "content-type" not in names:
        out.append((b"content-type", b"text/html; charset=utf-8"))
    out.append((b"cache-control", b"no-store"))
    out.append((b"x-frame-options", b"DENY"))
    out.append((b"content-security-policy", b"frame-ancestors 'none'"))
    out.append((b"x-content-type-options", b"nosniff"))
    data = body.encode("utf-8")
    out.append((b"content-length", str(len(data)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": b"" if head else data})


async def respond_json(
    send: Send,
    status: int,
    value: Any,
    headers: list[tuple[str, str]] | None = None,
    *,
    head: bool = False,
) -> None:
    """Send `value` as JSON (UTF-8, never cached); see `respond`."""
    body = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    typed = [*(headers or []), ("content-type", "application/json; charset=utf-8")]
    await respond(send, status, body, typed, head=head)
