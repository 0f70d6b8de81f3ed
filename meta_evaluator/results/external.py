"""Importing judge results made elsewhere (another tool, a batch job) into the project."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from meta_evaluator.data import DataLoader, EvalData
from meta_evaluator.data.checks import list_some
from meta_evaluator.errors import ColumnError, IdError, TaskError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.eval_task.labels import check_values
from meta_evaluator.judge.run_files import RunFiles, RunState, new_run_id, now_iso
from meta_evaluator.results.judge_results import JudgeResults
from meta_evaluator.storage import check_safe_name, sha256

__all__ = [
    "align_ids",
    "check_task_columns",
    "import_judge_frame",
    "import_judge_results",
    "import_scope",
    "label_row",
]


def import_judge_results(
    path: str | Path,
    judge_id: str,
    *,
    data: EvalData,
    task: EvalTask,
    results_dir: Path,
    run_id: str | None = None,
    id_column: str = "original_id",
    tasks: Sequence[str] | None = None,
) -> JudgeResults:
    """Read a CSV/JSON/JSON Lines/Parquet file of labels per row and save it as a complete run.

    The file needs `id_column` (ids of the project's data, of the data's id type; integer-looking
    text ids are converted when that is exact) and one column per required task. Each row is
    checked like a judge's answer: `valid` when every required task has an allowed label,
    otherwise `invalid` with the reason.

    `tasks` limits the check to those tasks (labels made for some tasks only).

    Raises:
        DataFileError, ColumnError, IdError: The file, a column or an id is unusable.
        TaskError: A required task has no column, or `tasks` names an unknown task.
    """
    check_safe_name(judge_id, field="judge_id")
    frame = DataLoader.load(judge_id, path, id_column).data
    return import_judge_frame(
        frame, judge_id, source=f"external:{sha256(path)[:16]}", where=path, data=data,
        task=task, results_dir=results_dir, run_id=run_id, id_column=id_column, tasks=tasks,
    )  # fmt: skip


def import_scope(
    task: EvalTask, tasks: Sequence[str] | None, where: str | Path
) -> tuple[list[str], list[str]]:
    """(required tasks, tasks that need a column) of an import limited to `tasks`.

    Without `tasks`: the task's required tasks, both. With them: each listed task needs a
    column, and only the task's required tasks among them are required.

    Raises:
        TaskError: `tasks` is empty or names a task the project's task does not have.
    """
    if tasks is None:
        required = task.get_required_tasks()
        return required, required
    unknown = [t for t in tasks if t not in task.task_names]
    if unknown or not tasks:
        raise TaskError(
            f"{where}: tasks {list(tasks)} must be a non-empty list of the task's tasks "
            f"{task.task_names}.",
            path=where if isinstance(where, Path) else None,
            field="tasks",
        )
    return [t for t in task.get_required_tasks() if t in tasks], list(tasks)


def import_judge_frame(
    frame: pl.DataFrame,
    judge_id: str,
    *,
    source: str,
    where: str | Path,
    data: EvalData,
    task: EvalTask,
    results_dir: Path,
    run_id: str | None = None,
    id_column: str = "original_id",
    tasks: Sequence[str] | None = None,
) -> JudgeResults:
    """Save labels in a frame (id column + task columns) as a complete run of `judge_id`.

    `source` becomes the run's fingerprint; `where` names the origin in messages.
    """
    check_safe_name(judge_id, field="judge_id")
    required, columns = import_scope(task, tasks, where)
    check_task_columns(frame, columns, where)
    frame = align_ids(frame, id_column, data, where)
    run = run_id or new_run_id()
    files = RunFiles(results_dir, run, judge_id)
    rows = []
    for record in frame.iter_rows(named=True):
        rows.append(
            {
                **label_row(record, id_column, task, required),
                "judge_id": judge_id,
                "run_id": run,
                "fingerprint": source,
                "timestamp": now_iso(),
            }
        )
    id_dtype = data.data.schema[data.id_column]
    results = JudgeResults.from_rows(judge_id, run, rows, task, id_dtype)
    files.write_table(results.results_data)
    stamp = now_iso()
    files.write_state(RunState(judge_id, run, source, stamp, stamp, results.counts()))
    return results


def check_task_columns(frame: pl.DataFrame, tasks: Sequence[str], path: str | Path) -> None:
    """Raise TaskError when one of `tasks` has no column in an imported file."""
    missing = [t for t in tasks if t not in frame.columns]
    if missing:
        raise TaskError(
            f"{path}: no column for the required task(s) {missing} (columns: "
            f"{list_some(frame.columns)}).",
            path=path,
            column=missing[0],
        )


def align_ids(
    frame: pl.DataFrame, id_column: str, data: EvalData, path: str | Path
) -> pl.DataFrame:
    """Give the file's ids the data's dtype, and check that each names a row of the data."""
    want = data.data.schema[data.id_column]
    have = frame.schema[id_column]
    if have != want:
        try:
            cast = frame.get_column(id_column).cast(want, strict=True)
        except pl.exceptions.PolarsError as exc:
            raise ColumnError(
                f"{path}: ids in {id_column!r} are {have}, the data's ids are {want}, and they do "
                "not convert exactly; write the ids as the data has them.",
                path=path,
                column=id_column,
            ) from exc
        if cast.cast(have, strict=False).to_list() != frame.get_column(id_column).to_list():
            raise ColumnError(
                f"{path}: ids in {id_column!r} change when converted from {have} to {want} "
                "(for example '007' becomes 7); write the ids as the data has them.",
                path=path,
                column=id_column,
            )
        frame = frame.with_columns(cast)
    unknown = frame.filter(~pl.col(id_column).is_in(data.ids.implode())).get_column(id_column)
    if unknown.len():
        raise IdError(
            f"{path}: {unknown.len()} id(s) are not in the project's data: "
            f"{list_some(unknown.to_list())}.",
            path=path,
            column=id_column,
            row_id=unknown[0],
        )
    return frame


def label_row(
    record: dict[str, Any], id_column: str, task: EvalTask, required: Sequence[str]
) -> dict[str, Any]:
    """An imported row checked like an answer: id, outcome, status, message and task labels."""
    checked = check_values(record, task, required=required)
    return {
        "original_id": record[id_column],
        "outcome": checked.outcome,
        "status": checked.status,
        "error_message": checked.error_message,
        **checked.labels,
    }
