"""`meta_evaluator.stats.paired`: McNemar's exact test against statsmodels and scipy, the label
change against hand-computed cases and scikit-learn, its intervals against a direct resampling
loop."""

from __future__ import annotations

import math
import warnings
from collections import Counter
from typing import Any

import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.metrics import accuracy_score, cohen_kappa_score
from statsmodels.stats.contingency_tables import mcnemar

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.paired import SCORE_NAMES, label_change, mcnemar_exact

# ----- McNemar ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_mcnemar_equals_statsmodels_and_binomtest(seed: int) -> None:
    """statsmodels `mcnemar(table, exact=True)` and scipy `binomtest(b, b + c, 0.5)`."""
    rng = np.random.default_rng(seed)
    table = rng.integers(0, 30, (2, 2))
    table[0, 1] += seed % 3  # never both discordant cells 0
    b, c = int(table[0, 1]), int(table[1, 0])
    ours = mcnemar_exact(table.tolist())
    assert ours == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12, abs=1e-15)
    assert ours == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(
    ("b", "c", "expected"),
    [
        (1, 6, 16 / 128),  # 2 * (1 + 7) / 2^7
        (0, 3, 2 / 8),  # 2 * 1 / 2^3
        (4, 4, 1.0),  # 2 * P(X <= 4) > 1: capped
        (0, 1, 1.0),
        (10, 0, 2 / 1024),
    ],
)
def test_mcnemar_hand_computed(b: int, c: int, expected: float) -> None:
    assert mcnemar_exact([[5, b], [c, 7]]) == pytest.approx(expected, rel=1e-14)


def test_mcnemar_large_counts_stay_accurate() -> None:
    """Far tails: statsmodels agrees to 1e-10 relative at n = 20,000."""
    table = np.array([[0, 9_800], [10_200, 0]])
    assert mcnemar_exact(table) == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-10)


def test_mcnemar_without_discordant_items_is_undefined() -> None:
    assert mcnemar_exact([[12, 0], [0, 3]]) is None


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ([[1, 2, 3], [4, 5, 6]], "shape (2, 3)"),
        ([[1, -2], [3, 4]], "table[0][1] must be a whole number >= 0"),
        ([[1, 2], [3.5, 4]], "table[1][0] must be a whole number >= 0"),
        ([[1, 2], [float("nan"), 4]], "table[1][0]"),
        ([["a", "b"], ["c", "d"]], "must be 2 x 2 counts"),
    ],
)
def test_mcnemar_refuses_a_bad_table(table: Any, said: str) -> None:
    with pytest.raises(ScoringError, match="mcnemar_exact") as caught:
        mcnemar_exact(table)
    assert said in str(caught.value)


# ----- the label change --------------------------------------------------------------------------


def test_label_change_hand_computed() -> None:
    """Six items, three humans; every figure worked out by hand."""
    a = ["y", "y", "n", "n", "y", "n"]
    b = ["y", "n", "y", "y", "y", "y"]
    humans = [
        ["y", "y", "n", "y", None, "n"],
        ["y", "y", "n", "n", None, "y"],
        ["n", "y", "y", "y", None, None],
    ]
    # majority per item: y, y, n, y, (none), tie n/y -> y (sorts last)
    change = label_change(a, b, humans, n_resamples=50)
    assert change.items == 6
    assert change.changed == (1, 2, 3, 5)
    assert change.directions == ("away", "away", "toward", "toward")
    assert change.majority == ("y", "n", "y", "y")
    assert (change.toward, change.away, change.neither, change.unrated) == (2, 2, 0, 0)
    # rated items 0,1,2,3,5: a right on 0,1,2 ; b right on 0,3,5 -> b=2 (right, wrong), c=2
    assert change.mcnemar_p == 1.0
    scores = {s.name: s for s in change.scores}
    assert scores["accuracy_majority_vote"].a == pytest.approx(3 / 5)
    assert scores["accuracy_majority_vote"].b == pytest.approx(3 / 5)
    assert scores["accuracy_majority_vote"].difference == pytest.approx(0.0)
    # individual average: human 0 labels 5 items (a right on 0,1,2,5 = 4/5; b on 0,3 = 2/5),
    # human 1 5 items (a: 0,1,2,3 = 4/5; b: 0,5 = 2/5), human 2 4 items (a: 1 = 1/4; b: 2,3 = 2/4)
    expected_a = (4 / 5 + 4 / 5 + 1 / 4) / 3
    expected_b = (2 / 5 + 2 / 5 + 2 / 4) / 3
    assert scores["accuracy_individual_average"].a == pytest.approx(expected_a)
    assert scores["accuracy_individual_average"].b == pytest.approx(expected_b)
    assert scores["accuracy_individual_average"].difference == pytest.approx(
        expected_b - expected_a
    )


