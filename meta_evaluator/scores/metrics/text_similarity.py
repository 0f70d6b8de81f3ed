"""TextSimilarityScorer: how alike the judge's free text is to the humans' (difflib ratio)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from meta_evaluator.scores.base_scorer import ResamplingStatistic
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.metrics._base import LabelScorer
from meta_evaluator.scores.metrics._items import Items, mean_over_humans, weighted_ratio
from meta_evaluator.stats.checks import is_missing
from meta_evaluator.stats.text import text_similarity

__all__ = ["SimilarityScorer", "TextSimilarityScorer", "as_text"]

FloatArray = npt.NDArray[np.float64]


def as_text(label: Any) -> str:
    """A label as text: lists (combined tasks, multi-label answers) one value per line."""
    if isinstance(label, list | tuple):
        return "\n".join(str(v) for v in label)
    return str(label)


class SimilarityScorer(LabelScorer):
    """Mean similarity of judge and human texts (shared by text and semantic similarity).

    `individual_average`: per human, the mean similarity over the items that human labelled,
    then the mean over humans. `majority_vote`: per item, the best-matching human, then the
    mean over items (METRICS.md F).
    """

    score_key = "similarity"

    @property
    def plot_key(self) -> str:  # type: ignore[override]
        """The score drawn: the similarity key of the subclass."""
        return self.score_key

    def can_score_task(self, sample_label: Any) -> bool:
        """Text, or lists of text (combined tasks)."""
        return isinstance(sample_label, str) or (
            isinstance(sample_label, list | tuple) and all(isinstance(v, str) for v in sample_label)
        )

    def similarity_matrix(self, items: Items) -> FloatArray:
        """Similarity of the judge's and each human's text per item (NaN where absent)."""
        return _pairwise(items, text_similarity)

    def statistic(
        self, items: Items, annotator_aggregation: str, aggregation_mode: TaskAggregationMode
    ) -> tuple[ResamplingStatistic, dict[str, Any]]:
        """Similarity as weighted means over items."""
        sim = self.similarity_matrix(items)
        has = ~np.isnan(sim)
        values = np.where(has, sim, 0.0)
        key = self.score_key
        if annotator_aggregation == "majority_vote":
            any_human: FloatArray = np.asarray(has.any(axis=1), dtype=np.float64)
            best: FloatArray = np.where(
                any_human > 0, np.max(np.where(has, sim, -np.inf), axis=1), 0.0
            ).astype(np.float64)

            def by_best(weights: Any) -> dict[str, Any]:
                return {key: weighted_ratio(weights, best, any_human)}

            return by_best, {"method": "best matching human per item"}

        def by_human(weights: Any) -> dict[str, Any]:
            return {key: mean_over_humans(weighted_ratio(weights, values, has.astype(float)))}

        per_human = weighted_ratio(np.ones((1, items.n)), values, has.astype(float))[0]
        return by_human, {
            "per_human": {
                h: (None if np.isnan(v) else float(v))
                for h, v in zip(items.humans, per_human, strict=True)
            }
        }


class TextSimilarityScorer(SimilarityScorer):
    """difflib similarity (`SequenceMatcher.ratio`) of lower-cased, trimmed texts, in [0, 1].

    Score key: `similarity`; metadata `per_human` (individual_average).
    """

    score_key = "similarity"

    def __init__(self) -> None:
        super().__init__(scorer_name="text_similarity")


def _pairwise(items: Items, similarity: Callable[[str, str], float]) -> FloatArray:
    judge = items.judge.to_list()
    out = np.full((items.n, len(items.humans)), np.nan)
    for h, column in enumerate(items.human):
        for i, (a, b) in enumerate(zip(judge, column.to_list(), strict=True)):
            if not (is_missing(a) or is_missing(b)):
                out[i, h] = similarity(as_text(a), as_text(b))
    return out
