"""A run's results written as meta-evaluator 0.3.3 scripts asked (`results_format=`).

`run_judges_async(results_format="csv")` leaves, beside each judge's row store and table,
`results/<run_id>/<judge_id>.results.<format>` (JSON: a list of row objects, CSV or Parquet):
the results table's columns, with multi-label answers as 0.3.3 stored them, a slot per outcome
holding its name or `FALSE` (JSON-encoded in a CSV cell, as 0.3.3 wrote them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import polars as pl

from meta_evaluator.eval_task import EvalTask
from meta_evaluator.results.judge_results import JudgeResults
from meta_evaluator.storage import atomic_write_text, write_parquet

__all__ = ["ResultsFormat", "export_results", "with_label_vectors"]

ResultsFormat = Literal["json", "csv", "parquet"]


def with_label_vectors(
    frame: pl.DataFrame, task: EvalTask, *, encoded: bool = False
) -> pl.DataFrame:
    """`frame` with each multi-label task's column as 0.3.3's vectors (JSON text if `encoded`).

    Example:
        >>> from meta_evaluator.eval_task import MultiLabelSchema
        >>> task = EvalTask({"harm": MultiLabelSchema(outcomes=["a", "b"])}, None, ["r"])
        >>> frame = pl.DataFrame({"harm": [["b"], [], None]})
        >>> with_label_vectors(frame, task)["harm"].to_list()
        [['FALSE', 'b'], ['FALSE', 'FALSE'], None]
    """
    columns = []
    for name in _multilabel(task, frame):
        outcomes = task.allowed_labels(name) or []
        chosen = pl.col(name)
        vector = pl.concat_list(
            [
                pl.when(chosen.list.contains(o)).then(pl.lit(o)).otherwise(pl.lit("FALSE"))
                for o in outcomes
            ]
        )
        columns.append(pl.when(chosen.is_null()).then(None).otherwise(vector).alias(name))
    converted = frame.with_columns(columns) if columns else frame
    if not encoded:
        return converted
    return converted.with_columns(_encoded(converted, name) for name in _multilabel(task, frame))


def _multilabel(task: EvalTask, frame: pl.DataFrame) -> list[str]:
    return [t for t in task.task_names if task.task_kind(t) == "multilabel" and t in frame.columns]


def _encoded(frame: pl.DataFrame, name: str) -> pl.Series:
    """A list column as JSON text, encoding each distinct value once (a task has few)."""
    column = frame.get_column(name)
    distinct = column.unique().to_list()
    text = [None if v is None else json.dumps(v) for v in distinct]
    keys = pl.Series("key", distinct, dtype=column.dtype)
    table = pl.DataFrame({"key": keys, name: pl.Series(text, dtype=pl.String)})
    return (
        column.rename("key")
        .to_frame()
        .join(table, on="key", how="left", maintain_order="left", nulls_equal=True)
        .get_column(name)
    )


def export_results(
    results: Mapping[str, JudgeResults], task: EvalTask, results_dir: Path, fmt: ResultsFormat
) -> list[Path]:
    """Write each judge's rows to `results_dir/<run_id>/<judge_id>.results.<fmt>`; the paths.

    Raises:
        StorageError: A file cannot be written.
    """
    written = []
    for judge_id, result in results.items():
        path = results_dir / result.run_id / f"{judge_id}.results.{fmt}"
        frame = result.results_data
        if fmt == "parquet":
            write_parquet(path, with_label_vectors(frame, task), root=results_dir.parent)
        elif fmt == "csv":
            text = with_label_vectors(frame, task, encoded=True).write_csv()
            atomic_write_text(path, text, root=results_dir.parent)
        else:
            text = with_label_vectors(frame, task).write_json()
            atomic_write_text(path, text, root=results_dir.parent)
        written.append(path)
    return written
