"""Label drift between two runs of one judge over the same rows: did its answers shift?

Pure: two aligned label sequences in (None where a run has no label), numbers out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.checks import check_interval, check_same_length, encode_labels

__all__ = ["PSI_FLOOR", "label_shift", "population_stability_index"]

FloatArray = npt.NDArray[np.float64]

#: The share put in place of 0 in the population stability index (a label one run never gave).
PSI_FLOOR = 1e-4


def label_shift(before: Sequence[Any], after: Sequence[Any]) -> dict[str, Any]:
    """How the label distribution of a judge moved between two runs over the same rows.

    Formula: over the n rows both runs labelled, with a_c and b_c the counts of label c:
    chi_square = Pearson's statistic of the 2 x k table [a; b] (homogeneity, k - 1 degrees of
    freedom, p from the chi-square distribution; it treats the runs as independent samples);
    stuart_maxwell = d^T S^-1 d with d_c = a_c - b_c and S the covariance of d under marginal
    homogeneity for paired labels (S_cc = n_c. + n_.c - 2 n_cc, S_cd = -(n_cd + n_dc)), over
    the labels that changed on some row less one (the test for the same rows labelled twice;
    a label no row moved to or from adds nothing to d and a null row to S);
    psi = sum_c (q_c - p_c) ln(q_c / p_c), with p and q the two runs' shares (a share of 0
    counts as `PSI_FLOOR`);
    changed_share = rows whose label differs / n.

    Args:
        before: The earlier run's label per row (None: no label).
        after: The later run's label per row, aligned with `before`.

    Returns:
        `rows` (n), `labels` (the k labels, sorted), `counts_before`, `counts_after`,
        `changed`, `changed_share`, `chi_square`, `chi_square_df`, `chi_square_p_value`,
        `stuart_maxwell`, `stuart_maxwell_df`, `stuart_maxwell_p_value`, `psi`. PSI below 0.1 is
        read as no shift, 0.1-0.25 as a moderate one, above 0.25 as a major one.

    Undefined: everything but the counts is None without a row labelled by both runs; the
    tests are None with a single label (nothing can shift); Stuart-Maxwell's also when fewer
    than two labels changed on any row (every row kept its label: no change to test).

    Raises:
        ScoringError: Inputs of different lengths.

    References:
        Pearson (1900); Stuart (1955), doi:10.1093/biomet/42.3-4.412; Maxwell (1970); Yurdakul
        (2018), "Statistical properties of population stability index"; as scipy
        `chi2_contingency(correction=False)` and statsmodels
        `SquareTable(table, shift_zeros=False).homogeneity()`.

    Example:
        >>> found = label_shift(["a", "a", "b", "b"], ["a", "b", "b", "b"])
        >>> found["changed_share"], found["counts_after"]
        (0.25, [1, 3])
    """
    function = "label_shift"
    check_same_length(function, before=before, after=after)
    (a, b), labels = encode_labels(list(before), list(after))
    both = (a >= 0) & (b >= 0)
    a, b = a[both], b[both]
    n, k = int(both.sum()), len(labels)
    table = np.zeros((k, k), dtype=np.float64)  # rows: before, columns: after
    np.add.at(table, (a, b), 1.0)
    counts_before, counts_after = table.sum(axis=1), table.sum(axis=0)
    found: dict[str, Any] = {
        "rows": n,
        "labels": labels,
        "counts_before": [int(c) for c in counts_before],
        "counts_after": [int(c) for c in counts_after],
        "changed": int(n - np.trace(table)),
        "changed_share": float((n - np.trace(table)) / n) if n else None,
        "chi_square": None,
        "chi_square_df": None,
        "chi_square_p_value": None,
        "stuart_maxwell": None,
        "stuart_maxwell_df": None,
        "stuart_maxwell_p_value": None,
        "psi": population_stability_index(counts_before, counts_after) if n else None,
    }
    if n == 0 or k < 2:
        return found
    from scipy.special import chdtrc  # type: ignore[import-untyped]

    observed = np.vstack([counts_before, counts_after])
    used = observed.sum(axis=0) > 0
    observed = observed[:, used]
    expected = observed.sum(axis=1, keepdims=True) * observed.sum(axis=0) / observed.sum()
    chi = float(((observed - expected) ** 2 / expected).sum())
    df = observed.shape[1] - 1
    if df >= 1:
        found.update(chi_square=chi, chi_square_df=df, chi_square_p_value=float(chdtrc(df, chi)))
    # Stuart-Maxwell on the labels that changed at all: a label every row kept (no count off
    # the diagonal) adds a zero row and column to S, which then has no inverse
    moved = (table.sum(axis=0) + table.sum(axis=1) - 2 * np.diag(table)) > 0
    changed = table[np.ix_(moved, moved)]
    j = int(moved.sum())
    if j >= 2:
        before_j, after_j = changed.sum(axis=1), changed.sum(axis=0)
        d = (before_j - after_j)[:-1]
        s = -(changed + changed.T)
        s[np.diag_indices(j)] = before_j + after_j - 2 * np.diag(changed)
        s = s[:-1, :-1]
        if np.linalg.matrix_rank(s) == j - 1:
            statistic = float(d @ np.linalg.solve(s, d))
            found.update(
                stuart_maxwell=statistic,
                stuart_maxwell_df=j - 1,
                stuart_maxwell_p_value=float(chdtrc(j - 1, statistic)),
            )
    return found


def population_stability_index(
    counts_before: Sequence[float] | FloatArray,
    counts_after: Sequence[float] | FloatArray,
    *,
    floor: float = PSI_FLOOR,
) -> float | None:
    """The population stability index of two count vectors over the same categories.

    Formula: PSI = sum_c (q_c - p_c) ln(q_c / p_c), p and q the shares of each count vector,
    a share of 0 replaced by `floor`.

    Returns:
        A value >= 0: 0 for equal distributions.

    Undefined: None when either vector sums to 0.

    Raises:
        ScoringError: Vectors of different lengths, or a count that is negative or not finite.

    Example:
        >>> round(population_stability_index([50, 50], [60, 40]), 4)
        0.0405
    """
    check_interval("population_stability_index", "floor", floor, 0.0, 1.0)
    p = np.asarray(counts_before, dtype=np.float64)
    q = np.asarray(counts_after, dtype=np.float64)
    check_same_length("population_stability_index", counts_before=p, counts_after=q)
    for name, counts in (("counts_before", p), ("counts_after", q)):
        if not np.isfinite(counts).all() or (counts < 0).any():
            raise ScoringError(
                f"population_stability_index: {name} must be counts (finite, >= 0); got "
                f"{counts.tolist()}."
            )
    if p.sum() <= 0 or q.sum() <= 0:
        return None
    p, q = np.maximum(p / p.sum(), floor), np.maximum(q / q.sum(), floor)
    value = float(((q - p) * np.log(q / p)).sum())
    return 0.0 if math.isclose(value, 0.0, abs_tol=1e-15) else value
