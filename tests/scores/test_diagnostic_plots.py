"""The charts of a judge against itself: drawn from results (per judge, or per judge and task)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from meta_evaluator.scores.base_scoring_result import ScoringResult
from meta_evaluator.scores.diagnostic_plots import position_bias_chart, self_consistency_chart
from meta_evaluator.scores.enums import TaskAggregationMode


def result(judge: str, scores: dict[str, Any], **fields: Any) -> ScoringResult:
    return ScoringResult(
        scorer_name="x", task_name="t", judge_id=judge, scores=scores,
        aggregation_mode=TaskAggregationMode.SINGLE, num_comparisons=1, **fields,
    )  # fmt: skip


BIAS = {"first_position_rate": 0.8, "consistency_rate": 0.4, "p_value": 1e-9, "pairs": 80,
        "first_position_interval": [0.73, 0.85]}  # fmt: skip
REPEAT = {"fleiss_kappa": 0.2, "krippendorff_alpha": 0.21, "flip_rate": 0.4, "samples_per_row": 5,
          "first_answer_accuracy": 0.6, "majority_accuracy": 0.85}  # fmt: skip


def test_charts_are_written_for_judges_and_tasks(tmp_path: Path) -> None:
    per_task = result("gpt", {}, metadata={"per_task": {
        "a": {"scores": BIAS, "confidence_intervals": {"first_position_rate": [0.75, 0.84]}},
        "b": {"error": "no swapped row has an answer"},
    }})  # fmt: skip
    undefined = result("empty", {"first_position_rate": None, "pairs": 0})
    failed = result("broken", {}, error="no column 'swapped_of'")
    path = position_bias_chart(
        [per_task, result("clean", {**BIAS, "first_position_rate": 0.5}), undefined, failed],
        tmp_path / "bias.png", title="t",
    )  # fmt: skip
    assert path is not None and path.stat().st_size > 10_000
    steady = result("steady", {**REPEAT, "flip_rate": 0.0, "fleiss_kappa": None})
    path = self_consistency_chart(
        [result("flips", REPEAT, confidence_intervals={"flip_rate": (0.3, 0.5)}), steady],
        tmp_path / "repeat.png", title="t",
    )  # fmt: skip
    assert path is not None and path.stat().st_size > 10_000


def test_nothing_to_draw_writes_nothing(tmp_path: Path) -> None:
    assert position_bias_chart([result("j", {"pairs": 0})], tmp_path / "a.png", title="t") is None
    assert self_consistency_chart([], tmp_path / "b.png", title="t") is None
    assert not list(tmp_path.iterdir())
