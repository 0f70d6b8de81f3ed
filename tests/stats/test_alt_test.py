"""`meta_evaluator.stats.alt_test` against an independent, literal implementation of
METRICS.md section C written below (loops, exact fractions, scipy and statsmodels)."""

from __future__ import annotations

import difflib
import math
import warnings
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.alt_test import (
    EPSILON_GRID,
    AltTestResult,
    advantage_interval,
    advantage_under_weights,
    alt_test,
    alt_test_table,
    benjamini_yekutieli,
    choose_scoring_function,
    epsilon_key,
    one_sided_ttest,
)
from meta_evaluator.stats.bootstrap import resample_indices, resample_weights

TOL = 1e-9
Labels = Mapping[Hashable, Mapping[Hashable, Any]]

# --- the reference implementation (METRICS.md C, literally) --------------------------------


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _s_accuracy(x: Any, others: list[Any]) -> Fraction:
    return Fraction(sum(1 for h in others if x == h), len(others))


def _s_neg_rmse(x: Any, others: list[Any]) -> float:
    # Fraction(str(x)): 2.1 is the decimal 21/10, so |2.1 - 1.6| ties with |1.1 - 1.6|
    # as written (binary floats differ in the last bit; the implementation tolerates that).
    mean_square = sum((Fraction(str(x)) - Fraction(str(h))) ** 2 for h in others) / len(others)
    return -math.sqrt(mean_square)


def _jaccard(a: Any, b: Any) -> Fraction:
    a, b = set(a), set(b)
    if not a | b:
        return Fraction(1)  # J(empty, empty) = 1
    return Fraction(len(a & b), len(a | b))


def _s_jaccard(x: Any, others: list[Any]) -> Fraction:
    return sum((_jaccard(x, h) for h in others), Fraction(0)) / len(others)


def _difflib_ratio(a: str, b: str) -> Fraction:
    """SequenceMatcher.ratio() = 2 M / T as an exact fraction (1 for two empty strings)."""
    a, b = a.lower().strip(), b.lower().strip()
    if not a and not b:
        return Fraction(1)
    blocks = difflib.SequenceMatcher(None, a, b).get_matching_blocks()
    return Fraction(2 * sum(block.size for block in blocks), len(a) + len(b))


def _s_text(x: Any, others: list[Any]) -> Fraction:
    return sum((_difflib_ratio(x, h) for h in others), Fraction(0)) / len(others)


SCORES: dict[str, Callable[[Any, list[Any]], Any]] = {
    "accuracy": _s_accuracy,
    "neg_rmse": _s_neg_rmse,
    "jaccard": _s_jaccard,
    "text_similarity": _s_text,
}


def _key(epsilon: float) -> str:
    return f"{epsilon:.2f}" if abs(round(epsilon, 2) - epsilon) < 1e-12 else str(epsilon)


def _reference_ttest(d: list[float], value: float) -> float:
    """scipy.stats.ttest_1samp(d, value, alternative="less"), with the zero-variance rule of
    METRICS.md C.4 / G.17 (p = 0 if mean < value, 1 if above, NaN if equal)."""
    if len(d) < 2:
        return math.nan
    if all(x == d[0] for x in d):
        return 0.0 if d[0] < value else 1.0 if d[0] > value else math.nan
    return float(scipy_stats.ttest_1samp(d, value, alternative="less").pvalue)


def _reference_by(p_values: list[float], q: float) -> list[bool]:
    """statsmodels multipletests(method="fdr_by") when no p is NaN; else the step-up rule of
    C.5 by hand, NaN never rejected but counted in m."""
    if not any(math.isnan(p) for p in p_values):
        return [bool(r) for r in multipletests(p_values, alpha=q, method="fdr_by")[0]]
    m = len(p_values)
    harmonic = sum(1 / k for k in range(1, m + 1))
    ranked = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    largest = 0
    for rank, (p, _) in enumerate(ranked, start=1):
        if p <= rank / m * q / harmonic:
            largest = rank
    rejected = [False] * m
    for _, i in ranked[:largest]:
        rejected[i] = True
    return rejected


@dataclass
class Reference:
    winning_rate: dict[str, float]
    advantage_probability: float
    passed: bool
    n_instances: int
    llm_advantage: dict[str, float]
    human_advantage: dict[str, float]
    n_per_annotator: dict[str, int]
    p_values: dict[str, dict[str, float]]
    rejected: dict[str, dict[str, bool]]
    skipped: dict[str, int]
    wins: dict[str, dict[Hashable, int]]


