"""The row store: one JSON line per finished row, appended and flushed as each row arrives.

A process killed at any moment loses at most the rows still in flight: every finished row is
already in the operating system's hands. A line cut short by the kill is dropped when the store
is opened again. The same id may appear more than once (a row asked again); the last line wins.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from meta_evaluator.errors import StorageError

__all__ = ["RowStore", "read_rows"]


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Every complete row in the file, in the order written (a torn last line is skipped).

    Raises:
        StorageError: A complete line is not a JSON object (the file was edited or corrupted).
    """
    if not path.is_file():
        return []
    rows = []
    with path.open("rb") as handle:
        data = handle.read()
    lines = data.split(b"\n")
    for number, line in enumerate(lines[:-1], start=1):  # the part after the last \n is torn
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise StorageError(
                f"{path}: line {number} is not a JSON row ({exc}); restore the file or delete "
                "that line.",
                path=path,
                row_id=number,
            ) from exc
        if not isinstance(row, dict):
            raise StorageError(f"{path}: line {number} is not a JSON object.", path=path)
        rows.append(row)
    return rows


class RowStore:
    """Append-only JSON Lines file of result rows; use as a context manager."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[bytes] | None = None

    def __enter__(self) -> RowStore:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle = self.path.open("ab+")
            _drop_torn_tail(handle)
        except OSError as exc:
            raise StorageError(
                f"{self.path}: cannot open the row store ({exc}).", path=self.path
            ) from exc
        self._handle = handle
        return self

    def append(self, row: dict[str, Any]) -> None:
        """Write one row and flush it to the operating system."""
        assert self._handle is not None, "RowStore used outside its with-block"
        line = json.dumps(row, ensure_ascii=False, allow_nan=False).encode() + b"\n"
        self._handle.write(line)
        self._handle.flush()

    def sync(self) -> None:
        """Flush and fsync: the rows written so far survive a crash of the machine too."""
        assert self._handle is not None, "RowStore used outside its with-block"
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def __exit__(self, *exc_info: object) -> None:
        if self._handle is not None:
            try:
                self.sync()
            finally:
                self._handle.close()
                self._handle = None


def _drop_torn_tail(handle: IO[bytes]) -> None:
    """Truncate a last line that has no newline: it was being written when a process died."""
    size = handle.seek(0, os.SEEK_END)
    if size == 0:
        return
    handle.seek(size - 1)
    if handle.read(1) == b"\n":
        return
    end = size
    while end > 0:
        start = max(0, end - (1 << 16))
        handle.seek(start)
        cut = handle.read(end - start).rfind(b"\n")
        if cut >= 0:
            handle.truncate(start + cut + 1)
            return
        end = start
    handle.truncate(0)
