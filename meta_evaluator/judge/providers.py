"""The provider prefixes of meta-evaluator 0.3 (LiteLLM names), in the one table that maps them.

A judge written for 0.3.3 names its provider in `llm_client` (`groq`, `huggingface/together`,
`fireworks_ai` ...). Those that serve the OpenAI chat-completions API are reached through our
OpenAI-compatible client (the judge keeps the prefix as its `provider`), at the address
LiteLLM used (the provider's address variable, else its default: `judge.addresses`) with the
key from the variables LiteLLM read, in its order (the first one set); the others (Bedrock,
Vertex AI ...) are refused with a message that says how to reach them: an OpenAI-compatible
gateway in front of them, named by `base_url`. No LiteLLM, no provider SDK.

`resolve_client` is the one place a judge's `llm_client` aliases resolve (`azure` too).

Example:
    >>> resolved = resolve_client({"llm_client": "groq", "model": "llama-3.1-8b-instant"})
    >>> resolved["llm_client"], resolved["provider"], resolved.get("api_key_env")
    ('openai', 'groq', None)
    >>> PROVIDERS["groq"].base_url
    'https://api.groq.com/openai/v1'
    >>> PROVIDERS["openrouter"].key_variables
    ('OPENROUTER_API_KEY', 'OR_API_KEY')
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["CLIENTS", "PROVIDERS", "Provider", "check_client", "provider_of", "resolve_client"]

CLIENTS = ("openai", "azure_openai", "anthropic", "mock")
"""The clients a judge speaks through; every prefix below resolves to one of them."""


@dataclass(frozen=True)
class Provider:
    """An OpenAI-compatible provider: where it answers and the variables holding its key."""

    name: str
    """The prefix as 0.3.3 users write it in `llm_client`."""
    base_url: str
    """Its OpenAI-compatible endpoint."""
    key_variables: tuple[str, ...]
    """The environment variables LiteLLM read its key from, in LiteLLM's order: the first one
    set (and not empty) holds the key, as it did for 0.3.3 (none: a local server, no key)."""
    model_prefix: str = ""
    """Put before a model name that lacks it (Fireworks: `accounts/fireworks/models/`)."""
    model_suffix: str = ""
    """Put after a model name without one (Hugging Face: `:together`, the Inference Provider)."""

    def model_name(self, model: str) -> str:
        """The model as the endpoint expects it (as LiteLLM sent it)."""
        if self.model_prefix and not model.startswith("accounts/"):
            model = self.model_prefix + model
        if self.model_suffix and ":" not in model:
            model += self.model_suffix
        return model


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider("groq", "https://api.groq.com/openai/v1", ("GROQ_API_KEY",)),
        Provider(
            "together_ai",
            "https://api.together.xyz/v1",
            ("TOGETHER_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHERAI_API_KEY", "TOGETHER_AI_TOKEN"),
        ),
        Provider(
            "openrouter", "https://openrouter.ai/api/v1", ("OPENROUTER_API_KEY", "OR_API_KEY")
        ),
        Provider(
            "fireworks_ai",
            "https://api.fireworks.ai/inference/v1",
            (
                "FIREWORKS_API_KEY",
                "FIREWORKS_AI_API_KEY",
                "FIREWORKSAI_API_KEY",
                "FIREWORKS_AI_TOKEN",
            ),
            model_prefix="accounts/fireworks/models/",
        ),
        Provider("xai", "https://api.x.ai/v1", ("XAI_API_KEY",)),
        Provider("deepseek", "https://api.deepseek.com/v1", ("DEEPSEEK_API_KEY",)),
        # LiteLLM's first name is for Mistral on Azure AI (with MISTRAL_AZURE_API_BASE)
        Provider(
            "mistral", "https://api.mistral.ai/v1", ("MISTRAL_AZURE_API_KEY", "MISTRAL_API_KEY")
        ),
        Provider(
            "gemini",
            "https://generativelanguage.googleapis.com/v1beta/openai",
            ("GOOGLE_API_KEY", "GEMINI_API_KEY", "PALM_API_KEY"),
        ),
        Provider("ollama", "http://localhost:11434/v1", ()),
        Provider("vllm", "http://localhost:8000/v1", ()),
        Provider("hosted_vllm", "http://localhost:8000/v1", ()),
    )
}
"""Prefix → provider, with the key variables LiteLLM 1.x (as meta-evaluator 0.3.3 installed it)
read for a chat call. `huggingface/<provider>` is built by `provider_of` (Inference Providers)."""

HUGGINGFACE = Provider(
    "huggingface", "https://router.huggingface.co/v1", ("HF_TOKEN", "HUGGINGFACE_API_KEY")
)
"""Hugging Face Inference Providers: one OpenAI-compatible router; the provider goes after the
model, `meta-llama/Llama-3.3-70B-Instruct:together`."""

_GATEWAY = (
    "reach it through an OpenAI-compatible gateway in front of it (for example a LiteLLM proxy "
    "server you run) and give the judge llm_client: openai, base_url: the gateway's URL and "
    "api_key_env: the variable holding the gateway's key"
)
_NOT_BUNDLED = {
    "bedrock": "AWS Bedrock signs requests with AWS credentials (SigV4), which this version "
    "does not bundle",
    "vertex_ai": "Vertex AI authenticates with Google Cloud credentials, which this version "
    "does not bundle",
    "sagemaker": "SageMaker endpoints sign requests with AWS credentials (SigV4)",
    "azure_ai": "Azure AI model deployments serve an OpenAI-compatible API at their own URL: "
    "give it as base_url",
    "watsonx": "watsonx.ai authenticates with IBM Cloud tokens",
    "cohere": "Cohere's own API is not the chat-completions API",
    "huggingface": "Hugging Face needs an Inference Provider: write huggingface/<provider> "
    "(huggingface/together, huggingface/fireworks-ai ...)",
}
"""LiteLLM prefixes of 0.3.3's docs that no table entry serves, with why."""
_OR_ELSE = {
    "bedrock": "Bedrock's own OpenAI-compatible endpoint also works as base_url",
    "vertex_ai": "for Gemini models, llm_client: gemini uses Google's OpenAI-compatible "
    "endpoint with GEMINI_API_KEY",
    "cohere": "its compatibility endpoint https://api.cohere.ai/compatibility/v1 works as base_url",
}
"""What else reaches them, said after the gateway (the advice that always works)."""


