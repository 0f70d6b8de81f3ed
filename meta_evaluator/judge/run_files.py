"""Runs in the project's `results/` folder: where each judge's files live, which is latest.

The latest run is chosen by recorded times, never by the order names happen to sort in.

```
results/<run_id>/<judge_id>.jsonl        rows, appended while the run goes on
results/<run_id>/<judge_id>.parquet      all rows, written when the run completes
results/<run_id>/<judge_id>_state.json   fingerprint, times, counts, complete or not
```

A shard (part k of N of the rows, `--shard k/N`) writes the same files under the stem
`<judge_id>.shard-<k>-of-<N>`, so shards run on different machines never share a file; a run whose
N shards are all complete reads back as one result set.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from meta_evaluator._util import shown
from meta_evaluator.data.reading import read_parquet_columns
from meta_evaluator.errors import MetaEvaluatorError, StateError, UnsafeNameError
from meta_evaluator.locks import PidLock
from meta_evaluator.storage import (
    check_inside_project,
    check_lfs_pointer,
    check_safe_name,
    os_error,
    read_json,
    write_json,
    write_parquet,
)

__all__ = [
    "CompleteRun",
    "RunFiles",
    "RunLock",
    "RunState",
    "complete_run_ids",
    "judge_of_state_file",
    "latest_complete_runs",
    "latest_run",
    "latest_sharded_run",
    "latest_tables",
    "new_run_id",
    "now_iso",
    "run_ids",
    "run_judges",
    "run_table",
    "shard_states",
]

STATE_VERSION = 1

_SHARD_STEM = re.compile(r"(?P<judge>.+)\.shard-(?P<k>[1-9][0-9]*)-of-(?P<n>[1-9][0-9]*)")


def shard_stem(judge_id: str, shard: tuple[int, int] | None) -> str:
    """The file stem of a judge's files in a run: the judge id, plus the shard if any."""
    return judge_id if shard is None else f"{judge_id}.shard-{shard[0]}-of-{shard[1]}"


def _parse_stem(stem: str) -> tuple[str, tuple[int, int] | None]:
    """(judge id, shard) that a file stem may name (a state file's content has the last word)."""
    match = _SHARD_STEM.fullmatch(stem)
    if match is None:
        return stem, None
    return match["judge"], (int(match["k"]), int(match["n"]))


def judge_of_state_file(path: Path) -> str:
    """The judge id a `*_state.json` file of a run belongs to (the shard suffix removed)."""
    return _parse_stem(path.name.removesuffix("_state.json"))[0]


def now_iso() -> str:
    """The current UTC time, ISO 8601 with microseconds (sorts as it reads)."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


def new_run_id() -> str:
    """`run_YYYYmmdd_HHMMSS_xxxxxx`: readable, unique, a safe file name."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d_%H%M%S")
    return f"run_{stamp}_{secrets.token_hex(3)}"


@dataclass(frozen=True)
class RunState:
    """The small state file of one judge's run."""

    judge_id: str
    run_id: str
    fingerprint: str
    created_at: str
    completed_at: str | None
    counts: dict[str, int]
    shard: tuple[int, int] | None = None
    """Part k of N of the rows (a `--shard k/N` run), or None for all rows."""
    llm_client: str | None = None
    """For labels imported from elsewhere: the client or provider they came from, as given."""
    model: str | None = None
    """For labels imported from elsewhere: the model that made them, as given."""

    @property
    def complete(self) -> bool:
        """Whether every row of the run has an outcome."""
        return self.completed_at is not None

    def to_json(self) -> dict[str, Any]:
        """The JSON content of the state file."""
        return {
            "schema_version": STATE_VERSION,
            "judge_id": self.judge_id,
            "run_id": self.run_id,
            "fingerprint": self.fingerprint,
            "created_at": self.created_at,
            "completed_at": self.completed_at,
            "complete": self.complete,
            "counts": self.counts,
            **({"shard": list(self.shard)} if self.shard is not None else {}),
            **({"llm_client": self.llm_client} if self.llm_client is not None else {}),
            **({"model": self.model} if self.model is not None else {}),
        }


