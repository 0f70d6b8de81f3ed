"""Intervals of proportions: how far a rate observed on a few items may be from the true one.

Also the exact binomial test of a proportion (position bias: is the first answer picked more
often than half the time?).

The report's per-group tables (selection rate, TPR, FPR per group, change rate per group,
accuracy per language) rest on counts of tens of items, where a rate alone overstates what is
known; the Wilson score interval says how much. It stays inside [0, 1] and behaves at 0 and n
successes, where the normal (Wald) interval collapses to a point.

References: Wilson, "Probable inference, the law of succession, and statistical inference",
JASA 22 (1927), doi:10.1080/01621459.1927.10502953; Brown, Cai & DasGupta, "Interval Estimation
for a Binomial Proportion", Statistical Science 16 (2001), doi:10.1214/ss/1009213286.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

import numpy as np
import numpy.typing as npt

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.checks import check_interval, check_same_length

__all__ = ["binomial_p_value", "wilson_interval", "wilson_intervals"]

FloatArray = npt.NDArray[np.float64]


def wilson_intervals(
    successes: Sequence[int] | npt.NDArray[Any],
    trials: Sequence[int] | npt.NDArray[Any],
    *,
    confidence_level: float = 0.95,
) -> tuple[FloatArray, FloatArray]:
    """Wilson score intervals of k_i successes in n_i trials, for many proportions at once.

    Formula: with p = k / n and z the standard normal quantile at 1 - (1 - confidence_level)
    / 2: centre = (p + z^2 / (2n)) / (1 + z^2 / n), half = z / (1 + z^2 / n) sqrt(p (1 - p) / n
    + z^2 / (4 n^2)); the interval is [centre - half, centre + half] (exactly 0 at k = 0 and
    1 at k = n).

    Args:
        successes: k per proportion, integers with 0 <= k <= n.
        trials: n per proportion, non-negative integers, same length.
        confidence_level: In (0, 1); 0.95 gives 95% intervals.

    Returns:
        (low, high): float arrays, one entry per proportion, each in [0, 1].

    Undefined: both ends are NaN where n = 0 (no trial: nothing is known).

    Raises:
        ScoringError: Lengths differ, a count that is not a non-negative integer, k > n, or
            confidence_level outside (0, 1).

    References:
        Wilson (1927), doi:10.1080/01621459.1927.10502953; statsmodels
        `proportion_confint(method="wilson")` gives the same interval.

    Example:
        >>> low, high = wilson_intervals([0, 5], [10, 10])
        >>> [round(float(x), 4) for x in low], [round(float(x), 4) for x in high]
        ([0.0, 0.2366], [0.2775, 0.7634])
    """
    function = "wilson_intervals"
    check_same_length(function, successes=successes, trials=trials)
    check_interval(function, "confidence_level", confidence_level, 0.0, 1.0)
    k = _counts(function, "successes", successes)
    n = _counts(function, "trials", trials)
    over = k > n
    if over.any():
        i = int(np.flatnonzero(over)[0])
        raise ScoringError(
            f"{function}: successes must not exceed trials; got {int(k[i])} successes in "
            f"{int(n[i])} trials at position {i}."
        )
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence_level) / 2.0)
    low = np.full(k.size, np.nan)
    high = np.full(k.size, np.nan)
    some = n > 0
    kk, nn = k[some].astype(np.float64), n[some].astype(np.float64)
    p = kk / nn
    scale = 1.0 + z * z / nn
    centre = (p + z * z / (2.0 * nn)) / scale
    half = z / scale * np.sqrt(p * (1.0 - p) / nn + z * z / (4.0 * nn * nn))
    # exact ends at k = 0 and k = n (the formula gives them up to rounding)
    low[some] = np.where(kk == 0, 0.0, np.clip(centre - half, 0.0, 1.0))
    high[some] = np.where(kk == nn, 1.0, np.clip(centre + half, 0.0, 1.0))
    return low, high


def wilson_interval(
    successes: int, trials: int, *, confidence_level: float = 0.95
) -> tuple[float, float] | None:
    """The Wilson score interval of `successes` in `trials` (one proportion).

    Formula: as `wilson_intervals`.

    Args:
        successes: k, an integer in [0, n].
        trials: n, a non-negative integer.
        confidence_level: In (0, 1).

    Returns:
        (low, high) in [0, 1], around k / n.

    Undefined: None when n = 0.

    Raises:
        ScoringError: As `wilson_intervals`.

    References:
        Wilson (1927), doi:10.1080/01621459.1927.10502953.

    Example:
        >>> low, high = wilson_interval(8, 10)
        >>> round(low, 4), round(high, 4)
        (0.4902, 0.9433)
        >>> wilson_interval(0, 0) is None
        True
    """
    low, high = wilson_intervals([successes], [trials], confidence_level=confidence_level)
    if math.isnan(low[0]):
        return None
    return float(low[0]), float(high[0])


def binomial_p_value(successes: int, trials: int, *, p: float = 0.5) -> float | None:
    """Two-sided exact binomial test of k successes in n trials against the proportion p.

    Formula: the sum of P(X = i) over every i with P(X = i) <= P(X = k), X ~ Binomial(n, p)
    (the "minlike" two-sided p-value scipy's `binomtest` computes).

    Args:
        successes: k, 0 <= k <= n.
        trials: n >= 0.
        p: The proportion under the null hypothesis, in (0, 1).

    Returns:
        The p-value in [0, 1]: small when k is far from n p.

    Undefined: None when n = 0.

    Raises:
        ScoringError: Counts that are not whole numbers with 0 <= k <= n, or p outside (0, 1).

    References:
        Clopper & Pearson (1934); scipy.stats.binomtest.

    Example:
        >>> round(binomial_p_value(9, 10), 4)
        0.0215
    """
    function = "binomial_p_value"
    check_interval(function, "trials", trials, 0, math.inf, closed="left", integer=True)
    check_interval(function, "successes", successes, 0, trials, closed="both", integer=True)
    check_interval(function, "p", p, 0.0, 1.0)
    if trials == 0:
        return None
    from scipy.stats import binomtest  # type: ignore[import-untyped]

    return float(binomtest(successes, trials, p, alternative="two-sided").pvalue)


def _counts(function: str, name: str, values: Sequence[Any] | npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Counts as an int64 array; raise naming the first that is not a non-negative integer."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise ScoringError(f"{function}: {name} must be one count per proportion (a flat list).")
    if array.size == 0:
        return array.astype(np.int64)
    if array.dtype.kind in "iu":
        bad = array < 0
    else:
        bad = np.array(
            [isinstance(v, bool | np.bool_) or not isinstance(v, int | np.integer) or v < 0
             for v in array.tolist()],
            dtype=bool,
        )  # fmt: skip
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        shown = array[i].item() if isinstance(array[i], np.generic) else array[i]
        raise ScoringError(
            f"{function}: {name} must hold non-negative integers; got {shown!r} at position {i}."
        )
    return array.astype(np.int64)
