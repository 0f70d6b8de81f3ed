"""Importing judge results made elsewhere (another tool, a batch job) into the project."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Required, TypedDict, Unpack

import polars as pl

from meta_evaluator.data import DataLoader, EvalData
from meta_evaluator.data.checks import AUTO_ID_COLUMN, list_some
from meta_evaluator.data.loader import FileFormat, load_as
from meta_evaluator.errors import ColumnError, DataError, IdError, MetaEvaluatorError, TaskError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.eval_task.labels import NormalisedLabels, check_frame, normalised_labels
from meta_evaluator.judge.run_files import RunFiles, RunState, new_run_id, now_iso
from meta_evaluator.results.fingerprints import all_fingerprints_start_with
from meta_evaluator.results.judge_results import JudgeResults, results_schema
from meta_evaluator.storage import check_safe_name, sha256

__all__ = [
    "ID_COLUMN",
    "IMPORTED_PREFIX",
    "ImportOptions",
    "align_ids",
    "check_import",
    "check_task_columns",
    "checked_frame",
    "filled_table",
    "import_judge_frame",
    "import_judge_results",
    "import_scope",
    "imported_tasks",
    "is_imported_labels",
    "read_import_file",
]


logger = logging.getLogger(__name__)

_NAMED = 3
"""How many invalid rows the import's warning names."""

ID_COLUMN = "original_id"
"""The column of an imported file that holds the data's ids, unless `id_column` says another."""


IMPORTED_PREFIX = "external:"
"""The start of the fingerprint of a run imported from a file (its hash follows)."""


def is_imported_labels(frame: pl.DataFrame) -> bool:
    """Whether a judge's rows were imported from a file (every fingerprint says so).

    Such rows hold one label per row and task, never several answers to one prompt.
    """
    return all_fingerprints_start_with(frame, IMPORTED_PREFIX)


class ImportOptions(TypedDict, total=False):
    """What every import of labels made elsewhere takes, judges' and annotators' alike.

    Declared once for the four import functions (a file or a frame; a judge or an annotator),
    which add only where the labels are saved.
    """

    data: Required[EvalData]
    """The project's data: every imported id must name one of its rows, in its id dtype."""
    task: Required[EvalTask]
    """The project's task: labels are checked against it like a judge's answers."""
    run_id: str | None
    """The run the labels are saved as; None: a new run id."""
    id_column: str
    """The column holding the data's ids (default `original_id`)."""
    tasks: Sequence[str] | None
    """Only these tasks are imported (each needs a column; labels made for some tasks only);
    None: every task the file has a column for, the required tasks at least."""
    data_format: FileFormat | None
    """The file's format (`csv`, `json`, `jsonl`, `parquet`); None: from its extension."""


def import_judge_results(
    path: str | Path,
    judge_id: str,
    *,
    results_dir: Path,
    llm_client: str | None = None,
    model: str | None = None,
    **options: Unpack[ImportOptions],
) -> JudgeResults:
    """Read a CSV/JSON/JSON Lines/Parquet file of labels per row and save it as a complete run.

    The file needs `id_column` (ids of the project's data, of the data's id type; integer-looking
    text ids are converted when that is exact) and one column per required task; every task it
    has a column for is imported (`imported_tasks`). Each row is checked like a judge's answer:
    `valid` when every required task has an allowed label, otherwise `invalid` with the reason.

    `tasks` limits the import to those tasks (labels made for some tasks only; the file's
    columns of other tasks are left out). `llm_client` and
    `model` say where the labels came from; the run's state keeps them.

    Raises:
        DataFileError, ColumnError, IdError: The file, a column or an id is unusable.
        TaskError: A required task has no column, or `tasks` names an unknown task.
    """
    frame, source = read_import_file(path, judge_id, "judge_id", options)
    return import_judge_frame(
        frame, judge_id, source=source, where=path, results_dir=results_dir,
        llm_client=llm_client, model=model, **options,
    )  # fmt: skip