def reference_alt_test(
    humans: Labels,
    llm: Mapping[Hashable, Any],
    *,
    scoring: str,
    epsilon: float = 0.2,
    multiplicative: bool = False,
    q: float = 0.05,
    min_instances: int = 30,
    min_humans: int = 2,
) -> Reference:
    """METRICS.md C.1-C.6 with one loop per annotator and instance."""
    score = SCORES[scoring]

    def labelled(annotator: Hashable, instance: Hashable) -> bool:
        return not _missing(humans[annotator].get(instance))

    instances = list(dict.fromkeys(i for labels in humans.values() for i in labels))
    kept = [  # C.1
        i
        for i in instances
        if not _missing(llm.get(i)) and sum(labelled(a, i) for a in humans) >= min_humans
    ]
    epsilons = sorted({*EPSILON_GRID, epsilon})
    tested: list[str] = []
    skipped: dict[str, int] = {}
    rho_f: dict[str, float] = {}
    rho_h: dict[str, float] = {}
    sizes: dict[str, int] = {}
    p_values: dict[str, dict[str, float]] = {}
    wins: dict[str, dict[Hashable, int]] = {}
    for j in humans:
        own = [i for i in kept if labelled(j, i)]  # I_j (C.6)
        if len(own) < min_instances:
            skipped[str(j)] = len(own)
            continue
        w_f: list[int] = []
        w_h: list[int] = []
        for i in own:
            others = [humans[k][i] for k in humans if k != j and labelled(k, i)]
            s_llm, s_human = score(llm[i], others), score(humans[j][i], others)
            w_f.append(1 if s_llm >= s_human else 0)  # C.3, ties give both 1
            w_h.append(1 if s_human >= s_llm else 0)
        name = str(j)
        tested.append(name)
        sizes[name] = len(own)
        wins[name] = dict(zip(own, w_f, strict=True))
        rho_f[name] = sum(w_f) / len(own)
        rho_h[name] = sum(w_h) / len(own)
        p_values[name] = {}
        for e in epsilons:  # C.4
            if multiplicative:
                d = [h - f / (1 - e) for h, f in zip(w_h, w_f, strict=True)]
                p_values[name][_key(e)] = _reference_ttest(d, 0.0)
            else:
                d = [float(h - f) for h, f in zip(w_h, w_f, strict=True)]
                p_values[name][_key(e)] = _reference_ttest(d, e)
    rejected: dict[str, dict[str, bool]] = {name: {} for name in tested}
    winning: dict[str, float] = {}
    for e in epsilons:  # C.5
        key = _key(e)
        decisions = _reference_by([p_values[name][key] for name in tested], q)
        for name, r in zip(tested, decisions, strict=True):
            rejected[name][key] = r
        winning[key] = sum(decisions) / len(tested)
    return Reference(
        winning_rate=winning,
        advantage_probability=sum(rho_f.values()) / len(tested),
        passed=winning[_key(epsilon)] >= 0.5,
        n_instances=len(kept),
        llm_advantage=rho_f,
        human_advantage=rho_h,
        n_per_annotator=sizes,
        p_values=p_values,
        rejected=rejected,
        skipped=skipped,
        wins=wins,
    )


def assert_matches(result: AltTestResult, ref: Reference) -> None:
    assert result.winning_rate.keys() == ref.winning_rate.keys()
    for key, value in ref.winning_rate.items():
        assert result.winning_rate[key] == pytest.approx(value, abs=TOL), key
    assert result.advantage_probability == pytest.approx(ref.advantage_probability, abs=TOL)
    assert result.passed is ref.passed
    assert result.n_instances == ref.n_instances
    assert result.skipped_annotators == ref.skipped
    assert list(result.per_annotator) == list(ref.llm_advantage)
    for name, outcome in result.per_annotator.items():
        assert outcome.n_instances == ref.n_per_annotator[name]
        assert outcome.llm_advantage == pytest.approx(ref.llm_advantage[name], abs=TOL)
        assert outcome.human_advantage == pytest.approx(ref.human_advantage[name], abs=TOL)
        assert outcome.rejected == ref.rejected[name], name
        assert outcome.p_values.keys() == ref.p_values[name].keys()
        for key, p in ref.p_values[name].items():
            if math.isnan(p):
                assert outcome.p_values[key] is None, (name, key)
            else:
                assert outcome.p_values[key] == pytest.approx(p, abs=TOL), (name, key)
    assert result.llm_wins.shape == (ref.n_instances, len(ref.llm_advantage))
    assert np.nansum(result.llm_wins, axis=0) == pytest.approx(
        [sum(w.values()) for w in ref.wins.values()]
    )
    assert (~np.isnan(result.llm_wins)).sum(axis=0).tolist() == list(ref.n_per_annotator.values())


