"""Self-consistency of a judge asked k times per row (temperature > 0): does it agree with itself?

The k answers of a row are treated as k coders of one unit: Fleiss' kappa, Krippendorff's alpha,
the share of unanimous rows and the flip rate, each with a bootstrap interval over rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.agreement import alpha_from_coincidences, distance_function
from meta_evaluator.stats.bootstrap import percentile_interval, weight_chunks
from meta_evaluator.stats.checks import check_interval, encode_labels
from meta_evaluator.stats.majority import majority_of_codes

__all__ = ["SCORES", "majority_labels", "self_consistency", "self_consistency_statistic"]

FloatArray = npt.NDArray[np.float64]

#: The scores `self_consistency` gives, each with an interval.
SCORES = ("fleiss_kappa", "krippendorff_alpha", "unanimous_share", "flip_rate")


def self_consistency(
    samples: Sequence[Sequence[Any]],
    *,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """How far a judge agrees with itself over k answers per row, with intervals over rows.

    Formula: with n_ic the answers of row i that are label c and m_i = sum_c n_ic, over rows
    with m_i >= 2:
    flip_rate = mean_i (1 - sum_c n_ic (n_ic - 1) / (m_i (m_i - 1))), the share of
    disagreeing pairs among the row's pairs of answers; unanimous_share = mean_i 1[max_c n_ic
    = m_i]; krippendorff_alpha: nominal alpha with the k answers as coders (every row with two
    answers or more is a unit). fleiss_kappa: Fleiss' kappa over the rows with all k answers.
    Intervals: percentile bootstrap over rows (`numpy.random.default_rng(seed)`, rows drawn
    with replacement, every score recomputed on the same draws).

    Args:
        samples: Rows x k labels (k >= 2); None (or NaN) where an answer is missing.
        n_resamples: Bootstrap resamples (0: no intervals).
        confidence_level: Of the intervals, in (0, 1).
        seed: Of the resampling.

    Returns:
        The four `SCORES` (None where undefined), `intervals` (score -> (low, high)), and
        `rows`, `rows_used` (m_i >= 2), `complete_rows` (m_i = k), `samples_per_row` (k).
        kappa and alpha are 1 for a judge that always repeats itself and about 0 for one
        answering at random; unanimous_share 1 and flip_rate 0 are full consistency.

    Undefined: every score is None without a row of two answers; fleiss_kappa without a
    complete row; kappa and alpha when a single label is ever given (chance agreement 1).

    Raises:
        ScoringError: Ragged rows, fewer than two samples per row, or bad bootstrap options.

    References:
        Fleiss (1971), doi:10.1037/h0031619; Krippendorff (2011); Wang et al. (2023),
        "Self-Consistency Improves Chain of Thought Reasoning", arXiv:2203.11171.

    Example:
        >>> found = self_consistency([["a", "a", "a"], ["a", "b", "a"], ["b", "b", None]],
        ...                          n_resamples=0)
        >>> found["unanimous_share"], round(found["flip_rate"], 4)
        (0.6666666666666666, 0.2222)
    """
    function = "self_consistency"
    check_interval(function, "n_resamples", n_resamples, 0, np.inf, closed="left", integer=True)
    check_interval(function, "confidence_level", confidence_level, 0.0, 1.0)
    counts, k = _counts(function, samples)
    parts = _Parts(counts, k)
    scores = {
        name: _number(value[0]) for name, value in parts.scores(np.ones((1, len(counts)))).items()
    }
    intervals: dict[str, tuple[float | None, float | None]] = {}
    if n_resamples and len(counts):
        resampled = [parts.scores(w) for w in weight_chunks(len(counts), n_resamples, seed)]
        for name in SCORES:
            values = np.concatenate([r[name] for r in resampled])
            intervals[name] = percentile_interval(values, confidence_level)
    return {
        **scores,
        "intervals": intervals,
        "rows": len(counts),
        "rows_used": int(parts.used.sum()),
        "complete_rows": int(parts.complete.sum()),
        "samples_per_row": k,
    }


def self_consistency_statistic(
    samples: Sequence[Sequence[Any]],
) -> Callable[[FloatArray], dict[str, FloatArray]]:
    """The `SCORES` of `self_consistency` as a function of row weights (resamples x rows).

    What its intervals resample: weights of ones give the scores, a resample's counts of each
    row give that resample's (NaN where undefined). For a caller that draws the rows itself,
    such as compare's bootstrap shared by every score of a metric.

    Raises:
        ScoringError: As `self_consistency`.

    Example:
        >>> scores = self_consistency_statistic([["a", "a"], ["a", "b"], ["b", "b"]])
        >>> [float(v) for v in scores(np.array([[1.0, 1.0, 1.0], [2.0, 0.0, 1.0]]))["flip_rate"]]
        [0.3333333333333333, 0.0]
    """
    counts, k = _counts("self_consistency_statistic", samples)
    return _Parts(counts, k).scores


def majority_labels(samples: Sequence[Sequence[Any]]) -> list[Any]:
    """Per row, the most frequent of its answers; ties go to the largest label (METRICS.md F).

    None for a row without answers. The humans' majority rule (`stats.majority`), here over a
    row's answers laid out row by row.

    Example:
        >>> majority_labels([["a", "b", "b"], ["a", "b", None], [None, None, None]])
        ['b', 'b', None]
    """
    rows = [list(r) for r in samples]
    flat = [v for r in rows for v in r]
    width = len(rows[0]) if rows else 0
    if any(len(r) != width for r in rows):
        raise ScoringError("majority_labels: every row needs the same number of samples.")
    (codes,), categories = encode_labels(flat)
    table = codes.reshape(len(rows), width) if rows else np.empty((0, 0), np.int64)
    best = majority_of_codes(table, len(categories))
    return [categories[b] if b >= 0 else None for b in best]


class _Parts:
    """Per-row pieces of every score, so a weighted sum over rows gives the scores of a resample."""

    def __init__(self, counts: FloatArray, k: int) -> None:
        m = counts.sum(axis=1)
        self.used = m >= 2
        self.complete = m == k
        self.k = k
        pairs = np.where(self.used, m * (m - 1), 1.0)
        agree = (counts * (counts - 1)).sum(axis=1)
        self.flip = np.where(self.used, 1.0 - agree / pairs, 0.0)
        self.unanimous = (self.used & (counts.max(axis=1, initial=0) == m)).astype(np.float64)
        self.fleiss_item = np.where(self.complete, agree / max(k * (k - 1), 1), 0.0)
        self.complete_counts = counts * self.complete[:, None]
        # each row's coincidences, flattened: (n n^T - diag(n)) / (m - 1), rows with m >= 2
        c = counts.shape[1]
        scale = np.where(self.used, 1.0 / np.where(self.used, m - 1, 1), 0.0)
        outer = counts[:, :, None] * counts[:, None, :]
        outer[:, np.arange(c), np.arange(c)] -= counts
        self.coincidences = (outer * scale[:, None, None]).reshape(len(counts), c * c)
        self.c = c
        self.distance = distance_function("nominal", np.arange(c, dtype=np.float64))

    def scores(self, weights: FloatArray) -> dict[str, FloatArray]:
        """Every score for each row of `weights` (resamples x rows)."""
        used = weights @ self.used.astype(np.float64)
        complete = weights @ self.complete.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            flip = np.where(used > 0, (weights @ self.flip) / used, np.nan)
            unanimous = np.where(used > 0, (weights @ self.unanimous) / used, np.nan)
            p_bar = (weights @ self.fleiss_item) / complete
            p_cat = (weights @ self.complete_counts) / (complete * self.k)[:, None]
            p_e = (p_cat**2).sum(axis=1)
            kappa = np.where(
                (complete > 0) & (p_e < 1.0 - 1e-12), (p_bar - p_e) / (1.0 - p_e), np.nan
            )
        o = (weights @ self.coincidences).reshape(len(weights), self.c, self.c)
        alpha = np.where(used > 0, alpha_from_coincidences(o, self.distance), np.nan)
        return {
            "fleiss_kappa": kappa,
            "krippendorff_alpha": alpha,
            "unanimous_share": unanimous,
            "flip_rate": flip,
        }


def _counts(function: str, samples: Sequence[Sequence[Any]]) -> tuple[FloatArray, int]:
    """Rows x labels counts of the answers, and k."""
    rows = [list(r) for r in samples]
    widths = {len(r) for r in rows}
    if len(widths) > 1:
        raise ScoringError(
            f"{function}: every row needs one entry per sample (None when missing); found rows "
            f"of lengths {sorted(widths)}."
        )
    k = widths.pop() if widths else 2
    if k < 2:
        raise ScoringError(f"{function}: needs at least two samples per row; got {k}.")
    (codes,), categories = encode_labels([v for r in rows for v in r])
    c = max(len(categories), 1)
    row = np.repeat(np.arange(len(rows)), k)
    keep = codes >= 0
    counts = np.bincount(row[keep] * c + codes[keep], minlength=len(rows) * c)
    return counts.reshape(len(rows), c).astype(np.float64), k


def _number(value: Any) -> float | None:
    return None if np.isnan(value) else float(value)
