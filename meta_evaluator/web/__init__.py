"""The web stack our pages share: HTTP helpers, the request guard, sockets, the serve routine.

The annotation page (`annotate/`) and the results viewer (`view/`) are small ASGI apps on
this base, so both keep others out the same way:

- `http`: the request an ASGI event carries (`http_request`, which answers lifespans;
  `Request`), bodies up to `MAX_BODY`, replies (`respond`, `respond_json`), a host as a URL
  shows it (`url_host`).
- `guard`: `RequestGuard`, the checks every request passes (Host against DNS rebinding, the
  token, Origin/Referer on requests that change something, the body size), and what a
  refused visitor is told (`Refusal`, `RefusalWording`).
- `sockets`: the listening sockets, bound before uvicorn runs (`listen`, `check_port`,
  `free_port`), each failure a `ProjectError` naming `port` or `host`.
- `serve`: `serve_app`, which checks, binds, announces the address and runs uvicorn.

uvicorn is imported only when a page is served.
"""

from meta_evaluator.web.guard import (
    Admission,
    Refusal,
    RefusalWording,
    RequestGuard,
    host_is_loopback_name,
    is_loopback,
    same_origin,
)
from meta_evaluator.web.http import (
    MAX_BODY,
    Receive,
    Request,
    Scope,
    Send,
    TooLarge,
    declared_length,
    http_request,
    lifespan,
    read_form,
    respond,
    respond_json,
    url_host,
)
from meta_evaluator.web.serve import ServedApp, announced_address, serve_app
from meta_evaluator.web.sockets import check_port, free_port, listen

__all__ = [
    "MAX_BODY",
    "Admission",
    "Receive",
    "Refusal",
    "RefusalWording",
    "Request",
    "RequestGuard",
    "Scope",
    "Send",
    "ServedApp",
    "TooLarge",
    "announced_address",
    "check_port",
    "declared_length",
    "free_port",
    "host_is_loopback_name",
    "http_request",
    "is_loopback",
    "lifespan",
    "listen",
    "read_form",
    "respond",
    "respond_json",
    "same_origin",
    "serve_app",
    "url_host",
]
