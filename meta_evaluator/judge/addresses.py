"""Where a judge's calls go: its `base_url`, else the variable 0.3.3 read, else the default.

meta-evaluator 0.3.3 called every provider through LiteLLM, which takes a provider's address
from environment variables when the call names none (`OPENAI_BASE_URL`, `HOSTED_VLLM_API_BASE`
...); the OpenAI and Anthropic SDKs read theirs too. A judge that gives no `base_url` honours
the same variables, listed in `ADDRESS_VARIABLES`, the one table (docs/judges-and-endpoints.md
prints it), so that a key never goes to a host the user did not mean. They are read when a run
is planned and its clients built, never saved: the project folder keeps what the judge says.

The address a variable gives is not part of the judge's fingerprint (neither is the key): rows
asked at one address are reused at another. `status` and the dry run name the variable.

Example:
    >>> from meta_evaluator.judge import Judge
    >>> judge = Judge(id="j", llm_client="hosted_vllm", model="m", prompt={"id": "p",
    ...               "prompt": "Judge {response}"})
    >>> judge_address(judge, {}).describe()
    'http://localhost:8000/v1'
    >>> judge_address(judge, {"HOSTED_VLLM_API_BASE": "http://10.0.0.5:8000/v1"}).describe()
    'http://10.0.0.5:8000/v1 (from HOSTED_VLLM_API_BASE)'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from meta_evaluator.api_keys import check_endpoint_url
from meta_evaluator.errors import JudgeConfigError
from meta_evaluator.judge.config import Judge
from meta_evaluator.judge.providers import provider_of
from meta_evaluator.llm import anthropic, openai

__all__ = ["ADDRESS_VARIABLES", "Address", "AddressVariables", "configured_url", "judge_address"]

CLIENT_DEFAULTS = {"openai": openai.DEFAULT_BASE_URL, "anthropic": anthropic.DEFAULT_BASE_URL}
"""Where a client's calls go when nothing else names an address."""
CHAT_PATH = "/chat/completions"


@dataclass(frozen=True)
class AddressVariables:
    """The environment variables a client or provider takes its address from."""

    names: tuple[str, ...]
    """In LiteLLM's order; two of them set to different addresses are refused rather than one
    chosen silently."""
    reads: str = "the base URL (a whole `…/chat/completions` URL too)"
    """What the value is, as LiteLLM read it (for the documentation)."""
    strip: str = CHAT_PATH
    """An end of the value that is not part of our base URL (a whole chat-completions URL)."""
    append: str = ""
    """What our client needs after the value when it does not end with it already (Ollama's
    native root serves the OpenAI-compatible API under `/v1`)."""
    version: str | None = None
    """Azure only: the variable holding the `api-version` (LiteLLM's `AZURE_API_VERSION`)."""

    def base_url(self, value: str) -> str:
        """Our base URL for the variable's `value`."""
        url = value.strip().rstrip("/")
        if self.strip and url.endswith(self.strip):
            url = url[: -len(self.strip)]
        if self.append and not url.endswith(self.append):
            url += self.append
        return url


ADDRESS_VARIABLES: dict[str, AddressVariables] = {
    "openai": AddressVariables(("OPENAI_BASE_URL", "OPENAI_API_BASE")),
    "azure_openai": AddressVariables(
        ("AZURE_API_BASE",), reads="the resource's URL", version="AZURE_API_VERSION"
    ),
    "anthropic": AddressVariables(
        ("ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL"),
        reads="the API root (`https://api.anthropic.com`), `/v1/messages` optional",
        strip="/messages",
    ),
    "groq": AddressVariables(("GROQ_API_BASE",)),
    "together_ai": AddressVariables(("TOGETHER_AI_API_BASE",)),
    "openrouter": AddressVariables(("OPENROUTER_API_BASE",)),
    "fireworks_ai": AddressVariables(("FIREWORKS_API_BASE",)),
    "xai": AddressVariables(("XAI_API_BASE",)),
    "deepseek": AddressVariables(("DEEPSEEK_API_BASE",)),
    "mistral": AddressVariables(("MISTRAL_AZURE_API_BASE",)),  # LiteLLM's name; not ..._API_BASE
    "gemini": AddressVariables(
        ("GEMINI_API_BASE",),
        reads="the root of Gemini's own API (`…/v1beta`); `/openai` is added",
        append="/openai",
    ),
    "ollama": AddressVariables(
        ("OLLAMA_API_BASE",),
        reads="the server's root (`http://HOST:11434`); `/v1` is added",
        append="/v1",
    ),
    "vllm": AddressVariables((), reads="nothing: LiteLLM ran vLLM inside the process"),
    "hosted_vllm": AddressVariables(("HOSTED_VLLM_API_BASE",)),
    "huggingface": AddressVariables(
        ("HF_API_BASE", "HUGGINGFACE_API_BASE"),
        reads="the whole chat-completions URL; `/chat/completions` is dropped",
    ),
}
"""Client (`openai`, `azure_openai`, `anthropic`) or 0.3.3 provider prefix -> the variables
LiteLLM 1.x (as meta-evaluator 0.3.3 installed it) read its address from for a chat call, and
how a value becomes our base URL. `huggingface/<provider>` reads `huggingface`'s."""


