"""`evaluator.score_report` (0.3.3's ScoreReport), `add_metrics_config(overwrite=)`,
`MetricsConfig.add_metric` and `compare_async(judge_results, human_results)`.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.errors import AlreadySetError, MetricConfigError, UnsafeNameError
from meta_evaluator.scores import MetricConfig, MetricsConfig
from meta_evaluator.scores.base_scorer import BaseScorer
from meta_evaluator.scores.base_scoring_result import BaseScoringResult
from meta_evaluator.scores.metrics import AltTestScorer, ClassificationScorer, CohensKappaScorer
from tests.conftest import chats, rejection_project

LABELS = ["rejection", "not rejection"]
N = 40


def label(i: int, flip: int) -> str:
    return LABELS[(i % 3 == 0) ^ (i % flip == 0)]


def project(tmp_path: Path) -> MetaEvaluator:
    """40 chats, two judges and three annotators imported (labels differ by a pattern)."""
    evaluator = rejection_project(tmp_path / "p", chats(N))
    for name, flip, judge in (("good", 11, True), ("poor", 2, True), ("a", 7, False),
                              ("b", 9, False), ("c", 13, False)):  # fmt: skip
        path = tmp_path / f"{name}.csv"
        pl.DataFrame(
            {"original_id": range(N), "rejection": [label(i, flip) for i in range(N)]}
        ).write_csv(path)
        if judge:
            evaluator.add_external_judge_results(path, name)
        else:
            evaluator.add_external_annotation_results(path, name)
    return evaluator


class Wins(BaseScorer):
    """A scorer of the user's own, as 0.3.3's docs write one: its first number is shown."""

    def __init__(self) -> None:
        super().__init__(scorer_name="wins")

    def can_score_task(self, sample_label: Any) -> bool:
        return isinstance(sample_label, str)

    async def compute_score_async(self, judge_data, human_data, task_name, judge_id,  # type: ignore[no-untyped-def]
                                  aggregation_mode):  # fmt: skip
        joined = judge_data.join(human_data, on="original_id")
        share = float((joined["label"] == joined["label_right"]).mean())  # type: ignore[arg-type]
        return BaseScoringResult(
            scorer_name=self.scorer_name, task_name=task_name, judge_id=judge_id,
            scores={"note": "text first", "share": share}, metadata={},
            aggregation_mode=aggregation_mode, num_comparisons=joined.height,
            failed_comparisons=0,
        )  # fmt: skip


def config() -> MetricsConfig:
    metrics = MetricsConfig(
        metrics=[
            MetricConfig(scorer=ClassificationScorer("accuracy"), task_names=["rejection"],
                         task_strategy="single"),
        ]
    )  # fmt: skip
    metrics.add_metric(CohensKappaScorer(), ["rejection"], "single", display_name="kappa")
    metrics.add_metric(AltTestScorer(epsilon=0.15), ["rejection"], aggregation_name="single")
    metrics.add_metric(Wins(), ["rejection"], "single")
    return metrics


def test_the_report_shows_each_judge_under_each_metric(tmp_path: Path) -> None:
    evaluator = project(tmp_path)
    with pytest.raises(MetricConfigError, match="add_metrics_config"):
        _ = evaluator.score_report
    metrics = config()
    evaluator.add_metrics_config(metrics)
    table = evaluator.compare_async()
    report = evaluator.score_report.generate()
    names = list(table)
    assert report.columns == [
        "judge_id", names[0], "kappa", f"{names[2]}_winning_rate", f"{names[2]}_advantage_prob",
        names[3],
    ]  # fmt: skip
    assert sorted(report["judge_id"]) == ["good", "poor"]
    for (_metric, results), column in zip(table.values(), [names[0], "kappa"], strict=False):
        for result in results:
            key = "accuracy" if column == names[0] else "cohens_kappa"
            row = report.filter(pl.col("judge_id") == result.judge_id).row(0, named=True)
            assert row[column] == pytest.approx(result.scores[key])
    for result in table[names[2]][1]:  # the alt-test at ITS epsilon, not a fixed 0.20
        row = report.filter(pl.col("judge_id") == result.judge_id).row(0, named=True)
        assert row[f"{names[2]}_winning_rate"] == result.scores["winning_rate"]["0.15"]
    for result in table[names[3]][1]:  # the user's scorer: its first number
        row = report.filter(pl.col("judge_id") == result.judge_id).row(0, named=True)
        assert row[names[3]] == pytest.approx(result.scores["share"])


def test_the_report_is_saved_and_printed_as_033_did(tmp_path: Path) -> None:
    evaluator = project(tmp_path)
    evaluator.add_metrics_config(config())
    evaluator.compare_async()
    report = evaluator.score_report
    csv = report.save("score_report.csv", format="csv")
    assert (evaluator.paths.scores_dir / "score_report.csv").read_text() == csv
    assert pl.read_csv(evaluator.paths.scores_dir / "score_report.csv").equals(
        report.generate(), null_equal=True
    )
    page = report.save("score_report.html", format="html")
    assert (evaluator.paths.scores_dir / "score_report.html").read_text() == page
    good = report.generate().filter(pl.col("judge_id") == "good").row(0, named=True)
    assert f"<td class='best-score'>{good['kappa']:.3f}</td>" in page  # the better judge
    out = io.StringIO()
    report.print(out)
    assert out.getvalue().startswith("Score Report:") and "good" in out.getvalue()
    assert report.save("score_report.txt", format="txt") == out.getvalue()
    with pytest.raises(UnsafeNameError):
        report.save("../elsewhere.html")
    with pytest.raises(Exception, match="format must be 'html', 'csv' or 'txt'"):
        report.save("r.pdf", format="pdf")  # type: ignore[arg-type]


def test_a_report_before_any_score_says_so(tmp_path: Path) -> None:
    evaluator = project(tmp_path)
    evaluator.add_metrics_config(config())
    out = io.StringIO()
    evaluator.score_report.print(out)
    assert "No scores saved yet" in out.getvalue()
    assert evaluator.score_report.generate().is_empty()


def test_add_metrics_config_twice_needs_overwrite(tmp_path: Path) -> None:
    evaluator = project(tmp_path)
    evaluator.add_metrics_config(config())
    with pytest.raises(AlreadySetError, match="overwrite=True"):
        evaluator.add_metrics_config(config())
    other = MetricsConfig(metrics=[config().metrics[1]])
    evaluator.add_metrics_config(other, overwrite=True)
    assert list(evaluator.compare_async()) == ["kappa"]


def test_add_metric_checks_the_metric_and_the_folders() -> None:
    metrics = config()
    assert len(metrics.metrics) == 4
    with pytest.raises(MetricConfigError, match="would both write to"):
        metrics.add_metric(CohensKappaScorer(), ["rejection"], "single", display_name="kappa")
    with pytest.raises(MetricConfigError, match="takes exactly one task"):
        metrics.add_metric(CohensKappaScorer(), ["a", "b"], "single")
    assert len(metrics.metrics) == 4  # nothing added by a refused metric


def test_compare_async_takes_the_results_positionally(tmp_path: Path) -> None:
    evaluator = project(tmp_path)
    evaluator.add_metrics_config(config())
    judges = {"good": evaluator.load_all_judge_results()["good"]}
    humans = evaluator.load_all_human_results()
    table = evaluator.compare_async(judges, humans)  # 0.3.3's order
    assert {r.judge_id for _, results in table.values() for r in results} == {"good"}
    with pytest.raises(MetricConfigError, match="the results were given twice"):
        evaluator.compare_async(judges, humans, humans)
