"""Which column of compare's bootstrap weights each of a scorer's rows takes.

compare resamples the judge's rows by id: weights are (resamples x ids). A scorer whose units
are its own (a pair of orders, a row of k answers) looks up, once, the column of the id each
unit goes with; a unit whose id is not among them weighs nothing.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import polars as pl

__all__ = ["unit_weights", "weight_columns"]


def weight_columns(unit_ids: pl.Series, ids: pl.Series) -> npt.NDArray[np.int64]:
    """Per unit, the position of its id in `ids` (-1 when absent): a join, not a loop."""
    columns = pl.DataFrame({"original_id": ids, "_column": pl.int_range(ids.len(), eager=True)})
    found = (
        pl.DataFrame({"original_id": unit_ids.cast(ids.dtype, strict=False)})
        .join(
            columns.unique("original_id", keep="first"),
            on="original_id",
            how="left",
            maintain_order="left",
        )
        .get_column("_column")
        .fill_null(-1)
    )
    return found.to_numpy().astype(np.int64)


def unit_weights(
    weights: npt.NDArray[np.float64], columns: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    """(resamples x units): each unit's weight in each resample (0 for a unit without a column)."""
    taken = weights[:, np.maximum(columns, 0)]
    return np.where(columns >= 0, taken, 0.0)