@dataclass(frozen=True)
class Address:
    """Where a judge's calls go, and what set it; shows no key."""

    base_url: str | None
    """The base URL (None only for Azure without one, which cannot run)."""
    variable: str | None = None
    """The environment variable that set `base_url`; None: the judge's own, or the default."""
    api_version: str | None = None
    """Azure: the `api-version` (the judge's, else `AZURE_API_VERSION`'s)."""
    version_variable: str | None = None
    """The variable that set `api_version`, if one did."""

    def describe(self) -> str:
        """The address as shown by status and the dry run: `URL (from VARIABLE)`."""
        shown = self.base_url or "no base URL"
        return f"{shown} (from {self.variable})" if self.variable else shown


def configured_url(judge: Judge) -> str | None:
    """The address the judge's configuration names: its `base_url`, else its provider's default.

    None for a client whose default lives in the client (and for Azure). This, never an
    environment variable, is what the judge's fingerprint digests.
    """
    if judge.base_url is not None:
        return judge.base_url
    provider = provider_of(judge.provider) if judge.provider else None
    return provider.base_url if provider is not None else None


def judge_address(judge: Judge, environ: Mapping[str, str] | None = None) -> Address:
    """Where `judge`'s calls go, with `environ` (default `os.environ`) for the variables.

    The judge's own `base_url` (and `api_version`) wins; else the first variable of
    `ADDRESS_VARIABLES` set for its provider (or client); else the provider's default or the
    client's.

    Raises:
        JudgeConfigError: A variable read holds no http(s) URL with a host (or holds a
            credential), or two of a provider's variables name different addresses; the
            message names the variables, never a value that could hold a credential.
    """
    env = os.environ if environ is None else environ
    if judge.llm_client == "mock":
        return Address("mock://offline")
    table = ADDRESS_VARIABLES[_table_key(judge)]
    version, version_variable = judge.api_version, None
    if version is None and table.version and env.get(table.version, "").strip():
        version, version_variable = env[table.version].strip(), table.version
    if judge.base_url is not None:
        return Address(judge.base_url.rstrip("/"), None, version, version_variable)
    found = _from_environment(judge, table, env)
    if found is not None:
        return Address(found[0], found[1], version, version_variable)
    default = configured_url(judge) or CLIENT_DEFAULTS.get(judge.llm_client)
    return Address(default.rstrip("/") if default else None, None, version, version_variable)


def _table_key(judge: Judge) -> str:
    if judge.provider is not None:
        return judge.provider.partition("/")[0]
    return judge.llm_client


def _from_environment(
    judge: Judge, table: AddressVariables, env: Mapping[str, str]
) -> tuple[str, str] | None:
    """(base URL, variable) from the first of the table's variables that is set, or None."""
    given = [(name, env[name]) for name in table.names if env.get(name, "").strip()]
    if not given:
        return None
    urls = {name: table.base_url(value) for name, value in given}
    if len(set(urls.values())) > 1:
        names = " and ".join(urls)
        raise JudgeConfigError(
            f"judge {judge.id!r}: the environment variables {names} name different addresses "
            "for its endpoint, and it gives no base_url; unset one of them, or give the judge "
            "a base_url.",
            judge_id=judge.id,
            field="base_url",
        )
    name = given[0][0]
    try:
        return check_endpoint_url(urls[name]), name
    except ValueError as exc:  # the value is never echoed: it may hold a credential
        problem = (
            "is not an http:// or https:// URL with a host"
            if str(exc).startswith("base_url must be")
            else "holds a credential (a user name, password or key), which status, the dry run "
            "and the logs would show; put the key in the variable the judge's api_key_env names"
        )
        raise JudgeConfigError(
            f"judge {judge.id!r}: the environment variable {name}, read for the judge's address "
            f"because it gives no base_url (as meta-evaluator 0.3.3 did through LiteLLM), "
            f"{problem}; set it to the endpoint's http(s) URL, unset it, or give the judge a "
            "base_url.",
            judge_id=judge.id,
            field="base_url",
        ) from None
