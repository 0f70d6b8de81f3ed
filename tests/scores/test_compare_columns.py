"""Scoring a project reads only the columns it needs, text as categories (issue 21).

The scores must be exactly those of the whole tables: `compare_async()` reading by columns is
checked against `compare_async` given every column as `load_all_*` returns it.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.results.human_results import latest_annotations
from meta_evaluator.results.judge_results import latest_results
from meta_evaluator.scores import BaseScorer, BaseScoringResult, MetricConfig, MetricsConfig
from meta_evaluator.scores.compare import scoring_columns
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.metrics import (
    AccuracyScorer,
    AltTestScorer,
    CohensKappaScorer,
    KrippendorffAlphaScorer,
)

LABELS = ["rejection", "not rejection", "unclear"]


@pytest.fixture
def evaluator(tmp_path: Path) -> MetaEvaluator:
    rng = np.random.default_rng(3)
    n = 120
    ids = [f"q{i}" for i in range(n)]
    evaluator = MetaEvaluator(tmp_path / "p")
    frame = pl.DataFrame({"qid": ids, "response": [f"r{i}" for i in range(n)]})
    evaluator.add_data(DataLoader.load_from_dataframe("d", frame, "qid"))
    evaluator.add_eval_task(
        EvalTask(
            {"rejection": LABELS, "harms": MultiLabelSchema(outcomes=["a", "b"])},
            None,
            ["response"],
            required_tasks=["rejection"],
        )
    )
    truth = rng.integers(0, 3, n)
    for k, name in enumerate(["ana", "ben", "chen", "judge"]):
        flip = rng.random(n) < 0.2
        labels = np.where(flip, (truth + 1) % 3, truth)
        values = [LABELS[v] if rng.random() > 0.05 else "nonsense" for v in labels]
        path = tmp_path / f"{name}.csv"
        keep = rng.random(n) > 0.1 * k  # each file lacks some rows
        pl.DataFrame({"original_id": ids, "rejection": values, "harms": ["a"] * n}).filter(
            pl.Series(keep)
        ).write_csv(path)
        if name == "judge":  # a few invalid labels in each file: logged, kept as invalid
            evaluator.add_external_judge_results(path, name)
        else:
            evaluator.add_external_annotation_results(path, name)
    return evaluator


def metrics() -> MetricsConfig:
    return MetricsConfig(
        metrics=[
            MetricConfig(scorer=scorer, task_names=["rejection"], aggregation_name="single")
            for scorer in (
                AccuracyScorer(),
                CohensKappaScorer(),
                KrippendorffAlphaScorer(),
                AltTestScorer(min_instances_per_human=10),
            )
        ]
    )


def test_loaders_read_the_columns_asked_and_text_as_categories(evaluator: MetaEvaluator) -> None:
    task = evaluator.eval_task
    assert task is not None
    columns, human_columns, categories = scoring_columns(metrics(), task)
    assert "llm_raw_response_content" not in columns and "timestamp" not in columns
    judges = latest_results(evaluator.paths.results_dir, columns=columns, categories=categories)
    full = evaluator.load_all_judge_results()["judge"].results_data
    read = judges["judge"].results_data
    assert read.columns == [c for c in full.columns if c in columns]
    assert read.schema["rejection"] == pl.Categorical and read.schema["outcome"] == pl.Categorical
    assert read.with_columns(pl.col(categories).cast(pl.String)).equals(full.select(read.columns))
    humans = latest_annotations(
        evaluator.paths.annotations_dir, columns=human_columns, categories=categories
    )
    assert sorted(humans) == ["ana", "ben", "chen"]
    assert humans["ana"].results_data.columns == ["original_id", "outcome", "status", "rejection",
                                                  "harms"]  # fmt: skip


def test_scores_read_by_columns_equal_scores_of_whole_tables(evaluator: MetaEvaluator) -> None:
    by_columns = evaluator.compare_async(metrics())
    whole = evaluator.compare_async(
        metrics(),
        judge_results=evaluator.load_all_judge_results(),
        human_results=evaluator.load_all_human_results(),
    )
    assert by_columns.keys() == whole.keys()
    for name, (_, results) in by_columns.items():
        (other,) = whole[name][1]
        (result,) = results
        assert result.error is None
        assert result.scores == other.scores
        assert result.metadata == other.metadata
        assert result.num_comparisons == other.num_comparisons


class _Spy(BaseScorer):
    """A custom scorer as users write them: records the frames it is given."""

    def __init__(self) -> None:
        super().__init__(scorer_name="spy")
        self.seen: list[tuple[pl.DataType, pl.DataType, pl.DataType, list[str]]] = []

    def can_score_task(self, sample_label: object) -> bool:
        return isinstance(sample_label, str)

    async def compute_score_async(
        self,
        judge_data: pl.DataFrame,
        human_data: pl.DataFrame,
        task_name: str,
        judge_id: str,
        aggregation_mode: TaskAggregationMode,
    ) -> BaseScoringResult:
        self.seen.append(
            (
                judge_data.schema["label"],
                human_data.schema["label"],
                human_data.schema["human_id"],
                sorted(human_data["human_id"].unique().to_list()),
            )
        )
        matched = judge_data.join(human_data, on="original_id")
        share = float((matched["label"] == matched["label_right"]).mean() or 0.0)
        return BaseScoringResult(
            scorer_name="spy", task_name=task_name, judge_id=judge_id,
            scores={"share": share}, metadata={}, aggregation_mode=aggregation_mode,
            num_comparisons=matched.height, failed_comparisons=0,
        )  # fmt: skip


def test_custom_scorers_get_labels_as_text_and_built_ins_as_categories(
    evaluator: MetaEvaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    from meta_evaluator.scores.metrics import _items

    spy = _Spy()
    seen: list[pl.DataType] = []
    build = _items.Items.build.__func__  # type: ignore[attr-defined]

    def recording(cls: type, judge: pl.DataFrame, human: pl.DataFrame, ids: pl.Series) -> object:
        seen.append(human.schema["label"])
        return build(cls, judge, human, ids)

    monkeypatch.setattr(_items.Items, "build", classmethod(recording))
    config = MetricsConfig(
        metrics=[
            MetricConfig(scorer=s, task_names=["rejection"], aggregation_name="single")
            for s in (spy, AccuracyScorer(), CohensKappaScorer())
        ]
    )
    evaluator.compare_async(config)
    assert spy.seen == [(pl.String, pl.String, pl.String, ["ana", "ben", "chen"])]
    assert seen == [pl.Categorical]  # laid out once, as codes, for accuracy and kappa alike


def test_items_are_the_same_whether_annotators_rows_are_grouped_or_interleaved() -> None:
    from meta_evaluator.scores.metrics._items import Items

    rng = np.random.default_rng(4)
    rows = [(i, h, str(rng.choice(LABELS))) for h in ("ana", "ben") for i in range(50)
            if rng.random() > 0.2]  # fmt: skip
    grouped = pl.DataFrame(rows, schema=["original_id", "human_id", "label"], orient="row")
    interleaved = grouped.sort("original_id")
    judge = pl.DataFrame({"original_id": list(range(0, 60, 2)), "label": ["unclear"] * 30})
    ids = pl.Series("original_id", list(range(0, 50, 2)))
    a, b = Items.build(judge, grouped, ids), Items.build(judge, interleaved, ids)
    assert a.humans == b.humans == ["ana", "ben"]
    assert [h.to_list() for h in a.human] == [h.to_list() for h in b.human]
    assert a.judge.to_list() == ["unclear"] * 25
    expected = {(i, h): label for i, h, label in rows}
    assert a.human[0].to_list() == [expected.get((i, "ana")) for i in range(0, 50, 2)]


@pytest.mark.parametrize("kind", ["text", "categories", "numbers"])
def test_majority_codes_equal_the_majority_counted_in_python(kind: str) -> None:
    from meta_evaluator.scores.metrics._items import Items
    from meta_evaluator.stats.checks import encode_labels

    rng = np.random.default_rng({"text": 1, "categories": 2, "numbers": 3}[kind])
    n, options = 400, ["b", "a", "d", "c"]  # "d" never judged: only humans and ties hold it

    def column(missing: float, choices: list[str]) -> pl.Series:
        values = [None if rng.random() < missing else str(rng.choice(choices)) for _ in range(n)]
        if kind == "numbers":
            return pl.Series([None if v is None else float(ord(v)) for v in values])
        series = pl.Series(values, dtype=pl.String)
        return series.cast(pl.Categorical) if kind == "categories" else series

    ids = pl.Series("original_id", range(n))
    items = Items(ids, ["h1", "h2", "h3", "h4"], column(0.1, [*options[:2], "c"]),
                  [column(0.3, options) for _ in range(4)])  # fmt: skip
    judge, majority, labels = items.majority_codes()
    (want_judge, want_majority), want_labels = encode_labels(
        items.judge.to_list(), items.majority()
    )
    assert labels == want_labels
    assert np.array_equal(judge, want_judge) and np.array_equal(majority, want_majority)
    assert (majority >= 0).sum() > 300  # most items have a majority; ties and none occur


class _InvalidSpy(_Spy):
    include_invalid = True


def test_a_custom_scorer_of_invalid_rows_gets_outcomes_as_text_in_a_frame_of_its_own(
    evaluator: MetaEvaluator,
) -> None:
    first, second = _InvalidSpy(), _InvalidSpy()
    seen: list[pl.Schema] = []

    async def record(judge_data: pl.DataFrame, *args: object) -> BaseScoringResult:
        seen.append(judge_data.schema)
        judge_data.drop_in_place("outcome")  # a change in place stays in the scorer's copy
        return await _Spy.compute_score_async(first, judge_data, *args)  # type: ignore[arg-type]

    async def look(judge_data: pl.DataFrame, *args: object) -> BaseScoringResult:
        seen.append(judge_data.schema)
        return await _Spy.compute_score_async(second, judge_data, *args)  # type: ignore[arg-type]

    first.compute_score_async = record  # type: ignore[method-assign]
    second.compute_score_async = look  # type: ignore[method-assign]
    config = MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=s, task_names=["rejection"], aggregation_name="single", display_name=name
            )
            for s, name in ((first, "first"), (second, "second"))
        ]
    )
    evaluator.compare_async(config)
    assert seen[0]["outcome"] == pl.String and seen[0]["status"] == pl.String
    assert seen[1]["outcome"] == pl.String  # the second scorer's frame still has it


def test_a_failure_names_the_scorer_it_happened_to() -> None:
    import asyncio

    from meta_evaluator.scores.compare import compare

    judge = pl.DataFrame({"original_id": [1, 2, 3], "outcome": ["valid"] * 3,
                          "status": ["success"] * 3, "t": ["a", "b", "a"]})  # fmt: skip
    human = pl.DataFrame(
        {"original_id": [1, 2, 3], "outcome": ["invalid"] * 3, "status": ["parsing_error"] * 3,
         "t": [None, None, None]},
        schema_overrides={"t": pl.String},
    )  # fmt: skip
    config = MetricsConfig(
        metrics=[
            MetricConfig(scorer=s, task_names=["t"], aggregation_name="single")
            for s in (AccuracyScorer(), CohensKappaScorer())
        ]
    )
    with pytest.warns(UserWarning):
        table = asyncio.run(compare(config, {"j": judge}, {"h": human}))
    errors = {m.scorer.scorer_name: r[0].error for m, r in table.values()}
    assert errors.keys() == {"accuracy", "cohens_kappa"}
    assert all(str(error).startswith(f"{name}: ") for name, error in errors.items())


def test_built_ins_get_the_humans_whole_and_a_custom_scorer_only_the_common_ids(
    evaluator: MetaEvaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    from meta_evaluator.scores.base_scorer import ScoringCall

    spy = _Spy()
    calls: list[ScoringCall] = []
    score = AccuracyScorer.score

    async def recording(self: AccuracyScorer, call: ScoringCall) -> object:
        calls.append(call)
        return await score(self, call)

    monkeypatch.setattr(AccuracyScorer, "score", recording)
    seen: list[tuple[set[object], set[object]]] = []
    look = _Spy.compute_score_async

    async def own(judge_data: pl.DataFrame, human_data: pl.DataFrame, *args: object) -> object:
        seen.append((set(judge_data["original_id"]), set(human_data["original_id"])))
        return await look(spy, judge_data, human_data, *args)  # type: ignore[arg-type]

    spy.compute_score_async = own  # type: ignore[method-assign]
    config = MetricsConfig(
        metrics=[
            MetricConfig(scorer=s, task_names=["rejection"], aggregation_name="single")
            for s in (spy, AccuracyScorer())
        ]
    )
    table = evaluator.compare_async(config)
    (judge_ids, human_ids) = seen[0]
    assert human_ids <= judge_ids  # restricted to the ids both have
    (call,) = calls
    assert set(call.human_data["original_id"]) - set(call.judge_data["original_id"])
    common = pl.col("original_id").is_in(call.judge_data["original_id"].implode())
    restricted = dataclasses.replace(call, human_data=call.human_data.filter(common), shared={})
    scored = asyncio.run(AccuracyScorer().score(restricted))  # as a restricted frame scores
    (accuracy,) = next(results for m, results in table.values() if m.scorer is not spy)
    assert (
        scored.scores == accuracy.scores
        and scored.metadata["per_human"] == (accuracy.metadata["per_human"])
    )
