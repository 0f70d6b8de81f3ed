"""The reading a judge's run and an annotator's set share (`results._outcome_table`)."""

from __future__ import annotations

import polars as pl
import pytest

from meta_evaluator.results.human_results import HumanAnnotationResults
from meta_evaluator.results.judge_results import JudgeResults


def frame(outcomes: list[str | None]) -> pl.DataFrame:
    return pl.DataFrame(
        {"original_id": list(range(len(outcomes))), "outcome": outcomes},
        schema={"original_id": pl.Int64, "outcome": pl.String},
    )


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        (
            JudgeResults("j", "r", frame(["valid", "error", "valid", "skipped", None])),
            {"valid": 2, "invalid": 0, "error": 1, "skipped": 1},
        ),
        (
            HumanAnnotationResults("a", "r", frame(["invalid", "valid", "valid", "valid"])),
            {"valid": 3, "invalid": 1},
        ),
    ],
)
def test_a_run_and_a_set_are_read_alike(
    table: JudgeResults | HumanAnnotationResults, expected: dict[str, int]
) -> None:
    rows = table.results_data.height
    assert table.counts() == expected  # every outcome of its kind listed, 0 included
    assert len(table) == table.total_count == rows
    assert table.succeeded_count == expected["valid"]
    assert table.valid_rows().get_column("outcome").to_list() == ["valid"] * expected["valid"]
    assert table.get_successful_results().equals(table.valid_rows())
    assert table.data.equals(table.results_data)