def run_both(humans: Labels, llm: Mapping[Hashable, Any], **options: Any) -> AltTestResult:
    """alt_test and the reference on the same data; assert they agree; return ours."""
    scoring = options.pop("scoring_function")
    mapping = {
        "epsilon": "epsilon",
        "multiplicative_epsilon": "multiplicative",
        "q_fdr": "q",
        "min_instances_per_human": "min_instances",
        "min_humans_per_instance": "min_humans",
    }
    ref = reference_alt_test(
        humans, llm, scoring=scoring, **{mapping[k]: v for k, v in options.items()}
    )
    result = alt_test(humans, llm, scoring_function=scoring, **options)
    assert_matches(result, ref)
    assert result.scoring_function == scoring
    return result


# --- random panels -------------------------------------------------------------------------

WORDS = ["good", "bad", "refused", "unclear", "helpful answer", "Harmful", "ok", ""]


def _panel(
    seed: int,
    kind: str,
    *,
    n_humans: int | None = None,
    n_instances: int | None = None,
    missing: float = 0.0,
    llm_quality: float | None = None,
) -> tuple[dict[str, dict[int, Any]], dict[int, Any]]:
    """A truth per instance; each human and the LLM copy it or answer at random."""
    rng = np.random.default_rng(seed)
    m = n_humans or int(rng.integers(3, 7))
    n = n_instances or int(rng.integers(35, 70))

    def draw() -> Any:
        if kind == "categorical":
            return ["yes", "no", "maybe"][int(rng.integers(0, 3))]
        if kind == "numeric":
            return int(rng.integers(1, 6))
        if kind == "sets":
            return sorted(str(x) for x in rng.choice(list("abcd"), int(rng.integers(0, 3)), False))
        words = rng.choice(WORDS, int(rng.integers(1, 3)))
        text = " ".join(str(w) for w in words)
        return text.upper() + "  " if rng.random() < 0.2 else text

    truth = [draw() for _ in range(n)]
    humans: dict[str, dict[int, Any]] = {}
    for a in range(m):
        quality = rng.uniform(0.4, 0.9)
        labels = {}
        for i in range(n):
            if rng.random() < missing:
                continue
            labels[i] = truth[i] if rng.random() < quality else draw()
        humans[f"h{a}"] = labels
    quality = rng.uniform(0.4, 0.9) if llm_quality is None else llm_quality
    llm = {i: truth[i] if rng.random() < quality else draw() for i in range(n)}
    return humans, llm


KINDS = {
    "categorical": "accuracy",
    "numeric": "neg_rmse",
    "sets": "jaccard",
    "text": "text_similarity",
}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("seed", range(4))
def test_alt_test_matches_reference(seed: int, kind: str) -> None:
    """alt_test == the literal METRICS.md C reference (additive epsilon 0.2, full panels)."""
    humans, llm = _panel(seed, kind)
    run_both(humans, llm, scoring_function=KINDS[kind], epsilon=0.2)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("seed", range(3))
def test_alt_test_multiplicative_matches_reference(seed: int, kind: str) -> None:
    """Multiplicative epsilon (d = W^h - W^f / (1 - eps) against 0) == the reference."""
    humans, llm = _panel(seed + 50, kind)
    run_both(humans, llm, scoring_function=KINDS[kind], epsilon=0.15, multiplicative_epsilon=True)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("seed", range(3))
def test_alt_test_partial_labels_matches_reference(seed: int, kind: str) -> None:
    """C.6: annotators who did not label everything (different I_j, sometimes a single
    other annotator on an instance) == the reference."""
    humans, llm = _panel(seed + 100, kind, n_humans=4, n_instances=90, missing=0.45)
    result = run_both(humans, llm, scoring_function=KINDS[kind], epsilon=0.1)
    sizes = {o.n_instances for o in result.per_annotator.values()}
    assert len(sizes) > 1  # the annotators really are tested on different instance sets
    pairs_only = [i for i in llm if sum(i in labels for labels in humans.values()) == 2]
    assert pairs_only  # some instance has a single other annotator


