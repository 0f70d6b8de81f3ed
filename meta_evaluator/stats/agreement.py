"""Agreement between raters: Cohen's kappa, Fleiss' kappa, Krippendorff's alpha, % agreement.

Pure numpy. Every function takes plain sequences; undefined values (chance agreement of 1, a
single value in the whole domain) are `None` (METRICS.md D). The `*_from_*` helpers take
precomputed tables with any leading batch axes, which is how the bootstrap evaluates a
thousand resamples in one call.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.checks import (
    check_choice,
    check_same_length,
    encode_labels,
    is_missing,
)
from meta_evaluator.stats.classification import accuracy, confusion_matrix

__all__ = [
    "alpha_from_coincidences",
    "cohens_kappa",
    "coincidences",
    "distance_function",
    "fleiss_kappa",
    "kappa_from_confusion",
    "krippendorff_alpha",
    "percent_agreement",
    "ratings_table",
]

KappaWeights = Literal["linear", "quadratic"] | None
Level = Literal["nominal", "ordinal", "interval", "ratio"]
FloatArray = npt.NDArray[np.float64]


def percent_agreement(a: Sequence[Any], b: Sequence[Any]) -> float | None:
    """Share of items, among those both raters labelled, with equal labels (None if none)."""
    check_same_length("percent_agreement", a=a, b=b)
    return accuracy(a, b)


def cohens_kappa(
    a: Sequence[Any],
    b: Sequence[Any],
    weights: KappaWeights = None,
    *,
    labels: Sequence[Hashable] | None = None,
) -> float | None:
    """Cohen's kappa: agreement of two raters on the same items, corrected for chance.

    Formula: kappa = 1 - sum(w * O) / sum(w * E), where O is the confusion matrix of the two
    raters, E = outer(row sums, column sums) / n the matrix expected by chance, and w the
    disagreement weights: 1 off the diagonal (unweighted), |i - j| (linear) or (i - j)^2
    (quadratic) on the category order. Unweighted, this is (p_o - p_e) / (1 - p_e).

    Args:
        a: One rater's labels, one per item; items missing on either side are dropped.
        b: The other rater's labels, same length.
        weights: None, "linear" or "quadratic" (for ordered categories).
        labels: The categories in order (needed for weighted kappa of labels that do not sort
            in their natural order, such as "low" < "medium" < "high"). Default: sorted.

    Returns:
        A value in [-1, 1]: 1 is perfect agreement, 0 what chance gives, negative worse.

    Undefined: None when the chance agreement is 1 (both raters used one and the same category).

    Raises:
        ScoringError: Lengths differ, unknown weights, no item labelled by both, or a label not
            in `labels`.

    References:
        Cohen (1960), doi:10.1177/001316446002000104; METRICS.md D.

    Example:
        >>> round(cohens_kappa(["y", "y", "n", "n"], ["y", "n", "n", "n"]), 4)
        0.5
    """
    function = "cohens_kappa"
    check_same_length(function, a=a, b=b)
    check_choice(function, "weights", weights, (None, "linear", "quadratic"))
    (x, y), categories = encode_labels(a, b, categories=labels)
    both = (x >= 0) & (y >= 0)
    if not both.any():
        raise ScoringError(f"{function}: no item is labelled by both raters.")
    value = kappa_from_confusion(confusion_matrix(x, y, max(len(categories), 1)), weights)
    return None if np.isnan(value) else float(value)


def kappa_from_confusion(confusion: FloatArray, weights: KappaWeights = None) -> FloatArray:
    """Cohen's kappa of confusion matrices (..., k, k), vectorised; NaN where undefined."""
    k = confusion.shape[-1]
    i, j = np.indices((k, k))
    if weights is None:
        w = (i != j).astype(np.float64)
    elif weights == "linear":
        w = np.abs(i - j).astype(np.float64)
    else:
        w = ((i - j) ** 2).astype(np.float64)
    total = confusion.sum(axis=(-2, -1))
    rows = confusion.sum(axis=-1)
    cols = confusion.sum(axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = rows[..., :, None] * cols[..., None, :] / total[..., None, None]
        observed_w = (w * confusion).sum(axis=(-2, -1))
        expected_w = (w * expected).sum(axis=(-2, -1))
        kappa = 1.0 - observed_w / expected_w
    return np.where(expected_w > 0, kappa, np.nan)


def ratings_table(
    ratings: Sequence[Sequence[Any]], *, categories: Sequence[Hashable] | None = None
) -> tuple[npt.NDArray[np.int64], list[Hashable]]:
    """Counts per item and category from an items x raters table of labels (None = missing).

    Returns:
        (table, categories): `table[i, c]` is how many raters gave item i category c.
    """
    width = {len(row) for row in ratings}
    if len(width) > 1:
        raise ScoringError(
            f"ratings_table: every item needs one entry per rater (None when missing); found "
            f"rows of lengths {sorted(width)}."
        )
    flat = [value for row in ratings for value in row]
    (codes,), found = encode_labels(flat, categories=categories)
    n_items, k = len(ratings), max(len(found), 1)
    item = np.repeat(np.arange(n_items), width.pop() if width else 0)
    keep = codes >= 0
    table = np.bincount(item[keep] * k + codes[keep], minlength=n_items * k).reshape(n_items, k)
    return table, found


def fleiss_kappa(
    table: Sequence[Sequence[int]] | npt.NDArray[Any],
    method: Literal["fleiss", "randolph"] = "fleiss",
) -> float | None:
    """Fleiss' kappa: agreement of several raters per item, corrected for chance.

    Formula: with n raters per item and n_ic raters putting item i in category c,
    P_i = (sum_c n_ic^2 - n) / (n (n - 1)), P_bar = mean_i P_i, p_c = sum_i n_ic / (N n),
    P_e = sum_c p_c^2 ("fleiss") or 1 / k ("randolph", free-marginal kappa);
    kappa = (P_bar - P_e) / (1 - P_e).

    Args:
        table: Items x categories counts (see `ratings_table`), every row summing to the same
            number of raters (at least 2).
        method: "fleiss" or "randolph".

    Returns:
        A value <= 1: 1 is perfect agreement, 0 what chance gives.

    Undefined: None when P_e = 1 (a single category in use, or k = 1 with "randolph").

    Raises:
        ScoringError: An unknown method, an empty or negative table, rows with different totals
            (use Krippendorff's alpha for missing ratings) or fewer than two raters per item.

    References:
        Fleiss (1971), doi:10.1037/h0031619; Randolph (2005); METRICS.md D.

    Example:
        >>> round(fleiss_kappa([[2, 0], [0, 2], [1, 1]]), 4)
        0.3333
    """
    function = "fleiss_kappa"
    check_choice(function, "method", method, ("fleiss", "randolph"))
    counts = np.asarray(table, dtype=np.float64)
    if counts.ndim != 2 or counts.size == 0:
        raise ScoringError(f"{function}: table must be a non-empty items x categories array.")
    if (counts < 0).any() or np.isnan(counts).any():
        raise ScoringError(f"{function}: table holds negative or missing counts.")
    raters = counts.sum(axis=1)
    if not np.all(raters == raters[0]):
        raise ScoringError(
            f"{function}: every item needs the same number of ratings; found totals from "
            f"{raters.min():g} to {raters.max():g}. Use krippendorff_alpha for missing ratings."
        )
    n = raters[0]
    if n < 2:
        raise ScoringError(f"{function}: every item needs at least two ratings; found {n:g}.")
    p_item = ((counts**2).sum(axis=1) - n) / (n * (n - 1))
    p_bar = p_item.mean()
    if method == "fleiss":
        p_cat = counts.sum(axis=0) / counts.sum()
        p_e = float((p_cat**2).sum())
    else:
        p_e = 1.0 / counts.shape[1]
    if p_e >= 1.0:
        return None
    return float((p_bar - p_e) / (1.0 - p_e))


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[Any]] | npt.NDArray[Any],
    level_of_measurement: Level = "nominal",
    *,
    value_domain: Sequence[Hashable] | None = None,
) -> float | None:
    """Krippendorff's alpha: reliability of several coders, allowing missing values.

    Formula: alpha = 1 - D_o / D_e = 1 - (n - 1) * sum_{c,k} o_ck d_ck / sum_{c,k} n_c n_k d_ck,
    where o is the coincidence matrix of pairable values (each unit with m_u >= 2 values adds
    its ordered pairs weighted 1 / (m_u - 1)), n_c its margins, n the number of pairable values
    and d the squared distance of the level: nominal 1[c != k]; ordinal
    (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2 over the value order; interval (c - k)^2;
    ratio ((c - k) / (c + k))^2.

    Args:
        reliability_data: Coders x units; None or NaN where a coder did not code a unit.
            Values are labels (nominal) or numbers (the other levels; ordinal also takes
            labels ordered by `value_domain`).
        level_of_measurement: "nominal", "ordinal", "interval" or "ratio".
        value_domain: The possible values in order (ordinal labels; default: sorted values).

    Returns:
        A value <= 1: 1 perfect reliability, 0 agreement at chance level, below 0 systematic
        disagreement.

    Undefined: None when every pairable value is the same (D_e = 0).

    Raises:
        ScoringError: Unknown level, ragged rows, fewer than two coders, no unit with two
            values, or non-numeric values for interval/ratio.

    References:
        Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability"; METRICS.md D.

    Example:
        >>> krippendorff_alpha([["a", "a", "b"], ["a", "a", "b"]])
        1.0
    """
    function = "krippendorff_alpha"
    check_choice(
        function, "level_of_measurement", level_of_measurement,
        ("nominal", "ordinal", "interval", "ratio"),
    )  # fmt: skip
    rows = (
        [list(r) for r in np.asarray(reliability_data, dtype=object)]
        if isinstance(reliability_data, np.ndarray)
        else [list(r) for r in reliability_data]
    )
    if len(rows) < 2:
        raise ScoringError(f"{function}: needs at least two coders; got {len(rows)}.")
    widths = {len(r) for r in rows}
    if len(widths) > 1:
        raise ScoringError(
            f"{function}: every coder needs one entry per unit (None when missing); found rows "
            f"of lengths {sorted(widths)}."
        )
    n_units = widths.pop()
    flat = [v for r in rows for v in r]
    if level_of_measurement in ("interval", "ratio") or (
        level_of_measurement == "ordinal" and value_domain is None
    ):
        bad = [v for v in flat if not is_missing(v) and not _is_number(v)]
        if bad:
            raise ScoringError(
                f"{function}: level {level_of_measurement!r} needs numbers; got {bad[0]!r}. "
                "Pass value_domain for ordered labels, or use level 'nominal'."
            )
    (codes,), domain = encode_labels(flat, categories=value_domain)
    k = len(domain)
    unit = np.tile(np.arange(n_units), len(rows))
    keep = codes >= 0
    counts = np.bincount(unit[keep] * max(k, 1) + codes[keep], minlength=n_units * max(k, 1))
    counts = counts.reshape(n_units, max(k, 1)).astype(np.float64)
    pairable = counts.sum(axis=1) >= 2
    if not pairable.any():
        raise ScoringError(f"{function}: no unit has values from two coders; nothing to compare.")
    coincidence = coincidences(counts[pairable])
    values = (
        np.asarray(domain, dtype=np.float64)
        if level_of_measurement != "nominal"
        and (value_domain is None or all(_is_number(v) for v in domain))
        else np.arange(k, dtype=np.float64)
    )
    alpha = alpha_from_coincidences(coincidence, distance_function(level_of_measurement, values))
    return None if np.isnan(alpha) else float(alpha)


