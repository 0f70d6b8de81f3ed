"""Each built-in scorer's `compute_score_async` against independent references.

References: scikit-learn (`accuracy_score`, `cohen_kappa_score`), difflib (`SequenceMatcher`),
the `krippendorff` package, and `meta_evaluator.stats.alt_test.alt_test` called with plain
dicts (tested on its own in tests/stats). Majority votes and averaging rules follow METRICS.md
D and F; every reference below is written from those definitions, not from the scorer's code.
"""

from __future__ import annotations

import difflib
import math
import warnings
from collections import Counter
from typing import Any

import krippendorff
import numpy as np
import polars as pl
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score

from meta_evaluator.errors import ScoringError
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.metrics import (
    AccuracyScorer,
    AltTestScorer,
    CohensKappaScorer,
    KrippendorffAlphaScorer,
    SemanticSimilarityScorer,
    TextSimilarityScorer,
)
from meta_evaluator.stats.alt_test import alt_test
from tests.scores.conftest import frames, random_annotations, run_scorer

TOL = 1e-9
SINGLE = TaskAggregationMode.SINGLE
MULTILABEL = TaskAggregationMode.MULTILABEL

Labels = dict[Any, Any]
Humans = dict[str, Labels]


# ----- independent references --------------------------------------------------------------------


def present(labels: Labels) -> Labels:
    return {i: v for i, v in labels.items() if v is not None}


def scored_items(judge: Labels, humans: Humans) -> list[Any]:
    """Items with a judge label and at least one human label (what the scorers score)."""
    return [i for i in present(judge) if any(h.get(i) is not None for h in humans.values())]


def pairs(judge: Labels, human: Labels) -> tuple[list[Any], list[Any]]:
    keys = [i for i in present(judge) if human.get(i) is not None]
    return [judge[i] for i in keys], [human[i] for i in keys]


def majority(labels: list[Any]) -> Any:
    """Most frequent label; ties to the lexicographically largest (METRICS.md F)."""
    counts = Counter(labels)
    top = max(counts.values())
    return sorted(label for label, c in counts.items() if c == top)[-1]


def majority_labels(judge: Labels, humans: Humans) -> tuple[list[Any], list[Any]]:
    items = scored_items(judge, humans)
    votes = [majority([h[i] for h in humans.values() if h.get(i) is not None]) for i in items]
    return [judge[i] for i in items], votes


def ref_accuracy(judge: Labels, humans: Humans, aggregation: str) -> float:
    if aggregation == "majority_vote":
        return float(accuracy_score(*majority_labels(judge, humans)))
    values = []
    for name in sorted(humans):
        a, b = pairs(judge, humans[name])
        if a:
            values.append(float(accuracy_score(a, b)))
    return float(np.mean(values))


def sk_kappa(a: list[Any], b: list[Any], weights: str | None, labels: list[Any]) -> float | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns on 0/0 and returns nan
        value = float(cohen_kappa_score(a, b, weights=weights, labels=labels))
    return None if math.isnan(value) else value


def all_labels(judge: Labels, humans: Humans) -> list[Any]:
    values = set(present(judge).values())
    for h in humans.values():
        values |= set(present(h).values())
    return sorted(values)


def ref_kappa(
    judge: Labels, humans: Humans, aggregation: str, weights: str | None = None
) -> tuple[float | None, dict[str, float | None], list[str]]:
    """Mean of per-human kappa (humans with < 2 pairs skipped), per-human values, skipped."""
    labels = all_labels(judge, humans)
    if aggregation == "majority_vote":
        a, b = majority_labels(judge, humans)
        return sk_kappa(a, b, weights, labels), {}, []
    per_human: dict[str, float | None] = {}
    skipped = []
    for name in sorted(humans):
        a, b = pairs(judge, humans[name])
        if len(a) < 2:
            skipped.append(name)
            continue
        per_human[name] = sk_kappa(a, b, weights, labels)
    defined = [v for v in per_human.values() if v is not None]
    return (float(np.mean(defined)) if defined else None), per_human, skipped


def ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a.lower().strip(), b.lower().strip()).ratio()


