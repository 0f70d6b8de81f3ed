"""Position bias: hand-counted cases, and synthetic judges built to have (or lack) the bias."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.position import debiased_labels, position_bias


def test_counts_by_hand() -> None:
    picked = ["first", "first", "second", "first", None, "second", "first"]
    swapped = ["second", "first", "first", "first", "first", "second", None]
    found = position_bias(picked, swapped)
    # usable both ways: rows 0-3 and 5; consistent: rows 0 and 2; first both: rows 1 and 3;
    # second both: row 5
    assert (found["rows"], found["pairs"], found["consistent"]) == (7, 5, 2)
    assert (found["first_both"], found["second_both"]) == (2, 1)
    assert (found["answers"], found["first_answers"]) == (10, 6)
    assert found["consistency_rate"] == pytest.approx(2 / 5)
    assert found["first_position_rate"] == pytest.approx(6 / 10)
    # the test and the interval rest on rows: 2 of the 3 inconsistent rows picked first twice
    low, high = proportion_confint(2, 3, method="wilson")
    assert found["inconsistent_first_share"] == pytest.approx(2 / 3)
    assert found["inconsistent_first_interval"] == pytest.approx((low, high))
    mapped = (0.5 + 3 * (2 * low - 1) / 10, 0.5 + 3 * (2 * high - 1) / 10)
    assert found["first_position_interval"] == pytest.approx(mapped)
    assert found["p_value"] == pytest.approx(binomtest(2, 3, 0.5).pvalue)


def test_a_judge_without_net_preference_that_repeats_its_position_is_not_flagged() -> None:
    """Each pair picks the same position both times, first or second at random: no net
    preference (rate 1/2), but its two answers move together. Counted per answer, a test
    rejects far above its level; counted per pair it keeps it (a code review found 14% at 5%).
    """
    rng = np.random.default_rng(12)
    rejected = covered = 0
    studies = 400
    for _ in range(studies):
        side = np.where(rng.random(100) < 0.5, "first", "second")
        found = position_bias(list(side), list(side))
        rejected += found["p_value"] < 0.05
        low, high = found["first_position_interval"]
        covered += low <= 0.5 <= high
    assert rejected / studies <= 0.07
    assert covered / studies >= 0.93


def test_no_usable_pair_is_undefined() -> None:
    found = position_bias(["first", None], [None, "second"])
    assert found["pairs"] == 0
    assert found["consistency_rate"] is None and found["first_position_rate"] is None
    assert found["first_position_interval"] == (None, None) and found["p_value"] is None


def simulate(rows: int, first_bias: float, accuracy: float, seed: int) -> tuple[list, list]:
    """A judge that picks the first position with probability `first_bias` (in each order,
    whatever the answers), else the better answer with probability `accuracy`."""
    rng = np.random.default_rng(seed)
    better_first = rng.random(rows) < 0.5  # where the better answer is in the original order

    def answer(better_is_first: np.ndarray) -> list[str]:
        by_position = rng.random(rows) < first_bias
        right = rng.random(rows) < accuracy
        content = np.where(right == better_is_first, "first", "second")
        return list(np.where(by_position, "first", content))

    return answer(better_first), answer(~better_first)


def test_a_judge_preferring_the_first_position_is_caught() -> None:
    picked, swapped = simulate(400, first_bias=0.6, accuracy=0.9, seed=1)
    found = position_bias(picked, swapped)
    # picks first with 0.6 + 0.4 * 0.5 = 0.8 of its answers
    assert found["first_position_rate"] == pytest.approx(0.8, abs=0.03)
    assert found["p_value"] < 1e-6
    assert found["first_position_interval"][0] > 0.5
    assert found["first_both"] > 10 * found["second_both"]


def test_its_clean_twin_is_not() -> None:
    picked, swapped = simulate(400, first_bias=0.0, accuracy=0.9, seed=1)
    found = position_bias(picked, swapped)
    assert found["first_position_rate"] == pytest.approx(0.5, abs=0.03)
    assert found["p_value"] > 0.05
    low, high = found["first_position_interval"]
    assert low < 0.5 < high
    assert found["consistency_rate"] == pytest.approx(0.9**2 + 0.1**2, abs=0.05)


def test_debiased_labels_keep_agreed_winners_and_tie_the_rest() -> None:
    picked = ["first", "second", "first", "second", None]
    swapped = ["second", "first", "first", "second", "first"]
    assert debiased_labels(picked, swapped) == ["first", "second", "tie", "tie", None]


@pytest.mark.parametrize(
    ("picked", "swapped", "message"),
    [
        (["first"], ["first", "second"], "same length"),
        (["A"], ["first"], r"picked\[0\] must be 'first', 'second' or None; got 'A'"),
        (["first"], ["left"], r"picked_swapped\[0\]"),
    ],
)
def test_bad_input_is_named(picked: list, swapped: list, message: str) -> None:
    with pytest.raises(ScoringError, match=message):
        position_bias(picked, swapped)
