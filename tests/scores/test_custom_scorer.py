"""A custom scorer written for the original meta-evaluator docs runs unchanged (API.md).

`MyCustomScorer` below is the docs' example as published (only `List`'s import and use carry a
`noqa` for ruff's pyupgrade rules); it must score through `compare_async`, write its JSON, and
get bootstrap intervals through the generic re-scoring path (it has no resampling statistic).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, List  # noqa: UP035

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.scores import (
    BaseScorer,
    BaseScoringResult,
    BootstrapConfig,
    MetricConfig,
    MetricsConfig,
)
from meta_evaluator.scores.base_scorer import Scored, ScorerWithOptions, ScoringCall
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.stats.bootstrap import paired_bootstrap


class MyCustomScorer(BaseScorer):
    def __init__(self):
        super().__init__(scorer_name="my_custom_scorer")

    def can_score_task(self, sample_label: Any) -> bool:
        if isinstance(sample_label, str):
            return True
        elif isinstance(sample_label, list):
            if len(sample_label) > 0:
                return isinstance(sample_label[0], str)
            return True
        else:
            return False

    async def compute_score_async(
        self,
        judge_data: pl.DataFrame,
        human_data: pl.DataFrame,
        task_name: str,
        judge_id: str,
        aggregation_mode: TaskAggregationMode,
    ) -> BaseScoringResult:
        comparison_df = judge_data.join(human_data, on="original_id", how="inner")
        if comparison_df.is_empty():
            score = 0.0
            num_comparisons = 0
            failed_comparisons = 1
        else:
            judge_wins = []
            num_comparisons = 0
            failed_comparisons = 0
            humans = comparison_df["human_id"].unique()
            for human_id in humans:
                try:
                    comparison_subset = comparison_df.filter(pl.col("human_id") == human_id)
                    judge_texts = comparison_subset["label"].to_list()
                    human_texts = comparison_subset["label_right"].to_list()
                    judge_more_A = 0
                    human_more_A = 0
                    for judge_text, human_text in zip(judge_texts, human_texts):  # noqa: B905
                        judge_count = str(judge_text).count("A")
                        human_count = str(human_text).count("A")
                        if judge_count > human_count:
                            judge_more_A += 1
                        else:
                            human_more_A += 1
                    if judge_more_A > human_more_A:
                        judge_wins.append(1)
                    else:
                        judge_wins.append(0)
                    num_comparisons += 1
                except Exception as e:
                    self.logger.error(f"Error computing score: {e}")
                    failed_comparisons += 1
                    continue
            score = sum(judge_wins) / len(judge_wins) if len(judge_wins) > 0 else 0.0
            num_comparisons = len(comparison_df)
        return BaseScoringResult(
            scorer_name=self.scorer_name,
            task_name=task_name,
            judge_id=judge_id,
            scores={"win_rate": score},
            metadata={
                "human_annotators": len(comparison_df["human_id"].unique())
                if not comparison_df.is_empty()
                else 0
            },
            aggregation_mode=aggregation_mode,
            num_comparisons=num_comparisons,
            failed_comparisons=failed_comparisons,
        )

    def aggregate_results(
        self,
        results: List[BaseScoringResult],  # noqa: UP006
        scores_dir: str,
        unique_name: str = "",
    ) -> None:
        pass


# ----- the project -------------------------------------------------------------------------------

IDS = [31, 4, 15, 9, 26, 5, 35, 8, 97, 93, 23, 84]
JUDGES = {
    # judge_a writes many A's, judge_b few
    "judge_a": {i: "A" * (k % 4 + 1) + "b" for k, i in enumerate(IDS)},
    "judge_b": {i: "bb" if k % 3 else "AA" for k, i in enumerate(IDS)},
}
HUMANS = {
    "alice": {i: "AA" for i in IDS},
    "bob": {i: "A" if k % 2 else "AAAA" for k, i in enumerate(IDS[:9])},
    "carol": {i: "b" for i in IDS[3:]},
}


def win_rate(judge: dict[int, str], humans: dict[str, dict[int, str]], items: list[int]) -> float:
    """The docs' definition, item by item: per human, does the judge write more A's more often?"""
    wins = []
    for labels in humans.values():
        rows = [(judge[i], labels[i]) for i in items if i in labels]
        if not rows:
            continue
        more = sum(a.count("A") > b.count("A") for a, b in rows)
        wins.append(1 if more > len(rows) - more else 0)
    return sum(wins) / len(wins)


def write(path: Path, labels: dict[int, str]) -> Path:
    pl.DataFrame(
        {
            "original_id": list(labels),
            "rejection": ["rejection"] * len(labels),
            "answer": list(labels.values()),
        }
    ).write_csv(path)
    return path


@pytest.fixture
def evaluator(tmp_path: Path) -> MetaEvaluator:
    evaluator = MetaEvaluator(tmp_path / "project")
    frame = pl.DataFrame({"id": IDS, "response": [f"r{i}" for i in IDS]})
    evaluator.add_data(DataLoader.load_from_dataframe("d", frame, id_column="id"))
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"rejection": ["rejection", "not rejection"], "answer": None},
            prompt_columns=None,
            response_columns=["response"],
        )
    )
    for judge_id, labels in JUDGES.items():
        evaluator.add_external_judge_results(write(tmp_path / f"{judge_id}.csv", labels), judge_id)
    for human_id, labels in HUMANS.items():
        evaluator.add_external_annotation_results(
            write(tmp_path / f"{human_id}.csv", labels), human_id
        )
    evaluator.save_state()
    return evaluator


def test_expected_win_rates_differ() -> None:
    # the data is chosen so the two judges score differently
    assert win_rate(JUDGES["judge_a"], HUMANS, IDS) != win_rate(JUDGES["judge_b"], HUMANS, IDS)


@pytest.mark.parametrize("spelling", ["task_strategy", "aggregation_name"])
def test_custom_scorer_runs_through_compare(evaluator: MetaEvaluator, spelling: str) -> None:
    metric = MetricConfig(scorer=MyCustomScorer(), task_names=["answer"], **{spelling: "single"})
    out = evaluator.compare_async(MetricsConfig(metrics=[metric]))
    name = metric.get_unique_name()
    assert name.startswith("my_custom_scorer_1tasks_")
    assert list(out) == [name]
    folder = evaluator.project_dir / "scores" / "my_custom_scorer" / name
    for result in out[name][1]:
        expected = win_rate(JUDGES[result.judge_id], HUMANS, IDS)
        assert result.scores["win_rate"] == pytest.approx(expected, abs=1e-12)
        assert result.error is None
        assert result.confidence_intervals is None
        assert result.num_comparisons == sum(len(h) for h in HUMANS.values())
        assert result.metadata == {"human_annotators": 3}
        saved = BaseScoringResult.load_state(folder / f"{result.judge_id}_result.json")
        assert saved.scores == result.scores
        assert saved.scorer_name == "my_custom_scorer"
        assert saved.task_name == "answer"
        assert saved.aggregation_mode is TaskAggregationMode.SINGLE


def test_custom_scorer_gets_bootstrap_intervals(evaluator: MetaEvaluator) -> None:
    boot = BootstrapConfig(n_resamples=50, seed=5)
    metric = MetricConfig(
        scorer=MyCustomScorer(), task_names=["answer"], aggregation_name="single", bootstrap=boot
    )
    config = MetricsConfig(metrics=[metric])
    out = evaluator.compare_async(config)
    items = sorted(IDS)
    for result in out[metric.get_unique_name()][1]:
        assert result.confidence_intervals is not None
        low, high = result.confidence_intervals["win_rate"]
        assert low is not None and high is not None
        assert 0.0 <= low <= high <= 1.0
        judge = JUDGES[result.judge_id]

        def statistic(positions: Any, judge: dict[int, str] = judge) -> float:
            # a resample: the drawn items, each with all of its labels, duplicates kept apart
            drawn = [items[p] for p in positions]
            fresh_judge = {k: judge[i] for k, i in enumerate(drawn)}
            fresh_humans = {
                h: {k: labels[i] for k, i in enumerate(drawn) if i in labels}
                for h, labels in HUMANS.items()
            }
            return win_rate(fresh_judge, fresh_humans, list(range(len(drawn))))

        expected = paired_bootstrap(
            statistic, list(range(len(items))), n_resamples=50, seed=5, vectorized=False
        )
        assert result.confidence_intervals["win_rate"] == pytest.approx(expected, abs=1e-12)
    again = evaluator.compare_async(config)
    assert [r.confidence_intervals for r in again[metric.get_unique_name()][1]] == [
        r.confidence_intervals for r in out[metric.get_unique_name()][1]
    ]


class OptionsScorer(MyCustomScorer):
    """A scorer that opts into the options by declaring them as keyword arguments."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, str | None]] = []

    async def compute_score_async(  # type: ignore[override]
        self,
        judge_data: pl.DataFrame,
        human_data: pl.DataFrame,
        task_name: str,
        judge_id: str,
        aggregation_mode: TaskAggregationMode,
        *,
        annotator_aggregation: str = "individual_average",
        task_kind: str | None = None,
    ) -> BaseScoringResult:
        self.seen.append((annotator_aggregation, task_kind))
        return await super().compute_score_async(
            judge_data, human_data, task_name, judge_id, aggregation_mode
        )


