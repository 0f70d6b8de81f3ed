"""Label drift against scipy and statsmodels, by hand, and on judges built to drift or not."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2_contingency
from statsmodels.stats.contingency_tables import SquareTable

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.drift import label_shift, population_stability_index

LABELS = ["no", "unsure", "yes"]


def runs(rows: int, shift_share: float, seed: int) -> tuple[list, list]:
    """Two runs over the same rows: the second re-answers each row at random with prob. 0.05
    (noise), and on `shift_share` of the rows answers "yes" whatever it said (drift)."""
    rng = np.random.default_rng(seed)
    first = list(rng.choice(LABELS, rows, p=[0.5, 0.2, 0.3]))
    second = []
    for label in first:
        if rng.random() < shift_share:
            second.append("yes")
        elif rng.random() < 0.05:
            second.append(str(rng.choice(LABELS)))
        else:
            second.append(label)
    return first, second


def square(before: list, after: list) -> np.ndarray:
    table = np.zeros((3, 3))
    for a, b in zip(before, after, strict=True):
        if a is not None and b is not None:
            table[LABELS.index(a), LABELS.index(b)] += 1
    return table


def test_the_tests_match_scipy_and_statsmodels() -> None:
    before, after = runs(300, 0.2, seed=2)
    before[3], after[7] = None, None
    found = label_shift(before, after)
    table = square(before, after)
    chi, p, df, _ = chi2_contingency(np.vstack([table.sum(1), table.sum(0)]), correction=False)
    assert (found["chi_square"], found["chi_square_p_value"], found["chi_square_df"]) == (
        pytest.approx(chi), pytest.approx(p), df,
    )  # fmt: skip
    homogeneity = SquareTable(table, shift_zeros=False).homogeneity()
    assert found["stuart_maxwell"] == pytest.approx(homogeneity.statistic)
    assert found["stuart_maxwell_p_value"] == pytest.approx(homogeneity.pvalue)
    assert found["stuart_maxwell_df"] == homogeneity.df
    assert found["rows"] == 298
    assert found["changed"] == int(298 - np.trace(table))


def test_psi_by_hand() -> None:
    p, q = np.array([0.5, 0.2, 0.3]), np.array([0.3, 0.2, 0.5])
    expected = float(((q - p) * np.log(q / p)).sum())
    assert population_stability_index([50, 20, 30], [30, 20, 50]) == pytest.approx(expected)
    floor = 1e-4
    zero = population_stability_index([10, 0], [5, 5])
    p0, q0 = np.array([1.0, floor]), np.array([0.5, 0.5])
    assert zero == pytest.approx(float(((q0 - p0) * np.log(q0 / p0)).sum()))
    assert population_stability_index([1, 2], [1, 2]) == 0.0
    assert population_stability_index([0, 0], [1, 2]) is None


def test_a_judge_that_shifts_half_its_rows_is_caught_and_its_twin_is_not() -> None:
    drifted = label_shift(*runs(400, 0.5, seed=9))
    steady = label_shift(*runs(400, 0.0, seed=9))
    assert drifted["psi"] > 0.25 and drifted["stuart_maxwell_p_value"] < 1e-6
    assert drifted["changed_share"] > 0.3
    assert steady["psi"] < 0.1 and steady["stuart_maxwell_p_value"] > 0.05
    assert steady["changed_share"] < 0.06


def test_undefined_cases() -> None:
    empty = label_shift([None, "a"], ["b", None])
    assert empty["rows"] == 0 and empty["changed_share"] is None and empty["psi"] is None
    assert empty["chi_square"] is None
    one = label_shift(["a", "a"], ["a", "a"])
    assert one["chi_square"] is None and one["psi"] == 0.0 and one["changed_share"] == 0.0
    kept = label_shift(["a", "b"], ["a", "b"])  # nothing changed: S is singular
    assert kept["stuart_maxwell"] is None and kept["chi_square"] == 0.0


def test_inputs_of_different_lengths() -> None:
    with pytest.raises(ScoringError, match="same length"):
        label_shift(["a"], ["a", "b"])


def test_a_label_no_row_moved_leaves_the_test_of_the_others() -> None:
    """Review: c was kept on every row, which made S singular and hid a real change of a/b."""
    found = label_shift(["a", "a", "b", "b", "c", "c"], ["b", "b", "a", "b", "c", "c"])
    expected = SquareTable(np.array([[0.0, 2.0], [1.0, 1.0]]), shift_zeros=False).homogeneity()
    assert found["stuart_maxwell"] == pytest.approx(expected.statistic)
    assert found["stuart_maxwell_p_value"] == pytest.approx(expected.pvalue)
    assert found["stuart_maxwell_df"] == expected.df == 1
    assert found["changed"] == 3


def test_psi_refuses_what_are_no_counts() -> None:
    with pytest.raises(ScoringError, match="counts_before must be counts"):
        population_stability_index([-1, 2], [1, 1])
    with pytest.raises(ScoringError, match="counts_after must be counts"):
        population_stability_index([1, 2], [1, float("nan")])
