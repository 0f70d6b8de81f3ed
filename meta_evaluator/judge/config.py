"""Judge and Prompt: the configuration of one LLM judge (what it calls, with which prompt)."""

from __future__ import annotations

import re
import string
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from meta_evaluator._validation import ConfigModel
from meta_evaluator.api_keys import (
    SECRET_NAME,
    check_endpoint_url,
    check_key_variable,
    refuse_keys,
)
from meta_evaluator.errors import JudgeConfigError, UnsafeNameError
from meta_evaluator.eval_task.eval_task import AnsweringMethod, resolve_answering_method
from meta_evaluator.judge.providers import PROVIDERS, check_client, provider_of, resolve_client
from meta_evaluator.storage import check_safe_name, path_argument

__all__ = ["Judge", "LLMClientName", "MockSettings", "Prompt"]

_HEADER_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+")
"""A header name as HTTP allows it (a token)."""

_FRAMING_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "content-type", "keep-alive",
     "upgrade", "te", "trailer", "expect"}
)  # fmt: skip
"""Headers the client writes for each request: one given twice would break the request."""

LLMClientName = Literal["openai", "azure_openai", "anthropic", "mock"]

MAX_PROMPT_BYTES = 1_000_000
"""The largest prompt file read (a template, not a data set: rows fill it in)."""


class Prompt(ConfigModel):
    """A judge's prompt template: `{column}` placeholders are filled from each data row.

    Example:
        >>> Prompt(id="refusal_v1", prompt="Did {response} refuse {prompt}?").placeholders
        ['response', 'prompt']
    """

    error_class = JudgeConfigError

    id: str
    """A name for this prompt version (shown in results; part of the judge's fingerprint)."""

    prompt: str
    """The template text; `{{` and `}}` stand for literal braces."""

    @field_validator("prompt")
    @classmethod
    def _check_template(cls, text: str) -> str:
        if not text.strip():
            raise ValueError("the prompt is empty")
        refuse_keys(text, "the prompt")
        _parse_placeholders(text)
        return text

    @property
    def placeholders(self) -> list[str]:
        """The column names the template fills in, in order of first use."""
        return _parse_placeholders(self.prompt)

    @classmethod
    def from_file(cls, path: str | Path, prompt_id: str | None = None) -> Prompt:
        """Read a template from a UTF-8 text file; the id defaults to the file's stem.

        Raises:
            JudgeConfigError: The file cannot be read or is not a valid template.
        """
        file = path_argument(path, what="prompt_file", field="prompt_file", error=JudgeConfigError)
        try:
            if not file.exists():
                raise OSError(f"no such file: {file}")
            if not file.is_file():  # not a FIFO, a device (/dev/zero) or a folder
                raise OSError(f"{file} is not a regular file")
            with file.open("rb") as handle:
                data = handle.read(MAX_PROMPT_BYTES + 1)
            if len(data) > MAX_PROMPT_BYTES:
                raise OSError(f"it is larger than {MAX_PROMPT_BYTES:,} bytes")
            text = data.decode("utf-8-sig")  # drop a byte-order mark if present
        except (OSError, UnicodeDecodeError) as exc:
            raise JudgeConfigError(
                f"{file}: cannot read the prompt file ({exc}); check the path.",
                path=file,
                field="prompt_file",
            ) from exc
        try:
            return cls(id=prompt_id or file.stem, prompt=text)
        except JudgeConfigError as exc:
            raise JudgeConfigError(
                f"{file}: {exc.message}", errors=exc.errors, path=file, field="prompt_file"
            ) from exc


def _parse_placeholders(text: str) -> list[str]:
    names: list[str] = []
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ValueError(
            f"the prompt is not a valid template ({exc}); write literal braces as '{{{{' and '}}}}'"
        ) from None
    for _, field, spec, conversion in parsed:
        if field is None:
            continue
        if not field or not re.fullmatch(r"[^\[\].!:{}]+", field) or spec or conversion:
            raise ValueError(
                f"placeholder {{{field}{'!' + conversion if conversion else ''}"
                f"{':' + spec if spec else ''}}} must be a plain column name like {{response}}; "
                "write literal braces as '{{' and '}}'"
            )
        if field not in names:
            names.append(field)
    return names


