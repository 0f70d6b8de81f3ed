"""KrippendorffAlphaScorer: reliability of the humans with the judge as one more coder."""

from __future__ import annotations

from typing import Any, get_args

import numpy as np
import numpy.typing as npt
import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.scores.base_scorer import ResamplingStatistic, ScoringCall
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.human_baseline import BaselineStatistic
from meta_evaluator.scores.metrics._arguments import one_of_problems, refuse
from meta_evaluator.scores.metrics._base import LabelScorer
from meta_evaluator.scores.metrics._items import Items, pairable_ids
from meta_evaluator.stats.agreement import Level, alpha_from_coincidences, distance_function

__all__ = ["KrippendorffAlphaScorer"]

FloatArray = npt.NDArray[np.float64]


class KrippendorffAlphaScorer(LabelScorer):
    """Krippendorff's alpha over the humans and the judge, and over the humans alone.

    `alpha` counts the judge as one more coder beside the humans; `alpha_humans` leaves it out,
    so their difference shows what the judge does to reliability (METRICS.md D). Both are
    computed on one reliability matrix, the judge's row and the humans' rows, over every unit
    with at least two values: units the judge did not answer count through the humans (for
    `alpha_humans` a unit needs two human values); a single value is not pairable. Bootstrap
    intervals resample these units. The judge needs at least one unit shared with a human.
    Ordinal, interval and ratio levels need numeric labels. Score keys: `alpha`,
    `alpha_humans`; `alpha_humans` is also the human baseline (`metadata["human_baseline"]`).
    Metadata: `units` and `pairable_values` of `alpha`, `units_humans` and
    `pairable_values_humans` of `alpha_humans`, `units_without_judge` (units of `alpha` the
    judge did not label).
    """

    plot_key = "alpha"

    def __init__(self, level_of_measurement: Level = "nominal") -> None:
        problems = one_of_problems("level_of_measurement", level_of_measurement, get_args(Level))
        refuse("KrippendorffAlphaScorer", problems)
        super().__init__(scorer_name="krippendorff_alpha")
        self.level_of_measurement = level_of_measurement

    def can_score_task(self, sample_label: Any) -> bool:
        """Single labels; numbers for the ordinal, interval and ratio levels."""
        if sample_label is None or isinstance(sample_label, list | tuple | set):
            return False
        if self.level_of_measurement == "nominal":
            return True
        return isinstance(sample_label, int | float) and not isinstance(sample_label, bool)

    def resampled_ids(self, call: ScoringCall) -> pl.Series:
        """Every unit with two values or more (the judge's or the humans'): those alpha uses."""
        return pairable_ids(call.judge_data, call.human_data)

    def items_of(self, call: ScoringCall) -> Items | None:
        """Every pairable unit (None when the judge shares no unit with a human)."""
        if "pairable_units" not in call.shared:
            ids = self.resampled_ids(call)
            items = Items.build(call.judge_data, call.human_data, ids) if ids.len() else None
            if items is not None:
                judge, human, _ = items.codes()
                if not ((judge >= 0) & (human >= 0).any(axis=1)).any():
                    items = None
            call.shared["pairable_units"] = items
        found: Items | None = call.shared["pairable_units"]
        return found

    def statistic(
        self, items: Items, annotator_aggregation: str, aggregation_mode: TaskAggregationMode
    ) -> tuple[ResamplingStatistic, dict[str, Any]]:
        """Alpha from weighted coincidence matrices (judge as coder, and humans alone)."""
        judge, human, categories = items.codes()
        k = max(len(categories), 1)
        if self.level_of_measurement == "nominal":
            values = np.arange(k, dtype=np.float64)
        else:
            try:
                values = np.asarray(categories, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ScoringError(
                    f"krippendorff_alpha: level {self.level_of_measurement!r} needs numeric "
                    f"labels; got {categories[:3]}."
                ) from exc
        distance = distance_function(self.level_of_measurement, values)
        with_judge = _unit_coincidences(np.column_stack([human, judge]), k)
        humans_only = _unit_coincidences(human, k)

        def alphas(weights: Any) -> dict[str, Any]:
            return {
                "alpha": _alpha(weights, with_judge, k, distance),
                "alpha_humans": _alpha(weights, humans_only, k, distance),
            }

        metadata: dict[str, Any] = {
            "level_of_measurement": self.level_of_measurement,
            **_pairable_counts(judge, human),
        }
        if len(items.humans) < 2:
            metadata["alpha_humans_undefined"] = "a single human annotator: nothing to compare"
        return alphas, metadata

    async def human_baseline(
        self, items: Items, annotator_aggregation: str, aggregation_mode: TaskAggregationMode
    ) -> BaselineStatistic:
        """Alpha of the humans alone on the units of `alpha`: one value for all of them."""
        method = (
            "Krippendorff's alpha of the humans alone (alpha_humans), on every unit that two "
            "humans labelled, as the judge's alpha_humans is"
        )
        _, human, _ = items.codes()
        shared = int(np.count_nonzero((human >= 0).sum(axis=1) >= 2))
        problem = None
        if len(items.humans) < 2:
            problem = (
                f"{len(items.humans)} human annotator(s): a baseline needs two humans to compare"
            )
        elif shared == 0:
            problem = "no unit has labels from two humans"
        if problem is not None:
            return BaselineStatistic.undefined("alpha", method, shared, problem)
        function, _ = self.statistic(items, annotator_aggregation, aggregation_mode)

        def pooled(weights: Any) -> Any:
            return function(weights)["alpha_humans"][:, None]

        return BaselineStatistic("alpha", method, shared, tuple(items.humans), pooled, pooled=True)


def _pairable_counts(judge: npt.NDArray[np.int64], human: npt.NDArray[np.int64]) -> dict[str, int]:
    """Units with two values or more, and the values in them: with the judge, humans alone."""
    by_humans = (human >= 0).sum(axis=1)
    with_judge = by_humans + (judge >= 0)
    pairable, pairable_humans = with_judge >= 2, by_humans >= 2
    return {
        "units": int(pairable.sum()),
        "pairable_values": int(with_judge[pairable].sum()),
        "units_humans": int(pairable_humans.sum()),
        "pairable_values_humans": int(by_humans[pairable_humans].sum()),
        "units_without_judge": int((pairable & (judge < 0)).sum()),
    }


def _unit_coincidences(codes: npt.NDArray[np.int64], k: int) -> FloatArray:
    """(units, k*k): each unit's contribution to the coincidence matrix (0 if unpairable)."""
    n_units = codes.shape[0]
    counts = np.zeros((n_units, k))
    for c in range(codes.shape[1]):
        ok = codes[:, c] >= 0
        np.add.at(counts, (np.nonzero(ok)[0], codes[ok, c]), 1.0)
    m = counts.sum(axis=1)
    weight = np.where(m >= 2, 1.0 / np.maximum(m - 1.0, 1.0), 0.0)
    pairs = counts[:, :, None] * counts[:, None, :]
    idx = np.arange(k)
    pairs[:, idx, idx] -= counts
    return (pairs * weight[:, None, None]).reshape(n_units, k * k)


def _alpha(weights: FloatArray, units: FloatArray, k: int, distance: Any) -> FloatArray:
    coincidence = (weights @ units).reshape(-1, k, k)
    return alpha_from_coincidences(coincidence, distance)
