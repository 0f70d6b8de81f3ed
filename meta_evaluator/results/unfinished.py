"""What a judge's unfinished run has saved, and why a judge has no complete run to score.

`score` names every judge it cannot score for want of a complete run (a judge stopped by a dead
endpoint keeps its run unfinished, so a later run resumes it), and a `run` stopped by Ctrl-C or
SIGTERM says what each judge saved before it stopped. Both read the rows on disk: the counts of
each outcome, the top reasons of the error rows, and the rows not asked yet.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from meta_evaluator.judge.row_store import read_rows
from meta_evaluator.judge.run_files import judge_of_state_file, latest_run, shard_states
from meta_evaluator.results.reasons import summarize_errors

__all__ = [
    "RowFile",
    "Unscored",
    "describe_saved",
    "row_files",
    "rows_written_since",
    "saved_rows",
    "saved_since",
    "unscored_judges",
]

_COLUMNS = ("outcome", "status", "error_message")


def saved_rows(path: Path) -> pl.DataFrame:
    """The rows of a run's JSON Lines file, the last line of each id: outcome, status, reason.

    Columns `outcome`, `status` and `error_message` (strings) and `cached` (whether the answer
    came from the response cache), one row per id, in the order ids were first written; an
    empty frame when the file does not exist.

    Raises:
        StorageError: A complete line is not a JSON object (see `read_rows`).
    """
    last: dict[str, dict[str, Any]] = {}
    for row in read_rows(path):
        last[json.dumps(row.get("original_id"), sort_keys=True, default=str)] = row
    return pl.DataFrame(
        {
            **{
                column: [None if r.get(column) is None else str(r[column]) for r in last.values()]
                for column in _COLUMNS
            },
            "cached": [r.get("cached") is True for r in last.values()],
        },
        schema={**dict.fromkeys(_COLUMNS, pl.String), "cached": pl.Boolean},
    )


def saved_since(
    results_dir: Path, before: dict[Path, tuple[int, int, int]], judge_ids: Collection[str]
) -> list[tuple[RowFile, pl.DataFrame]]:
    """The row files of `judge_ids` written since `before` (a `row_files` of then), read.

    What a stopped run saved: each file with its rows (`saved_rows`), in path order.

    Raises:
        StorageError: A complete line is not a JSON object (see `read_rows`).
    """
    written = rows_written_since(results_dir, before)
    return [(file, saved_rows(file.path)) for file in written if file.judge_id in judge_ids]


def describe_saved(rows: pl.DataFrame, total: int | None) -> str:
    """`2 valid; 5 errors: 5× connection refused at 127.0.0.1:9; 33 rows not asked`.

    Args:
        rows: A run's rows (`saved_rows`, or a results table), with an `outcome` column.
        total: The rows the run is to answer (None when unknown: not-asked is left out).
    """
    counts = dict(rows.group_by("outcome").len().iter_rows()) if rows.height else {}
    parts = [f"{counts[o]} {o}" for o in ("valid", "invalid", "skipped") if counts.get(o)]
    errors = summarize_errors(rows)
    if errors is not None:
        parts.append(errors)
    if total is not None and total > rows.height:
        parts.append(f"{total - rows.height} rows not asked")
    return "; ".join(parts) or "no rows"


@dataclass(frozen=True)
class Unscored:
    """A judge without a complete run to score, and why."""

    judge_id: str
    reason: str
    """`never run`, or `its latest run run_… is unfinished (5 errors: …; 35 rows not asked)`."""
    run_id: str | None
    """The unfinished run, or None when the judge was never run."""
    errors: int
    """Error rows in that run (a later run asks them again with `--retry error`)."""
    sharded: bool = False
    """Whether that run is split in shards (`--shard k/N`), some not complete."""


def unscored_judges(
    results_dir: Path, judge_ids: Iterable[str], scored: Collection[str], *, rows: int | None
) -> list[Unscored]:
    """Each judge of `judge_ids` not in `scored`, with why it has no complete run to score.

    Args:
        results_dir: The project's results folder.
        judge_ids: The judges that should be scored (the registered ones), in order.
        scored: The judges that have a complete run (`load_all_judge_results`).
        rows: The rows of the project's data (for the rows an unsharded run has not asked).
    """
    return [_why(results_dir, judge_id, rows) for judge_id in judge_ids if judge_id not in scored]


def _why(results_dir: Path, judge_id: str, rows: int | None) -> Unscored:
    files = latest_run(results_dir, judge_id, complete=None)
    state = files.read_state() if files is not None else None
    shards = shard_states(results_dir, judge_id)
    if shards:
        run = max(shards, key=lambda r: (max(s.created_at for s in shards[r]), r))
        started = max(s.created_at for s in shards[run])
        if state is None or state.created_at < started:
            parts = shards[run]
            count = max(s.shard[1] for s in parts if s.shard is not None)
            done = sum(s.complete for s in parts)
            errors = sum(s.counts.get("error", 0) for s in parts)
            return Unscored(
                judge_id,
                f"its latest run {run} is sharded and {done} of {count} shard(s) are complete "
                "(all are needed)",
                run,
                errors,
                sharded=True,
            )
    if files is None or state is None:
        return Unscored(judge_id, "never run", None, 0)
    if state.complete:  # complete, but its table is gone
        return Unscored(
            judge_id,
            f"its latest run {state.run_id} is complete but its table {files.table} is missing",
            state.run_id,
            0,
        )
    saved = saved_rows(files.rows)
    errors = saved.filter(pl.col("outcome") == "error").height
    return Unscored(
        judge_id,
        f"its latest run {state.run_id} is unfinished ({describe_saved(saved, rows)})",
        state.run_id,
        errors,
    )


def row_files(results_dir: Path) -> dict[Path, tuple[int, int, int]]:
    """Each run's JSON Lines file under `results_dir` with (inode, size, mtime in ns)."""
    found = {}
    for path in results_dir.glob("*/*.jsonl") if results_dir.is_dir() else []:
        try:
            stat = path.stat()
        except OSError:  # removed meanwhile (a run started over)
            continue
        found[path] = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
    return found


@dataclass(frozen=True)
class RowFile:
    """One judge's row file that a command wrote to."""

    judge_id: str
    run_id: str
    path: Path
    complete: bool
    """Whether the run's state says every row has an outcome."""


def rows_written_since(
    results_dir: Path, before: dict[Path, tuple[int, int, int]]
) -> list[RowFile]:
    """The row files created or changed since `before` (a `row_files` of then), by judge id.

    A file compares by inode, size and modification time, so a file appended to, or removed
    and written anew (a run started over), counts even on a file system with coarse times.
    """
    written = []
    for path, stat in sorted(row_files(results_dir).items()):
        if before.get(path) == stat:
            continue
        state = path.with_name(path.name.removesuffix(".jsonl") + "_state.json")
        try:
            complete = json.loads(state.read_text(encoding="utf-8")).get("completed_at") is not None
        except (OSError, ValueError, AttributeError):  # no state yet, or not ours
            complete = False
        written.append(RowFile(judge_of_state_file(state), path.parent.name, path, complete))
    return written
