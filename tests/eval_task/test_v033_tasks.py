"""Tasks as meta-evaluator 0.3.3 users declare them: names with spaces, multi-label tasks of two
outcomes or more, never in XML, and multi-label answers stored as 0.3.3 stored them (a slot per
outcome, `FALSE` where not chosen), read and written.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.errors import JudgeConfigError, TaskError
from meta_evaluator.eval_task import (
    EvalTask,
    MultiLabelSchema,
    answer_key,
    check_label,
    label_vector,
)
from meta_evaluator.judge._prompting import output_schema
from tests.conftest import chats

HARMS = ["violence", "fraud", "hate"]


def task(**options: object) -> EvalTask:
    values: dict[str, object] = {
        "task_schemas": {
            "rejection": ["rejection", "not rejection"],
            "harm types": MultiLabelSchema(outcomes=HARMS),
            "why": None,
        },
        "prompt_columns": ["prompt"],
        "response_columns": ["response"],
    }
    return EvalTask(**{**values, **options})


# ----- MultiLabelSchema ----------------------------------------------------------------------


@pytest.mark.parametrize("outcomes", [["only"], []])
def test_a_multilabel_task_needs_two_outcomes(outcomes: list[str]) -> None:
    with pytest.raises(TaskError, match=r"outcomes: needs at least 2 labels") as caught:
        MultiLabelSchema(outcomes=outcomes)
    assert caught.value.field == "outcomes"


@pytest.mark.parametrize("word", ["FALSE", "false", "False"])
def test_false_is_not_an_outcome(word: str) -> None:
    with pytest.raises(TaskError, match="'FALSE' cannot be an outcome"):
        MultiLabelSchema(outcomes=["hate", word])


# ----- XML cannot carry a multi-label task ---------------------------------------------------


def test_a_task_with_a_multilabel_task_refuses_xml() -> None:
    with pytest.raises(TaskError, match=r"'xml' cannot carry the multi-label task\(s\)") as caught:
        task(answering_method="xml")
    assert "harm types" in caught.value.message
    assert task(answering_method="instructor").answering_method == "structured"


def test_a_judge_asking_xml_of_a_multilabel_task_is_refused_before_a_call(
    tmp_path: Path,
) -> None:
    evaluator = project(tmp_path)
    evaluator.add_judge("x", "mock", "m", "Judge {response}", answering_method="xml")
    with pytest.raises(JudgeConfigError, match=r"judge 'x': answering_method 'xml' cannot carry"):
        evaluator.run_judges_async()
    assert not any(evaluator.paths.results_dir.glob("*/x*"))


def test_no_xml_fallback_for_a_multilabel_task(tmp_path: Path) -> None:
    """0.3.3 left XML out of its fallback for multi-label tasks: a server that refuses structured
    output stops the judge, and no request asks for XML tags."""
    assert task(structured_outputs_fallback=True).fallback_method is None
    single = EvalTask({"ok": ["yes", "no"]}, None, ["response"], structured_outputs_fallback=True)
    assert single.fallback_method == "xml"
    evaluator = project(tmp_path, structured_outputs_fallback=True)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url="http://llm.test/v1")
    asked: list[dict[str, object]] = []

    def refuses_schemas(request: httpx.Request) -> httpx.Response:
        asked.append(json.loads(request.content))
        return httpx.Response(400, json={"error": {"message": "response_format unsupported"}})

    with pytest.raises(Exception, match="refused the request") as caught:
        evaluator.run_judges_async(transport=httpx.MockTransport(refuses_schemas), cache=False)
    assert type(caught.value).__name__ == "JudgeRunError"
    assert asked and all("response_format" in body for body in asked)


# ----- task names with spaces ----------------------------------------------------------------


def test_task_names_with_spaces_are_answered_under_a_key() -> None:
    schema = output_schema(task()).schema
    assert list(schema["properties"]) == ["rejection", "harm_types", "why"]
    assert answer_key("a.b-c d/é") == "a.b-c_d__"


def test_two_names_with_one_answer_key_are_refused() -> None:
    with pytest.raises(TaskError, match=r"'harm types' and 'harm/types' would both be answered"):
        EvalTask({"harm types": ["a", "b"], "harm/types": ["a", "b"]}, None, ["response"])


@pytest.mark.parametrize("method", ["structured", "xml"])
def test_a_task_named_with_spaces_runs_and_keeps_its_name(tmp_path: Path, method: str) -> None:
    schemas = {"is it a refusal": ["yes", "no"], "why so": None}
    evaluator = MetaEvaluator(tmp_path / "p")
    evaluator.add_data(DataLoader.load_from_dataframe("chats", chats(6), "qid"))
    evaluator.add_eval_task(EvalTask(schemas, ["prompt"], ["response"], answering_method=method))
    evaluator.add_judge("j", "mock", "m", "Judge {response}")
    frame = evaluator.run_judges_async()["j"].results_data
    assert (frame["outcome"] == "valid").all()
    assert frame["is it a refusal"].is_in(["yes", "no"]).all()
    assert frame["why so"].str.starts_with("Judged offline").all()
    evaluator.save_state()
    again = MetaEvaluator(tmp_path / "p", load=True)
    assert again.eval_task is not None and again.eval_task.task_names == list(schemas)


# ----- 0.3.3's multi-label vectors -----------------------------------------------------------


@pytest.mark.parametrize(
    ("stored", "read"),
    [
        (["violence", "FALSE", "hate"], ["violence", "hate"]),
        (["FALSE", "FALSE", "FALSE"], []),
        ('["FALSE", "fraud", "FALSE"]', ["fraud"]),  # a CSV cell of 0.3.3
        (["Violence", "false", "FALSE"], ["violence"]),  # the label rule holds in slots too
        (["hate", "violence"], ["violence", "hate"]),  # our own form: the labels chosen
        ("hate, fraud", ["fraud", "hate"]),
    ],
)
def test_033_vectors_are_read(stored: object, read: list[str]) -> None:
    assert check_label(task(), "harm types", stored) == (read, None)


@pytest.mark.parametrize(
    "stored",
    [["violence", "FALSE"], ["FALSE", "violence", "FALSE"], ["violence", "FALSE", "hate", "FALSE"]],
    ids=["too-short", "out-of-place", "too-long"],
)
def test_a_misaligned_vector_is_not_allowed_and_says_why(stored: list[str]) -> None:
    value, problem = check_label(task(), "harm types", stored)
    assert value is None and problem is not None
    assert "one slot per outcome in this order" in problem and str(HARMS) in problem


def test_vectors_are_written_as_033_wrote_them() -> None:
    assert label_vector(["hate", "violence"], HARMS) == ["violence", "FALSE", "hate"]
    assert label_vector([], HARMS) == ["FALSE", "FALSE", "FALSE"]
    assert label_vector(None, HARMS) is None
    for chosen in ([], ["fraud"], HARMS):
        assert check_label(task(), "harm types", label_vector(chosen, HARMS)) == (chosen, None)


def test_an_imported_csv_of_033_vectors_is_valid(tmp_path: Path) -> None:
    evaluator = project(tmp_path)
    vectors = [["violence", "FALSE", "FALSE"], ["FALSE", "FALSE", "FALSE"], ["FALSE", "x", "hate"]]
    pl.DataFrame(
        {
            "original_id": [0, 1, 2],
            "rejection": ["rejection", "not rejection", "rejection"],
            "harm types": [json.dumps(v) for v in vectors],
        }
    ).write_csv(tmp_path / "judge.csv")
    frame = evaluator.add_external_judge_results(tmp_path / "judge.csv", "ext").results_data
    assert frame["outcome"].to_list() == ["valid", "valid", "invalid"]
    assert frame["harm types"].to_list() == [["violence"], [], None]
    assert "one slot per outcome" in frame["error_message"][2]


def project(tmp_path: Path, **options: object) -> MetaEvaluator:
    evaluator = MetaEvaluator(tmp_path / "p")
    evaluator.add_data(DataLoader.load_from_dataframe("chats", chats(3), "qid"))
    evaluator.add_eval_task(task(**options))
    return evaluator
