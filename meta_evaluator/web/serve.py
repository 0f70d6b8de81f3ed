"""Run one of our pages with uvicorn on sockets we bound, until Ctrl-C.

The order is the same for every page: the port is checked, a public host without a token is
refused, the app is made (it checks the project), then the sockets are bound on every address
of the host and the address actually bound is announced on stderr. Every failure before
serving is a `ProjectError` naming `port`, `host` or `token`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from meta_evaluator.errors import ProjectError
from meta_evaluator.web.guard import check_token, is_loopback
from meta_evaluator.web.http import url_host

__all__ = ["ServedApp", "announced_address", "serve_app"]


class ServedApp(Protocol):
    """An ASGI app that is told the port it was bound to (`port`: None until known)."""

    port: int | None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Handle one ASGI event."""


App = TypeVar("App", bound=ServedApp)


#: Seconds a stopped server waits for open connections (a browser's kept-alive ones) to end.
SHUTDOWN_SECONDS = 1


def announced_address(host: str, port: int, token: str | None) -> str:
    """The address printed for a page served on `host`:`port` (with `?token=` when it has one).

    Bound to every interface (`0.0.0.0`, `::`), the address to share is this machine's name,
    not the wildcard, which no browser elsewhere can open.
    """
    import socket

    suffix = f"?token={token}" if token else ""
    if host in ("0.0.0.0", "::", ""):
        host = socket.gethostname() or "localhost"
    return f"http://{url_host(host)}:{port}/{suffix}"


def serve_app(
    make_app: Callable[[], App],
    *,
    host: str,
    port: int | None,
    token: str | None,
    who: str,
    title: str,
    announce: bool = True,
) -> None:
    """Serve the app `make_app` returns on `host`:`port` until interrupted (Ctrl-C).

    Args:
        make_app: Makes the app (after the port and the token are checked, before binding).
        host: The address (or a name resolving to addresses) of this machine to listen on.
        port: The TCP port, 1 to 65535; None or 0 picks a free one.
        token: The token visitors must present; needed for a host that is not loopback.
        who: The call the user made, which errors begin with (`launch_viewer`).
        title: What is served, announced as `<title>: http://...`.
        announce: Whether to write the address to stderr.

    Raises:
        ProjectError: `host` is not a loopback address and no token protects the page
            (`field="token"`); `port` is out of range, in use or needs privileges
            (`field="port"`); `host` is empty, does not resolve or is not an address of this
            machine (`field="host"`); or what `make_app` raises.
    """
    import uvicorn

    from meta_evaluator.web import sockets as listening

    wanted = listening.check_port(port, who=who)
    check_token(token)
    if token is None and not is_loopback(host):
        raise ProjectError(
            f"{who}: host {host!r} lets others reach the page; give a token "
            "(token=... or --token) that they must present, or use 127.0.0.1.",
            field="token",
        )
    app = make_app()
    bound = listening.listen(host, wanted, who=who)
    try:
        chosen = int(bound[0].getsockname()[1])
        app.port = chosen
        if announce:
            address = announced_address(host, chosen, token)
            sys.stderr.write(f"{title}: {address}  (Ctrl-C stops it)\n")
        config = uvicorn.Config(
            app, host=host, port=chosen, log_level="warning", lifespan="on",
            timeout_graceful_shutdown=SHUTDOWN_SECONDS,  # Ctrl-C stops it at once
        )  # fmt: skip
        uvicorn.Server(config).run(sockets=bound)
    finally:
        for sock in bound:
            sock.close()
