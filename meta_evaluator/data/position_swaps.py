"""Position-swapped rows of pairwise data: each pair again, its two answers shown the other way.

One run over the pairs and their swapped twins lets `PositionBiasScorer` see whether a judge
picks the same answer whichever order it reads them in, and `PreferenceScorer(
debias_positions=True)` count only the verdicts that survive the swap (docs/scoring.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from meta_evaluator.data.eval_data import EvalData
from meta_evaluator.data.loader import DataLoader
from meta_evaluator.data.variants import joined_variants, variant_ids
from meta_evaluator.errors import ColumnError

__all__ = ["SWAPPED_SUFFIX", "position_swapped_variants"]

SWAPPED_SUFFIX = "_swapped"
"""What a text id of a swapped row ends with (`q-7` -> `q-7_swapped`)."""


def position_swapped_variants(
    eval_data: EvalData,
    first_column: str = "text_a",
    second_column: str = "text_b",
    *,
    side_columns: Sequence[tuple[str, str]] = (),
    link_column: str = "swapped_of",
    name: str | None = None,
) -> EvalData:
    """The rows of `eval_data` plus, for each, a twin with the two answers' columns swapped.

    A twin holds the original's `second_column` value in `first_column` and the other way
    round, and the same for each pair of `side_columns` (columns that say which side is which:
    `("model_a", "model_b")`); every other column is the original's. `link_column` names the
    original's id on a twin and is null on originals. Twin ids keep the id type: `<id>_swapped`
    for text ids; for integer ids, the id plus the first power of ten above every id (`7` ->
    `107` when ids stay below 100), as `counterfactual_variants` does.

    Example:
        >>> import polars as pl
        >>> from meta_evaluator.data import DataLoader
        >>> pairs = DataLoader.load_from_dataframe("p", pl.DataFrame(
        ...     {"id": ["q1"], "text_a": ["Short."], "text_b": ["Long answer."]}), id_column="id")
        >>> both = position_swapped_variants(pairs)
        >>> both.data.rows()
        [('q1', 'Short.', 'Long answer.', None), ('q1_swapped', 'Long answer.', 'Short.', 'q1')]

    Raises:
        ColumnError: A named column is missing, a column is named twice, two swapped columns
            differ in type, or `link_column` exists already (the data has twins already?).
        DataError: A twin's id would collide with an existing id.
    """
    frame = eval_data.data
    id_column = eval_data.id_column
    pairs = [(first_column, second_column), *(tuple(p) for p in side_columns)]
    _check_columns(frame, id_column, pairs, link_column)
    swapped = frame.with_columns(
        *(expr for a, b in pairs for expr in (pl.col(b).alias(a), pl.col(a).alias(b))),
        pl.col(id_column).alias(link_column),
        variant_ids(frame.get_column(id_column), frame.get_column(id_column), SWAPPED_SUFFIX)
        .alias(id_column),
    )  # fmt: skip
    combined = joined_variants(
        frame, swapped, id_column=id_column, link_column=link_column, suffix=SWAPPED_SUFFIX,
        where="position_swapped_variants", what="a swapped row's id", noun="twins",
    )  # fmt: skip
    return DataLoader.load_from_dataframe(
        name or f"{eval_data.name}_swapped", combined, id_column=id_column
    )


def _check_columns(
    frame: pl.DataFrame, id_column: str, pairs: list[tuple[str, ...]], link_column: str
) -> None:
    """Raise ColumnError for the first problem with the columns named."""
    where = "position_swapped_variants"
    named: list[str] = []
    for pair in pairs:
        if len(pair) != 2 or not all(isinstance(c, str) for c in pair):
            raise ColumnError(
                f"{where}: side_columns must be pairs of column names; got {pair!r}.",
                column=str(pair),
            )
        named += pair
    for column in named:
        if column not in frame.columns:
            raise ColumnError(
                f"{where}: no column {column!r} in the data (columns: {frame.columns}).",
                column=column,
            )
    twice = sorted({c for c in named if named.count(c) > 1} | ({id_column} & set(named)))
    if twice:
        raise ColumnError(
            f"{where}: {twice[0]!r} is named twice (or is the id column); each swapped column "
            "must be a different data column.",
            column=twice[0],
        )
    for a, b in pairs:
        if frame.schema[a] != frame.schema[b]:
            raise ColumnError(
                f"{where}: {a!r} ({frame.schema[a]}) and {b!r} ({frame.schema[b]}) differ in "
                "type, so their values cannot trade places; cast one to the other's type.",
                column=b,
            )
    if link_column in frame.columns:
        raise ColumnError(
            f"{where}: the data has a column {link_column!r} already (swapped rows added "
            "before?); pass another link_column, or start from the data without them.",
            column=link_column,
        )
