"""The one rule by which answers and allowed labels are compared (both sides, always).

Used for a judge's answers (`judge/`), imported results and annotations (`results/`) and the
annotation page (`annotate/`), so a label means the same wherever it comes from.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from meta_evaluator._util import shown

if TYPE_CHECKING:
    from meta_evaluator.eval_task.eval_task import EvalTask

__all__ = ["LabelCheck", "check_label", "check_values", "normalize_label"]

_SPLIT = re.compile(r"[,;\n]")


def normalize_label(text: str) -> str:
    r"""Compose accents (NFC), collapse white space and fold case, so equal-looking labels match.

    Example:
        >>> normalize_label(" Not  Rejection\n")
        'not rejection'
        >>> normalize_label("cafe\u0301") == normalize_label("CAFÉ")
        True
    """
    return " ".join(unicodedata.normalize("NFC", text).split()).casefold()


@dataclass(frozen=True)
class LabelCheck:
    """The labels read from one response, the row's outcome and its precise status."""

    outcome: Literal["valid", "invalid"]
    status: str
    labels: dict[str, Any] = field(default_factory=dict)
    error_message: str | None = None


def check_values(
    raw: Mapping[str, Any],
    task: EvalTask,
    *,
    truncated: bool = False,
    required: Sequence[str] | None = None,
) -> LabelCheck:
    """Check each task's value in `raw` (task name → value, as answered or imported).

    The status names why a required task failed; the tasks that are fine are kept either way.
    `required` replaces the task's required tasks (imports of some tasks only).
    """
    labels: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for name in task.task_names:
        value, problem = check_label(task, name, raw.get(name))
        if problem is None:
            labels[name] = value
        else:
            problems[name] = problem
    needed = task.get_required_tasks() if required is None else required
    missing = [t for t in needed if t in problems]
    if not missing:
        return LabelCheck("valid", "success", labels)
    message = "; ".join(f"{t}: {problems[t]}" for t in missing)
    if any("not allowed" in problems[t] for t in missing):
        status = "label_not_allowed"
    elif labels:
        status = "partial"
    elif truncated:
        status = "truncated"
    else:
        status = "parsing_error"
    return LabelCheck("invalid", status, labels, message)


def _as_text(value: Any) -> Any:
    """Numbers and booleans as a label's text (`1` for label "1", `true`); lists item by item."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return [_as_text(v) for v in value]
    return value


def check_label(task: EvalTask, name: str, value: Any) -> tuple[Any, str | None]:
    """The canonical value of one task, or why it is unusable."""
    if value is None:
        return None, "missing"
    value = _as_text(value)
    allowed = task.allowed_labels(name)
    if allowed is None:
        if not isinstance(value, str) or not value.strip():
            return None, "empty free text"
        return value.strip(), None
    canonical = {normalize_label(label): label for label in allowed}
    if task.task_kind(name) == "multilabel":
        items = _SPLIT.split(value) if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            return None, f"expected a list of labels, got {shown(value)}"
        items = [i for i in items if i.strip()]
        unknown = [i for i in items if normalize_label(i) not in canonical]
        if unknown:
            return None, f"label(s) {shown(unknown)} not allowed (allowed: {allowed})"
        chosen = {canonical[normalize_label(i)] for i in items}
        return [label for label in allowed if label in chosen], None
    if not isinstance(value, str):
        return None, f"expected a label, got {shown(value)}"
    key = normalize_label(value)
    if key not in canonical:
        return None, f"label {shown(value.strip())} not allowed (allowed: {allowed})"
    return canonical[key], None
