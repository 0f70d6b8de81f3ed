"""Checks on a polars frame that every EvalData must pass: column names and the id column."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

import polars as pl

from meta_evaluator._util import shown as _shown
from meta_evaluator.errors import ColumnError, DataError, IdError

AUTO_ID_COLUMN = "id"
_SHOWN = 5  # how many offending rows or values a message lists before "and N more"


__all__ = [
    "AUTO_ID_COLUMN",
    "check_columns",
    "check_has_rows",
    "check_ids",
    "check_single_type",
    "closest",
    "is_id_dtype",
    "list_some",
    "require_columns",
    "where",
    "with_auto_ids",
]


def where(source: str | None) -> str:
    """The prefix naming where data came from, for messages (`"data.csv: "`)."""
    return f"{source}: " if source else ""


def list_some(values: Sequence[Any]) -> str:
    """`[1, 2, 3]` or `[1, 2, 3, 4, 5] and 7 more`, for messages."""
    shown = ", ".join(_shown(v) for v in values[:_SHOWN])
    more = f" and {len(values) - _SHOWN} more" if len(values) > _SHOWN else ""
    return f"[{shown}]{more}"


def closest(name: str, candidates: Sequence[str]) -> str:
    """` Did you mean 'x'?` when a candidate is close to `name`, else an empty string."""
    match = difflib.get_close_matches(name, list(candidates), n=1)
    return f" Did you mean {match[0]!r}?" if match else ""


def require_columns(
    frame: pl.DataFrame, columns: Sequence[str], *, role: str, source: str | None
) -> None:
    """Raise `ColumnError` for the first of `columns` that `frame` lacks, naming what exists."""
    for column in columns:
        if column not in frame.columns:
            raise ColumnError(
                f"{where(source)}{role} {column!r} is not a column of the data "
                f"(columns: {list_some(frame.columns)}).{closest(column, frame.columns)}",
                path=source,
                column=column,
            )


def check_columns(frame: pl.DataFrame, *, source: str | None) -> None:
    """Every column needs a non-empty name and a type that can be saved (not Python objects)."""
    for position, (column, dtype) in enumerate(frame.schema.items()):
        if not column.strip():
            raise ColumnError(
                f"{where(source)}column {position + 1} has an empty name; give every column a "
                "header.",
                path=source,
                column=column,
            )
        if dtype == pl.Object:
            raise ColumnError(
                f"{where(source)}column {column!r} holds Python objects, which no data file can "
                "keep; convert it to strings, numbers or lists first.",
                path=source,
                column=column,
            )


def is_id_dtype(dtype: pl.DataType) -> bool:
    """Ids are integers or strings, nothing else, so they match exactly across files."""
    return dtype.is_integer() or dtype == pl.String


def check_ids(frame: pl.DataFrame, id_column: str, *, source: str | None) -> None:
    """Ids must be integers or strings, non-null, non-empty and unique.

    Raises:
        ColumnError: The id column is missing.
        IdError: Its dtype is not integer or string, or an id is null, empty or repeated.
    """
    require_columns(frame, [id_column], role="id_column", source=source)
    ids = frame.get_column(id_column)
    prefix = f"{where(source)}id column {id_column!r}"
    if not is_id_dtype(ids.dtype):
        hint = "cast it to pl.Int64 or pl.String"
        if ids.dtype.is_float():
            whole = ids.drop_nulls()
            if whole.len() and bool((whole == whole.round(0)).all()):
                hint = "its values are whole numbers: cast it with pl.col(...).cast(pl.Int64)"
        raise IdError(
            f"{prefix} has type {ids.dtype}; ids must be integers or strings ({hint}).",
            path=source,
            column=id_column,
        )
    nulls = _row_indices(ids.is_null())
    if nulls:
        raise IdError(
            f"{prefix} has {len(nulls)} null id(s) at {_rows_text(nulls, source)}; "
            "give every row an id.",
            path=source,
            column=id_column,
            row_id=nulls[0],
        )
    if ids.dtype == pl.String:
        empty = _row_indices(ids.str.strip_chars() == "")
        if empty:
            raise IdError(
                f"{prefix} has {len(empty)} empty id(s) at {_rows_text(empty, source)}; "
                "give every row a non-empty id.",
                path=source,
                column=id_column,
                row_id=empty[0],
            )
    if ids.n_unique() == ids.len():  # a tenth of is_duplicated's memory: 9 MB per million
        return
    repeated = ids.is_duplicated()
    if bool(repeated.any()):
        values = ids.filter(repeated).unique(maintain_order=True).to_list()
        rows = _row_indices(repeated)
        raise IdError(
            f"{prefix} repeats {len(values)} id(s) {list_some(values)} at "
            f"{_rows_text(rows, source)}; ids must be unique.",
            path=source,
            column=id_column,
            row_id=values[0],
        )


def check_single_type(values: Sequence[Any], id_column: str, *, source: str | None) -> None:
    """Raw ids read from JSON must all have one type (`1` and `"1"` are different ids)."""
    first_of: dict[str, int] = {}
    for index, value in enumerate(values):
        if value is None:
            continue
        kind = type(value).__name__
        if kind not in first_of:
            first_of[kind] = index
    if len(first_of) > 1:
        seen = ", ".join(
            f"{kind} at {_rows_text([index], source)} ({_shown(values[index])})"
            for kind, index in first_of.items()
        )
        raise IdError(
            f"{where(source)}id column {id_column!r} mixes types: {seen}; ids must all be "
            "integers or all strings.",
            path=source,
            column=id_column,
            row_id=max(first_of.values()),
        )
    kinds = set(first_of)
    if kinds and not kinds <= {"int", "str"}:
        kind = kinds.pop()
        raise IdError(
            f"{where(source)}id column {id_column!r} holds {kind} values "
            f"({_rows_text([first_of[kind]], source)}: {_shown(values[first_of[kind]])}); ids "
            "must be integers or strings.",
            path=source,
            column=id_column,
            row_id=first_of[kind],
        )


def with_auto_ids(frame: pl.DataFrame, *, source: str | None) -> pl.DataFrame:
    """Prepend a column `id` holding `id-1 … id-N`."""
    if AUTO_ID_COLUMN in frame.columns:
        raise ColumnError(
            f"{where(source)}no id_column was given, and the data already has a column "
            f"{AUTO_ID_COLUMN!r}, which assigned ids would replace; pass "
            f"id_column={AUTO_ID_COLUMN!r} or rename that column.",
            path=source,
            column=AUTO_ID_COLUMN,
        )
    ids = pl.int_range(1, pl.len() + 1, eager=False).cast(pl.String)
    return frame.select((pl.lit("id-") + ids).alias(AUTO_ID_COLUMN), pl.all())


def check_has_rows(frame: pl.DataFrame, *, source: str | None) -> None:
    """Evaluation data needs at least one row."""
    if frame.height == 0:
        raise DataError(
            f"{where(source)}has columns {list_some(frame.columns)} but no rows; add data.",
            path=source,
        )


def _rows_text(indices: Sequence[int], source: str | None) -> str:
    """Where rows are, as the user counts them: a frame's index, a file's rows from 1.

    `row index [0, 2]` of a frame (polars' own 0-based index); `rows [1, 3]` of a file, counted
    from 1 as its lines and records are (in a CSV the line after the header is row 1).
    """
    if source is None:
        return f"row index {list_some(indices)}"
    header = " (row 1: the line after the header)" if source.lower().endswith(".csv") else ""
    if len(indices) == 1:
        return f"row {indices[0] + 1}{header}"
    return f"rows {list_some([i + 1 for i in indices])}{header}"


def _row_indices(mask: pl.Series) -> list[int]:
    return mask.arg_true().to_list()
