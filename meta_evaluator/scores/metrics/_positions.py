"""What the position-bias scorer and the debiased preference scorer share: pairs of orders.

A pair is judged twice: on its original row and on its twin, the row whose link column names
the original's id (`data.position_swapped_variants`). Both scorers line the two answers up,
one pair per original, and read each answer as the position it picked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.position import Position

__all__ = [
    "SWAP_HINT",
    "BothOrders",
    "both_orders",
    "debiased_votes",
    "positions",
    "require_link_column",
]

SWAP_HINT = (
    "add each pair's swapped twin to the data with meta_evaluator.data."
    "position_swapped_variants (or add_preference_pairs(..., swap_positions=True)) and run "
    "the judge on both"
)
"""How to get the twins, for error messages."""


@dataclass(frozen=True)
class BothOrders:
    """One entry per pair judged in at least one order, in the order of the originals' ids."""

    ids: pl.Series
    """The originals' ids."""
    original: list[Any]
    """The judge's label on the original row (None: no usable answer there)."""
    swapped: list[Any]
    """The judge's label on the twin (None: no usable answer there)."""
    resampled_with: pl.Series
    """Per pair, the id of the row whose weight it takes in a resample: the original's when
    the judge has a row for it, else the twin's (`resampling_statistic` weighs rows by id)."""


def require_link_column(frame: pl.DataFrame, link_column: str, scorer: str, where: str) -> None:
    """Raise ScoringError when the judge's rows have no link column (the data lacks it).

    Raises:
        ScoringError: `link_column` is not a column of `frame`.
    """
    if link_column not in frame.columns:
        raise ScoringError(
            f"{scorer}: {where}: the data has no column {link_column!r} naming each swapped "
            f"row's original; {SWAP_HINT}."
        )


def both_orders(frame: pl.DataFrame, link_column: str, scorer: str, where: str) -> BothOrders:
    """Each pair's label in the original order and in the swapped one.

    `frame` holds the judge's rows (`original_id`, `label`, `link_column`): originals have a
    null link, twins their original's id. A pair whose row is missing in one order (an error,
    or an invalid answer) has None there.

    Raises:
        ScoringError: No link column, or no twin row at all.
    """
    require_link_column(frame, link_column, scorer, where)
    link = pl.col(link_column)
    rows = frame.select("original_id", pl.col("label").cast(pl.String), link)
    twins = rows.filter(link.is_not_null())
    if twins.height == 0:
        raise ScoringError(
            f"{scorer}: {where}: no swapped row has an answer ({rows.height} rows, none with "
            f"{link_column!r} set); {SWAP_HINT}."
        )
    originals = rows.filter(link.is_null()).select(
        "original_id", "label", pl.lit(True).alias("present")
    )
    twins = twins.select(
        pl.col(link_column).alias("original_id"),
        pl.col("label").alias("swapped_label"),
        pl.col("original_id").alias("twin_id"),
    )
    pairs = (
        originals.join(twins, on="original_id", how="full", coalesce=True)
        .unique("original_id", keep="first", maintain_order=True)
        .sort("original_id")
    )
    resampled = pairs.select(
        pl.when(pl.col("present")).then(pl.col("original_id")).otherwise(pl.col("twin_id"))
    ).to_series()
    return BothOrders(
        pairs.get_column("original_id"),
        pairs.get_column("label").to_list(),
        pairs.get_column("swapped_label").to_list(),
        resampled,
    )


def positions(
    labels: Sequence[Any],
    first: frozenset[str],
    second: frozenset[str],
    neither: frozenset[str],
    scorer: str,
    where: str,
) -> list[Position]:
    """The position each label picked: "first", "second", or None (no answer, or a tie).

    Raises:
        ScoringError: A label that is in none of the three sets (it names no position).
    """
    read = pl.Series(labels, dtype=pl.String)
    known = [*first, *second, *neither]
    unknown = read.filter(read.is_not_null() & ~read.is_in(known)).unique().sort()
    if unknown.len():
        raise ScoringError(
            f"{scorer}: {where}: the label {unknown[0]!r} names no position; first_labels are "
            f"{sorted(first)}, second_labels {sorted(second)}, tie_labels {sorted(neither)} "
            "(pass the task's labels to the scorer)."
        )
    mapping = {**dict.fromkeys(first, "first"), **dict.fromkeys(second, "second")}
    found: list[Position] = read.replace_strict(mapping, default=None).to_list()
    return found


def debiased_votes(frame: pl.DataFrame, link_column: str, where: str) -> pl.DataFrame:
    """The judge's rows of the originals, each vote replaced by the verdict of both orders.

    `text_a` (`text_b`) when the original's text_a (text_b) won in both orders, `tie` when
    the orders disagree (a position, not the content, decided), None when one order has no
    usable vote (`stats.position.debiased_labels`). Twins are dropped: never compared with the
    humans. Votes are read as `stats.preference.normalize_vote` reads them (`a` is `text_a`).

    Raises:
        ScoringError: No link column, or no twin row at all.
    """
    from meta_evaluator.stats.position import debiased_labels
    from meta_evaluator.stats.preference import normalize_vote

    orders = both_orders(frame, link_column, "preference", where)
    seen = {"text_a": "first", "text_b": "second"}
    picked, swapped = (
        [seen.get(normalize_vote(v) or "") for v in votes]
        for votes in (orders.original, orders.swapped)
    )
    winners = {"first": "text_a", "second": "text_b", "tie": "tie"}
    verdicts = [winners.get(v or "") for v in debiased_labels(picked, swapped)]  # type: ignore[arg-type]
    debiased = pl.DataFrame(
        {"original_id": orders.ids, "_debiased": pl.Series(verdicts, dtype=pl.String)}
    )
    originals = frame.filter(pl.col(link_column).is_null())
    return originals.join(debiased, on="original_id", how="left", maintain_order="left").select(
        *(pl.col("_debiased").alias(c) if c == "label" else pl.col(c) for c in frame.columns)
    )
