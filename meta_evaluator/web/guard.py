"""Who may use a page: the checks every request passes before an app routes it.

In this order (the first that fails decides):
- **Host** (421). Bound to loopback, the `Host` header must be a loopback name (`localhost`,
  `127.0.0.0/8`, `[::1]`), at any port: a site whose DNS name was rebound to 127.0.0.1 still
  sends its own name. The port is not compared, so an SSH tunnel or an editor's port
  forwarding (`ssh -L 9000:localhost:8000`: the browser sends `Host: localhost:9000`) works.
  Bound to any other address (which needs a token), any name is accepted: others reach the
  page under names the server cannot know (a LAN name, a proxy), and the token, which a
  foreign site does not have, is what keeps it out.
- **Token** (401), when the app has one: `?token=...` once (answered with an HttpOnly,
  SameSite=Strict cookie that then suffices), the cookie, or `Authorization: Bearer ...`.
  A token in the query decides alone: a wrong one is not rescued by a right cookie.
- **Origin** (403), for methods other than GET and HEAD: the `Origin` (or, without one,
  `Referer`) must be the server's own address (`Origin: null` is refused); requests with
  neither (scripts, curl) pass. Its own address is the `Host` header, or the first name of
  `X-Forwarded-Host`: a reverse proxy that rewrites `Host` sets that header to the name the
  browser used. A browser cannot send that header with another site's form (and a script's
  request carrying it needs a CORS preflight, which these servers never grant).
- **Size** (413): a body announced over `MAX_BODY` bytes.

The guard says what failed (`Refusal`, with its status and title); `RefusalWording` says it
in a page's words: the wrong-address and token messages are the same on every page, what a
cross-site request and a large body are told is each page's own (one saves labels, the other
only reads). Each app puts the message in its own page or JSON.
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote, unquote, urlsplit

from meta_evaluator.errors import ProjectError
from meta_evaluator.web.http import MAX_BODY, Request, declared_length, url_host

__all__ = [
    "Admission",
    "Refusal",
    "RefusalReason",
    "RefusalWording",
    "RequestGuard",
    "check_token",
    "host_is_loopback_name",
    "is_loopback",
    "same_origin",
]

RefusalReason = Literal["host", "token", "origin", "size"]
_STATUS: dict[RefusalReason, int] = {"host": 421, "token": 401, "origin": 403, "size": 413}
_TITLE: dict[RefusalReason, str] = {
    "host": "Wrong address",
    "token": "Token needed",
    "origin": "Refused",
    "size": "Too large",
}


@dataclass(frozen=True)
class Refusal:
    """Why a request is refused, and with which status."""

    reason: RefusalReason

    @property
    def status(self) -> int:
        """421 (host), 401 (token), 403 (origin) or 413 (size)."""
        return _STATUS[self.reason]

    @property
    def title(self) -> str:
        """The heading of the page saying so ("Wrong address", "Token needed", ...)."""
        return _TITLE[self.reason]


@dataclass(frozen=True)
class RefusalWording:
    """What a page tells a refused visitor (see the module docstring).

    `page` names the page in the wrong-address message ("annotation page", "viewer");
    `origin` and `size` are its messages for a cross-site request and a body too large.
    """

    page: str
    origin: str
    size: str

    def message(self, refusal: Refusal, host: str) -> str:
        """Why `refusal` refused a request to the page served on `host`, and what to do."""
        if refusal.reason == "host":
            return (
                f"This {self.page} answers at {url_host(host)} (or localhost) only, not at the "
                "name this request was sent to; open the address the server printed."
            )
        if refusal.reason == "token":
            return "Open the link with ?token=... that the project owner shared."
        return self.origin if refusal.reason == "origin" else self.size


@dataclass(frozen=True)
class Admission:
    """What the guard decided: `refusal` None admits; `headers` go with the reply either way.

    The token's cookie is set once the token was accepted (with a body found too large, too).
    """

    refusal: Refusal | None = None
    headers: tuple[tuple[str, str], ...] = ()


class RequestGuard:
    """The checks above, for a server bound to `host` with `token` (None: no token needed).

    `cookie` names the cookie that keeps the token: each app has its own, since browsers
    share cookies between ports of one host.
    """

    def __init__(self, *, host: str, token: str | None, cookie: str) -> None:
        """A guard for a server on `host`.

        Raises:
            ProjectError: `token` is empty or blank (it would let in any request that
                presents an empty one; `field="token"`).
        """
        check_token(token)
        self.host = host
        self.token = token
        self.cookie = cookie

    def admit(self, request: Request) -> Admission:
        """Check `request`; the first refusal, or the headers to add (the token's cookie)."""
        if not self.host_allowed(request.headers.get("host")):
            return Admission(Refusal("host"))
        extra: tuple[tuple[str, str], ...] = ()
        if self.token is not None:
            given = self._token_of(request)
            if given is None or not hmac.compare_digest(given.encode(), self.token.encode()):
                return Admission(Refusal("token"))
            if request.query.get("token"):
                extra = ((
                    "set-cookie",
                    f"{self.cookie}={quote(self.token)}; HttpOnly; SameSite=Strict; Path=/",
                ),)  # fmt: skip
        if request.method not in ("GET", "HEAD") and not same_origin(request.headers):
            return Admission(Refusal("origin"))
        if declared_length(request.headers) > MAX_BODY:
            return Admission(Refusal("size"), extra)
        return Admission(None, extra)

    def host_allowed(self, host: str | None) -> bool:
        """Whether a `Host` header names this server (see the module docstring)."""
        if not is_loopback(self.host):
            return True  # the token guards it (serving refuses a public host without one)
        return host_is_loopback_name(host)

    def _token_of(self, request: Request) -> str | None:
        """The token the request presents (an empty one is none)."""
        if request.query.get("token"):
            return request.query["token"][0] or None
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip() or None
        for part in request.headers.get("cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == self.cookie:
                return unquote(value) or None
        return None


def check_token(token: str | None) -> None:
    """Refuse a token that is empty or blank: it would admit anyone presenting an empty one.

    Raises:
        ProjectError: `token` is "" or only spaces (`field="token"`).
    """
    if token is not None and not token.strip():
        raise ProjectError(
            "token is empty; give one others cannot guess (for example the output of "
            "`python -c 'import secrets; print(secrets.token_urlsafe())'`), or omit it to "
            "serve on 127.0.0.1 only.",
            field="token",
        )


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