def ref_text_similarity(judge: Labels, humans: Humans, aggregation: str) -> float:
    if aggregation == "majority_vote":
        best = [
            max(ratio(judge[i], h[i]) for h in humans.values() if h.get(i) is not None)
            for i in scored_items(judge, humans)
        ]
        return float(np.mean(best))
    per_human = []
    for name in sorted(humans):
        a, b = pairs(judge, humans[name])
        if a:
            per_human.append(float(np.mean([ratio(x, y) for x, y in zip(a, b, strict=True)])))
    return float(np.mean(per_human))


def every_unit(judge: Labels, humans: Humans) -> list[Any]:
    """Every item some coder (the judge or a human) labelled: the reliability matrix's units."""
    found = set(present(judge))
    for h in humans.values():
        found |= set(present(h))
    return sorted(found)


def pairable_units(judge: Labels, humans: Humans) -> list[Any]:
    """Units with two values or more, the judge's counted (those Krippendorff's alpha uses)."""
    coders = [present(judge), *(present(h) for h in humans.values())]
    return [u for u in every_unit(judge, humans) if sum(u in c for c in coders) >= 2]


def ref_alpha(judge: Labels, humans: Humans, level: str, *, with_judge: bool) -> float:
    """krippendorff.alpha of one reliability matrix: the judge's row (with_judge) and the
    humans' rows over every unit some coder labelled, NaN where a coder gave no label."""
    units = every_unit(judge, humans)
    coders = [humans[h] for h in sorted(humans)] + ([judge] if with_judge else [])
    codes = {v: k for k, v in enumerate(all_labels(judge, humans))}

    def value(label: Any) -> float:
        if label is None:
            return np.nan
        return float(codes[label]) if level == "nominal" else float(label)

    data = np.array([[value(c.get(u)) for u in units] for c in coders], dtype=float)
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def close(actual: Any, expected: Any) -> bool:
    if expected is None or actual is None:
        return actual is expected
    return math.isclose(actual, expected, rel_tol=0, abs_tol=TOL)


# ----- accuracy ----------------------------------------------------------------------------------


