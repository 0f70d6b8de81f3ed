"""Anthropic Messages API over our own httpx client; structured answers through a forced tool."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

import httpx

from meta_evaluator.llm._endpoint import EndpointClient
from meta_evaluator.llm.classify import MalformedResponse
from meta_evaluator.llm.types import (
    ChatRequest,
    ChatResponse,
    FinishReason,
    RateLimits,
    token_count,
)

__all__ = ["AnthropicClient"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 1024  # the Messages API requires max_tokens


class AnthropicClient(EndpointClient):
    """Messages at `base_url` (with or without a trailing `/v1`; `endpoint.base` ends in it)."""

    default_base_url = DEFAULT_BASE_URL

    def _root(self, base: str) -> str:
        return base if base.endswith("/v1") else f"{base}/v1"

    def _auth(self, api_key: str | None) -> dict[str, str]:
        return {"anthropic-version": API_VERSION, **({"x-api-key": api_key} if api_key else {})}

    @functools.cached_property
    def _url(self) -> httpx.URL:
        return httpx.URL(f"{self.endpoint.base}/messages")

    def url(self, model: str) -> str:
        """Where requests go (the same for every model)."""
        return str(self._url)

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
        """The ids of the models the endpoint serves (see `Endpoint.model_ids`)."""
        return await self.endpoint.model_ids(f"{self.endpoint.base}/models", extra_headers)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One attempt (see `post_json` for the failures it raises)."""
        answer, limits = await self.endpoint.post_with_limits(
            self._url, self.body(request), request.extra_headers
        )
        return parse_message(answer, limits)


def parse_message(answer: dict[str, Any], rate_limits: RateLimits | None = None) -> ChatResponse:
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
        rate_limits=rate_limits,
    )