def check_import(
    path: str | Path,
    *,
    data: EvalData | None,
    task: EvalTask | None,
    id_column: str = ID_COLUMN,
    tasks: Sequence[str] | None = None,
) -> list[MetaEvaluatorError]:
    """Every problem an import of `path` would meet, saving nothing, as far as data and task allow.

    The file alone: that it reads as a table with unique ids in `id_column`. With the data:
    that the ids are the data's (when `id_column` is missing but the file has the data's id
    column, that is said and the ids are checked in it). With the task: `tasks`, and a column
    per task. Labels that the task does not allow are not problems of the file (their rows are
    imported as invalid), so they are not checked here.

    Returns:
        The problems, in that order: DataFileError, ColumnError, IdError (the file, its id
        column, an id) and TaskError (a task has no column, `tasks` names an unknown task).
    """
    problems: list[MetaEvaluatorError] = []
    try:
        frame: pl.DataFrame | None = DataLoader.load("labels", path, id_column).data
    except ColumnError as exc:
        if exc.column != id_column:
            return [exc]
        frame, id_column = _without_id_column(path, exc, data, problems)
    except DataError as exc:
        return [exc]
    if task is not None:
        try:
            _, columns = import_scope(task, tasks, path)
            if frame is not None:
                check_task_columns(frame, columns, path)
        except TaskError as exc:
            problems.append(exc)
    if frame is not None and data is not None and id_column in frame.columns:
        try:
            align_ids(frame, id_column, data, path)
        except (ColumnError, IdError) as exc:
            problems.append(exc)
    return problems


def _without_id_column(
    path: str | Path,
    missing: ColumnError,
    data: EvalData | None,
    problems: list[MetaEvaluatorError],
) -> tuple[pl.DataFrame | None, str]:
    """The file read without its missing id column, and the column to check ids in.

    When the file has the data's id column, the problem says so and the ids are checked there.
    """
    try:
        frame = DataLoader.load("labels", path, None).data.drop(AUTO_ID_COLUMN)
    except DataError:
        problems.append(missing)
        return None, ""
    if data is None or data.id_column not in frame.columns:
        problems.append(missing)
        return frame, ""
    hint = f" It has the data's id column {data.id_column!r}: name that as its id column."
    problems.append(ColumnError(missing.message + hint, path=missing.path, column=missing.column))
    try:
        return DataLoader.load("labels", path, data.id_column).data, data.id_column
    except DataError as exc:
        problems.append(exc)
        return None, ""


def read_import_file(
    path: str | Path, owner_id: str, field: str, options: ImportOptions
) -> tuple[pl.DataFrame, str]:
    """The table of a file of labels, and the source it is recorded with (its content's hash).

    Raises:
        UnsafeNameError: `owner_id` (the judge or annotator id, `field`) is not a safe name.
        DataFileError, ColumnError, IdError: The file cannot be read as a table.
    """
    check_safe_name(owner_id, field=field)
    id_column = options.get("id_column", ID_COLUMN)
    fmt = options.get("data_format")
    if fmt is None:
        frame = DataLoader.load(owner_id, path, id_column).data
    else:
        frame = load_as(fmt, owner_id, path, id_column).data
    return frame, f"{IMPORTED_PREFIX}{sha256(path)[:16]}"


def checked_frame(
    frame: pl.DataFrame, where: str | Path, options: ImportOptions
) -> tuple[pl.DataFrame, str]:
    """Imported labels checked like answers, as columns, and the run id.

    The frame has a row per imported row, in its order: `original_id` (in the data's id
    dtype), then `check_frame`'s columns (`outcome`, `status`, `error_message`, a column per
    task); each row as `check_values` checks it. Tasks not imported (`imported_tasks`) are null.

    Raises:
        TaskError: A task needs a column the frame lacks, or `tasks` is unusable.
        ColumnError, IdError: The ids do not convert to, or are not in, the project's data.
    """
    task, tasks = options["task"], options.get("tasks")
    required, columns = import_scope(task, tasks, where)
    check_task_columns(frame, columns, where)
    id_column = options.get("id_column", ID_COLUMN)
    frame = align_ids(frame, id_column, options["data"], where)
    imported = imported_tasks(frame.columns, task, tasks)
    frame = frame.drop(
        t for t in task.task_names if t in frame.columns and t not in imported and t != id_column
    )
    checked = check_frame(frame, task, required=required)
    checked = checked.insert_column(0, frame.get_column(id_column).alias("original_id"))
    _say_normalised(normalised_labels(frame, task, imported), where)
    _say_invalid(checked, where)
    return checked, options.get("run_id") or new_run_id()


