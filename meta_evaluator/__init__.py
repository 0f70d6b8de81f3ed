"""meta-evaluator: tell whether an LLM judge can stand in for human annotators.

`import meta_evaluator` is cheap: `MetaEvaluator` (and with it polars and pydantic) loads on
first use, and plotting, HTTP clients and the annotation server load only when called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from meta_evaluator._version import __version__

if TYPE_CHECKING:
    from meta_evaluator.project import MetaEvaluator

__all__ = ["MetaEvaluator", "__version__"]

_LAZY = {"MetaEvaluator": "meta_evaluator.project"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'meta_evaluator' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