class RunFiles:
    """The files of one judge in one run (of one shard of the rows, if `shard` is given).

    `results_dir` is the project's `results/` folder, so its parent, `root`, is the project
    folder that every file of the run is checked against before it is written (a link out of
    the project is caught even before the project's first save).
    """

    def __init__(
        self,
        results_dir: Path,
        run_id: str,
        judge_id: str,
        *,
        shard: tuple[int, int] | None = None,
    ) -> None:
        check_safe_name(run_id, field="run_id")
        check_safe_name(judge_id, field="judge_id")
        folder = results_dir / run_id
        self.root = results_dir.parent
        self.run_id, self.judge_id, self.shard = run_id, judge_id, shard
        self.stem = shard_stem(judge_id, shard)
        self.rows = folder / f"{self.stem}.jsonl"
        self.table = folder / f"{self.stem}.parquet"
        self.state = folder / f"{self.stem}_state.json"

    def __repr__(self) -> str:
        shard = f", shard={self.shard}" if self.shard is not None else ""
        return f"RunFiles(run_id={self.run_id!r}, judge_id={self.judge_id!r}{shard})"

    def snapshot(self) -> tuple[tuple[str, int, int], ...]:
        """What the run's files look like now: name, size and change time of each.

        Taken when a run is planned and compared before it writes, to tell whether another
        process wrote to the run in between.
        """
        ledger = self.rows.parent / f"{self.stem}.batches"
        paths = [self.rows, self.state, self.table]
        if ledger.is_dir():
            paths += sorted(ledger.iterdir())
        found = []
        for path in paths:
            try:
                status = path.stat()
            except FileNotFoundError:
                continue
            found.append((path.name, status.st_size, status.st_mtime_ns))
        return tuple(found)

    def read_state(self) -> RunState | None:
        """The state file, or None when the run has none yet.

        Raises:
            StateError: The file is not a run state of this judge.
        """
        if not self.state.is_file():
            return None
        raw = read_json(self.state)
        try:
            shard = raw.get("shard")
            return RunState(
                judge_id=raw["judge_id"],
                run_id=raw["run_id"],
                fingerprint=raw["fingerprint"],
                created_at=raw["created_at"],
                completed_at=raw["completed_at"],
                counts=dict(raw["counts"]),
                shard=(int(shard[0]), int(shard[1])) if shard is not None else None,
                llm_client=_text_or_none(raw.get("llm_client")),
                model=_text_or_none(raw.get("model")),
            )
        except (KeyError, TypeError, IndexError, ValueError) as exc:
            raise StateError(
                f"{self.state}: is not a run state (missing {exc}); restore it or delete the run "
                "folder.",
                path=self.state,
            ) from exc

    def write_state(self, state: RunState) -> None:
        """Write the state file atomically."""
        write_json(self.state, state.to_json(), root=self.root)

    def write_table(self, frame: pl.DataFrame) -> None:
        """Write the complete run's rows as Parquet, atomically."""
        write_parquet(self.table, frame, root=self.root)

    def read_table(
        self,
        columns: Collection[str] | None = None,
        categories: Collection[str] = (),
        *,
        only: pl.Series | None = None,
    ) -> pl.DataFrame:
        """The complete run's rows: every column, or those of `columns` the table has.

        Text columns named in `categories` are read as polars Categoricals (see
        `data.reading.read_parquet_columns`). With `only` (ids), just the rows of those ids
        are kept as the file is read: a few rows' raw answers, not a million.

        Raises:
            LfsPointerError: The table is a git-lfs pointer.
            StateError: The table is not a readable Parquet file (cut short, or not ours).
            PermissionDeniedError, StorageError: It cannot be read.
        """
        check_lfs_pointer(self.table)
        try:
            if only is not None:
                table = pl.scan_parquet(self.table)
                held = table.collect_schema()
                names = [c for c in held if columns is None or c in columns]
                wanted = pl.col("original_id").is_in(only.implode())
                return table.filter(wanted).select(names).collect()
            return read_parquet_columns(self.table, columns, categories)
        except OSError as exc:
            raise os_error(self.table, exc, "read") from exc
        except pl.exceptions.PolarsError as exc:
            raise StateError(
                f"{self.table}: not a readable Parquet table ({shown(str(exc))}); restore it "
                f"from version control (its rows are also in {self.rows.name}).",
                path=self.table,
            ) from exc


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def latest_run(
    results_dir: Path, judge_id: str, *, complete: bool | None, fingerprint: str | None = None
) -> RunFiles | None:
    """The judge's most recent run, by recorded time.

    Args:
        results_dir: The project's results folder.
        judge_id: The judge.
        complete: Only complete runs (latest by completion), only unfinished ones, or either
            (None: latest by creation).
        fingerprint: Only runs of this judge fingerprint.
    """
    if not results_dir.is_dir():
        return None
    found: list[tuple[str, str, RunFiles]] = []
    for folder in results_dir.iterdir():
        if not folder.is_dir():
            continue
        try:
            files = RunFiles(results_dir, folder.name, judge_id)
        except UnsafeNameError:  # a folder that is not a run of ours
            continue
        state = files.read_state()
        if state is None or (complete is not None and state.complete != complete):
            continue
        if fingerprint is not None and state.fingerprint != fingerprint:
            continue
        when = state.completed_at if complete else state.created_at
        found.append((when or "", folder.name, files))
    if not found:
        return None
    return max(found, key=lambda item: (item[0], item[1]))[2]


