"""Human annotations: one annotator's labels, stored and loaded like a judge's run.

```
annotations/<run_id>/<annotator_id>.parquet       the labels, one row per data row annotated
annotations/<run_id>/<annotator_id>_state.json    source, times, counts
annotations/web/<annotator_id>.parquet            labels given on the annotation page
```
An annotator's imported sets replace one another (the latest complete one counts). Labels given
on the annotation page (`annotations/web/`) are merged into that set row by row: for each row
the label given last counts, so a row relabelled on the page replaces its imported label, the
other imported labels stay, and a later import replaces page labels of the rows it has.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any, Unpack

import polars as pl

from meta_evaluator.data.reading import read_parquet_snapshot
from meta_evaluator.errors import ColumnError, StateError, StorageError, UnsafeNameError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge.run_files import now_iso
from meta_evaluator.results._outcome_table import OutcomeTable
from meta_evaluator.results.external import (
    ImportOptions,
    checked_frame,
    filled_table,
    read_import_file,
)
from meta_evaluator.results.judge_results import results_schema
from meta_evaluator.storage import (
    check_safe_name,
    read_json,
    write_json,
    write_parquet,
)

__all__ = [
    "WEB_RUN",
    "HumanAnnotationResults",
    "annotation_schema",
    "combine_sets",
    "conform_annotations",
    "import_annotation_frame",
    "import_annotations",
    "latest_annotations",
    "latest_imported_table",
    "merge_web_labels",
    "read_table",
    "save_annotations",
]

STATE_VERSION = 1
#: The run folder of labels given on the annotation page.
WEB_RUN = "web"


class HumanAnnotationResults(OutcomeTable):
    """One annotator's labels, as a polars frame with a fixed set of columns.

    `results_data` has `original_id`, `annotator_id`, `run_id`, `outcome` (valid/invalid),
    `status`, `error_message`, `timestamp` and one column per task.
    """

    OUTCOMES = ("valid", "invalid")

    def __init__(self, annotator_id: str, run_id: str, results_data: pl.DataFrame) -> None:
        self.annotator_id = annotator_id
        self.run_id = run_id
        self._frame = results_data

    @property
    def error_count(self) -> int:
        """Invalid rows (a required task missing, or a label the task does not allow)."""
        return self.counts()["invalid"]

    def __repr__(self) -> str:
        return (
            f"HumanAnnotationResults(annotator_id={self.annotator_id!r}, run_id={self.run_id!r}, "
            f"{self.counts()})"
        )


def _files(annotations_dir: Path, run_id: str, annotator_id: str) -> tuple[Path, Path]:
    check_safe_name(run_id, field="run_id")
    check_safe_name(annotator_id, field="annotator_id")
    folder = annotations_dir / run_id
    return folder / f"{annotator_id}.parquet", folder / f"{annotator_id}_state.json"


def import_annotations(
    path: str | Path, annotator_id: str, *, annotations_dir: Path, **options: Unpack[ImportOptions]
) -> HumanAnnotationResults:
    """Read one annotator's labels from CSV/JSON/JSON Lines/Parquet and save them.

    The file needs `id_column` (ids of the project's data) and one column per required task;
    every task it has a column for is imported, or only those of `tasks` when given (an
    annotator who labelled some tasks only). Labels are checked against the task like a
    judge's: rows missing a required task or with a label the task does not allow are kept as
    `invalid`, with the reason, and never scored.

    Raises:
        UnsafeNameError: The annotator or run id is not a safe file name.
        DataFileError, ColumnError, IdError, TaskError: The file does not fit the project.
    """
    frame, source = read_import_file(path, annotator_id, "annotator_id", options)
    return import_annotation_frame(
        frame, annotator_id, source=source, where=path, annotations_dir=annotations_dir, **options
    )


def import_annotation_frame(
    frame: pl.DataFrame,
    annotator_id: str,
    *,
    source: str,
    where: str | Path,
    annotations_dir: Path,
    **options: Unpack[ImportOptions],
) -> HumanAnnotationResults:
    """Save one annotator's labels in a frame (id column + task columns), checked as above."""
    check_safe_name(annotator_id, field="annotator_id")
    checked, run = checked_frame(frame, where, options)
    data = options["data"]
    schema = annotation_schema(options["task"], data.ids.dtype)
    values = {"annotator_id": annotator_id, "run_id": run, "timestamp": now_iso()}
    results = filled_table(checked, schema, values)
    return save_annotations(annotations_dir, run, annotator_id, results, source=source)


def annotation_schema(task: EvalTask, id_dtype: pl.DataType) -> dict[str, pl.DataType]:
    """Column -> dtype of an annotator's frame: ids keep the data's dtype; a column per task."""
    schema = {
        c: t
        for c, t in results_schema(task, id_dtype).items()
        if c in ("original_id", "run_id", "outcome", "status", "error_message", "timestamp")
        or c in task.task_names
    }
    return {"original_id": schema.pop("original_id"), "annotator_id": pl.String(), **schema}


def save_annotations(
    annotations_dir: Path,
    run_id: str,
    annotator_id: str,
    results: pl.DataFrame,
    *,
    source: str,
    created_at: str | None = None,
) -> HumanAnnotationResults:
    """Write an annotator's labels and their state file, each atomically.

    `annotations_dir` is the project's `annotations/` folder: its parent is the project folder
    that every write is checked against (`storage.check_inside_project`), also before the
    project's first save.

    Raises:
        UnsafeNameError: The run or annotator id is not a safe file name.
        OutsideProjectError: A folder on the way is a symlink out of the project.
        DiskFullError, PermissionDeniedError, StorageError: The file system refused a write.
    """
    table, state = _files(annotations_dir, run_id, annotator_id)
    root = annotations_dir.parent
    write_parquet(table, results, root=root)
    found = HumanAnnotationResults(annotator_id, run_id, results)
    stamp = now_iso()
    write_json(
        state,
        {
            "schema_version": STATE_VERSION,
            "annotator_id": annotator_id,
            "run_id": run_id,
            "source": source,
            "created_at": created_at or stamp,
            "completed_at": stamp,
            "counts": found.counts(),
        },
        root=root,
    )
    return found


def latest_annotations(
    annotations_dir: Path,
    *,
    columns: Collection[str] | None = None,
    categories: Collection[str] = (),
) -> dict[str, HumanAnnotationResults]:
    """The labels of every annotator, by annotator id (sorted).

    Each annotator's latest complete imported set, with the labels given on the annotation page
    merged in row by row (`merge_web_labels`). The run id of a merged set is `<run_id>+web`.
    With `columns`, only those (that a set has) are kept, and a set without page labels reads
    no others from disk; text columns named in `categories` are held as polars Categoricals.
    """
    imported, web = _latest_sets(annotations_dir)
    found: dict[str, HumanAnnotationResults] = {}
    for annotator in sorted({*imported, *web}):
        own = imported.get(annotator)
        if columns is not None and own is not None and annotator not in web:
            run, table = own
            frame = read_table(table, columns, categories)
        else:
            combined = combine_sets(own, web.get(annotator))
            if combined is None:  # never: the annotator has one set or both
                continue
            run, frame, _ = combined
            if columns is not None:
                frame = frame.select(c for c in frame.columns if c in columns)
            text = [c for c in categories if frame.schema.get(c) == pl.String]
            frame = frame.with_columns(pl.col(text).cast(pl.Categorical))
        found[annotator] = HumanAnnotationResults(annotator, run, frame)
    return found


def combine_sets(
    imported: tuple[str, Path] | None, web: Path | None
) -> tuple[str, pl.DataFrame, pl.DataFrame | None] | None:
    """The labels scoring uses of one annotator: (run id, labels, imported set), or None.

    `imported` is the latest complete imported set (run id, table), `web` the annotation page's
    table. With both, the page's labels are merged in row by row (`merge_web_labels`) and the
    run id is `<run_id>+web`; with one, its table as read (run id `web` for the page's). The
    imported set is also given alone (None without one). None when there is neither.

    Raises:
        StorageError: A table cannot be read (or is a git-lfs pointer).
        ColumnError: The two tables disagree on a column's dtype.
    """
    if imported is None:
        return (WEB_RUN, read_table(web), None) if web is not None else None
    run, table = imported
    base = read_table(table)
    if web is None:
        return run, base, base
    merged = merge_web_labels(base, read_table(web), imported_file=table, web_file=web)
    return f"{run}+{WEB_RUN}", merged, base


def latest_imported_table(annotations_dir: Path, annotator_id: str) -> tuple[str, Path] | None:
    """The run id and table of the annotator's latest complete imported set, or None.

    Imported means made elsewhere and added with `import_annotations` (not the annotation
    page's labels, which `merge_web_labels` merges into this set).
    """
    check_safe_name(annotator_id, field="annotator_id")
    imported, _ = _latest_sets(annotations_dir, annotator_id)
    return imported.get(annotator_id)


def merge_web_labels(
    imported: pl.DataFrame,
    web: pl.DataFrame,
    *,
    imported_file: Path | None = None,
    web_file: Path | None = None,
) -> pl.DataFrame:
    """An imported set with the annotation page's labels merged in, row by row.

    For each id the row with the later `timestamp` counts (ties go to the page): a row labelled
    on the page after the import replaces the imported row; an import made after the page's
    label replaces it. Imported rows come first, in their order, then rows only the page has.

    The two tables may come from different versions of the task: the result has the imported
    set's columns, then any column only the page's table has (a task added after the import),
    and a column one table lacks is null in its rows (that table holds no label for that task).

    Args:
        imported: The annotator's latest imported set.
        web: The annotator's labels from the annotation page.
        imported_file: Where `imported` was read, named in errors.
        web_file: Where `web` was read, named in errors.

    Raises:
        ColumnError: A column both tables have differs in dtype (the data's id dtype or a
            task's kind changed between the import and the page's labels).
    """
    schema = dict(imported.schema)
    for column, dtype in web.schema.items():
        schema.setdefault(column, dtype)
    imported = conform_annotations(imported, schema, imported_file, other=web_file)
    web = conform_annotations(web, schema, web_file, other=imported_file)
    at = pl.col("timestamp").fill_null("")
    ordered = imported.with_row_index("_position")
    page = web.join(
        ordered.select("original_id", "_position", at.alias("_imported_at")),
        on="original_id",
        how="left",
        maintain_order="left",
    )
    newer = page.filter(pl.col("_position").is_not_null() & (at >= pl.col("_imported_at")))
    columns = [*schema, "_position"]
    kept = ordered.join(newer.select("original_id"), on="original_id", how="anti")
    merged = pl.concat([kept.select(columns), newer.select(columns)]).sort("_position")
    only_page = page.filter(pl.col("_position").is_null()).select(columns)
    return pl.concat([merged, only_page]).drop("_position")


def conform_annotations(
    frame: pl.DataFrame,
    schema: dict[str, pl.DataType],
    path: Path | None = None,
    *,
    other: Path | None = None,
) -> pl.DataFrame:
    """`frame` with exactly the columns of `schema`, in its order: missing ones null, extra dropped.

    A column the frame lacks is a task added after the frame was saved: it holds no label for
    it, so null is its value. A column present with another dtype cannot be reconciled.

    Args:
        frame: An annotator's table as read.
        schema: The columns and dtypes wanted.
        path: Where `frame` was read, named in the error.
        other: The file `schema` comes from (the other table, or the data), named in the error.

    Raises:
        ColumnError: A column has another dtype than `schema` gives it.
    """
    for column, dtype in frame.schema.items():
        wanted = schema.get(column)
        if wanted is None or dtype == wanted or dtype == pl.Null:
            continue
        what = "the ids" if column == "original_id" else f"column {column!r}"
        where = f"{path}" if path is not None else "an annotator's table"
        against = f"{other}" if other is not None else "the project's data and task"
        raise ColumnError(
            f"{where}: {what} are {dtype}, but {wanted} in {against}; the data's id dtype or "
            "the task changed since these labels were saved. Re-import the annotator's labels "
            "(or give the data its former id dtype) so both tables agree, or move the older "
            "file out of annotations/.",
            path=path,
            column=column,
        )
    return frame.select(
        pl.col(c).cast(t) if c in frame.columns else pl.lit(None, dtype=t).alias(c)
        for c, t in schema.items()
    )


def read_table(
    path: Path, columns: Collection[str] | None = None, categories: Collection[str] = ()
) -> pl.DataFrame:
    """An annotator's Parquet table, read from one snapshot of the file (the page may save it).

    With `columns`, only those the table has are read; `categories` as Categoricals.

    Raises:
        LfsPointerError: The file is a git-lfs pointer.
        StorageError: The file cannot be read, or is not Parquet.
    """
    return read_parquet_snapshot(
        path,
        advice="restore it from version control or a backup, or move it out of annotations/ "
        "and label those rows again.",
        error=StorageError,
        columns=columns,
        categories=categories,
    )


def _latest_sets(
    annotations_dir: Path, annotator_id: str | None = None
) -> tuple[dict[str, tuple[str, Path]], dict[str, Path]]:
    """Per annotator, the latest complete imported set (run id, table) and the page's table."""
    if not annotations_dir.is_dir():
        return {}, {}
    best: dict[str, tuple[str, str, Path]] = {}
    web: dict[str, Path] = {}
    pattern = f"*/{annotator_id}_state.json" if annotator_id else "*/*_state.json"
    for state_path in annotations_dir.glob(pattern):
        annotator = state_path.name.removesuffix("_state.json")
        try:
            table, _ = _files(annotations_dir, state_path.parent.name, annotator)
        except UnsafeNameError:
            continue
        raw: Any = read_json(state_path)
        try:
            when = raw["completed_at"]
        except (KeyError, TypeError) as exc:
            raise StateError(
                f"{state_path}: is not an annotation state (missing {exc}); restore it or "
                "delete the folder.",
                path=state_path,
            ) from exc
        if when is None or not table.is_file():
            continue
        if state_path.parent.name == WEB_RUN:
            web[annotator] = table
            continue
        key = (when, state_path.parent.name, table)
        if annotator not in best or key[:2] > best[annotator][:2]:
            best[annotator] = key
    return {a: (run, table) for a, (_, run, table) in best.items()}, web
