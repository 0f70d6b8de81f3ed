"""Saving evaluation data into a project folder and reading it back with the same dtypes.

Parquet keeps every dtype. CSV and JSON do not, so the project state records each column's
dtype (`dtype_name`) and the reader reads with exactly that schema (`parse_dtype`). Both text
formats accept only the dtypes that survive that round trip (integers, floats, strings, booleans,
dates, datetimes, nulls); anything else must be saved as Parquet.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import polars as pl

from meta_evaluator.data.checks import list_some
from meta_evaluator.data.reading import read_errors
from meta_evaluator.errors import ColumnError, DataFileError
from meta_evaluator.storage import (
    atomic_write,
    atomic_write_text,
    check_lfs_pointer,
    write_parquet,
)

__all__ = ["DataFormat", "dtype_name", "parse_dtype", "read_frame", "write_frame"]

DataFormat = Literal["parquet", "csv", "json"]

_SIMPLE_TYPES = (
    pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64,
    pl.Float32, pl.Float64, pl.String, pl.Boolean, pl.Date, pl.Null,
)  # fmt: skip
_SIMPLE = {kind.__name__: kind for kind in _SIMPLE_TYPES}
_DATETIME = re.compile(r"Datetime\(time_unit='(ns|us|ms)', time_zone=(None|'[^']*')\)")


def dtype_name(dtype: pl.DataType) -> str:
    """A stable text form of a dtype (`"Int64"`, `"Datetime(time_unit='us', time_zone=None)"`)."""
    return str(dtype)


def parse_dtype(name: str) -> pl.DataType | None:
    """The dtype `dtype_name` wrote, or `None` for one that CSV and JSON cannot restore."""
    if name in _SIMPLE:
        dtype: pl.DataType = _SIMPLE[name]()
        return dtype
    match = _DATETIME.fullmatch(name)
    if not match:
        return None
    unit, zone = match.groups()
    tz = None if zone == "None" else zone.strip("'")
    return pl.Datetime(time_unit=unit, time_zone=tz)  # type: ignore[arg-type]


def write_frame(
    frame: pl.DataFrame, path: Path, data_format: DataFormat, *, root: Path | None = None
) -> None:
    """Write `frame` atomically in `data_format`.

    Args:
        frame: The data.
        path: The file to write.
        data_format: `parquet`, `csv` or `json`.
        root: The project folder the file must stay in (see `storage.check_inside_project`).

    Raises:
        OutsideProjectError: The path leads out of the project through a symlink.
        ColumnError: CSV or JSON was asked for but a column would not survive it: its type, a
            quote or line break in its name (CSV), or NaN/infinite values (JSON).
    """
    if data_format == "parquet":
        write_parquet(path, frame, root=root)
        return
    for column, dtype in frame.schema.items():
        problem = None
        if parse_dtype(dtype_name(dtype)) is None:
            problem = f"has type {dtype}"
        elif data_format == "csv" and any(c in column for c in '"\r\n'):
            problem = "has a quote or line break in its name"
        elif data_format == "json" and dtype.is_float():
            bad = frame.get_column(column).is_nan() | frame.get_column(column).is_infinite()
            if bool(bad.any()):
                problem = f"holds NaN or infinity (row index {bad.arg_true()[0]}), which"
                problem += " JSON would turn into null"
        if problem:
            raise ColumnError(
                f"column {column!r} {problem}; {data_format.upper()} cannot keep it, so save "
                "with data_format='parquet'.",
                column=column,
            )
    if data_format == "csv":
        with atomic_write(path, "wb", root=root) as handle:
            frame.write_csv(handle)
    else:
        atomic_write_text(path, frame.write_json(), root=root)


def read_frame(path: Path, data_format: DataFormat, schema: dict[str, str]) -> pl.DataFrame:
    """Read a frame `write_frame` wrote, casting columns back to the dtypes in `schema`.

    Raises:
        DataFileError: The file is missing, unreadable or does not hold the saved columns.
    """
    if not path.is_file():
        raise DataFileError(
            f"{path}: the project's data file is missing; restore it from version control, or "
            "add the data again and save the state.",
            path=path,
        )
    check_lfs_pointer(path)
    with path.open("rb") as handle:
        is_parquet = handle.read(4) == b"PAR1"
    if is_parquet != (data_format == "parquet"):
        raise DataFileError(
            f"{path}: is {'a Parquet' if is_parquet else 'not a Parquet'} file, but the project "
            f"state says {data_format}; restore the file or the state from version control.",
            path=path,
        )
    dtypes = {c: parse_dtype(n) for c, n in schema.items()}
    exact = {c: d for c, d in dtypes.items() if d is not None}
    with read_errors(path, f"cannot be read as {data_format}", "restore it from version control."):
        if data_format == "parquet":
            frame = pl.read_parquet(path)
        elif len(exact) < len(dtypes):
            unknown = [schema[c] for c, d in dtypes.items() if d is None]
            raise DataFileError(
                f"{path}: the project state lists dtypes {unknown} that {data_format} cannot "
                "restore; the state was edited by hand. Restore it from version control.",
                path=path,
            )
        elif data_format == "csv":
            # CSV has no null type: all-null columns are read as text, then cast back.
            as_text = {c: pl.String() if d == pl.Null else d for c, d in exact.items()}
            frame = pl.read_csv(path, schema_overrides=as_text, infer_schema_length=None)
            frame = frame.with_columns(
                pl.col(c).cast(pl.Null) for c, d in exact.items() if d == pl.Null
            )
        else:
            frame = pl.read_json(path, schema=exact)
    if frame.columns != list(schema):
        raise DataFileError(
            f"{path}: holds columns {list_some(frame.columns)}, but the project state lists "
            f"{list_some(list(schema))}; the file was changed outside meta-evaluator. Restore "
            "it, or add the data again and save the state.",
            path=path,
        )
    return frame
