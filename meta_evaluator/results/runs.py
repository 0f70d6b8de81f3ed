"""The run a user names, `RUN` or `RUN:JUDGE`, read back with errors that say what exists.

`compare-runs` (and the viewer) name runs by id; a run folder may hold several judges, so a
judge is named with the run (`run_a:gpt4`) or once for both runs. An unknown run lists the
runs there are, an unknown judge the judges of that run.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from meta_evaluator._util import listed
from meta_evaluator.errors import ProjectError
from meta_evaluator.judge.run_files import (
    RunFiles,
    run_ids,
    run_judges,
    run_table,
    shard_states,
)
from meta_evaluator.storage import check_safe_name

__all__ = ["RunRef", "RunRows", "read_run"]


@dataclass(frozen=True)
class RunRef:
    """A run named by the user: its id, and the judge when given as `RUN:JUDGE`."""

    run_id: str
    judge_id: str | None = None

    @classmethod
    def parse(cls, text: object, *, field: str) -> RunRef:
        """`run_id` or `run_id:judge_id`, each a safe file name.

        Raises:
            ProjectError: Not text, or more than one `:`.
            UnsafeNameError: The run or judge id is not a safe file name.
        """
        if not isinstance(text, str) or not text:
            raise ProjectError(
                f"{field}: name a run as RUN or RUN:JUDGE; got {text!r}.", field=field
            )
        run_id, colon, judge_id = text.partition(":")
        if colon and ":" in judge_id:
            raise ProjectError(
                f"{field}: {text!r} has more than one ':'; name a run as RUN or RUN:JUDGE.",
                field=field,
            )
        check_safe_name(run_id, field=field)
        if colon:
            check_safe_name(judge_id, field=field)
        return cls(run_id, judge_id if colon else None)

    def __str__(self) -> str:
        return self.run_id if self.judge_id is None else f"{self.run_id}:{self.judge_id}"


@dataclass(frozen=True)
class RunRows:
    """One judge's rows in one complete run, and what the run folder holds besides."""

    run_id: str
    judge_id: str
    frame: pl.DataFrame
    """The judge's rows (the columns asked for), shards merged."""
    judges_in_run: tuple[str, ...]
    """Every judge with files in the run folder, sorted."""
    completed_at: str | None
    """When the run of this judge completed (its last shard), ISO 8601 UTC."""
    fingerprint: str | None
    """The digest of the judge configuration that answered (None when rows disagree)."""


def read_run(
    results_dir: Path,
    ref: RunRef,
    *,
    judge_id: str | None = None,
    field: str = "run",
    ids: pl.Series | None = None,
    columns: Collection[str] | None = None,
) -> RunRows:
    """The rows of the judge `ref` names (else `judge_id`, else the run's only judge).

    Args:
        results_dir: The project's `results/` folder.
        ref: The run, and maybe the judge.
        judge_id: The judge when `ref` names none.
        field: The argument the run came from, named in errors (`run_a`).
        ids: The data's ids, to order a sharded run's rows.
        columns: Only these columns of the table (those it has).

    Raises:
        ProjectError: No such run (the runs there are listed), no such judge in it (its judges
            are listed), several judges and none named, or the judge's run is unfinished.
        LfsPointerError, StateError, StorageError: The run's table cannot be read.
    """
    where = results_dir / ref.run_id
    judges = run_judges(results_dir, ref.run_id)
    if not judges:
        runs = run_ids(results_dir)
        there = (
            f"runs there: {listed(runs)}" if runs else "it holds no run yet (`meta-evaluator run`)"
        )
        raise ProjectError(
            f"{field}: no run {ref.run_id!r} in {results_dir}; {there}.", path=where, field=field
        )
    chosen = ref.judge_id or judge_id
    if chosen is None:
        if len(judges) > 1:
            problem = f"{field}: run {ref.run_id!r} holds the judges {listed(judges)}"
            raise ProjectError(
                f"{problem}; name one with judge_id=... or as {ref.run_id}:JUDGE.",
                path=where,
                field="judge_id",
                problem=problem,
                cli_advice=f"name one with --judge J or as {ref.run_id}:JUDGE.",
            )
        chosen = next(iter(judges))
    if chosen not in judges:
        raise ProjectError(
            f"{field}: run {ref.run_id!r} has no judge {chosen!r}; its judges: {listed(judges)}.",
            path=where,
            field=field if ref.judge_id is not None else "judge_id",  # where the judge was named
            judge_id=chosen,
        )
    frame = run_table(results_dir, ref.run_id, chosen, ids, columns=columns)
    if frame is None:
        raise ProjectError(
            f"{field}: judge {chosen!r} in run {ref.run_id!r} is unfinished (or its table is "
            f"missing); finish it with `meta-evaluator run PROJECT --judges {chosen} --run-id "
            f"{ref.run_id}` (a sharded run needs every shard complete).",
            path=where,
            field=field,
            judge_id=chosen,
        )
    return RunRows(
        ref.run_id, chosen, frame, tuple(judges), _completed_at(results_dir, ref.run_id, chosen),
        _fingerprint(frame),
    )  # fmt: skip


def _completed_at(results_dir: Path, run_id: str, judge_id: str) -> str | None:
    """The completion time of the judge's run: its state's, or its last shard's."""
    state = RunFiles(results_dir, run_id, judge_id).read_state()
    if state is not None:
        return state.completed_at
    shards = shard_states(results_dir, judge_id).get(run_id, [])
    times = [s.completed_at for s in shards if s.completed_at is not None]
    return max(times) if times else None


def _fingerprint(frame: pl.DataFrame) -> str | None:
    """The one judge fingerprint the rows carry, or None (no column, or several)."""
    if "fingerprint" not in frame.columns:
        return None
    found = frame.get_column("fingerprint").drop_nulls().unique()
    return str(found[0]) if found.len() == 1 else None
