"""EvalTask: task kinds, required tasks, aliases, and validation against data."""

from __future__ import annotations

import polars as pl
import pytest

from meta_evaluator.data import EvalData
from meta_evaluator.errors import TaskError
from meta_evaluator.eval_task import EvalTask, MultiLabelSchema, normalize_label


def make(**overrides: object) -> EvalTask:
    options: dict[str, object] = {
        "task_schemas": {
            "rejection": ["rejection", "not rejection"],
            "harms": MultiLabelSchema(outcomes=["crime", "fraud"]),
            "note": None,
        },
        "prompt_columns": ["prompt"],
        "response_columns": ["response"],
    }
    options.update(overrides)
    return EvalTask(**options)


def test_kinds_labels_and_required_tasks() -> None:
    task = make()
    assert task.task_names == task.get_task_names() == ["rejection", "harms", "note"]
    assert [task.task_kind(t) for t in task.task_names] == ["single", "multilabel", "free_text"]
    assert task.allowed_labels("harms") == ["crime", "fraud"]
    assert task.allowed_labels("note") is None
    assert task.get_required_tasks() == ["rejection", "harms"]
    assert make(required_tasks=["note"]).get_required_tasks() == ["note"]
    assert make(required_tasks=[]).get_required_tasks() == ["rejection", "harms"]  # as in 0.3
    assert task.columns_shown() == ["prompt", "response"]


def test_positional_arguments_follow_the_documented_order() -> None:
    task = EvalTask({"ok": ["yes", "no"]}, ["p"], ["r"])
    assert task.prompt_columns == ["p"] and task.response_columns == ["r"]
    assert task.answering_method == "structured"


def test_instructor_is_an_alias_of_structured() -> None:
    assert make(answering_method="instructor") == make(answering_method="structured")


def test_multilabel_accepts_a_plain_dict_from_state() -> None:
    task = make(task_schemas={"harms": {"outcomes": ["a", "b"]}})
    assert task.task_schemas["harms"] == MultiLabelSchema(outcomes=["a", "b"])


def test_is_frozen() -> None:
    task = make()
    with pytest.raises(ValueError, match="frozen"):
        task.answering_method = "xml"  # type: ignore[misc]


def test_unknown_task_is_a_task_error() -> None:
    with pytest.raises(TaskError, match="no task 'nope'"):
        make().task_kind("nope")


def test_every_problem_is_listed_at_once() -> None:
    with pytest.raises(TaskError) as caught:
        EvalTask(
            task_schemas={"a": ["only"]},
            response_columns=[],
            answering_method="json",
            annotaton_prompt="x",
        )
    message = str(caught.value)
    assert "4 problem(s)" in message
    for fragment in ("task 'a'", "response_columns", "answering_method", "annotation_prompt"):
        assert fragment in message


def test_validate_against_names_rows_with_nulls() -> None:
    frame = pl.DataFrame(
        {"qid": [5, 6, 7], "prompt": ["a", None, "c"], "response": ["x", "y", None]}
    )
    data = EvalData("chats", frame, "qid", source="chats.csv")
    with pytest.raises(TaskError) as caught:
        make().validate_against(data)
    assert caught.value.column == "prompt"
    assert caught.value.row_id == 6
    assert "chats.csv" in str(caught.value) and "[6]" in str(caught.value)


def test_validate_against_suggests_a_close_column() -> None:
    data = EvalData("chats", pl.DataFrame({"prompt": ["a"], "responses": ["b"]}))
    with pytest.raises(TaskError, match="Did you mean 'responses'"):
        make().validate_against(data)


def test_validate_against_accepts_fitting_data() -> None:
    data = EvalData("chats", pl.DataFrame({"prompt": ["a"], "response": ["b"], "extra": [None]}))
    make().validate_against(data)  # no error: extra columns may hold nulls


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(" Not  Rejection\n", "not rejection"), ("REJECTION", "rejection"), ("Straße", "strasse")],
)
def test_normalize_label(raw: str, expected: str) -> None:
    assert normalize_label(raw) == expected


def test_labels_equal_after_unicode_composition_are_duplicates() -> None:
    with pytest.raises(TaskError, match="same once case and spacing"):
        EvalTask({"t": ["café", "cafe\u0301"]}, None, ["r"])


def test_fourth_positional_argument_is_the_answering_method() -> None:
    assert EvalTask({"t": ["a", "b"]}, None, ["r"], "xml").answering_method == "xml"


def test_skip_function_must_be_a_function() -> None:
    """0.3.3's skip_function is applied at run time (tests/judge/test_v033_runs.py)."""
    with pytest.raises(TaskError, match="skip_function must be a function") as caught:
        EvalTask({"t": ["a", "b"]}, None, ["r"], skip_function="no")
    assert caught.value.field == "skip_function"
