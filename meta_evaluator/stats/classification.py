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
import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.checks import (
    check_choice,
    check_interval,
    check_same_length,
    encode_labels,
)

__all__ = [
    "accuracy",
    "confusion_matrix",
    "label_indicators",
    "precision_recall_f1",
    "scores_from_counts",
]

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
    positive = categories.index(positive_label) if average == "binary" else None
    found = scores_from_counts(tp, predicted, support, average=average, positive=positive)
    return {name: _item(value) for name, value in found.items()}


def scores_from_counts(
    tp: npt.ArrayLike,
    predicted: npt.ArrayLike,
    support: npt.ArrayLike,
    *,
    average: Average,
    positive: int | None = None,
) -> dict[str, FloatArray]:
    """Precision, recall and F1 from per-class counts, averaged over the classes (last axis).

    Formula: for class c, precision_c = TP_c / P_c, recall_c = TP_c / S_c, F1_c =
    2 TP_c / (P_c + S_c), with P_c the items predicted c and S_c the items truly c (support).
    `macro`: the mean over the classes where the value is defined; `weighted`: the same,
    weighted by S_c; `micro`: the counts pooled over the classes first; `binary`: class
    `positive` alone. Counts may be weighted (bootstrap resamples) and carry leading axes.

    Args:
        tp: True positives per class, shape (..., k), >= 0.
        predicted: Items predicted in each class, same shape.
        support: Items truly in each class, same shape.
        average: "macro", "micro", "weighted" or "binary".
        positive: The class index reported with average="binary".

    Returns:
        {"precision", "recall", "f1"}: arrays of the leading shape, in [0, 1]; NaN where
        undefined (callers report None).

    Undefined: a class's value with a zero denominator (left out of macro and weighted); an
    average with no defined class or weights summing to 0.

    Raises:
        ScoringError: Shapes differ, an unknown average, or binary without a valid positive.

    References:
        Sokolova & Lapalme (2009), doi:10.1016/j.ipm.2009.03.002; METRICS.md F, G.13.

    Example:
        >>> found = scores_from_counts([2, 1], [3, 1], [2, 2], average="macro")
        >>> {name: round(float(value), 4) for name, value in found.items()}
        {'precision': 0.8333, 'recall': 0.75, 'f1': 0.7333}
    """
    function = "scores_from_counts"
    check_choice(function, "average", average, ("macro", "micro", "weighted", "binary"))
    counts = [np.asarray(x, dtype=np.float64) for x in (tp, predicted, support)]
    if len({c.shape for c in counts}) != 1 or counts[0].ndim == 0:
        raise ScoringError(
            f"{function}: tp, predicted and support must have one shape (..., k); got "
            f"{[c.shape for c in counts]}."
        )
    tp_, predicted_, support_ = counts
    k = tp_.shape[-1]
    if average == "binary":
        if positive is None or not 0 <= positive < k:
            raise ScoringError(f"{function}: average='binary' needs positive in [0, {k}).")
        tp_, predicted_, support_ = (c[..., positive : positive + 1] for c in counts)
    elif average == "micro":
        tp_, predicted_, support_ = (c.sum(axis=-1, keepdims=True) for c in counts)
    values = {
        "precision": _ratio(tp_, predicted_),
        "recall": _ratio(tp_, support_),
        "f1": _ratio(2 * tp_, predicted_ + support_),
    }
    weights = support_ if average == "weighted" else None
    return {name: _mean_last(value, weights) for name, value in values.items()}


def label_indicators(
    labels: Sequence[Any] | pl.Series, categories: Sequence[Hashable]
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Indicator matrix of multi-label answers: item i chose category c, and i is present.

    Args:
        labels: One answer per item: a list of categories, or None when absent (a sequence,
            or a polars Series of lists).
        categories: The categories, in column order; each chosen one must be among them.

    Returns:
        (chosen, present): booleans of shape (n, k) and (n,); an absent item chose nothing.

    Raises:
        ScoringError: An answer chose a value not among `categories`.

    Example:
        >>> chosen, present = label_indicators([["b"], [], None], ["a", "b"])
        >>> chosen.astype(int).tolist(), present.tolist()
        ([[0, 1], [0, 0], [0, 0]], [True, True, False])
    """
    series = labels if isinstance(labels, pl.Series) else pl.Series("label", list(labels))
    n, k = series.len(), len(categories)
    chosen = np.zeros((n, k), dtype=np.bool_)
    present = series.is_not_null().to_numpy().astype(np.bool_)
    if series.dtype == pl.Null:
        return chosen, np.zeros(n, dtype=np.bool_)
    placed = series.rename("label").to_frame().with_row_index("row").explode("label").drop_nulls()
    if placed.height:
        try:
            column = placed.get_column("label").replace_strict(
                list(categories), list(range(k)), return_dtype=pl.Int64
            )
        except (pl.exceptions.InvalidOperationError, pl.exceptions.ComputeError) as exc:
            raise ScoringError(
                f"label_indicators: an answer holds a value not among the categories "
                f"{list(categories)} ({exc})."
            ) from None
        chosen[placed.get_column("row").to_numpy(), column.to_numpy()] = True
    return chosen, present


def _ratio(
    top: npt.NDArray[np.float64], bottom: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    out = np.full(top.shape, np.nan)
    np.divide(top, bottom, out=out, where=bottom > 0)
    return out


def _item(value: Any) -> float | None:
    return None if np.isnan(value) else float(value)


def _mean_last(values: FloatArray, weights: FloatArray | None) -> FloatArray:
    """Mean over the last axis of the defined (non-NaN) values, weighted when asked.

    NaN where no value is defined, or the weights of the defined ones sum to 0.
    """
    defined = ~np.isnan(values)
    w = np.ones_like(values) if weights is None else np.asarray(weights, dtype=np.float64)
    w = np.where(defined, w, 0.0)
    total = w.sum(axis=-1)
    out = np.full(total.shape, np.nan)
    np.divide((np.where(defined, values, 0.0) * w).sum(axis=-1), total, out=out, where=total > 0)
    return out
