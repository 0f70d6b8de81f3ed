"""Small HTTP servers on 127.0.0.1 for tests: a handler that answers JSON, served in a thread."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any


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
