"""Which rows of earlier runs a run reuses (for `plan.py`).

A row is reused when it has the same judge fingerprint, the same prompt and an outcome the run
does not ask again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from meta_evaluator.errors import StateError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.eval_task.eval_task import AnsweringMethod
from meta_evaluator.judge._prompting import RequestBuilder, prompt_hash
from meta_evaluator.judge.config import Judge
from meta_evaluator.judge.result_row import ResultRow
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
    source: RunFiles | None, shard_sources: list[RunFiles], task: EvalTask
) -> dict[Any, ResultRow]:
    """The rows of the run reused, by id (for shards: each id once, the first shard's wins)."""
    names = task.task_names
    previous = {}
    for files in ([source] if source is not None else []) + shard_sources:
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
    if method == "structured" and task.structured_outputs_fallback:
        methods.append("xml")  # rows answered after a fallback count as done too
    builders = [RequestBuilder(judge, task, m) for m in methods]
    kept: dict[Any, ResultRow] = {}
    todo: list[int] = []
    for index, (row, row_id) in enumerate(zip(rows, ids, strict=True)):
        old = previous.get(row_id)
        if (
            old is not None
            and old.fingerprint == print_
            and old.outcome not in settings.retry
            and old.prompt_hash in {prompt_hash(b.build(row)) for b in builders}
        ):
            kept[row_id] = old
        else:
            todo.append(index)
    return kept, todo