def coincidences(counts: FloatArray) -> FloatArray:
    """Coincidence matrix o (k x k) from units x values counts (units with >= 2 values)."""
    weight = 1.0 / (counts.sum(axis=1) - 1.0)
    o: FloatArray = (counts * weight[:, None]).T @ counts
    o[np.diag_indices_from(o)] -= (counts * weight[:, None]).sum(axis=0)
    return o


def alpha_from_coincidences(coincidence: FloatArray, distance: Any) -> FloatArray:
    """Alpha of coincidence matrices (..., k, k); `distance(margins)` gives d (..., k, k)."""
    margins = coincidence.sum(axis=-1)
    n = margins.sum(axis=-1)
    d = distance(margins)
    observed = (coincidence * d).sum(axis=(-2, -1))
    expected = (margins[..., :, None] * margins[..., None, :] * d).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1.0 - (n - 1.0) * observed / expected
    return np.where(expected > 0, alpha, np.nan)


def distance_function(level: str, values: FloatArray) -> Any:
    """The squared-distance function of a level over the value order `values`.

    The result maps the margins n_c (..., k) to the distance matrix d (..., k, k); only the
    ordinal distance depends on the margins.
    """
    c, k = values[:, None], values[None, :]
    if level == "nominal":
        fixed = (c != k).astype(np.float64)
        return lambda margins: fixed
    if level == "interval":
        fixed = (c - k) ** 2
        return lambda margins: fixed
    if level == "ratio":
        total = c + k
        fixed = np.divide(c - k, total, out=np.zeros_like(total), where=total != 0) ** 2
        return lambda margins: fixed

    def ordinal(margins: FloatArray) -> FloatArray:
        cum = np.cumsum(margins, axis=-1)
        idx = np.arange(margins.shape[-1])
        lo, hi = np.minimum.outer(idx, idx), np.maximum.outer(idx, idx)
        between = cum[..., hi] - cum[..., lo] + margins[..., lo]
        return (between - (margins[..., lo] + margins[..., hi]) / 2.0) ** 2

    return ordinal


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
