"""The human baseline beside each agreement score, against independent computations.

References, written here from the definition (docs/scoring.md, "The human baseline"): human h
takes the judge's place and the other humans the humans' place, on the items the judge
labelled; accuracy by hand, kappa per pair with scikit-learn's `cohen_kappa_score` (labels:
every label of the judge's score), difflib for text similarity, the `krippendorff` package for
alpha of the humans alone (on every unit two humans labelled, as the judge's `alpha_humans`);
the interval by a direct loop over the resamples that
`numpy.random.default_rng(seed).integers(0, n, (R, n))` draws over the judge's items (for
alpha, the units of the judge's alpha).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import anyio
import krippendorff
import numpy as np
import polars as pl
import pytest

from meta_evaluator.scores import BootstrapConfig, MetricConfig, MetricsConfig
from meta_evaluator.scores.base_scorer import BaseScorer
from meta_evaluator.scores.base_scoring_result import ScoringResult
from meta_evaluator.scores.compare import compare
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.human_baseline import HumanBaseline
from meta_evaluator.scores.metrics import (
    AccuracyScorer,
    CohensKappaScorer,
    KrippendorffAlphaScorer,
    TextSimilarityScorer,
)
from meta_evaluator.stats.bootstrap import resample_indices
from tests.scores.conftest import random_annotations
from tests.scores.test_intervals import results
from tests.scores.test_scorers import PHRASES, pairable_units, ratio, sk_kappa

Labels = dict[Any, Any]
Humans = dict[str, Labels]
TOL = 1e-9
SEED = 5
RESAMPLES = 40


# ----- independent references ---------------------------------------------------------------


def on_judge_items(judge: Labels, humans: Humans) -> tuple[list[Any], Humans]:
    """The judge's items (a judge label and some human label), and the humans' labels there."""
    items = sorted(i for i in judge if any(i in h for h in humans.values()))
    kept = set(items)
    return items, {h: {i: v for i, v in labels.items() if i in kept} for h, labels in
                   humans.items()}  # fmt: skip


def majority(labels: list[Any]) -> Any:
    counts = Counter(labels)
    top = max(counts.values())
    return sorted(v for v, c in counts.items() if c == top)[-1]


def per_pair(
    humans: Humans, pair: Callable[[list[Any], list[Any]], float | None], least: int = 1
) -> dict[str, float | None]:
    """Human h: the mean over the other humans g of pair(h's labels, g's) on shared items."""
    out: dict[str, float | None] = {}
    for h in sorted(humans):
        values = []
        for g in sorted(humans):
            shared = [i for i in humans[h] if g != h and i in humans[g]]
            if len(shared) >= least:
                value = pair([humans[h][i] for i in shared], [humans[g][i] for i in shared])
                if value is not None:
                    values.append(value)
        out[h] = float(np.mean(values)) if values else None
    return out


def per_majority(
    humans: Humans, pair: Callable[[list[Any], list[Any]], float | None]
) -> dict[str, float | None]:
    """Human h against the per-item majority of the other humans."""
    out: dict[str, float | None] = {}
    for h in sorted(humans):
        items = [i for i in humans[h] if any(i in humans[g] for g in humans if g != h)]
        votes = [majority([humans[g][i] for g in humans if g != h and i in humans[g]])
                 for i in items]  # fmt: skip
        out[h] = pair([humans[h][i] for i in items], votes) if items else None
    return out


def hand_accuracy(a: list[Any], b: list[Any]) -> float:
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def mean_text(a: list[Any], b: list[Any]) -> float:
    return float(np.mean([ratio(x, y) for x, y in zip(a, b, strict=True)]))


def ref_per_human(
    key: str, aggregation: str, humans: Humans, labels: list[Any], weights: str | None = None
) -> dict[str, float | None]:
    if key == "accuracy":
        pair: Callable[[list[Any], list[Any]], float | None] = hand_accuracy
    elif key == "cohens_kappa":

        def pair(a: list[Any], b: list[Any]) -> float | None:
            return sk_kappa(a, b, weights, labels)
    else:
        pair = mean_text
    if aggregation == "majority_vote":
        return per_majority(humans, pair)
    return per_pair(humans, pair, least=2 if key == "cohens_kappa" else 1)


def mean_defined(values: dict[str, float | None]) -> float | None:
    defined = [v for v in values.values() if v is not None]
    return float(np.mean(defined)) if defined else None


def ref_alpha_humans(items: list[Any], humans: Humans) -> float:
    codes = {v: k for k, v in enumerate(sorted({v for h in humans.values() for v in h.values()}))}
    data = np.array(
        [[codes[humans[h][i]] if i in humans[h] else np.nan for i in items] for h in humans],
        dtype=float,
    )
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def resampled(humans: Humans, items: list[Any], row: Any) -> Humans:
    """The humans' labels of the drawn items under fresh keys (a duplicate is a new item)."""
    drawn = [items[p] for p in row]
    return {h: {k: v[i] for k, i in enumerate(drawn) if i in v} for h, v in humans.items()}


