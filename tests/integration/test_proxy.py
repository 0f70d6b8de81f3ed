"""Calls to an endpoint that the environment proxies go through the proxy (a loopback one here).

Our transport does not speak to proxies: `make_transport` gives None for such a URL and httpx's
own transport, which honours HTTP_PROXY only when the client is given none, carries the calls.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from meta_evaluator.llm.mock import mock_answer
from tests.conftest import chats, rejection_project


class Proxy(ThreadingHTTPServer):
    """A forward proxy on 127.0.0.1 that answers every chat call itself and notes its line."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lines: list[str] = []


class _Handler(BaseHTTPRequestHandler):
    server: Proxy

    def do_POST(self) -> None:
        self.server.lines.append(self.requestline)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        schema = body.get("response_format", {}).get("json_schema", {}).get("schema")
        content = mock_answer(body["messages"][-1]["content"], schema)
        message = {"content": json.dumps(content) if schema else content}
        answer = json.dumps({"choices": [{"message": message}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def proxy() -> Iterator[Proxy]:
    server = Proxy()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_a_proxied_endpoint_is_called_through_the_proxy(
    proxy: Proxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.server_address[1]}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    evaluator = rejection_project(tmp_path / "p", chats(6))
    # No such host: only the proxy can answer for it.
    evaluator.add_judge("j", "openai", "m", "Did {response} refuse {prompt}?",
                        base_url="http://judge.invalid:8000/v1")  # fmt: skip
    results = evaluator.run_judges_async(max_concurrency=4, max_retries=0)["j"]
    assert results.counts()["valid"] == 6
    assert proxy.lines == ["POST http://judge.invalid:8000/v1/chat/completions HTTP/1.1"] * 6
