"""Where a judge's rows came from, by their `fingerprint` column.

A run's fingerprint names its judge's configuration; rows that were not asked of an LLM carry
a marked one instead: a file's labels (`results.external`), the votes of a pairs file
(`results.pair_votes`).
"""

from __future__ import annotations

import polars as pl

__all__ = ["all_fingerprints_start_with"]


def all_fingerprints_start_with(frame: pl.DataFrame, prefix: str) -> bool:
    """Whether the rows have fingerprints and every one of them starts with `prefix`.

    False for rows without the column, without rows, or with no fingerprint at all (labels
    handed over as a bare frame): those are a judge's own.
    """
    if "fingerprint" not in frame.columns or frame.height == 0:
        return False
    found = frame.get_column("fingerprint").cast(pl.String)
    if found.null_count() == frame.height:
        return False
    return bool(found.drop_nulls().str.starts_with(prefix).all())
