"""`meta_evaluator.stats.preference` against references written here from METRICS.md A, and
against scikit-learn (`cohen_kappa_score`), scipy (`binomtest`, `bootstrap`) and Feedback
Forensics 0.5.0's `get_strength_CI` (`feedback_forensics/app/metrics.py`), re-implemented here
with a seed (METRICS.md A.4.2)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from scipy import stats as scipy_stats
from sklearn.metrics import cohen_kappa_score

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.preference import (
    annotator_metrics,
    dataset_statistics,
    dedupe,
    normalize_vote,
    normalize_votes,
    strength_bootstrap_interval,
    strength_interval,
)

TOL = 1e-12
SEEDS = range(12)
LABELS = ["text_a", "text_b"]
# What each vote drawn in the random tests means (METRICS.md A.1), spelled out by hand.
MEANING: list[tuple[Any, str | None]] = [
    ("text_a", "text_a"),
    ("text_b", "text_b"),
    ("a", "text_a"),
    ("b", "text_b"),
    (" A ", "text_a"),
    ("TEXT_B", "text_b"),
    ("tie", None),
    ("both", None),
    (None, None),
    (float("nan"), None),
]
METRIC_KEYS = (
    "agreement",
    "accuracy",
    "relevance",
    "cohens_kappa",
    "strength",
    "cohens_kappa_estimated",
    "p_value",
)


# --------------------------------------------------------------------------- references --


def meaning(vote: Any) -> str | None:
    """The valid vote `vote` stands for, by lookup in MEANING (identity for the NaN object)."""
    for raw, meant in MEANING:
        if raw is vote or (isinstance(raw, str) and raw == vote):
            return meant
    raise AssertionError(f"vote {vote!r} is not in MEANING")


def used_rows(x: list[Any], r: list[Any], ids: list[Any] | None) -> list[tuple[str | None, str]]:
    """(X's vote, R's vote) of the rows METRICS.md A.2 uses: first row per id, R valid."""
    seen: set[Any] = set()
    rows = []
    for i in range(len(x)):
        if ids is not None:
            if ids[i] in seen:
                continue
            seen.add(ids[i])
        ref = meaning(r[i])
        if ref is not None:
            rows.append((meaning(x[i]), ref))
    return rows


def sklearn_kappa(rows: list[tuple[str | None, str]]) -> float | None:
    """FF's call: cohen_kappa_score(X as str, R as str, labels=[text_a, text_b]); None where
    scikit-learn raises (X never voted) or returns nan (chance agreement 1)."""
    x_str = [str(v) for v, _ in rows]
    r_str = [v for _, v in rows]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = float(cohen_kappa_score(x_str, r_str, labels=LABELS))
    except ValueError:
        return None
    return None if math.isnan(value) else value


def reference_metrics(
    x: list[Any], r: list[Any], ids: list[Any] | None = None, p_e: float = 0.5
) -> dict[str, Any]:
    """METRICS.md A.3, literally, in plain Python."""
    rows = used_rows(x, r, ids)
    n = len(rows)
    agree = sum(1 for xv, rv in rows if xv is not None and xv == rv)
    disagree = sum(1 for xv, rv in rows if xv is not None and xv != rv)
    voted = agree + disagree
    accuracy = agree / voted if voted else 0.5
    kappa = (accuracy - p_e) / (1 - p_e)
    relevance = voted / n if n else None
    if voted:
        side = "greater" if agree > disagree else "less"
        p_value = float(scipy_stats.binomtest(k=agree, n=voted, p=0.5, alternative=side).pvalue)
    else:
        p_value = 1.0
    return {
        "num_pairs": n,
        "agreed": agree,
        "disagreed": disagree,
        "not_applicable": n - voted,
        "agreement": agree / n if n else None,
        # A.3: 0.5 whenever X has no valid vote, N = 0 included; kappa inherits it
        "accuracy": accuracy,
        "relevance": relevance,
        "cohens_kappa": kappa,
        "strength": kappa * relevance if relevance is not None else None,
        "cohens_kappa_estimated": sklearn_kappa(rows) if n else None,
        "p_value": p_value,
    }


def random_votes(seed: int, *, with_ids: bool = False) -> tuple[list[Any], list[Any], Any]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 90))
    choices = [v for v, _ in MEANING]
    # X leans towards R's vote, so the metrics take values away from 0
    r = [choices[int(i)] for i in rng.integers(0, len(choices), n)]
    x = [
        r[i] if rng.random() < 0.4 else choices[int(rng.integers(0, len(choices)))]
        for i in range(n)
    ]
    ids = [f"c{int(i)}" for i in rng.integers(0, max(1, n // 2), n)] if with_ids else None
    return x, r, ids


def assert_metrics(ours: dict[str, Any], expected: dict[str, Any]) -> None:
    for key, value in expected.items():
        if value is None:
            assert ours[key] is None, key
        elif isinstance(value, int):
            assert ours[key] == value, key
        else:
            assert ours[key] == pytest.approx(value, abs=TOL), key


# ------------------------------------------------------------------------ vote encoding --


@pytest.mark.parametrize(
    ("vote", "expected"),
    [
        ("text_a", "text_a"),
        ("text_b", "text_b"),
        ("a", "text_a"),
        ("b", "text_b"),
        ("A", "text_a"),
        ("B", "text_b"),
        ("TEXT_A", "text_a"),
        ("Text_B", "text_b"),
        ("  a  ", "text_a"),
        ("\ttext_b\n", "text_b"),
        (" TeXt_A ", "text_a"),
        (np.str_("b"), "text_b"),
        ("tie", None),
        ("TIE", None),
        ("both", None),
        ("neither", None),
        ("invalid", None),
        ("Not applicable", None),
        ("", None),
        ("aa", None),
        ("text a", None),
        ("text_c", None),
        ("c", None),
        (None, None),
        (float("nan"), None),
        (np.nan, None),
        (0, None),
        (1, None),
        (True, None),
        (b"a", None),
        (["a"], None),
        ({"a": 1}, None),
    ],
)
def test_normalize_vote(vote: Any, expected: str | None) -> None:
    """a/b/text_a/text_b in any case and with surrounding spaces are votes (METRICS.md A.1, G.6);
    everything else (tie, both, neither, invalid, missing, other strings, non-strings) is not."""
    assert normalize_vote(vote) == expected


def test_normalize_votes_is_elementwise() -> None:
    votes = ["A", "tie", None, " b", 3]
    assert normalize_votes(votes) == ["text_a", None, None, "text_b", None]


# -------------------------------------------------------------------- annotator_metrics --


@pytest.mark.parametrize("seed", SEEDS)
def test_annotator_metrics_random_votes(seed: int) -> None:
    """Every metric of METRICS.md A.3 vs the plain-Python reference, scikit-learn's
    cohen_kappa_score (labels text_a, text_b) and scipy's binomtest, within 1e-12."""
    x, r, _ = random_votes(seed)
    ours = annotator_metrics(x, r)
    assert_metrics(ours, reference_metrics(x, r))
    assert set(METRIC_KEYS) <= set(ours)


