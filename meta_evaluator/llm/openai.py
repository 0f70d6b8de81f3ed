"""OpenAI-compatible chat completions and Azure OpenAI, over our own httpx client.

Any server speaking the chat completions API works by `base_url`: OpenAI, vLLM, Ollama,
LM Studio, OpenRouter, Together, Groq ...
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Unpack

import httpx

from meta_evaluator.llm._endpoint import EndpointClient, EndpointOptions, bearer
from meta_evaluator.llm.classify import MalformedResponse
from meta_evaluator.llm.types import (
    ChatRequest,
    ChatResponse,
    FinishReason,
    RateLimits,
    token_count,
)

__all__ = ["OpenAIClient"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIClient(EndpointClient):
    """Chat completions at `base_url`; with `azure_api_version`, an Azure OpenAI deployment.

    The key goes as OpenAI (`Authorization: Bearer`) or Azure (`api-key`) wants it.
    """

    default_base_url = DEFAULT_BASE_URL

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        azure_api_version: str | None = None,
        **options: Unpack[EndpointOptions],
    ) -> None:
        self._azure_version = azure_api_version
        self._urls: dict[str, httpx.URL] = {}  # parsed once: httpx would parse a str each call
        super().__init__(http, **options)

    def _auth(self, api_key: str | None) -> dict[str, str]:
        return {"api-key": api_key} if api_key and self._azure_version else bearer(api_key)

    def resource_url(self, path: str, **query: str) -> httpx.URL:
        """`path` under the API: `{base}{path}`, or on Azure `{base}/openai{path}?api-version=`.

        Every URL of the client and of the batch client is made here, so the Azure layout is
        written once.
        """
        if self._azure_version:
            query = {"api-version": self._azure_version, **query}
            path = f"/openai{path}"
        return httpx.URL(f"{self.endpoint.base}{path}", params=query or None)

    def url(self, model: str) -> str:
        """Where requests for `model` go (on Azure, to the deployment named `model`)."""
        if self._azure_version:
            return str(self.resource_url(f"/deployments/{model}/chat/completions"))
        return str(self.resource_url("/chat/completions"))

    def body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body for `request`."""
        body: dict[str, Any] = {"model": request.model, "messages": request.messages}
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.output_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": request.output_schema.name,
                    "schema": request.output_schema.schema,
                    "strict": True,
                },
            }
        return body

    def models_url(self) -> str:
        """Where the models list is: `{base}/models`, or Azure's `{base}/openai/models`."""
        return str(self.resource_url("/models"))

    async def list_models(self, extra_headers: Mapping[str, str] | None = None) -> list[str]:
        """The ids of the models the endpoint serves (see `Endpoint.model_ids`)."""
        return await self.endpoint.model_ids(self.models_url(), extra_headers)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One attempt (see `post_json` for the failures it raises)."""
        url = self._urls.get(request.model)
        if url is None:
            url = self._urls[request.model] = httpx.URL(self.url(request.model))
        answer, limits = await self.endpoint.post_with_limits(
            url, self.body(request), request.extra_headers
        )
        return parse_completion(answer, limits)


def parse_completion(answer: dict[str, Any], rate_limits: RateLimits | None = None) -> ChatResponse:
    """Read `choices[0].message` and `usage` from a chat completion.

    Raises:
        MalformedResponse: The object lacks `choices[0].message`.
    """
    try:
        choice = answer["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError) as exc:
        raise MalformedResponse(
            f"no choices[0].message in the answer: {str(answer)[:200]}"
        ) from exc
    if not isinstance(choice, dict) or not isinstance(message, dict):
        raise MalformedResponse(f"choices[0].message is not an object: {str(answer)[:200]}")
    content = message.get("content")
    refusal = message.get("refusal")
    finish = choice.get("finish_reason")
    reason: FinishReason = (
        "length"
        if finish == "length"
        else "refusal"
        if finish == "content_filter" or refusal
        else "stop"
        if finish in ("stop", None, "eos")
        else "other"
    )
    raw_usage = answer.get("usage")
    usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    return ChatResponse(
        text=content if isinstance(content, str) else "",
        finish_reason=reason,
        refusal=refusal if isinstance(refusal, str) else None,
        prompt_tokens=token_count(usage.get("prompt_tokens")),
        completion_tokens=token_count(usage.get("completion_tokens")),
        rate_limits=rate_limits,
    )