class _Complete(NamedTuple):
    """A complete run of one judge: one file set, or the N shards of one run."""

    completed_at: str
    run_id: str
    parts: list[RunFiles]
    fingerprints: frozenset[str]
    """The judge fingerprints of its parts (one, unless shards were run differently)."""


def _complete_runs(results_dir: Path, run_id: str = "*") -> dict[str, list[_Complete]]:
    """Every complete run under `results_dir` (or run `run_id` only) with its table(s), by judge.

    Shards of one run count only together: all N of them (the same N), each complete; the
    run's completion time is the last shard's.
    """
    found: dict[str, list[_Complete]] = {}
    shards: dict[tuple[str, str, int], dict[int, tuple[RunState, RunFiles]]] = {}
    states = results_dir.glob(f"{run_id}/*_state.json") if results_dir.is_dir() else []
    for path in sorted(states):
        judge_id, shard = _parse_stem(path.name.removesuffix("_state.json"))
        try:
            files = RunFiles(results_dir, path.parent.name, judge_id, shard=shard)
            state = files.read_state()
            if state is not None and shard is not None and state.shard != shard:
                # a judge whose own id ends in ".shard-k-of-N", run over all rows
                judge_id, shard = path.name.removesuffix("_state.json"), None
                files = RunFiles(results_dir, path.parent.name, judge_id)
                state = files.read_state()
        except UnsafeNameError:  # a folder or file that is not a run of ours
            continue
        if state is None or state.completed_at is None or not files.table.is_file():
            continue
        if shard is None:
            found.setdefault(judge_id, []).append(
                _Complete(state.completed_at, files.run_id, [files], frozenset([state.fingerprint]))
            )
        else:
            group = shards.setdefault((judge_id, files.run_id, shard[1]), {})
            group[shard[0]] = (state, files)
    for (judge_id, run_id, count), group in shards.items():
        if len(group) == count:  # keys are 1..count: each k/N with 1 <= k <= N
            parts = [group[k][1] for k in sorted(group)]
            when = max(str(group[k][0].completed_at) for k in group)
            prints = frozenset(group[k][0].fingerprint for k in group)
            found.setdefault(judge_id, []).append(_Complete(when, run_id, parts, prints))
    return found


def shard_states(results_dir: Path, judge_id: str) -> dict[str, list[RunState]]:
    """The state of every shard of the judge's sharded runs, by run id (complete or not)."""
    found: dict[str, list[RunState]] = {}
    for path in sorted(results_dir.glob("*/*_state.json")) if results_dir.is_dir() else []:
        stem_judge, shard = _parse_stem(path.name.removesuffix("_state.json"))
        if shard is None or stem_judge != judge_id:
            continue
        try:
            state = RunFiles(results_dir, path.parent.name, judge_id, shard=shard).read_state()
        except UnsafeNameError:  # a folder that is not a run of ours
            continue
        if state is not None and state.shard == shard and state.judge_id == judge_id:
            found.setdefault(path.parent.name, []).append(state)
    return found


