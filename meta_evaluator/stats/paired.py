"""Two labellings of the same items, compared: what changed, toward whom, and is it real.

A judge run again (a new prompt, another model, the same judge a week later) labels the same
items a second time. `label_change` lists the items whose label changed, whether each moved
toward the humans' majority label or away from it, and the change in accuracy and Cohen's kappa
against the humans, each with a paired bootstrap interval (both labellings scored on the same
resampled items). `mcnemar_exact` tests whether the share of items right changed. Undefined
values are None with the reason, never 0 (METRICS.md conventions).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias, cast

import numpy as np
import numpy.typing as npt
import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.agreement import kappa_from_confusion
from meta_evaluator.stats.bootstrap import percentile_interval, weight_chunks
from meta_evaluator.stats.checks import check_interval, check_same_length, encode_labels
from meta_evaluator.stats.classification import confusion_matrix
from meta_evaluator.stats.majority import (
    encode_sets,
    holds_label_sets,
    majority_of_codes,
    majority_of_sets,
    ordered_outcomes,
    set_indicators,
)

__all__ = [
    "SCORE_NAMES",
    "Direction",
    "LabelChange",
    "ScoreChange",
    "label_change",
    "mcnemar_exact",
]

Labels: TypeAlias = Sequence[Any] | pl.Series
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

Direction = Literal["toward", "away", "neither", "unrated"]
"""How an item whose label changed moved against the humans' majority label: `toward` (wrong,
then right), `away` (right, then wrong), `neither` (wrong both times), `unrated` (no human
labelled it)."""

SCORE_NAMES = (
    "accuracy_majority_vote",
    "cohens_kappa_majority_vote",
    "accuracy_individual_average",
)
"""The scores `label_change` compares, in the order it returns them."""


def mcnemar_exact(table: Sequence[Sequence[int]] | npt.ArrayLike) -> float | None:
    """McNemar's exact test: do two labellings of the same items get different shares right?

    Formula: b = table[0][1] items the first labelling got right and the second wrong, c =
    table[1][0] the reverse, n = b + c. Under the null hypothesis each of the n discordant items
    goes either way with probability 1/2, so b ~ Binomial(n, 1/2), and the two-sided p-value is
    p = min(1, 2 * P(X <= min(b, c))) = min(1, 2 * sum_{i=0..min(b,c)} C(n, i) / 2^n). The
    concordant cells (both right, both wrong) do not enter.

    Args:
        table: 2 x 2 counts, non-negative whole numbers: rows the first labelling right, wrong;
            columns the second labelling right, wrong.

    Returns:
        p in (0, 1]: small when one labelling is right on clearly more of the discordant items.

    Undefined: None when n = 0 (no item is right in one labelling and wrong in the other: there
    is nothing to test).

    Raises:
        ScoringError: The table is not 2 x 2, or a count is negative or not a whole number.

    References:
        McNemar (1947), doi:10.1007/BF02295996; Fagerland, Lydersen & Laake (2013),
        doi:10.1186/1471-2288-13-91; statsmodels `mcnemar(table, exact=True)`; METRICS.md
        (undefined values are None).

    Example:
        >>> mcnemar_exact([[10, 1], [6, 20]])  # 2 * P(X <= 1), X ~ Bin(7, 1/2) = 2 * 8 / 128
        0.125
    """
    b, c = _discordant("mcnemar_exact", table)
    n = b + c
    if n == 0:
        return None
    from scipy.special import bdtr  # type: ignore[import-untyped]  # binomial CDF, exact to 1e-15

    return float(min(1.0, 2.0 * float(bdtr(min(b, c), n, 0.5))))


def _discordant(function: str, table: Any) -> tuple[int, int]:
    """The two off-diagonal counts of a 2 x 2 table of whole numbers, checked."""
    try:
        cells = np.asarray(table, dtype=np.float64)
    except (TypeError, ValueError):
        raise ScoringError(f"{function}: table must be 2 x 2 counts; got {table!r}.") from None
    if cells.shape != (2, 2):
        raise ScoringError(f"{function}: table must be 2 x 2 counts; got shape {cells.shape}.")
    for (i, j), value in np.ndenumerate(cells):
        if not math.isfinite(value) or value < 0 or not value.is_integer():
            raise ScoringError(
                f"{function}: table[{i}][{j}] must be a whole number >= 0; got {value!r}."
            )
    return int(cells[0, 1]), int(cells[1, 0])


@dataclass(frozen=True)
class ScoreChange:
    """One agreement score of both labellings against the humans, and how it changed."""

    name: str
    """One of `SCORE_NAMES`."""
    a: float | None
    """The score of the first labelling (None when undefined)."""
    b: float | None
    """The score of the second labelling (None when undefined)."""
    difference: float | None
    """b - a: positive when the second labelling agrees more with the humans."""
    low: float | None
    """Lower end of the paired bootstrap interval of the difference."""
    high: float | None
    """Upper end of that interval."""
    reason: str | None = None
    """Why a value above is None (None when every value is defined)."""


@dataclass(frozen=True)
class LabelChange:
    """What changed between two labellings of the same items (`label_change`)."""

    items: int
    """Items both labellings label: the items compared."""
    changed: tuple[int, ...]
    """Positions (in the inputs) of the items whose label changed, ascending."""
    directions: tuple[Direction, ...]
    """How each changed item moved against the humans' majority (one per `changed`)."""
    majority: tuple[Any, ...]
    """The humans' majority label of each changed item (None when no human labelled it; a
    label set as the tuple of its outcomes, sorted)."""
    toward: int | None
    """Changed items wrong before and right after (None without human labels)."""
    away: int | None
    """Changed items right before and wrong after (None without human labels)."""
    neither: int | None
    """Changed items wrong both times (None without human labels)."""
    unrated: int
    """Changed items no human labelled."""
    mcnemar_p: float | None
    """McNemar's exact p-value of right/wrong against the majority (`mcnemar_exact`)."""
    mcnemar_reason: str | None
    """Why `mcnemar_p` is None (None when it is defined)."""
    scores: tuple[ScoreChange, ...]
    """Each score of `SCORE_NAMES`, for both labellings, with its change."""
    human_reason: str | None
    """Why the figures measured against the humans are None (None when there are humans)."""


