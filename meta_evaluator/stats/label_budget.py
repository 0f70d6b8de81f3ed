"""How many human labels a study needs: the alt-test's power for designs of items x annotators.

From a pilot (a judge's labels and a few annotators' labels of the same items), each design is
simulated by resampling: `items` items drawn with replacement from the pilot's, and `annotators`
of the pilot's annotators drawn without replacement (a design cannot have more annotators than
the pilot). On each simulated study the alt-test runs exactly as `stats.alt_test` does
(accuracy scoring: categorical labels); its power is the share of studies it passes. The
spread of Cohen's kappa (judge against the annotators' majority) across the studies says how
wide a kappa interval that design would give.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.checks import check_interval, encode_labels
from meta_evaluator.stats.majority import majority_of_counts

__all__ = ["Design", "LabelPlan", "plan_labels"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

#: Item counts tried by default (those up to twice the pilot's, and the pilot's own).
ITEM_GRID = (30, 50, 100, 150, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000)


@dataclass(frozen=True)
class Design:
    """One study design and what simulating it gave."""

    items: int
    annotators: int
    power: float
    """Share of the simulated studies the alt-test passed."""
    kappa_width: float | None
    """The central 95% range of Cohen's kappa (judge vs. the annotators' majority) across the
    simulated studies: about the width of a 95% interval such a study reports; None where
    kappa was never defined."""

    @property
    def labels(self) -> int:
        """Human labels the design needs (every annotator labels every item)."""
        return self.items * self.annotators

    def as_dict(self) -> dict[str, Any]:
        """The design as JSON-ready values."""
        return {
            "items": self.items,
            "annotators": self.annotators,
            "labels": self.labels,
            "power": self.power,
            "kappa_width": self.kappa_width,
        }


@dataclass(frozen=True)
class LabelPlan:
    """The designs simulated, and the smallest one that reaches the target power."""

    designs: tuple[Design, ...]
    chosen: Design | None
    """The design with the fewest labels (then the fewest annotators) whose power reaches
    `target_power`; None when none does."""
    target_power: float
    epsilon: float
    simulations: int
    seed: int
    pilot_items: int
    pilot_annotators: int

    def as_dict(self) -> dict[str, Any]:
        """The plan as JSON-ready values."""
        return {
            "chosen": None if self.chosen is None else self.chosen.as_dict(),
            "target_power": self.target_power,
            "epsilon": self.epsilon,
            "simulations": self.simulations,
            "seed": self.seed,
            "pilot_items": self.pilot_items,
            "pilot_annotators": self.pilot_annotators,
            "designs": [d.as_dict() for d in self.designs],
        }


def plan_labels(
    judge_labels: Sequence[Any],
    human_labels: Sequence[Sequence[Any]],
    *,
    items_grid: Sequence[int] | None = None,
    annotators_grid: Sequence[int] | None = None,
    epsilon: float = 0.2,
    multiplicative_epsilon: bool = False,
    q_fdr: float = 0.05,
    min_instances_per_human: int = 30,
    min_humans_per_instance: int = 2,
    target_power: float = 0.8,
    simulations: int = 200,
    seed: int = 0,
) -> LabelPlan:
    """Simulate the alt-test's power for a grid of designs from a pilot; pick the smallest.

    Procedure: for each design (n items, m annotators) and each of `simulations` studies,
    draw n pilot items with replacement (among those the judge labelled) and m distinct pilot
    annotators; run the alt-test (METRICS.md C, accuracy scoring: an instance is kept with a
    judge label and at least `min_humans_per_instance` labels of the m; annotators with fewer
    than `min_instances_per_human` kept instances are not tested; one-sided t-test per
    annotator; Benjamini-Yekutieli at `q_fdr`; passed iff the winning rate at `epsilon` is at
    least 0.5; a study where nobody can be tested fails). power = passed studies / studies.
    kappa_width = P97.5 - P2.5 of Cohen's kappa of the judge against the m annotators'
    per-item majority (ties to the largest label) over the studies.

    Args:
        judge_labels: The judge's label per pilot item (None: not labelled).
        human_labels: Annotators x items labels (None: not labelled), the items aligned with
            `judge_labels`.
        items_grid: Item counts to try (default: `ITEM_GRID` up to twice the pilot's items,
            and the pilot's count).
        annotators_grid: Annotator counts to try (default: 2 to the pilot's annotators).
        epsilon: The alt-test's cost-benefit margin, in [0, 1).
        multiplicative_epsilon: Test rho^f > (1 - epsilon) rho^h instead.
        q_fdr: Benjamini-Yekutieli's false discovery rate, in (0, 1).
        min_instances_per_human: Annotators with fewer kept instances are not tested.
        min_humans_per_instance: Instances with fewer human labels are dropped (>= 2).
        target_power: The power a design must reach, in (0, 1).
        simulations: Studies simulated per design (>= 10).
        seed: Of every draw: one seed gives the same plan.

    Returns:
        A `LabelPlan`: every design's power and kappa width, and the chosen design (fewest
        labels, then fewest annotators) or None.

    Raises:
        ScoringError: Labels not aligned, fewer than two annotators or no judged item in the
            pilot, a grid value outside what the pilot allows, or a setting out of range.

    References:
        Calderon, Reichart & Dror (2025), arXiv:2501.10970 (the alt-test; their power
        discussion); Efron & Tibshirani (1993), the bootstrap; METRICS.md C.

    Example:
        >>> judge = ["a", "b"] * 50
        >>> humans = [judge, judge, judge]
        >>> plan = plan_labels(judge, humans, items_grid=[40, 100], annotators_grid=[3],
        ...                    simulations=20)
        >>> plan.chosen.items, plan.chosen.annotators, plan.chosen.power
        (40, 3, 1.0)
    """
    function = "plan_labels"
    check_interval(function, "epsilon", epsilon, 0.0, 1.0, closed="left")
    check_interval(function, "q_fdr", q_fdr, 0.0, 1.0)
    check_interval(function, "target_power", target_power, 0.0, 1.0)
    check_interval(function, "simulations", simulations, 10, math.inf, closed="left", integer=True)
    check_interval(function, "min_instances_per_human", min_instances_per_human, 1, math.inf,
                   closed="left", integer=True)  # fmt: skip
    check_interval(function, "min_humans_per_instance", min_humans_per_instance, 2, math.inf,
                   closed="left", integer=True)  # fmt: skip
    judge, humans = _codes(function, judge_labels, human_labels)
    judged = np.nonzero(judge >= 0)[0]
    if judged.size == 0:
        raise ScoringError(f"{function}: the judge labelled none of the pilot's items.")
    n_humans = humans.shape[1]
    if n_humans < 2:
        raise ScoringError(f"{function}: the pilot needs at least two annotators; got {n_humans}.")
    annotators = list(annotators_grid or range(2, n_humans + 1))
    for m in annotators:
        check_interval(function, "annotators_grid", m, 2, n_humans, closed="both", integer=True)
    pilot = int(judged.size)
    items = sorted(set(items_grid or [n for n in ITEM_GRID if n <= 2 * pilot] + [pilot]))
    for n in items:
        check_interval(function, "items_grid", n, 1, math.inf, closed="left", integer=True)
    settings = _Settings(epsilon, multiplicative_epsilon, q_fdr, min_instances_per_human,
                         min_humans_per_instance)  # fmt: skip
    designs = []
    for m in annotators:
        for n in items:
            rng = np.random.default_rng([seed, n, m])
            passed, kappas = _simulate(rng, judge[judged], humans[judged], n, m, simulations,
                                       settings)  # fmt: skip
            defined = kappas[~np.isnan(kappas)]
            width = (
                float(np.percentile(defined, 97.5) - np.percentile(defined, 2.5))
                if defined.size
                else None
            )
            designs.append(Design(n, m, float(passed.mean()), width))
    reaching = [d for d in designs if d.power >= target_power]
    chosen = min(reaching, key=lambda d: (d.labels, d.annotators)) if reaching else None
    return LabelPlan(tuple(designs), chosen, float(target_power), float(epsilon), simulations,
                     seed, pilot, n_humans)  # fmt: skip


@dataclass(frozen=True)
class _Settings:
    epsilon: float
    multiplicative: bool
    q_fdr: float
    min_instances: int
    min_humans: int


def _codes(
    function: str, judge_labels: Sequence[Any], human_labels: Sequence[Sequence[Any]]
) -> tuple[IntArray, IntArray]:
    """Judge codes (items,) and human codes (items, annotators) on one category list."""
    n = len(judge_labels)
    for j, row in enumerate(human_labels):
        if len(row) != n:
            raise ScoringError(
                f"{function}: annotator {j} has {len(row)} labels, the judge {n}; align them "
                "on the same items."
            )
    codes, _ = encode_labels(list(judge_labels), *[list(r) for r in human_labels])
    humans = np.column_stack(codes[1:]) if len(codes) > 1 else np.empty((n, 0), np.int64)
    return codes[0], humans


def _simulate(
    rng: np.random.Generator,
    judge: IntArray,
    humans: IntArray,
    n: int,
    m: int,
    studies: int,
    settings: _Settings,
) -> tuple[npt.NDArray[np.bool_], FloatArray]:
    """Whether each simulated study passes the alt-test, and its kappa."""
    items = rng.integers(0, judge.size, size=(studies, n))
    chosen = np.argsort(rng.random((studies, humans.shape[1])), axis=1)[:, :m]
    return _studies(judge, humans, items, chosen, settings)


def _studies(
    judge: IntArray, humans: IntArray, items: IntArray, chosen: IntArray, settings: _Settings
) -> tuple[npt.NDArray[np.bool_], FloatArray]:
    """The alt-test's verdict and kappa of each study.

    Study s has the pilot items `items[s]` (indices, with repeats), labelled by the pilot
    annotators `chosen[s]`. What an item contributes to a study depends only on the item and
    on the set of annotators, so each item's figures are worked out once per set
    (`_per_item`), and a study's sums are its draw counts times them: one matrix product per
    set of annotators, not a pass over every drawn item.
    """
    studies = items.shape[0]
    pilot = judge.size
    k = int(max(humans.max(initial=-1), judge.max(initial=-1))) + 1
    # counts[s, i]: how often study s drew pilot item i
    flat = (np.arange(studies)[:, None] * pilot + items).ravel()
    drawn = np.bincount(flat, minlength=studies * pilot).reshape(studies, pilot)
    counts: FloatArray = drawn.astype(np.float64)
    members, group = np.unique(np.sort(chosen, axis=1), axis=0, return_inverse=True)
    group = group.ravel()
    passed = np.zeros(studies, dtype=np.bool_)
    kappas = np.full(studies, np.nan)
    for index, subset in enumerate(members):
        at = np.flatnonzero(group == index)
        d, rows, cell = _per_item(judge, humans[:, subset], k, settings)
        passed[at] = _alt_test_passes(counts[at], d, rows, settings)
        kappas[at] = _kappas(counts[at], cell, k)
    return passed, kappas


def _per_item(
    judge: IntArray, labels: IntArray, k: int, settings: _Settings
) -> tuple[FloatArray, npt.NDArray[np.bool_], IntArray]:
    """Per pilot item, for one set of annotators (`labels`: items x its annotators).

    Returns d (items x annotators: W^h - W^f, or W^h - W^f / (1 - epsilon)), whether the item
    counts for that annotator (kept, and labelled by it), and the cell of the judge's label
    and the annotators' majority in a k x k confusion matrix (-1 without both).
    """
    present = labels >= 0
    # votes[i, c]: annotators of the set who gave item i label c
    votes = (labels[..., None] == np.arange(k)).sum(axis=1, dtype=np.int32)
    own = np.take_along_axis(votes, np.maximum(labels, 0), axis=1)  # j's label's votes, j too
    agree_h = own - 1  # the others who gave j's label
    with_llm = (labels == judge[:, None]) & present
    at_llm = np.take_along_axis(votes, np.maximum(judge, 0)[:, None], axis=1)
    agree_llm = at_llm - with_llm  # the others who gave the LLM's label
    kept = present.sum(axis=1) >= settings.min_humans
    rows = kept[:, None] & present
    w_f = (agree_llm >= agree_h).astype(np.float64)
    w_h = (agree_h >= agree_llm).astype(np.float64)
    d = w_h - w_f / (1.0 - settings.epsilon) if settings.multiplicative else w_h - w_f
    majority = majority_of_counts(votes)  # the humans' majority rule: ties to the largest label
    cell = np.where((majority >= 0) & (judge >= 0), judge * k + majority, -1)
    return d, rows, cell


def _alt_test_passes(
    counts: FloatArray, d: FloatArray, rows: npt.NDArray[np.bool_], settings: _Settings
) -> npt.NDArray[np.bool_]:
    """Per study: one-sided t-tests per annotator, Benjamini-Yekutieli, winning rate >= 0.5.

    `counts[s, i]`: draws of item i in study s; `d`, `rows`: items x annotators.
    """
    from scipy.special import stdtr  # type: ignore[import-untyped]

    value = 0.0 if settings.multiplicative else settings.epsilon
    # d takes a few values (W^h, W^f in {0, 1}): per value, how often each study drew it for
    # each annotator; every sum below is then exact over the values, with no items x studies
    # x annotators array
    levels = np.unique(d[rows])
    drawn = [counts @ (rows & (d == level)).astype(np.float64) for level in levels]
    count = sum(drawn, np.zeros((counts.shape[0], d.shape[1])))  # studies x m
    total = sum((level * n for level, n in zip(levels, drawn, strict=True)), np.zeros_like(count))
    mean = np.divide(total, count, out=np.zeros_like(total), where=count > 0)
    squares = sum(
        (n * (level - mean) ** 2 for level, n in zip(levels, drawn, strict=True)),
        np.zeros_like(count),
    )
    variance = np.divide(squares, count - 1, out=np.zeros_like(squares), where=count > 1)
    constant = variance <= 1e-24
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = (mean - value) / np.sqrt(variance / count)
        p = stdtr(np.maximum(count - 1, 1), stat)
    p = np.where(constant, np.where(mean < value, 0.0, np.where(mean > value, 1.0, np.nan)), p)
    tested = count >= settings.min_instances
    p = np.where(tested & (count >= 2), p, np.nan)
    m_tested = tested.sum(axis=1)
    # Benjamini-Yekutieli per study over its tested annotators (NaN p-values never rejected)
    ordered = np.sort(np.where(tested & ~np.isnan(p), p, np.inf), axis=1)
    ranks = np.arange(1, p.shape[1] + 1)[None, :]
    harmonic = np.array([sum(1.0 / k for k in range(1, t + 1)) if t else 1.0 for t in
                         range(p.shape[1] + 1)])[m_tested]  # fmt: skip
    limit = ranks / np.maximum(m_tested, 1)[:, None] * settings.q_fdr / harmonic[:, None]
    below = (ordered <= limit) & (ranks <= m_tested[:, None])
    rejected = np.where(below.any(axis=1), p.shape[1] - np.argmax(below[:, ::-1], axis=1), 0)
    passed: npt.NDArray[np.bool_] = (m_tested > 0) & (rejected >= 0.5 * m_tested)
    return passed


def _kappas(counts: FloatArray, cell: IntArray, k: int) -> FloatArray:
    """Cohen's kappa of the judge against the annotators' majority, per study.

    `counts[s, i]`: draws of item i in study s; `cell[i]`: item i's cell of the k x k
    confusion matrix (judge label x majority), -1 without both.
    """
    studies = counts.shape[0]
    if k == 0:
        return np.full(studies, np.nan)
    has = cell >= 0
    onehot = np.zeros((cell.size, k * k))
    onehot[np.flatnonzero(has), cell[has]] = 1.0
    confusion = (counts @ onehot).reshape(studies, k, k)
    total = confusion.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = np.trace(confusion, axis1=1, axis2=2) / total
        expected = (confusion.sum(axis=2) * confusion.sum(axis=1)).sum(axis=1) / total**2
        kappa = (observed - expected) / (1.0 - expected)
    return np.where((total > 0) & (expected < 1.0 - 1e-12), kappa, np.nan)
