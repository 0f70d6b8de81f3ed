"""`meta_evaluator.stats.classification` against scikit-learn (METRICS.md B.3, D, G.13).

scikit-learn's `zero_division=np.nan` marks the undefined values that we return as None.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, precision_recall_fscore_support
from sklearn.metrics import confusion_matrix as sk_confusion_matrix

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.checks import encode_labels
from meta_evaluator.stats.classification import accuracy, confusion_matrix, precision_recall_f1

SEEDS = range(12)
AVERAGES = ("macro", "micro", "weighted")
NAMES = ("precision", "recall", "f1")


def _labels(rng: np.random.Generator, n: int, k: int, kind: str) -> list[Any]:
    codes = rng.integers(0, k, n)
    if kind == "str":
        return [f"class-{c}" for c in codes]
    return [int(c) * 3 - 2 for c in codes]  # negative and positive ints, not 0..k-1


def _random_pair(seed: int, kind: str) -> tuple[list[Any], list[Any]]:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    n = int(rng.integers(5, 60))
    y_true = _labels(rng, n, k, kind)
    noise = _labels(rng, n, k, kind)
    keep = rng.random(n) < 0.5
    y_pred = [t if c else p for t, p, c in zip(y_true, noise, keep, strict=True)]
    return y_true, y_pred


def _sklearn(y_true: list[Any], y_pred: list[Any], **kwargs: Any) -> dict[str, float | None]:
    values = precision_recall_fscore_support(y_true, y_pred, zero_division=np.nan, **kwargs)
    return {
        name: (None if np.isnan(v) else float(v)) for name, v in zip(NAMES, values[:3], strict=True)
    }


def _weights_vanish(y_true: list[Any], y_pred: list[Any], name: str) -> bool:
    """Every class with a defined `name` value has support 0 (the weighted average is 0/0)."""
    for c in set(y_true) | set(y_pred):
        predicted = sum(p == c for p in y_pred)
        support = sum(t == c for t in y_true)
        bottom = {"precision": predicted, "recall": support, "f1": predicted + support}[name]
        if bottom > 0 and support > 0:
            return False
    return True


def _assert_same(ours: dict[str, float | None], ref: dict[str, float | None]) -> None:
    assert set(ours) == set(NAMES)
    for name in NAMES:
        if ref[name] is None:
            assert ours[name] is None, name
        else:
            assert ours[name] == pytest.approx(ref[name], abs=1e-12), name


@pytest.mark.parametrize("kind", ["str", "int"])
@pytest.mark.parametrize("seed", SEEDS)
def test_accuracy_matches_sklearn(seed: int, kind: str) -> None:
    """accuracy == sklearn.metrics.accuracy_score on random labels."""
    y_true, y_pred = _random_pair(seed, kind)
    assert accuracy(y_true, y_pred) == pytest.approx(accuracy_score(y_true, y_pred), abs=1e-15)


@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("kind", ["str", "int"])
@pytest.mark.parametrize("seed", SEEDS)
def test_precision_recall_f1_matches_sklearn(seed: int, kind: str, average: str) -> None:
    """precision_recall_f1 == sklearn precision_recall_fscore_support(zero_division=nan)."""
    y_true, y_pred = _random_pair(seed, kind)
    ours = precision_recall_f1(y_true, y_pred, average=average)  # type: ignore[arg-type]
    ref = _sklearn(y_true, y_pred, average=average)
    if average == "weighted":  # see test_weighted_with_zero_weight_is_none
        ref = {k: None if _weights_vanish(y_true, y_pred, k) else v for k, v in ref.items()}
    _assert_same(ours, ref)


@pytest.mark.parametrize("kind", ["str", "int"])
@pytest.mark.parametrize("seed", SEEDS)
def test_binary_matches_sklearn(seed: int, kind: str) -> None:
    """average="binary" == sklearn average="binary" with the same pos_label, both classes."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 50))
    y_true = _labels(rng, n, 2, kind)
    y_pred = [t if rng.random() < 0.6 else _labels(rng, 1, 2, kind)[0] for t in y_true]
    for positive in sorted(set(y_true) | set(y_pred)):
        ours = precision_recall_f1(y_true, y_pred, average="binary", positive_label=positive)
        _assert_same(ours, _sklearn(y_true, y_pred, average="binary", pos_label=positive))


def test_micro_equals_accuracy() -> None:
    """Micro precision, recall and F1 of single-label data all equal sklearn's accuracy_score."""
    y_true, y_pred = _random_pair(99, "str")
    ours = precision_recall_f1(y_true, y_pred, average="micro")
    expected = accuracy_score(y_true, y_pred)
    assert ours == pytest.approx({"precision": expected, "recall": expected, "f1": expected})