def test_a_scorer_declaring_the_options_gets_them(evaluator: MetaEvaluator) -> None:
    scorer = OptionsScorer()
    metric = MetricConfig(
        scorer=scorer,
        task_names=["answer"],
        aggregation_name="single",
        annotator_aggregation="majority_vote",
    )
    evaluator.compare_async(MetricsConfig(metrics=[metric]))
    assert scorer.seen == [("majority_vote", "free_text")] * len(JUDGES)


def test_scoring_result_is_base_scoring_result() -> None:
    from meta_evaluator.scores import ScoringResult
    from meta_evaluator.scores.base_scoring_result import BaseScoringResult as Old

    assert Old is ScoringResult is BaseScoringResult


class GapScorer(ScorerWithOptions):
    """A scorer built on ScorerWithOptions: it implements `score` only."""

    def __init__(self) -> None:
        super().__init__(scorer_name="gap")

    def can_score_task(self, sample_label: Any) -> bool:
        return isinstance(sample_label, str)

    async def score(self, call: ScoringCall) -> Scored:
        rate = (call.judge_data["label"].str.count_matches("A") > 1).mean()
        scores = {"rate": rate, "aggregation": call.annotator_aggregation}
        return Scored(scores, {"kind": call.task_kind}, call.judge_data.height)


