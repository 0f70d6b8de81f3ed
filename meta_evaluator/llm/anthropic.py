"""Anthropic Messages API over our own httpx client; structured answers through a forced tool."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

from meta_evaluator.llm._http import list_model_ids, post_json
from meta_evaluator.llm.classify import MalformedResponse
from meta_evaluator.llm.types import ChatRequest, ChatResponse, FinishReason, token_count

__all__ = ["AnthropicClient"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 1024  # the Messages API requires max_tokens


class AnthropicClient:
    """Messages at `base_url` (with or without a trailing `/v1`)."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
    ) -> None:
        self._http = http
        base = (base_url or DEFAULT_BASE_URL).rstrip("/")
        versioned = base if base.endswith("/v1") else f"{base}/v1"
        self._url = f"{versioned}/messages"
        self._models_url = f"{versioned}/models"
        self._parsed_url = httpx.URL(self._url)
        self._timeout = timeout
        self._key = api_key
        self._headers = {"anthropic-version": API_VERSION}
        if api_key:
            self._headers["x-api-key"] = api_key

    @property
    def headers(self) -> dict[str, str]:
        """The headers every request carries: the API version and the key."""
        return dict(self._headers)

    def url(self, model: str) -> str:
        """Where requests go (the same for every model)."""
        return self._url

    def body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body: system messages move to `system`; a schema becomes a forced tool."""
        system = "\n\n".join(m["content"] for m in request.messages if m["role"] == "system")
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": [m for m in request.messages if m["role"] != "system"],
        }
        if system:
            body["system"] = system
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.output_schema is not None:
            name = request.output_schema.name
            body["tools"] = [
                {
                    "name": name,
                    "description": "Record the evaluation.",
                    "input_schema": request.output_schema.schema,
                }
            ]
            body["tool_choice"] = {"type": "tool", "name": name}
        return body

    async def list_models(self, extra_headers: Mapping[str, str] | None = None) -> list[str]:
        """The ids of the models the endpoint serves: one cheap GET, no tokens, the key checked.

        Raises:
            CallFailed: A timeout, connection error, 429/5xx; MalformedResponse when the answer
                is not a JSON object.
            EndpointRejected: 401/403/404 ...: a wrong key or URL.
        """
        return await list_model_ids(
            self._http,
            self._models_url,
            headers={**self._headers, **(extra_headers or {})},
            timeout=self._timeout,
            secret=self._key,
        )

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One attempt (see `post_json` for the failures it raises)."""
        answer, _ = await post_json(
            self._http,
            self._parsed_url,
            headers={**self._headers, **request.extra_headers},
            body=self.body(request),
            timeout=self._timeout,
            secret=self._key,
        )
        return parse_message(answer)


def parse_message(answer: dict[str, Any]) -> ChatResponse:
    """Read text blocks, the first `tool_use` input, `stop_reason` and `usage`.

    Raises:
        MalformedResponse: The object has no `content` list.
    """
    blocks = answer.get("content")
    if not isinstance(blocks, list):
        raise MalformedResponse(f"no content list in the answer: {str(answer)[:200]}")
    text = "".join(
        b["text"]
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )
    tools = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
    structured = tools[0].get("input") if tools else None
    if tools and not isinstance(structured, dict):
        # Keep what came, so the row shows it; the parser then finds no usable object.
        text, structured = text or json.dumps(tools[0])[:10_000], None
    stop = answer.get("stop_reason")
    reason: FinishReason = (
        "length"
        if stop == "max_tokens"
        else "refusal"
        if stop == "refusal"
        else "stop"
        if stop in ("end_turn", "tool_use", "stop_sequence", None)
        else "other"
    )
    raw_usage = answer.get("usage")
    usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    return ChatResponse(
        text=text,
        structured=structured,
        finish_reason=reason,
        prompt_tokens=token_count(usage.get("input_tokens")),
        completion_tokens=token_count(usage.get("output_tokens")),
    )
