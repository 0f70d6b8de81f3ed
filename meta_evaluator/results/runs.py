"""Runs in the project's `results/` folder: where each judge's files live, which is latest.

The latest run is chosen by recorded times, never by the order names happen to sort in.

```
results/<run_id>/<judge_id>.jsonl        rows, appended while the run goes on
results/<run_id>/<judge_id>.parquet      all rows, written when the run completes
results/<run_id>/<judge_id>_state.json   fingerprint, times, counts, complete or not
```
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from meta_evaluator.errors import StateError, UnsafeNameError
from meta_evaluator.results.judge_results import JudgeResults
from meta_evaluator.storage import check_safe_name, read_json, write_json, write_parquet

__all__ = [
    "RunFiles",
    "RunLock",
    "RunState",
    "latest_results",
    "latest_run",
    "new_run_id",
    "now_iso",
]

STATE_VERSION = 1


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
        }


class RunFiles:
    """The files of one judge in one run."""

    def __init__(self, results_dir: Path, run_id: str, judge_id: str) -> None:
        check_safe_name(run_id, field="run_id")
        check_safe_name(judge_id, field="judge_id")
        folder = results_dir / run_id
        self.run_id, self.judge_id = run_id, judge_id
        self.rows = folder / f"{judge_id}.jsonl"
        self.table = folder / f"{judge_id}.parquet"
        self.state = folder / f"{judge_id}_state.json"

    def read_state(self) -> RunState | None:
        """The state file, or None when the run has none yet.

        Raises:
            StateError: The file is not a run state of this judge.
        """
        if not self.state.is_file():
            return None
        raw = read_json(self.state)
        try:
            return RunState(
                judge_id=raw["judge_id"],
                run_id=raw["run_id"],
                fingerprint=raw["fingerprint"],
                created_at=raw["created_at"],
                completed_at=raw["completed_at"],
                counts=dict(raw["counts"]),
            )
        except (KeyError, TypeError) as exc:
            raise StateError(
                f"{self.state}: is not a run state (missing {exc}); restore it or delete the run "
                "folder.",
                path=self.state,
            ) from exc

    def write_state(self, state: RunState) -> None:
        """Write the state file atomically."""
        write_json(self.state, state.to_json())

    def write_table(self, results: JudgeResults) -> None:
        """Write the complete run's rows as Parquet, atomically."""
        write_parquet(self.table, results.results_data)

    def read_table(self) -> pl.DataFrame:
        """The complete run's rows."""
        return pl.read_parquet(self.table)


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


def latest_results(results_dir: Path) -> dict[str, JudgeResults]:
    """The latest complete run of every judge found under `results_dir`, by judge id."""
    judge_ids = (
        sorted({p.name.removesuffix("_state.json") for p in results_dir.glob("*/*_state.json")})
        if results_dir.is_dir()
        else []
    )
    found = {}
    for judge_id in judge_ids:
        files = latest_run(results_dir, judge_id, complete=True)
        if files is not None and files.table.is_file():
            found[judge_id] = JudgeResults(judge_id, files.run_id, files.read_table())
    return found


class RunLock:
    """An exclusive claim on one judge's rows in one run, so two processes never write them.

    The lock file holds the owner's host and process id. A lock left by a process that is gone
    (on this host) is taken over; one held by a live process raises `StateError`.
    """

    def __init__(self, files: RunFiles) -> None:
        self.path = files.state.with_name(f"{files.judge_id}.lock")
        self._held = False

    def acquire(self) -> None:
        """Take the lock, or raise StateError naming the process that holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        me = f"{socket.gethostname()} {os.getpid()}"
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                owner = self.path.read_text(encoding="utf-8", errors="replace").strip()
                if _alive(owner):
                    raise StateError(
                        f"{self.path}: run {self.path.parent.name!r} of judge "
                        f"{self.path.stem!r} is being written by process {owner!r}; wait for "
                        "it to finish, or run under another run_id.",
                        path=self.path,
                    ) from None
                self.path.unlink(missing_ok=True)  # its owner is gone: take it over
                continue
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(me)
            self._held = True
            return
        raise StateError(f"{self.path}: could not take the run's lock.", path=self.path)

    def release(self) -> None:
        """Give the lock back (if held)."""
        if self._held:
            self.path.unlink(missing_ok=True)
            self._held = False


def _alive(owner: str) -> bool:
    """Whether `host pid` names a live process: on another host, assume it is."""
    host, _, pid = owner.rpartition(" ")
    if host != socket.gethostname():
        return bool(owner)
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True
