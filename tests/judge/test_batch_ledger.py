"""The batch ledger: custom ids map back to rows, records survive a round trip, damage is loud."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from meta_evaluator.errors import StateError
from meta_evaluator.judge.batch_ledger import BatchLedger, BatchRecord, new_batch_key
from meta_evaluator.judge.run_files import RunFiles

INT_IDS: list[Any] = [42, 7, 1000, 3, 0]
STR_IDS: list[Any] = ["q-42", "q 7", "ünï", "", "1000"]


def record(key: str = "b0123456789", **changes: Any) -> BatchRecord:
    fields: dict[str, Any] = {
        "key": key,
        "provider": "openai",
        "fingerprint": "fp-1",
        "submitted_at": "2025-03-04T05:06:07.000000+00:00",
        "ids": list(INT_IDS),
        "prompt_hashes": [f"h{i}" for i in range(len(INT_IDS))],
    }
    fields.update(changes)
    return BatchRecord(**fields)


def ledger(tmp_path: Path, shard: tuple[int, int] | None = None) -> BatchLedger:
    return BatchLedger(RunFiles(tmp_path / "results", "run_1", "judge_a", shard=shard))


# --- custom ids ---------------------------------------------------------------------------------


def test_custom_id_round_trip_one_answer() -> None:
    rec = record()
    assert rec.custom_id(0) == "b0123456789-0"
    assert rec.custom_id(4) == "b0123456789-4"
    for row in range(len(rec.ids)):
        assert rec.locate(rec.custom_id(row)) == (row, 0)
    assert len({rec.custom_id(row) for row in range(len(rec.ids))}) == len(rec.ids)


def test_custom_id_round_trip_three_answers() -> None:
    rec = record(answers_per_row=3)
    assert rec.custom_id(2, 1) == "b0123456789-2-1"
    seen = set()
    for row in range(len(rec.ids)):
        for answer in range(3):
            custom_id = rec.custom_id(row, answer)
            assert rec.locate(custom_id) == (row, answer)
            seen.add(custom_id)
    assert len(seen) == 3 * len(rec.ids)


def test_custom_ids_fit_every_provider() -> None:
    rec = record(key=new_batch_key(), ids=list(range(100_000)), prompt_hashes=["h"] * 100_000)
    wide = record(key=rec.key, answers_per_row=9)
    for custom_id in (rec.custom_id(99_999), wide.custom_id(4, 8)):
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", custom_id)


@pytest.mark.parametrize(
    "custom_id",
    [
        "b9999999999-0",  # another batch's key
        "b012345678-0",  # a prefix of our key
        "b0123456789x-0",
        "b0123456789-5",  # one row past the end
        "b0123456789-99",
        "b0123456789--1",
        "b0123456789-0-0",  # the shape of a several-answers id
        "b0123456789-",
        "b0123456789",
        "b0123456789-one",
        "",
        "-0",
        "request-1",
    ],
)
def test_locate_refuses_strangers_one_answer(custom_id: str) -> None:
    assert record().locate(custom_id) is None


@pytest.mark.parametrize(
    "custom_id",
    [
        "b9999999999-0-0",
        "b0123456789-0",  # the shape of a one-answer id
        "b0123456789-5-0",  # row out of range
        "b0123456789-0-3",  # answer out of range
        "b0123456789-0--1",
        "b0123456789--1-0",
        "b0123456789-0-0-0",
        "b0123456789-a-0",
        "b0123456789-0-a",
    ],
)
def test_locate_refuses_strangers_three_answers(custom_id: str) -> None:
    assert record(answers_per_row=3).locate(custom_id) is None


@pytest.mark.parametrize("custom_id", ["b0123456789-01", "b0123456789-+1", "b0123456789- 1"])
def test_locate_refuses_non_canonical_numbers(custom_id: str) -> None:
    rec = record()
    assert custom_id not in {rec.custom_id(row) for row in range(len(rec.ids))}
    assert rec.locate(custom_id) is None


def test_locate_of_an_empty_record() -> None:
    assert record(ids=[], prompt_hashes=[]).locate("b0123456789-0") is None


# --- the ledger's files -------------------------------------------------------------------------


@pytest.mark.parametrize("ids", [INT_IDS, STR_IDS], ids=["int", "str"])
def test_write_read_round_trip(tmp_path: Path, ids: list[Any]) -> None:
    book = ledger(tmp_path)
    full = record(
        ids=list(ids),
        prompt_hashes=[f"h{i}" for i in range(len(ids))],
        answers_per_row=3,
        status="collected",
        batch_id="batch_abc",
        input_file_id="file-xyz",
        provider_status="completed",
        counts={"total": 15, "completed": 14, "failed": 1},
        finished_at="2025-03-04T06:00:00.000000+00:00",
        message='line 2: "bad"\nand more }',
    )
    book.write(full)
    assert book.path(full.key) == tmp_path / "results/run_1/judge_a.batches/b0123456789.json"
    assert book.path(full.key).is_file()
    (back,) = book.records()
    assert back == full
    assert [type(i) for i in back.ids] == [type(i) for i in ids]


def test_defaults_round_trip(tmp_path: Path) -> None:
    book = ledger(tmp_path)
    book.write(record())
    assert book.records() == [record()]


def test_rewrite_replaces_the_record(tmp_path: Path) -> None:
    book = ledger(tmp_path)
    first = record()
    book.write(first)
    book.write(first.update(status="submitted", batch_id="batch_1"))
    assert book.records() == [first.update(status="submitted", batch_id="batch_1")]
    assert [p.name for p in book.folder.iterdir()] == ["b0123456789.json"]


def test_shard_has_its_own_folder(tmp_path: Path) -> None:
    whole, part = ledger(tmp_path), ledger(tmp_path, shard=(2, 3))
    part.write(record())
    assert part.folder.name == "judge_a.shard-2-of-3.batches"
    assert whole.records() == []
    assert part.records() == [record()]


def test_no_folder_no_records(tmp_path: Path) -> None:
    book = ledger(tmp_path)
    assert book.records() == []
    assert book.pending() == []


def test_records_sorted_by_submission_then_key(tmp_path: Path) -> None:
    book = ledger(tmp_path)
    times = {
        "b0000000003": "2025-03-04T05:00:00.000000+00:00",
        "b0000000001": "2025-03-04T07:00:00.000000+00:00",
        "b0000000004": "2025-03-04T06:00:00.000000+00:00",
        "b0000000002": "2025-03-04T06:00:00.000000+00:00",
    }
    for key, when in times.items():
        book.write(record(key=key, submitted_at=when))
    assert [r.key for r in book.records()] == [
        "b0000000003",
        "b0000000002",
        "b0000000004",
        "b0000000001",
    ]


def test_pending(tmp_path: Path) -> None:
    book = ledger(tmp_path)
    statuses = ["submitting", "submitted", "collected", "failed", "abandoned"]
    for index, status in enumerate(statuses):
        book.write(
            record(
                key=f"b000000000{index}",
                status=status,
                submitted_at=f"2025-03-04T05:00:0{index}.000000+00:00",
            )
        )
    assert [r.status for r in book.pending()] == ["submitting", "submitted"]
    assert [r.pending for r in book.records()] == [True, True, False, False, False]


def test_written_file_is_json_with_each_list_on_one_line(tmp_path: Path) -> None:
    book = ledger(tmp_path)
    rec = record(
        ids=list(STR_IDS), counts={"total": 5, "failed": 0}, message="multi\nline } message"
    )
    book.write(rec)
    text = book.path(rec.key).read_text(encoding="utf-8")
    raw = json.loads(text)
    assert raw["schema_version"] == 1
    assert raw["ids"] == STR_IDS and raw["prompt_hashes"] == rec.prompt_hashes
    assert raw["counts"] == {"total": 5, "failed": 0}
    assert text.endswith("}\n")
    lines = text.splitlines()
    (ids_line,) = [line for line in lines if line.lstrip().startswith('"ids"')]
    assert json.loads(ids_line.split(":", 1)[1].rstrip(",")) == STR_IDS
    (hashes_line,) = [line for line in lines if line.lstrip().startswith('"prompt_hashes"')]
    assert json.loads(hashes_line.split(":", 1)[1]) == rec.prompt_hashes
    assert "ünï" in text  # UTF-8, not \\u escapes
    # The row lists come last, so the small fields read first.
    assert list(raw)[-2:] == ["ids", "prompt_hashes"]


def test_a_large_record_stays_a_short_file(tmp_path: Path) -> None:
    book = ledger(tmp_path)
    n = 20_000
    rec = record(ids=list(range(n)), prompt_hashes=[f"{i:064x}" for i in range(n)])
    book.write(rec)
    assert len(book.path(rec.key).read_text().splitlines()) < 30
    assert book.records() == [rec]


# --- damaged files ------------------------------------------------------------------------------


def good_json() -> dict[str, Any]:
    return record().to_json()


@pytest.mark.parametrize(
    "content",
    [
        "{ not json",
        "",
        "[]",
        "null",
        "42",
        json.dumps({**good_json(), "schema_version": 2}),
        json.dumps({k: v for k, v in good_json().items() if k != "schema_version"}),
        json.dumps({k: v for k, v in good_json().items() if k != "ids"}),
        json.dumps({k: v for k, v in good_json().items() if k != "key"}),
        json.dumps({**good_json(), "ids": 5}),
        json.dumps({**good_json(), "prompt_hashes": ["h0"]}),
        json.dumps({**good_json(), "status": "done"}),
        json.dumps({**good_json(), "counts": {"total": "many"}}),
        json.dumps({**good_json(), "answers_per_row": "three"}),
    ],
    ids=[
        "syntax",
        "empty",
        "list",
        "null",
        "number",
        "version2",
        "no-version",
        "no-ids",
        "no-key",
        "ids-not-list",
        "lengths-differ",
        "bad-status",
        "bad-counts",
        "bad-answers",
    ],
)
def test_damaged_file_is_a_state_error_naming_it(tmp_path: Path, content: str) -> None:
    book = ledger(tmp_path)
    book.write(record(key="b0000000001"))
    damaged = book.path("b0000000002")
    damaged.write_text(content, encoding="utf-8")
    with pytest.raises(StateError) as caught:
        book.records()
    assert caught.value.path == damaged
    assert str(damaged) in str(caught.value)
    with pytest.raises(StateError):
        book.pending()


@pytest.mark.parametrize("ids", ["abcde", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}])
def test_ids_that_are_not_a_list_are_a_state_error(tmp_path: Path, ids: Any) -> None:
    book = ledger(tmp_path)
    damaged = book.path("b0000000001")
    damaged.parent.mkdir(parents=True)
    damaged.write_text(json.dumps({**good_json(), "ids": ids}), encoding="utf-8")
    with pytest.raises(StateError):
        book.records()


def test_other_files_in_the_folder_are_ignored(tmp_path: Path) -> None:
    book = ledger(tmp_path)
    book.write(record())
    (book.folder / "notes.txt").write_text("not a record")
    assert book.records() == [record()]


# --- keys ---------------------------------------------------------------------------------------


def test_new_batch_key_is_safe_and_unique() -> None:
    keys = [new_batch_key() for _ in range(20_000)]
    for key in keys:
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", key), key
        # The key must not contain the separator of the custom ids it prefixes.
        assert "-" not in key
    assert len(set(keys)) == len(keys)


def test_new_batch_key_round_trips_through_locate() -> None:
    for _ in range(200):
        rec = record(key=new_batch_key())
        assert rec.locate(rec.custom_id(3)) == (3, 0)
        assert record(key=new_batch_key()).locate(rec.custom_id(3)) is None