def test_class_never_predicted_is_left_out_of_macro() -> None:
    """A class never predicted has no precision (sklearn NaN); macro averages the others."""
    y_true = ["a", "a", "b", "c", "c"]
    y_pred = ["a", "a", "a", "c", "a"]
    ours = precision_recall_f1(y_true, y_pred, average="macro")
    _assert_same(ours, _sklearn(y_true, y_pred, average="macro"))
    # by hand: precision a = 2/4, c = 1/1, b undefined -> (0.5 + 1) / 2
    assert ours["precision"] == pytest.approx(0.75)
    binary_b = precision_recall_f1(y_true, y_pred, average="binary", positive_label="b")
    assert binary_b == {"precision": None, "recall": 0.0, "f1": 0.0}


def test_single_class_everywhere() -> None:
    """One class in both labellings: everything agrees (sklearn gives 1.0 throughout)."""
    y = ["x"] * 6
    assert accuracy(y, y) == 1.0
    for average in AVERAGES:
        ours = precision_recall_f1(y, y, average=average)  # type: ignore[arg-type]
        _assert_same(ours, _sklearn(y, y, average=average))
        assert ours == {"precision": 1.0, "recall": 1.0, "f1": 1.0}


def test_weighted_with_zero_weight_is_none() -> None:
    """Where sklearn's weighted average has weights summing to 0 it falls back to an
    unweighted mean (0.0); we return None (0/0 is undefined, METRICS.md G.13).

    This documents the one place where we knowingly differ from scikit-learn.
    """
    y_true, y_pred = ["a"] * 4, ["b"] * 4
    assert _sklearn(y_true, y_pred, average="weighted")["precision"] == 0.0
    assert precision_recall_f1(y_true, y_pred, average="weighted") == {
        "precision": None,
        "recall": 0.0,
        "f1": 0.0,
    }
    assert _weights_vanish(y_true, y_pred, "precision")


def test_missing_labels_are_dropped() -> None:
    """Items with None/NaN on either side drop; the rest equals sklearn on the kept items."""
    y_true = ["a", None, "b", "b", "a", "c", float("nan"), "c"]
    y_pred = ["a", "b", None, "b", "c", "c", "a", float("nan")]
    kept = [(t, p) for t, p in zip(y_true, y_pred, strict=True) if t == t and p == p]
    kept = [(t, p) for t, p in kept if t is not None and p is not None]
    kt, kp = [t for t, _ in kept], [p for _, p in kept]
    assert kt == ["a", "b", "a", "c"]
    assert accuracy(y_true, y_pred) == accuracy_score(kt, kp)
    for average in AVERAGES:
        ours = precision_recall_f1(y_true, y_pred, average=average)  # type: ignore[arg-type]
        _assert_same(ours, _sklearn(kt, kp, average=average))


def test_missing_numeric_labels_are_dropped() -> None:
    """NaN in float labels drops the item (sklearn on the kept items)."""
    y_true = [1.0, 2.0, math.nan, 2.0, 1.0]
    y_pred = [1.0, 1.0, 2.0, 2.0, None]
    assert accuracy(y_true, y_pred) == accuracy_score([1.0, 2.0, 2.0], [1.0, 1.0, 2.0])


@pytest.mark.parametrize(
    ("y_true", "y_pred"),
    [([], []), ([None, None], ["a", "b"]), (["a", None], [None, "b"])],
)
def test_nothing_left_is_none(y_true: list[Any], y_pred: list[Any]) -> None:
    """No item with both labels: accuracy and every average are None (not sklearn's 0)."""
    assert accuracy(y_true, y_pred) is None
    for average in AVERAGES:
        result = precision_recall_f1(y_true, y_pred, average=average)  # type: ignore[arg-type]
        assert result == {"precision": None, "recall": None, "f1": None}


def test_binary_positive_label_absent_is_none() -> None:
    """average="binary" with a positive label nobody used: every value undefined."""
    assert precision_recall_f1(["a", "b"], ["a", "a"], average="binary", positive_label="z") == {
        "precision": None,
        "recall": None,
        "f1": None,
    }


def test_multilabel_answers_compare_as_a_whole() -> None:
    """List labels are equal only when the whole list is (hand count: 2 of 4 agree)."""
    y_true = [["a", "b"], ["a"], [], ["b"]]
    y_pred = [["a", "b"], ["b"], [], ["a", "b"]]
    assert accuracy(y_true, y_pred) == 0.5


@pytest.mark.parametrize(
    "call",
    [
        lambda: accuracy(["a", "b"], ["a"]),
        lambda: precision_recall_f1(["a"], ["a", "b"]),
    ],
)
def test_length_mismatch_raises(call: Any) -> None:
    """Sequences of different length raise ScoringError naming both lengths (S1)."""
    with pytest.raises(ScoringError, match=r"same length.*has 2.*has 1|same length.*has 1.*has 2"):
        call()


def test_bad_average_raises_before_computing() -> None:
    """An unknown average raises ScoringError naming the argument, even on unusable data."""
    with pytest.raises(ScoringError, match=r"precision_recall_f1: average must be one of"):
        precision_recall_f1([], [], average="samples")  # type: ignore[arg-type]