def label_change(
    labels_a: Labels,
    labels_b: Labels,
    humans: Sequence[Labels] = (),
    *,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
    order: Sequence[Any] | None = None,
) -> LabelChange:
    """Which items two labellings label differently, and how each fares against the humans.

    Formula: over the n items both labellings label, item i changed when a_i != b_i. The humans'
    majority m_i is `stats.majority`'s, as the scorers' (the label most of the humans who
    labelled item i gave, a tie going to the label that sorts last; for label sets, each
    outcome at least half of them chose). A changed item moved `toward` when
    a_i != m_i and b_i = m_i, `away` when a_i = m_i and b_i != m_i, `neither` when both differ
    from m_i. McNemar's exact test runs on the items with a majority: b = right then wrong,
    c = wrong then right. Scores of each labelling x: accuracy_majority_vote = share of items
    with a majority where x_i = m_i; cohens_kappa_majority_vote = Cohen's kappa of x and m on
    those items; accuracy_individual_average = mean over humans h of the share of the items h
    labelled where x_i equals h's label. Each difference b - a gets a percentile interval from
    a paired bootstrap: R resamples of the n items (`stats.bootstrap.weight_chunks`, seeded),
    both labellings scored on the same resample, resamples where either is undefined left out.

    Args:
        labels_a: The first labelling, one label per item (text, numbers, or label sets: lists
            compared as sets, a 0.3.3 vector's `FALSE` slots choosing nothing; a sequence or a
            polars Series); None or NaN where it has none (the item is left out).
        labels_b: The second labelling, same items in the same order.
        humans: One sequence per human annotator, the same length, None where that human did not
            label the item. Empty: the figures measured against humans are None.
        n_resamples: Bootstrap resamples, >= 1.
        confidence_level: Central coverage of each interval, in (0, 1).
        seed: Seed of the resampling (>= 0): the same seed gives the same intervals.
        order: For label sets, the order of the outcomes in each `majority` shown (a task's
            outcomes; those it lacks follow, sorted); default sorted.

    Returns:
        A `LabelChange`. Accuracies lie in [0, 1], kappas in [-1, 1], differences in [-1, 1] and
        [-2, 2]; a positive difference means the second labelling agrees more with the humans.

    Undefined: every human-relative figure (toward, away, neither, scores, McNemar) when no item
    has a human label; McNemar's p when no item is right in one labelling and wrong in the
    other; a kappa when its chance agreement is 1 (one label only); an interval when the
    difference is undefined in every resample. Each comes with its reason.

    Raises:
        ScoringError: Lengths differ, no item is labelled by both, label sets and single labels
            are mixed, or an argument is out of range.

    References:
        McNemar (1947), doi:10.1007/BF02295996; Cohen (1960), doi:10.1177/001316446002000104;
        Efron & Tibshirani (1993), An Introduction to the Bootstrap, ch. 13 (percentile
        intervals); METRICS.md D (kappa) and its conventions (undefined values are None).

    Example:
        >>> change = label_change(["y", "y", "n", "n"], ["y", "n", "n", "y"],
        ...                       [["y", "y", "n", "y"]], n_resamples=200)
        >>> change.changed, change.directions, change.mcnemar_p
        ((1, 3), ('away', 'toward'), 1.0)
        >>> change.scores[0].name, change.scores[0].a, change.scores[0].difference
        ('accuracy_majority_vote', 0.75, 0.0)
    """
    function = "label_change"
    check_same_length(
        function, labels_a=labels_a, labels_b=labels_b,
        **{f"humans[{h}]": labels for h, labels in enumerate(humans)},
    )  # fmt: skip
    check_interval(function, "n_resamples", n_resamples, 1, math.inf, closed="left", integer=True)
    check_interval(function, "confidence_level", confidence_level, 0.0, 1.0)
    check_interval(function, "seed", seed, 0, math.inf, closed="left", integer=True)
    voted: IntArray | None = None  # the majority's codes, when not counted from the humans'
    categories: list[Any]
    if holds_label_sets(labels_a, labels_b, *humans, caller=function):
        # label sets are compared as sets, and their majority is a set no human need have given
        outcomes, indicators = set_indicators(labels_a, labels_b, *humans)
        if humans:
            sets = indicators[2:]
            indicators.append(majority_of_sets([c for c, _ in sets], [p for _, p in sets]))
        codes, listed = encode_sets(*indicators, outcomes=outcomes)
        voted = codes.pop() if humans else None
        categories = [tuple(ordered_outcomes(c, order)) for c in listed]
    else:
        codes, categories = encode_labels(labels_a, labels_b, *humans)
    both = (codes[0] >= 0) & (codes[1] >= 0)
    kept = np.flatnonzero(both)
    if kept.size == 0:
        raise ScoringError(f"{function}: no item is labelled by both labellings.")
    a, b = codes[0][kept], codes[1][kept]
    human = (
        np.column_stack([c[kept] for c in codes[2:]])
        if humans
        else np.empty((kept.size, 0), dtype=np.int64)
    )
    k = max(len(categories), 1)
    majority = majority_of_codes(human, k) if voted is None else voted[kept]
    rated = majority >= 0
    changed = np.flatnonzero(a != b)
    right_a, right_b = rated & (a == majority), rated & (b == majority)
    directions = np.select(
        [~rated, ~right_a & right_b, right_a & ~right_b],
        ["unrated", "toward", "away"],
        "neither",
    )[changed]
    shown_majority = tuple(None if m < 0 else categories[m] for m in majority[changed])
    unrated = int(np.count_nonzero(~rated[changed]))
    common = LabelChange(
        items=int(kept.size), changed=tuple(int(i) for i in kept[changed]),
        directions=tuple(cast(Direction, str(d)) for d in directions), majority=shown_majority,
        toward=None, away=None, neither=None, unrated=unrated, mcnemar_p=None,
        mcnemar_reason=None, scores=(), human_reason=None,
    )  # fmt: skip
    if not rated.any():
        reason = "no human labels were given" if not humans else "no human labelled these items"
        return replace(
            common, mcnemar_reason=reason, human_reason=reason,
            scores=tuple(ScoreChange(n, None, None, None, None, None, reason) for n in SCORE_NAMES),
        )  # fmt: skip
    wrong_a, wrong_b = rated & ~right_a, rated & ~right_b
    table = [
        [np.count_nonzero(right_a & right_b), np.count_nonzero(right_a & wrong_b)],
        [np.count_nonzero(wrong_a & right_b), np.count_nonzero(wrong_a & wrong_b)],
    ]
    p = mcnemar_exact(table)
    no_test = "no item is right in one labelling and wrong in the other against the majority"
    scored = _Scored(a, b, majority, human, k)
    return replace(
        common,
        toward=int(np.count_nonzero(directions == "toward")),
        away=int(np.count_nonzero(directions == "away")),
        neither=int(np.count_nonzero(directions == "neither")),
        mcnemar_p=p,
        mcnemar_reason=None if p is not None else no_test,
        scores=_score_changes(scored, n_resamples, confidence_level, seed),
    )


