"""The typed result row (`judge/result_row.py`): its stored record, the majority, the table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import polars as pl
import pytest

from meta_evaluator.errors import JudgeRunError
from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.judge._judge_run import majority
from meta_evaluator.judge.result_row import (
    ROW_COLUMNS,
    JudgeOutcome,
    ResultRow,
    count_outcomes,
    results_schema,
    rows_frame,
)
from meta_evaluator.judge.row_store import RowStore, read_rows
from meta_evaluator.results.judge_results import JudgeResults, results_of, results_of_run

TASK = EvalTask(
    task_schemas={
        "rejection": ["rejection", "not rejection"],
        "topics": MultiLabelSchema(outcomes=["violence", "fraud", "self-harm"]),
        "explanation": None,
    },
    prompt_columns=["prompt"],
    response_columns=["response"],
    required_tasks=["rejection"],
)
NAMES = TASK.task_names

# result_rows_old.jsonl: lines as the code before ResultRow wrote them. The first four come
# from the example projects (projects/*/results/), the next three from a mock run of that code
# (commit e0304dd: errors, multi-label, consistency 3), the last three are in its batch format
# (batch_id after the labels, no duration; a majority of failures puts the answer's keys last).
OLD_LINES = Path(__file__).with_name("result_rows_old.jsonl").read_text().splitlines()


def row(**changes: Any) -> ResultRow:
    """A valid live answer, with `changes`."""
    values: dict[str, Any] = {
        "original_id": 1,
        "judge_id": "gpt",
        "run_id": "run_1",
        "outcome": "valid",
        "status": "success",
        "labels": {"rejection": "rejection", "topics": ["fraud"], "explanation": "Declines."},
        "raw_response": '{"rejection": "rejection"}',
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "duration_seconds": 0.25,
        "attempts": 1,
        "timestamp": "2026-11-25T12:00:00.000000+00:00",
        "fingerprint": "abc",
        "prompt_hash": "def",
    }
    return ResultRow(**{**values, **changes})


KINDS = {
    "valid": row(),
    "invalid": row(
        outcome="invalid",
        status="partial",
        error_message="rejection: missing",
        labels={"explanation": "No label given."},
    ),
    "error": row(
        outcome="error",
        status="timeout",
        error_message="timed out after 60 s",
        labels={},
        raw_response=None,
        prompt_tokens=None,
        completion_tokens=None,
    ),
    "multi-label": row(labels={"rejection": "not rejection", "topics": ["violence", "fraud"]}),
    "free-text": row(labels={"rejection": "rejection", "explanation": 'Says "no" ü\nthen stops.'}),
    "batch": row(duration_seconds=None, batch_id="batch_abc"),
    "batch error": row(
        outcome="error",
        status="batch_expired",
        error_message="batch batch_abc (expired) holds no result for this request",
        labels={},
        raw_response=None,
        prompt_tokens=None,
        completion_tokens=None,
        duration_seconds=None,
        batch_id="batch_abc",
    ),
    "string id": row(original_id="q-7"),
    "majority": row(
        sample_labels='[{"rejection": "rejection"}, null, {"rejection": "not rejection"}]'
    ),
    "cached majority": row(sample_labels="[null, null]", cached=True),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_row_comes_back_from_its_stored_line(kind: str) -> None:
    original = KINDS[kind]
    line = json.dumps(original.to_record(), ensure_ascii=False, allow_nan=False)
    again = ResultRow.from_record(json.loads(line), NAMES)
    assert again == original
    assert again.to_record() == original.to_record()


@pytest.mark.parametrize("line", OLD_LINES, ids=range(len(OLD_LINES)))
def test_a_line_of_the_old_code_is_written_back_byte_for_byte(line: str) -> None:
    record = json.loads(line)
    tasks = [key for key in record if key not in ROW_COLUMNS and key != "batch_id"]
    read = ResultRow.from_record(record, tasks)
    assert read.to_record() == record
    assert json.dumps(read.to_record(), ensure_ascii=False) == line  # same keys, same order


def test_from_record_reads_fields_by_their_stored_names() -> None:
    read = ResultRow.from_record(json.loads(OLD_LINES[0]), ["rejection", "explanation"])
    assert read.raw_response is not None and read.raw_response.startswith('{"rejection"')
    assert (read.prompt_tokens, read.completion_tokens) == (188, 23)
    assert read.duration_seconds == 7.2e-05
    assert read.labels == {
        "rejection": "not rejection",
        "explanation": "Judged offline by the mock client (0.037).",
    }
    assert read.batch_id is None


def test_from_record_ignores_unknown_keys_and_reads_missing_ones_as_none() -> None:
    record = {"original_id": 3, "judge_id": "j", "run_id": "r", "outcome": "valid", "extra": 1}
    read = ResultRow.from_record({**record, "rejection": "rejection"}, NAMES)
    assert read.labels == {"rejection": "rejection"}  # tasks absent from the line stay absent
    assert [read.status, read.attempts, read.fingerprint, read.prompt_hash] == [None] * 4
    with pytest.raises(KeyError):
        ResultRow.from_record({"original_id": 3, "judge_id": "j", "run_id": "r"}, NAMES)


def test_a_row_is_frozen_and_slotted() -> None:
    made = row()
    with pytest.raises(AttributeError):
        made.outcome = "error"  # type: ignore[misc]
    assert not hasattr(made, "__dict__")
    record = made.to_record()
    assert ResultRow.from_record(record, NAMES).labels is not made.labels  # a mapping of its own
    assert ResultRow("i", "j", "r", "error", "timeout").labels == {}


def test_majority_takes_the_most_frequent_label_and_the_first_seen_on_a_tie() -> None:
    samples = [
        row(labels={"rejection": "rejection", "topics": ["fraud"]}, attempts=1),
        row(labels={"rejection": "not rejection", "topics": ["fraud"]}, attempts=2),
        row(outcome="invalid", status="partial", labels={"topics": ["violence"]}),
        row(labels={"rejection": "not rejection", "topics": ["violence"]}, attempts=1),
    ]
    merged = majority(samples, TASK)
    assert merged is not None
    assert merged.labels["rejection"] == "not rejection"  # 2 of 3 valid answers
    assert merged.labels["topics"] == ["fraud"]  # 2 votes for ["fraud"]: a list is one vote
    assert merged.error_message == "rejection: 2/4 agree; topics: 2/4 agree"
    assert merged.attempts == 5
    assert (merged.prompt_tokens, merged.completion_tokens) == (400, 80)
    assert merged.duration_seconds == 1.0
    assert json.loads(merged.raw_response or "") == [s.raw_response for s in samples]
    tie = majority(
        [row(labels={"rejection": "not rejection"}), row(labels={"rejection": "rejection"})], TASK
    )
    assert tie is not None and tie.labels["rejection"] == "not rejection"


def test_majority_keeps_each_answers_labels_and_only_valid_answers_count() -> None:
    samples = [
        row(labels={"rejection": "rejection", "topics": ["fraud"]}),
        row(outcome="invalid", status="partial", labels={"topics": ["violence"]}),
        KINDS["error"],
        row(labels={"rejection": "not rejection", "explanation": 'Says "no" ü.'}),
    ]
    merged = majority(samples, TASK)
    assert merged is not None and merged.sample_labels is not None
    assert json.loads(merged.sample_labels) == [
        {"rejection": "rejection", "topics": ["fraud"]},
        None,  # invalid: the majority does not count it either
        None,  # failed
        {"rejection": "not rejection", "explanation": 'Says "no" ü.'},
    ]
    record = merged.to_record()
    assert list(record)[-1] == "sample_labels" and "cached" not in record
    assert ResultRow.from_record(json.loads(json.dumps(record)), NAMES) == merged
    assert row().sample_labels is None and "sample_labels" not in row().to_record()


def test_majority_of_batch_answers_has_no_duration_and_keeps_the_batch() -> None:
    samples = [
        row(duration_seconds=None, batch_id="b1", prompt_tokens=None),
        row(duration_seconds=None, batch_id="b1", prompt_tokens=7),
    ]
    merged = majority(samples, TASK)
    assert merged is not None
    assert merged.duration_seconds is None
    assert merged.batch_id == "b1"
    assert merged.prompt_tokens == 7  # counts known for some answers only: their sum


def test_majority_of_failures_is_the_last_failure() -> None:
    failed = KINDS["error"]
    samples = [failed, failed._replace(error_message="refused", attempts=3)]
    merged = majority(samples, TASK)
    assert merged is not None
    assert (merged.outcome, merged.error_message, merged.attempts) == ("error", "refused", 4)
    assert merged.prompt_tokens is None and merged.raw_response == "[null, null]"
    assert majority([], TASK) is None


def test_rows_frame_has_the_results_schema_and_the_rows_values() -> None:
    rows = [r for r in KINDS.values() if isinstance(r.original_id, int)]
    frame = rows_frame(rows, TASK, pl.Int64())
    assert frame.schema == results_schema(TASK, pl.Int64())
    assert frame.columns == [*ROW_COLUMNS, *NAMES]
    assert frame["outcome"].to_list() == [r.outcome for r in rows]
    assert frame["llm_call_duration_seconds"].to_list() == [r.duration_seconds for r in rows]
    assert frame["topics"].to_list() == [r.labels.get("topics") for r in rows]
    assert frame["batch_id"].to_list() == [r.batch_id for r in rows]
    assert frame["sample_labels"].to_list() == [r.sample_labels for r in rows]
    assert rows_frame([], TASK, pl.String()).schema == results_schema(TASK, pl.String())
    assert count_outcomes(rows) == {"valid": 6, "invalid": 1, "error": 2, "skipped": 0}


def test_judge_results_from_rows_takes_rows_and_stored_records_alike() -> None:
    rows = [r for r in KINDS.values() if isinstance(r.original_id, int)]
    typed = JudgeResults.from_rows("gpt", "run_1", rows, TASK, pl.Int64())
    stored = JudgeResults.from_rows("gpt", "run_1", [r.to_record() for r in rows], TASK, pl.Int64())
    assert typed.results_data.equals(stored.results_data)
    assert typed.counts() == count_outcomes(rows)


def test_the_row_store_writes_a_row_as_its_record(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    with RowStore(path) as store:
        for made in KINDS.values():
            store.append(made)
    assert read_rows(path) == [made.to_record() for made in KINDS.values()]


def test_outcomes_become_judge_results_also_inside_a_run_error() -> None:
    frame = rows_frame([row()], TASK, pl.Int64())
    outcomes = {"gpt": JudgeOutcome("gpt", "run_1", frame, complete=False)}
    results = results_of(outcomes)
    assert results["gpt"].complete is False
    assert results["gpt"].results_data.equals(frame)

    async def stopped() -> dict[str, JudgeOutcome]:
        raise JudgeRunError("judge 'gpt': stopped", results=outcomes, judge_id="gpt")

    async def done() -> dict[str, JudgeOutcome]:
        return outcomes

    with pytest.raises(JudgeRunError) as caught:
        anyio.run(results_of_run, stopped())
    assert isinstance(caught.value.results["gpt"], JudgeResults)
    assert caught.value.results["gpt"].run_id == "run_1"
    assert anyio.run(results_of_run, done())["gpt"].judge_id == "gpt"