def ref_interval(
    items: list[Any], humans: Humans, statistic: Callable[[Humans], float | None]
) -> tuple[float, float]:
    """The percentile interval of `statistic` over the judge's resamples, one by one."""
    values = []
    for row in resample_indices(len(items), RESAMPLES, SEED):
        value = statistic(resampled(humans, items, row))
        if value is not None and not math.isnan(value):
            values.append(value)
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


# ----- running compare ----------------------------------------------------------------------


def score(
    scorer: BaseScorer,
    judge: Labels,
    humans: Humans,
    *,
    aggregation: str = "individual_average",
    bootstrap: bool = True,
) -> ScoringResult:
    judges, annotators = results({"t": (judge, humans)}, "int")
    metric = MetricConfig(
        scorer=scorer,
        task_names=["t"],
        aggregation_name="single",
        annotator_aggregation=aggregation,
        bootstrap=BootstrapConfig(n_resamples=RESAMPLES, seed=SEED) if bootstrap else None,
    )

    async def go() -> Any:
        return await compare(MetricsConfig(metrics=[metric]), judges, annotators)

    (result,) = anyio.run(go)[metric.get_unique_name()][1]
    assert result.error is None
    return result


def annotations(seed: int, labels: list[Any], **options: Any) -> tuple[Labels, Humans]:
    options.setdefault("coverage", 0.75)
    return random_annotations(seed, labels=labels, n_items=30, **options)


def baseline_of(result: ScoringResult) -> HumanBaseline:
    found = HumanBaseline.from_metadata(result.metadata["human_baseline"])
    assert found is not None
    return found


CASES = [
    ("accuracy", AccuracyScorer, ["a", "b", "c"], "individual_average"),
    ("accuracy", AccuracyScorer, ["a", "b", "c"], "majority_vote"),
    ("cohens_kappa", CohensKappaScorer, ["a", "b", "c"], "individual_average"),
    ("cohens_kappa", CohensKappaScorer, ["a", "b", "c"], "majority_vote"),
    ("similarity", TextSimilarityScorer, PHRASES, "individual_average"),
]


