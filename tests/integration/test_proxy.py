"""Calls to an endpoint that the environment proxies go through the proxy (a loopback one here).

Our transport does not speak to proxies: `make_transport` gives None for such a URL and httpx's
own transport, which honours HTTP_PROXY only when the client is given none, carries the calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from meta_evaluator.llm.mock import mock_answer
from tests.conftest import chats, rejection_project
from tests.loopback import JsonHandler, serving


class _Proxy(JsonHandler):
    """A forward proxy that answers every chat call itself and notes its request line."""

    lines: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        type(self).lines.append(self.requestline)
        body = json.loads(self.read_body())
        schema = body.get("response_format", {}).get("json_schema", {}).get("schema")
        content = mock_answer(body["messages"][-1]["content"], schema)
        message = {"content": json.dumps(content) if schema else content}
        self.send_json(200, {"choices": [{"message": message}]})


@pytest.fixture
def proxy() -> Iterator[ThreadingHTTPServer]:
    _Proxy.lines = []
    with serving(_Proxy) as server:
        yield server


def test_a_proxied_endpoint_is_called_through_the_proxy(
    proxy: ThreadingHTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
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
    assert _Proxy.lines == ["POST http://judge.invalid:8000/v1/chat/completions HTTP/1.1"] * 6
