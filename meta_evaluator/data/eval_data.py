"""EvalData: the rows a judge sees, with validated ids; SampleEvalData: a reproducible subset."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from meta_evaluator._util import repeated
from meta_evaluator.data.checks import (
    check_columns,
    check_has_rows,
    check_ids,
    list_some,
    require_columns,
    where,
    with_auto_ids,
)
from meta_evaluator.errors import DataError, SamplingError

__all__ = ["EvalData", "SampleEvalData"]


class EvalData:
    """Immutable evaluation data: a polars frame, its name and the column holding row ids.

    Ids are integers or strings, unique, non-null and non-empty, and keep their dtype everywhere
    (an integer id column matches integer ids in every results file). Without `id_column`, ids
    `id-1 … id-N` are assigned in a new first column `id`.

    Example:
        >>> import polars as pl
        >>> data = EvalData("demo", pl.DataFrame({"qid": [3, 7], "text": ["hi", "bye"]}), "qid")
        >>> data.ids.to_list()
        [3, 7]
    """

    __slots__ = ("_columns", "_frame", "_id_column", "_ids", "_name", "_reload", "_source")
    _frame: pl.DataFrame | None
    _ids: pl.Series
    _columns: list[str]
    _reload: Callable[[], pl.DataFrame] | None
    _id_column: str
    _name: str
    _source: str | None

    def __init__(
        self,
        name: str,
        data: pl.DataFrame,
        id_column: str | None = None,
        *,
        source: str | None = None,
    ) -> None:
        """Validate and wrap `data`.

        Args:
            name: A short name for the data set (shown in reports and saved in the state).
            data: The rows; copied, so later changes to the caller's frame do not leak in.
            id_column: The column holding unique row ids; `None` assigns `id-1 … id-N`.
            source: Where the data came from (a file path), named in error messages.

        Raises:
            DataError: `name` is empty, `data` is not a polars DataFrame or has no rows.
            ColumnError: A column name is empty, or `id_column` is missing, or it is `None`
                while a column `id` exists.
            IdError: An id is null, empty or repeated, or the id column is neither integer
                nor string.
        """
        if not isinstance(name, str) or not name.strip():
            raise DataError(
                f"{where(source)}EvalData name must be a non-empty string, got {name!r}.",
                path=source,
                field="name",
            )
        if not isinstance(data, pl.DataFrame):
            raise DataError(
                f"{where(source)}EvalData data must be a polars DataFrame, got "
                f"{type(data).__module__}.{type(data).__name__}; convert it with "
                "pl.from_pandas(...) or pl.DataFrame(...).",
                path=source,
                field="data",
            )
        check_columns(data, source=source)
        check_has_rows(data, source=source)
        if id_column is None:
            data = with_auto_ids(data, source=source)
            id_column = "id"
        elif not isinstance(id_column, str):
            raise DataError(
                f"{where(source)}id_column must be a column name (str), got {id_column!r}.",
                path=source,
                field="id_column",
            )
        check_ids(data, id_column, source=source)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_frame", data.clone())
        object.__setattr__(self, "_ids", data.get_column(id_column))
        object.__setattr__(self, "_columns", data.columns)
        object.__setattr__(self, "_reload", None)
        object.__setattr__(self, "_id_column", id_column)
        object.__setattr__(self, "_source", source)

    @property
    def _data(self) -> pl.DataFrame:
        """The rows: held, or read back once when they were released (`release_rows`)."""
        if self._frame is None:
            assert self._reload is not None, "released rows come with a way back"
            object.__setattr__(self, "_frame", self._reload())
        assert self._frame is not None
        return self._frame

    def release_rows(self, reload: Callable[[], pl.DataFrame]) -> None:
        """Let the rows go until they are asked for; `reload` reads them back then.

        A project opened to score or report a million rows never reads its data's text: held
        from the moment it is opened, it would take a third of what scoring needs. Ids, column
        names and length stay at hand. `reload` must give the same rows (or raise).
        """
        object.__setattr__(self, "_reload", reload)
        object.__setattr__(self, "_frame", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; build a new one instead.")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; build a new one instead.")

    @property
    def name(self) -> str:
        """The data set's name."""
        return self._name

    @property
    def data(self) -> pl.DataFrame:
        """The rows, as a polars DataFrame (a cheap copy: changing it leaves this object as is)."""
        return self._data.clone()

    @property
    def id_column(self) -> str:
        """The column holding row ids."""
        return self._id_column

    @property
    def source(self) -> str | None:
        """Where the data was loaded from, if known."""
        return self._source

    @property
    def ids(self) -> pl.Series:
        """The row ids, in row order, with their dtype."""
        return self._ids.clone()

    @property
    def columns(self) -> list[str]:
        """All column names, the id column included."""
        return list(self._columns)

    def __len__(self) -> int:
        return self._ids.len()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, EvalData)
        return (
            self._name == other._name
            and self._id_column == other._id_column
            and self._data.schema == other._data.schema
            and self._data.equals(other._data, null_equal=True)
            and self._extra_state() == other._extra_state()
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self._name!r}, rows={len(self)}, "
            f"id_column={self._id_column!r}, columns={self.columns!r})"
        )

    def _extra_state(self) -> dict[str, Any]:
        """What a subclass adds to the saved state (sampling parameters)."""
        return {}

    def stratified_sample_by_columns(
        self,
        columns: Sequence[str],
        sample_percentage: float = 0.1,
        seed: int = 42,
        sample_name: str | None = None,
    ) -> SampleEvalData:
        """Draw the same fraction from every combination of `columns`' values, reproducibly.

        Each stratum (a distinct combination, null counting as a value) keeps
        `max(1, round_half_up(size * sample_percentage))` rows (10 rows at 0.35 keep 4), chosen
        by a numpy generator seeded with `seed`, so the same data, columns, fraction and seed
        give the same sample on every machine. Rows keep their original order.

        Args:
            columns: The columns whose value combinations define the strata (at least one).
            sample_percentage: The fraction to keep, in (0, 1].
            seed: The random seed.
            sample_name: A name for the sample; by default derived from the parameters.

        Raises:
            SamplingError: `columns` is empty or repeats a name, or the fraction is outside (0, 1].
            ColumnError: A column does not exist.
        """
        import numpy as np

        columns = _check_sampling_columns(columns, self._data, source=self._source)
        if (
            isinstance(sample_percentage, bool)
            or not isinstance(sample_percentage, int | float)
            or not 0 < sample_percentage <= 1
        ):
            raise SamplingError(
                f"sample_percentage must be a fraction in (0, 1], got {sample_percentage!r} "
                "(10% is 0.1).",
                field="sample_percentage",
            )
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise SamplingError(f"seed must be a non-negative integer, got {seed!r}.", field="seed")
        key, size = _unused_name(self._data, "__key"), _unused_name(self._data, "__size")
        keys = np.random.default_rng(seed).random(size=(self._data.height,))
        # Round half up; rounding to 9 places first makes 10 x 0.35 (3.4999999999999996) 3.5.
        share = (pl.col(size) * sample_percentage).round(9)
        quota = pl.max_horizontal(pl.lit(1), (share + 0.5).floor().cast(pl.Int64))
        sampled = (
            self._data.with_columns(pl.Series(key, keys))
            .with_columns(pl.len().over(columns).alias(size))
            .filter(pl.col(key).rank("ordinal").over(columns) <= quota)
            .drop(key, size)
        )
        name = sample_name or (
            f"{self._name}_sample_{_percent(sample_percentage)}pct_by_{'_'.join(columns)}"
        )
        return SampleEvalData(
            name,
            sampled,
            self._id_column,
            source=self._source,
            sample_name=name,
            stratification_columns=columns,
            sample_percentage=float(sample_percentage),
            seed=seed,
            original_size=self._data.height,
        )