class MockSettings(ConfigModel):
    """How the offline `mock` client misbehaves, for demos and dry runs (rows chosen by hash)."""

    error_class = JudgeConfigError

    invalid_rate: float = Field(default=0.0, ge=0.0, le=1.0, strict=True)
    """Share of rows answered with text that matches no label."""
    error_rate: float = Field(default=0.0, ge=0.0, le=1.0, strict=True)
    """Share of rows that fail as a server error would."""
    latency: float = Field(default=0.0, ge=0.0, le=60.0, strict=True)
    """Seconds each answer takes."""


class Judge(ConfigModel):
    """One LLM judge: the client and model it calls and the prompt it is given.

    Optional settings left unset (`None`) take the run's or the task's value.

    Example:
        >>> judge = Judge(id="offline", llm_client="mock", model="mock-1",
        ...               prompt=Prompt(id="p", prompt="Judge {response}"))
        >>> judge.max_concurrency is None
        True
    """

    error_class = JudgeConfigError

    @classmethod
    def _error_root(cls, data: dict[str, Any]) -> str:
        judge_id = data.get("id")
        return f"judge {judge_id!r}" if isinstance(judge_id, str) else "judge"

    id: str
    """The judge's id; it names files in the project folder, so it must be a safe file name."""

    llm_client: LLMClientName
    """Which API the judge speaks: `openai` (any OpenAI-compatible server), `azure_openai`,
    `anthropic`, or `mock` (offline, deterministic). A provider prefix of meta-evaluator 0.3
    (`groq`, `huggingface/together` ...) resolves to `openai` with that `provider`, its key
    variable and its address (`meta_evaluator.judge.providers`)."""

    model: str = Field(min_length=1)
    """The model name the endpoint expects (for Azure, the deployment name)."""

    prompt: Prompt
    """The prompt template."""

    base_url: str | None = None
    """The endpoint's base URL (`http://127.0.0.1:8000/v1`). `None`: the address variable that
    meta-evaluator 0.3.3 (through LiteLLM) read for the client or provider, when set
    (`OPENAI_BASE_URL`, `HOSTED_VLLM_API_BASE` ...: `judge.addresses`), else the provider's
    default."""

    provider: str | None = None
    """The OpenAI-compatible provider, as a meta-evaluator 0.3 prefix (`groq`, `hosted_vllm`,
    `huggingface/together` ...); `llm_client: <prefix>` sets it. Without `base_url`, its
    address variable or default address is used. Only with `llm_client: openai`."""

    api_key_env: str | None = None
    """The name of the environment variable holding the API key (never the key itself)."""

    api_version: str | None = None
    """Azure OpenAI only: the `api-version` query parameter."""

    temperature: float | None = Field(default=None, ge=0.0, le=2.0, strict=True)
    """Sampling temperature; `None` leaves the server's default."""

    max_tokens: int | None = Field(default=None, ge=1, strict=True)
    """Most tokens the judge may generate per answer; `None` leaves the server's default."""

    answering_method: AnsweringMethod | None = None
    """Overrides the task's answering method for this judge (`instructor` reads as `structured`)."""

    max_concurrency: int | None = Field(default=None, ge=1, strict=True)
    """Requests in flight for this judge; wins over the run's `max_concurrency` when set."""

    extra_headers: dict[str, str] = Field(default_factory=dict)
    """HTTP headers added to every request (not for credentials: use `api_key_env`)."""

    mock: MockSettings | None = None
    """Only for `llm_client: mock`: rates of invalid answers and errors, and latency."""

    cache: bool = Field(default=True, strict=True)
    """Whether the judge's answers go through the response cache (when the run's `cache` is
    on too); False for a judge meant to measure drift, whose every row must be asked. Not part
    of the fingerprint: it changes what is paid, not what is asked."""

    @field_validator("id")
    @classmethod
    def _check_id(cls, judge_id: str) -> str:
        refuse_keys(judge_id, "the judge id")
        try:
            check_safe_name(judge_id, field="judge id")
        except UnsafeNameError as exc:
            raise ValueError(exc.message) from None
        if re.fullmatch(r".+\.shard-[0-9]+-of-[0-9]+", judge_id):
            raise ValueError(
                f"judge id {judge_id!r} ends like a shard's files ('.shard-k-of-N'); choose "
                "another id"
            )
        return judge_id

    @field_validator("answering_method", mode="before")
    @classmethod
    def _resolve_alias(cls, method: Any) -> Any:
        return resolve_answering_method(method)

    @model_validator(mode="before")
    @classmethod
    def _resolve_client_alias(cls, data: Any) -> Any:
        # 0.3's names ("azure", "groq", "huggingface/together" ...), in judge/providers.py.
        return resolve_client(data) if isinstance(data, dict) else data

    @field_validator("llm_client", mode="before")
    @classmethod
    def _known_client(cls, client: Any) -> Any:
        return check_client(client)

    @field_validator("model")
    @classmethod
    def _check_model(cls, model: str) -> str:
        if not model.strip():
            raise ValueError("model must name a model, got only white space")
        return model

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, url: str | None) -> str | None:
        return None if url is None else check_endpoint_url(url)

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, provider: str | None) -> str | None:
        if provider is not None and provider_of(provider) is None:
            raise ValueError(
                f"{provider!r} is not a provider prefix; use one of {', '.join(PROVIDERS)} or "
                "huggingface/<provider>"
            )
        return provider

    @field_validator("model", "api_version")
    @classmethod
    def _check_no_key(cls, value: str | None, info: ValidationInfo) -> str | None:
        return None if value is None else refuse_keys(value, str(info.field_name))

    @field_validator("api_key_env")
    @classmethod
    def _check_env_name(cls, name: str | None) -> str | None:
        # Never echoed: a refused value is likely a key (meta_evaluator/api_keys.py).
        return None if name is None else check_key_variable(name)

    @field_validator("extra_headers", mode="before")
    @classmethod
    def _no_headers(cls, headers: Any) -> Any:
        # meta-evaluator 0.3 wrote `extra_headers: null` (its default) for a judge without any.
        return {} if headers is None else headers

    @field_validator("extra_headers")
    @classmethod
    def _check_headers(cls, headers: dict[str, str]) -> dict[str, str]:
        for name, value in headers.items():
            refuse_keys(f"{name}: {value}", "extra_headers")
            if not _HEADER_NAME.fullmatch(name) or "\r" in value or "\n" in value:
                raise ValueError(
                    f"extra_headers {name!r}: a header name is letters, digits and -_.; no "
                    "line break in its value"
                )
        framing = sorted(h for h in headers if h.lower() in _FRAMING_HEADERS)
        if framing:
            raise ValueError(
                f"extra_headers {framing} are set by the HTTP client for each request (they say "
                "how long the body is and where it goes); leave them out"
            )
        secret = sorted(h for h in headers if SECRET_NAME.search(h))
        if secret:
            raise ValueError(
                f"extra_headers {secret} carry credentials, which would be saved in the project "
                "folder; put the key in an environment variable and name it in api_key_env"
            )
        return headers

    @model_serializer(mode="wrap")
    def _omit_cache_when_on(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # `cache` is written only when off: main_state.json of a judge that keeps the default
        # stays as it was, readable by versions before the response cache.
        data: dict[str, Any] = handler(self)
        if data.get("cache") is True:
            del data["cache"]
        if "provider" in data and data["provider"] is None:  # likewise for a judge without one
            del data["provider"]
        return data

    @model_validator(mode="after")
    def _mock_only_for_mock(self) -> Judge:
        if self.mock is not None and self.llm_client != "mock":
            raise ValueError("mock settings apply only to llm_client 'mock'")
        if self.provider is not None and self.llm_client != "openai":
            raise ValueError(
                f"provider {self.provider!r} is served by the OpenAI-compatible client: give "
                "llm_client: openai (or the prefix alone, llm_client: " + self.provider + ")"
            )
        return self
