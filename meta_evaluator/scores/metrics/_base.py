"""What the judge-vs-human label scorers share: items laid out once, scores as weighted means.

Every built-in scorer is a `ScorerWithOptions` (one call signature, one opening, one result);
`LabelScorer` is the one of accuracy, kappa, alpha and the similarities.
"""

from __future__ import annotations

from abc import abstractmethod
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.scores.base_scorer import (
    ResamplingStatistic,
    Scored,
    ScorerWithOptions,
    ScoringCall,
)
from meta_evaluator.scores.base_scoring_result import ScoringResult
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.human_baseline import BaselineStatistic
from meta_evaluator.scores.metrics._items import Items

__all__ = ["LabelScorer", "baseline_problem"]


class LabelScorer(ScorerWithOptions):
    """A scorer whose scores are weighted means over items of judge-vs-human comparisons.

    Subclasses implement `statistic`: from the items, a function of item weights (resamples x
    items) to each score per resample, plus metadata. The point estimate is that function at
    weights of one, so scores and bootstrap intervals cannot drift apart.
    """

    label_categories = True  # labels become codes in `Items`, categories or text alike
    aligns_items = True  # `Items.of_call` keeps the ids both frames have

    plot_key: str = ""
    """The score drawn in `<scorer_name>_scores.png` (bars per judge)."""
    plot_reference_key: str | None = None
    """A score drawn as a dashed line on that chart (the same for every judge)."""

    score_aliases: ClassVar[dict[str, str]] = {}
    """Score keys meta-evaluator 0.3.3 gave, to the key they copy (`kappa` beside
    `cohens_kappa`): results carry both, intervals included, so 0.3.3's scripts read theirs."""

    def aggregate_results(
        self, results: list[ScoringResult], scores_dir: str | Path, unique_name: str = ""
    ) -> None:
        """Draw `<scorer_name>_scores.png`: the score per judge, with intervals when present."""
        from meta_evaluator.scores.plots import score_bar_chart

        folder = Path(scores_dir) / self.scorer_name / unique_name
        score_bar_chart(
            results,
            self.plot_key,
            folder / f"{self.scorer_name}_scores.png",
            title=f"{self.plot_key.replace('_', ' ')} by judge: {unique_name}",
            reference_key=self.plot_reference_key,
        )

    @abstractmethod
    def statistic(
        self, items: Items, annotator_aggregation: str, aggregation_mode: TaskAggregationMode
    ) -> tuple[ResamplingStatistic, dict[str, Any]]:
        """The score function of item weights, and metadata about the scores."""

    def items_of(self, call: ScoringCall) -> Items | None:
        """The items scored: those with a judge label and a human label (None when none is).

        Shared by every scorer given the same frames (`Items.of_call`).
        """
        return Items.of_call(call)

    async def prepare(self, items: Items) -> None:
        """Fetch what `statistic` needs from elsewhere before it runs (default: nothing)."""
        return None

    def extra_scores(self, scores: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
        """Scores derived from the weighted ones (default: none)."""
        return scores

    async def score(self, call: ScoringCall) -> Scored:
        """Score the judge against the humans on every item both labelled.

        Raises:
            ScoringError: No item has both a judge and a human label.
        """
        items = self.items_of(call)
        if items is None:
            raise ScoringError(
                f"{self.scorer_name}: {call.where}: no item has both a judge label and a human "
                "label."
            )
        await self.prepare(items)
        function, metadata = self.statistic(
            items, call.annotator_aggregation, call.aggregation_mode
        )
        function = self._with_aliases(function)
        values = function(np.ones((1, items.n)))
        scores: dict[str, Any] = {key: _number(array[0]) for key, array in values.items()}
        scores = self.extra_scores(scores, metadata)
        metadata = {
            "annotator_aggregation": call.annotator_aggregation,
            "human_annotators": len(items.humans),
            "num_items": items.n,
            **metadata,
        }
        pairs = int(sum(h.is_not_null().sum() for h in items.human))
        return Scored(scores, metadata, pairs)

    async def human_baseline_statistic(
        self, call: ScoringCall, ids: pl.Series
    ) -> BaselineStatistic:
        """The score between humans, each in the judge's place in turn, on the judge's items.

        The items and codes are those of the judge's score (`items_of` when its ids are
        `ids`), so the baseline reads the labels exactly as the judge's score does.
        """
        items = self.items_of(call)
        if items is None or not items.ids.equals(ids, check_names=False):
            items = Items.build(call.judge_data, call.human_data, ids)
        return await self.human_baseline(items, call.annotator_aggregation, call.aggregation_mode)

    async def human_baseline(
        self, items: Items, annotator_aggregation: str, aggregation_mode: TaskAggregationMode
    ) -> BaselineStatistic:
        """Leave-one-out: `statistic` with each human as the judge and the others as humans."""
        key = self.plot_key
        method = (
            f"leave-one-out: each human's {key} against the other humans "
            f"({annotator_aggregation}), as the judge's is computed, on the judge's items; "
            "the mean over the humans with a defined value"
        )
        shared = int(np.count_nonzero(items.human_counts() >= 2))
        problem = baseline_problem(items, shared)
        if problem is not None:
            return BaselineStatistic.undefined(key, method, shared, problem)
        functions = []
        for layout in items.leave_one_out():
            await self.prepare(layout)
            functions.append(self.statistic(layout, annotator_aggregation, aggregation_mode)[0])

        def per_human(weights: Any) -> Any:
            return np.column_stack([f(weights)[key] for f in functions])

        return BaselineStatistic(key, method, shared, tuple(items.humans), per_human)

    def resampling_statistic(self, call: ScoringCall, ids: pl.Series) -> ResamplingStatistic:
        """The scores as a function of item weights over `ids` (items absent weigh nothing)."""
        items = Items.build(call.judge_data, call.human_data, ids)
        statistic = self.statistic(items, call.annotator_aggregation, call.aggregation_mode)[0]
        return self._with_aliases(statistic)

    def _with_aliases(self, statistic: ResamplingStatistic) -> ResamplingStatistic:
        """`statistic` giving each of `score_aliases` too."""
        if not self.score_aliases:
            return statistic
        aliases = self.score_aliases

        def aliased(weights: Any) -> dict[str, Any]:
            values = statistic(weights)
            return {**values, **{alias: values[key] for alias, key in aliases.items()}}

        return aliased


def baseline_problem(items: Items, shared: int) -> str | None:
    """Why there is no human baseline on `items` (None when there can be one)."""
    if len(items.humans) < 2:
        return f"{len(items.humans)} human annotator(s): a baseline needs two humans to compare"
    if shared == 0:
        return "no item the judge labelled has labels from two humans"
    return None


def _number(value: Any) -> float | None:
    return None if value is None or np.isnan(value) else float(value)
