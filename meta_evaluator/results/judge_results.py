"""JudgeResults: one judge's rows of one run, as a polars frame with a fixed set of columns."""

from __future__ import annotations

from collections.abc import Awaitable, Collection, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from meta_evaluator.errors import CostCeilingError, JudgeRunError, MetaEvaluatorError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge.result_row import (
    ROW_COLUMNS,
    JudgeOutcome,
    ResultRow,
    results_schema,
    rows_frame,
)
from meta_evaluator.judge.run_files import RunFiles, latest_tables
from meta_evaluator.results._outcome_table import OutcomeTable

if TYPE_CHECKING:
    from meta_evaluator.judge.config import Judge

__all__ = [
    "ROW_COLUMNS",
    "JudgeResults",
    "latest_results",
    "results_of",
    "results_of_run",
    "results_schema",
    "with_models",
]


class JudgeResults(OutcomeTable):
    """The rows of one judge in one run: `results_data` has a row per data row asked.

    `outcome` is `valid`, `invalid`, `error` or `skipped`; `status` says why; only valid rows
    are scored. One column per task holds its label (a list for multi-label tasks).
    """

    OUTCOMES = ("valid", "invalid", "error", "skipped")

    def __init__(
        self,
        judge_id: str,
        run_id: str,
        results_data: pl.DataFrame,
        *,
        complete: bool = True,
        cost_usd: float | None = None,
        llm_client: str | None = None,
        model_used: str | None = None,
    ) -> None:
        self.judge_id = judge_id
        self.run_id = run_id
        self.llm_client = llm_client
        """The judge's client or provider (0.3.3's attribute); None when unknown."""
        self.model_used = model_used
        """The model that answered (0.3.3's attribute); None when unknown."""
        self.complete = complete
        self.cost_usd = cost_usd
        """What the run call's calls of this judge cost (US dollars, priced by `prices.yaml`)
        when it had a cost ceiling (`max_cost`); None otherwise."""
        self._frame = results_data

    @classmethod
    def from_rows(
        cls,
        judge_id: str,
        run_id: str,
        rows: Iterable[ResultRow | Mapping[str, Any]],
        task: EvalTask,
        id_dtype: pl.DataType,
        *,
        complete: bool = True,
    ) -> JudgeResults:
        """Build from result rows, or from records as the row store holds them.

        A record needs `original_id`, `judge_id`, `run_id` and `outcome`; other keys missing are
        None, and keys that are neither columns nor tasks are ignored.
        """
        names = task.task_names
        typed = [r if isinstance(r, ResultRow) else ResultRow.from_record(r, names) for r in rows]
        return cls(judge_id, run_id, rows_frame(typed, task, id_dtype), complete=complete)

    @classmethod
    def from_outcome(cls, outcome: JudgeOutcome) -> JudgeResults:
        """The results of one judge as the runner handed them back."""
        return cls(
            outcome.judge_id,
            outcome.run_id,
            outcome.frame,
            complete=outcome.complete,
            cost_usd=outcome.cost_usd,
        )

    def __repr__(self) -> str:
        return f"JudgeResults(judge_id={self.judge_id!r}, run_id={self.run_id!r}, {self.counts()})"

    # ----- meta-evaluator 0.3.3's names for the counts of a run ---------------------------------

    @property
    def skipped_count(self) -> int:
        """Rows skipped (`EvalTask.skip_function`)."""
        return self._count(pl.col("outcome") == "skipped")

    @property
    def partial_count(self) -> int:
        """Invalid rows that lack a required task while others are fine (status `partial`)."""
        return self._count(pl.col("status") == "partial")

    @property
    def llm_error_count(self) -> int:
        """Rows with no answer: the call failed (outcome `error`, whatever its status)."""
        return self._count(pl.col("outcome") == "error")

    @property
    def parsing_error_count(self) -> int:
        """Other invalid rows: an answer that cannot be used.

        Its status is `parsing_error`, `label_not_allowed`, `refusal`, `empty` or `truncated`.
        """
        return self._count((pl.col("outcome") == "invalid") & (pl.col("status") != "partial"))

    @property
    def other_error_count(self) -> int:
        """Rows none of the counts above takes (0: every row has one outcome and reason)."""
        named = (
            self.succeeded_count + self.skipped_count + self.partial_count
            + self.llm_error_count + self.parsing_error_count
        )  # fmt: skip
        return self.total_count - named


def with_models(
    results: Mapping[str, JudgeResults],
    judges: Mapping[str, Judge],
    results_dir: Path,
) -> dict[str, JudgeResults]:
    """`results` with `llm_client` and `model_used` filled in.

    A registered judge's own, else what an import recorded in its run's state; None when
    neither is known.
    """
    for judge_id, result in results.items():
        judge = judges.get(judge_id)
        if judge is not None:
            result.llm_client, result.model_used = judge.llm_client, judge.model
            continue
        try:
            state = RunFiles(results_dir, result.run_id, judge_id).read_state()
        except MetaEvaluatorError:  # a run that is not ours to describe: leave it unknown
            state = None
        if state is not None:
            result.llm_client, result.model_used = state.llm_client, state.model
    return dict(results)


def latest_results(
    results_dir: Path,
    ids: pl.Series | None = None,
    *,
    columns: Collection[str] | None = None,
    categories: Collection[str] = (),
    only: pl.Series | None = None,
) -> dict[str, JudgeResults]:
    """The latest complete run of every judge found under `results_dir`, by judge id.

    A sharded run counts once all its shards are complete; its shards' rows are merged into one
    result set, each id once (the first shard's row wins), in the order of `ids` (the data's
    ids) when given, else shard by shard. With `columns`, only those are read (a million rows
    of raw answers and time stamps stay on disk when scoring needs the labels alone), and the
    text columns named in `categories` are held as polars Categoricals (4 bytes a row, not 16).
    With `only` (ids), just their rows are kept as the files are read (a few raw answers).
    """
    tables = latest_tables(results_dir, ids, columns=columns, categories=categories, only=only)
    return {
        judge_id: JudgeResults(judge_id, run_id, frame)
        for judge_id, (run_id, frame) in tables.items()
    }


def results_of(outcomes: Mapping[str, JudgeOutcome]) -> dict[str, JudgeResults]:
    """`JudgeResults.from_outcome` for each judge, by judge id."""
    return {judge_id: JudgeResults.from_outcome(o) for judge_id, o in outcomes.items()}


async def results_of_run(run: Awaitable[Mapping[str, JudgeOutcome]]) -> dict[str, JudgeResults]:
    """Await a run of the judges (`judge.runner.execute`) and give its results by judge id.

    A `JudgeRunError` or `CostCeilingError` is raised again with its `results` turned into
    `JudgeResults` too.
    """
    try:
        outcomes = await run
    except (JudgeRunError, CostCeilingError) as exc:
        exc.results = results_of(exc.results)
        raise
    return results_of(outcomes)
