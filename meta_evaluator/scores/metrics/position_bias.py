"""PositionBiasScorer: does a pairwise judge pick an answer for where it stands?

Each pair is judged twice, its two answers swapped on the second row (its twin, found through
the link column; `data.position_swapped_variants` makes them). A judge led by content picks
the same answer both ways; a position-biased one picks the same position (docs/scoring.md,
"Position bias"). No human labels are needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.scores.base_scorer import (
    ResamplingStatistic,
    Scored,
    ScorerWithOptions,
    ScoringCall,
)
from meta_evaluator.scores.base_scoring_result import ScoringResult
from meta_evaluator.scores.metrics._arguments import name_problems, refuse
from meta_evaluator.scores.metrics._positions import both_orders, positions
from meta_evaluator.scores.metrics._weights import weight_columns
from meta_evaluator.stats.checks import check_interval
from meta_evaluator.stats.position import Position, position_bias

__all__ = ["FIRST_LABELS", "SECOND_LABELS", "TIE_LABELS", "PositionBiasScorer"]

FloatArray = npt.NDArray[np.float64]

#: Labels that pick the answer shown first (the `text_a` column), by default.
FIRST_LABELS = ("text_a", "a", "A", "1", "first", "response_a")
#: Labels that pick the answer shown second (the `text_b` column), by default.
SECOND_LABELS = ("text_b", "b", "B", "2", "second", "response_b")
#: Labels that pick neither: the answer is usable but says nothing about position.
TIE_LABELS = ("tie", "both", "neither")


class PositionBiasScorer(ScorerWithOptions):
    """Consistency and first-position rate of a judge over pairs judged in both orders.

    Pairs each original row with its twin (the row whose `link_column` names it) and reads
    each valid answer as the position it picked: a label in `first_labels` the first, in
    `second_labels` the second; a label in `tie_labels`, an invalid answer or a missing row
    picks none (the pair is then not used). Scores: `stats.position.position_bias`'s mapping
    (`consistency_rate`, `first_position_rate`, `first_position_interval` (Wilson), `p_value`
    (exact binomial test against 1/2), and the counts `rows`, `pairs`, `consistent`,
    `first_both`, `second_both`, `answers`, `first_answers`); `confidence_intervals` hold the
    Wilson interval of `first_position_rate` (a metric's `bootstrap` replaces it, resampling
    data rows, and adds one for `consistency_rate`).

    Args:
        first_labels: Labels meaning "the answer shown first".
        second_labels: Labels meaning "the answer shown second".
        tie_labels: Valid labels that pick no position.
        link_column: The data column naming each twin's original (null on originals).
        confidence_level: Of the Wilson interval, in (0, 1).

    Raises:
        ScoringError: A label in two of the lists, an empty list, a link column that is not a
            name, or a level outside (0, 1).
    """

    min_human_annotators = 0  # the judge against itself: no human labels needed
    label_categories = True
    needs_both_orders = True

    def __init__(
        self,
        first_labels: Sequence[str] = FIRST_LABELS,
        second_labels: Sequence[str] = SECOND_LABELS,
        *,
        tie_labels: Sequence[str] = TIE_LABELS,
        link_column: str = "swapped_of",
        confidence_level: float = 0.95,
    ) -> None:
        problems = name_problems({"link_column": link_column})
        lists = {"first_labels": first_labels, "second_labels": second_labels}
        lists["tie_labels"] = tie_labels
        for arg, labels in lists.items():
            if isinstance(labels, str) or not all(isinstance(x, str) for x in labels):
                problems.append(f"{arg} must be a list of labels; got {labels!r}")
            elif arg != "tie_labels" and not labels:
                problems.append(f"{arg} must name at least one label")
        if not problems:
            seen: dict[str, str] = {}
            for arg, labels in lists.items():
                for label in labels:
                    if seen.setdefault(label, arg) != arg:
                        problems.append(f"{label!r} is in both {seen[label]} and {arg}")
        try:
            check_interval("PositionBiasScorer", "confidence_level", confidence_level, 0.0, 1.0)
        except ScoringError:
            problems.append(f"confidence_level must be in (0, 1); got {confidence_level!r}")
        refuse("PositionBiasScorer", problems)
        super().__init__(scorer_name="position_bias")
        self.first_labels = frozenset(first_labels)
        self.second_labels = frozenset(second_labels)
        self.tie_labels = frozenset(tie_labels)
        self.link_column = link_column
        self.confidence_level = float(confidence_level)
        self.optional_data_columns = (link_column,)

    def can_score_task(self, sample_label: Any) -> bool:
        """One label per answer (`text_a`, `text_b`, `tie` ...), not a list."""
        return isinstance(sample_label, str)

    async def score(self, call: ScoringCall) -> Scored:
        """Line up each pair's two answers and count where the judge's picks stand.

        Raises:
            ScoringError: No link column, no twin answered, or a label that names no position.
        """
        picked, swapped = self._picks(call)[:2]
        found = position_bias(picked, swapped, confidence_level=self.confidence_level)
        metadata = {
            "link_column": self.link_column,
            "first_labels": sorted(self.first_labels),
            "second_labels": sorted(self.second_labels),
            "tie_labels": sorted(self.tie_labels),
            "confidence_level": self.confidence_level,
            "unusable_rows": found["rows"] - found["pairs"],
        }
        if found["pairs"] == 0:
            metadata["undefined"] = "no pair has a usable answer in both orders"
            self.logger.info("%s: %s", call.where, metadata["undefined"])
        intervals = {"first_position_rate": found["first_position_interval"]}
        return Scored(found, metadata, found["pairs"], intervals)

    def resampling_statistic(self, call: ScoringCall, ids: pl.Series) -> ResamplingStatistic:
        """Both rates under row weights over `ids`: a pair weighs as its original row does."""
        picked, swapped, rows = self._picks(call)
        columns = weight_columns(rows, ids)  # a pair weighs as its original row does
        code = {"first": 1, "second": 2}
        a = np.array([code.get(p or "", 0) for p in picked])
        b = np.array([code.get(p or "", 0) for p in swapped])
        usable = (a > 0) & (b > 0)
        consistent = usable & (a != b)
        first = ((a == 1).astype(int) + (b == 1)) * usable
        parts = np.zeros((ids.len(), 3))  # summed per id: the statistic is linear in weights
        kept = columns >= 0
        np.add.at(parts, columns[kept], np.column_stack([usable, consistent, first])[kept])

        def statistic(weights: FloatArray) -> dict[str, FloatArray]:
            used, agree, firsts = (weights @ parts).T
            with np.errstate(invalid="ignore", divide="ignore"):
                return {
                    "consistency_rate": np.where(used > 0, agree / used, np.nan),
                    "first_position_rate": np.where(used > 0, firsts / (2 * used), np.nan),
                }

        return statistic

    def _picks(self, call: ScoringCall) -> tuple[list[Position], list[Position], pl.Series]:
        """Per pair: the position picked in each order, and the row it is resampled with."""
        orders = both_orders(call.judge_data, self.link_column, self.scorer_name, call.where)
        read = (self.first_labels, self.second_labels, self.tie_labels)
        picked = positions(orders.original, *read, self.scorer_name, call.where)
        swapped = positions(orders.swapped, *read, self.scorer_name, call.where)
        return picked, swapped, orders.resampled_with

    def aggregate_results(
        self, results: list[ScoringResult], scores_dir: str | Path, unique_name: str = ""
    ) -> None:
        """Draw `position_bias.png`: first-position rate against 1/2, and consistency."""
        from meta_evaluator.scores.diagnostic_plots import position_bias_chart

        folder = Path(scores_dir) / self.scorer_name / unique_name
        position_bias_chart(
            results, folder / "position_bias.png", title=f"position bias: {unique_name}"
        )
