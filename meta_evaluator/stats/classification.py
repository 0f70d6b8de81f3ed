"""Confusion matrix, accuracy, precision, recall and F1 of one labelling against another.

Pure and vectorised.
Undefined values (0/0) are `None`, never 0 (METRICS.md G.13): a class nobody predicted has no
precision, and it is left out of a macro average rather than counted as 0.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.checks import (
    check_choice,
    check_interval,
    check_same_length,
    encode_labels,
)

__all__ = ["accuracy", "confusion_matrix", "precision_recall_f1"]

Average = Literal["macro", "micro", "weighted", "binary"]
FloatArray = npt.NDArray[np.float64]


def confusion_matrix(
    codes_a: Sequence[int] | npt.NDArray[np.integer[Any]],
    codes_b: Sequence[int] | npt.NDArray[np.integer[Any]],
    k: int,
    *,
    weights: npt.ArrayLike | None = None,
) -> FloatArray:
    """Confusion matrix of two labellings of the same items, optionally under item weights.

    Formula: C[c, d] = sum_i w_i * 1[a_i = c and b_i = d] over the items where both codes are
    present (>= 0); w_i = 1 without `weights`. Rows are `codes_a`'s categories, columns
    `codes_b`'s, as in scikit-learn's `confusion_matrix(y_true=a, y_pred=b)`.

    Args:
        codes_a: Integer codes of one labelling, one per item, in [0, k) or -1 where the item
            has no label (as `stats.checks.encode_labels` gives them).
        codes_b: The other labelling's codes, same length and category list.
        k: Number of categories (>= 1).
        weights: Item weights, shape (n,) or (r, n) for r weightings at once (a bootstrap
            resample: how often each item was drawn). Default: every item weighs 1.

    Returns:
        Float counts of shape (k, k), or (r, k, k) with two-dimensional `weights`; each entry
        >= 0, summing (per weighting) to the weight of the items both labellings have. A
        diagonal matrix is perfect agreement.

    Undefined: never; an empty input or no item labelled by both gives a matrix of zeros.

    Raises:
        ScoringError: Lengths differ, k is not a positive integer, a code is outside
            [-1, k), or the last axis of `weights` does not have one entry per item.

    References:
        Stehman (1997), doi:10.1016/S0034-4257(97)00083-7; METRICS.md D (the table behind
        Cohen's kappa).

    Example:
        >>> confusion_matrix([0, 0, 1, 1, -1], [0, 1, 1, 1, 0], 2)
        array([[1., 1.],
               [0., 2.]])
    """
    function = "confusion_matrix"
    check_same_length(function, codes_a=codes_a, codes_b=codes_b)
    check_interval(function, "k", k, 1, float("inf"), closed="left", integer=True)
    a = np.asarray(codes_a, dtype=np.int64).reshape(-1)
    b = np.asarray(codes_b, dtype=np.int64).reshape(-1)
    for name, codes in (("codes_a", a), ("codes_b", b)):
        if codes.size and (codes.min() < -1 or codes.max() >= k):
            raise ScoringError(
                f"{function}: {name} must hold codes in [-1, {k}); got values from "
                f"{codes.min()} to {codes.max()}."
            )
    both = (a >= 0) & (b >= 0)
    cells = a[both] * k + b[both]
    if weights is None:
        return np.bincount(cells, minlength=k * k).reshape(k, k).astype(np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim not in (1, 2) or w.shape[-1] != a.size:
        raise ScoringError(
            f"{function}: weights must have shape (n,) or (r, n) with n = {a.size} items; "
            f"got shape {w.shape}."
        )
    # items grouped by cell, then one segment sum per cell for every weighting at once
    order = np.argsort(cells, kind="stable")
    bounds = np.searchsorted(cells[order], np.arange(k * k + 1))
    starts, filled = bounds[:-1], bounds[:-1] < bounds[1:]
    rows = w.reshape(-1, a.size)[:, both][:, order]
    counts = np.zeros((rows.shape[0], k * k))
    if filled.any():
        counts[:, filled] = np.add.reduceat(rows, starts[filled], axis=1)
    return counts.reshape(*w.shape[:-1], k, k)


def accuracy(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float | None:
    """Share of items where the two labellings agree.

    Formula: accuracy = (1/n) * sum_i 1[y_true_i == y_pred_i] over the n items where both
    labels are present (None/NaN labels drop the item).

    Args:
        y_true: Reference labels, one per item (strings, numbers or lists for multi-label sets,
            compared as a whole).
        y_pred: Predicted labels, same length.

    Returns:
        A value in [0, 1]: 1 when every item agrees, 0 when none does. None when no item has
        both labels.

    Raises:
        ScoringError: The sequences differ in length.

    Example:
        >>> accuracy(["yes", "no", "no"], ["yes", "no", "yes"])
        0.6666666666666666
    """
    check_same_length("accuracy", y_true=y_true, y_pred=y_pred)
    (a, b), _ = encode_labels(y_true, y_pred)
    both = (a >= 0) & (b >= 0)
    n = int(both.sum())
    if n == 0:
        return None
    return float(np.count_nonzero(a[both] == b[both]) / n)


def precision_recall_f1(
    y_true: Sequence[Any],
    y_pred: Sequence[Any],
    *,
    average: Average = "macro",
    positive_label: Hashable | None = None,
) -> dict[str, float | None]:
    """Precision, recall and F1 of `y_pred` against `y_true`, per class then averaged.

    Formula: for class c, precision_c = TP_c / (TP_c + FP_c), recall_c = TP_c / (TP_c + FN_c),
    F1_c = 2 TP_c / (2 TP_c + FP_c + FN_c). `macro` averages the defined per-class values over
    the classes seen in either labelling; `weighted` weights them by support (TP + FN);
    `micro` pools the counts (equal to accuracy for single-label data); `binary` reports
    `positive_label` only.

    Args:
        y_true: Reference labels, one per item; items with a missing label on either side drop.
        y_pred: Predicted labels, same length.
        average: "macro", "micro", "weighted" or "binary".
        positive_label: The class reported with average="binary".

    Returns:
        {"precision", "recall", "f1"}, each in [0, 1] or None when undefined.

    Undefined: precision of a class never predicted, recall of a class never present, F1 of a
    class with neither; an average with no defined class; every value when no item is left.

    Raises:
        ScoringError: Lengths differ, an unknown average, or binary without positive_label.

    Example:
        >>> precision_recall_f1(["a", "a", "b"], ["a", "b", "b"], average="binary",
        ...                     positive_label="a")
        {'precision': 1.0, 'recall': 0.5, 'f1': 0.6666666666666666}
    """
    function = "precision_recall_f1"
    check_same_length(function, y_true=y_true, y_pred=y_pred)
    check_choice(function, "average", average, ("macro", "micro", "weighted", "binary"))
    (a, b), categories = encode_labels(y_true, y_pred)
    both = (a >= 0) & (b >= 0)
    a, b = a[both], b[both]
    k = len(categories)
    if average == "binary":
        if positive_label is None:
            raise ScoringError(f"{function}: average='binary' needs positive_label.")
        if positive_label not in categories:
            return {"precision": None, "recall": None, "f1": None}
    if a.size == 0:
        return {"precision": None, "recall": None, "f1": None}
    tp = np.bincount(a[a == b], minlength=k).astype(np.float64)
    predicted = np.bincount(b, minlength=k).astype(np.float64)
    support = np.bincount(a, minlength=k).astype(np.float64)
    if average == "micro":
        tp, predicted, support = (
            tp.sum(keepdims=True),
            predicted.sum(keepdims=True),
            support.sum(keepdims=True),
        )
    precision = _ratio(tp, predicted)
    recall = _ratio(tp, support)
    f1 = _ratio(2 * tp, predicted + support)
    if average == "binary":
        c = categories.index(positive_label)
        return {"precision": _item(precision[c]), "recall": _item(recall[c]), "f1": _item(f1[c])}
    weights = support if average == "weighted" else None
    return {
        "precision": _mean(precision, weights),
        "recall": _mean(recall, weights),
        "f1": _mean(f1, weights),
    }


def _ratio(
    top: npt.NDArray[np.float64], bottom: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    out = np.full(top.shape, np.nan)
    np.divide(top, bottom, out=out, where=bottom > 0)
    return out


def _item(value: np.floating[Any]) -> float | None:
    return None if np.isnan(value) else float(value)


def _mean(values: npt.NDArray[np.float64], weights: npt.NDArray[np.float64] | None) -> float | None:
    defined = ~np.isnan(values)
    if not defined.any():
        return None
    if weights is None:
        return float(values[defined].mean())
    w = weights[defined]
    if w.sum() == 0:
        return None
    return float((values[defined] * w).sum() / w.sum())
