"""One judge's part of a run, and the result row each answer (or failure) becomes.

Shared by the live runner (`runner.py`) and the batch runner (`_batch.py`), so a row's values
mean the same whichever way it was asked.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from meta_evaluator.eval_task import EvalTask
from meta_evaluator.eval_task.eval_task import AnsweringMethod
from meta_evaluator.judge._breaker import Breaker
from meta_evaluator.judge._parse import parse_answer
from meta_evaluator.judge._progress import Progress
from meta_evaluator.judge._prompting import RequestBuilder
from meta_evaluator.judge.config import Judge
from meta_evaluator.judge.plan import JudgePlan
from meta_evaluator.judge.result_row import Outcome, ResultRow
from meta_evaluator.judge.row_store import RowStore
from meta_evaluator.judge.run_files import RunFiles, RunState, now_iso
from meta_evaluator.llm.cache import RequestKeys, ResponseCache
from meta_evaluator.llm.classify import CallFailed
from meta_evaluator.llm.limits import EndpointKey
from meta_evaluator.llm.spend import JudgeSpend
from meta_evaluator.llm.types import ChatResponse

__all__ = ["JudgeRun", "majority", "mark_started", "row_values", "start_over", "write_state"]


@dataclass
class JudgeRun:
    """One judge's part of a run while it executes: its plan, and what this call changed.

    Everything decided before the first call is in the frozen `plan`; what changes while the
    judge runs is here, each with one writer: `new_rows` (a row task), `started` (the first row
    written), `failure` (the judge stopped), `method` (structured output refused: the judge
    asks for XML tags from then on) and the `breaker`.
    """

    plan: JudgePlan
    api_key: str | None = field(repr=False)
    method: AnsweringMethod
    """How rows are asked now: the plan's method, or `xml` once the endpoint refused
    structured output and the task allows the fallback."""
    builders: dict[str, RequestBuilder] = field(repr=False)
    new_rows: dict[Any, ResultRow] = field(default_factory=dict)
    """Rows answered in this call, by id."""
    failure: str | None = None
    """Why the judge was stopped (endpoint refused or never reached), if it was."""
    started: bool = False
    """Whether the run's state was written (just before its first row)."""
    breaker: Breaker = field(default_factory=Breaker)
    """Stops the judge when its first calls all fail to connect."""
    cache: ResponseCache | None = field(default=None, repr=False)
    """The response cache the judge's answers are looked up in and stored to; None when the
    run or the judge turned it off, for the mock and for batch mode."""
    cache_keys: RequestKeys | None = field(default=None, repr=False)
    """The cache keys of the judge's requests (set with `cache`)."""
    label_sets: dict[tuple[Any, ...], Mapping[str, Any]] | None = field(default=None, repr=False)
    """One mapping per distinct set of labels, shared by the rows that have it (a million
    rows of two labels: two dicts, not a million); None when a task is free text."""
    in_flight: int = 1
    """Rows the judge may have in flight: its `max_concurrency` (or the run's), less when the
    process's open-file limit leaves fewer connections (set by the runner before it starts)."""
    spend: JudgeSpend | None = field(default=None, repr=False)
    """The judge's share of the run's cost ceiling (`max_cost`); None without one, and for a
    mock judge, which costs nothing."""

    judge: Judge = field(init=False, repr=False)
    """The judge (the plan's; a plain attribute, read for every row)."""
    files: RunFiles = field(init=False, repr=False)
    """The run's files (the plan's)."""
    fingerprint: str = field(init=False, repr=False)
    """The judge's fingerprint (the plan's)."""
    endpoint: EndpointKey = field(init=False, repr=False)
    """Where the judge's calls go (the plan's)."""
    kept: Mapping[Any, ResultRow] = field(init=False, repr=False)
    """Rows reused as they are, by id (the plan's)."""

    def __post_init__(self) -> None:
        plan = self.plan
        self.judge, self.files, self.fingerprint = plan.judge, plan.files, plan.fingerprint
        self.endpoint, self.kept = plan.endpoint, plan.kept

    @classmethod
    def start(cls, plan: JudgePlan, api_key: str | None, task: EvalTask) -> JudgeRun:
        """The execution state of `plan`, with the judge's key (read again at this moment)."""
        builders = {m: RequestBuilder(plan.judge, task, m) for m in ("structured", "xml", "text")}
        free = any(task.task_kind(name) == "free_text" for name in task.task_names)
        return cls(plan, api_key, plan.method, builders, label_sets=None if free else {})


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
    batch_id: str | None = None,
    cached: bool = False,
) -> ResultRow:
    """The row for one answer (parsed and classified) or one failure (an error row).

    `cached`: the answer came from the response cache (no call was made).
    """
    if failure is not None:
        outcome: Outcome = "error"
        status: str | None = failure.status
        message: str | None = str(failure)
        labels: Mapping[str, Any] = {}
        raw: str | None = None
        prompt_tokens = completion_tokens = None
    else:
        assert response is not None, "a row has a response or a failure"
        parsed = parse_answer(response, task, method)
        outcome, status, message, labels = (
            parsed.outcome, parsed.status, parsed.error_message, parsed.labels
        )  # fmt: skip
        if run.label_sets is not None:  # rows never change their labels: equal ones share
            key = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in labels.items())
            labels = run.label_sets.setdefault(key, labels)
        structured = response.structured
        raw = json.dumps(structured) if structured is not None else response.text
        prompt_tokens, completion_tokens = response.prompt_tokens, response.completion_tokens
    # Positional: keywords cost a few tenths of a microsecond more, on every answered row.
    return ResultRow(
        row_id,  # original_id
        run.judge.id,  # judge_id
        run.files.run_id,  # run_id
        outcome,
        status,
        message,  # error_message
        labels,
        raw,  # raw_response
        prompt_tokens,
        completion_tokens,
        round(duration, 6) if duration is not None else None,  # duration_seconds
        attempts,
        now_iso(),  # timestamp
        run.fingerprint,
        request_hash,  # prompt_hash
        batch_id,
        cached,
    )