def test_alt_test_off_grid_epsilon_has_its_own_key() -> None:
    """An epsilon off the grid (0.125) gets its own key next to 0.00-0.30; `passed` reads it."""
    humans, llm = _panel(7, "categorical")
    result = run_both(humans, llm, scoring_function="accuracy", epsilon=0.125)
    assert list(result.winning_rate) == [
        "0.00",
        "0.05",
        "0.10",
        "0.125",
        "0.15",
        "0.20",
        "0.25",
        "0.30",
    ]
    assert result.passed is (result.winning_rate["0.125"] >= 0.5)
    assert epsilon_key(0.125) == "0.125"
    assert epsilon_key(0.1 + 0.05) == "0.15"
    assert epsilon_key(0.3) == "0.30"


@pytest.mark.parametrize("epsilon", [0.0, 0.05, 0.3, 0.42])
def test_alt_test_epsilon_values_match_reference(epsilon: float) -> None:
    """Several configured epsilons, additive and multiplicative, == the reference."""
    humans, llm = _panel(11, "numeric")
    run_both(humans, llm, scoring_function="neg_rmse", epsilon=epsilon)
    run_both(humans, llm, scoring_function="neg_rmse", epsilon=epsilon, multiplicative_epsilon=True)


def test_alt_test_multiplicative_zero_equals_additive_zero() -> None:
    """At epsilon 0 both hypotheses are rho^h - rho^f < 0: the same p-values (C.4)."""
    humans, llm = _panel(12, "categorical")
    add = alt_test(humans, llm, epsilon=0.0)
    mul = alt_test(humans, llm, epsilon=0.0, multiplicative_epsilon=True)
    for name, outcome in add.per_annotator.items():
        assert outcome.p_values["0.00"] == mul.per_annotator[name].p_values["0.00"]


def test_alt_test_q_fdr_matches_reference() -> None:
    """A looser false discovery rate (q = 0.3) == the reference."""
    humans, llm = _panel(13, "categorical", llm_quality=0.7)
    run_both(humans, llm, scoring_function="accuracy", q_fdr=0.3)


def test_alt_test_skips_small_annotators() -> None:
    """Annotators with fewer than min_instances_per_human kept instances are skipped, with
    their count, and do not count in m (C.1)."""
    humans, llm = _panel(14, "categorical", n_humans=4, n_instances=60)
    humans["h3"] = dict(list(humans["h3"].items())[:12])
    humans["h4"] = {}
    result = run_both(humans, llm, scoring_function="accuracy", min_instances_per_human=30)
    assert result.skipped_annotators == {"h3": 12, "h4": 0}
    assert set(result.per_annotator) == {"h0", "h1", "h2"}
    fewer = run_both(humans, llm, scoring_function="accuracy", min_instances_per_human=10)
    assert fewer.skipped_annotators == {"h4": 0}
    assert fewer.per_annotator["h3"].n_instances == 12


def test_alt_test_min_humans_per_instance() -> None:
    """min_humans_per_instance = 3 drops instances with two human labels (== reference)."""
    humans, llm = _panel(15, "categorical", n_humans=5, n_instances=80, missing=0.3)
    two = run_both(humans, llm, scoring_function="accuracy", min_instances_per_human=5)
    three = run_both(
        humans,
        llm,
        scoring_function="accuracy",
        min_instances_per_human=5,
        min_humans_per_instance=3,
    )
    assert three.n_instances < two.n_instances


def test_alt_test_llm_missing_labels_drop_instances() -> None:
    """Instances without an LLM label (absent, None or NaN) are not kept (C.1)."""
    humans, llm = _panel(16, "numeric", n_instances=50)
    llm = dict(llm)
    llm[0] = None
    llm[1] = math.nan
    del llm[2]
    result = run_both(humans, llm, scoring_function="neg_rmse", min_instances_per_human=20)
    assert result.n_instances == 47


def test_alt_test_decimal_ratings_tie_as_written() -> None:
    """Decimal ratings tie as written: |0.1 - 0.2| = |0.3 - 0.2| gives W^f = W^h = 1 (C.3),
    although the binary floats differ in the last bit; random decimal panels == reference."""
    humans = {"j": dict.fromkeys(range(30), 0.3), "k": dict.fromkeys(range(30), 0.2)}
    result = alt_test(humans, dict.fromkeys(range(30), 0.1), scoring_function="neg_rmse")
    assert (0.1 - 0.2) ** 2 != (0.3 - 0.2) ** 2
    assert result.per_annotator["j"].llm_advantage == 1.0
    assert result.per_annotator["j"].human_advantage == 1.0
    for seed in (25, 129):
        humans, llm = _panel(seed, "numeric", n_instances=40)
        humans = {a: {i: v / 2 + 0.1 for i, v in d.items()} for a, d in humans.items()}
        llm = {i: v / 2 + 0.1 for i, v in llm.items()}
        run_both(humans, llm, scoring_function="neg_rmse", epsilon=0.1)


