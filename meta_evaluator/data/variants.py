"""Ids of variant rows (counterfactuals, position swaps): new ids of the originals' own type.

A variant of a row joins the data beside its original, so it needs an id of the same type that
no row has: text ids get a suffix (`q-7` -> `q-7_cf`); integer ids are shifted by the first
power of ten above every id (`7` -> `107` when ids stay below 100).
"""

from __future__ import annotations

import polars as pl

__all__ = ["variant_ids"]


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