_MOST_CELLS = 1 << 24
"""Most items x columns of the one-hot table `_Scored` multiplies by (128 MB of float64)."""


class _Scored:
    """Both labellings' codes and the humans', laid out so one matrix product scores a resample.

    Every score is a ratio of weighted counts over items, so the counts of all of them, for
    both labellings, are the columns of one table (n, c): `weights @ table` gives them for r
    resamples at once. The cells of each confusion matrix with the majority are columns too,
    while the table stays under `_MOST_CELLS`; past that, `confusion_matrix` counts them.
    """

    def __init__(self, a: IntArray, b: IntArray, majority: IntArray, human: IntArray, k: int):
        self.a, self.b, self.majority, self.k = a, b, majority, k
        rated = majority >= 0
        has = human >= 0
        columns = [rated[:, None], has]
        for x in (a, b):
            columns += [(rated & (x == majority))[:, None], has & (human == x[:, None])]
        n, width = a.size, sum(column.shape[1] for column in columns)
        self.cells: list[tuple[IntArray, IntArray]] = []
        for x in (a, b):
            code = np.where(rated, x * k + majority, -1)
            used = np.unique(code[code >= 0])
            if n * (width + used.size) > _MOST_CELLS:
                self.cells = []
                break
            columns.append(code[:, None] == used[None, :])
            self.cells.append((used, np.arange(width, width + used.size)))
            width += used.size
        self.table = np.concatenate(columns, axis=1).astype(np.float64)
        self.humans = human.shape[1]

    def under(self, weights: FloatArray) -> dict[str, tuple[FloatArray, FloatArray]]:
        """Each score of both labellings under item weights (r, n): name -> (a, b); NaN: none."""
        counts = weights @ self.table
        h = self.humans
        rated, has = counts[:, 0], counts[:, 1 : 1 + h]
        found: dict[str, list[FloatArray]] = {name: [] for name in SCORE_NAMES}
        for side, x in enumerate((self.a, self.b)):
            start = 1 + h + side * (1 + h)
            found["accuracy_majority_vote"].append(_ratio(counts[:, start], rated))
            per_human = _ratio(counts[:, start + 1 : start + 1 + h], has)
            found["accuracy_individual_average"].append(_mean_defined(per_human))
            if self.cells:
                used, where = self.cells[side]
                flat = np.zeros((weights.shape[0], self.k * self.k))
                flat[:, used] = counts[:, where]
                confusion = flat.reshape(-1, self.k, self.k)
            else:
                confusion = confusion_matrix(x, self.majority, self.k, weights=weights)
            found["cohens_kappa_majority_vote"].append(kappa_from_confusion(confusion))
        return {name: (pair[0], pair[1]) for name, pair in found.items()}