def test_alt_test_jaccard_empty_sets() -> None:
    """Set Jaccard with J(empty, empty) = 1 (C.2), sets given as lists, sets and tuples."""
    humans, llm = _panel(17, "sets", n_humans=3, n_instances=40)
    humans["h0"] = {i: set(v) for i, v in humans["h0"].items()}
    humans["h1"] = {i: tuple(v) for i, v in humans["h1"].items()}
    llm = {i: frozenset(v) for i, v in llm.items()}
    assert sum(v == [] for v in humans["h2"].values()) > 3
    run_both(humans, llm, scoring_function="jaccard")
    everyone_empty = {a: {i: [] for i in range(31)} for a in ("a", "b")}
    result = alt_test(everyone_empty, {i: [] for i in range(31)})
    assert result.scoring_function == "jaccard"
    assert result.advantage_probability == 1.0  # ties everywhere: W^f = W^h = 1


def test_alt_test_jaccard_many_elements() -> None:
    """Label sets over more than 62 distinct elements (the arbitrary-size bit masks) ==
    the reference."""
    rng = np.random.default_rng(18)
    universe = [f"tag{t}" for t in range(80)]
    truth = [set(rng.choice(universe, 3, replace=False).tolist()) for _ in range(40)]

    def noisy(labels: set[str]) -> list[str]:
        out = {t for t in labels if rng.random() < 0.8}
        out |= set(rng.choice(universe, int(rng.integers(0, 2)), replace=False).tolist())
        return sorted(out)

    humans = {f"h{a}": {i: noisy(t) for i, t in enumerate(truth)} for a in range(4)}
    llm = {i: noisy(t) for i, t in enumerate(truth)}
    run_both(humans, llm, scoring_function="jaccard")


def test_alt_test_text_normalisation() -> None:
    """Free text is compared on lower().strip() (difflib ratio, C.2) == the reference."""
    humans, llm = _panel(19, "text", n_humans=4)
    run_both(humans, llm, scoring_function="text_similarity")
    shouting = {i: f"  {v.upper()} " for i, v in llm.items()}
    quiet = alt_test(humans, llm, scoring_function="text_similarity")
    loud = alt_test(humans, shouting, scoring_function="text_similarity")
    assert loud.winning_rate == quiet.winning_rate
    assert loud.advantage_probability == quiet.advantage_probability


def test_alt_test_identical_annotators() -> None:
    """Identical humans and a different LLM: W^h = 1 always, d constant = 1 - W^f; the
    zero-variance rule gives p = 1 (== reference); nobody is beaten."""
    labels = {i: ["yes", "no"][i % 2] for i in range(40)}
    humans = {a: dict(labels) for a in ("a", "b", "c")}
    wrong = {i: "maybe" for i in range(40)}
    result = run_both(humans, wrong, scoring_function="accuracy")
    assert all(p == 1.0 for o in result.per_annotator.values() for p in o.p_values.values())
    assert result.winning_rate == dict.fromkeys(result.winning_rate, 0.0)
    assert result.advantage_probability == 0.0
    assert result.passed is False


def test_alt_test_llm_equal_to_identical_humans() -> None:
    """Everyone identical: all ties, d = 0; p = NaN at epsilon 0 (never rejected), 0 above."""
    labels = {i: ["yes", "no"][i % 2] for i in range(40)}
    humans = {a: dict(labels) for a in ("a", "b", "c")}
    result = run_both(humans, dict(labels), scoring_function="accuracy")
    assert result.winning_rate["0.00"] == 0.0
    assert all(r == 1.0 for k, r in result.winning_rate.items() if k != "0.00")
    assert all(o.p_values["0.00"] is None for o in result.per_annotator.values())
    assert result.advantage_probability == 1.0
    assert result.passed is True


def test_alt_test_llm_copies_one_human() -> None:
    """The LLM equals human h0: against h0 every instance ties (d = 0, p = 0 for eps > 0,
    None at 0); the rest == the reference."""
    humans, _ = _panel(20, "categorical", n_humans=4, n_instances=50)
    result = run_both(humans, dict(humans["h0"]), scoring_function="accuracy")
    copied = result.per_annotator["h0"]
    assert copied.llm_advantage == copied.human_advantage == 1.0
    assert copied.p_values["0.00"] is None
    assert copied.rejected["0.00"] is False
    assert all(p == 0.0 for k, p in copied.p_values.items() if k != "0.00")


