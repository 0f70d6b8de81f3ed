"""A proportion's confidence interval and exact test: Wilson's score interval, the binomial test.

Pure: counts in, numbers out. Undefined values (no trials) are None.
"""

from __future__ import annotations

import math

from meta_evaluator.stats.checks import check_interval

__all__ = ["binomial_p_value", "wilson_interval"]


def wilson_interval(
    successes: int, trials: int, *, confidence_level: float = 0.95
) -> tuple[float | None, float | None]:
    """Wilson's score interval for a binomial proportion.

    Formula: with p = k / n and z the standard normal's 1 - (1 - confidence_level) / 2 quantile,
    centre = (p + z^2 / 2n) / (1 + z^2 / n),
    half = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / 4n^2); the interval is
    [centre - half, centre + half], always inside [0, 1].

    Args:
        successes: k, 0 <= k <= n.
        trials: n >= 0.
        confidence_level: In (0, 1).

    Returns:
        (low, high) in [0, 1].

    Undefined: (None, None) when n = 0.

    Raises:
        ScoringError: Counts that are not whole numbers with 0 <= k <= n, or a level outside
            (0, 1).

    References:
        Wilson (1927), doi:10.1080/01621459.1927.10502953; as statsmodels
        `proportion_confint(method="wilson")`.

    Example:
        >>> [round(v, 4) for v in wilson_interval(8, 10)]
        [0.4902, 0.9433]
    """
    function = "wilson_interval"
    check_interval(function, "trials", trials, 0, math.inf, closed="left", integer=True)
    check_interval(function, "successes", successes, 0, trials, closed="both", integer=True)
    check_interval(function, "confidence_level", confidence_level, 0.0, 1.0)
    if trials == 0:
        return None, None
    from scipy.special import ndtri  # type: ignore[import-untyped]

    z = float(ndtri(1.0 - (1.0 - confidence_level) / 2.0))
    p = successes / trials
    denominator = 1.0 + z * z / trials
    centre = (p + z * z / (2.0 * trials)) / denominator
    half = z / denominator * math.sqrt(p * (1.0 - p) / trials + z * z / (4.0 * trials * trials))
    return max(0.0, centre - half), min(1.0, centre + half)


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