def provider_of(llm_client: str) -> Provider | None:
    """The OpenAI-compatible provider a 0.3.3 `llm_client` names, or None."""
    found = PROVIDERS.get(llm_client)
    if found is not None:
        return found
    head, _, provider = llm_client.partition("/")
    if head == "huggingface" and provider and "/" not in provider:
        return Provider(
            f"huggingface/{provider}",
            HUGGINGFACE.base_url,
            HUGGINGFACE.key_variables,
            model_suffix=f":{provider}",
        )
    return None


def resolve_client(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A judge's fields with `llm_client` resolved to one of `CLIENTS`.

    A provider prefix becomes `openai` with the prefix as `provider` and the provider's model
    name, unless the judge sets them itself (its own values win). Its `base_url` and
    `api_key_env` stay as given: without them, the address and the key are worked out when the
    judge runs (`judge.addresses`: the provider's address variable, else its default; the key:
    the first of the provider's `key_variables` that is set). `azure` (0.3.3's
    name) is `azure_openai`, with 0.3.3's key variable `AZURE_API_KEY` unless `api_key_env` is
    set. Any other value is left as it is, for `check_client` to refuse.
    """
    client = fields.get("llm_client")
    resolved = dict(fields)
    if client == "azure":
        resolved["llm_client"] = "azure_openai"
        if resolved.get("api_key_env") is None:
            resolved["api_key_env"] = "AZURE_API_KEY"
        return resolved
    provider = provider_of(client) if isinstance(client, str) else None
    if provider is None:
        return resolved
    resolved["llm_client"] = "openai"
    if resolved.get("provider") is None:
        resolved["provider"] = provider.name
    model = resolved.get("model")
    if isinstance(model, str) and model.strip():
        resolved["model"] = provider.model_name(model)
    return resolved


def check_client(client: Any) -> Any:
    """`client` when it is one of `CLIENTS` (or not text, for the type check to name).

    Raises:
        ValueError: It names a provider that only a gateway can reach (saying how), or nothing
            known (listing what is).
    """
    if not isinstance(client, str) or client in CLIENTS:
        return client
    head = client.partition("/")[0]
    if head in _NOT_BUNDLED:
        instead = f"; or else, {_OR_ELSE[head]}" if head in _OR_ELSE else ""
        raise ValueError(
            f"{client!r} is not served by this version: {_NOT_BUNDLED[head]}; " + _GATEWAY + instead
        )
    known = [*CLIENTS, *PROVIDERS, "huggingface/<provider>", "azure"]
    match = difflib.get_close_matches(client, known, n=1)
    hint = f" (did you mean {match[0]!r}?)" if match else ""
    raise ValueError(
        f"{client!r} is not known{hint}; use one of {', '.join(CLIENTS)} or a provider "
        f"prefix ({', '.join(PROVIDERS)}, huggingface/<provider>). For any other provider "
        "(a LiteLLM name of meta-evaluator 0.3), " + _GATEWAY
    )
