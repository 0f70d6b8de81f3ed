"""Turning a judge, the task and one data row into the messages and output schema of a call."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.eval_task.eval_task import AnsweringMethod, answer_key
from meta_evaluator.judge.config import Judge
from meta_evaluator.llm.types import ChatRequest, OutputSchema

__all__ = [
    "ALLOWED_PREFIX",
    "TEXT_PREFIX",
    "RequestBuilder",
    "answering_method",
    "build_request",
    "output_schema",
    "prompt_hash",
]

# The instruction lines name the allowed values in a fixed form, which the offline mock client
# (and the test server) read back.
ALLOWED_PREFIX = "Allowed values for <{task}>: "
TEXT_PREFIX = "Answer with exactly one of these labels and nothing else: "
SCHEMA_NAME = "evaluation"


def answering_method(judge: Judge, task: EvalTask) -> AnsweringMethod:
    """The judge's own answering method when it sets one, else the task's."""
    return judge.answering_method or task.answering_method


def output_schema(task: EvalTask) -> OutputSchema:
    """A strict JSON schema with one property per task (enum for labels, array for multi-label).

    Properties are the tasks' answer keys (`answer_key`: `harm types` is `harm_types`).
    """
    properties: dict[str, Any] = {}
    for name, schema in task.task_schemas.items():
        key = answer_key(name)
        if schema is None:
            properties[key] = {"type": "string"}
        elif isinstance(schema, MultiLabelSchema):
            properties[key] = {
                "type": "array",
                "items": {"type": "string", "enum": list(schema.outcomes)},
            }
        else:
            properties[key] = {"type": "string", "enum": list(schema)}
    return OutputSchema(
        SCHEMA_NAME,
        {
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        },
    )


def _instructions(task: EvalTask, method: AnsweringMethod) -> str:
    if method == "structured":
        keys = ", ".join(answer_key(name) for name in task.task_names)
        return f"Answer with a JSON object with the keys: {keys}."
    if method == "text":
        single = [t for t in task.task_names if task.task_kind(t) == "single"]
        return TEXT_PREFIX + " | ".join(task.allowed_labels(single[0]) or [] if single else [])
    lines = []
    for name in task.task_names:
        labels, tag = task.allowed_labels(name), answer_key(name)
        if labels is None:
            lines.append(f"Write your {tag} inside <{tag}></{tag}> tags.")
            continue
        lines.append(ALLOWED_PREFIX.format(task=tag) + " | ".join(labels))
    lines.append("Put each answer inside its tags, like <name>value</name>.")
    return "\n".join(lines)


def _render(
    template: str, placeholders: list[str], shown: list[str], row: Mapping[str, Any]
) -> str:
    if placeholders:
        return template.format_map(
            {p: "" if row.get(p) is None else str(row[p]) for p in placeholders}
        )
    columns = "\n\n".join(f"{c}:\n{'' if row.get(c) is None else row[c]}" for c in shown)
    return f"{template.rstrip()}\n\n{columns}"


class RequestBuilder:
    """Builds each row's call for one judge; what all rows share is computed once."""

    def __init__(self, judge: Judge, task: EvalTask, method: AnsweringMethod) -> None:
        self._judge = judge
        self._placeholders = judge.prompt.placeholders
        self._shown = task.columns_shown()
        self._instructions = _instructions(task, method)
        self._schema = output_schema(task) if method == "structured" else None
        self._headers = dict(judge.extra_headers)

    def build(self, row: Mapping[str, Any]) -> ChatRequest:
        """The call for one row."""
        return ChatRequest(
            model=self._judge.model,
            messages=self._messages(row),
            temperature=self._judge.temperature,
            max_tokens=self._judge.max_tokens,
            output_schema=self._schema,
            extra_headers=self._headers,
        )

    def prompt_hash(self, row: Mapping[str, Any]) -> str:
        """`prompt_hash(self.build(row))`, without making the request (plans hash every row)."""
        schema = self._schema.sorted_json if self._schema else "null"
        return _digest(self._messages(row), schema)

    def prompt_text(self, row: Mapping[str, Any]) -> str:
        """The judge's prompt filled in for one row, before the answer instructions."""
        return _render(self._judge.prompt.prompt, self._placeholders, self._shown, row).rstrip()

    def _messages(self, row: Mapping[str, Any]) -> list[dict[str, str]]:
        prompt = self.prompt_text(row)
        return [{"role": "user", "content": f"{prompt}\n\n{self._instructions}"}]


def build_request(
    judge: Judge, task: EvalTask, row: Mapping[str, Any], method: AnsweringMethod
) -> ChatRequest:
    """The call for one row (see RequestBuilder to build many)."""
    return RequestBuilder(judge, task, method).build(row)


# json.dumps(..., sort_keys=True) builds an encoder per call: a third of the hash's cost.
_sorted_json = json.JSONEncoder(sort_keys=True).encode


def prompt_hash(request: ChatRequest) -> str:
    """A digest of what is sent (messages and schema): a changed prompt is a different row.

    The digest of `json.dumps({"messages": ..., "schema": ...}, sort_keys=True)`, written out
    so that the schema, the same for every row, is serialised once.
    """
    schema = request.output_schema.sorted_json if request.output_schema else "null"
    return _digest(request.messages, schema)


def _digest(messages: list[dict[str, str]], schema: str) -> str:
    """The digest `prompt_hash` gives of these messages and this schema's sorted JSON."""
    text = f'{{"messages": {_sorted_json(messages)}, "schema": {schema}}}'
    return hashlib.sha256(text.encode()).hexdigest()[:16]
