"""Turning a judge, the task and one data row into the messages and output schema of a call."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.eval_task.eval_task import AnsweringMethod
from meta_evaluator.judge.config import Judge
from meta_evaluator.llm.types import ChatRequest, OutputSchema

__all__ = [
    "ALLOWED_PREFIX",
    "TEXT_PREFIX",
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
    """A strict JSON schema with one property per task (enum for labels, array for multi-label)."""
    properties: dict[str, Any] = {}
    for name, schema in task.task_schemas.items():
        if schema is None:
            properties[name] = {"type": "string"}
        elif isinstance(schema, MultiLabelSchema):
            properties[name] = {
                "type": "array",
                "items": {"type": "string", "enum": list(schema.outcomes)},
            }
        else:
            properties[name] = {"type": "string", "enum": list(schema)}
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
        keys = ", ".join(task.task_names)
        return f"Answer with a JSON object with the keys: {keys}."
    if method == "text":
        single = [t for t in task.task_names if task.task_kind(t) == "single"]
        return TEXT_PREFIX + " | ".join(task.allowed_labels(single[0]) or [] if single else [])
    lines = []
    for name in task.task_names:
        labels = task.allowed_labels(name)
        if labels is None:
            lines.append(f"Write your {name} inside <{name}></{name}> tags.")
            continue
        lines.append(ALLOWED_PREFIX.format(task=name) + " | ".join(labels))
        if task.task_kind(name) == "multilabel":
            lines.append(f"For <{name}>, give every value that applies, separated by commas.")
    lines.append("Put each answer inside its tags, like <name>value</name>.")
    return "\n".join(lines)


def render_prompt(judge: Judge, task: EvalTask, row: Mapping[str, Any]) -> str:
    """The judge's template filled from `row`; without placeholders, the shown columns follow."""
    values = {k: "" if v is None else str(v) for k, v in row.items()}
    placeholders = judge.prompt.placeholders
    text = judge.prompt.prompt.format_map(values) if placeholders else judge.prompt.prompt
    if not placeholders:
        shown = "\n\n".join(f"{c}:\n{values.get(c, '')}" for c in task.columns_shown())
        text = f"{text.rstrip()}\n\n{shown}"
    return text


def build_request(
    judge: Judge, task: EvalTask, row: Mapping[str, Any], method: AnsweringMethod
) -> ChatRequest:
    """The call for one row."""
    content = f"{render_prompt(judge, task, row).rstrip()}\n\n{_instructions(task, method)}"
    return ChatRequest(
        model=judge.model,
        messages=[{"role": "user", "content": content}],
        temperature=judge.temperature,
        max_tokens=judge.max_tokens,
        output_schema=output_schema(task) if method == "structured" else None,
        extra_headers=dict(judge.extra_headers),
    )


def prompt_hash(request: ChatRequest) -> str:
    """A digest of what is sent (messages and schema): a changed prompt is a different row."""
    payload = {
        "messages": request.messages,
        "schema": request.output_schema.schema if request.output_schema else None,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
