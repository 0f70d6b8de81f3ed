"""`meta_evaluator.stats.proportions` against statsmodels' `proportion_confint(method="wilson")`
(an independent implementation) and against Wilson's formula worked by hand."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.proportions import binomial_p_value, wilson_interval, wilson_intervals


@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99])
def test_wilson_equals_statsmodels(level: float) -> None:
    """Random counts, including k = 0 and k = n, at several levels: statsmodels' values."""
    rng = random.Random(int(level * 100))
    trials = [rng.randint(1, 400) for _ in range(300)] + [1, 7, 7, 50]
    successes = [rng.randint(0, n) for n in trials[:-4]] + [0, 0, 7, 50]
    low, high = wilson_intervals(successes, trials, confidence_level=level)
    for i, (k, n) in enumerate(zip(successes, trials, strict=True)):
        ref_low, ref_high = proportion_confint(k, n, alpha=1 - level, method="wilson")
        assert low[i] == pytest.approx(ref_low, abs=1e-12), (k, n)
        assert high[i] == pytest.approx(ref_high, abs=1e-12), (k, n)
        assert 0.0 <= low[i] <= k / n <= high[i] <= 1.0


def test_wilson_by_hand() -> None:
    """k = 8, n = 10, z = 1.959964 (z² = 3.841459): centre (0.8 + z²/20) / (1 + z²/10) =
    0.992073 / 1.384146 = 0.716740, half-width z / (1 + z²/10) * sqrt(0.016 + z²/400) =
    1.415996 * 0.160011 = 0.226578."""
    z = 1.959963984540054
    centre = (0.8 + z * z / 20) / (1 + z * z / 10)
    half = z / (1 + z * z / 10) * math.sqrt(0.8 * 0.2 / 10 + z * z / 400)
    assert centre == pytest.approx(0.716740, abs=1e-6)
    assert half == pytest.approx(0.226578, abs=1e-6)
    assert wilson_interval(8, 10) == pytest.approx((centre - half, centre + half), abs=1e-12)


def test_no_trial_is_undefined() -> None:
    assert wilson_interval(0, 0) is None
    low, high = wilson_intervals([0, 1], [0, 2])
    assert math.isnan(low[0]) and math.isnan(high[0])
    assert not math.isnan(low[1])


def test_empty_input_gives_empty_arrays() -> None:
    low, high = wilson_intervals([], [])
    assert low.size == 0 and high.size == 0


def test_numpy_counts_are_accepted() -> None:
    low, _ = wilson_intervals(np.array([3], dtype=np.int32), np.array([9], dtype=np.uint16))
    assert low[0] == pytest.approx(proportion_confint(3, 9, method="wilson")[0], abs=1e-12)


@pytest.mark.parametrize(
    ("successes", "trials", "level", "message"),
    [
        ([1, 2], [3], 0.95, r"same length; successes has 2, trials has 1"),
        ([4], [3], 0.95, r"successes must not exceed trials; got 4 successes in 3 trials"),
        ([-1], [3], 0.95, r"successes must hold non-negative integers; got -1 at position 0"),
        ([1.5], [3], 0.95, r"successes must hold non-negative integers; got 1\.5"),
        ([True], [3], 0.95, r"successes must hold non-negative integers; got True"),
        ([1], ["3"], 0.95, r"trials must hold non-negative integers; got '3'"),
        ([1], [3], 1.0, r"confidence_level must be in \(0\.0, 1\.0\); got 1\.0"),
    ],
)
def test_bad_input_is_a_scoring_error(
    successes: list[object], trials: list[object], level: float, message: str
) -> None:
    with pytest.raises(ScoringError, match=message):
        wilson_intervals(successes, trials, confidence_level=level)  # type: ignore[arg-type]


@pytest.mark.parametrize(("k", "n", "p"), [(9, 10, 0.5), (0, 7, 0.5), (50, 100, 0.5), (3, 40, 0.2)])
def test_binomial_matches_scipy(k: int, n: int, p: float) -> None:
    expected = binomtest(k, n, p, alternative="two-sided").pvalue
    assert binomial_p_value(k, n, p=p) == pytest.approx(expected, abs=1e-15)


def test_binomial_without_trials_is_undefined_and_bad_arguments_are_named() -> None:
    assert binomial_p_value(0, 0) is None
    with pytest.raises(ScoringError, match=r"successes must be in \[0, 2\]"):
        binomial_p_value(3, 2)
    with pytest.raises(ScoringError, match=r"p must be in \(0.0, 1.0\)"):
        binomial_p_value(1, 2, p=0.0)
