"""The viewer's JSON: a page of rows, one row whole, a confusion matrix, the summary.

The pages render the same values the API returns, so a script sees what a user sees. Ids keep
their JSON type (integer ids are numbers); a multi-label label is a list; absent values null.
"""

from __future__ import annotations

import math
from typing import Any

from meta_evaluator.results.row_table import (
    DATA_PREFIX,
    FLAGS,
    HUMAN_PREFIX,
    RowTable,
    ordered_labels,
)
from meta_evaluator.view.query import RowPage, RowQuery
from meta_evaluator.view.store import RowStore

__all__ = [
    "annotate_links",
    "confusion_json",
    "plain",
    "row_detail",
    "row_json",
    "rows_json",
    "summary_json",
]


#: What the row's JSON says of each judge's answer.
_ANSWER = ("judge_label", "outcome", "status", "error_message", "flags", "humans_against",
           "reasoning", "raw_answer")  # fmt: skip


def row_json(row: dict[str, Any], table: RowTable) -> dict[str, Any]:
    """One row of a row table (`iter_rows(named=True)`) as the API gives it in a list."""
    return {
        "original_id": row["original_id"],
        "position": row["position"],
        "judge_label": row["judge_label"],
        "human_labels": {a: row[HUMAN_PREFIX + a] for a in table.annotators},
        "human_majority": row["human_majority"],
        "humans_labelled": row["humans_labelled"],
        "humans_against": row["humans_against"],
        "outcome": row["outcome"],
        "status": row["status"],
        "error_message": row["error_message"],
        "flags": [f for f in FLAGS if row[f]],
        "reasoning": row["reasoning"],
        "raw_answer": row["raw_answer"],
        "data": {c: plain(row[DATA_PREFIX + c]) for c in table.shown},
    }


def plain(value: Any) -> Any:
    """`value` as JSON can hold it: NaN and infinities are null; dates and others text."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return str(value)


def rows_json(page: RowPage, query: RowQuery, table: RowTable) -> dict[str, Any]:
    """`GET /api/rows`: the page asked for, with what was asked."""
    return {
        "judge": query.judge,
        "task": query.task,
        "total": page.total,
        "page": page.page,
        "page_size": page.page_size,
        "pages": page.pages,
        "rows": [row_json(r, table) for r in page.rows.iter_rows(named=True)],
    }


def confusion_json(store: RowStore, judge: str, task: str) -> dict[str, Any]:
    """`GET /api/confusion`: rows per (judge label, humans' majority), labels as text."""
    cells = store.confusion(judge, task)
    counts = store.counts(judge, task)
    frame = store.table(judge, task).frame
    judged = frame.get_column("judge_key").is_not_null()
    voted = frame.get_column("majority_key").is_not_null()
    found = {*cells["judge_key"].to_list(), *cells["majority_key"].to_list()}
    return {
        "judge": judge,
        "task": task,
        "labels": ordered_labels(store.task, task, found),
        "cells": [{"judge_label": a, "human_label": b, "rows": n} for a, b, n in cells.iter_rows()],
        "rows": counts["rows"],
        "rows_compared": int(cells["rows"].sum()),
        "rows_without_judge_label": int((~judged).sum()),
        "rows_without_human_label": int((~voted).sum()),
    }


def summary_json(store: RowStore) -> dict[str, Any]:
    """`GET /api/summary`: judges, tasks, annotators, and rows per flag of each judge and task."""
    task = store.task
    return {
        "project": store.project.project_dir.resolve().name,
        "rows": len(store.data),
        "judges": [{"id": j, "run_id": store.judge_runs.get(j)} for j in store.judges],
        "tasks": [
            {"name": t, "kind": task.task_kind(t), "labels": task.allowed_labels(t)}
            for t in store.tasks
        ],
        "annotators": store.annotators,
        "flags": [
            {"judge": j, "task": t, **store.counts(j, t)} for j in store.judges for t in store.tasks
        ],
    }


def annotate_links(store: RowStore, position: int, annotate_url: str | None) -> dict[str, Any]:
    """Where to label the row at `position` on the annotation page, per annotator.

    With `annotate_url` (the annotation page's address) the links are absolute; without, the
    paths are given with the command that opens the page.
    """
    path = f"/annotate/{{annotator}}/{position}"
    base = annotate_url.rstrip("/") if annotate_url else None
    links = {a: f"{base or ''}{path.format(annotator=a)}" for a in store.annotators}
    return {
        "url": base,
        "path": path,
        "links": links,
        # the folder's name, not its path: the page may be shared (a token, another host)
        "command": f"meta-evaluator annotate {store.project.project_dir.resolve().name}",
    }


def row_detail(store: RowStore, position: int, annotate_url: str | None = None) -> dict[str, Any]:
    """`GET /api/rows/{id}`: everything about one row, for every judge and every task."""
    data = store.data_row(position)
    tasks: dict[str, Any] = {}
    for task in store.task.task_names:
        judges: dict[str, Any] = {}
        humans: dict[str, Any] = {}
        majority: Any = None
        for judge in store.judges:
            table = store.table(judge, task)
            row = table.frame.row(position, named=True)  # tables are in data order
            whole = row_json(row, table)
            humans, majority = whole["human_labels"], whole["human_majority"]
            judges[judge] = {k: whole[k] for k in _ANSWER}
            judges[judge]["run_id"] = store.judge_runs.get(judge)
        tasks[task] = {
            "kind": store.task.task_kind(task),
            "human_labels": humans,
            "human_majority": majority,
            "judges": judges,
        }
    return {
        "original_id": data[store.data.id_column],
        "position": position,
        "data": {k: plain(v) for k, v in data.items()},
        "shown": store.task.columns_shown(),
        "tasks": tasks,
        "annotate": annotate_links(store, position, annotate_url),
    }