class SampleEvalData(EvalData):
    """EvalData drawn by `stratified_sample_by_columns`, remembering how it was drawn."""

    __slots__ = (
        "_original_size",
        "_sample_name",
        "_sample_percentage",
        "_seed",
        "_stratification_columns",
    )
    _sample_name: str
    _stratification_columns: list[str]
    _sample_percentage: float
    _seed: int
    _original_size: int

    def __init__(
        self,
        name: str,
        data: pl.DataFrame,
        id_column: str | None = None,
        *,
        sample_name: str,
        stratification_columns: Sequence[str],
        sample_percentage: float,
        seed: int,
        original_size: int,
        source: str | None = None,
    ) -> None:
        """Wrap a sample; the sampling parameters are kept and saved with the project."""
        super().__init__(name, data, id_column, source=source)
        object.__setattr__(self, "_sample_name", sample_name)
        object.__setattr__(self, "_stratification_columns", list(stratification_columns))
        object.__setattr__(self, "_sample_percentage", sample_percentage)
        object.__setattr__(self, "_seed", seed)
        object.__setattr__(self, "_original_size", original_size)

    @property
    def sample_name(self) -> str:
        """The sample's name."""
        return self._sample_name

    @property
    def stratification_columns(self) -> list[str]:
        """The columns whose value combinations were sampled alike."""
        return list(self._stratification_columns)

    @property
    def sample_percentage(self) -> float:
        """The fraction drawn from each stratum."""
        return self._sample_percentage

    @property
    def seed(self) -> int:
        """The random seed used."""
        return self._seed

    @property
    def original_size(self) -> int:
        """How many rows the data sampled from had."""
        return self._original_size

    @property
    def sampling_info(self) -> dict[str, Any]:
        """The sampling parameters and sizes, as saved in the project state."""
        return {**self._extra_state(), "sampled_size": len(self)}

    def _extra_state(self) -> dict[str, Any]:
        return {
            "sample_name": self._sample_name,
            "stratification_columns": list(self._stratification_columns),
            "sample_percentage": self._sample_percentage,
            "seed": self._seed,
            "original_size": self._original_size,
        }


def _check_sampling_columns(
    columns: Sequence[str], frame: pl.DataFrame, *, source: str | None
) -> list[str]:
    if isinstance(columns, str):
        columns = [columns]
    if not isinstance(columns, Sequence) or not all(isinstance(c, str) for c in columns):
        raise SamplingError(
            f"columns must be a list of column names, got {columns!r}.", field="columns"
        )
    columns = list(columns)
    if not columns:
        raise SamplingError(
            "stratified_sample_by_columns needs at least one column to stratify by.",
            field="columns",
        )
    twice = repeated(columns)
    if twice:
        raise SamplingError(
            f"stratification columns repeat {list_some(twice)}; name each once.",
            field="columns",
            column=twice[0],
        )
    require_columns(frame, columns, role="stratification column", source=source)
    return columns


def _unused_name(frame: pl.DataFrame, base: str) -> str:
    name = base
    while name in frame.columns:
        name += "_"
    return name


def _percent(fraction: float) -> str:
    value = fraction * 100
    return str(int(value)) if math.isclose(value, round(value)) else f"{value:g}".replace(".", "_")
