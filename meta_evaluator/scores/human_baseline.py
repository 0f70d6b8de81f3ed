"""The human baseline: the judge's agreement statistic computed between the humans themselves.

Beside every agreement score of a judge, the same statistic with each human in the judge's
place in turn (leave-one-out: human h against the other humans, with the metric's
`annotator_aggregation`), averaged over the humans whose value is defined. It is computed on
the items the judge's score rests on (`BaseScorer.resampled_ids`) and resampled with the
judge's very bootstrap weights (same items, same seed), so the two intervals are comparable.
A scorer offers it through `BaseScorer.human_baseline_statistic`; `compare` evaluates it once
per metric and item set (`BaselineCache`: every judge has the same humans) and saves it as
`metadata["human_baseline"]` (`HumanBaseline.as_metadata`, documented in docs/scoring.md).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import polars as pl

from meta_evaluator.stats.bootstrap import percentile_interval, weight_chunks

if TYPE_CHECKING:
    from meta_evaluator.scores.base_scorer import BaseScorer, ScoringCall
    from meta_evaluator.scores.config import BootstrapConfig

__all__ = [
    "BaselineCache",
    "BaselineStatistic",
    "HumanBaseline",
    "MetricBaseline",
    "evaluate_baseline",
]

FloatArray = npt.NDArray[np.float64]

#: Per-human baseline values per resample: item weights (resamples x items) -> (resamples x m).
PerHumanStatistic = Callable[[FloatArray], FloatArray]


@dataclass(frozen=True)
class BaselineStatistic:
    """What a scorer hands `compare` for one task: the baseline as a function of item weights.

    `per_human` maps weights (resamples x items, in the order of the ids `compare` gave) to
    one column per human in `humans` (NaN where that human's value is undefined), or, when
    `pooled`, to one column for all of them (Krippendorff's alpha of the humans alone). None
    when the baseline is undefined, with the `reason`.
    """

    score: str
    """The judge's score the baseline stands beside (`accuracy`, `cohens_kappa`, `alpha`...)."""
    method: str
    """How it was computed, in one sentence (saved as `method`)."""
    items: int
    """Items of the judge's that at least two humans labelled."""
    humans: tuple[str, ...] = ()
    """The humans compared (the columns of `per_human`, unless pooled)."""
    per_human: PerHumanStatistic | None = None
    reason: str | None = None
    pooled: bool = False
    """One value for all humans together (no value per human)."""

    @classmethod
    def undefined(cls, score: str, method: str, items: int, reason: str) -> BaselineStatistic:
        """A baseline that cannot be computed, and why."""
        return cls(score, method, items, reason=reason)


@dataclass(frozen=True)
class HumanBaseline:
    """The humans' baseline of one metric (and task) as saved in a result's metadata."""

    score: str
    value: float | None
    interval: tuple[float | None, float | None] | None
    """Percentile interval over the judge's bootstrap resamples; None without a bootstrap."""
    per_human: dict[str, float | None]
    """Each human's leave-one-out value (empty for a pooled statistic such as alpha)."""
    humans: int
    """Humans whose value is defined (those averaged)."""
    items: int
    method: str
    reason: str | None = None
    """Why `value` is None (None when it is defined)."""

    def as_metadata(self) -> dict[str, Any]:
        """The JSON shape of `metadata["human_baseline"]`."""
        return {
            "score": self.score,
            "value": self.value,
            "interval": None if self.interval is None else list(self.interval),
            "per_human": dict(self.per_human),
            "humans": self.humans,
            "items": self.items,
            "method": self.method,
            "reason": self.reason,
        }

    @classmethod
    def from_metadata(cls, raw: Any) -> HumanBaseline | None:
        """Read `metadata["human_baseline"]` back (None when absent or not of this shape)."""
        if not isinstance(raw, Mapping) or not isinstance(raw.get("score"), str):
            return None
        interval = raw.get("interval")
        pair = (
            (_number(interval[0]), _number(interval[1]))
            if isinstance(interval, list | tuple) and len(interval) == 2
            else None
        )
        per_human = raw.get("per_human") or {}
        return cls(
            score=raw["score"],
            value=_number(raw.get("value")),
            interval=pair,
            per_human={str(k): _number(v) for k, v in dict(per_human).items()},
            humans=int(raw.get("humans") or 0),
            items=int(raw.get("items") or 0),
            method=str(raw.get("method") or ""),
            reason=raw.get("reason"),
        )


@dataclass(frozen=True)
class MetricBaseline:
    """One metric's baseline: overall (multitask: the mean over tasks) and per task."""

    overall: HumanBaseline
    per_task: dict[str, HumanBaseline] = field(default_factory=dict)


def evaluate_baseline(
    statistics: Mapping[str, BaselineStatistic],
    n_items: int,
    bootstrap: BootstrapConfig | None,
) -> MetricBaseline:
    """Each task's baseline at weights of one, with intervals over the bootstrap's resamples.

    The resamples are `weight_chunks(n_items, n_resamples, seed)`: those of the judge's own
    interval, so both rest on the same draws. Several tasks (multitask) are averaged per
    resample, as the judge's scores are.
    """
    ones = np.ones((1, n_items))
    point = {t: _per_human(s, ones) for t, s in statistics.items()}
    replicates: dict[str, list[FloatArray]] = {t: [] for t in statistics}
    defined = [t for t, s in statistics.items() if s.per_human is not None]
    if bootstrap is not None and n_items and defined:
        for weights in weight_chunks(n_items, bootstrap.n_resamples, bootstrap.seed):
            for t in defined:
                replicates[t].append(_mean_over_columns(_per_human(statistics[t], weights)))
    per_task = {t: _baseline(s, point[t], replicates[t], bootstrap) for t, s in statistics.items()}
    if len(per_task) == 1:
        return MetricBaseline(next(iter(per_task.values())), per_task)
    return MetricBaseline(_average(statistics, per_task, replicates, bootstrap), per_task)


def _per_human(statistic: BaselineStatistic, weights: FloatArray) -> FloatArray:
    if statistic.per_human is None:
        return np.full((weights.shape[0], 0), np.nan)
    return np.asarray(statistic.per_human(weights), dtype=np.float64).reshape(weights.shape[0], -1)


def _mean_over_columns(values: FloatArray) -> FloatArray:
    """Row means over the defined (non-NaN) columns; NaN where none is defined."""
    if values.shape[-1] == 0:
        return np.full(values.shape[0], np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows stay NaN
        return np.asarray(np.nanmean(values, axis=-1))


def _baseline(
    statistic: BaselineStatistic,
    point: FloatArray,
    replicates: list[FloatArray],
    bootstrap: BootstrapConfig | None,
) -> HumanBaseline:
    values = point[0]
    pooled = statistic.pooled
    per_human = {} if pooled else {h: _number(v) for h, v in zip(statistic.humans, values,
                                                                   strict=True)}  # fmt: skip
    defined = int(np.count_nonzero(~np.isnan(values)))
    value = _number(_mean_over_columns(point)[0]) if values.size else None
    reason = statistic.reason
    if value is None and reason is None:
        reason = f"{statistic.score} is undefined for every human (no human can be scored)"
    interval = None
    if bootstrap is not None and statistic.per_human is not None:
        interval = (
            percentile_interval(np.concatenate(replicates), bootstrap.confidence_level)
            if replicates
            else (None, None)
        )
    return HumanBaseline(
        score=statistic.score,
        value=value,
        interval=interval,
        per_human=per_human,
        humans=0 if value is None else (len(statistic.humans) if pooled else defined),
        items=statistic.items,
        method=statistic.method,
        reason=None if value is not None else reason,
    )


def _average(
    statistics: Mapping[str, BaselineStatistic],
    per_task: Mapping[str, HumanBaseline],
    replicates: Mapping[str, list[FloatArray]],
    bootstrap: BootstrapConfig | None,
) -> HumanBaseline:
    """The multitask baseline: the mean of the tasks' values, per resample too."""
    first = next(iter(statistics.values()))
    values = [b.value for b in per_task.values() if b.value is not None]
    humans = list(dict.fromkeys(h for b in per_task.values() for h in b.per_human))
    per_human = {h: _mean([b.per_human.get(h) for b in per_task.values()]) for h in humans}
    interval = None
    if bootstrap is not None:
        stacks = [np.concatenate(r) for r in replicates.values() if r]
        interval = (
            percentile_interval(_mean_over_columns(np.column_stack(stacks)),
                                bootstrap.confidence_level)
            if stacks else (None, None)
        )  # fmt: skip
    value = float(np.mean(values)) if values else None
    reasons = "; ".join(f"{t}: {b.reason}" for t, b in per_task.items() if b.reason)
    return HumanBaseline(
        score=first.score,
        value=value,
        interval=interval,
        per_human=per_human,
        humans=max((b.humans for b in per_task.values()), default=0),
        items=max((b.items for b in per_task.values()), default=0),
        method=f"{first.method}; the mean over the tasks, as the judge's score is",
        reason=None if value is not None else reasons or "undefined in every task",
    )


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if present else None


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    number = float(value)
    return None if np.isnan(number) or np.isinf(number) else number


class BaselineCache:
    """Baselines computed in one `compare`, by metric and by the resampled items per task.

    Every judge has the same humans, so judges scored on the same items share one computation
    (the usual case: once per metric and task); a judge with other items (rows it could not
    answer) gets its own, so its baseline rests on its items.
    """

    def __init__(self) -> None:
        self._found: dict[str, list[tuple[tuple[pl.Series, ...], MetricBaseline | None]]] = {}

    async def baseline(
        self,
        metric: str,
        scorer: BaseScorer,
        calls: Mapping[str, ScoringCall],
        bootstrap: BootstrapConfig | None,
    ) -> MetricBaseline | None:
        """The baseline of `metric` for the judge of `calls` (one per task scored).

        None when the scorer offers no baseline.
        """
        key = tuple(scorer.resampled_ids(c).unique().sort() for c in calls.values())
        for items, found in self._found.get(metric, []):
            if len(items) == len(key) and all(
                a.equals(b, check_names=False) for a, b in zip(items, key, strict=True)
            ):
                return found
        ids = pl.concat(key).unique().sort() if key else pl.Series("original_id", [])
        statistics: dict[str, BaselineStatistic] = {}
        for name, call in calls.items():
            statistic = await scorer.human_baseline_statistic(call, ids)
            if statistic is None:
                statistics = {}
                break
            statistics[name] = statistic
        computed = evaluate_baseline(statistics, ids.len(), bootstrap) if statistics else None
        self._found.setdefault(metric, []).append((key, computed))
        return computed
