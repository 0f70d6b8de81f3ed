"""Pairwise preference votes: how strongly the annotations follow a trait (METRICS.md A).

A vote says which of two texts an annotator prefers: `text_a` or `text_b` (also written `a`
and `b`). Anything else (tie, both, neither, invalid, missing) is *not applicable*. An
annotator X is compared with a reference R (usually the human preference) on the pairs where R
voted: Agree = X voted and equals R, Disagree = X voted otherwise, NA = the rest.

strength = Cohen's kappa with chance agreement 0.5 x relevance = 2 (accuracy - 0.5) x relevance:
+1 when X always votes and always agrees (the data rewards the trait), -1 when it always
disagrees, 0 when it never votes or agrees at chance.

References: Findeis et al., "Feedback Forensics" (2025), https://github.com/rdnfn/feedback-forensics;
METRICS.md A and G.1-G.7.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.checks import (
    check_interval,
    check_same_length,
    encode_labels,
    is_missing,
)

__all__ = [
    "AGREE",
    "DISAGREE",
    "NOT_APPLICABLE",
    "STRENGTH_PERCENTILES",
    "annotator_metrics",
    "binomial_p_value",
    "dataset_statistics",
    "dedupe",
    "metrics_from_counts",
    "normalize_vote",
    "normalize_votes",
    "outcome_codes",
    "strength_bootstrap_interval",
    "strength_interval",
]

#: Outcome codes of a vote against the reference.
NOT_APPLICABLE, AGREE, DISAGREE = 0, 1, 2
#: The percentiles `strength_interval` reports.
STRENGTH_PERCENTILES = (2.5, 5.0, 95.0, 97.5)

_VOTES = {"text_a": "text_a", "text_b": "text_b", "a": "text_a", "b": "text_b"}
IntArray = npt.NDArray[np.int64]


def normalize_vote(vote: Any) -> str | None:
    """`text_a` or `text_b` for a valid vote (`a`/`b` too, any case, trimmed); else None."""
    if is_missing(vote) or not isinstance(vote, str):
        return None
    return _VOTES.get(vote.strip().casefold())


def normalize_votes(votes: Sequence[Any]) -> list[str | None]:
    """`normalize_vote` of each vote."""
    return [normalize_vote(v) for v in votes]


def _codes(votes: Sequence[Any]) -> IntArray:
    """0 for text_a, 1 for text_b, -1 not applicable."""
    table = {"text_a": 0, "text_b": 1}
    return np.fromiter(
        (table.get(normalize_vote(v) or "", -1) for v in votes), dtype=np.int64, count=len(votes)
    )


def dedupe(
    comparison_id: Sequence[Any] | None,
    n: int,
    *,
    order: Sequence[float] | npt.NDArray[Any] | None = None,
) -> npt.NDArray[np.bool_]:
    """Rows to keep: the first row of each comparison id (METRICS.md A.2, G.5).

    "First" is the smallest `order` (the rows' places in the data), else the first in the
    sequence. A row without an id (None or NaN) is kept: it repeats no other. Without
    `comparison_id` every row is kept.

    Raises:
        ScoringError: `comparison_id` or `order` is not of length `n`.

    Example:
        >>> dedupe(["x", "y", "x", None, None], 5).tolist()
        [True, True, False, True, True]
        >>> dedupe(["x", "y", "x"], 3, order=[2, 0, 1]).tolist()
        [False, True, True]
    """
    keep = np.ones(n, dtype=bool)
    if comparison_id is None:
        return keep
    lengths: dict[str, Any] = {"rows": range(n), "comparison_id": comparison_id}
    if order is not None:
        lengths["order"] = order
    check_same_length("dedupe", **lengths)
    (codes,), _ = encode_labels(comparison_id)
    rank = np.arange(n) if order is None else np.asarray(order, dtype=np.float64)
    by_id = np.lexsort((np.arange(n), rank, codes))  # each id's rows, first one first
    first = np.ones(n, dtype=bool)
    first[1:] = codes[by_id][1:] != codes[by_id][:-1]
    keep[by_id] = first | (codes[by_id] < 0)
    return keep


def outcome_codes(
    votes: Sequence[Any], reference: Sequence[Any], comparison_id: Sequence[Any] | None = None
) -> tuple[IntArray, IntArray, IntArray]:
    """Per pair with a valid reference vote: the outcome (NA/AGREE/DISAGREE), X's and R's vote.

    Rows are deduplicated on `comparison_id` (first kept) before anything else.
    """
    n = check_same_length("preference", votes=votes, reference=reference)
    if comparison_id is not None:
        check_same_length("preference", votes=votes, comparison_id=comparison_id)
    keep = dedupe(comparison_id, n)
    x, r = _codes(votes)[keep], _codes(reference)[keep]
    valid_r = r >= 0
    x, r = x[valid_r], r[valid_r]
    outcome = np.where(x < 0, NOT_APPLICABLE, np.where(x == r, AGREE, DISAGREE))
    return outcome.astype(np.int64), x, r


def metrics_from_counts(
    agreed: Any, disagreed: Any, not_applicable: Any, *, chance_agreement: float = 0.5
) -> dict[str, Any]:
    """Agreement, accuracy, relevance, kappa (fixed chance agreement) and strength from counts.

    Works on numbers or on arrays of counts (one resample per element). Undefined values are
    NaN here (None in `annotator_metrics`); accuracy with no valid vote is 0.5 (FF's
    convention, METRICS.md G.3), so kappa is then 0.
    """
    a = np.asarray(agreed, dtype=np.float64)
    d = np.asarray(disagreed, dtype=np.float64)
    na = np.asarray(not_applicable, dtype=np.float64)
    n = a + d + na
    voted = a + d
    with np.errstate(invalid="ignore", divide="ignore"):
        agreement = np.where(n > 0, a / n, np.nan)
        relevance = np.where(n > 0, voted / n, np.nan)
        accuracy = np.where(voted > 0, a / voted, 0.5)
    kappa = (accuracy - chance_agreement) / (1.0 - chance_agreement)
    return {
        "agreement": agreement,
        "accuracy": accuracy,
        "relevance": relevance,
        "cohens_kappa": kappa,
        "strength": kappa * relevance,
    }


def annotator_metrics(
    votes: Sequence[Any],
    reference: Sequence[Any],
    *,
    comparison_id: Sequence[Any] | None = None,
    chance_agreement: float = 0.5,
) -> dict[str, Any]:
    """How annotator X's votes relate to the reference R's, pair by pair (METRICS.md A.3).

    Formula: over the N pairs where R voted (after dedupe on `comparison_id`):
    agreement = Agree / N; accuracy = Agree / (Agree + Disagree) (0.5 when X never voted);
    relevance = (Agree + Disagree) / N; cohens_kappa = (accuracy - p_e) / (1 - p_e) with
    p_e = `chance_agreement`; strength = cohens_kappa x relevance;
    cohens_kappa_estimated = Cohen's kappa with estimated chance agreement on the pairs where
    both voted (as scikit-learn with labels text_a, text_b); p_value = one-sided binomial
    test, in the observed direction, of Agree out of Agree + Disagree at 0.5 (1.0 without votes).

    Args:
        votes: X's votes, one per pair.
        reference: R's votes, same length.
        comparison_id: Pair ids; repeated ids keep their first row.
        chance_agreement: p_e of cohens_kappa and strength, in (0, 1).

    Returns:
        A dict with the metrics above and the counts `num_pairs` (N), `agreed`, `disagreed`,
        `not_applicable`. strength lies in [-1, 1].

    Undefined: agreement, relevance and strength are None when N = 0 (accuracy stays 0.5 and
    cohens_kappa 0, as whenever X has no valid vote); cohens_kappa_estimated is None when X
    never voted or its chance agreement is 1.

    Raises:
        ScoringError: Lengths differ, or chance_agreement outside (0, 1).

    Example:
        >>> m = annotator_metrics(["a", "b", "tie", "a"], ["text_a", "text_a", "text_b", "b"])
        >>> m["agreed"], m["disagreed"], m["not_applicable"], m["strength"]
        (1, 2, 1, -0.25)
    """
    check_interval("annotator_metrics", "chance_agreement", chance_agreement, 0.0, 1.0)
    outcome, x, r = outcome_codes(votes, reference, comparison_id)
    counts = np.bincount(outcome, minlength=3)
    na, a, d = int(counts[NOT_APPLICABLE]), int(counts[AGREE]), int(counts[DISAGREE])
    values = metrics_from_counts(a, d, na, chance_agreement=chance_agreement)
    n = a + d + na
    out: dict[str, Any] = {"num_pairs": n, "agreed": a, "disagreed": d, "not_applicable": na}
    for key, value in values.items():
        out[key] = None if np.isnan(value) else float(value)
    out["cohens_kappa_estimated"] = _estimated_kappa(x, r)
    out["p_value"] = binomial_p_value(a, d)
    return out


def _estimated_kappa(x: IntArray, r: IntArray) -> float | None:
    both = x >= 0
    m = int(both.sum())
    if m == 0:
        return None
    xs, rs = x[both], r[both]
    p_o = float(np.mean(xs == rs))
    p_x = np.bincount(xs, minlength=2) / m
    p_r = np.bincount(rs, minlength=2) / m
    p_e = float(np.sum(p_x * p_r))
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1.0 - p_e)


def binomial_p_value(agreed: int, disagreed: int) -> float:
    """Binomial test of `agreed` out of `agreed + disagreed` at 0.5, in the observed direction.

    `greater` when agreed > disagreed, else `less` (Feedback Forensics 0.5.0); 1.0 without votes.
    """
    from scipy.stats import binomtest  # type: ignore[import-untyped]

    total = agreed + disagreed
    if total == 0:
        return 1.0
    direction = "greater" if agreed > disagreed else "less"
    return float(binomtest(agreed, total, 0.5, alternative=direction).pvalue)


def strength_interval(
    votes: Sequence[Any],
    reference: Sequence[Any],
    n_resamples: int = 10000,
    seed: int = 0,
    *,
    comparison_id: Sequence[Any] | None = None,
    chance_agreement: float = 0.5,
) -> dict[str, float]:
    """Percentiles 2.5, 5, 95 and 97.5 of strength under multinomial resampling of the counts.

    Feedback Forensics 0.5.0's procedure (METRICS.md A.4.2), seeded: add 1 to each of Agree,
    Disagree and NA, draw `n_resamples` multinomial(total, counts / total) vectors from
    `numpy.random.default_rng(seed)`, compute strength per draw (kappa 0 when a draw has no
    vote) and take the percentiles. Keys "2.5", "5", "95", "97.5".

    Raises:
        ScoringError: Lengths differ or an argument is out of range.
    """
    found = _interval_counts(
        "strength_interval", votes, reference, comparison_id, n_resamples, chance_agreement
    )
    # FF's order (agree, disagree, not applicable), so a seed gives FF's own draws
    counts = np.array([found[AGREE], found[DISAGREE], found[NOT_APPLICABLE]], np.float64) + 1.0
    total = counts.sum()
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(int(total), counts / total, size=n_resamples)
    strength = metrics_from_counts(
        draws[:, 0], draws[:, 1], draws[:, 2], chance_agreement=chance_agreement
    )["strength"]
    values = np.percentile(strength, STRENGTH_PERCENTILES)
    return {f"{p:g}": float(v) for p, v in zip(STRENGTH_PERCENTILES, values, strict=True)}


def strength_bootstrap_interval(
    votes: Sequence[Any],
    reference: Sequence[Any],
    *,
    n_resamples: int = 10000,
    confidence_level: float = 0.95,
    seed: int = 0,
    comparison_id: Sequence[Any] | None = None,
    chance_agreement: float = 0.5,
) -> tuple[float | None, float | None]:
    """Paired percentile bootstrap interval of strength, resampling pairs (METRICS.md A.4.1).

    Strength depends on the pairs only through the counts of the five kinds of pair (X voted
    a or b, R voted a or b, or X did not vote), so drawing n pairs with replacement is drawing
    these counts from multinomial(n, observed shares): the draws are made that way, which is
    the same bootstrap distribution at a cost independent of n.

    Returns:
        (low, high), None for both when no pair has a reference vote.

    Raises:
        ScoringError: Lengths differ or an argument is out of range.
    """
    function = "strength_bootstrap_interval"
    check_interval(function, "confidence_level", confidence_level, 0.0, 1.0)
    counts = _interval_counts(
        function, votes, reference, comparison_id, n_resamples, chance_agreement
    ).astype(np.float64)
    n = int(counts.sum())
    if n == 0:
        return None, None
    draws = np.random.default_rng(seed).multinomial(n, counts / n, size=n_resamples)
    strength = metrics_from_counts(
        draws[:, AGREE], draws[:, DISAGREE], draws[:, NOT_APPLICABLE],
        chance_agreement=chance_agreement,
    )["strength"]  # fmt: skip
    tail = (1.0 - confidence_level) / 2.0 * 100.0
    low, high = np.percentile(strength, [tail, 100.0 - tail])
    return float(low), float(high)


def _interval_counts(
    function: str,
    votes: Sequence[Any],
    reference: Sequence[Any],
    comparison_id: Sequence[Any] | None,
    n_resamples: int,
    chance_agreement: float,
) -> IntArray:
    """The checks both strength intervals open with, then the count of each outcome code."""
    check_interval(function, "n_resamples", n_resamples, 1, float("inf"), closed="left",
                   integer=True)  # fmt: skip
    check_interval(function, "chance_agreement", chance_agreement, 0.0, 1.0)
    outcome, _, _ = outcome_codes(votes, reference, comparison_id)
    return np.bincount(outcome, minlength=3)


def dataset_statistics(
    text_a: Sequence[Any],
    text_b: Sequence[Any],
    preferred: Sequence[Any],
    comparison_id: Sequence[Any] | None = None,
) -> dict[str, Any]:
    """General statistics of a preference dataset, on the pairs with a valid preference (A.5).

    Returns:
        `num_pairs`; `prop_preferring_text_a`; `avg_len_text_a`, `avg_len_text_b`,
        `avg_len_preferred`, `avg_len_rejected` (characters, Python `len`);
        `prop_preferring_longer` over pairs of unequal length, and `num_equal_length_pairs`
        left out of it. None where undefined (no pair; no unequal pair).

    Raises:
        ScoringError: Lengths differ.

    Example:
        >>> dataset_statistics(["aa", "b"], ["a", "bb"], ["text_a", "a"])["prop_preferring_longer"]
        0.5
    """
    n = check_same_length("dataset_statistics", text_a=text_a, text_b=text_b, preferred=preferred)
    if comparison_id is not None:
        check_same_length("dataset_statistics", text_a=text_a, comparison_id=comparison_id)
    keep = dedupe(comparison_id, n)
    pref = _codes(preferred)
    rows = [i for i in range(n) if keep[i] and pref[i] >= 0]
    if not rows:
        return {
            "num_pairs": 0, "prop_preferring_text_a": None, "avg_len_text_a": None,
            "avg_len_text_b": None, "avg_len_preferred": None, "avg_len_rejected": None,
            "prop_preferring_longer": None, "num_equal_length_pairs": 0,
        }  # fmt: skip
    len_a = np.array([len(_text(text_a[i])) for i in rows], dtype=np.float64)
    len_b = np.array([len(_text(text_b[i])) for i in rows], dtype=np.float64)
    chose_a = pref[rows] == 0
    preferred_len = np.where(chose_a, len_a, len_b)
    rejected_len = np.where(chose_a, len_b, len_a)
    unequal = len_a != len_b
    longer_chosen = preferred_len > rejected_len
    return {
        "num_pairs": len(rows),
        "prop_preferring_text_a": float(chose_a.mean()),
        "avg_len_text_a": float(len_a.mean()),
        "avg_len_text_b": float(len_b.mean()),
        "avg_len_preferred": float(preferred_len.mean()),
        "avg_len_rejected": float(rejected_len.mean()),
        "prop_preferring_longer": float(longer_chosen[unequal].mean()) if unequal.any() else None,
        "num_equal_length_pairs": int((~unequal).sum()),
    }


def _text(value: Any) -> str:
    if is_missing(value):
        raise ScoringError("dataset_statistics: a text of a pair with a preference is missing.")
    return str(value)
