"""`normalised_labels`: how many imported labels match an allowed label only once normalised."""

from __future__ import annotations

import logging
from pathlib import Path

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.eval_task.labels import NormalisedLabels, check_frame, normalised_labels

TASK = EvalTask(
    task_schemas={
        "verdict": ["Yes", "no", "Not Sure"],
        "number": ["1", "2"],
        "harms": MultiLabelSchema(outcomes=["crime", "Fraud", "spam"]),
        "note": None,
    },
    response_columns=["r"],
)


def test_only_labels_written_otherwise_count() -> None:
    frame = pl.DataFrame(
        {
            "verdict": ["Yes", "yes", " no ", "NOT  SURE", "maybe", None, "yes"],
            "number": [1, 2, 1, 2, 1, 3, 1],  # numbers read as their text: not normalised
            "harms": ["crime, Fraud", "fraud", "CRIME;spam", "", "crime", None, "nope"],
            "note": ["Free", " text ", "x", "y", "z", None, "w"],  # free text: no labels
        }
    )
    found = normalised_labels(frame, TASK)
    # verdict: 'yes' twice, ' no ', 'NOT  SURE'; harms: 'fraud', 'CRIME;spam'
    assert found.count == 6
    assert found.examples == (("yes", "Yes"), (" no ", "no"), ("NOT  SURE", "Not Sure"))
    assert found.describe().startswith("6 labels normalised ('yes' → 'Yes', ' no ' → 'no'")
    assert normalised_labels(frame, TASK, ["harms"]) == NormalisedLabels(
        2, (("fraud", "Fraud"), ("CRIME;spam", "crime, spam"))
    )
    # the same labels check_frame stores: each counted one is valid, stored as allowed
    checked = check_frame(frame, TASK, required=["verdict"])
    assert checked["verdict"].to_list() == ["Yes", "Yes", "no", "Not Sure", None, None, "Yes"]


def test_nothing_to_say_of_labels_as_written() -> None:
    frame = pl.DataFrame({"verdict": ["Yes", "no", "Not Sure"], "harms": ["spam", "", "crime"]})
    assert normalised_labels(frame, TASK) == NormalisedLabels(0)


def test_an_import_reports_them(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from meta_evaluator.examples import create_example_project

    evaluator: MetaEvaluator = create_example_project("refusal", tmp_path / "p")
    labels = tmp_path / "dana.csv"
    labels.write_text("original_id,rejection\n101,REJECTION\n102, not  rejection\n103,rejection\n")
    caplog.set_level(logging.INFO, logger="meta_evaluator.results.external")
    results = evaluator.add_external_annotation_results(labels, "dana")
    assert results.counts() == {"valid": 3, "invalid": 0}
    assert results.results_data["rejection"].to_list() == [
        "rejection", "not rejection", "rejection",
    ]  # fmt: skip
    (said,) = [r.getMessage() for r in caplog.records if "normalised" in r.getMessage()]
    assert said == (
        f"{labels}: 2 labels normalised ('REJECTION' → 'rejection', ' not  rejection' → "
        "'not rejection'): stored as the allowed labels they match ignoring case, white space "
        "and accent encoding."
    )
