"""The project's data file: saved as one change with `main_state.json`, read back checked.

Saving stages the data in `data/.<file>.pending`, the caller then replaces the state (which
records the staged file's SHA-256), then `commit` moves the staged file into place. A failure
before the state is replaced leaves the project as it was (`discard`); a crash after it is
finished by the next `read`, which recognises the staged file by its digest.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import polars as pl

from meta_evaluator._state import STATE_FILE, DataState, SampleState
from meta_evaluator.data import EvalData, SampleEvalData
from meta_evaluator.data.checks import list_some
from meta_evaluator.data.persist import DataFormat, dtype_name, read_frame, write_frame
from meta_evaluator.errors import DataError, StateError, StorageError, UnsafeNameError
from meta_evaluator.storage import check_safe_name, sha256

__all__ = ["DATA_FORMATS", "check_target", "commit", "discard", "read", "stage"]

logger = logging.getLogger(__name__)

DATA_FORMATS: tuple[DataFormat, ...] = ("parquet", "csv", "json")


def check_target(data_dir: Path, data_format: object, data_filename: object) -> str:
    """Validate the format and file name of a save; return the file name.

    Raises:
        DataError: The format is unknown or the name's extension does not match it.
        UnsafeNameError: The name is not a safe file name.
        StorageError: A folder of that name is in the way.
    """
    if data_format not in DATA_FORMATS:
        raise DataError(
            f"data_format must be one of {list(DATA_FORMATS)}, got {data_format!r}.",
            field="data_format",
        )
    filename = check_safe_name(data_filename or f"main_data.{data_format}", field="data_filename")
    if Path(filename).suffix != f".{data_format}":
        raise DataError(
            f"data_filename {filename!r} must end in '.{data_format}' for data_format "
            f"{data_format!r}.",
            field="data_filename",
        )
    target = data_dir / filename
    if target.is_dir():
        raise StorageError(
            f"{target}: cannot save the data here, a folder of that name is in the way; move the "
            "folder or pass another data_filename.",
            path=target,
        )
    return filename


def _pending(data_dir: Path, filename: str) -> Path:
    return data_dir / f".{filename}.pending"


def stage(
    eval_data: EvalData, data_dir: Path, filename: str, data_format: DataFormat, *, root: Path
) -> DataState:
    """Write `eval_data` to the staging file (inside the project `root`); describe it for state."""
    pending = _pending(data_dir, filename)
    frame = eval_data.data
    write_frame(frame, pending, data_format, root=root)
    sample = None
    if isinstance(eval_data, SampleEvalData):
        sample = SampleState(
            sample_name=eval_data.sample_name,
            stratification_columns=eval_data.stratification_columns,
            sample_percentage=eval_data.sample_percentage,
            seed=eval_data.seed,
            original_size=eval_data.original_size,
        )
    return DataState(
        name=eval_data.name,
        id_column=eval_data.id_column,
        file=filename,
        format=data_format,
        num_rows=frame.height,
        sha256=sha256(pending),
        columns={c: dtype_name(d) for c, d in frame.schema.items()},
        sample=sample,
    )


def discard(data_dir: Path, filename: str) -> None:
    """Remove a staged file whose state was never written."""
    _pending(data_dir, filename).unlink(missing_ok=True)


def commit(data_dir: Path, filename: str) -> None:
    """Move the staged file into place, once the state naming it is written.

    Raises:
        StorageError: The move failed; the next `read` finishes it.
    """
    target = data_dir / filename
    try:
        os.replace(_pending(data_dir, filename), target)
    except OSError as exc:
        raise StorageError(
            f"{target}: the state was saved but the data file could not take its place "
            f"({exc.strerror or exc}); opening the project again finishes the save.",
            path=target,
        ) from exc


class LoadedData(NamedTuple):
    """The project's data as read, and how to read its rows again once they are let go."""

    data: EvalData
    reload: Callable[[], pl.DataFrame]


def read(data_dir: Path, state: DataState, state_file: Path) -> LoadedData:
    """Read the data a state describes, finishing an interrupted save first.

    `reload` reads the same rows again, for `EvalData.release_rows`.

    Raises:
        StateError: The state names an unsafe file, or the file no longer matches the state
            (rows, columns, types, id column, sampling parameters).
        DataFileError: The file is missing or unreadable.
    """
    try:
        check_safe_name(state.file, field="data.file")
    except UnsafeNameError as exc:
        raise StateError(f"{state_file}: {exc.message}", path=state_file) from exc
    path = data_dir / state.file
    pending = _pending(data_dir, state.file)
    if pending.is_file():
        if state.sha256 is not None and sha256(pending) == state.sha256:
            logger.warning("%s: finishing a save that was interrupted", path)
            os.replace(pending, path)
        else:
            pending.unlink()  # left by a save that failed before its state was written
    identity = _identity(path)
    frame = read_frame(path, state.format, state.columns)
    problems = []
    if frame.height != state.num_rows:
        problems.append(f"holds {frame.height} rows, but {STATE_FILE} says {state.num_rows}")
    saved = {c: dtype_name(d) for c, d in frame.schema.items()}
    if saved != state.columns:
        changed = [c for c in state.columns if saved.get(c) != state.columns[c]]
        problems.append(f"column types differ from {STATE_FILE} in {list_some(changed)}")
    if state.id_column not in frame.columns:
        problems.append(f"has no id column {state.id_column!r}")
    if state.sample is not None:
        missing = [c for c in state.sample.stratification_columns if c not in frame.columns]
        if missing:
            problems.append(f"lacks the stratification column(s) {missing}")
    if problems:
        raise StateError(
            f"{path}: {'; '.join(problems)}. The file or the state was changed outside "
            "meta-evaluator; restore them from version control, or add the data again and save.",
            path=path,
        )
    if state.sample is None:
        data = EvalData(state.name, frame, state.id_column, source=str(path))
    else:
        data = SampleEvalData(
            state.name, frame, state.id_column, source=str(path), **state.sample.model_dump()
        )

    def reload() -> pl.DataFrame:
        """The rows again, from the same file (for `EvalData.release_rows`).

        Raises:
            StateError: The file changed since it was read (another process saved new data).
        """
        if _identity(path) != identity:
            raise StateError(
                f"{path}: the project's data changed since the project was opened (another "
                "process saved new data); open the project again.",
                path=path,
            )
        return read_frame(path, state.format, state.columns)

    return LoadedData(data, reload)


def _identity(path: Path) -> tuple[int, int, int]:
    """Which file `path` is, as far as a replacement or a write would change it."""
    try:
        found = path.stat()
    except OSError:
        return (-1, -1, -1)  # read_frame says what is wrong with it
    return (found.st_ino, found.st_size, found.st_mtime_ns)
