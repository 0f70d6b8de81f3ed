"""Importing judge results made elsewhere: ids keep the data's dtype, labels are checked."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.errors import ColumnError, IdError, TaskError
from meta_evaluator.eval_task import EvalTask, MultiLabelSchema


def project(tmp_path: Path, ids: list[object]) -> MetaEvaluator:
    evaluator = MetaEvaluator(tmp_path / "p")
    frame = pl.DataFrame({"qid": ids, "response": [f"r{i}" for i in range(len(ids))]})
    evaluator.add_data(DataLoader.load_from_dataframe("d", frame, "qid"))
    evaluator.add_eval_task(
        EvalTask(
            {
                "rejection": ["rejection", "not rejection"],
                "harms": MultiLabelSchema(outcomes=["a", "b"]),
            },
            None,
            ["response"],
            required_tasks=["rejection"],
        )
    )
    return evaluator


def test_csv_import_with_integer_ids(tmp_path: Path) -> None:
    evaluator = project(tmp_path, [5, 7, 9])
    file = tmp_path / "gpt.csv"
    file.write_text('original_id,rejection,harms\n5,Rejection,"a,b"\n7,maybe,a\n9,not rejection,\n')
    results = evaluator.add_external_judge_results(file, "gpt_batch")
    data = results.results_data
    assert data.schema["original_id"] == pl.Int64
    assert data["outcome"].to_list() == ["valid", "invalid", "valid"]
    assert data["status"].to_list() == ["success", "label_not_allowed", "success"]
    assert data["rejection"].to_list() == ["rejection", None, "not rejection"]
    assert data["harms"].to_list() == [["a", "b"], ["a"], None]
    loaded = evaluator.load_all_judge_results()["gpt_batch"]
    assert loaded.results_data.equals(data)


def test_text_ids_that_are_integers_are_converted_exactly(tmp_path: Path) -> None:
    evaluator = project(tmp_path, [5, 7])
    file = tmp_path / "r.json"
    file.write_text('[{"original_id": "5", "rejection": "rejection"}]')
    data = evaluator.add_external_judge_results(file, "j").results_data
    assert data["original_id"].to_list() == [5]
    file.write_text('[{"original_id": "007", "rejection": "rejection"}]')
    with pytest.raises(ColumnError, match="'007' becomes 7"):
        evaluator.add_external_judge_results(file, "j")


def test_string_ids_stay_strings_and_unknown_ids_are_named(tmp_path: Path) -> None:
    evaluator = project(tmp_path, ["q-1", "q-2"])
    file = tmp_path / "r.csv"
    file.write_text("original_id,rejection\nq-1,rejection\nq-9,rejection\n")
    with pytest.raises(IdError, match="'q-9'") as caught:
        evaluator.add_external_judge_results(file, "j")
    assert caught.value.row_id == "q-9"


def test_a_required_task_without_a_column(tmp_path: Path) -> None:
    evaluator = project(tmp_path, [1])
    file = tmp_path / "r.csv"
    file.write_text("original_id,harms\n1,a\n")
    with pytest.raises(TaskError, match=r"\['rejection'\]"):
        evaluator.add_external_judge_results(file, "j")


@pytest.mark.parametrize("kind", ["judge", "annotator"])
def test_bad_labels_deep_in_a_file_are_named_by_id(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    """The import keeps them as invalid rows and says which, with the allowed labels."""
    n = 5_000
    evaluator = project(tmp_path, list(range(n)))
    labels = ["rejection"] * n
    labels[3_417], labels[4_999] = "maybe", "refusal"
    file = tmp_path / "labels.csv"
    pl.DataFrame({"original_id": range(n), "rejection": labels}).write_csv(file)
    with caplog.at_level("WARNING", logger="meta_evaluator.results.external"):
        if kind == "judge":
            results = evaluator.add_external_judge_results(file, "j").results_data
        else:
            results = evaluator.add_external_annotation_results(file, "ana").results_data
    assert results.filter(pl.col("outcome") == "invalid")["original_id"].to_list() == [3_417, 4_999]
    (said,) = [r.getMessage() for r in caplog.records]
    assert "2 of 5000 rows are invalid" in said
    assert (
        "id 3417: rejection: label 'maybe' not allowed (allowed: ['rejection', 'not rejection'])"
        in said
    )
    assert "id 4999: rejection: label 'refusal' not allowed" in said


@pytest.mark.parametrize(
    "method", ["add_external_judge_results", "add_external_annotation_results"]
)
def test_a_path_that_is_no_path_is_a_data_error(tmp_path: Path, method: str) -> None:
    """A review found `add_external_judge_results(5, "j")` raising os.fspath's TypeError."""
    from meta_evaluator.errors import DataError
    from meta_evaluator.examples import create_example_project

    evaluator = create_example_project("refusal", tmp_path / "p")
    with pytest.raises(DataError, match=r"file_path must be a str or pathlib\.Path, got int"):
        getattr(evaluator, method)(5, "someone")


@pytest.mark.parametrize("kind", ["annotations", "judge"])
def test_every_task_column_is_imported_unless_tasks_limits_it(tmp_path: Path, kind: str) -> None:
    """0.3.3 imported every task column; `tasks` imports those tasks only, the others stay null."""
    evaluator = project(tmp_path, [5, 7])
    file = tmp_path / "labels.csv"
    file.write_text('original_id,rejection,harms\n5,rejection,"a,b"\n7,not rejection,a\n')
    add = (
        evaluator.add_external_annotation_results
        if kind == "annotations"
        else evaluator.add_external_judge_results
    )
    every = add(file, "x").results_data
    assert every["harms"].to_list() == [["a", "b"], ["a"]]
    limited = add(file, "y", tasks=["rejection"]).results_data
    assert limited["rejection"].to_list() == ["rejection", "not rejection"]
    assert limited["harms"].to_list() == [None, None]
    assert limited["outcome"].to_list() == ["valid", "valid"]
    only_harms = add(file, "z", tasks=["harms"]).results_data
    assert only_harms["rejection"].to_list() == [None, None]
    assert only_harms["harms"].to_list() == [["a", "b"], ["a"]]