def latest_sharded_run(
    results_dir: Path, judge_id: str, *, fingerprint: str
) -> tuple[str, list[RunFiles]] | None:
    """The judge's latest sharded run whose N shards are all complete with this fingerprint.

    Returns its completion time (the last shard's) and its shards' files, or None.
    """
    runs = [
        run
        for run in _complete_runs(results_dir).get(judge_id, [])
        if run.parts[0].shard is not None and run.fingerprints == {fingerprint}
    ]
    if not runs:
        return None
    latest = max(runs, key=lambda run: (run.completed_at, run.run_id))
    return latest.completed_at, latest.parts


def complete_run_ids(results_dir: Path, judge_id: str) -> list[str]:
    """The judge's complete runs (sharded ones once all shards are), first completed first.

    Ordered by completion time (a sharded run's: its last shard's), then by run id.

    Raises:
        UnsafeNameError: `judge_id` is not a safe file name.
    """
    check_safe_name(judge_id, field="judge_id")
    runs = _complete_runs(results_dir).get(judge_id, [])
    ordered = sorted(runs, key=lambda run: (run.completed_at, run.run_id))
    return list(dict.fromkeys(run.run_id for run in ordered))


class CompleteRun(NamedTuple):
    """A judge's complete run: its id and when it completed (ISO 8601, UTC)."""

    run_id: str
    completed_at: str | None
    """None when not known (results handed over rather than read from a run's state)."""
    fingerprint: str | None = None
    """The judge's fingerprint (for labels imported from elsewhere, their source); None when
    not known or when the shards of the run differ."""


def latest_complete_runs(results_dir: Path) -> dict[str, CompleteRun]:
    """The latest complete run of every judge under `results_dir`, from the state files alone.

    The run `latest_tables` reads (by completion time, then run id), without reading a table.
    """
    found = {}
    for judge_id, runs in sorted(_complete_runs(results_dir).items()):
        latest = max(runs, key=lambda run: (run.completed_at, run.run_id))
        (one,) = latest.fingerprints if len(latest.fingerprints) == 1 else (None,)
        found[judge_id] = CompleteRun(latest.run_id, latest.completed_at, one)
    return found


def latest_tables(
    results_dir: Path,
    ids: pl.Series | None = None,
    *,
    columns: Collection[str] | None = None,
    categories: Collection[str] = (),
    only: pl.Series | None = None,
) -> dict[str, tuple[str, pl.DataFrame]]:
    """The latest complete run of every judge under `results_dir`: judge id → (run id, rows).

    A sharded run counts once all its shards are complete; its shards' rows are merged into one
    result set, each id once (the first shard's row wins), in the order of `ids` (the data's
    ids) when given, else shard by shard. With `columns`, only those (that a table has) are read;
    `categories` and `only` (the rows of these ids alone) as in `RunFiles.read_table`.
    """
    found = {}
    for judge_id, runs in sorted(_complete_runs(results_dir).items()):
        latest = max(runs, key=lambda run: (run.completed_at, run.run_id))
        if len(latest.parts) == 1 and latest.parts[0].shard is None:
            frame = latest.parts[0].read_table(columns, categories, only=only)
        else:
            tables = [part.read_table(columns, categories, only=only) for part in latest.parts]
            frame = _merge_shards(tables, ids)
        found[judge_id] = (latest.run_id, frame)
    return found


def run_ids(results_dir: Path) -> list[str]:
    """The runs under `results_dir`: folders holding a judge's state file, sorted by name."""
    if not results_dir.is_dir():
        return []
    return sorted({path.parent.name for path in results_dir.glob("*/*_state.json")})


def run_judges(results_dir: Path, run_id: str) -> dict[str, bool]:
    """The judges with files in run `run_id`, sorted, and whether each is complete.

    A sharded judge is complete once all its N shards are. Empty when there is no such run.

    Raises:
        UnsafeNameError: `run_id` is not a safe file name.
    """
    check_safe_name(run_id, field="run_id")
    folder = results_dir / run_id
    if not folder.is_dir():
        return {}
    complete = _complete_runs(results_dir, run_id)
    judges = {judge_of_state_file(path) for path in folder.glob("*_state.json")}
    return {judge: judge in complete for judge in sorted(judges | set(complete))}


