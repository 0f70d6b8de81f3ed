"""Constructor checks of the built-in scorers: every bad argument reported at once, one wording.

A scorer collects one line per problem and calls `refuse`, which raises a single ScoringError
naming the scorer: `FairnessScorer: positive_label must be a label; got ''; gold_column must
be a column name or None; got 3.`
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from meta_evaluator.errors import ScoringError

__all__ = ["name_problems", "one_of_problems", "refuse"]


def _is_name(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def name_problems(
    required: Mapping[str, Any] | None = None,
    optional: Mapping[str, Any] | None = None,
    *,
    kind: str = "column name",
) -> list[str]:
    """One line per argument that is not a non-empty name (None is allowed for `optional`)."""
    problems = [
        f"{arg} must be a {kind}; got {value!r}"
        for arg, value in (required or {}).items()
        if not _is_name(value)
    ]
    problems += [
        f"{arg} must be a {kind} or None; got {value!r}"
        for arg, value in (optional or {}).items()
        if value is not None and not _is_name(value)
    ]
    return problems


def one_of_problems(arg: str, value: Any, allowed: Collection[Any]) -> list[str]:
    """A line when `value` is not one of `allowed`: `weights must be None, 'linear' or ...`."""
    if value in allowed:
        return []
    shown = [repr(a) for a in allowed]
    listed = ", ".join(shown[:-1]) + f" or {shown[-1]}" if len(shown) > 1 else shown[0]
    return [f"{arg} must be {listed}; got {value!r}"]


def refuse(scorer: str, problems: list[str]) -> None:
    """Raise one ScoringError listing every problem of `scorer`'s arguments (none: return)."""
    if problems:
        raise ScoringError(f"{scorer}: " + "; ".join(problems) + ".")
