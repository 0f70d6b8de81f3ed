"""One judge's part of a run, and the result row each answer (or failure) becomes.

Shared by the live runner (`_runner.py`) and the batch runner (`_batch.py`), so a row's values
mean the same whichever way it was asked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from meta_evaluator.eval_task import EvalTask
from meta_evaluator.eval_task.eval_task import AnsweringMethod
from meta_evaluator.judge._breaker import Breaker
from meta_evaluator.judge._parse import parse_answer
from meta_evaluator.judge._prompting import RequestBuilder
from meta_evaluator.judge.config import Judge
from meta_evaluator.judge.run_files import RunFiles, RunState, now_iso
from meta_evaluator.llm.classify import CallFailed
from meta_evaluator.llm.limits import EndpointKey
from meta_evaluator.llm.types import ChatResponse

__all__ = ["JudgeRun", "majority", "mark_started", "row_values", "write_state"]


@dataclass
class JudgeRun:
    """One judge's part of a run."""

    judge: Judge
    files: RunFiles
    fingerprint: str
    method: AnsweringMethod
    endpoint: EndpointKey
    api_key: str | None = field(repr=False)
    source: RunFiles | None = None
    """The run whose rows are reused: `files` itself, an earlier complete run, or none."""
    source_run_id: str | None = None
    """The run whose rows are reused, when that is a complete sharded run (no one `source`)."""
    builders: dict[str, RequestBuilder] = field(default_factory=dict)
    kept: dict[Any, dict[str, Any]] = field(default_factory=dict)
    todo: list[int] = field(default_factory=list)
    new_rows: dict[Any, dict[str, Any]] = field(default_factory=dict)
    created_at: str = ""
    failure: str | None = None
    fresh_start: bool = False
    seeded: bool = False
    unchanged: bool = False
    started: bool = False
    breaker: Breaker = field(default_factory=Breaker)
    """Stops the judge when its first calls all fail to connect."""


def row_values(
    run: JudgeRun,
    row_id: Any,
    request_hash: str,
    method: AnsweringMethod,
    task: EvalTask,
    *,
    attempts: int,
    duration: float | None,
    response: ChatResponse | None,
    failure: CallFailed | None,
) -> dict[str, Any]:
    """The stored row for one answer (parsed and classified) or one failure (an error row)."""
    values: dict[str, Any] = {
        "original_id": row_id,
        "judge_id": run.judge.id,
        "run_id": run.files.run_id,
        "attempts": attempts,
        "llm_call_duration_seconds": round(duration, 6) if duration is not None else None,
        "timestamp": now_iso(),
        "fingerprint": run.fingerprint,
        "prompt_hash": request_hash,
    }
    if failure is not None:
        values.update(outcome="error", status=failure.status, error_message=str(failure))
        return values
    assert response is not None, "a row has a response or a failure"
    parsed = parse_answer(response, task, method)
    raw = json.dumps(response.structured) if response.structured is not None else response.text
    values.update(
        outcome=parsed.outcome,
        status=parsed.status,
        error_message=parsed.error_message,
        llm_raw_response_content=raw,
        llm_prompt_tokens=response.prompt_tokens,
        llm_completion_tokens=response.completion_tokens,
        **parsed.labels,
    )
    return values


def majority(samples: list[dict[str, Any]], task: EvalTask) -> dict[str, Any] | None:
    """One row from several answers: per task, the most frequent label among valid answers."""
    if not samples:
        return None
    valid = [s for s in samples if s["outcome"] == "valid"]
    merged = dict(valid[0] if valid else samples[-1])
    merged["attempts"] = sum(s["attempts"] for s in samples)
    durations = [
        s["llm_call_duration_seconds"]
        for s in samples
        if s["llm_call_duration_seconds"] is not None
    ]  # a batch's answers have none
    merged["llm_call_duration_seconds"] = round(sum(durations), 6) if durations else None
    for key in ("llm_prompt_tokens", "llm_completion_tokens"):
        counts = [s.get(key) for s in samples if s.get(key) is not None]
        merged[key] = sum(counts) if counts else None
    merged["llm_raw_response_content"] = json.dumps(
        [s.get("llm_raw_response_content") for s in samples]
    )
    notes = []
    for name in task.task_names:
        votes = [s[name] for s in valid if s.get(name) is not None]
        if not votes:
            continue
        keys = [json.dumps(v) for v in votes]
        winner = max(dict.fromkeys(keys), key=keys.count)  # first seen wins a tie
        merged[name] = votes[keys.index(winner)]
        notes.append(f"{name}: {keys.count(winner)}/{len(samples)} agree")
    if valid:
        merged["error_message"] = "; ".join(notes) or None
    return merged


def mark_started(run: JudgeRun) -> None:
    """Write the run's state (unfinished) once, just before its first row is written.

    A call that fails or is interrupted earlier thus leaves earlier runs exactly as they were.
    """
    if not run.started:
        write_state(run, completed_at=None, counts={})
        run.started = True


def write_state(run: JudgeRun, *, completed_at: str | None, counts: dict[str, int]) -> None:
    """Write the run's state file: complete when `completed_at` is given."""
    run.files.write_state(
        RunState(
            run.judge.id,
            run.files.run_id,
            run.fingerprint,
            run.created_at,
            completed_at,
            counts,
            shard=run.files.shard,
        )
    )