def run_table(
    results_dir: Path,
    run_id: str,
    judge_id: str,
    ids: pl.Series | None = None,
    *,
    columns: Collection[str] | None = None,
    categories: Collection[str] = (),
) -> pl.DataFrame | None:
    """The rows of one judge in one complete run (shards merged as `latest_tables` does).

    None when the run has no complete rows of the judge (no such run or judge, unfinished, or
    its table missing). `ids`, `columns` and `categories` as in `latest_tables`.

    Raises:
        UnsafeNameError: `run_id` or `judge_id` is not a safe file name.
        LfsPointerError, StateError, StorageError: The table cannot be read.
    """
    check_safe_name(run_id, field="run_id")
    check_safe_name(judge_id, field="judge_id")
    runs = _complete_runs(results_dir, run_id).get(judge_id)
    if not runs:
        return None
    run = max(runs, key=lambda one: (one.completed_at, len(one.parts)))
    if len(run.parts) == 1 and run.parts[0].shard is None:
        return run.parts[0].read_table(columns, categories)
    return _merge_shards([part.read_table(columns, categories) for part in run.parts], ids)


def _merge_shards(tables: list[pl.DataFrame], ids: pl.Series | None) -> pl.DataFrame:
    """The shards' rows as one table: each id once (first shard wins), in data order if known.

    With `ids`, rows follow an id's (last) place in it; rows of ids it lacks come last, in shard
    order. A join on the place and a stable sort: no Python object per row.
    """
    merged = pl.concat(tables, how="diagonal_relaxed").unique(
        subset="original_id", keep="first", maintain_order=True
    )
    if ids is None:
        return merged
    found, data = merged.get_column("original_id"), ids.rename("original_id")
    if _is_text(found.dtype) and _is_text(data.dtype):  # a Categorical id column is text
        found, data = found.cast(pl.String), data.cast(pl.String)
    elif data.dtype != found.dtype:  # numbers match numbers of another width; text no number
        numbers = data.dtype.is_numeric() and found.dtype.is_numeric()
        data = data.cast(found.dtype, strict=False) if numbers else found.clear()
    places = data.to_frame().with_row_index("place").unique(subset="original_id", keep="last")
    place = found.to_frame().join(
        places, on="original_id", how="left", nulls_equal=True, maintain_order="left"
    )["place"]
    name = "__place"
    while name in merged.columns:
        name += "_"
    return (
        merged.with_columns(place.alias(name))
        .sort(name, nulls_last=True, maintain_order=True)
        .drop(name)
    )


def _is_text(dtype: pl.DataType) -> bool:
    return dtype == pl.String or dtype == pl.Categorical or dtype == pl.Enum


class RunLock(PidLock):
    """An exclusive claim on one judge's rows in one run, so two processes never write them.

    A `locks.PidLock` on `<run>/<stem>.lock`: a lock left by a process that is gone (on this
    host) is taken over, an empty one being written is waited for, and one held by a live
    process raises `StateError`. Never taken through a symbolic link; a file system refusing
    it raises the typed error naming the lock file.
    """

    def __init__(self, files: RunFiles) -> None:
        """The lock of the rows `files` names (one judge, one run, one shard)."""
        super().__init__(files.state.with_name(f"{files.stem}.lock"), root=files.root)

    def acquire(self) -> None:
        """Take the lock (making the run's folder), or raise StateError naming its holder.

        Raises:
            StateError: A live process holds the lock.
            OutsideProjectError: The run's folder, or the lock file, is a link out of the project.
            DiskFullError, PermissionDeniedError, StorageError: The file system refused it.
        """
        check_inside_project(self.path, root=self.root)  # before the folder is made
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise os_error(self.path.parent, exc, "create the run's folder") from exc
        super().acquire()

    def _busy(self, owner: str) -> MetaEvaluatorError:
        return StateError(
            f"{self.path}: run {self.path.parent.name!r} of judge {self.path.stem!r} is being "
            f"written by process {shown(owner)}; wait for it to finish, or run under another "
            "run_id.",
            path=self.path,
        )

    def _not_taken(self) -> MetaEvaluatorError:
        return StateError(f"{self.path}: could not take the run's lock.", path=self.path)
