"""Variant rows (counterfactuals, position swaps): their ids, and the data they join.

A variant of a row joins the data beside its original, so it needs an id of the same type that
no row has: text ids get a suffix (`q-7` -> `q-7_cf`); integer ids are shifted by the first
power of ten above every id (`7` -> `107` when ids stay below 100).
"""

from __future__ import annotations

import polars as pl

from meta_evaluator.errors import DataError

__all__ = ["joined_variants", "variant_ids"]


def variant_ids(all_ids: pl.Series, ids: pl.Series, suffix: str) -> pl.Series:
    """The ids of the variants of the rows `ids`, given every id of the data (`all_ids`).

    Example:
        >>> import polars as pl
        >>> variant_ids(pl.Series([3, 7, 42]), pl.Series([3, 7]), "_cf").to_list()
        [103, 107]
        >>> variant_ids(pl.Series(["a", "b"]), pl.Series(["a"]), "_swapped").to_list()
        ['a_swapped']
    """
    if all_ids.dtype.is_integer():
        largest = int(all_ids.abs().max() or 0)  # type: ignore[arg-type]
        offset = 10 ** len(str(largest))
        shifted: pl.Series = ids + offset
        return shifted
    return ids.cast(pl.String) + suffix


def joined_variants(
    frame: pl.DataFrame,
    variants: pl.DataFrame,
    *,
    id_column: str,
    link_column: str,
    suffix: str,
    where: str,
    what: str,
    noun: str,
) -> pl.DataFrame:
    """The rows of `frame` (`link_column` null), then `variants`, once no id is taken twice.

    `where`, `what` and `noun` word the error: the function, a variant (`a variant id`), and
    the variants (`variants`, `twins`).

    Raises:
        DataError: A variant's id collides with an existing id (`column` is the id column).

    Example:
        >>> import polars as pl
        >>> frame = pl.DataFrame({"id": ["a", "b"]})
        >>> twin = pl.DataFrame({"id": ["a_cf"], "of": ["a"]})
        >>> joined_variants(frame, twin, id_column="id", link_column="of", suffix="_cf",
        ...                 where="f", what="a variant id", noun="variants").rows()
        [('a', None), ('b', None), ('a_cf', 'a')]
    """
    originals = frame.with_columns(pl.lit(None, dtype=frame.schema[id_column]).alias(link_column))
    combined = pl.concat([originals, variants.select(originals.columns)], how="vertical")
    if combined.get_column(id_column).n_unique() != combined.height:
        hint = (
            f"integer ids of {noun} are the id plus a power of ten; negative ids can meet "
            "positive ones, so use ids >= 0"
            if frame.schema[id_column].is_integer()
            else f"rename the ids ending in {suffix!r}"
        )
        raise DataError(f"{where}: {what} collides with an existing id; {hint}.", column=id_column)
    return combined