def _say_normalised(found: NormalisedLabels, where: str | Path) -> None:
    """Log how many labels matched an allowed label only once normalised (case, white space)."""
    if found.count:
        logger.info(
            "%s: %s: stored as the allowed labels they match ignoring case, white space and "
            "accent encoding.",
            where,
            found.describe(),
        )


def _say_invalid(checked: pl.DataFrame, where: str | Path) -> None:
    """Log once how many imported rows are invalid (kept, never scored), naming the first few.

    Each named row gives its id and why, the allowed labels included, so a bad label deep in a
    large file is found without opening the saved table.
    """
    invalid = checked.filter(pl.col("outcome") == "invalid")
    if invalid.is_empty():
        return
    shown = "; ".join(
        f"id {row_id!r}: {message}"
        for row_id, message in invalid.head(_NAMED).select("original_id", "error_message").rows()
    )
    more = f"; and {invalid.height - _NAMED} more" if invalid.height > _NAMED else ""
    logger.warning(
        "%s: %d of %d rows are invalid; they are kept as invalid and never scored (%s%s).",
        where,
        invalid.height,
        checked.height,
        shown,
        more,
    )


def filled_table(
    checked: pl.DataFrame, schema: Mapping[str, pl.DataType], values: Mapping[str, Any]
) -> pl.DataFrame:
    """The columns of `schema`, in its order: `checked`'s, else a value of `values` (or null)."""
    return checked.select(
        pl.col(c).cast(t) if c in checked.columns else pl.lit(values.get(c), dtype=t).alias(c)
        for c, t in schema.items()
    )


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


def imported_tasks(
    columns: Sequence[str], task: EvalTask, tasks: Sequence[str] | None
) -> list[str]:
    """The tasks an import of a file with `columns` takes labels of, in the task's order.

    `tasks` when given (the file's columns of other tasks are left out); otherwise every task
    the file has a column for, as meta-evaluator 0.3.3 did (it required them all), so a column
    the import would take is named rather than taken silently.
    """
    wanted = task.task_names if tasks is None else tasks
    return [t for t in task.task_names if t in wanted and t in columns]


def import_judge_frame(
    frame: pl.DataFrame,
    judge_id: str,
    *,
    source: str,
    where: str | Path,
    results_dir: Path,
    llm_client: str | None = None,
    model: str | None = None,
    **options: Unpack[ImportOptions],
) -> JudgeResults:
    """Save labels in a frame (id column + task columns) as a complete run of `judge_id`.

    `source` becomes the run's fingerprint; `where` names the origin in messages; `llm_client`
    and `model` (where the labels came from) are kept in the run's state.
    """
    check_safe_name(judge_id, field="judge_id")
    checked, run = checked_frame(frame, where, options)
    files = RunFiles(results_dir, run, judge_id)
    data, task = options["data"], options["task"]
    schema = results_schema(task, data.ids.dtype)
    values = {"judge_id": judge_id, "run_id": run, "fingerprint": source, "timestamp": now_iso(),
              "cached": False}  # fmt: skip
    results = JudgeResults(
        judge_id, run, filled_table(checked, schema, values), llm_client=llm_client,
        model_used=model,
    )  # fmt: skip
    files.write_table(results.results_data)
    stamp = now_iso()
    files.write_state(
        RunState(
            judge_id,
            run,
            source,
            stamp,
            stamp,
            results.counts(),
            llm_client=llm_client,
            model=model,
        )
    )
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
    want = data.ids.dtype
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
        given = frame.get_column(id_column)
        differs = cast.cast(have, strict=False).ne_missing(given)  # '007' -> 7 -> '7'
        if differs.any():
            before, after = given.filter(differs), cast.filter(differs)
            raise ColumnError(
                f"{path}: ids in {id_column!r} change when converted from {have} to {want} "
                f"({before.len()} of them; the first, {before[0]!r} becomes {after[0]!r}); "
                "write the ids as the data has them.",
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
