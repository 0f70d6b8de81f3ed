"""Reading a response into task labels and classifying the row: valid, or invalid and why.

Every label is validated locally against the task, whatever the provider promised, with one
normalisation (`normalize_label`) applied to both sides.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from meta_evaluator.eval_task import EvalTask, normalize_label
from meta_evaluator.eval_task.eval_task import AnsweringMethod, answer_key
from meta_evaluator.eval_task.labels import LabelCheck, check_values
from meta_evaluator.llm.types import ChatResponse

__all__ = ["parse_answer"]

InvalidStatus = Literal[
    "partial", "parsing_error", "label_not_allowed", "refusal", "truncated", "empty"
]
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL | re.IGNORECASE)


def parse_answer(response: ChatResponse, task: EvalTask, method: AnsweringMethod) -> LabelCheck:
    """Read `response` per `method` and check every task's value against the task schema.

    valid: every required task has an allowed value (other tasks are kept when allowed).
    invalid: `refusal`, `empty`, `truncated` (cut at the token limit, unreadable), `parsing_error`
    (no value found), `label_not_allowed` (a required task's label is not in the schema), or
    `partial` (a required task is missing while others are fine). The tasks that are fine keep
    their values in every invalid case, so they can still be scored.
    """
    if response.refusal or response.finish_reason == "refusal":
        return LabelCheck("invalid", "refusal", error_message=response.refusal or "refused")
    raw = _read(response, task, method)
    if raw is None:
        if not response.text.strip() and response.structured is None:
            return LabelCheck("invalid", "empty", error_message="the response is empty")
        status = "truncated" if response.finish_reason == "length" else "parsing_error"
        return LabelCheck(
            "invalid", status, error_message=f"no readable {method} answer in the response"
        )
    return check_values(raw, task, truncated=response.finish_reason == "length")


def _read(response: ChatResponse, task: EvalTask, method: AnsweringMethod) -> dict[str, Any] | None:
    if method == "structured":
        value = response.structured
        if value is None:
            text = response.text.strip()
            fenced = _FENCE.match(text)
            try:
                value = json.loads(fenced.group(1) if fenced else text)
            except ValueError:
                return None
        return _by_task(value, task) if isinstance(value, dict) else None
    if method == "xml":
        found = {}
        for name in task.task_names:
            tag = answer_key(name)
            match = re.search(
                rf"<{re.escape(tag)}\s*>(.*?)</{re.escape(tag)}\s*>",
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


def _by_task(answer: dict[str, Any], task: EvalTask) -> dict[str, Any]:
    """A JSON answer keyed by task name: each task's answer key, else its own name."""
    found = {}
    for name in task.task_names:
        key = answer_key(name)
        if key in answer:
            found[name] = answer[key]
        elif name in answer:
            found[name] = answer[name]
    return found