def test_alt_test_table_equals_mapping_entry_point() -> None:
    """alt_test_table on aligned lists gives what alt_test gives on the mappings."""
    humans, llm = _panel(21, "categorical", missing=0.2)
    instances = sorted(llm)
    table = [[humans[a].get(i) for i in instances] for a in humans]
    by_table = alt_test_table([llm[i] for i in instances], table, list(humans))
    by_mapping = alt_test(humans, llm)
    # instance order differs (sorted vs first appearance): p-values equal up to rounding
    assert by_table.winning_rate == by_mapping.winning_rate
    assert by_table.skipped_annotators == by_mapping.skipped_annotators
    assert by_table.n_instances == by_mapping.n_instances
    for name, outcome in by_mapping.per_annotator.items():
        other = by_table.per_annotator[name]
        assert other.rejected == outcome.rejected
        assert (other.n_instances, other.llm_advantage) == (
            outcome.n_instances,
            outcome.llm_advantage,
        )
        assert other.p_values == pytest.approx(outcome.p_values, abs=1e-12)
    with pytest.raises(ScoringError, match="annotator 'h1' has labels for 3 instances"):
        alt_test_table(["a"] * 4, [["a"] * 4, ["a"] * 3], ["h0", "h1"])
    with pytest.raises(ScoringError, match="one row of labels per annotator"):
        alt_test_table(["a"] * 4, [["a"] * 4], ["h0", "h1"])


def test_alt_test_picks_scoring_function() -> None:
    """scoring_function=None: sets -> jaccard, numbers -> neg_rmse, else accuracy (C.2);
    the picked function gives the reference's result."""
    assert choose_scoring_function([["a"], None, []]) == "jaccard"
    assert choose_scoring_function([1, 2.5, None, np.int64(3)]) == "neg_rmse"
    assert choose_scoring_function([True, False]) == "accuracy"
    assert choose_scoring_function(["1", "2"]) == "accuracy"
    assert choose_scoring_function([None]) == "accuracy"
    humans, llm = _panel(22, "numeric")
    picked = alt_test(humans, llm)
    assert picked.scoring_function == "neg_rmse"
    assert_matches(picked, reference_alt_test(humans, llm, scoring="neg_rmse"))


def test_alt_test_nobody_testable_raises() -> None:
    """No annotator with min_instances_per_human kept instances: ScoringError (G.18)."""
    humans, llm = _panel(23, "categorical", n_instances=20)
    with pytest.raises(ScoringError, match=r"no annotator can be tested.*h0: 20"):
        alt_test(humans, llm)
    with pytest.raises(ScoringError, match="no annotator can be tested"):
        alt_test({"a": {1: "x"}, "b": {2: "x"}}, {1: "x", 2: "x"}, min_instances_per_human=1)
    with pytest.raises(ScoringError, match="no annotator can be tested"):
        alt_test({}, {})


@pytest.mark.parametrize(
    ("options", "argument"),
    [
        ({"epsilon": -0.1}, "epsilon"),
        ({"epsilon": 1.0}, "epsilon"),
        ({"epsilon": math.nan}, "epsilon"),
        ({"epsilon": "0.2"}, "epsilon"),
        ({"q_fdr": 0.0}, "q_fdr"),
        ({"q_fdr": 1.0}, "q_fdr"),
        ({"q_fdr": 1.5}, "q_fdr"),
        ({"min_instances_per_human": 0}, "min_instances_per_human"),
        ({"min_instances_per_human": 2.5}, "min_instances_per_human"),
        ({"min_humans_per_instance": 1}, "min_humans_per_instance"),
        ({"scoring_function": "bleu"}, "scoring_function"),
    ],
)
def test_alt_test_bad_arguments_raise(options: dict[str, Any], argument: str) -> None:
    """Arguments out of range raise ScoringError naming the function, argument and value."""
    humans, llm = _panel(24, "categorical")
    with pytest.raises(
        ScoringError, match=rf"^alt_test: {argument} must .*got {options[argument]!r}"
    ):
        alt_test(humans, llm, **options)