def _majority(rows: list[list[Any]]) -> list[Any]:
    """The most frequent label per item, ties to the largest; None where nobody labelled."""
    found = []
    for row in rows:
        present = [v for v in row if v is not None]
        if not present:
            found.append(None)
            continue
        counts = Counter(present)
        found.append(max(counts.items(), key=lambda item: (item[1], item[0]))[0])
    return found


def _random_case(seed: int, n: int = 60, humans: int = 3) -> tuple[list[Any], ...]:
    rng = np.random.default_rng(seed)
    labels = np.array(["a", "b", "c"])
    truth = rng.integers(0, 3, n)
    a = np.where(rng.random(n) < 0.7, truth, rng.integers(0, 3, n))
    b = np.where(rng.random(n) < 0.8, truth, rng.integers(0, 3, n))
    cols = []
    for _ in range(humans):
        h = np.where(rng.random(n) < 0.85, truth, rng.integers(0, 3, n)).astype(object)
        h = labels[h.astype(int)].astype(object)
        h[rng.random(n) < 0.15] = None
        cols.append(list(h))
    return list(labels[a]), list(labels[b]), cols


def _scores_by_sklearn(
    x: list[Any], humans: list[list[Any]], *, accuracy: Any = accuracy_score
) -> dict[str, float]:
    """Each score of one labelling with scikit-learn (majority by `Counter`, NaN undefined)."""
    majority = _majority([list(row) for row in zip(*humans, strict=True)])
    rated = [i for i, m in enumerate(majority) if m is not None]
    xs, ms = [x[i] for i in rated], [majority[i] for i in rated]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        kappa = float(cohen_kappa_score(xs, ms)) if rated else math.nan
    per_human = []
    for h in humans:
        done = [i for i, v in enumerate(h) if v is not None]
        if done:
            per_human.append(accuracy([h[i] for i in done], [x[i] for i in done]))
    return {
        "accuracy_majority_vote": accuracy(ms, xs) if rated else math.nan,
        "cohens_kappa_majority_vote": kappa,
        "accuracy_individual_average": float(np.mean(per_human)) if per_human else math.nan,
    }


def _share_equal(y: list[Any], z: list[Any]) -> float:
    return sum(p == q for p, q in zip(y, z, strict=True)) / len(y)


@pytest.mark.parametrize("seed", range(6))
def test_point_scores_equal_sklearn(seed: int) -> None:
    a, b, humans = _random_case(seed)
    change = label_change(a, b, humans, n_resamples=20)
    want_a, want_b = _scores_by_sklearn(a, humans), _scores_by_sklearn(b, humans)
    for score in change.scores:
        assert score.a == pytest.approx(want_a[score.name], abs=1e-12)
        assert score.b == pytest.approx(want_b[score.name], abs=1e-12)
        assert score.difference == pytest.approx(want_b[score.name] - want_a[score.name])


@pytest.mark.parametrize("seed", range(3))
def test_intervals_equal_a_direct_resampling_loop(seed: int) -> None:
    """The documented draws, default_rng(seed).integers(0, n, (R, n)), one resample at a time:
    both labellings scored on the same resampled items (kappa by scikit-learn)."""
    a, b, humans = _random_case(seed, n=40)
    resamples = 120
    draws = np.random.default_rng(seed).integers(0, len(a), (resamples, len(a)))
    differences: dict[str, list[float]] = {name: [] for name in SCORE_NAMES}
    for rows in draws:
        pick = [int(i) for i in rows]
        sample_h = [[h[i] for i in pick] for h in humans]
        got_a = _scores_by_sklearn([a[i] for i in pick], sample_h, accuracy=_share_equal)
        got_b = _scores_by_sklearn([b[i] for i in pick], sample_h, accuracy=_share_equal)
        for name in SCORE_NAMES:
            d = got_b[name] - got_a[name]
            if not math.isnan(d):
                differences[name].append(d)
    for level in (0.9, 0.95):
        change = label_change(
            a, b, humans, n_resamples=resamples, confidence_level=level, seed=seed
        )
        tail = (1 - level) / 2 * 100
        for score in change.scores:
            low, high = np.percentile(differences[score.name], [tail, 100 - tail])
            assert score.low == pytest.approx(low, abs=1e-12), score.name
            assert score.high == pytest.approx(high, abs=1e-12), score.name


def test_same_seed_same_interval_other_seed_other_draws() -> None:
    a, b, humans = _random_case(7)
    first = label_change(a, b, humans, n_resamples=100, seed=3)
    assert first == label_change(a, b, humans, n_resamples=100, seed=3)
    other = label_change(a, b, humans, n_resamples=100, seed=4)
    assert [s.low for s in first.scores] != [s.low for s in other.scores]