@pytest.mark.parametrize(("key", "make", "labels", "aggregation"), CASES)
def test_baseline_equals_leave_one_out_by_hand(
    key: str, make: Any, labels: list[Any], aggregation: str
) -> None:
    judge, humans = annotations(31, labels, judge_coverage=0.8)
    result = score(make(), judge, humans, aggregation=aggregation)
    baseline = baseline_of(result)
    items, there = on_judge_items(judge, humans)
    every_label = sorted({*judge.values(), *(v for h in there.values() for v in h.values())})
    expected = ref_per_human(key, aggregation, there, every_label)
    assert baseline.score == key
    assert set(baseline.per_human) == set(expected)
    for h, value in expected.items():
        assert value is not None and math.isclose(baseline.per_human[h], value, abs_tol=TOL), h
    assert math.isclose(baseline.value or 0.0, mean_defined(expected) or 1.0, abs_tol=TOL)
    assert baseline.humans == 3
    assert baseline.items == sum(sum(i in h for h in there.values()) >= 2 for i in items)
    assert baseline.interval is not None and baseline.interval[0] is not None
    low, high = ref_interval(items, there, lambda hs: mean_defined(
        ref_per_human(key, aggregation, hs, every_label)))  # fmt: skip
    assert math.isclose(baseline.interval[0], low, abs_tol=TOL)
    assert math.isclose(baseline.interval[1] or 0.0, high, abs_tol=TOL)


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weighted_kappa_baseline_uses_every_label_of_the_judges_score(weights: str) -> None:
    """The judge uses a label (5) no human does: it stays among the categories, as for kappa."""
    judge, humans = annotations(32, [1, 2, 3, 4])
    judge[next(iter(judge))] = 5
    result = score(CohensKappaScorer(weights=weights), judge, humans, bootstrap=False)
    baseline = baseline_of(result)
    _, there = on_judge_items(judge, humans)
    labels = [1, 2, 3, 4, 5]
    expected = ref_per_human("cohens_kappa", "individual_average", there, labels, weights)
    for h, value in expected.items():
        assert value is not None and math.isclose(baseline.per_human[h], value, abs_tol=TOL)
    assert baseline.interval is None  # no bootstrap, no interval


def test_krippendorff_baseline_is_alpha_of_the_humans_alone() -> None:
    """Alpha of the humans on every unit two of them labelled, the judge's or not (as the
    judge's `alpha_humans`); its interval resamples the units of the judge's alpha."""
    judge, humans = annotations(33, ["a", "b", "c"], judge_coverage=0.6)
    result = score(KrippendorffAlphaScorer(), judge, humans)
    baseline = baseline_of(result)
    units = pairable_units(judge, humans)
    assert any(u not in judge and sum(u in h for h in humans.values()) >= 2 for u in units)
    assert baseline.score == "alpha" and baseline.per_human == {} and baseline.humans == 3
    assert math.isclose(baseline.value or 0.0, ref_alpha_humans(units, humans), abs_tol=TOL)
    assert math.isclose(baseline.value or 0.0, result.scores["alpha_humans"], abs_tol=TOL)
    assert baseline.items == result.metadata["units_humans"]
    assert baseline.items == sum(sum(u in h for h in humans.values()) >= 2 for u in units)
    assert result.confidence_intervals is not None
    assert baseline.interval == pytest.approx(result.confidence_intervals["alpha_humans"])

    def alpha(hs: Humans) -> float:
        return ref_alpha_humans(sorted({i for h in hs.values() for i in h}), hs)

    there = {h: {u: v for u, v in labels.items() if u in set(units)} for h, labels in
             humans.items()}  # fmt: skip
    assert baseline.interval == pytest.approx(ref_interval(units, there, alpha), abs=TOL)


def test_the_baseline_resamples_the_judges_draws() -> None:
    """Judge and humans on the same items: the baseline equals the judge's score when the
    judge copies a human and only two humans exist (each one's leave-one-out is the other)."""
    _, humans = annotations(34, ["a", "b"], n_humans=2, coverage=1.0)
    judge = dict(humans["alice"])
    result = score(AccuracyScorer(), judge, {"bob": humans["bob"], "alice": humans["alice"]})
    baseline = baseline_of(result)
    # the judge (= alice) against bob and alice: (acc(alice, bob) + 1) / 2; humans: acc(a, b)
    assert result.confidence_intervals is not None
    judge_low, judge_high = result.confidence_intervals["accuracy"]
    base_low, base_high = baseline.interval or (None, None)
    assert base_low is not None and base_high is not None
    # same resamples, so each resample's judge value is (baseline + 1) / 2: so are the bounds
    assert math.isclose(judge_low or 0.0, (base_low + 1) / 2, abs_tol=TOL)
    assert math.isclose(judge_high or 0.0, (base_high + 1) / 2, abs_tol=TOL)


