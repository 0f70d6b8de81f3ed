"""Wilson's interval and the exact binomial test against statsmodels and scipy."""

from __future__ import annotations

import re

import pytest
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.proportions import binomial_p_value, wilson_interval


@pytest.mark.parametrize(
    ("k", "n", "level"),
    [(0, 1, 0.95), (1, 1, 0.95), (8, 10, 0.95), (37, 120, 0.9), (500, 1000, 0.99), (0, 40, 0.8)],
)
def test_wilson_matches_statsmodels(k: int, n: int, level: float) -> None:
    low, high = proportion_confint(k, n, alpha=1 - level, method="wilson")
    assert wilson_interval(k, n, confidence_level=level) == pytest.approx((low, high), abs=1e-12)


@pytest.mark.parametrize(("k", "n", "p"), [(9, 10, 0.5), (0, 7, 0.5), (50, 100, 0.5), (3, 40, 0.2)])
def test_binomial_matches_scipy(k: int, n: int, p: float) -> None:
    expected = binomtest(k, n, p, alternative="two-sided").pvalue
    assert binomial_p_value(k, n, p=p) == pytest.approx(expected, abs=1e-15)


def test_no_trials_is_undefined() -> None:
    assert wilson_interval(0, 0) == (None, None)
    assert binomial_p_value(0, 0) is None


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: wilson_interval(3, 2), "successes must be in [0, 2]"),
        (lambda: wilson_interval(-1, 2), "successes must be in [0, 2]"),
        (lambda: wilson_interval(1, 2, confidence_level=1.0), "confidence_level"),
        (lambda: wilson_interval(1.5, 2), "successes must be an integer"),  # type: ignore[arg-type]
        (lambda: binomial_p_value(1, 2, p=0.0), "p must be in (0.0, 1.0)"),
    ],
)
def test_bad_arguments_are_named(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ScoringError, match=re.escape(message)):
        call()
