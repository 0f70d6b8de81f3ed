"""The annotation page's HTTP plumbing: reading requests, keeping other sites out, replying.

The guards (see `app.py`'s docstring for the policy): `host_is_loopback_name` (DNS rebinding),
`same_origin` (cross-site posts), `MAX_BODY` / `read_form` (oversized bodies).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "MAX_BODY",
    "Receive",
    "Scope",
    "Send",
    "TooLarge",
    "declared_length",
    "host_is_loopback_name",
    "is_loopback",
    "read_form",
    "respond",
    "same_origin",
]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
#: The largest request body read (bytes); a larger one is refused with 413.
MAX_BODY = 1_000_000


class TooLarge(Exception):
    """A request body over `MAX_BODY`."""


def host_is_loopback_name(host: str | None) -> bool:
    """Whether a `Host` header names this machine's loopback (`localhost`, 127.0.0.0/8, [::1]).

    Any port is accepted: SSH tunnels and port forwarding change the port; DNS rebinding
    changes the name, which is what is checked.
    """
    if not host:
        return False
    name, _, port = host.lower().rpartition(":")
    if not name or name.endswith(":") or (name.startswith("[") != name.endswith("]")):
        name = host.lower()  # no port given (a bare IPv6 literal is no name)
    elif not (port.isascii() and port.isdigit()):
        return False
    if not name.startswith("["):
        return name == "localhost" or (is_loopback(name) and ":" not in name)
    return is_loopback(name[1:-1]) and ":" in name


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


def same_origin(headers: dict[str, str]) -> bool:
    """Whether a request's `Origin` (else `Referer`) is the address it was sent to.

    That address is the `Host` header, or the first name of `X-Forwarded-Host` (set by a
    reverse proxy that rewrites `Host`; no browser sends it with another site's form).
    Browsers send `Origin` with every POST; a request with neither header is no browser's
    cross-site request (scripts, curl) and passes.
    """
    source = headers.get("origin") or headers.get("referer")
    if source is None:
        return True
    if source.strip().lower() == "null":
        return False
    try:
        netloc = urlsplit(source.strip()).netloc.rpartition("@")[2].lower()
    except ValueError:
        return False
    forwarded = headers.get("x-forwarded-host", "").split(",")[0].strip().lower()
    own = {headers.get("host", "").strip().lower(), forwarded} - {""}
    return bool(netloc) and netloc in own


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an IP address) is this machine's loopback."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def respond(
    send: Send, status: int, body: str, headers: list[tuple[str, str]] | None = None
) -> None:
    """Send a whole response: `body` (HTML unless a content-type is given), never cached."""
    names = {k for k, _ in headers or []}
    out = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers or []]
    if "content-type" not in names:
        out.append((b"content-type", b"text/html; charset=utf-8"))
    out.append((b"cache-control", b"no-store"))
    data = body.encode("utf-8")
    out.append((b"content-length", str(len(data)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": data})