def test_binary_without_positive_label_raises() -> None:
    """average="binary" needs positive_label (sklearn raises too for non-{0,1} labels)."""
    with pytest.raises(ScoringError, match="positive_label"):
        precision_recall_f1(["a", "b"], ["a", "b"], average="binary")


# ----- confusion_matrix --------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", ["str", "int"])
def test_confusion_matrix_matches_sklearn(seed: int, kind: str) -> None:
    """scikit-learn's `confusion_matrix(y_true, y_pred, labels=...)` is the reference."""
    y_true, y_pred = _random_pair(seed, kind)
    (a, b), categories = encode_labels(y_true, y_pred)
    expected = sk_confusion_matrix(y_true, y_pred, labels=categories)
    found = confusion_matrix(a, b, len(categories))
    assert found.dtype == np.float64
    np.testing.assert_array_equal(found, expected)


@pytest.mark.parametrize("seed", SEEDS)
def test_weighted_confusion_matrix_matches_sklearn_sample_weight(seed: int) -> None:
    """Each row of `weights` is scikit-learn's `sample_weight`; items missing a code drop."""
    rng = np.random.default_rng(seed)
    k, n = int(rng.integers(2, 5)), int(rng.integers(3, 40))
    a = rng.integers(-1, k, n)
    b = rng.integers(-1, k, n)
    weights = rng.integers(0, 4, (3, n)).astype(float)
    found = confusion_matrix(a, b, k, weights=weights)
    assert found.shape == (3, k, k)
    both = (a >= 0) & (b >= 0)
    for row, matrix in zip(weights, found, strict=True):
        expected = sk_confusion_matrix(
            a[both], b[both], labels=list(range(k)), sample_weight=row[both]
        )
        np.testing.assert_array_equal(matrix, expected)
    np.testing.assert_array_equal(
        confusion_matrix(a, b, k, weights=np.ones(n)), confusion_matrix(a, b, k)
    )


def test_confusion_matrix_of_nothing_is_zeros() -> None:
    np.testing.assert_array_equal(confusion_matrix([], [], 2), np.zeros((2, 2)))
    np.testing.assert_array_equal(confusion_matrix([-1, 0], [1, -1], 2), np.zeros((2, 2)))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([0, 1], [0], 2), "same length"),
        (([0, 1], [0, 1], 0), "k must be in"),
        (([0, 2], [0, 1], 2), r"codes_a must hold codes in \[-1, 2\)"),
        (([0, 1], [0, -2], 2), "codes_b must hold codes"),
    ],
)
def test_confusion_matrix_bad_arguments_raise(args: Any, message: str) -> None:
    with pytest.raises(ScoringError, match=message):
        confusion_matrix(*args)


def test_confusion_matrix_weights_of_the_wrong_shape_raise() -> None:
    with pytest.raises(ScoringError, match=r"weights must have shape \(n,\) or \(r, n\)"):
        confusion_matrix([0, 1], [0, 1], 2, weights=np.ones((2, 3)))


def test_weighted_confusion_matrix_with_empty_cells_and_one_weighting() -> None:
    """Cells no item falls in stay 0 (first, middle and last); 1-d weights give one matrix."""
    a, b = [1, 1, -1, 1], [1, 1, 0, 0]
    expected = np.zeros((3, 3))
    expected[1, 1], expected[1, 0] = 2.0 + 3.0, 0.5
    found = confusion_matrix(a, b, 3, weights=[2.0, 3.0, 7.0, 0.5])
    np.testing.assert_array_equal(found, expected)
    assert found.shape == (3, 3)


@pytest.mark.parametrize("average", ["macro", "micro", "weighted", "binary"])
def test_weighted_counts_match_sklearns_sample_weight(average: str) -> None:
    """The bootstrap path: per-class counts of resampled items (each resample a row of
    weights) give what scikit-learn gives with those weights as `sample_weight`."""
    from meta_evaluator.stats.classification import scores_from_counts

    rng = np.random.default_rng(11)
    truth = rng.integers(0, 3, 60)
    guess = np.where(rng.random(60) < 0.7, truth, rng.integers(0, 3, 60))
    weights = rng.multinomial(60, np.full(60, 1 / 60), size=5).astype(float)  # 5 resamples
    onehot_t, onehot_g = np.eye(3)[truth], np.eye(3)[guess]
    tp = weights @ (onehot_t * onehot_g)
    found = scores_from_counts(
        tp, weights @ onehot_g, weights @ onehot_t, average=average,  # type: ignore[arg-type]
        positive=1 if average == "binary" else None,
    )  # fmt: skip
    for row, w in enumerate(weights):
        kept = w > 0
        expected = precision_recall_fscore_support(
            truth[kept], guess[kept], sample_weight=w[kept], labels=[0, 1, 2],
            average=None if average == "binary" else average, zero_division=np.nan,
        )  # fmt: skip
        for name, value in zip(("precision", "recall", "f1"), expected[:3], strict=False):
            value = value[1] if average == "binary" else value  # class 1 alone
            assert found[name][row] == pytest.approx(value, abs=1e-12), (average, name, row)
