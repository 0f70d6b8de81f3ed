"""AccuracyScorer: share of items where the judge's label equals the human's."""

from __future__ import annotations

from typing import Any

import numpy as np

from meta_evaluator.scores.base_scorer import ResamplingStatistic
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.metrics._base import LabelScorer
from meta_evaluator.scores.metrics._items import Items, mean_over_humans, weighted_ratio

__all__ = ["AccuracyScorer"]


class AccuracyScorer(LabelScorer):
    """Accuracy of the judge against the humans (METRICS.md F).

    `individual_average`: accuracy against each human on the items that human labelled, then
    the mean over humans. `majority_vote`: accuracy against the humans' majority per item
    (`stats.majority`: ties to the lexicographically largest label; for label sets, each
    outcome at least half of the humans chose). Multi-label answers match only when equal as a
    whole; against the majority, when they choose the same outcomes.
    Score key: `accuracy`; metadata `per_human` (individual_average).
    """

    plot_key = "accuracy"

    def __init__(self) -> None:
        super().__init__(scorer_name="accuracy")

    def can_score_task(self, sample_label: Any) -> bool:
        """Any label that can be compared for equality: text, numbers, lists."""
        return sample_label is not None

    def statistic(
        self, items: Items, annotator_aggregation: str, aggregation_mode: TaskAggregationMode
    ) -> tuple[ResamplingStatistic, dict[str, Any]]:
        """Accuracy as a weighted mean over items."""
        if annotator_aggregation == "majority_vote":
            judge, majority, _ = items.majority_codes()
            has = (majority >= 0) & (judge >= 0)
            equal = (has & (judge == majority)).astype(np.float64)

            def by_majority(weights: Any) -> dict[str, Any]:
                return {"accuracy": weighted_ratio(weights, equal, has.astype(np.float64))}

            return by_majority, {}
        judge, human, _ = items.codes()
        # kept as booleans (a byte per item and human); weighted_ratio counts them as 0 and 1
        has = (human >= 0) & (judge[:, None] >= 0)
        equal = has & (human == judge[:, None])
        per_human = weighted_ratio(np.ones((1, items.n)), equal, has)[0]

        def by_human(weights: Any) -> dict[str, Any]:
            return {"accuracy": mean_over_humans(weighted_ratio(weights, equal, has))}

        return by_human, {
            "per_human": {
                h: (None if np.isnan(v) else float(v))
                for h, v in zip(items.humans, per_human, strict=True)
            }
        }
