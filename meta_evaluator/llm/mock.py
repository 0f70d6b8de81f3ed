"""An offline, deterministic LLM for demos, dry runs and tests: no network, no key.

The answer is derived from a hash of the prompt: with an output schema, a schema-valid object;
otherwise the labels named by the prompt's instruction lines, in the form asked for. Rates of
invalid answers and errors can be set, and hit the same rows every time.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import anyio

from meta_evaluator.llm.classify import CallFailed
from meta_evaluator.llm.types import ChatRequest, ChatResponse

__all__ = ["MockClient", "mock_answer"]

_ALLOWED = re.compile(r"^Allowed values for <([^>]+)>: (.+)$", re.MULTILINE)
_FREE = re.compile(r"^Write your (\S+) inside <\1></\1> tags\.$", re.MULTILINE)
_TEXT = re.compile(
    r"^Answer with exactly one of these labels and nothing else: (.+)$", re.MULTILINE
)


def _fraction(*parts: str) -> float:
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _pick(options: list[str], prompt: str, name: str) -> str:
    return options[int(_fraction(prompt, name) * len(options))]


def _subset(options: list[str], prompt: str, name: str) -> list[str]:
    chosen = [o for o in options if _fraction(prompt, name, o) < 0.5]
    return chosen or [_pick(options, prompt, name)]


def mock_answer(prompt: str, schema: dict[str, Any] | None) -> dict[str, Any] | str:
    """The answer the mock gives to `prompt`: an object for a schema, else text."""
    if schema is not None:
        answer: dict[str, Any] = {}
        for name, spec in schema.get("properties", {}).items():
            if "enum" in spec:
                answer[name] = _pick(list(spec["enum"]), prompt, name)
            elif spec.get("type") == "array" and "enum" in spec.get("items", {}):
                answer[name] = _subset(list(spec["items"]["enum"]), prompt, name)
            else:
                answer[name] = f"Judged offline by the mock client ({_fraction(prompt, name):.3f})."
        return answer
    if match := _TEXT.search(prompt):
        return _pick([o.strip() for o in match.group(1).split("|")], prompt, "text")
    lines = [
        f"<{name}>{_pick([o.strip() for o in options.split('|')], prompt, name)}</{name}>"
        for name, options in _ALLOWED.findall(prompt)
    ]
    lines += [
        f"<{name}>Judged offline by the mock client.</{name}>" for name in _FREE.findall(prompt)
    ]
    return "\n".join(lines) or "Judged offline by the mock client."


class MockClient:
    """Answers like an LLM would, offline; `invalid_rate` and `error_rate` pick rows by hash."""

    def __init__(
        self, *, invalid_rate: float = 0.0, error_rate: float = 0.0, latency: float = 0.0
    ) -> None:
        self._invalid_rate = invalid_rate
        self._error_rate = error_rate
        self._latency = latency

    def url(self, model: str) -> str:
        """Where requests go: nowhere."""
        return "mock://offline"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Answer `request` from the hash of its last message."""
        # Like a network call, an answer is a point where other tasks run (and a cancel lands).
        await anyio.sleep(self._latency)
        prompt = request.messages[-1]["content"]
        if _fraction(prompt, "error") < self._error_rate:
            raise CallFailed(
                "mock: simulated server error", status="http_error", http_status=500,
                retryable=False,
            )  # fmt: skip
        schema = request.output_schema.schema if request.output_schema else None
        answer = mock_answer(prompt, schema)
        text = json.dumps(answer) if isinstance(answer, dict) else answer
        if _fraction(prompt, "invalid") < self._invalid_rate:
            text = "I am not sure how to label this."
        return ChatResponse(
            text=text,
            prompt_tokens=sum(len(m["content"]) for m in request.messages) // 4 + 1,
            completion_tokens=len(text) // 4 + 1,
        )
