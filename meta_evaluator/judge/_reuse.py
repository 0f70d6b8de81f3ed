"""Which rows of earlier runs a run reuses (for `plan.py`).

A row is reused when it has the same judge fingerprint, the same prompt and an outcome the run
does not ask again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from meta_evaluator.errors import MetaEvaluatorError, StateError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.eval_task.eval_task import AnsweringMethod
from meta_evaluator.judge._prompting import RequestBuilder
from meta_evaluator.judge.config import Judge
from meta_evaluator.judge.result_row import FIELD_COLUMNS, ResultRow
from meta_evaluator.judge.row_store import read_rows
from meta_evaluator.judge.run_files import RunFiles, RunState
from meta_evaluator.judge.settings import RunSettings

__all__ = ["complete_with", "previous_rows", "sort_rows"]


def complete_with(
    files: RunFiles, state: RunState | None, previous: Mapping[Any, ResultRow], ids: list[Any]
) -> bool:
    """Whether the run is complete (its state and table written) with exactly the rows `ids`."""
    complete = state is not None and state.complete and files.table.is_file()
    return complete and len(previous) == len(ids)


def previous_rows(
    source: RunFiles | None, shard_sources: list[RunFiles], task: EvalTask, ids: list[Any]
) -> dict[Any, ResultRow]:
    """The rows of the run reused, by id (for shards: each id once, the first shard's wins).

    A complete run whose table has a row for each of `ids` (the rows to cover) gives them
    from its table (its final rows, column by column); any other run from its row store, line
    by line (the last line of an id wins): the store also keeps rows of ids the data has
    since lost and may have again.
    """
    names = task.task_names
    previous = {}
    for files in ([source] if source is not None else []) + shard_sources:
        table = _complete_table(files, task, None if shard_sources else ids)
        if table is not None:
            for row in table:
                if source is not None:
                    previous[row.original_id] = row
                else:
                    previous.setdefault(row.original_id, row)
            continue
        for number, record in enumerate(read_rows(files.rows), start=1):
            try:
                row = ResultRow.from_record(record, names)
                hash(row.original_id)
            except (KeyError, TypeError) as exc:
                problem = (
                    f"has no {exc.args[0]!r}"
                    if isinstance(exc, KeyError)
                    else "has an id of a "
                    f"type no data id has ({type(record['original_id']).__name__})"
                )
                raise StateError(
                    f"{files.rows}: row {number} {problem}; the file was edited or damaged. "
                    "Restore it, or delete that line (its row is asked again).",
                    path=files.rows,
                ) from None
            if source is not None:
                previous[row.original_id] = row  # the last line of an id wins
            else:
                previous.setdefault(row.original_id, row)
    return previous


def _complete_table(
    files: RunFiles, task: EvalTask, ids: list[Any] | None
) -> list[ResultRow] | None:
    """The rows of a complete run as its table holds them, if it has a row for each of `ids`.

    None for a run not complete, a table without some of `ids` (for shards, `ids` is None:
    each shard has its part), or one that cannot be read: the row store is read instead, and
    its errors name the line at fault.

    Reading a million rows' table and making their rows takes about a second; parsing the
    row store's lines, ten (and three times the memory).
    """
    try:
        state = files.read_state()
        if state is None or not state.complete or not files.table.is_file():
            return None
        frame = files.read_table()
    except MetaEvaluatorError:
        return None
    if ids is not None:
        wanted = pl.Series(ids, dtype=frame.schema["original_id"], strict=False)
        held = frame.get_column("original_id").implode()
        if wanted.null_count() or not wanted.is_in(held).all():
            return None  # ids the table lacks may be in the row store (the data changed)
    tasks = task.task_names
    absent = [None] * frame.height  # a column older tables lack
    column = {name: frame.get_column(name).to_list() if name in frame.columns else absent
              for name in (*FIELD_COLUMNS.values(), *tasks) if name != "labels"}  # fmt: skip
    if "cached" not in frame.columns:  # tables written before the response cache
        column["cached"] = [False] * frame.height
    # Equal labels share one mapping (rows never change theirs), unless free text makes
    # nearly every row's labels its own.
    shared: dict[tuple[Any, ...], dict[str, Any]] | None = {}
    if any(task.task_kind(t) == "free_text" for t in tasks):
        shared = None
    labels = []
    for values in zip(*(column[t] for t in tasks), strict=True):
        given = {t: v for t, v in zip(tasks, values, strict=True) if v is not None}
        if shared is not None:
            key = tuple((t, tuple(v) if isinstance(v, list) else v) for t, v in given.items())
            given = shared.setdefault(key, given)
        labels.append(given)
    fields = [labels if name == "labels" else column[name] for name in FIELD_COLUMNS.values()]
    return [ResultRow(*parts) for parts in zip(*fields, strict=True)]


def sort_rows(
    judge: Judge,
    method: AnsweringMethod,
    task: EvalTask,
    rows: list[dict[str, Any]],
    ids: list[Any],
    previous: Mapping[Any, ResultRow],
    print_: str,
    settings: RunSettings,
) -> tuple[dict[Any, ResultRow], list[int]]:
    """The rows to keep (same fingerprint and prompt, an outcome not to retry) and to ask."""
    methods: list[AnsweringMethod] = [method]
    if method == "structured" and task.fallback_method is not None:
        methods.append(task.fallback_method)  # rows answered after a fallback count as done too
    builders = [RequestBuilder(judge, task, m) for m in methods]
    kept: dict[Any, ResultRow] = {}
    todo: list[int] = []
    for index, (row, row_id) in enumerate(zip(rows, ids, strict=True)):
        old = previous.get(row_id)
        if (
            old is not None
            and old.fingerprint == print_
            and old.outcome not in settings.retry
            and old.prompt_hash in {b.prompt_hash(row) for b in builders}
        ):
            kept[row_id] = old
        else:
            todo.append(index)
    return kept, todo