def test_one_human_has_no_baseline_and_says_why() -> None:
    judge, humans = annotations(35, ["a", "b"], n_humans=1)
    for scorer in (AccuracyScorer(), CohensKappaScorer(), KrippendorffAlphaScorer()):
        raw = score(scorer, judge, humans).metadata["human_baseline"]
        assert raw["value"] is None and raw["interval"] is None and raw["humans"] == 0
        assert "two humans" in raw["reason"]


def test_no_item_with_two_humans_has_no_baseline() -> None:
    judge = {i: "a" if i % 2 else "b" for i in range(10)}
    humans = {"alice": {i: "a" for i in range(5)}, "bob": {i: "b" for i in range(5, 10)}}
    raw = score(AccuracyScorer(), judge, humans).metadata["human_baseline"]
    assert raw["value"] is None and raw["items"] == 0
    assert raw["reason"] == "no item the judge labelled has labels from two humans"


def test_kappa_undefined_for_every_human_says_so() -> None:
    """Every human gives one label: p_e = 1, kappa undefined for each (sklearn: nan)."""
    judge = {i: "a" if i % 2 else "b" for i in range(10)}
    humans = {"alice": dict.fromkeys(range(10), "a"), "bob": dict.fromkeys(range(10), "a")}
    raw = score(CohensKappaScorer(), judge, humans).metadata["human_baseline"]
    assert sk_kappa(["a"] * 10, ["a"] * 10, None, ["a", "b"]) is None
    assert raw["value"] is None and raw["per_human"] == {"alice": None, "bob": None}
    assert "undefined for every human" in raw["reason"]


def test_computed_once_for_judges_with_the_same_items(monkeypatch: pytest.MonkeyPatch) -> None:
    judge, humans = annotations(36, ["a", "b", "c"], judge_coverage=1.0)
    judges, annotators = results({"t": (judge, humans)}, "int")
    frame = judges["judge"]
    fewer = frame.filter(pl.col("original_id") != frame["original_id"][0])
    calls: list[str] = []
    original = AccuracyScorer.human_baseline_statistic

    async def counted(self: Any, call: Any, ids: Any) -> Any:
        calls.append(call.judge_id)
        return await original(self, call, ids)

    monkeypatch.setattr(AccuracyScorer, "human_baseline_statistic", counted)
    metric = MetricConfig(scorer=AccuracyScorer(), task_names=["t"], aggregation_name="single")
    all_judges = {"j1": frame, "j2": frame, "j3": fewer}

    async def go() -> Any:
        return await compare(MetricsConfig(metrics=[metric]), all_judges, annotators)

    j1, j2, j3 = anyio.run(go)[metric.get_unique_name()][1]
    assert calls == ["j1", "j3"]  # j2 has j1's items; j3 lacks one
    assert j1.metadata["human_baseline"] == j2.metadata["human_baseline"]
    _, there = on_judge_items({i: v for i, v in judge.items() if i != frame["original_id"][0]},
                              humans)  # fmt: skip
    expected = mean_defined(ref_per_human("accuracy", "individual_average", there, []))
    assert math.isclose(j3.metadata["human_baseline"]["value"], expected or 0.0, abs_tol=TOL)


