"""Small HTTP servers on 127.0.0.1 for tests: a handler that answers JSON, served in a thread;
an ASGI app (the annotation page, the viewer) served by uvicorn in a thread."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest


class JsonHandler(http.server.BaseHTTPRequestHandler):
    """A request handler whose answers are JSON and which writes no log lines."""

    def read_body(self) -> bytes:
        """The request's body (by its Content-Length)."""
        return self.rfile.read(int(self.headers.get("content-length", 0)))

    def send_json(self, status: int, value: Any) -> None:
        """Answer `status` with `value` as JSON (bytes are sent as they are)."""
        body = value if isinstance(value, bytes) else json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def serving(
    handler: type[http.server.BaseHTTPRequestHandler],
    server_class: type[http.server.ThreadingHTTPServer] = http.server.ThreadingHTTPServer,
) -> Iterator[http.server.ThreadingHTTPServer]:
    """`handler` served on 127.0.0.1 (a free port) in a thread for the with-block."""
    server = server_class(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextlib.contextmanager
def serving_app(app: Any, port: int, name: str) -> Iterator[str]:
    """`app` served by uvicorn on 127.0.0.1:`port` in a thread for the with-block, its root URL
    given; the test fails when it does not start or stop within 10 s (`name` says which)."""
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=name, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            pytest.fail(f"the {name} did not start on 127.0.0.1:{port}")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        assert not thread.is_alive(), f"the {name} did not stop"
