"""What a run would do, worked out without calling anything or writing anything.

The plan comes from the runner's own planning (`check_judge`, `plan_judge`), so a dry run and
the run that follows pick the same run to continue, reuse the same rows and ask the same ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import httpx

from meta_evaluator.data import EvalData
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge._batch import check_ledger, prepare_batches
from meta_evaluator.judge._clients import build_batch_client
from meta_evaluator.judge._runner import (
    RunSettings,
    check_judges,
    check_listed_once,
    combined_error,
    plan_judge,
    shard_rows,
)
from meta_evaluator.judge.batch_ledger import BatchLedger
from meta_evaluator.judge.config import Judge
from meta_evaluator.judge.run_files import new_run_id

__all__ = ["JudgePlan", "RunPlan", "plan_run"]

RunAction = Literal["new", "continue", "start", "restart", "done"]


@dataclass(frozen=True)
class JudgePlan:
    """What one judge's part of a run would do."""

    judge_id: str
    llm_client: str
    model: str
    base_url: str
    """Where calls would go (the provider's default URL when the judge names none); no key."""
    rows: int
    """Rows in the data (in the shard, for a sharded run)."""
    reused: int
    """Rows already answered, with the same judge fingerprint, that would be kept."""
    calls: int
    """Calls to make before any retry: rows to ask times answers per row (consistency)."""
    estimated_tokens: int
    """Sum of `ChatRequest.estimated_tokens()` over the calls: prompt plus answer allowance."""
    action: RunAction
    """`new`: a new run; `continue`: an existing run (the latest unfinished one of this
    configuration, or the one named by run_id); `start`: the named run, which does not exist yet;
    `restart`: the named run from scratch (no resume); `done`: a complete run of this
    configuration already has every row, so nothing is asked and nothing written."""
    run_id: str | None
    """The run that would be written or continued; None for a new run (its id is made then)."""
    source_run_id: str | None
    """The run whose rows would be reused (the same as `run_id` when continuing one)."""
    in_batches: int = 0
    """Rows in batches the run already submitted: collected, not asked again (batch runs)."""
    batch: bool = False
    """Whether the rows would go through the provider's batch engine."""
    batches: int = 0
    """Batches the rows to ask would fill (within the provider's limits), for a batch run."""
    batch_bytes: int = 0
    """Bytes of request lines those batches would send."""


@dataclass(frozen=True)
class RunPlan:
    """Every judge's plan, and the totals."""

    judges: list[JudgePlan]
    max_retries: int
    """Retries after the first attempt: failed calls may add up to this many calls each."""

    @property
    def rows(self) -> int:
        """Rows over all judges."""
        return sum(j.rows for j in self.judges)

    @property
    def reused(self) -> int:
        """Reused rows over all judges."""
        return sum(j.reused for j in self.judges)

    @property
    def calls(self) -> int:
        """Calls over all judges, before retries."""
        return sum(j.calls for j in self.judges)

    @property
    def estimated_tokens(self) -> int:
        """Estimated tokens over all judges."""
        return sum(j.estimated_tokens for j in self.judges)


def plan_run(
    results_dir: Path,
    judges: Sequence[Judge],
    data: EvalData,
    task: EvalTask,
    *,
    run_id: str | None,
    settings: RunSettings,
    resume: bool = True,
    shard: tuple[int, int] | None = None,
) -> RunPlan:
    """What `run_judges` with the same arguments would do; reads files, writes none.

    Raises:
        JudgeConfigError: A judge is listed twice, or cannot be run (an unset key variable,
            an answering method that does not fit the task ...): every such problem, one line
            each; or a bad shard.
        UnsafeNameError: `run_id` is not a safe file name.
        StateError, StorageError: A run's files are corrupt.
    """
    check_listed_once(judges)
    checked, problems = check_judges(judges, task)
    if problems:
        raise combined_error(problems, field="judges")
    rows, ids = shard_rows(data, shard, run_id)
    fresh = new_run_id()
    plans = []
    encoder_http: httpx.AsyncClient | None = None  # made once: each costs ~50 ms (TLS setup)
    for judge, method, endpoint, api_key in checked:
        run = plan_judge(
            results_dir, judge, method, endpoint, api_key, task, rows, ids,
            run_id=run_id, fresh_run_id=fresh, settings=settings, resume=resume, shard=shard,
        )  # fmt: skip
        batch = settings.batch and judge.llm_client != "mock"
        check_ledger(run, batch=batch)
        waiting = BatchLedger(run.files).pending_ids() if batch else set()
        todo = [] if batch and settings.batch_cancel else run.todo
        todo = [index for index in todo if ids[index] not in waiting]
        builder = run.builders[run.method]
        tokens = sum(builder.build(rows[index]).estimated_tokens() for index in todo)
        batches, batch_bytes = 0, 0
        if batch and todo:
            if encoder_http is None:  # only to build the batch clients; never sends
                encoder_http = httpx.AsyncClient()
            for prepared in prepare_batches(
                build_batch_client(judge, encoder_http, None, timeout=60.0),
                builder,
                [rows[index] for index in todo],
                settings.consistency,
                keep_bodies=False,
            ):
                batches, batch_bytes = batches + 1, batch_bytes + sum(prepared.line_bytes)
        action: RunAction
        if run.unchanged:
            action = "done"
        elif run_id is None:
            action = "continue" if run.source is run.files else "new"
        elif not (run.files.state.is_file() or run.files.rows.is_file()):
            action = "start"
        else:
            action = "continue" if resume else "restart"
        plans.append(
            JudgePlan(
                judge_id=judge.id,
                llm_client=judge.llm_client,
                model=judge.model,
                base_url=endpoint.base_url,
                rows=len(ids),
                reused=len(run.kept),
                calls=len(todo) * settings.consistency,
                estimated_tokens=tokens * settings.consistency,
                action=action,
                run_id=None if action == "new" else run.files.run_id,
                source_run_id=run.source.run_id if run.source is not None else run.source_run_id,
                in_batches=sum(1 for index in run.todo if ids[index] in waiting),
                batch=batch,
                batches=batches,
                batch_bytes=batch_bytes,
            )
        )
    return RunPlan(plans, settings.max_retries)