def majority(samples: Sequence[ResultRow], task: EvalTask) -> ResultRow | None:
    """One row from several answers: per task, the most frequent label among valid answers.

    The row is the first valid answer's (else the last answer's) with each task's label the
    one most valid answers gave (a tie goes to the label seen first); attempts, tokens and
    durations are summed over the answers (None when no answer has one, as for a batch's).
    The row is `cached` when every answer came from the response cache, and keeps each
    answer's labels in `sample_labels` (null for an answer that was not valid), so how far
    the judge agrees with itself can be measured (`SelfConsistencyScorer`).

    Not the humans' majority (`stats.majority`): this label is one of the judge's own answers,
    stored as its answer to the row, so a multi-label answer wins whole (never a set no answer
    gave), and a tie goes to the answer seen first, which keeps the row independent of how the
    labels happen to sort and equal to the single call's answer when every answer differs.
    """
    if not samples:
        return None
    valid = [s for s in samples if s.outcome == "valid"]
    base = valid[0] if valid else samples[-1]
    labels = dict(base.labels)
    notes = []
    for name in task.task_names:
        votes = [s.labels[name] for s in valid if s.labels.get(name) is not None]
        if not votes:
            continue
        keys = [json.dumps(v) for v in votes]
        winner = max(dict.fromkeys(keys), key=keys.count)  # first seen wins a tie
        labels[name] = votes[keys.index(winner)]
        notes.append(f"{name}: {keys.count(winner)}/{len(samples)} agree")
    durations = [s.duration_seconds for s in samples if s.duration_seconds is not None]
    return base._replace(
        error_message=("; ".join(notes) or None) if valid else base.error_message,
        labels=labels,
        raw_response=json.dumps([s.raw_response for s in samples]),
        prompt_tokens=_total(s.prompt_tokens for s in samples),
        completion_tokens=_total(s.completion_tokens for s in samples),
        duration_seconds=round(sum(durations), 6) if durations else None,
        attempts=sum(s.attempts or 0 for s in samples),
        cached=all(s.cached for s in samples),
        sample_labels=json.dumps(
            [dict(s.labels) if s.outcome == "valid" else None for s in samples],
            ensure_ascii=False,
        ),
    )


def _total(counts: Iterable[int | None]) -> int | None:
    """The sum of the counts that are known; None when none is."""
    known = [c for c in counts if c is not None]
    return sum(known) if known else None


def skipped_row(run: JudgeRun, row_id: Any) -> ResultRow:
    """The row of a data row the task's `skip_function` skips: no call, outcome `skipped`.

    It has no prompt hash, so a later run (with no skip function, or another) asks it again.
    """
    return ResultRow(
        original_id=row_id,
        judge_id=run.judge.id,
        run_id=run.files.run_id,
        outcome="skipped",
        status="skipped",
        error_message="skipped by EvalTask.skip_function: not asked",
        attempts=0,
        timestamp=now_iso(),
        fingerprint=run.fingerprint,
    )


def write_skipped(run: JudgeRun, store: RowStore, skipped: list[Any], progress: Progress) -> None:
    """Write a `skipped` row for each id the task's skip function skips (no call)."""
    if skipped:
        mark_started(run)
    for row_id in skipped:
        values = skipped_row(run, row_id)
        store.append(values)
        run.new_rows[row_id] = values
        progress.finished(run.judge.id, values.outcome)


def mark_started(run: JudgeRun) -> None:
    """Write the run's state (unfinished) once, just before its first row is written.

    A call that fails or is interrupted earlier thus leaves earlier runs exactly as they were.
    """
    if not run.started:
        write_state(run, completed_at=None, counts={})
        run.started = True


def start_over(run: JudgeRun) -> None:
    """Drop the run's rows (resume=False), and say at once that the run is not complete.

    Its old state would otherwise still call it complete, beside an empty row store, until a
    first row came (if none came, a later run would keep the old table's rows).
    """
    run.files.rows.unlink(missing_ok=True)
    mark_started(run)


def write_state(run: JudgeRun, *, completed_at: str | None, counts: dict[str, int]) -> None:
    """Write the run's state file: complete when `completed_at` is given."""
    run.files.write_state(
        RunState(
            run.judge.id,
            run.files.run_id,
            run.fingerprint,
            run.plan.created_at,
            completed_at,
            counts,
            shard=run.files.shard,
        )
    )
