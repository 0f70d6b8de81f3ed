"""The row store: one JSON line per finished row, appended and flushed as each row arrives.

The only place rows are serialised: each `ResultRow` is written as its record (`to_record`),
and `read_rows` gives the records back (`ResultRow.from_record` reads one).

A process killed at any moment loses at most the rows still in flight: every finished row is
already in the operating system's hands. A line cut short by the kill is dropped when the store
is opened again. The same id may appear more than once (a row asked again); the last line wins.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from meta_evaluator.errors import OutsideProjectError, StorageError
from meta_evaluator.judge.result_row import ResultRow
from meta_evaluator.storage import check_inside_project, check_lfs_pointer, os_error

_KEPT = "Rows already saved are kept, and the next run reuses them."

__all__ = ["RowStore", "read_rows"]

# One encoder for every row: json.dumps with options builds a new one per call.
_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Every complete row in the file, in the order written (a torn last line is skipped).

    Raises:
        LfsPointerError: The file is a git-lfs pointer (`git lfs pull` fetches it).
        StorageError: A complete line is not a JSON object (the file was edited or corrupted).
    """
    if not path.is_file():
        return []
    rows = []
    with path.open("rb") as handle:
        data = handle.read()
    check_lfs_pointer(path, data[:64])
    lines = data.split(b"\n")
    for number, line in enumerate(lines[:-1], start=1):  # the part after the last \n is torn
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested past any row
            raise StorageError(
                f"{path}: line {number} is not a JSON row ({type(exc).__name__}: {exc}); "
                "restore the file or delete "
                "that line.",
                path=path,
                row_id=number,
            ) from exc
        if not isinstance(row, dict):
            raise StorageError(f"{path}: line {number} is not a JSON object.", path=path)
        rows.append(row)
    return rows


class RowStore:
    r"""Append-only JSON Lines file of result rows; use as a context manager.

    The file is opened in binary mode (`O_BINARY` on Windows, so `\n` stays one byte and cut
    offsets are exact) without following a symbolic link (`O_NOFOLLOW` where the platform has
    it). A row the file system refuses (disk full, read-only, no permission) raises a typed
    `StorageError` after the file is cut back to its last whole line, so the rows before it stay
    readable and are reused by the next run.
    """

    def __init__(self, path: Path, *, root: Path | None = None) -> None:
        """Name the row file; nothing is opened before the with-block.

        Args:
            path: The JSON Lines file.
            root: The project folder it must stay in (see `storage.check_inside_project`).
        """
        self.path = path
        self.root = root
        self._fd: int | None = None
        self._end = 0  # where the next row starts: a failed write is cut back to here

    def __enter__(self) -> RowStore:
        if self.path.is_symlink():
            raise _symlink_error(self.path)
        check_inside_project(self.path, root=self.root)  # results/ or its run linked outside
        # Read at each open, not at import: only POSIX has O_NOFOLLOW, only Windows O_BINARY.
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND
        flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, flags, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _symlink_error(self.path) from exc
            raise os_error(self.path, exc, "open the row store", kept=_KEPT) from exc
        try:
            self._end = _drop_torn_tail(fd)
        except OSError as exc:
            os.close(fd)
            raise os_error(self.path, exc, "open the row store", kept=_KEPT) from exc
        self._fd = fd
        return self

    def append(self, row: ResultRow | Mapping[str, Any]) -> None:
        """Write one row, whole, to the operating system (no buffer of ours holds it).

        A `ResultRow` is written as its record (`ResultRow.to_record`); a mapping as it is.

        Raises:
            DiskFullError: The disk or quota is full; the file ends with the previous row.
            PermissionDeniedError: The file may not be written (read-only, no permission).
        """
        assert self._fd is not None, "RowStore used outside its with-block"
        record = row.to_record() if isinstance(row, ResultRow) else row
        line = _encode(record).encode() + b"\n"
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            # Part of the line may be on disk; cut it off, or the next row would follow it.
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._end)
            raise os_error(self.path, exc, "append a row", kept=_KEPT) from exc
        self._end += len(line)  # one writer (the run's lock): no need to ask the file

    def sync(self) -> None:
        """Fsync: the rows written so far survive a crash of the machine too."""
        assert self._fd is not None, "RowStore used outside its with-block"
        try:
            os.fsync(self._fd)
        except OSError as exc:
            raise os_error(self.path, exc, "save the rows", kept=_KEPT) from exc

    def __exit__(self, *exc_info: object) -> None:
        if self._fd is not None:
            try:
                self.sync()
            except StorageError:
                if exc_info[0] is None:  # else the error already on its way wins
                    raise
            finally:
                os.close(self._fd)
                self._fd = None


def _symlink_error(path: Path) -> OutsideProjectError:
    return OutsideProjectError(
        f"{path}: the row file is a symbolic link; rows are never written through one. Replace "
        "it with the file itself (or delete it to start the run's rows again).",
        path=path,
    )


def _drop_torn_tail(fd: int) -> int:
    """Truncate a last line that has no newline (it was being written when a process died).

    Returns the file's size after: where the next row starts.
    """
    size = os.fstat(fd).st_size
    if size == 0 or _read_at(fd, 1, size - 1) == b"\n":
        return size
    end = size
    while end > 0:
        start = max(0, end - (1 << 16))
        cut = _read_at(fd, end - start, start).rfind(b"\n")
        if cut >= 0:
            os.ftruncate(fd, start + cut + 1)
            return start + cut + 1
        end = start
    os.ftruncate(fd, 0)
    return 0


def _read_at(fd: int, size: int, offset: int) -> bytes:
    """`size` bytes from `offset` (fewer at the end of the file); `os.pread` is POSIX-only.

    Moving the position is harmless: the file is opened with `O_APPEND`, so every write goes to
    the end wherever the position is.
    """
    os.lseek(fd, offset, os.SEEK_SET)
    chunks = []
    while size > 0:
        chunk = os.read(fd, size)
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