@pytest.mark.parametrize("seed", SEEDS)
def test_annotator_metrics_random_votes_with_duplicate_ids(seed: int) -> None:
    """With repeated comparison ids only the first row of each id counts (METRICS.md A.2)."""
    x, r, ids = random_votes(seed + 100, with_ids=True)
    assert_metrics(annotator_metrics(x, r, comparison_id=ids), reference_metrics(x, r, ids))


@pytest.mark.parametrize("seed", SEEDS[:6])
def test_annotator_metrics_chance_agreement(seed: int) -> None:
    """chance_agreement=0.3: cohens_kappa = (acc - 0.3) / 0.7, strength = that x relevance."""
    x, r, _ = random_votes(seed)
    ours = annotator_metrics(x, r, chance_agreement=0.3)
    expected = reference_metrics(x, r, p_e=0.3)
    assert_metrics(ours, expected)
    if expected["num_pairs"]:
        assert ours["cohens_kappa"] == pytest.approx((expected["accuracy"] - 0.3) / 0.7, abs=TOL)


def test_annotator_metrics_hand_example() -> None:
    """Agree 2, disagree 1, not applicable 2 (one of them 'tie'), one row without a reference
    vote: acc 2/3, relevance 3/5, kappa 1/3, strength 1/5."""
    x = ["text_a", "b", "a", "tie", None, "text_a"]
    r = ["text_a", "text_b", "text_b", "a", "b", "tie"]
    m = annotator_metrics(x, r)
    assert (m["num_pairs"], m["agreed"], m["disagreed"], m["not_applicable"]) == (5, 2, 1, 2)
    assert m["agreement"] == pytest.approx(2 / 5, abs=TOL)
    assert m["accuracy"] == pytest.approx(2 / 3, abs=TOL)
    assert m["relevance"] == pytest.approx(3 / 5, abs=TOL)
    assert m["cohens_kappa"] == pytest.approx(1 / 3, abs=TOL)
    assert m["strength"] == pytest.approx(1 / 5, abs=TOL)
    # binomtest(2, 3, 0.5, 'greater') = P(K >= 2) = 4/8
    assert m["p_value"] == pytest.approx(0.5, abs=TOL)


