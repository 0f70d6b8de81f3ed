"""Argument checks shared by every function in `stats/`, so each failure reads the same way.

Each check raises `ScoringError` with the function, the argument, what was expected and what
was given: `paired_bootstrap: confidence_level must be in (0, 1); got 1.5.`
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Hashable, Iterable, Sequence, Sized
from typing import Any

import numpy as np
import numpy.typing as npt

from meta_evaluator.errors import ScoringError

__all__ = [
    "check_choice",
    "check_interval",
    "check_same_length",
    "encode_labels",
    "is_missing",
]


def is_missing(value: Any) -> bool:
    """Whether a label counts as absent: None or a float NaN."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def check_same_length(function: str, **sequences: Sized) -> int:
    """The common length of `sequences`; raise naming every length when they differ."""
    lengths = {name: len(values) for name, values in sequences.items()}
    if len(set(lengths.values())) > 1:
        found = ", ".join(f"{name} has {n}" for name, n in lengths.items())
        raise ScoringError(f"{function}: the inputs must have the same length; {found}.")
    return next(iter(lengths.values()), 0)


def check_choice(function: str, name: str, value: Any, allowed: Iterable[Any]) -> None:
    """Raise unless `value` is one of `allowed`."""
    options = list(allowed)
    if value not in options:
        shown = ", ".join(repr(o) for o in options)
        raise ScoringError(f"{function}: {name} must be one of {shown}; got {value!r}.")


def check_interval(
    function: str,
    name: str,
    value: Any,
    low: float,
    high: float,
    *,
    closed: str = "neither",
    integer: bool = False,
) -> None:
    """Raise unless `low < value < high` (`closed` = "left", "right", "both" includes ends)."""
    kind = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kind) or math.isnan(value):
        what = "an integer" if integer else "a number"
        raise ScoringError(f"{function}: {name} must be {what}; got {value!r}.")
    left_ok = value >= low if closed in ("left", "both") else value > low
    right_ok = value <= high if closed in ("right", "both") else value < high
    if not (left_ok and right_ok):
        left = "[" if closed in ("left", "both") else "("
        right = "]" if closed in ("right", "both") else ")"
        raise ScoringError(
            f"{function}: {name} must be in {left}{low}, {high}{right}; got {value!r}."
        )


def encode_labels(
    *columns: Sequence[Any] | Any, categories: Sequence[Hashable] | None = None
) -> tuple[list[npt.NDArray[np.int64]], list[Hashable]]:
    """Integer codes for labels of several columns on one shared, sorted category list.

    Missing labels (None, NaN) get code -1. Categories are sorted when they are all of one
    orderable type, else kept in order of first appearance (so codes are reproducible).
    Plain strings and numbers take a vectorised path through polars.
    """
    if categories is None:
        fast = _encode_fast(columns)
        if fast is not None:
            return fast
        columns = tuple(_plain(c) for c in columns)
        seen: dict[Hashable, None] = {}
        for column in columns:
            for value in column:
                if not is_missing(value):
                    seen.setdefault(_hashable(value), None)
        found = list(seen)
        with contextlib.suppress(TypeError):  # mixed types keep their order of appearance
            found = sorted(found)  # type: ignore[type-var]
        categories = found
    columns = tuple(_plain(c) for c in columns)
    index = {value: code for code, value in enumerate(categories)}
    codes = []
    for column in columns:
        try:
            array = np.fromiter(
                (-1 if is_missing(v) else index[_hashable(v)] for v in column),
                dtype=np.int64,
                count=len(column),
            )
        except KeyError as exc:
            raise ScoringError(
                f"label {exc.args[0]!r} is not one of the categories given."
            ) from None
        codes.append(array)
    return codes, list(categories)


def _encode_fast(
    columns: Sequence[Sequence[Any]],
) -> tuple[list[npt.NDArray[np.int64]], list[Hashable]] | None:
    """Codes through polars when every column is plain strings, or plain numbers; else None."""
    import polars as pl

    series = []
    for column in columns:
        try:
            one = column if isinstance(column, pl.Series) else pl.Series(column, strict=True)
        except (TypeError, ValueError, pl.exceptions.PolarsError):
            return None
        if isinstance(one.dtype, pl.Categorical | pl.Enum):
            series.append(one)
            continue
        if not (one.dtype == pl.String or one.dtype.is_numeric() or one.dtype == pl.Null):
            return None
        if one.dtype.is_float():
            one = one.fill_nan(None)
        series.append(one)
    if all(isinstance(s.dtype, pl.Categorical | pl.Enum | pl.Null) for s in series) and any(
        s.dtype != pl.Null for s in series
    ):
        return _encode_categories(series)
    series = [s.cast(pl.String) if isinstance(s.dtype, pl.Categorical | pl.Enum) else s
              for s in series]  # fmt: skip
    kinds = {s.dtype == pl.String for s in series if s.dtype != pl.Null}
    if len(kinds) > 1:
        return None
    if all(s.dtype == pl.Null for s in series):
        return [np.full(len(s), -1, dtype=np.int64) for s in series], []
    dtype: pl.DataType = next(s.dtype for s in series if s.dtype != pl.Null)
    if dtype.is_numeric():
        dtype = pl.Float64() if any(s.dtype.is_float() for s in series) else pl.Int64()
    series = [s.cast(dtype) for s in series]
    uniques = pl.concat([s.drop_nulls().unique() for s in series]).unique().sort()
    mapping = pl.Series(range(len(uniques)), dtype=pl.Int64)
    codes = [
        s.replace_strict(uniques, mapping, default=-1, return_dtype=pl.Int64).to_numpy()
        for s in series
    ]
    return codes, uniques.to_list()


def _encode_categories(
    series: list[Any],
) -> tuple[list[npt.NDArray[np.int64]], list[Hashable]]:
    """Codes of polars Categorical columns: sorted labels, each column cast to their Enum.

    The labels come from the few distinct values; no label is turned into text row by row.
    """
    import polars as pl

    present = [s for s in series if s.dtype != pl.Null]
    distinct = pl.concat([s.drop_nulls().unique().cast(pl.String) for s in present])
    labels = distinct.unique().sort()
    enum = pl.Enum(labels)
    codes = []
    for one in series:
        if one.dtype == pl.Null:
            codes.append(np.full(one.len(), -1, dtype=np.int64))
            continue
        if isinstance(one.dtype, pl.Enum):  # its codes follow its own labels: go through text
            one = one.cast(pl.String)
        physical = one.cast(enum).to_physical().cast(pl.Int64).fill_null(-1)
        codes.append(physical.to_numpy())
    return codes, labels.to_list()


def _plain(column: Sequence[Any]) -> Sequence[Any]:
    """Python values of a column (a polars Series of lists yields Series otherwise)."""
    to_list = getattr(column, "to_list", None)
    return to_list() if callable(to_list) and not isinstance(column, list) else column


def _hashable(value: Any) -> Hashable:
    """Lists (multi-label answers) become tuples so they can be compared and counted."""
    if isinstance(value, list | np.ndarray):
        return tuple(_hashable(v) for v in value)
    return value  # type: ignore[no-any-return]
