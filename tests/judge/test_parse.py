"""Reading a response into labels and classifying the row (`parse_answer`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.eval_task.labels import LabelCheck
from meta_evaluator.judge._parse import parse_answer
from meta_evaluator.llm.types import ChatResponse, FinishReason

TOPICS = ["violence", "fraud", "self-harm"]
# Canonical spellings with capitals, so matching must fold case and still return these.
TASK = EvalTask(
    task_schemas={
        "rejection": ["Rejection", "Not Rejection"],
        "topics": MultiLabelSchema(outcomes=TOPICS),
        "explanation": None,
    },
    prompt_columns=["prompt"],
    response_columns=["response"],
)
OPTIONAL_TOPICS = EvalTask(
    task_schemas={
        "rejection": ["Rejection", "Not Rejection"],
        "topics": MultiLabelSchema(outcomes=TOPICS),
        "explanation": None,
    },
    prompt_columns=["prompt"],
    response_columns=["response"],
    required_tasks=["rejection"],
)
TEXT_TASK = EvalTask(
    task_schemas={"rejection": ["rejection", "not rejection"]},
    prompt_columns=["prompt"],
    response_columns=["response"],
    answering_method="text",
)
GOOD = {"rejection": "Rejection", "topics": ["violence"], "explanation": "It refused."}


def text(content: str, finish: FinishReason = "stop") -> ChatResponse:
    return ChatResponse(content, finish_reason=finish)


def parsed(response: ChatResponse, method: Any = "structured", task: EvalTask = TASK) -> Any:
    return parse_answer(response, task, method)


# --- structured --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "response",
    [
        pytest.param(ChatResponse("", structured=GOOD), id="structured-dict"),
        pytest.param(text(json.dumps(GOOD)), id="json-text"),
        pytest.param(text(f"  {json.dumps(GOOD, indent=2)}\n"), id="json-text-padded"),
        pytest.param(text(f"```json\n{json.dumps(GOOD)}\n```"), id="json-fence"),
        pytest.param(text(f"```JSON\n{json.dumps(GOOD)}\n```"), id="json-fence-upper"),
        pytest.param(text(f"```\n{json.dumps(GOOD)}\n```"), id="bare-fence"),
    ],
)
def test_structured_answers_are_read(response: ChatResponse) -> None:
    assert parsed(response) == LabelCheck("valid", "success", GOOD)


def test_structured_dict_wins_over_text() -> None:
    response = ChatResponse("not json", structured=GOOD)
    assert parsed(response).labels == GOOD


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("rejection", "Rejection"),
        ("REJECTION", "Rejection"),
        ("  not   REJECTION \n", "Not Rejection"),
        ("Not\trejection", "Not Rejection"),
    ],
)
def test_labels_match_loosely_and_come_back_canonical(given: str, canonical: str) -> None:
    answer = {**GOOD, "rejection": given}
    result = parsed(ChatResponse("", structured=answer))
    assert result.outcome == "valid"
    assert result.labels["rejection"] == canonical


def test_multilabel_lists_come_back_in_schema_order() -> None:
    answer = {**GOOD, "topics": ["Self-Harm", " fraud", "VIOLENCE", "fraud"]}
    result = parsed(ChatResponse("", structured=answer))
    assert result.outcome == "valid"
    assert result.labels["topics"] == ["violence", "fraud", "self-harm"]


def test_free_text_is_kept() -> None:
    answer = {**GOOD, "explanation": '  The reply declines: "I can\'t help."\n'}
    result = parsed(ChatResponse("", structured=answer))
    assert result.labels["explanation"] == 'The reply declines: "I can\'t help."'


def test_extra_keys_are_ignored() -> None:
    answer = {**GOOD, "reasoning": "long thoughts", "score": 0.9, "Rejection": "bogus"}
    result = parsed(text(json.dumps(answer)))
    assert result == LabelCheck("valid", "success", GOOD)


@pytest.mark.parametrize(
    ("answer", "task"),
    [
        pytest.param({"rejection": "maybe", "topics": ["war"]}, TASK, id="every-task-unknown"),
        pytest.param({"rejection": "Maybe", "topics": ["war"]}, OPTIONAL_TOPICS, id="one-required"),
        pytest.param({"rejection": "not a rejection"}, TEXT_TASK, id="near-miss"),
    ],
)
def test_a_label_not_allowed(answer: dict[str, Any], task: EvalTask) -> None:
    result = parsed(ChatResponse("", structured=answer), task=task)
    assert result.outcome == "invalid"
    assert result.status == "label_not_allowed"
    assert "not allowed" in (result.error_message or "")


@pytest.mark.parametrize(
    ("answer", "kept", "problem", "status"),
    [
        pytest.param(
            {"rejection": "Rejection"},
            {"rejection": "Rejection"},
            "topics: missing",
            "partial",
            id="missing",
        ),
        pytest.param(
            {"rejection": "not rejection", "topics": ["war", "fraud"]},
            {"rejection": "Not Rejection"},
            "topics: label(s) ['war'] not allowed",
            "label_not_allowed",  # the reason wins; the valid task is still kept
            id="multilabel-not-allowed",
        ),
        pytest.param(
            {"rejection": {"label": "rejection"}, "topics": ["fraud"], "explanation": "why"},
            {"topics": ["fraud"], "explanation": "why"},
            "rejection: expected a label",
            "partial",
            id="wrong-type",
        ),
    ],
)
def test_a_failed_required_task_keeps_the_valid_labels(
    answer: dict[str, Any], kept: dict[str, Any], problem: str, status: str
) -> None:
    result = parsed(ChatResponse("", structured=answer))
    assert result.outcome == "invalid"
    assert result.status == status
    assert result.labels == kept
    assert problem in (result.error_message or "")


def test_an_optional_task_with_a_bad_value_leaves_the_row_valid_without_it() -> None:
    answer = {"rejection": "rejection", "topics": ["war"], "explanation": "ok"}
    result = parsed(ChatResponse("", structured=answer), task=OPTIONAL_TOPICS)
    assert result.outcome == "valid"
    assert result.status == "success"
    assert result.labels == {"rejection": "Rejection", "explanation": "ok"}
    assert "topics" not in result.labels


@pytest.mark.parametrize(
    "content",
    [
        "I think it is a rejection.",
        "{not json}",
        "[1, 2]",
        '"Rejection"',
        '```json\n{"rejection": \n```',
    ],
)
def test_unparseable_structured_is_parsing_error(content: str) -> None:
    result = parsed(text(content))
    assert result.outcome == "invalid"
    assert result.status == "parsing_error"
    assert result.labels == {}


def test_json_without_any_task_is_parsing_error() -> None:
    result = parsed(text('{"verdict": "Rejection"}'))
    assert (result.outcome, result.status) == ("invalid", "parsing_error")


@pytest.mark.parametrize("method", ["structured", "xml"])
def test_unreadable_and_cut_at_the_token_limit_is_truncated(method: str) -> None:
    content = '{"rejection": "Rejec' if method == "structured" else "<rejection>Rejec"
    result = parsed(text(content, finish="length"), method)
    assert (result.outcome, result.status) == ("invalid", "truncated")


def test_readable_but_without_any_task_and_cut_off_is_truncated() -> None:
    result = parsed(text('{"reasoning": "The reply"}', finish="length"))
    assert (result.outcome, result.status) == ("invalid", "truncated")


def test_a_label_not_allowed_stays_so_when_cut_off() -> None:
    result = parsed(text('{"rejection": "maybe", "topics": ["war"]}', finish="length"))
    assert result.status == "label_not_allowed"


@pytest.mark.parametrize("method", ["structured", "xml", "text"])
@pytest.mark.parametrize("content", ["", "   \n\t"])
def test_empty_text_is_empty(method: str, content: str) -> None:
    task = TEXT_TASK if method == "text" else TASK
    result = parsed(text(content), method, task)
    assert (result.outcome, result.status) == ("invalid", "empty")


@pytest.mark.parametrize("method", ["structured", "xml", "text"])
@pytest.mark.parametrize(
    "response",
    [
        pytest.param(ChatResponse("", refusal="I can't help with that."), id="refusal-field"),
        pytest.param(ChatResponse("Rejection", finish_reason="refusal"), id="finish-refusal"),
        pytest.param(ChatResponse("", structured=GOOD, finish_reason="refusal"), id="with-data"),
    ],
)
def test_a_refusal_is_refusal(method: str, response: ChatResponse) -> None:
    task = TEXT_TASK if method == "text" else TASK
    result = parsed(response, method, task)
    assert (result.outcome, result.status) == ("invalid", "refusal")
    assert result.labels == {}
    assert result.error_message


# --- xml ---------------------------------------------------------------------------------------


def test_xml_answers_are_read() -> None:
    content = (
        "Some reasoning first.\n"
        "<rejection> not REJECTION </rejection>\n"
        "<topics>self-harm, Violence</topics>\n"
        "<explanation>\nIt answered.\n</explanation>\n"
        "<score>7</score>"
    )
    assert parsed(text(content), "xml") == LabelCheck(
        "valid",
        "success",
        {
            "rejection": "Not Rejection",
            "topics": ["violence", "self-harm"],
            "explanation": "It answered.",
        },
    )


def test_xml_multilabel_separators_and_tag_case() -> None:
    content = "<REJECTION>Rejection</REJECTION><topics>fraud;\nviolence ,</topics>"
    result = parsed(text(content), "xml")
    assert result.outcome == "valid"
    assert result.labels["topics"] == ["violence", "fraud"]
    assert "explanation" not in result.labels


def test_xml_without_tags_is_parsing_error() -> None:
    result = parsed(text("The reply is a rejection about fraud."), "xml")
    assert (result.outcome, result.status) == ("invalid", "parsing_error")


def test_xml_with_a_label_not_allowed() -> None:
    result = parsed(text("<rejection>maybe</rejection><topics>war</topics>"), "xml")
    assert (result.outcome, result.status) == ("invalid", "label_not_allowed")


def test_xml_with_a_required_tag_missing_is_partial() -> None:
    result = parsed(text("<rejection>rejection</rejection>"), "xml")
    assert (result.outcome, result.status) == ("invalid", "partial")
    assert result.labels == {"rejection": "Rejection"}


# --- text --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "label"),
    [
        pytest.param("rejection", "rejection", id="whole"),
        pytest.param("  Not   Rejection \n", "not rejection", id="whole-loose"),
        pytest.param("Rejection\nThe reply declines to help.", "rejection", id="first-line"),
        pytest.param("not rejection.", "not rejection", id="trailing-period"),
        pytest.param("Rejection!", "rejection", id="exclamation"),
        pytest.param("**not rejection**", "not rejection", id="bold"),
        pytest.param('"rejection"', "rejection", id="quoted"),
        pytest.param("Label: not rejection", "not rejection", id="after-colon"),
    ],
)
def test_text_answers_are_matched(content: str, label: str) -> None:
    assert parsed(text(content), "text", TEXT_TASK) == LabelCheck(
        "valid", "success", {"rejection": label}
    )


@pytest.mark.parametrize("content", ["maybe", "I am not sure how to label this.", "rejected"])
def test_text_without_a_label_is_invalid(content: str) -> None:
    result = parsed(text(content), "text", TEXT_TASK)
    assert result.outcome == "invalid"
    assert result.status == "label_not_allowed"
    assert result.labels == {}


def test_numbers_and_booleans_match_labels_written_as_text() -> None:
    from meta_evaluator.eval_task.labels import check_values

    task = EvalTask({"score": ["1", "2", "3"], "ok": ["true", "false"]}, None, ["r"])
    checked = check_values({"score": 2, "ok": False}, task)
    assert checked.outcome == "valid" and checked.labels == {"score": "2", "ok": "false"}
    assert check_values({"score": 2.0, "ok": True}, task).labels == {"score": "2", "ok": "true"}
    assert check_values({"score": 7, "ok": True}, task).status == "label_not_allowed"