@pytest.mark.parametrize("seed", range(10))
def test_dedupe_keeps_the_first_row_of_each_id_by_order(seed: int) -> None:
    """`dedupe` against a loop: rows visited by `order` (ties: sequence order), the first of
    each id kept; rows without an id (None, NaN) always kept; ints and strings mixed."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    pool: list[Any] = ["x", "y", 3, 4.0, None, float("nan")]
    ids = [pool[int(i)] for i in rng.integers(0, len(pool), n)]
    order = rng.integers(0, 10, n).tolist() if seed % 2 else None
    visit = sorted(range(n), key=lambda i: (order[i] if order else 0, i))
    seen: set[Any] = set()
    expected = [True] * n
    for i in visit:
        value = ids[i]
        if value is None or value != value:  # NaN
            continue
        if value in seen:
            expected[i] = False
        seen.add(value)
    assert dedupe(ids, n, order=order).tolist() == expected


def test_dedupe_checks_lengths() -> None:
    with pytest.raises(ScoringError, match="order"):
        dedupe(["x", "y"], 2, order=[0])


def test_dedupe_keeps_first_row() -> None:
    """The duplicate of 'c1' disagrees where the first row agrees: only the first counts; the
    duplicate of 'c2' has a reference vote where the first has none: the pair is left out."""
    x = ["text_a", "text_b", "text_b", "text_a", "text_a"]
    r = ["text_a", "text_a", "tie", "text_a", "text_b"]
    ids = ["c1", "c1", "c2", "c2", "c3"]
    m = annotator_metrics(x, r, comparison_id=ids)
    assert (m["num_pairs"], m["agreed"], m["disagreed"], m["not_applicable"]) == (2, 1, 1, 0)
    swapped = annotator_metrics(x[1::-1] + x[2:], r[1::-1] + r[2:], comparison_id=ids)
    assert (swapped["agreed"], swapped["disagreed"]) == (0, 2)
    without_ids = annotator_metrics(x, r)
    assert without_ids["num_pairs"] == 4


def test_rows_without_reference_vote_are_not_counted() -> None:
    """Rows whose reference is tie/invalid/missing leave N, whatever X voted."""
    base_x, base_r = ["a", "b", "tie"], ["a", "a", "b"]
    extra_x = ["a", "b", "a", None, "b"]
    extra_r = ["tie", "invalid", None, float("nan"), "Not applicable"]
    base = annotator_metrics(base_x, base_r)
    more = annotator_metrics(base_x + extra_x, base_r + extra_r)
    assert more == base
    assert more["num_pairs"] == 3


def test_no_pairs() -> None:
    """N = 0: agreement, relevance, strength and the estimated kappa are None; accuracy 0.5
    and kappa 0 (X has no valid vote, A.3); p-value 1.0."""
    for x, r in (([], []), (["a", "b"], ["tie", None])):
        m = annotator_metrics(x, r)
        assert (m["num_pairs"], m["agreed"], m["disagreed"], m["not_applicable"]) == (0, 0, 0, 0)
        for key in ("agreement", "relevance", "strength", "cohens_kappa_estimated"):
            assert m[key] is None, key
        assert (m["accuracy"], m["cohens_kappa"]) == (0.5, 0.0)
        assert m["p_value"] == 1.0


def test_no_pairs_accuracy_is_half() -> None:
    assert annotator_metrics(["a"], ["tie"])["accuracy"] == 0.5


def test_annotator_never_votes() -> None:
    """X never votes: accuracy 0.5 (FF convention, G.3), kappa 0, strength 0, relevance 0,
    estimated kappa None (scikit-learn raises; FF would say 0, G.2)."""
    m = annotator_metrics(["tie", None, "both", "invalid"], ["a", "b", "text_a", "b"])
    assert m["num_pairs"] == 4 and m["not_applicable"] == 4
    assert m["accuracy"] == 0.5
    assert m["cohens_kappa"] == 0.0
    assert m["strength"] == 0.0
    assert m["relevance"] == 0.0
    assert m["agreement"] == 0.0
    assert m["cohens_kappa_estimated"] is None
    assert m["p_value"] == 1.0
    with pytest.raises(ValueError):  # the reason it is undefined
        cohen_kappa_score(
            ["tie", "None", "both", "invalid"], ["text_a", "text_b"] * 2, labels=LABELS
        )


def test_both_constant_on_the_same_side() -> None:
    """Chance agreement 1 (both always text_a): estimated kappa None (scikit-learn: nan);
    the p_e = 0.5 kappa is still defined: 1."""
    m = annotator_metrics(["a", "text_a", "A", "tie"], ["text_a", "a", "a", "a"])
    assert m["cohens_kappa_estimated"] is None
    assert m["cohens_kappa"] == 1.0
    assert m["strength"] == pytest.approx(0.75, abs=TOL)
    assert sklearn_kappa([("text_a", "text_a")] * 3) is None


def test_constant_annotator_estimated_kappa_collapses() -> None:
    """A position-biased X (always text_a) has estimated kappa 0 but a p_e = 0.5 kappa that
    follows its accuracy (the reason FF uses p_e = 0.5, METRICS.md A.3)."""
    r = ["text_a", "text_a", "text_a", "text_b"]
    m = annotator_metrics(["text_a"] * 4, r)
    assert m["cohens_kappa_estimated"] == pytest.approx(0.0, abs=TOL)
    assert m["cohens_kappa"] == pytest.approx(0.5, abs=TOL)


def test_length_mismatch_raises() -> None:
    with pytest.raises(ScoringError, match="same length"):
        annotator_metrics(["a", "b"], ["a"])
    with pytest.raises(ScoringError, match="same length"):
        annotator_metrics(["a", "b"], ["a", "b"], comparison_id=["x"])


@pytest.mark.parametrize("value", [0, 0.0, 1, 1.0, -0.5, 1.5, float("nan"), True, "0.5", None])
def test_bad_chance_agreement_raises(value: Any) -> None:
    with pytest.raises(ScoringError, match="chance_agreement"):
        annotator_metrics(["a"], ["a"], chance_agreement=value)


# ------------------------------------------------------------------- dataset_statistics --


def reference_statistics(
    a: list[str], b: list[str], pref: list[Any], ids: list[Any] | None = None
) -> dict[str, Any]:
    """METRICS.md A.5 with G.4 (equal-length pairs left out of prop_preferring_longer)."""
    seen: set[Any] = set()
    rows = []
    for i in range(len(a)):
        if ids is not None:
            if ids[i] in seen:
                continue
            seen.add(ids[i])
        p = meaning(pref[i])
        if p is not None:
            rows.append((len(a[i]), len(b[i]), p))
    n = len(rows)
    if n == 0:
        return {
            "num_pairs": 0, "prop_preferring_text_a": None, "avg_len_text_a": None,
            "avg_len_text_b": None, "avg_len_preferred": None, "avg_len_rejected": None,
            "prop_preferring_longer": None, "num_equal_length_pairs": 0,
        }  # fmt: skip
    chosen = [la if p == "text_a" else lb for la, lb, p in rows]
    rejected = [lb if p == "text_a" else la for la, lb, p in rows]
    unequal = [(la, lb, p) for la, lb, p in rows if la != lb]
    longer = [(p == "text_a") == (la > lb) for la, lb, p in unequal]
    return {
        "num_pairs": n,
        "prop_preferring_text_a": sum(p == "text_a" for *_, p in rows) / n,
        "avg_len_text_a": sum(la for la, _, _ in rows) / n,
        "avg_len_text_b": sum(lb for _, lb, _ in rows) / n,
        "avg_len_preferred": sum(chosen) / n,
        "avg_len_rejected": sum(rejected) / n,
        "prop_preferring_longer": sum(longer) / len(longer) if longer else None,
        "num_equal_length_pairs": n - len(unequal),
    }


ALPHABET = [*"abcxyz ", "é", "ß", "日", "本", "🙂", "\u0301"]


@pytest.mark.parametrize("seed", SEEDS)
def test_dataset_statistics_random(seed: int) -> None:
    """Random non-ASCII texts (many of equal length), votes with ties, duplicate ids."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))

    def text() -> str:
        return "".join(ALPHABET[int(i)] for i in rng.integers(0, len(ALPHABET), rng.integers(0, 5)))

    a = [text() for _ in range(n)]
    b = [text() for _ in range(n)]
    choices = [v for v, _ in MEANING]
    pref = [choices[int(i)] for i in rng.integers(0, len(choices), n)]
    ids = [int(i) for i in rng.integers(0, max(1, 2 * n // 3), n)]
    assert_metrics(dataset_statistics(a, b, pref), reference_statistics(a, b, pref))
    assert_metrics(
        dataset_statistics(a, b, pref, comparison_id=ids), reference_statistics(a, b, pref, ids)
    )


def test_dataset_statistics_hand_example() -> None:
    """Python `len` counts characters: 'ééé' (6 UTF-8 bytes) is shorter than 'abcd'. The equal
    pair ('xy', 'zw') is in num_equal_length_pairs, not in prop_preferring_longer (FF would count
    it as 'text_b longer', G.4); the tie and the duplicate id are left out."""
    a = ["ééé", "long text", "xy", "same", "🙂🙂", "ignored"]
    b = ["abcd", "short", "zw", "other", "abc", "x"]
    pref = ["text_b", "a", "b", "tie", "text_a", "b"]
    ids = ["p1", "p2", "p3", "p4", "p5", "p2"]
    s = dataset_statistics(a, b, pref, comparison_id=ids)
    assert s["num_pairs"] == 4
    assert s["num_equal_length_pairs"] == 1
    # longer chosen: p1 yes (4 > 3), p2 yes (9 > 5), p5 no (2 < 3)
    assert s["prop_preferring_longer"] == pytest.approx(2 / 3, abs=TOL)
    assert s["prop_preferring_text_a"] == pytest.approx(2 / 4, abs=TOL)
    assert s["avg_len_text_a"] == pytest.approx((3 + 9 + 2 + 2) / 4, abs=TOL)
    assert s["avg_len_text_b"] == pytest.approx((4 + 5 + 2 + 3) / 4, abs=TOL)
    assert s["avg_len_preferred"] == pytest.approx((4 + 9 + 2 + 2) / 4, abs=TOL)
    assert s["avg_len_rejected"] == pytest.approx((3 + 5 + 2 + 3) / 4, abs=TOL)


def test_dataset_statistics_only_equal_lengths() -> None:
    s = dataset_statistics(["ab", "c"], ["cd", "d"], ["a", "b"])
    assert s["num_pairs"] == 2
    assert s["num_equal_length_pairs"] == 2
    assert s["prop_preferring_longer"] is None


def test_dataset_statistics_no_pairs() -> None:
    """N = 0 (every preference a tie or missing): None everywhere, counts 0."""
    s = dataset_statistics(["a", "b"], ["c", "d"], ["tie", None])
    assert s == reference_statistics(["a", "b"], ["c", "d"], ["tie", None])
    assert dataset_statistics([], [], [])["num_pairs"] == 0


def test_dataset_statistics_length_mismatch_raises() -> None:
    with pytest.raises(ScoringError, match="same length"):
        dataset_statistics(["a"], ["b", "c"], ["a"])
    with pytest.raises(ScoringError, match="same length"):
        dataset_statistics(["a"], ["b"], ["a"], comparison_id=[1, 2])


# -------------------------------------------------------------------- strength_interval --


def counts_of(x: list[Any], r: list[Any]) -> tuple[int, int, int]:
    m = reference_metrics(x, r)
    return m["agreed"], m["disagreed"], m["not_applicable"]


def ff_strength_ci(
    agreed: int, disagreed: int, not_applicable: int, num_resamples: int, seed: int
) -> dict[str, float]:
    """Feedback Forensics 0.5.0 `get_strength_CI` with `default_rng(seed)` in place of the
    unseeded `default_rng()`: prior 1 on each count, multinomial over (Agree, Disagree, NA),
    kappa nan -> 0, strength = kappa x relevance, percentiles 2.5, 5, 95, 97.5."""
    og_agreed, og_disagreed, og_na = agreed + 1, disagreed + 1, not_applicable + 1
    total = og_agreed + og_disagreed + og_na
    rng = np.random.default_rng(seed)
    resamples = rng.multinomial(
        total, [og_agreed / total, og_disagreed / total, og_na / total], size=num_resamples
    )
    a, d, na = resamples[:, 0], resamples[:, 1], resamples[:, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        kappas = 2 * (a / (a + d) - 0.5)
    kappas = np.where(np.isnan(kappas), 0, kappas)
    relevance = (a + d) / (a + d + na)
    ci = np.percentile(kappas * relevance, [2.5, 5, 95, 97.5])
    return {"2.5": ci[0], "5": ci[1], "95": ci[2], "97.5": ci[3]}


@pytest.mark.parametrize("seed", [0, 5])
def test_strength_interval_equals_feedback_forensics(seed: int) -> None:
    x, r, _ = random_votes(3)
    ours = strength_interval(x, r, 2000, seed)
    assert ours == ff_strength_ci(*counts_of(x, r), 2000, seed)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_strength_interval_close_to_feedback_forensics(seed: int) -> None:
    """Whatever the draw order, the percentiles agree with FF's within Monte-Carlo error."""
    x, r = bootstrap_data(seed, n=200)
    ours = strength_interval(x, r, 20000, seed)
    ff = ff_strength_ci(*counts_of(x, r), 20000, seed + 1)
    assert list(ours) == ["2.5", "5", "95", "97.5"]
    for key in ours:
        assert ours[key] == pytest.approx(ff[key], abs=0.02), key
    assert ours["2.5"] <= ours["5"] <= ours["95"] <= ours["97.5"]


def test_strength_interval_reproducible() -> None:
    x, r, _ = random_votes(7)
    first = strength_interval(x, r, 1000, 3)
    assert strength_interval(x, r, 1000, 3) == first
    assert strength_interval(x, r, 1000, 4) != first
    assert all(isinstance(v, float) for v in first.values())


def test_strength_interval_prior_without_pairs() -> None:
    """No pair: the prior alone (1, 1, 1) still gives an interval, as FF's does."""
    ours = strength_interval([], [], 5000, 0)
    ff = ff_strength_ci(0, 0, 0, 5000, 1)
    assert ours == pytest.approx(ff, abs=0.1)
    assert ours["2.5"] < 0 < ours["97.5"]


def test_strength_interval_uses_deduped_valid_pairs() -> None:
    """Duplicate ids and rows without a reference vote do not change the counts."""
    x, r = ["a", "b", "a", "tie"], ["a", "a", "b", "b"]
    plain = strength_interval(x, r, 500, 0)
    assert strength_interval([*x, "a", "b"], [*r, "tie", None], 500, 0) == plain
    assert strength_interval([*x, "b"], [*r, "a"], 500, 0, comparison_id=[1, 2, 3, 4, 1]) == plain


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n_resamples": 0}, "n_resamples"),
        ({"n_resamples": 1.5}, "n_resamples"),
        ({"n_resamples": True}, "n_resamples"),
        ({"chance_agreement": 1.0}, "chance_agreement"),
        ({"chance_agreement": 0}, "chance_agreement"),
    ],
)
def test_strength_interval_bad_arguments(kwargs: dict[str, Any], name: str) -> None:
    with pytest.raises(ScoringError, match=name):
        strength_interval(["a"], ["a"], **kwargs)


def test_strength_interval_length_mismatch() -> None:
    with pytest.raises(ScoringError, match="same length"):
        strength_interval(["a"], ["a", "b"])


# ---------------------------------------------------------- strength_bootstrap_interval --


CODE = {"text_a": 0, "text_b": 1, None: -1}


def bootstrap_data(seed: int, n: int = 400) -> tuple[list[Any], list[Any]]:
    """n pairs, every reference vote valid; X agrees ~60%, disagrees ~15%, NA ~25%."""
    rng = np.random.default_rng(seed)
    r = [LABELS[int(i)] for i in rng.integers(0, 2, n)]
    u = rng.random(n)
    x = [
        v if ui < 0.6 else ("tie" if ui < 0.85 else LABELS[1 - LABELS.index(v)])
        for v, ui in zip(r, u, strict=True)
    ]
    return x, r


def strength_of_codes(x: np.ndarray, r: np.ndarray, axis: int = -1) -> Any:
    """Strength from vote codes (X -1/0/1, R 0/1), per row along `axis`."""
    voted = x >= 0
    agree = np.sum(voted & (x == r), axis=axis)
    disagree = np.sum(voted & (x != r), axis=axis)
    n = x.shape[axis]
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.where(agree + disagree > 0, agree / (agree + disagree), 0.5)
    return 2 * (accuracy - 0.5) * (agree + disagree) / n


def test_strength_bootstrap_interval_vs_scipy() -> None:
    """scipy.stats.bootstrap, paired, percentile, 2,000 resamples of strength computed from the
    two vote arrays: both ends within 0.03 (Monte-Carlo error)."""
    x, r = bootstrap_data(0)
    xc = np.array([CODE[normalize_vote(v)] for v in x])
    rc = np.array([CODE[normalize_vote(v)] for v in r])
    reference = scipy_stats.bootstrap(
        (xc, rc),
        lambda a, b: float(strength_of_codes(a, b)),
        paired=True,
        vectorized=False,
        method="percentile",
        n_resamples=2000,
        rng=np.random.default_rng(0),
    ).confidence_interval
    low, high = strength_bootstrap_interval(x, r, n_resamples=2000, seed=0)
    assert low is not None and high is not None
    assert low == pytest.approx(reference.low, abs=0.03)
    assert high == pytest.approx(reference.high, abs=0.03)
    point = annotator_metrics(x, r)["strength"]
    assert low < point < high


@pytest.mark.parametrize(("seed", "level"), [(1, 0.95), (2, 0.9), (3, 0.8)])
def test_strength_bootstrap_interval_vs_index_resampling(seed: int, level: float) -> None:
    """Against a vectorised resampling of pair indices, 20,000 resamples: within 0.01."""
    x, r = bootstrap_data(seed)
    xc = np.array([CODE[normalize_vote(v)] for v in x])
    rc = np.array([CODE[normalize_vote(v)] for v in r])
    rows = np.random.default_rng(seed + 1000).integers(0, len(x), (20000, len(x)))
    values = strength_of_codes(xc[rows], rc[rows], axis=1)
    tail = (1 - level) / 2 * 100
    expected = np.percentile(values, [tail, 100 - tail])
    ours = strength_bootstrap_interval(x, r, n_resamples=20000, confidence_level=level, seed=seed)
    assert ours == pytest.approx(tuple(expected), abs=0.01)


def test_strength_bootstrap_interval_ignores_rows_without_reference() -> None:
    """Rows without a reference vote (and later duplicates) are dropped before resampling."""
    x, r = bootstrap_data(4, n=100)
    plain = strength_bootstrap_interval(x, r, n_resamples=500, seed=2)
    more = strength_bootstrap_interval(
        [*x, "a", "b", "b"], [*r, "tie", None, "a"], n_resamples=500, seed=2,
        comparison_id=[*range(100), 100, 101, 0],
    )  # fmt: skip
    assert more == plain
    assert strength_bootstrap_interval(x, r, n_resamples=500, seed=3) != plain


def test_strength_bootstrap_interval_no_pairs() -> None:
    assert strength_bootstrap_interval(["a"], ["tie"]) == (None, None)
    assert strength_bootstrap_interval([], []) == (None, None)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n_resamples": 0}, "n_resamples"),
        ({"n_resamples": 2.0}, "n_resamples"),
        ({"n_resamples": False}, "n_resamples"),
        ({"confidence_level": 0.0}, "confidence_level"),
        ({"confidence_level": 1.0}, "confidence_level"),
        ({"confidence_level": 1.5}, "confidence_level"),
        ({"confidence_level": "0.9"}, "confidence_level"),
        ({"chance_agreement": 1}, "chance_agreement"),
        ({"chance_agreement": -0.1}, "chance_agreement"),
    ],
)
def test_strength_bootstrap_interval_bad_arguments(kwargs: dict[str, Any], name: str) -> None:
    with pytest.raises(ScoringError, match=name):
        strength_bootstrap_interval(["a"], ["a"], **kwargs)


def test_strength_bootstrap_interval_length_mismatch() -> None:
    with pytest.raises(ScoringError, match="same length"):
        strength_bootstrap_interval(["a", "b"], ["a"])
