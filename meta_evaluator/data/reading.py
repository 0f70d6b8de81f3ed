"""Reading tables with polars, every failure turned into one of our errors naming the file (X3).

Every reader of a data file (`DataLoader`, the project's saved data, annotators' tables) wraps
its polars call in `read_errors`, so each failure reads the same way: the file, what could not
be done, the cause's first line, what to do. `read_parquet_snapshot` reads a table that another
process may replace while it is read (a project's result and annotation tables).
"""

from __future__ import annotations

import io
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

import polars as pl

from meta_evaluator.errors import DataFileError, MetaEvaluatorError
from meta_evaluator.storage import check_lfs_pointer, os_error

__all__ = ["first_line", "read_errors", "read_parquet_columns", "read_parquet_snapshot"]


def first_line(exc: BaseException) -> str:
    """The first line of `exc`'s message (polars adds plans and hints below), or its class."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextmanager
def read_errors(
    path: str | Path,
    problem: str,
    advice: str = "",
    *,
    error: type[MetaEvaluatorError] = DataFileError,
    catch: tuple[type[BaseException], ...] = (pl.exceptions.PolarsError, OSError),
) -> Iterator[None]:
    """Raise `error` for any `catch` exception inside: `path: problem (cause); advice`.

    Without `advice` the message ends after the cause. The cause is chained with `from`.
    """
    try:
        yield
    except catch as exc:
        ending = f"; {advice}" if advice else "."
        raise error(f"{path}: {problem} ({first_line(exc)}){ending}", path=path) from exc


def read_parquet_snapshot(
    path: Path,
    *,
    advice: str,
    error: type[MetaEvaluatorError] = DataFileError,
    columns: Collection[str] | None = None,
    categories: Collection[str] = (),
) -> pl.DataFrame:
    """A Parquet table read from one snapshot of the file (see `read_parquet_columns`).

    The bytes are read at once: polars opens a path more than once, and a file replaced in
    between (by an atomic save of another process) would mix two versions ("Invalid thrift").

    Raises:
        LfsPointerError: The file is a git-lfs pointer.
        PermissionDeniedError, StorageError: The file cannot be read.
        MetaEvaluatorError: Of class `error`: it is not Parquet (`path: is not a readable
            Parquet table (cause); advice`).
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise os_error(path, exc, "read") from exc
    check_lfs_pointer(path, data[:64])
    with read_errors(path, "is not a readable Parquet table", advice, error=error):
        return read_parquet_columns(io.BytesIO(data), columns, categories)


def read_parquet_columns(
    source: Path | io.BytesIO,
    columns: Collection[str] | None = None,
    categories: Collection[str] = (),
) -> pl.DataFrame:
    """A Parquet table: every column, or those of `columns` it has; text `categories` as codes.

    A text column of few distinct values (an outcome, a label) costs 16 bytes a row as text
    and 4 as a polars Categorical, which compares with text as text does. Polars errors are
    the caller's to turn into ours (`read_errors`).
    """
    if columns is None and not categories:
        return pl.read_parquet(source)
    table = pl.scan_parquet(source)
    held = table.collect_schema()
    names = list(held) if columns is None else [c for c in held if c in columns]
    as_codes = {c: pl.Categorical() for c in categories if held.get(c) == pl.String}
    # Lazily: each column is cast as it is read, never held whole as text (a third less memory).
    return table.select(names).cast(as_codes).collect()  # type: ignore[arg-type]
