"""A fake OpenAI/Anthropic-compatible LLM server for tests and benchmarks.

Import from `tests.fake_llm.server`, or from here (names load lazily, so that
`python -m tests.fake_llm.server` does not import the module twice).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.fake_llm.server import (
        FAULT_KINDS,
        FakeConfig,
        ServerHandle,
        ThreadHandle,
        allowed_values,
        allowed_values_schema,
        count_tokens,
        expected_answer,
        expected_text,
        free_text,
        prompt_key,
        run_server,
        start_in_thread,
    )

__all__ = [
    "FAULT_KINDS",
    "FakeConfig",
    "ServerHandle",
    "ThreadHandle",
    "allowed_values",
    "allowed_values_schema",
    "count_tokens",
    "expected_answer",
    "expected_text",
    "free_text",
    "prompt_key",
    "run_server",
    "start_in_thread",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("tests.fake_llm.server"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
