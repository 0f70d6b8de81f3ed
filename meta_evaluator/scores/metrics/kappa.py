"""CohensKappaScorer: chance-corrected agreement of the judge with each human."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from meta_evaluator.scores.base_scorer import ResamplingStatistic
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.metrics._arguments import one_of_problems, refuse
from meta_evaluator.scores.metrics._base import LabelScorer
from meta_evaluator.scores.metrics._items import Items, mean_over_humans
from meta_evaluator.stats.agreement import KappaWeights, kappa_from_confusion
from meta_evaluator.stats.classification import confusion_matrix

__all__ = ["CohensKappaScorer", "interpret_kappa"]

FloatArray = npt.NDArray[np.float64]

# Landis & Koch (1977), as the original meta-evaluator docs list them.
_BANDS = ((0.2, "slight"), (0.4, "fair"), (0.6, "moderate"), (0.8, "substantial"))


def interpret_kappa(kappa: float | None) -> str | None:
    """Landis & Koch's band of a kappa (None when kappa is undefined).

    poor < 0 <= slight <= 0.2 < fair <= 0.4 < moderate <= 0.6 < substantial <= 0.8 <
    almost_perfect.
    """
    if kappa is None:
        return None
    if kappa < 0:
        return "poor"
    for upper, word in _BANDS:
        if kappa <= upper:
            return word
    return "almost_perfect"


class CohensKappaScorer(LabelScorer):
    """Cohen's kappa of the judge against the humans (METRICS.md D).

    `individual_average`: kappa against each human on the items both labelled (humans with
    fewer than two such items are skipped), then the mean of the defined values.
    `majority_vote`: kappa against the humans' majority per item (`stats.majority`).
    `weights` "linear" or "quadratic" give weighted kappa on the sorted labels. Score key:
    `cohens_kappa`; metadata `interpretation`, `per_human`; `kappa` (0.3.3's key) holds the
    same value.
    """

    plot_key = "cohens_kappa"
    score_aliases: ClassVar[dict[str, str]] = {"kappa": "cohens_kappa"}  # 0.3.3's key

    def __init__(self, weights: KappaWeights = None) -> None:
        refuse(
            "CohensKappaScorer", one_of_problems("weights", weights, (None, "linear", "quadratic"))
        )
        super().__init__(scorer_name="cohens_kappa")
        self.weights = weights

    def can_score_task(self, sample_label: Any) -> bool:
        """Single labels only (text or numbers); a list is a multi-label answer."""
        return sample_label is not None and not isinstance(sample_label, list | tuple | set)

    def statistic(
        self, items: Items, annotator_aggregation: str, aggregation_mode: TaskAggregationMode
    ) -> tuple[ResamplingStatistic, dict[str, Any]]:
        """Kappa from weighted confusion matrices."""
        if annotator_aggregation == "majority_vote":
            judge, majority, categories = items.majority_codes()
            k = max(len(categories), 1)

            def by_majority(weights: Any) -> dict[str, Any]:
                confusion = confusion_matrix(judge, majority, k, weights=weights)
                return {"cohens_kappa": kappa_from_confusion(confusion, self.weights)}

            return by_majority, {"weights": self.weights}
        judge, human, categories = items.codes()
        k = max(len(categories), 1)
        # humans with fewer than two items labelled by both are skipped
        kept = {
            name: human[:, h]
            for h, name in enumerate(items.humans)
            if np.count_nonzero((judge >= 0) & (human[:, h] >= 0)) >= 2
        }

        def kappas(weights: Any) -> FloatArray:
            return np.column_stack(
                [
                    kappa_from_confusion(
                        confusion_matrix(judge, c, k, weights=weights), self.weights
                    )
                    for c in kept.values()
                ]
            )

        def by_human(weights: Any) -> dict[str, Any]:
            if not kept:
                return {"cohens_kappa": np.full(weights.shape[0], np.nan)}
            return {"cohens_kappa": mean_over_humans(kappas(weights))}

        per_human = (
            dict(zip(kept, (_number(v) for v in kappas(np.ones((1, items.n)))[0]), strict=True))
            if kept
            else {}
        )
        skipped = [h for h in items.humans if h not in per_human]
        return by_human, {
            "weights": self.weights,
            "per_human": per_human,
            "skipped_humans": skipped,
        }

    def extra_scores(self, scores: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
        """Add the interpretation of the kappa to the metadata."""
        metadata["interpretation"] = interpret_kappa(scores["cohens_kappa"])
        return scores


def _number(value: Any) -> float | None:
    return None if np.isnan(value) else float(value)