def test_alt_test_wrong_label_types_raise() -> None:
    """neg_rmse on words and jaccard on plain labels raise ScoringError."""
    humans, llm = _panel(25, "categorical")
    with pytest.raises(ScoringError, match=r"neg_rmse.*numeric"):
        alt_test(humans, llm, scoring_function="neg_rmse")
    with pytest.raises(ScoringError, match=r"jaccard.*label sets"):
        alt_test(humans, llm, scoring_function="jaccard")


# --- Benjamini-Yekutieli and the t-test ----------------------------------------------------


@pytest.mark.parametrize("seed", range(20))
def test_benjamini_yekutieli_matches_statsmodels(seed: int) -> None:
    """benjamini_yekutieli == statsmodels multipletests(method="fdr_by")[0]."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 30))
    p = rng.uniform(0, 1, m) ** rng.uniform(1, 6)  # many small p-values
    q = float(rng.choice([0.01, 0.05, 0.1, 0.25]))
    expected = multipletests(p, alpha=q, method="fdr_by")[0].tolist()
    assert benjamini_yekutieli(p.tolist(), q=q) == expected


def test_benjamini_yekutieli_is_step_up() -> None:
    """A failing intermediate rank does not stop it (C.5, statsmodels agrees)."""
    # m = 3, H_3 = 11/6, thresholds k/3 * 0.05 / H_3 = 0.00909, 0.01818, 0.02727
    p = [0.02, 0.025, 0.0001]
    assert benjamini_yekutieli(p) == [True, True, True]
    assert multipletests(p, alpha=0.05, method="fdr_by")[0].tolist() == [True, True, True]
    assert benjamini_yekutieli([0.0092, 0.019, 0.03]) == [False, False, False]


@pytest.mark.parametrize("seed", range(10))
def test_benjamini_yekutieli_nan_counts_in_m(seed: int) -> None:
    """NaN and None are never rejected but count in m: the same as statsmodels with them
    replaced by 1 (a p-value no threshold below 1 admits), and the literal loop."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 20))
    p: list[float | None] = (rng.uniform(0, 0.02, m)).tolist()
    for i in rng.choice(m, int(rng.integers(1, m)), replace=False):
        p[i] = None if rng.random() < 0.5 else math.nan
    ours = benjamini_yekutieli(p)
    filled = [1.0 if v is None or math.isnan(v) else v for v in p]
    assert ours == multipletests(filled, alpha=0.05, method="fdr_by")[0].tolist()
    assert ours == _reference_by([math.nan if v is None else v for v in p], 0.05)
    assert not any(r for r, v in zip(ours, p, strict=True) if v is None or math.isnan(v))


def test_benjamini_yekutieli_nan_changes_m() -> None:
    """Counting a NaN in m makes the thresholds stricter: p = 0.02 alone is rejected, next
    to a NaN it is not (threshold 1/2 * 0.05 / 1.5 = 0.0167)."""
    assert benjamini_yekutieli([0.02]) == [True]
    assert benjamini_yekutieli([0.02, None]) == [False, False]
    assert benjamini_yekutieli([]) == []
    with pytest.raises(ScoringError, match=r"benjamini_yekutieli: q must be in"):
        benjamini_yekutieli([0.1], q=0.0)