def test_permuting_items_permutes_the_positions_only() -> None:
    a, b, humans = _random_case(11)
    order = np.random.default_rng(0).permutation(len(a))
    moved = label_change(
        [a[i] for i in order], [b[i] for i in order], [[h[i] for i in order] for h in humans],
        n_resamples=10,
    )  # fmt: skip
    change = label_change(a, b, humans, n_resamples=10)
    assert sorted(int(order[i]) for i in moved.changed) == list(change.changed)
    assert (moved.toward, moved.away, moved.neither) == (change.toward, change.away, change.neither)
    assert moved.mcnemar_p == change.mcnemar_p
    for x, y in zip(moved.scores, change.scores, strict=True):
        assert x.a == pytest.approx(y.a) and x.b == pytest.approx(y.b)


def test_items_missing_a_label_are_left_out_and_positions_kept() -> None:
    change = label_change(["y", None, "n", "y"], ["n", "y", float("nan"), "n"], [["n"] * 4])
    assert change.items == 2
    assert change.changed == (0, 3)
    assert change.directions == ("toward", "toward")


def test_without_humans_the_flips_stay_and_the_rest_is_none_with_a_reason() -> None:
    change = label_change(["y", "n", "n"], ["n", "n", "y"])
    assert change.changed == (0, 2)
    assert change.directions == ("unrated", "unrated")
    assert change.unrated == 2
    assert (change.toward, change.away, change.neither, change.mcnemar_p) == (None,) * 4
    assert change.human_reason == "no human labels were given"
    for score in change.scores:
        assert (score.a, score.b, score.difference, score.low, score.high) == (None,) * 5
        assert score.reason == "no human labels were given"
    unlabelled = label_change(["y"], ["n"], [[None]])
    assert unlabelled.human_reason == "no human labelled these items"


def test_an_unrated_item_among_rated_ones() -> None:
    change = label_change(["y", "y", "n"], ["n", "n", "n"], [["y", None, "n"]], n_resamples=20)
    assert change.directions == ("away", "unrated")
    assert (change.toward, change.away, change.neither, change.unrated) == (0, 1, 0, 1)


def test_kappa_of_a_single_label_is_none_with_why() -> None:
    """Humans and both runs all say 'y': kappa's chance agreement is 1."""
    change = label_change(["y", "y", "y"], ["y", "y", "y"], [["y", "y", "y"]], n_resamples=20)
    kappa = next(s for s in change.scores if s.name == "cohens_kappa_majority_vote")
    assert (kappa.a, kappa.b, kappa.difference, kappa.low, kappa.high) == (None,) * 5
    assert kappa.reason is not None and "chance agreement is 1" in kappa.reason
    assert change.mcnemar_p is None
    assert change.mcnemar_reason is not None and "wrong" in change.mcnemar_reason
    accuracy = change.scores[0]
    assert (accuracy.a, accuracy.b, accuracy.difference) == (1.0, 1.0, 0.0)
    assert accuracy.reason is None


def test_neither_counts_a_change_between_two_wrong_labels() -> None:
    change = label_change(["a"], ["b"], [["c"]], n_resamples=5)
    assert change.directions == ("neither",)
    assert (change.toward, change.away, change.neither) == (0, 0, 1)


def test_list_labels_compare_as_a_whole() -> None:
    change = label_change([["x", "y"], ["x"]], [["x", "y"], ["y"]], [[["x"], ["y"]]])
    assert change.changed == (1,)
    assert change.directions == ("toward",)


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        ({"n_resamples": 0}, "n_resamples must be in [1"),
        ({"confidence_level": 1.0}, "confidence_level must be in (0.0, 1.0)"),
        ({"seed": -1}, "seed must be in [0"),
        ({"seed": 1.5}, "seed must be an integer"),
    ],
)
def test_label_change_checks_its_options(kwargs: dict[str, Any], said: str) -> None:
    with pytest.raises(ScoringError, match="label_change") as caught:
        label_change(["y"], ["n"], **kwargs)
    assert said in str(caught.value)


def test_label_change_refuses_unequal_lengths_and_no_common_item() -> None:
    with pytest.raises(ScoringError, match=r"humans\[0\] has 1"):
        label_change(["y", "n"], ["y", "y"], [["y"]])
    with pytest.raises(ScoringError, match="no item is labelled by both"):
        label_change(["y", None], [None, "n"])


def test_past_the_table_limit_confusion_matrices_count_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Many labels x many items: kappa's cells come from `confusion_matrix` instead."""
    import meta_evaluator.stats.paired as paired

    a, b, humans = _random_case(5)
    table = label_change(a, b, humans, n_resamples=60)
    monkeypatch.setattr(paired, "_MOST_CELLS", 0)
    counted = label_change(a, b, humans, n_resamples=60)
    for x, y in zip(table.scores, counted.scores, strict=True):
        for field in ("a", "b", "difference", "low", "high"):
            assert getattr(x, field) == pytest.approx(getattr(y, field), abs=1e-12)
