"""ClassificationScorer: accuracy, F1, precision or recall of the judge against the humans.

meta-evaluator 0.3.3's scorer, kept for its scripts (`ClassificationScorer(metric="f1",
pos_label="accurate", average="binary")`), computed the way METRICS.md F says: against each
human then averaged (`individual_average`), or against the per-item majority
(`majority_vote`). Multi-label answers are scored label by label (`macro`, `micro`,
`weighted`) or item by item (`samples`), never with `binary`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.eval_task import EvalTask, normalize_label
from meta_evaluator.scores.base_scorer import ResamplingStatistic
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.metrics._arguments import one_of_problems, refuse
from meta_evaluator.scores.metrics._base import LabelScorer
from meta_evaluator.scores.metrics._items import Items, mean_over_humans, weighted_ratio
from meta_evaluator.scores.metrics.accuracy import AccuracyScorer
from meta_evaluator.stats.classification import confusion_matrix, scores_from_counts
from meta_evaluator.stats.majority import majority_of_sets, set_indicators

__all__ = ["ClassificationScorer"]

Metric = Literal["accuracy", "f1", "precision", "recall"]
Average = Literal["binary", "macro", "micro", "weighted", "samples"]
METRICS: tuple[Metric, ...] = ("accuracy", "f1", "precision", "recall")
AVERAGES: tuple[Average, ...] = ("binary", "macro", "micro", "weighted", "samples")
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


class ClassificationScorer(LabelScorer):
    """One of accuracy, F1, precision, recall of the judge against the humans (METRICS.md F).

    `individual_average`: the metric against each human on the items that human labelled,
    then the mean over humans where defined. `majority_vote`: the metric against the humans'
    majority per item (`stats.majority`: the most frequent label, a tie to the largest; for
    label sets, each outcome at least half of the humans who labelled the item chose).
    Label sets are read as sets: a 0.3.3 vector's `FALSE` slots choose nothing.

    F1, precision and recall average as scikit-learn's `average` says: `binary` reports
    `pos_label` (a single-choice task of two labels), `macro` / `weighted` / `micro` average
    over the labels, `samples` over the items (multi-label only). Undefined values (0/0: a
    label never predicted) are left out of averages and are None, not scikit-learn's 0.
    Accuracy ignores `average` (for multi-label: the whole set must match).

    Scorer name `classification_<metric>` (0.3.3's folders); score key `<metric>`; metadata
    `average`, `pos_label`, `per_human`.

    Example:
        >>> ClassificationScorer("f1", pos_label="accurate").scorer_name
        'classification_f1'
    """

    def __init__(
        self,
        metric: Metric = "accuracy",
        pos_label: str | float | bool = 1,
        average: Average = "binary",
    ) -> None:
        problems = one_of_problems("metric", metric, METRICS)
        problems += one_of_problems("average", average, AVERAGES)
        if not isinstance(pos_label, str | int | float) or (
            isinstance(pos_label, str) and not pos_label.strip()
        ):
            problems.append(f"pos_label must be a label (text or number); got {pos_label!r}")
        refuse("ClassificationScorer", problems)
        super().__init__(scorer_name=f"classification_{metric}")
        self.metric: Metric = metric
        self.pos_label = pos_label
        self.average: Average = average
        self.plot_key = metric

    def can_score_task(self, sample_label: Any) -> bool:
        """Labels (text, numbers) or multi-label answers (lists of labels)."""
        if isinstance(sample_label, list):
            return all(isinstance(v, str | int) for v in sample_label)
        return isinstance(sample_label, str | int | float) and not isinstance(sample_label, bool)

    def task_problems(self, task: EvalTask, task_names: Sequence[str]) -> list[str]:
        """What about the tasks this scorer cannot score as configured (before any score).

        `binary` needs a single-choice task whose labels include `pos_label`, and two labels
        at most; `samples` needs multi-label tasks; multi-label tasks take any average but
        `binary` (0.3.3 refused it too).
        """
        if self.metric == "accuracy":
            return []
        problems = []
        for name in task_names:
            kind, labels = task.task_kind(name), task.allowed_labels(name) or []
            if kind == "multilabel" and self.average == "binary":
                problems.append(
                    f"task {name!r} is multi-label: average='binary' does not apply; use "
                    "'macro' (per label) or 'samples' (per item)"
                )
            elif kind == "single" and self.average == "samples":
                problems.append(
                    f"task {name!r} has one label per item: average='samples' is for "
                    "multi-label tasks; use 'macro', 'micro' or 'weighted'"
                )
            elif kind == "single" and self.average == "binary":
                if _positive(self.pos_label, labels) is None:
                    problems.append(
                        f"task {name!r}: pos_label={self.pos_label!r} is not one of its labels "
                        f"{labels}; name the positive label"
                    )
                elif len(labels) > 2:
                    problems.append(
                        f"task {name!r} has {len(labels)} labels: average='binary' needs two; "
                        "use 'macro', 'micro' or 'weighted'"
                    )
        return problems

    def statistic(
        self, items: Items, annotator_aggregation: str, aggregation_mode: TaskAggregationMode
    ) -> tuple[ResamplingStatistic, dict[str, Any]]:
        """The metric as a function of item weights (see the class docstring)."""
        multilabel = _is_multilabel(items)
        if self.metric == "accuracy" and not multilabel:
            function, metadata = AccuracyScorer().statistic(
                items, annotator_aggregation, aggregation_mode
            )
            return function, metadata
        if multilabel:
            return self._multilabel(items, annotator_aggregation)
        return self._single(items, annotator_aggregation)

    def _options(self) -> dict[str, Any]:
        return {"average": self.average, "pos_label": str(self.pos_label)}

    def _single(
        self, items: Items, annotator_aggregation: str
    ) -> tuple[ResamplingStatistic, dict[str, Any]]:
        if self.average == "samples":
            raise ScoringError(
                f"{self.scorer_name}: average='samples' is for multi-label answers; these "
                "are single labels."
            )
        if annotator_aggregation == "majority_vote":
            judge, majority, categories = items.majority_codes()
            pairs = [(majority, "majority")]
        else:
            judge, human, categories = items.codes()
            pairs = [(human[:, h], name) for h, name in enumerate(items.humans)]
        k = max(len(categories), 1)
        positive = None
        if self.average == "binary":
            if len(categories) > 2:
                raise ScoringError(
                    f"{self.scorer_name}: average='binary' needs two labels; the answers hold "
                    f"{len(categories)} ({categories}); use 'macro', 'micro' or 'weighted'."
                )
            positive = _positive(self.pos_label, categories)

        def values(weights: Any) -> FloatArray:
            columns = []
            if self.average == "binary" and positive is None:  # nobody chose it: 0/0
                return np.full((np.shape(weights)[0], len(pairs)), np.nan)
            for truth, _ in pairs:
                counts = confusion_matrix(truth, judge, k, weights=weights)  # rows: the human
                tp = np.diagonal(counts, axis1=-2, axis2=-1)
                scores = scores_from_counts(
                    tp, counts.sum(-2), counts.sum(-1), average=_flat(self.average),
                    positive=positive,
                )  # fmt: skip
                columns.append(scores[self.metric])
            return np.column_stack(columns)

        return self._by_human(values, [name for _, name in pairs], items.n, annotator_aggregation)

    def _multilabel(
        self, items: Items, annotator_aggregation: str
    ) -> tuple[ResamplingStatistic, dict[str, Any]]:
        if self.average == "binary" and self.metric != "accuracy":
            raise ScoringError(
                f"{self.scorer_name}: average='binary' does not apply to multi-label answers; "
                "use 'macro' (per label) or 'samples' (per item)."
            )
        # read as sets, as the majority reads them (a 0.3.3 vector's FALSE slots are no label)
        _, ((judge, judge_present), *humans) = set_indicators(items.judge, *items.human)
        names = list(items.humans)
        if annotator_aggregation == "majority_vote":
            humans = [majority_of_sets([c for c, _ in humans], [p for _, p in humans])]
            names = ["majority"]

        def values(weights: Any) -> FloatArray:
            return np.column_stack(
                [
                    self._set_scores(judge, truth, judge_present & present, weights)
                    for truth, present in humans
                ]
            )

        return self._by_human(values, names, items.n, annotator_aggregation)

    def _set_scores(
        self, judge: BoolArray, truth: BoolArray, both: BoolArray, weights: Any
    ) -> FloatArray:
        """The metric of the judge's label sets against `truth`'s, per weighting (r,)."""
        w = np.asarray(weights, dtype=np.float64)
        if self.metric == "accuracy":
            equal = both & (judge == truth).all(axis=1)
            return weighted_ratio(w, equal, both)
        hit = (judge & truth & both[:, None]).astype(np.float64)
        chosen = (judge & both[:, None]).astype(np.float64)
        true = (truth & both[:, None]).astype(np.float64)
        if self.average == "samples":
            tp, predicted, support = hit.sum(1), chosen.sum(1), true.sum(1)
            top, bottom = {
                "precision": (tp, predicted),
                "recall": (tp, support),
                "f1": (2 * tp, predicted + support),
            }[self.metric]
            defined = both & (bottom > 0)
            ratio = np.divide(top, bottom, out=np.zeros_like(top), where=defined)
            return weighted_ratio(w, ratio, defined)
        found = scores_from_counts(w @ hit, w @ chosen, w @ true, average=_flat(self.average))
        return found[self.metric]

    def _by_human(
        self, values: Any, names: list[str], n: int, annotator_aggregation: str
    ) -> tuple[ResamplingStatistic, dict[str, Any]]:
        def statistic(weights: Any) -> dict[str, Any]:
            return {self.metric: mean_over_humans(values(weights))}

        metadata = self._options()
        if annotator_aggregation != "majority_vote":
            point = values(np.ones((1, n)))[0]
            metadata["per_human"] = {
                name: None if np.isnan(v) else float(v)
                for name, v in zip(names, point, strict=True)
            }
        return statistic, metadata


def _is_multilabel(items: Items) -> bool:
    return any(isinstance(s.dtype, pl.List | pl.Array) for s in (items.judge, *items.human))


def _flat(average: Average) -> Literal["macro", "micro", "weighted", "binary"]:
    if average == "samples":
        raise ScoringError("average='samples' is computed item by item")
    return average


def _positive(pos_label: Any, labels: Sequence[Any]) -> int | None:
    """The index of `pos_label` among `labels` by the label rule (1 is "1", True is "true")."""
    if isinstance(pos_label, bool):
        text = "true" if pos_label else "false"
    elif isinstance(pos_label, float) and pos_label.is_integer():
        text = str(int(pos_label))
    else:
        text = str(pos_label)
    wanted = normalize_label(text)
    for index, label in enumerate(labels):
        if normalize_label(str(label)) == wanted:
            return index
    return None
