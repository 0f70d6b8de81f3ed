"""`reports/drift_history.jsonl`: one line per drift check, appended, read back line by line.

Appending is safe under several processes (two schedulers checking at once): the writer holds
an operating-system lock on the file (`locks.file_lock`, released when a process dies), and
writes its whole line with one `write` on a descriptor opened with `O_APPEND`, then `fsync`. A
line cut short by a killed writer is left where it is (the next line starts on a new line),
and reading reports it (`DamagedLine`) instead of failing: one bad line costs that line only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from meta_evaluator.errors import MetaEvaluatorWarning
from meta_evaluator.locks import file_lock
from meta_evaluator.scores.drift import DriftCheck
from meta_evaluator.storage import check_inside_project, os_error

__all__ = [
    "DRIFT_HISTORY_FILE",
    "DRIFT_HISTORY_PLOT",
    "DamagedHistoryWarning",
    "DamagedLine",
    "DriftHistory",
    "append_check",
    "read_history",
]

DRIFT_HISTORY_FILE = "drift_history.jsonl"
"""The history's file under the project's `reports/`."""
DRIFT_HISTORY_PLOT = "drift_history.png"
"""Its plot (agreement and PSI over time), beside it."""


class DamagedHistoryWarning(MetaEvaluatorWarning):
    """Lines of the drift history are not drift checks: they are kept, and left out.

    Each is named with its line number and why; delete or fix them to silence it.
    """


@dataclass(frozen=True)
class DamagedLine:
    """A line of the history that is not a drift check."""

    line: int
    """Its number in the file, from 1."""
    reason: str


@dataclass(frozen=True)
class DriftHistory:
    """The checks a history file holds, in file order, and the lines that are not checks."""

    checks: tuple[DriftCheck, ...]
    damaged: tuple[DamagedLine, ...]

    def damage_report(self, path: Path) -> str | None:
        """One message naming every damaged line of the file `path` (None without any)."""
        if not self.damaged:
            return None
        lines = "; ".join(f"line {d.line}: {d.reason}" for d in self.damaged)
        return (
            f"{path}: {len(self.damaged)} line(s) are not drift checks and are left out ({lines}); "
            "they are kept as they are: delete or fix them."
        )


def append_check(
    path: Path,
    check: DriftCheck,
    *,
    root: Path,
    then: Callable[[DriftHistory], None] | None = None,
) -> DriftHistory:
    """Append `check` as one JSON line to the history `path`; return the history read back.

    `then` runs with that history while the lock is still held (the plot drawn from it), so
    the last of several writers leaves a plot of every line.

    Raises:
        OutsideProjectError: The history, or its folder, links out of the project `root`.
        DiskFullError, PermissionDeniedError, StorageError: The file cannot be written.
    """
    check_inside_project(path, root=root)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(check.to_json(), ensure_ascii=False, separators=(",", ":")).encode()
    with file_lock(path):
        try:
            descriptor = os.open(
                path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644
            )
        except OSError as exc:
            raise os_error(path, exc) from exc
        try:
            cut = _ends_without_newline(descriptor)
            data = (b"\n" if cut else b"") + line + b"\n"
            while data:
                data = data[os.write(descriptor, data) :]
            os.fsync(descriptor)
        except OSError as exc:
            raise os_error(path, exc) from exc
        finally:
            os.close(descriptor)
        history = read_history(path)
        if then is not None:
            then(history)
    return history


def _ends_without_newline(descriptor: int) -> bool:
    """Whether the file holds text whose last line was cut short (no final newline)."""
    size = os.fstat(descriptor).st_size
    return size > 0 and os.pread(descriptor, 1, size - 1) != b"\n"


def read_history(path: Path) -> DriftHistory:
    """Every check of the history `path` (none when it does not exist), damaged lines apart.

    Raises:
        StorageError: The file cannot be read.
    """
    try:
        content = path.read_bytes()
    except FileNotFoundError:
        return DriftHistory((), ())
    except OSError as exc:
        raise os_error(path, exc, "read") from exc
    checks: list[DriftCheck] = []
    damaged: list[DamagedLine] = []
    for number, raw in enumerate(content.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            checks.append(DriftCheck.model_validate(json.loads(raw)))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            damaged.append(DamagedLine(number, f"not JSON ({exc.__class__.__name__}: {exc})"))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(top level)"
            damaged.append(DamagedLine(number, f"not a drift check ({where}: {first['msg']})"))
    return DriftHistory(tuple(checks), tuple(damaged))