def test_a_scorer_with_options_subclass_scores_through_compare(evaluator: MetaEvaluator) -> None:
    metric = MetricConfig(scorer=GapScorer(), task_names=["answer"], aggregation_name="single")
    out = evaluator.compare_async(MetricsConfig(metrics=[metric]))
    for result in out[metric.get_unique_name()][1]:
        labels = JUDGES[result.judge_id].values()
        assert result.scores["rate"] == pytest.approx(
            sum(v.count("A") > 1 for v in labels) / len(labels)
        )
        assert result.scores["aggregation"] == "individual_average"
        assert result.metadata == {"kind": "free_text"}
        assert result.num_comparisons == len(IDS) and result.failed_comparisons == 0


class AggregationOnlyScorer(MyCustomScorer):
    """As API.md offers custom scorers: only the `annotator_aggregation` keyword, no flag."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    async def compute_score_async(  # type: ignore[override]
        self,
        judge_data: pl.DataFrame,
        human_data: pl.DataFrame,
        task_name: str,
        judge_id: str,
        aggregation_mode: TaskAggregationMode,
        annotator_aggregation: str = "individual_average",
    ) -> BaseScoringResult:
        self.seen.append(annotator_aggregation)
        return await super().compute_score_async(
            judge_data, human_data, task_name, judge_id, aggregation_mode
        )


def test_a_scorer_declaring_only_annotator_aggregation_gets_it(evaluator: MetaEvaluator) -> None:
    scorer = AggregationOnlyScorer()
    assert scorer.accepted_options == {"annotator_aggregation"}
    metric = MetricConfig(
        scorer=scorer,
        task_names=["answer"],
        aggregation_name="single",
        annotator_aggregation="majority_vote",
    )
    evaluator.compare_async(MetricsConfig(metrics=[metric]))
    assert scorer.seen == ["majority_vote"] * len(JUDGES)
