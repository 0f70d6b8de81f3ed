"""Reading a response into task labels and classifying the row: valid, or invalid and why.

Every label is validated locally against the task, whatever the provider promised, with one
normalisation (`normalize_label`) applied to both sides.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from meta_evaluator._util import shown
from meta_evaluator.eval_task import EvalTask, normalize_label
from meta_evaluator.eval_task.eval_task import AnsweringMethod
from meta_evaluator.llm.types import ChatResponse

__all__ = ["ParsedAnswer", "check_label", "check_values", "parse_answer"]

InvalidStatus = Literal[
    "partial", "parsing_error", "label_not_allowed", "refusal", "truncated", "empty"
]
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL | re.IGNORECASE)
_SPLIT = re.compile(r"[,;\n]")


@dataclass(frozen=True)
class ParsedAnswer:
    """The labels read from one response, the row's outcome and its precise status."""

    outcome: Literal["valid", "invalid"]
    status: str
    labels: dict[str, Any] = field(default_factory=dict)
    error_message: str | None = None


def parse_answer(response: ChatResponse, task: EvalTask, method: AnsweringMethod) -> ParsedAnswer:
    """Read `response` per `method` and check every task's value against the task schema.

    valid: every required task has an allowed value (other tasks are kept when allowed).
    invalid: `refusal`, `empty`, `truncated` (cut at the token limit, unreadable), `parsing_error`
    (no value found), `label_not_allowed` (a required task's label is not in the schema), or
    `partial` (a required task is missing while others are fine). The tasks that are fine keep
    their values in every invalid case, so they can still be scored.
    """
    if response.refusal or response.finish_reason == "refusal":
        return ParsedAnswer("invalid", "refusal", error_message=response.refusal or "refused")
    raw = _read(response, task, method)
    if raw is None:
        if not response.text.strip() and response.structured is None:
            return ParsedAnswer("invalid", "empty", error_message="the response is empty")
        status = "truncated" if response.finish_reason == "length" else "parsing_error"
        return ParsedAnswer(
            "invalid", status, error_message=f"no readable {method} answer in the response"
        )
    return check_values(raw, task, truncated=response.finish_reason == "length")


def check_values(
    raw: Mapping[str, Any],
    task: EvalTask,
    *,
    truncated: bool = False,
    required: Sequence[str] | None = None,
) -> ParsedAnswer:
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
        return ParsedAnswer("valid", "success", labels)
    message = "; ".join(f"{t}: {problems[t]}" for t in missing)
    if any("not allowed" in problems[t] for t in missing):
        status = "label_not_allowed"
    elif labels:
        status = "partial"
    elif truncated:
        status = "truncated"
    else:
        status = "parsing_error"
    return ParsedAnswer("invalid", status, labels, message)


def _read(response: ChatResponse, task: EvalTask, method: AnsweringMethod) -> dict[str, Any] | None:
    if method == "structured":
        if response.structured is not None:
            return response.structured
        text = response.text.strip()
        fenced = _FENCE.match(text)
        try:
            value = json.loads(fenced.group(1) if fenced else text)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None
    if method == "xml":
        found = {}
        for name in task.task_names:
            match = re.search(
                rf"<{re.escape(name)}\s*>(.*?)</{re.escape(name)}\s*>",
                response.text,
                re.DOTALL | re.IGNORECASE,
            )
            if match:
                found[name] = match.group(1).strip()
        return found or None
    text = response.text.strip()
    if not text:
        return None
    single = [t for t in task.task_names if task.task_kind(t) == "single"]
    if not single:
        free = [t for t in task.task_names if task.task_kind(t) == "free_text"]
        # one free-text task: the whole answer is its value (a model's raw answer to score)
        return {free[0]: text} if len(free) == 1 and len(task.task_names) == 1 else None
    name = single[0]
    allowed = {normalize_label(label) for label in task.allowed_labels(name) or []}
    first_line = text.splitlines()[0].strip().strip(".!\"'`*")
    for candidate in (text, first_line, first_line.split(":", 1)[-1]):
        if normalize_label(candidate) in allowed:
            return {name: candidate}
    return {name: text}


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