@pytest.mark.parametrize("seed", range(15))
def test_one_sided_ttest_matches_scipy(seed: int) -> None:
    """one_sided_ttest == scipy.stats.ttest_1samp(d, value, alternative="less").pvalue."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    d = rng.choice([-1.0, 0.0, 1.0, -1.25, 0.2], n)
    if np.all(d == d[0]):
        d[0] += 1.0
    value = float(rng.choice([0.0, 0.1, 0.2, -0.3]))
    expected = scipy_stats.ttest_1samp(d, value, alternative="less").pvalue
    assert one_sided_ttest(d, value) == pytest.approx(expected, abs=1e-12)
    assert one_sided_ttest(d.tolist(), value) == pytest.approx(expected, abs=1e-12)


def test_one_sided_ttest_zero_variance() -> None:
    """Zero variance (C.4 / G.17): 0 below the value, 1 above, NaN at it (scipy: -inf / +inf
    statistic, NaN at equality); fewer than two differences: NaN."""
    assert one_sided_ttest([0.0] * 10, 0.2) == 0.0
    assert one_sided_ttest([1.0] * 10, 0.2) == 1.0
    assert math.isnan(one_sided_ttest([0.0] * 10, 0.0))
    assert math.isnan(one_sided_ttest([0.0], 0.2))
    assert math.isnan(one_sided_ttest([], 0.2))
    assert scipy_stats.ttest_1samp([0.0] * 10, 0.2, alternative="less").pvalue == 0.0
    with warnings.catch_warnings():  # scipy warns on constant data
        warnings.filterwarnings("ignore", "Precision loss", RuntimeWarning)
        assert scipy_stats.ttest_1samp([1.0] * 10, 0.2, alternative="less").pvalue == 1.0


# --- the advantage interval ----------------------------------------------------------------


def _loop_interval(result: AltTestResult, n_resamples: int, level: float, seed: int) -> Any:
    """Resample kept instances with the documented draws; rho = mean over annotators of the
    share of won instances among the resampled instances of I_j."""
    wins = result.llm_wins
    n = wins.shape[0]
    draws = np.random.default_rng(seed).integers(0, n, (n_resamples, n))
    values = []
    for rows in draws:
        per_annotator = []
        for j in range(wins.shape[1]):
            column = wins[rows, j]
            column = column[~np.isnan(column)]
            if column.size:
                per_annotator.append(column.mean())
        values.append(np.mean(per_annotator) if per_annotator else np.nan)
    defined = np.array(values)[~np.isnan(values)]
    tail = (1 - level) / 2 * 100
    return np.percentile(defined, [tail, 100 - tail])


def test_advantage_interval() -> None:
    """advantage_interval == a per-resample loop; same seed same interval; contains the
    point estimate; inside [0, 1]; another seed gives another interval."""
    humans, llm = _panel(30, "categorical", missing=0.3, n_instances=80)
    result = alt_test(humans, llm, min_instances_per_human=20)
    low, high = advantage_interval(result, n_resamples=400, confidence_level=0.9, seed=3)
    assert low is not None and high is not None
    assert [low, high] == pytest.approx(_loop_interval(result, 400, 0.9, 3), abs=1e-12)
    assert advantage_interval(result, n_resamples=400, confidence_level=0.9, seed=3) == (
        low,
        high,
    )
    assert 0.0 <= low <= result.advantage_probability <= high <= 1.0
    assert low < high
    assert advantage_interval(result, n_resamples=400, confidence_level=0.9, seed=4) != (
        low,
        high,
    )
    wide = advantage_interval(result, n_resamples=400, confidence_level=0.99, seed=3)
    assert wide[0] <= low and high <= wide[1]  # type: ignore[operator]


def test_advantage_under_weights() -> None:
    """advantage_under_weights: unit weights give the advantage probability; the rows of
    resample_weights give the per-resample values of the loop (instances counted with
    multiplicity); kept_instances are the input positions of the rows of llm_wins."""
    humans, llm = _panel(31, "categorical", missing=0.3, n_instances=60)
    table = [[humans[a].get(i) for i in range(60)] for a in humans]
    llm_labels = [None, *(llm[i] for i in range(1, 60))]
    result = alt_test_table(llm_labels, table, list(humans), min_instances_per_human=15)
    n = result.llm_wins.shape[0]
    assert result.kept_instances.tolist() == [
        i for i in range(1, 60) if sum(row[i] is not None for row in table) >= 2
    ]
    ones = advantage_under_weights(result, np.ones((1, n)))
    assert ones.tolist() == pytest.approx([result.advantage_probability], abs=1e-12)
    weights = resample_weights(n, 30, 8)
    draws = resample_indices(n, 30, 8)
    got = advantage_under_weights(result, weights)
    for value, rows in zip(got, draws, strict=True):
        columns = [result.llm_wins[rows, j] for j in range(result.llm_wins.shape[1])]
        rhos = [c[~np.isnan(c)].mean() for c in columns if (~np.isnan(c)).any()]
        assert value == pytest.approx(np.mean(rhos), abs=1e-12)


@pytest.mark.parametrize(
    ("options", "argument"),
    [
        ({"confidence_level": 1.5}, "confidence_level"),
        ({"confidence_level": 0.0}, "confidence_level"),
        ({"n_resamples": 0}, "n_resamples"),
        ({"n_resamples": 2.5}, "n_resamples"),
    ],
)
def test_advantage_interval_bad_arguments_raise(options: dict[str, Any], argument: str) -> None:
    """Out-of-range arguments raise ScoringError naming function, argument and value (S1),
    as paired_bootstrap does, not numpy's ValueError or TypeError."""
    humans, llm = _panel(32, "categorical")
    result = alt_test(humans, llm)
    with pytest.raises(
        ScoringError, match=rf"^advantage_interval: {argument} must .*got {options[argument]!r}\.$"
    ):
        advantage_interval(result, **options)
