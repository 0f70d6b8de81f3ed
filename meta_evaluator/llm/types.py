"""What a judge sends to an LLM and what comes back, whatever the provider."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

__all__ = [
    "ChatRequest",
    "ChatResponse",
    "FinishReason",
    "OutputSchema",
    "RateLimits",
    "token_count",
]

FinishReason = Literal["stop", "length", "refusal", "other"]


@dataclass(frozen=True)
class OutputSchema:
    """A JSON schema the answer must follow, sent as `response_format` or as a forced tool."""

    name: str
    schema: dict[str, Any]

    @cached_property
    def sorted_json(self) -> str:
        """The schema as `json.dumps(schema, sort_keys=True)`, made once.

        Every row's prompt hash includes it.
        """
        return json.dumps(self.schema, sort_keys=True)


@dataclass(frozen=True)
class ChatRequest:
    """One call: the messages, and the settings a judge may set (None leaves the server's)."""

    model: str
    messages: list[dict[str, str]]
    temperature: float | None = None
    max_tokens: int | None = None
    output_schema: OutputSchema | None = None
    extra_headers: dict[str, str] = field(default_factory=dict)

    def estimated_tokens(self) -> int:
        """A cheap upper estimate of the tokens this call uses (for tokens-per-minute budgets)."""
        return self.estimated_prompt_tokens() + (self.max_tokens or 512)

    def estimated_prompt_tokens(self) -> int:
        """A cheap estimate of the prompt's tokens: one per four characters of the messages."""
        return sum(len(m["content"]) for m in self.messages) // 4 + 1


@dataclass(frozen=True, slots=True)
class RateLimits:
    """What a response's rate-limit headers say of the endpoint's requests budget.

    Read from OpenAI's `x-ratelimit-{limit,remaining,reset}-requests` or Anthropic's
    `anthropic-ratelimit-requests-{limit,remaining,reset}` (`classify.parse_rate_limits`).
    """

    remaining: float
    """Requests the server would still admit when it answered."""
    limit: float | None = None
    """The budget in requests per minute (both providers count per minute); None: not sent."""
    reset: float | None = None
    """Seconds until the budget is full again, from when the answer came; None: not sent."""


@dataclass(frozen=True)
class ChatResponse:
    """What came back: text (or a structured object from a tool call), why it ended, tokens."""

    text: str
    structured: dict[str, Any] | None = None
    finish_reason: FinishReason = "stop"
    refusal: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    rate_limits: RateLimits | None = None
    """The endpoint's rate-limit headers on this answer (None when it sent none)."""


def token_count(value: Any) -> int | None:
    """A token count from a provider's usage object, or None for anything else.

    Anything else: a string, a bool, a negative number, or a number past int64.
    """
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63:
        return value
    return None
