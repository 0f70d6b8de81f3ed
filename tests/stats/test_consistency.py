"""Self-consistency against statsmodels, krippendorff and hand counts; synthetic judges."""

from __future__ import annotations

import itertools

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.bootstrap import resample_indices
from meta_evaluator.stats.consistency import (
    SCORES,
    majority_labels,
    self_consistency,
    self_consistency_statistic,
)

LABELS = ["yes", "no", "unsure"]


def judge(rows: int, k: int, flip: float, seed: int, missing: float = 0.0) -> list[list]:
    """k answers per row: each repeats the row's own answer, or is random with prob. `flip`."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, rows)
    out = []
    for i in range(rows):
        answers: list = []
        for _ in range(k):
            code = rng.integers(0, 3) if rng.random() < flip else truth[i]
            answers.append(None if rng.random() < missing else LABELS[code])
        out.append(answers)
    return out


def hand_flip_rate(samples: list[list]) -> float:
    rates = []
    for row in samples:
        given = [v for v in row if v is not None]
        if len(given) < 2:
            continue
        pairs = list(itertools.combinations(given, 2))
        rates.append(sum(a != b for a, b in pairs) / len(pairs))
    return float(np.mean(rates))


def test_scores_match_the_references() -> None:
    samples = judge(200, 5, flip=0.3, seed=4, missing=0.1)
    found = self_consistency(samples, n_resamples=0)
    complete = [r for r in samples if all(v is not None for v in r)]
    codes = np.array([[LABELS.index(v) for v in r] for r in complete])
    assert found["fleiss_kappa"] == pytest.approx(fleiss_kappa(aggregate_raters(codes)[0]))
    coded = np.array(
        [[np.nan if v is None else LABELS.index(v) for v in r] for r in samples], dtype=float
    ).T
    expected_alpha = krippendorff.alpha(reliability_data=coded, level_of_measurement="nominal")
    assert found["krippendorff_alpha"] == pytest.approx(expected_alpha)
    assert found["flip_rate"] == pytest.approx(hand_flip_rate(samples))
    used = [[v for v in r if v is not None] for r in samples]
    used = [r for r in used if len(r) >= 2]
    assert found["unanimous_share"] == pytest.approx(np.mean([len(set(r)) == 1 for r in used]))
    assert (found["rows"], found["rows_used"], found["complete_rows"]) == (
        200, len(used), len(complete),
    )  # fmt: skip


def test_intervals_are_a_direct_resampling_loop() -> None:
    samples = judge(60, 3, flip=0.4, seed=2)
    found = self_consistency(samples, n_resamples=200, seed=7)
    draws = resample_indices(60, 200, seed=7)
    for name in SCORES:
        values = [self_consistency([samples[i] for i in d], n_resamples=0)[name] for d in draws]
        defined = np.array([v for v in values if v is not None])
        expected = np.percentile(defined, [2.5, 97.5])
        assert found["intervals"][name] == pytest.approx(tuple(expected), abs=1e-12), name


def test_a_judge_that_flips_30_percent_is_caught_and_its_twin_is_not() -> None:
    flipping = self_consistency(judge(300, 4, flip=0.3, seed=1), n_resamples=300)
    steady = self_consistency(judge(300, 4, flip=0.0, seed=1), n_resamples=300)
    assert steady["flip_rate"] == 0.0 and steady["unanimous_share"] == 1.0
    assert steady["fleiss_kappa"] == pytest.approx(1.0)
    assert steady["krippendorff_alpha"] == pytest.approx(1.0)
    # a random answer (prob. 0.3) differs from the row's own with prob. 2/3: each answer is
    # "off" with prob. 0.2, so a pair disagrees with prob. about 1 - (0.8^2 + 0.2^2 / 2)
    assert 0.25 < flipping["flip_rate"] < 0.4
    assert flipping["intervals"]["flip_rate"][0] > 0.2
    assert flipping["intervals"]["fleiss_kappa"][1] < 0.8


def test_undefined_cases() -> None:
    nothing = self_consistency([["a", None], [None, "b"]], n_resamples=50)
    assert all(nothing[name] is None for name in SCORES)
    assert nothing["rows_used"] == 0
    assert all(nothing["intervals"][name] == (None, None) for name in SCORES)
    one_label = self_consistency([["a", "a"], ["a", "a"]], n_resamples=0)
    assert one_label["fleiss_kappa"] is None and one_label["krippendorff_alpha"] is None
    assert one_label["flip_rate"] == 0.0
    assert self_consistency([], n_resamples=0)["rows"] == 0


@pytest.mark.parametrize(
    ("samples", "message"),
    [([["a"], ["b"]], "at least two samples"), ([["a", "b"], ["a"]], "lengths \\[1, 2\\]")],
)
def test_bad_input_is_named(samples: list, message: str) -> None:
    with pytest.raises(ScoringError, match=message):
        self_consistency(samples)


def test_majority_labels_break_ties_to_the_largest() -> None:
    samples = [["a", "b"], ["b", "a"], ["c", "c"], [None, None]]
    assert majority_labels(samples) == ["b", "b", "c", None]


def test_the_statistic_of_row_weights_is_self_consistency_of_the_rows_drawn() -> None:
    """Reference: `self_consistency` (itself checked against statsmodels and krippendorff above)
    of the rows each resample draws."""
    samples = judge(40, 4, flip=0.3, seed=3, missing=0.1)
    statistic = self_consistency_statistic(samples)
    draws = resample_indices(40, 5, seed=1)
    weights = np.array([np.bincount(d, minlength=40) for d in draws], dtype=float)
    found = statistic(np.vstack([np.ones(40), weights]))
    whole = self_consistency(samples, n_resamples=0)
    for name in SCORES:
        assert found[name][0] == pytest.approx(whole[name]), name
        for i, d in enumerate(draws, start=1):
            drawn = self_consistency([samples[j] for j in d], n_resamples=0)[name]
            assert found[name][i] == pytest.approx(drawn), name
