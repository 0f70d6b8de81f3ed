"""Scoring a project reads only the columns it needs, text as categories (issue 21).

The scores must be exactly those of the whole tables: `compare_async()` reading by columns is
checked against `compare_async` given every column as `load_all_*` returns it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.results.human_results import latest_annotations
from meta_evaluator.results.judge_results import latest_results
from meta_evaluator.scores import MetricConfig, MetricsConfig
from meta_evaluator.scores.compare import scoring_columns
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
    columns, categories = scoring_columns(metrics(), task)
    assert "llm_raw_response_content" not in columns and "timestamp" not in columns
    judges = latest_results(evaluator.paths.results_dir, columns=columns, categories=categories)
    full = evaluator.load_all_judge_results()["judge"].results_data
    read = judges["judge"].results_data
    assert read.columns == [c for c in full.columns if c in columns]
    assert read.schema["rejection"] == pl.Categorical and read.schema["outcome"] == pl.Categorical
    assert read.with_columns(pl.col(categories).cast(pl.String)).equals(full.select(read.columns))
    humans = latest_annotations(
        evaluator.paths.annotations_dir, columns=columns, categories=categories
    )
    assert sorted(humans) == ["ana", "ben", "chen"]
    assert "timestamp" not in humans["ana"].results_data.columns


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
