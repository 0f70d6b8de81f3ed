"""Bootstrap intervals from compare: each equals a paired bootstrap over items computed here.

The reference resamples the items (ids with a judge label and a human label, sorted; for
Krippendorff's alpha every unit with two values or more, the judge's counted) with
`meta_evaluator.stats.bootstrap.paired_bootstrap` and the same seed, and recomputes the score of
each resample with the test's own reference (scikit-learn, difflib, krippendorff, the pure
alt-test); a drawn item keeps all of its labels, and an item drawn twice counts twice. Built-in
scorers take a fast weighted path, so this checks it against re-scoring resample by resample.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import anyio
import polars as pl
import pytest

from meta_evaluator.scores import BootstrapConfig, MetricConfig, MetricsConfig
from meta_evaluator.scores.compare import compare
from meta_evaluator.scores.metrics import (
    AccuracyScorer,
    AltTestScorer,
    CohensKappaScorer,
    KrippendorffAlphaScorer,
    TextSimilarityScorer,
)
from meta_evaluator.stats.alt_test import alt_test
from meta_evaluator.stats.bootstrap import paired_bootstrap
from tests.scores.conftest import frames, random_annotations
from tests.scores.test_scorers import (
    PHRASES,
    pairable_units,
    present,
    ref_accuracy,
    ref_alpha,
    ref_kappa,
    ref_text_similarity,
    scored_items,
)

Labels = dict[Any, Any]
Humans = dict[str, Labels]
N_RESAMPLES = 50
SEED = 9


def results(
    tasks: dict[str, tuple[Labels, Humans]], id_kind: str
) -> tuple[dict[str, pl.DataFrame], dict[str, pl.DataFrame]]:
    """Judge and annotator frames shaped like imported results (one column per task)."""
    judge: pl.DataFrame | None = None
    humans: dict[str, pl.DataFrame] = {}
    for name, (j, hs) in tasks.items():
        jf, hf = frames(j, hs, id_kind)
        jf = jf.rename({"label": name})
        judge = jf if judge is None else judge.join(jf, on="original_id", how="full", coalesce=True)
        for h in hs:
            one = hf.filter(pl.col("human_id") == h).drop("human_id").rename({"label": name})
            humans[h] = (
                one
                if h not in humans
                else humans[h].join(one, on="original_id", how="full", coalesce=True)
            )
    assert judge is not None
    judge = judge.with_columns(outcome=pl.lit("valid"), status=pl.lit("success"))
    humans = {
        h: f.with_columns(outcome=pl.lit("valid"), status=pl.lit("success"))
        for h, f in humans.items()
    }
    return {"judge": judge}, humans


def interval(metric: MetricConfig, judges: Any, humans: Any) -> tuple[Any, Any]:
    async def go() -> Any:
        return await compare(MetricsConfig(metrics=[metric]), judges, humans)

    result = anyio.run(go)[metric.get_unique_name()][1][0]
    assert result.error is None
    return result.scores, result.confidence_intervals


def resample(labels: Labels, drawn: list[Any]) -> Labels:
    """The labels of the drawn items under fresh keys (a duplicate is a new item)."""
    return {k: labels[i] for k, i in enumerate(drawn) if i in labels}


def reference(
    judge: Labels,
    humans: Humans,
    score: Callable[[Labels, Humans], float | None],
    units: Callable[[Labels, Humans], list[Any]] = scored_items,
) -> tuple[float | None, float | None]:
    """The paired bootstrap over `units` (default: the items with a judge and a human label;
    Krippendorff's alpha resamples every unit with two values or more)."""
    items = sorted(units(judge, humans))

    def statistic(positions: Any) -> float | None:
        drawn = [items[p] for p in positions]
        return score(resample(judge, drawn), {h: resample(v, drawn) for h, v in humans.items()})

    return paired_bootstrap(
        statistic, list(range(len(items))), n_resamples=N_RESAMPLES, seed=SEED, vectorized=False
    )


def boot() -> BootstrapConfig:
    return BootstrapConfig(n_resamples=N_RESAMPLES, seed=SEED)


def assert_same(actual: tuple[Any, Any], expected: tuple[Any, Any]) -> None:
    assert actual[0] is not None and expected[0] is not None
    assert math.isclose(actual[0], expected[0], abs_tol=1e-9), (actual, expected)
    assert math.isclose(actual[1], expected[1], abs_tol=1e-9), (actual, expected)


def clean(judge: Labels, humans: Humans) -> tuple[Labels, Humans]:
    return present(judge), {h: present(v) for h, v in humans.items()}


CASES: list[tuple[str, Any, list[Any], str, Callable[..., Any]]] = [
    ("accuracy", AccuracyScorer, ["a", "b", "c"], "individual_average",
     lambda j, h: ref_accuracy(j, h, "individual_average")),
    ("accuracy", AccuracyScorer, ["a", "b", "c"], "majority_vote",
     lambda j, h: ref_accuracy(j, h, "majority_vote")),
    ("cohens_kappa", CohensKappaScorer, ["a", "b", "c"], "individual_average",
     lambda j, h: ref_kappa(j, h, "individual_average")[0]),
    ("cohens_kappa", CohensKappaScorer, ["a", "b", "c"], "majority_vote",
     lambda j, h: ref_kappa(j, h, "majority_vote")[0]),
    ("similarity", TextSimilarityScorer, PHRASES, "individual_average",
     lambda j, h: ref_text_similarity(j, h, "individual_average")),
    ("similarity", TextSimilarityScorer, PHRASES, "majority_vote",
     lambda j, h: ref_text_similarity(j, h, "majority_vote")),
    ("alpha", KrippendorffAlphaScorer, ["a", "b", "c"], "individual_average",
     lambda j, h: ref_alpha(j, h, "nominal", with_judge=True)),
    ("alpha_humans", KrippendorffAlphaScorer, ["a", "b", "c"], "individual_average",
     lambda j, h: ref_alpha(j, h, "nominal", with_judge=False)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("id_kind", "case"),
    [("int", case) for case in CASES] + [("str", CASES[0]), ("str", CASES[2])],
)
def test_interval_equals_a_paired_bootstrap(id_kind: str, case: Any) -> None:
    key, make, labels, aggregation, score = case
    judge, humans = clean(
        *random_annotations(
            80, labels=labels, n_items=25, n_humans=3, id_kind=id_kind, coverage=0.7
        )
    )
    judges, annotators = results({"t": (judge, humans)}, id_kind)
    metric = MetricConfig(
        scorer=make(),
        task_names=["t"],
        aggregation_name="single",
        annotator_aggregation=aggregation,
        bootstrap=boot(),
    )
    scores, intervals = interval(metric, judges, annotators)
    assert math.isclose(scores[key], score(judge, humans), abs_tol=1e-9)
    units = pairable_units if make is KrippendorffAlphaScorer else scored_items
    assert_same(intervals[key], reference(judge, humans, score, units))


@pytest.mark.parametrize("key", ["alpha", "alpha_humans"])
def test_alpha_interval_resamples_the_units_the_judge_skipped(key: str) -> None:
    """The judge answers about half the items: the units only the humans labelled are drawn
    too (every unit with two values), as krippendorff.alpha on each resample confirms."""
    judge, humans = clean(*random_annotations(84, labels=["a", "b", "c"], n_items=30,
                                              coverage=0.8, judge_coverage=0.5))  # fmt: skip
    units = pairable_units(judge, humans)
    assert sum(u not in judge for u in units) >= 5
    judges, annotators = results({"t": (judge, humans)}, "int")
    metric = MetricConfig(
        scorer=KrippendorffAlphaScorer(), task_names=["t"], aggregation_name="single",
        bootstrap=boot(),
    )  # fmt: skip

    def alpha(j: Labels, h: Humans) -> float:
        return ref_alpha(j, h, "nominal", with_judge=key == "alpha")

    scores, intervals = interval(metric, judges, annotators)
    assert math.isclose(scores[key], alpha(judge, humans), abs_tol=1e-9)
    assert_same(intervals[key], reference(judge, humans, alpha, pairable_units))


def test_alt_test_advantage_interval_equals_a_paired_bootstrap() -> None:
    judge, humans = clean(*random_annotations(81, labels=["a", "b"], n_items=30, coverage=0.8))
    judges, annotators = results({"t": (judge, humans)}, "int")
    metric = MetricConfig(
        scorer=AltTestScorer(min_instances_per_human=1),
        task_names=["t"],
        aggregation_name="single",
        bootstrap=boot(),
    )
    _, intervals = interval(metric, judges, annotators)
    assert set(intervals) == {"advantage_probability"}

    def advantage(j: Labels, h: Humans) -> float:
        return alt_test(h, j, min_instances_per_human=1).advantage_probability

    assert_same(intervals["advantage_probability"], reference(judge, humans, advantage))


def test_multitask_interval_resamples_the_tasks_together() -> None:
    first = clean(*random_annotations(82, labels=["a", "b"], n_items=20, coverage=0.7))
    second = clean(*random_annotations(83, labels=["x", "y", "z"], n_items=24, coverage=0.7))
    judges, annotators = results({"t1": first, "t2": second}, "int")
    metric = MetricConfig(
        scorer=AccuracyScorer(),
        task_names=["t1", "t2"],
        aggregation_name="multitask",
        bootstrap=boot(),
    )
    scores, intervals = interval(metric, judges, annotators)
    expected = (
        ref_accuracy(*first, "individual_average") + ref_accuracy(*second, "individual_average")
    ) / 2
    assert math.isclose(scores["accuracy"], expected, abs_tol=1e-9)

    # one resample draws from the union of both tasks' items; a task with none of its items
    # drawn is left out of the mean
    items = sorted(set(scored_items(*first)) | set(scored_items(*second)))

    def statistic(positions: Any) -> float | None:
        drawn = [items[p] for p in positions]
        values = []
        for judge, humans in (first, second):
            j = resample(judge, drawn)
            h = {name: resample(v, drawn) for name, v in humans.items()}
            if scored_items(j, h):
                values.append(ref_accuracy(j, h, "individual_average"))
        return sum(values) / len(values) if values else None

    expected_interval = paired_bootstrap(
        statistic, list(range(len(items))), n_resamples=N_RESAMPLES, seed=SEED, vectorized=False
    )
    assert_same(intervals["accuracy"], expected_interval)


@pytest.mark.parametrize("level", [0.5, 0.8, 0.99])
def test_confidence_level(level: float) -> None:
    judge, humans = clean(*random_annotations(84, labels=["a", "b"], n_items=30))
    judges, annotators = results({"t": (judge, humans)}, "int")
    metric = MetricConfig(
        scorer=AccuracyScorer(),
        task_names=["t"],
        aggregation_name="single",
        bootstrap=BootstrapConfig(n_resamples=N_RESAMPLES, seed=SEED, confidence_level=level),
    )
    items = sorted(scored_items(judge, humans))

    def statistic(positions: Any) -> float:
        drawn = [items[p] for p in positions]
        return ref_accuracy(
            resample(judge, drawn),
            {h: resample(v, drawn) for h, v in humans.items()},
            "individual_average",
        )

    expected = paired_bootstrap(
        statistic,
        list(range(len(items))),
        n_resamples=N_RESAMPLES,
        seed=SEED,
        confidence_level=level,
        vectorized=False,
    )
    assert_same(interval(metric, judges, annotators)[1]["accuracy"], expected)
