"""Building the client a judge needs, with its key read from the environment, before any call."""

from __future__ import annotations

import os
from typing import Protocol

import httpx

from meta_evaluator.api_keys import dotenv_hint, read_api_key
from meta_evaluator.errors import JudgeConfigError
from meta_evaluator.judge.addresses import judge_address
from meta_evaluator.judge.config import Judge
from meta_evaluator.judge.providers import provider_of
from meta_evaluator.llm.anthropic import AnthropicClient
from meta_evaluator.llm.anthropic_batch import AnthropicBatchClient
from meta_evaluator.llm.batch import BatchClient
from meta_evaluator.llm.cache import RequestKeys
from meta_evaluator.llm.limits import EndpointKey, endpoint_key
from meta_evaluator.llm.mock import MockClient
from meta_evaluator.llm.openai import OpenAIClient
from meta_evaluator.llm.openai_batch import OpenAIBatchClient
from meta_evaluator.llm.transport import PooledTransport
from meta_evaluator.llm.types import ChatRequest, ChatResponse

__all__ = [
    "LLMClient",
    "build_batch_client",
    "build_client",
    "judge_endpoint",
    "key_variable",
    "request_keys",
]

# The variable read when a judge of a hosted provider names none.
DEFAULT_KEY_VARIABLES = {
    "openai": "OPENAI_API_KEY",
    "azure_openai": "AZURE_OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}


class LLMClient(Protocol):
    """What the runner needs of a client: one attempt at a call, and where calls go."""

    def url(self, model: str) -> str:
        """The URL requests for `model` go to."""
        ...

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One attempt at `request`."""
        ...


def _api_key(judge: Judge) -> str | None:
    """The key from the environment, or None where none is needed (mock, a local server).

    A judge's own `api_key_env` wins. A judge of a hosted client without one reads the
    client's usual variable, at whatever address (an address variable such as
    `OPENAI_BASE_URL` too, as LiteLLM and the OpenAI SDK sent `OPENAI_API_KEY` there); a
    provider's judge reads the first of the provider's `key_variables` that is set, as LiteLLM
    did (none for local servers).
    """
    variables = _key_variables(judge)
    variable = key_variable(judge)
    if variable is None:
        return None
    try:
        return read_api_key(variable)
    except ValueError as exc:  # names the variable and the problem, never the key
        problem = f"{exc}"
        if len(variables) > 1 and not os.environ.get(variable):
            problem = (
                f"none of the variables {', '.join(variables)} is set (LiteLLM read "
                f"{judge.provider}'s key from the first one set, as meta-evaluator 0.3.3 did); "
                "export one, or name another variable in api_key_env" + dotenv_hint()
            )
        raise JudgeConfigError(
            f"judge {judge.id!r}: api_key_env: {problem}.",
            judge_id=judge.id,
            field="api_key_env",
        ) from exc


def key_variable(judge: Judge) -> str | None:
    """The variable a judge's key is read from (the first set of several), or None: no key."""
    variables = _key_variables(judge)
    return next((name for name in variables if os.environ.get(name)), None) or (
        variables[0] if variables else None
    )


def _key_variables(judge: Judge) -> tuple[str, ...]:
    """The variables the judge's key may be in, in the order they are read."""
    if judge.llm_client == "mock":
        return ()
    if judge.api_key_env is not None:
        return (judge.api_key_env,)
    if judge.provider is not None:
        provider = provider_of(judge.provider)
        return provider.key_variables if provider is not None else ()
    if judge.base_url is None or judge.llm_client == "azure_openai":
        return (DEFAULT_KEY_VARIABLES[judge.llm_client],)
    return ()


def judge_endpoint(judge: Judge, *, key: bool = True) -> tuple[EndpointKey, str | None]:
    """The endpoint key a judge's calls share limits under, and its API key.

    With `key=False` the key is not read (None): for a judge that makes no call, which needs
    none (every row reused).

    Raises:
        JudgeConfigError: The judge's key variable is not set (with `key`), an address
            variable it reads holds no http(s) URL, or Azure lacks its settings.
    """
    address = judge_address(judge)
    if judge.llm_client == "azure_openai" and not (address.base_url and address.api_version):
        raise JudgeConfigError(
            f"judge {judge.id!r}: azure_openai needs base_url (https://NAME.openai.azure.com) and "
            "api_version, in its configuration or, as meta-evaluator 0.3 read them, in the "
            "environment variables AZURE_API_BASE and AZURE_API_VERSION.",
            judge_id=judge.id,
            field="base_url" if not address.base_url else "api_version",
        )
    api_key = _api_key(judge) if key else None
    assert address.base_url is not None  # only Azure goes without one, refused above
    return endpoint_key(judge.llm_client, address.base_url, api_key), api_key


def build_client(
    judge: Judge,
    http: httpx.AsyncClient | None,
    api_key: str | None,
    *,
    timeout: float,
    direct: PooledTransport | None = None,
) -> LLMClient:
    """The client for `judge`, sending through `http` (None only for the mock).

    `direct`, the transport `http` was built over, takes the chat calls straight.
    """
    if judge.llm_client == "mock":
        settings = judge.mock
        return MockClient(
            invalid_rate=settings.invalid_rate if settings else 0.0,
            error_rate=settings.error_rate if settings else 0.0,
            latency=settings.latency if settings else 0.0,
        )
    assert http is not None, "HTTP judges need an HTTP client"
    address = judge_address(judge)
    if judge.llm_client == "anthropic":
        return AnthropicClient(
            http, base_url=address.base_url, api_key=api_key, timeout=timeout, direct=direct
        )
    return OpenAIClient(
        http,
        base_url=address.base_url,
        api_key=api_key,
        azure_api_version=address.api_version if judge.llm_client == "azure_openai" else None,
        timeout=timeout,
        direct=direct,
    )


def build_batch_client(
    judge: Judge, http: httpx.AsyncClient, api_key: str | None, *, timeout: float
) -> BatchClient:
    """The batch engine of `judge`'s provider, sending through `http` (not for the mock)."""
    address = judge_address(judge)
    if judge.llm_client == "anthropic":
        return AnthropicBatchClient(
            http,
            base_url=address.base_url,
            api_key=api_key,
            timeout=timeout,
            extra_headers=judge.extra_headers,
        )
    return OpenAIBatchClient(
        http,
        base_url=address.base_url,
        api_key=api_key,
        azure_api_version=address.api_version if judge.llm_client == "azure_openai" else None,
        timeout=timeout,
        extra_headers=judge.extra_headers,
    )


def request_keys(judge: Judge, client: LLMClient) -> RequestKeys | None:
    """The response cache's keys for `judge`'s requests through `client`; None for the mock.

    The mock answers offline and for free: there is nothing to save by storing its answers.
    """
    if not isinstance(client, OpenAIClient | AnthropicClient):
        return None
    url = client.url(judge.model)
    return RequestKeys(judge.llm_client, url, judge.extra_headers, body=client.body)
