"""The charts of the model-evaluation scorers: drawn from results as saved, or not at all.

Each chart is a valid PNG when a result has what it draws (also with undefined values and
without intervals), and is skipped (None, no file) when none has: a failed judge alone draws
nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from matplotlib import image

from meta_evaluator.scores import ScoringResult
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.model_plots import (
    bucket_score_chart,
    change_rate_chart,
    group_rate_chart,
    language_rate_chart,
)

PNG = b"\x89PNG\r\n\x1a\n"


def result(scorer: str, scores: dict[str, Any], metadata: dict[str, Any], judge: str = "m") -> Any:
    return ScoringResult(
        scorer_name=scorer, task_name="t", judge_id=judge, scores=scores, metadata=metadata,
        aggregation_mode=TaskAggregationMode.SINGLE, num_comparisons=1,
    )  # fmt: skip


def failed(scorer: str) -> Any:
    return ScoringResult(
        scorer_name=scorer, task_name="t", judge_id="broken", scores={},
        aggregation_mode=TaskAggregationMode.SINGLE, num_comparisons=0, failed_comparisons=1,
        error="no valid rows",
    )  # fmt: skip


def group(size: int, selected: int, tpr: float | None) -> dict[str, Any]:
    return {
        "size": size, "selected": selected, "selection_rate": selected / size,
        "selection_rate_interval": [0.1, 0.9], "positives": 3, "true_positives": 1,
        "tpr": tpr, "tpr_interval": None if tpr is None else [0.0, 0.8], "negatives": 2,
        "false_positives": 0, "fpr": 0.0, "fpr_interval": None,
    }  # fmt: skip


CASES = {
    "fairness": (
        group_rate_chart,
        result("fairness", {}, {
            "thresholds_used": {"male": [0.5, True]},
            "group_rates": {
                "male": {"privileged": group(5, 2, None), "unprivileged": group(4, 4, 0.5)},
                "region": {"a": group(3, 1, 1.0), "b": group(6, 0, 0.0)},
            },
        }),
    ),
    "stereotype": (
        bucket_score_chart,
        result("stereotype", {"lms": 50.0}, {"buckets": {
            "overall": {"lms": 50.0, "ss": 100.0, "icat": 0.0, "stereotype": 1, "neutral": 1},
            "religion": {"lms": None, "ss": None, "icat": None},
        }}),
    ),
    "counterfactual": (
        change_rate_chart,
        result("counterfactual", {"change_rate_overall": 0.5,
                                  "change_rate_by_group": {"0": 1.0, "1": None}},
               {"group_column": "male", "used": 2, "by_group": {"0": {"used": 2}}}),
    ),
    "multiple_choice": (
        language_rate_chart,
        result("multiple_choice", {"overall_accuracy": 0.5, "accuracy_on_valid": None,
                                   "format_error_rate": 1.0},
               {"counts": {"total": 2}, "per_language": {"xx": {"overall_accuracy": 0.0,
                                                                "counts": {"total": 1}}}}),
    ),
}  # fmt: skip


@pytest.mark.parametrize("kind", sorted(CASES))
def test_chart_is_a_png_with_undefined_values_and_missing_intervals(
    kind: str, tmp_path: Path
) -> None:
    chart, found = CASES[kind]
    second = found.model_copy(update={"judge_id": "other"})
    path = chart([found, second, failed(kind)], tmp_path / f"{kind}.png", title=f"{kind}: t")
    assert path == tmp_path / f"{kind}.png"
    assert path.read_bytes().startswith(PNG)
    height, width = image.imread(path).shape[:2]
    assert width > 600 and height > 200


@pytest.mark.parametrize("kind", sorted(CASES))
def test_no_chart_without_anything_to_draw(kind: str, tmp_path: Path) -> None:
    chart, _ = CASES[kind]
    assert chart([failed(kind)], tmp_path / "none.png", title="t") is None
    assert not (tmp_path / "none.png").exists()
