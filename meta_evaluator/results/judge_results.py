"""JudgeResults: one judge's rows of one run, as a polars frame with a fixed set of columns."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from meta_evaluator.eval_task import EvalTask
from meta_evaluator.eval_task.eval_task import JUDGE_ROW_COLUMNS, RESULT_COLUMNS
from meta_evaluator.judge.run_files import latest_tables

__all__ = ["ROW_COLUMNS", "JudgeResults", "latest_results"]

# The judge-specific columns we add besides RESULT_COLUMNS.
EXTRA_COLUMNS = JUDGE_ROW_COLUMNS  # batch_id: the provider batch that answered, if any
ROW_COLUMNS = (*(c for c in RESULT_COLUMNS if c != "annotator_id"), *EXTRA_COLUMNS)

_DTYPES: dict[str, pl.DataType] = {
    "judge_id": pl.String(),
    "run_id": pl.String(),
    "outcome": pl.String(),
    "status": pl.String(),
    "error_message": pl.String(),
    "llm_raw_response_content": pl.String(),
    "llm_prompt_tokens": pl.Int64(),
    "llm_completion_tokens": pl.Int64(),
    "llm_call_duration_seconds": pl.Float64(),
    "attempts": pl.Int64(),
    "timestamp": pl.String(),
    "fingerprint": pl.String(),
    "prompt_hash": pl.String(),
    "batch_id": pl.String(),
}


def results_schema(task: EvalTask, id_dtype: pl.DataType) -> dict[str, pl.DataType]:
    """Column → dtype of a results frame: ids keep the data's dtype; multi-label tasks are lists."""
    schema: dict[str, pl.DataType] = {"original_id": id_dtype}
    schema.update({c: _DTYPES[c] for c in ROW_COLUMNS if c != "original_id"})
    for name in task.task_names:
        kind = task.task_kind(name)
        schema[name] = pl.List(pl.String()) if kind == "multilabel" else pl.String()
    return schema


class JudgeResults:
    """The rows of one judge in one run: `results_data` has a row per data row asked.

    `outcome` is `valid`, `invalid`, `error` or `skipped`; `status` says why; only valid rows
    are scored. One column per task holds its label (a list for multi-label tasks).
    """

    def __init__(
        self, judge_id: str, run_id: str, results_data: pl.DataFrame, *, complete: bool = True
    ) -> None:
        self.judge_id = judge_id
        self.run_id = run_id
        self.complete = complete
        self._frame = results_data

    @classmethod
    def from_rows(
        cls,
        judge_id: str,
        run_id: str,
        rows: Iterable[Mapping[str, Any]],
        task: EvalTask,
        id_dtype: pl.DataType,
        *,
        complete: bool = True,
    ) -> JudgeResults:
        """Build from row dicts (as the row store holds them)."""
        schema = results_schema(task, id_dtype)
        frame = pl.DataFrame(
            [{c: row.get(c) for c in schema} for row in rows], schema=schema, orient="row"
        )
        return cls(judge_id, run_id, frame, complete=complete)

    @property
    def results_data(self) -> pl.DataFrame:
        """Every row of the run (a copy)."""
        return self._frame.clone()

    def counts(self) -> dict[str, int]:
        """Rows per outcome, every outcome listed."""
        found = dict(self._frame.group_by("outcome").len().iter_rows())
        return {o: int(found.get(o, 0)) for o in ("valid", "invalid", "error", "skipped")}

    def valid_rows(self) -> pl.DataFrame:
        """The rows whose outcome is valid."""
        return self._frame.filter(pl.col("outcome") == "valid")

    def __len__(self) -> int:
        return self._frame.height

    def __repr__(self) -> str:
        return f"JudgeResults(judge_id={self.judge_id!r}, run_id={self.run_id!r}, {self.counts()})"


def latest_results(results_dir: Path, ids: pl.Series | None = None) -> dict[str, JudgeResults]:
    """The latest complete run of every judge found under `results_dir`, by judge id.

    A sharded run counts once all its shards are complete; its shards' rows are merged into one
    result set, each id once (the first shard's row wins), in the order of `ids` (the data's
    ids) when given, else shard by shard.
    """
    return {
        judge_id: JudgeResults(judge_id, run_id, frame)
        for judge_id, (run_id, frame) in latest_tables(results_dir, ids).items()
    }