def test_multitask_baseline_is_the_mean_over_tasks() -> None:
    first = annotations(37, ["a", "b"])
    second = annotations(38, ["x", "y", "z"])
    judges, annotators = results({"t1": first, "t2": second}, "int")
    metric = MetricConfig(
        scorer=AccuracyScorer(), task_names=["t1", "t2"], aggregation_name="multitask",
        bootstrap=BootstrapConfig(n_resamples=RESAMPLES, seed=SEED),
    )  # fmt: skip

    async def go() -> Any:
        return await compare(MetricsConfig(metrics=[metric]), judges, annotators)

    (result,) = anyio.run(go)[metric.get_unique_name()][1]
    per_task = []
    for name, (judge, humans) in (("t1", first), ("t2", second)):
        _, there = on_judge_items({i: v for i, v in judge.items() if v is not None},
                                  {h: {i: v for i, v in labels.items() if v is not None}
                                   for h, labels in humans.items()})  # fmt: skip
        expected = mean_defined(ref_per_human("accuracy", "individual_average", there, []))
        saved = result.metadata["per_task"][name]["metadata"]["human_baseline"]
        assert math.isclose(saved["value"], expected or 0.0, abs_tol=TOL)
        per_task.append(expected or 0.0)
    overall = result.metadata["human_baseline"]
    assert math.isclose(overall["value"], float(np.mean(per_task)), abs_tol=TOL)
    low, high = overall["interval"]
    assert low is not None and low <= overall["value"] <= high


def test_a_custom_scorer_has_no_baseline() -> None:
    class Constant(BaseScorer):
        def __init__(self) -> None:
            super().__init__(scorer_name="constant")

        def can_score_task(self, sample_label: Any) -> bool:
            return True

        async def compute_score_async(
            self, judge_data: pl.DataFrame, human_data: pl.DataFrame, task_name: str,
            judge_id: str, aggregation_mode: TaskAggregationMode,
        ) -> ScoringResult:  # fmt: skip
            return ScoringResult(
                scorer_name="constant", task_name=task_name, judge_id=judge_id,
                scores={"c": 1.0}, aggregation_mode=aggregation_mode, num_comparisons=1,
            )  # fmt: skip

    judge, humans = annotations(39, ["a", "b"])
    assert "human_baseline" not in score(Constant(), judge, humans).metadata


def test_metadata_round_trip() -> None:
    baseline = HumanBaseline(
        score="accuracy", value=0.8, interval=(0.7, 0.9), per_human={"a": 0.8, "b": None},
        humans=1, items=12, method="m",
    )  # fmt: skip
    assert HumanBaseline.from_metadata(baseline.as_metadata()) == baseline
    assert HumanBaseline.from_metadata(None) is None
    assert HumanBaseline.from_metadata({"value": 1}) is None


def test_semantic_similarity_baseline_embeds_nothing_more(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cosine of the fake server's vectors, computed with numpy; the humans' texts were embedded
    for the judge's score, so the baseline sends no request of its own."""
    import httpx
    import respx

    from tests.scores.test_semantic_similarity import HUMANS, JUDGE, URL, answer, cosine, scorer_for

    monkeypatch.setenv("EMB_TEST_KEY", "emb-secret-1234")
    router = respx.Router(assert_all_called=False)
    route = router.post(URL).mock(side_effect=answer)
    result = score(scorer_for(router), dict(JUDGE), {h: dict(v) for h, v in HUMANS.items()})
    assert route.call_count == 1
    assert isinstance(route.calls.last.response, httpx.Response)
    _, there = on_judge_items(JUDGE, HUMANS)

    def mean_cosine(a: list[Any], b: list[Any]) -> float:
        return float(np.mean([cosine(x, y) for x, y in zip(a, b, strict=True)]))

    expected = per_pair(there, mean_cosine)
    baseline = baseline_of(result)
    assert baseline.score == "semantic_similarity"
    for h, value in expected.items():
        if value is None:
            assert baseline.per_human[h] is None
        else:
            assert math.isclose(baseline.per_human[h] or 0.0, value, abs_tol=TOL), h
    assert math.isclose(baseline.value or 0.0, mean_defined(expected) or 1.0, abs_tol=TOL)