@pytest.mark.parametrize("id_kind", ["int", "str"])
@pytest.mark.parametrize("n_humans", [1, 2, 3])
@pytest.mark.parametrize("aggregation", ["individual_average", "majority_vote"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_accuracy_matches_sklearn(id_kind: str, n_humans: int, aggregation: str, seed: int) -> None:
    judge, humans = random_annotations(
        seed, labels=["no", "unsure", "yes"], n_humans=n_humans, id_kind=id_kind, coverage=0.6
    )
    jf, hf = frames(judge, humans, id_kind)
    result = run_scorer(AccuracyScorer(), jf, hf, annotator_aggregation=aggregation)
    assert result.scorer_name == "accuracy"
    assert result.error is None
    assert close(result.scores["accuracy"], ref_accuracy(judge, humans, aggregation))
    assert result.num_comparisons == sum(len(pairs(judge, h)[0]) for h in humans.values())
    assert result.metadata["num_items"] == len(scored_items(judge, humans))
    if aggregation == "individual_average":
        for name, value in result.metadata["per_human"].items():
            a, b = pairs(judge, humans[name])
            assert close(value, float(accuracy_score(a, b)))


def test_majority_vote_ties_go_to_the_lexicographically_largest_label() -> None:
    # item 1: a/b tie -> "b"; item 2: a/b/c tie -> "c"; item 3: a twice beats z once.
    judge = {1: "b", 2: "a", 3: "a"}
    humans = {
        "alice": {1: "a", 2: "a", 3: "a"},
        "bob": {1: "b", 2: "b", 3: "z"},
        "carol": {2: "c", 3: "a"},
    }
    jf, hf = frames(judge, humans, "int")
    result = run_scorer(AccuracyScorer(), jf, hf, annotator_aggregation="majority_vote")
    assert result.scores["accuracy"] == pytest.approx(2 / 3, abs=TOL)  # items 1 and 3 match


def test_accuracy_integer_labels_and_multilabel_lists() -> None:
    judge, humans = random_annotations(5, labels=[1, 2, 3], n_humans=3, coverage=0.7)
    jf, hf = frames(judge, humans, "int")
    assert jf.schema["label"] == pl.Int64
    result = run_scorer(AccuracyScorer(), jf, hf)
    assert close(result.scores["accuracy"], ref_accuracy(judge, humans, "individual_average"))

    # list labels (a multilabel aggregation) match only as a whole
    judge = {1: ["a", "x"], 2: ["b", "x"], 3: ["a", "y"]}
    humans = {"alice": {1: ["a", "x"], 2: ["b", "y"], 3: ["a", "y"]}, "bob": {1: ["a", "y"]}}
    jf, hf = frames(judge, humans, "int")
    result = run_scorer(AccuracyScorer(), jf, hf, MULTILABEL)
    assert close(result.scores["accuracy"], (2 / 3 + 0 / 1) / 2)


# ----- Cohen's kappa -----------------------------------------------------------------------------


@pytest.mark.parametrize("id_kind", ["int", "str"])
@pytest.mark.parametrize("n_humans", [1, 2, 3])
@pytest.mark.parametrize("aggregation", ["individual_average", "majority_vote"])
@pytest.mark.parametrize("seed", [0, 1])
def test_kappa_matches_sklearn(id_kind: str, n_humans: int, aggregation: str, seed: int) -> None:
    judge, humans = random_annotations(
        seed + 10, labels=["no", "unsure", "yes"], n_humans=n_humans, id_kind=id_kind
    )
    jf, hf = frames(judge, humans, id_kind)
    result = run_scorer(CohensKappaScorer(), jf, hf, annotator_aggregation=aggregation)
    expected, per_human, skipped = ref_kappa(judge, humans, aggregation)
    assert result.scorer_name == "cohens_kappa"
    assert close(result.scores["cohens_kappa"], expected)
    assert "interpretation" in result.metadata
    if aggregation == "individual_average":
        assert result.metadata["skipped_humans"] == skipped
        assert set(result.metadata["per_human"]) == set(per_human)
        for name, value in per_human.items():
            assert close(result.metadata["per_human"][name], value)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("aggregation", ["individual_average", "majority_vote"])
def test_weighted_kappa_matches_sklearn(weights: str | None, aggregation: str) -> None:
    judge, humans = random_annotations(21, labels=[1, 2, 3, 4, 5], n_items=50, agreement=0.5)
    jf, hf = frames(judge, humans, "int")
    result = run_scorer(
        CohensKappaScorer(weights=weights), jf, hf, annotator_aggregation=aggregation
    )
    expected, _, _ = ref_kappa(judge, humans, aggregation, weights)
    assert expected is not None
    assert close(result.scores["cohens_kappa"], expected)
    assert result.metadata["weights"] == weights


def test_kappa_skips_humans_with_fewer_than_two_pairs() -> None:
    judge = {i: ["a", "b"][i % 2] for i in range(12)}
    humans = {
        "alice": {i: ["a", "b"][i % 2] for i in range(12)},  # kappa 1
        "bob": {i: ["a", "b"][(i // 2) % 2] for i in range(12)},
        "carol": {3: "a"},  # one pair only
        "dave": {100: "a"},  # no pair at all
    }
    jf, hf = frames(judge, humans, "int")
    result = run_scorer(CohensKappaScorer(), jf, hf)
    expected, _, skipped = ref_kappa(judge, humans, "individual_average")
    assert skipped == ["carol", "dave"]
    assert result.metadata["skipped_humans"] == ["carol", "dave"]
    assert sorted(result.metadata["per_human"]) == ["alice", "bob"]
    assert close(result.scores["cohens_kappa"], expected)


def test_kappa_of_a_single_class_is_undefined_but_accuracy_is_defined() -> None:
    judge = {i: "yes" for i in range(6)}
    humans = {"alice": {i: "yes" for i in range(6)}, "bob": {i: "yes" for i in range(1, 6)}}
    jf, hf = frames(judge, humans, "int")
    kappa = run_scorer(CohensKappaScorer(), jf, hf)
    assert kappa.scores["cohens_kappa"] is None
    assert kappa.metadata["interpretation"] is None
    assert kappa.error is None
    majority = run_scorer(CohensKappaScorer(), jf, hf, annotator_aggregation="majority_vote")
    assert majority.scores["cohens_kappa"] is None
    assert run_scorer(AccuracyScorer(), jf, hf).scores["accuracy"] == 1.0


def landis_koch(kappa: float) -> str:
    if kappa < 0:
        return "poor"
    if kappa <= 0.2:
        return "slight"
    if kappa <= 0.4:
        return "fair"
    if kappa <= 0.6:
        return "moderate"
    if kappa <= 0.8:
        return "substantial"
    return "almost_perfect"


@pytest.mark.parametrize("agreement", [0.1, 0.5, 0.7, 0.95])
def test_kappa_interpretation_bands(agreement: float) -> None:
    judge, humans = random_annotations(3, labels=["a", "b"], n_humans=2, agreement=agreement)
    jf, hf = frames(judge, humans, "int")
    result = run_scorer(CohensKappaScorer(), jf, hf)
    kappa = result.scores["cohens_kappa"]
    assert result.metadata["interpretation"] == landis_koch(kappa)


# ----- text similarity ---------------------------------------------------------------------------

PHRASES = [
    "The reply refuses politely.",
    "  the reply REFUSES politely ",
    "It answers the question.",
    "It answers the question in detail.",
    "No answer given",
    "",
]


@pytest.mark.parametrize("id_kind", ["int", "str"])
@pytest.mark.parametrize("n_humans", [1, 2, 3])
@pytest.mark.parametrize("aggregation", ["individual_average", "majority_vote"])
def test_text_similarity_matches_difflib(id_kind: str, n_humans: int, aggregation: str) -> None:
    judge, humans = random_annotations(
        7, labels=PHRASES, n_humans=n_humans, id_kind=id_kind, coverage=0.6, agreement=0.3
    )
    jf, hf = frames(judge, humans, id_kind)
    result = run_scorer(TextSimilarityScorer(), jf, hf, annotator_aggregation=aggregation)
    assert result.scorer_name == "text_similarity"
    assert close(result.scores["similarity"], ref_text_similarity(judge, humans, aggregation))


def test_text_similarity_normalises_case_and_outer_space() -> None:
    jf, hf = frames({1: "  Hello World "}, {"alice": {1: "hello world"}}, "int")
    assert run_scorer(TextSimilarityScorer(), jf, hf).scores["similarity"] == 1.0


# ----- Krippendorff's alpha ----------------------------------------------------------------------


@pytest.mark.parametrize("id_kind", ["int", "str"])
@pytest.mark.parametrize("n_humans", [2, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_krippendorff_nominal_matches_library(id_kind: str, n_humans: int, seed: int) -> None:
    judge, humans = random_annotations(
        seed + 30, labels=["a", "b", "c"], n_humans=n_humans, id_kind=id_kind, coverage=0.7
    )
    jf, hf = frames(judge, humans, id_kind)
    result = run_scorer(KrippendorffAlphaScorer(), jf, hf)
    assert result.scorer_name == "krippendorff_alpha"
    assert close(result.scores["alpha"], ref_alpha(judge, humans, "nominal", with_judge=True))
    assert close(
        result.scores["alpha_humans"], ref_alpha(judge, humans, "nominal", with_judge=False)
    )


@pytest.mark.parametrize("level", ["interval", "ordinal", "ratio"])
def test_krippendorff_numeric_levels_match_library(level: str) -> None:
    judge, humans = random_annotations(41, labels=[1, 2, 3, 4, 5], n_humans=3, agreement=0.6)
    jf, hf = frames(judge, humans, "int")
    result = run_scorer(KrippendorffAlphaScorer(level), jf, hf)  # type: ignore[arg-type]
    assert close(result.scores["alpha"], ref_alpha(judge, humans, level, with_judge=True))
    assert close(result.scores["alpha_humans"], ref_alpha(judge, humans, level, with_judge=False))
    assert result.metadata["level_of_measurement"] == level


def test_krippendorff_with_one_human() -> None:
    """The judge and one human still pair up; the humans alone cannot (library: ValueError)."""
    judge, humans = random_annotations(42, labels=["a", "b"], n_humans=1)
    jf, hf = frames(judge, humans, "int")
    result = run_scorer(KrippendorffAlphaScorer(), jf, hf)
    assert close(result.scores["alpha"], ref_alpha(judge, humans, "nominal", with_judge=True))
    with pytest.raises(ValueError):
        ref_alpha(judge, humans, "nominal", with_judge=False)
    assert result.scores["alpha_humans"] is None


def ref_pairable(judge: Labels, humans: Humans) -> dict[str, int]:
    """Units with two values or more and the values in them, counted unit by unit."""
    out = dict.fromkeys(("units", "pairable_values", "units_humans", "pairable_values_humans",
                         "units_without_judge"), 0)  # fmt: skip
    for unit in every_unit(judge, humans):
        by_humans = sum(present(h).get(unit) is not None for h in humans.values())
        judged = present(judge).get(unit) is not None
        if by_humans + judged >= 2:
            out["units"] += 1
            out["pairable_values"] += by_humans + judged
            out["units_without_judge"] += not judged
        if by_humans >= 2:
            out["units_humans"] += 1
            out["pairable_values_humans"] += by_humans
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_krippendorff_counts_units_the_judge_did_not_answer(seed: int) -> None:
    """The judge skips about half the units: those with two human labels still count in
    alpha (judge + human rows) and alpha_humans alike, as krippendorff.alpha counts them on
    the same matrix; the unit counts match a count by hand."""
    judge, humans = random_annotations(
        seed + 60, labels=["a", "b", "c"], n_humans=3, coverage=0.7, judge_coverage=0.5
    )
    assert any(i not in judge and sum(i in h for h in humans.values()) >= 2
               for i in every_unit(judge, humans))  # fmt: skip
    jf, hf = frames(judge, humans, "int")
    result = run_scorer(KrippendorffAlphaScorer(), jf, hf)
    assert close(result.scores["alpha"], ref_alpha(judge, humans, "nominal", with_judge=True))
    assert close(
        result.scores["alpha_humans"], ref_alpha(judge, humans, "nominal", with_judge=False)
    )
    counts = ref_pairable(judge, humans)
    assert {k: result.metadata[k] for k in counts} == counts
    assert counts["units_without_judge"] > 0
    # what the scorer used to do (only the items the judge labelled) differs here
    only_judged = {h: {i: v for i, v in labels.items() if i in judge}
                   for h, labels in humans.items()}  # fmt: skip
    narrow = ref_alpha(judge, only_judged, "nominal", with_judge=True)
    assert not close(result.scores["alpha"], narrow)


def test_krippendorff_by_hand_with_a_unit_the_judge_skipped() -> None:
    """Nominal alpha by hand (Krippendorff 2011), alpha = 1 - (n - 1) * (o_ab + o_ba) /
    (2 n_a n_b). Units 1-2: judge, alice and bob all say a; unit 3: alice a, bob b, no judge.
    With the judge: o_aa = 2 * 6 / (3 - 1) = 6, o_ab = o_ba = 1 / (2 - 1) = 1 (unit 3 counts
    through the humans); n_a = 7, n_b = 1, n = 8; alpha = 1 - 7 * 2 / (2 * 7) = 0. Humans
    alone: o_aa = 2 * 2 = 4, o_ab = o_ba = 1; n_a = 5, n_b = 1, n = 6; alpha = 1 - 5 * 2 /
    (2 * 5) = 0. Without unit 3 (the old rule) both would be undefined (a single value)."""
    judge = {1: "a", 2: "a"}
    humans = {"alice": {1: "a", 2: "a", 3: "a"}, "bob": {1: "a", 2: "a", 3: "b"}}
    jf, hf = frames(judge, humans, "int")
    result = run_scorer(KrippendorffAlphaScorer(), jf, hf)
    assert close(result.scores["alpha"], 0.0)
    assert close(result.scores["alpha_humans"], 0.0)
    assert result.metadata["units"] == 3 and result.metadata["units_without_judge"] == 1
    assert result.metadata["pairable_values"] == 8 and result.metadata["units_humans"] == 3
    assert result.metadata["pairable_values_humans"] == 6


def test_krippendorff_needs_a_unit_shared_by_the_judge_and_a_human() -> None:
    jf, hf = frames({9: "a"}, {"alice": {1: "a", 2: "b"}, "bob": {1: "a", 2: "b"}}, "int")
    with pytest.raises(ScoringError, match="no item has both a judge label and a human label"):
        run_scorer(KrippendorffAlphaScorer(), jf, hf)


def test_krippendorff_with_a_single_value_is_undefined() -> None:
    jf, hf = frames({1: "a", 2: "a"}, {"alice": {1: "a", 2: "a"}, "bob": {1: "a"}}, "int")
    result = run_scorer(KrippendorffAlphaScorer(), jf, hf)
    assert result.scores["alpha"] is None
    assert result.scores["alpha_humans"] is None


# ----- alt-test ----------------------------------------------------------------------------------


def check_alt_test(result: Any, expected: Any) -> None:
    assert result.scorer_name == "alt_test"
    assert set(result.scores["winning_rate"]) == set(expected.winning_rate)
    for key, value in expected.winning_rate.items():
        assert close(result.scores["winning_rate"][key], value), key
    assert close(result.scores["advantage_probability"], expected.advantage_probability)
    assert result.scores["passed"] is expected.passed
    meta = result.metadata
    for key in ("per_annotator", "human_advantage_probabilities", "skipped_annotators"):
        assert key in meta
    assert meta["scoring_function"] == expected.scoring_function
    assert meta["skipped_annotators"] == expected.skipped_annotators
    assert set(meta["per_annotator"]) == set(expected.per_annotator)
    for name, outcome in expected.per_annotator.items():
        got = meta["per_annotator"][name]
        assert got["n_instances"] == outcome.n_instances
        assert close(got["llm_advantage_probability"], outcome.llm_advantage)
        assert close(got["human_advantage_probability"], outcome.human_advantage)
        assert got["rejected"] == outcome.rejected
        for key, p in outcome.p_values.items():
            assert close(got["p_values"][key], p), (name, key)
        pair = meta["human_advantage_probabilities"][name]
        assert close(pair[0], outcome.llm_advantage)
        assert close(pair[1], outcome.human_advantage)


ALT_OPTIONS: dict[str, Any] = {"epsilon": 0.15, "min_instances_per_human": 8}


@pytest.mark.parametrize("id_kind", ["int", "str"])
@pytest.mark.parametrize("n_humans", [2, 3])
@pytest.mark.parametrize("multiplicative", [False, True])
def test_alt_test_matches_the_pure_function(
    id_kind: str, n_humans: int, multiplicative: bool
) -> None:
    judge, humans = random_annotations(
        50 + n_humans, labels=["a", "b", "c"], n_humans=n_humans, id_kind=id_kind, n_items=40
    )
    jf, hf = frames(judge, humans, id_kind)
    scorer = AltTestScorer(multiplicative_epsilon=multiplicative, **ALT_OPTIONS)
    result = run_scorer(scorer, jf, hf)
    expected = alt_test(
        {h: present(v) for h, v in humans.items()},
        present(judge),
        multiplicative_epsilon=multiplicative,
        **ALT_OPTIONS,
    )
    assert expected.scoring_function == "accuracy"
    check_alt_test(result, expected)
    assert "0.15" in result.scores["winning_rate"]
    assert result.metadata["epsilon"] == 0.15


def test_alt_test_skips_annotators_with_few_instances() -> None:
    judge, humans = random_annotations(60, labels=["a", "b"], n_humans=3, n_items=30)
    humans["dave"] = dict(list(present(humans["alice"]).items())[:4])
    jf, hf = frames(judge, humans, "int")
    result = run_scorer(AltTestScorer(min_instances_per_human=8), jf, hf)
    expected = alt_test(
        {h: present(v) for h, v in humans.items()}, present(judge), min_instances_per_human=8
    )
    assert "dave" in expected.skipped_annotators
    check_alt_test(result, expected)


def test_alt_test_numbers_use_neg_rmse() -> None:
    judge, humans = random_annotations(61, labels=[1, 2, 3, 4, 5], n_humans=3, agreement=0.6)
    jf, hf = frames(judge, humans, "int")
    result = run_scorer(AltTestScorer(min_instances_per_human=8), jf, hf)
    expected = alt_test(
        {h: present(v) for h, v in humans.items()}, present(judge), min_instances_per_human=8
    )
    assert expected.scoring_function == "neg_rmse"
    check_alt_test(result, expected)


def test_alt_test_free_text_uses_text_similarity() -> None:
    judge, humans = random_annotations(62, labels=PHRASES, n_humans=3, agreement=0.5)
    jf, hf = frames(judge, humans, "int")
    result = run_scorer(AltTestScorer(min_instances_per_human=8), jf, hf, task_kind="free_text")
    expected = alt_test(
        {h: present(v) for h, v in humans.items()},
        present(judge),
        min_instances_per_human=8,
        scoring_function="text_similarity",
    )
    assert result.metadata["scoring_function"] == "text_similarity"
    check_alt_test(result, expected)
    # without the task kind, strings are categories
    plain = run_scorer(AltTestScorer(min_instances_per_human=8), jf, hf)
    assert plain.metadata["scoring_function"] == "accuracy"


def test_alt_test_multilabel_aggregation_uses_set_jaccard() -> None:
    rng = np.random.default_rng(63)
    ids = list(range(30))

    def combined() -> list[str]:
        return [["yes", "no"][int(rng.integers(2))], ["low", "high"][int(rng.integers(2))]]

    truth = {i: combined() for i in ids}
    judge = {i: (truth[i] if rng.random() < 0.7 else combined()) for i in ids}
    humans = {
        h: {i: (truth[i] if rng.random() < 0.8 else combined()) for i in ids if rng.random() < 0.9}
        for h in ("alice", "bob", "carol")
    }
    jf, hf = frames(judge, humans, "int")
    result = run_scorer(AltTestScorer(min_instances_per_human=8), jf, hf, MULTILABEL)

    def as_set(label: list[str]) -> frozenset[tuple[int, str]]:
        return frozenset(enumerate(label))  # (task position, value): order-free set Jaccard

    expected = alt_test(
        {h: {i: as_set(v) for i, v in labels.items()} for h, labels in humans.items()},
        {i: as_set(v) for i, v in judge.items()},
        min_instances_per_human=8,
        scoring_function="jaccard",
    )
    assert result.metadata["scoring_function"] == "jaccard"
    check_alt_test(result, expected)


def test_alt_test_multi_label_answers_use_set_jaccard() -> None:
    rng = np.random.default_rng(65)
    options = ["a", "b", "c"]

    def draw() -> list[str]:
        picked = rng.integers(0, 3, size=int(rng.integers(0, 3)))
        return [options[int(k)] for k in picked]  # may repeat a value, order is arbitrary

    judge = {i: draw() for i in range(30)}
    humans = {h: {i: draw() for i in range(30)} for h in ("alice", "bob", "carol")}
    jf, hf = frames(judge, humans, "int")
    result = run_scorer(AltTestScorer(min_instances_per_human=8), jf, hf)
    expected = alt_test(
        {h: {i: frozenset(v) for i, v in labels.items()} for h, labels in humans.items()},
        {i: frozenset(v) for i, v in judge.items()},
        min_instances_per_human=8,
        scoring_function="jaccard",
    )
    assert result.metadata["scoring_function"] == "jaccard"
    check_alt_test(result, expected)


def test_alt_test_with_nobody_testable_raises() -> None:
    judge, humans = random_annotations(64, labels=["a", "b"], n_humans=2, n_items=10)
    jf, hf = frames(judge, humans, "int")
    with pytest.raises(ScoringError):
        run_scorer(AltTestScorer(), jf, hf)  # 30 instances per human needed, 10 items


# ----- edge cases shared by the scorers ----------------------------------------------------------

LABEL_SCORERS = [
    AccuracyScorer,
    CohensKappaScorer,
    TextSimilarityScorer,
    KrippendorffAlphaScorer,
    lambda: AltTestScorer(min_instances_per_human=1),
]


@pytest.mark.parametrize("make", LABEL_SCORERS)
def test_no_overlapping_ids_raise(make: Any) -> None:
    jf, hf = frames({1: "a", 2: "b"}, {"alice": {3: "a", 4: "b"}, "bob": {3: "a"}}, "int")
    with pytest.raises(ScoringError):
        run_scorer(make(), jf, hf)


@pytest.mark.parametrize("make", LABEL_SCORERS)
def test_only_null_labels_overlapping_raise(make: Any) -> None:
    jf, hf = frames({1: "a", 2: None}, {"alice": {1: None, 2: "b"}, "bob": {1: None}}, "int")
    with pytest.raises(ScoringError):
        run_scorer(make(), jf, hf)


def test_identical_annotators_agree_perfectly() -> None:
    labels = {f"id-{i}": ["x", "y", "z"][i % 3] for i in range(36)}
    humans = {h: dict(labels) for h in ("alice", "bob", "carol")}
    jf, hf = frames(labels, humans, "str")
    assert run_scorer(AccuracyScorer(), jf, hf).scores["accuracy"] == 1.0
    assert close(run_scorer(CohensKappaScorer(), jf, hf).scores["cohens_kappa"], 1.0)
    assert run_scorer(TextSimilarityScorer(), jf, hf).scores["similarity"] == 1.0
    alpha = run_scorer(KrippendorffAlphaScorer(), jf, hf).scores
    assert close(alpha["alpha"], 1.0)
    assert close(alpha["alpha_humans"], 1.0)
    alt = run_scorer(AltTestScorer(), jf, hf)
    expected = alt_test(humans, labels)
    check_alt_test(alt, expected)
    assert alt.scores["advantage_probability"] == 1.0


def test_null_labels_are_ignored() -> None:
    judge, humans = random_annotations(70, labels=["a", "b", "c"], n_humans=3, null_rate=0.2)
    assert any(v is None for v in judge.values())
    assert any(v is None for h in humans.values() for v in h.values())
    jf, hf = frames(judge, humans, "int")
    assert jf.get_column("label").null_count() > 0
    clean_judge = present(judge)
    clean_humans = {h: present(v) for h, v in humans.items()}
    cj, ch = frames(clean_judge, clean_humans, "int")
    for make in (AccuracyScorer, CohensKappaScorer, KrippendorffAlphaScorer):
        with_nulls = run_scorer(make(), jf, hf)
        without = run_scorer(make(), cj, ch)
        assert with_nulls.scores == without.scores
        assert with_nulls.num_comparisons == without.num_comparisons
    assert close(
        run_scorer(AccuracyScorer(), jf, hf).scores["accuracy"],
        ref_accuracy(clean_judge, clean_humans, "individual_average"),
    )


def test_unknown_annotator_aggregation_raises() -> None:
    jf, hf = frames({1: "a"}, {"alice": {1: "a"}}, "int")
    with pytest.raises(ScoringError, match="annotator_aggregation"):
        run_scorer(AccuracyScorer(), jf, hf, annotator_aggregation="median")


def test_can_score_task() -> None:
    assert AccuracyScorer().can_score_task("a")
    assert CohensKappaScorer().can_score_task("a")
    assert not CohensKappaScorer().can_score_task(["a", "b"])
    assert TextSimilarityScorer().can_score_task("text")
    assert not TextSimilarityScorer().can_score_task(3)
    assert KrippendorffAlphaScorer().can_score_task("a")
    assert not KrippendorffAlphaScorer("interval").can_score_task("a")
    assert KrippendorffAlphaScorer("interval").can_score_task(2.5)
    assert AltTestScorer().can_score_task(["a"])


# ----- constructors validate at once -------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda: CohensKappaScorer(weights="cubic"), "weights"),
        (lambda: AltTestScorer(epsilon=1.5), "epsilon"),
        (lambda: AltTestScorer(epsilon=-0.1), "epsilon"),
        (lambda: AltTestScorer(q_fdr=0), "q_fdr"),
        (lambda: AltTestScorer(q_fdr=1), "q_fdr"),
        (lambda: AltTestScorer(min_humans_per_instance=1), "min_humans_per_instance"),
        (lambda: AltTestScorer(min_instances_per_human=0), "min_instances_per_human"),
        (lambda: AltTestScorer(scoring_function="x"), "scoring_function"),
        (lambda: KrippendorffAlphaScorer("bogus"), "level_of_measurement"),
        (lambda: SemanticSimilarityScorer(batch_size=0), "batch_size"),
        (lambda: SemanticSimilarityScorer(max_concurrency=0), "max_concurrency"),
        (lambda: SemanticSimilarityScorer(timeout=0), "timeout"),
    ],
)
def test_constructor_validation(make: Any, fragment: str) -> None:
    with pytest.raises(ScoringError, match=fragment) as info:
        make()
    assert type(info.value) is ScoringError


def test_alt_test_lists_every_constructor_problem_at_once() -> None:
    with pytest.raises(ScoringError) as info:
        AltTestScorer(epsilon=1.5, q_fdr=0, scoring_function="x")
    for fragment in ("epsilon", "q_fdr", "scoring_function"):
        assert fragment in str(info.value)