def _score_changes(
    scored: _Scored, n_resamples: int, confidence_level: float, seed: int
) -> tuple[ScoreChange, ...]:
    """Each score of both labellings, its difference, and the paired bootstrap interval."""
    point = scored.under(np.ones((1, scored.a.size)))
    draws: dict[str, list[FloatArray]] = {name: [] for name in SCORE_NAMES}
    for weights in weight_chunks(scored.a.size, n_resamples, seed):
        for name, (first, second) in scored.under(weights).items():
            draws[name].append(second - first)  # NaN where either is undefined
    changes = []
    for name in SCORE_NAMES:
        a, b = _value(point[name][0]), _value(point[name][1])
        difference = None if a is None or b is None else b - a
        low, high = (None, None)
        if difference is not None:
            low, high = percentile_interval(np.concatenate(draws[name]), confidence_level)
        changes.append(
            ScoreChange(name, a, b, difference, low, high, _why(name, a, b, difference, low))
        )
    return tuple(changes)


def _why(
    name: str, a: float | None, b: float | None, difference: float | None, low: float | None
) -> str | None:
    """The reason a value of a score change is None, or None."""
    if a is None or b is None:
        which = "both labellings" if a is None and b is None else "the first labelling" if (
            a is None
        ) else "the second labelling"  # fmt: skip
        if name == "cohens_kappa_majority_vote":
            return (
                f"Cohen's kappa is undefined for {which}: with the majority, chance agreement is "
                "1 (one label only)"
            )
        return f"{name} is undefined for {which}: no item it labels has a human label"
    if difference is not None and low is None:
        return "the difference is undefined in every bootstrap resample"
    return None


def _ratio(top: FloatArray, bottom: FloatArray) -> FloatArray:
    """The elementwise ratio top / bottom, NaN where bottom is 0."""
    out = np.full(np.broadcast(top, bottom).shape, np.nan)
    np.divide(top, bottom, out=out, where=bottom > 0)
    return out


def _mean_defined(values: FloatArray) -> FloatArray:
    """Mean over the last axis of the non-NaN values; NaN where none is defined."""
    defined = ~np.isnan(values)
    count = defined.sum(axis=-1)
    total = np.where(defined, values, 0.0).sum(axis=-1)
    return _ratio(total, count.astype(np.float64))


def _value(values: FloatArray) -> float | None:
    """The single value of a (1,) array as a float, None when NaN."""
    value = float(values.reshape(-1)[0])
    return None if math.isnan(value) else value
