"""Bad input everywhere: each mistake raises the exact class from `meta_evaluator.errors`.

Every test checks three things: the exception's exact class (and that it is a
`MetaEvaluatorError`), that its message names the culprit (file, column, row, id, field or judge),
and, where the error carries one, the attribute naming the place (`path`, `column`, `row_id`,
`field`, `judge_id`). Failing save and create operations must leave the project folder exactly as
it was ("nothing half-written").
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import meta_evaluator.storage
from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader, EvalData
from meta_evaluator.errors import (
    AlreadySetError,
    ColumnError,
    DataError,
    DataFileError,
    DiskFullError,
    IdError,
    JudgeConfigError,
    MetaEvaluatorError,
    ProjectError,
    ProjectExistsError,
    ProjectNotFoundError,
    SamplingError,
    StateError,
    StorageError,
    TaskError,
    UnsafeNameError,
)
from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.judge import Judge, Prompt
from tests.conftest import Main

STATE = "main_state.json"


# ----- helpers -----------------------------------------------------------------------------------


def check(info: pytest.ExceptionInfo[Any], cls: type[Exception], *fragments: str) -> Any:
    """Assert the exception is exactly `cls`, a MetaEvaluatorError, and names every fragment."""
    exc = info.value
    assert type(exc) is cls, f"expected exactly {cls.__name__}, got {type(exc).__name__}: {exc}"
    assert isinstance(exc, MetaEvaluatorError)
    message = str(exc)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in message: {message!r}"
    return exc


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root`, by relative path, with its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def assert_unchanged(root: Path, before: dict[str, bytes]) -> None:
    after = snapshot(root)
    stray = sorted(set(after) - set(before))
    gone = sorted(set(before) - set(after))
    changed = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
    assert not (stray or gone or changed), (
        f"folder changed by a failed operation: new {stray}, removed {gone}, modified {changed}"
    )
    assert not [k for k in after if k.endswith(".tmp")], f"temporary files left: {sorted(after)}"


def write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "qid": ["r1", "r2", "r3", "r4"],
            "prompt": ["p1", "p2", "p3", "p4"],
            "response": ["a1", "a2", "a3", "a4"],
            "label": ["x", "y", "x", "y"],
        }
    )


def task(**options: Any) -> EvalTask:
    return EvalTask(
        task_schemas={"rejection": ["rejection", "not rejection"]},
        prompt_columns=["prompt"],
        response_columns=["response"],
        **options,
    )


def saved_project(root: Path, *, with_data: bool = True) -> MetaEvaluator:
    evaluator = MetaEvaluator(root)
    if with_data:
        evaluator.add_data(DataLoader.load_from_dataframe("main", frame(), "qid"))
        evaluator.add_eval_task(task())
    evaluator.add_judge("judge_a", "mock", "mock-1", "Judge {response}")
    evaluator.save_state()
    return evaluator


def edit_state(root: Path, change: Any) -> dict[str, Any]:
    state = json.loads((root / STATE).read_text(encoding="utf-8"))
    change(state)
    (root / STATE).write_text(json.dumps(state), encoding="utf-8")
    return state


# ----- data files --------------------------------------------------------------------------------

LOADERS = {
    "csv": DataLoader.load_csv,
    "json": DataLoader.load_json,
    "jsonl": DataLoader.load_jsonl,
    "parquet": DataLoader.load_parquet,
}


@pytest.mark.parametrize("kind", sorted(LOADERS))
def test_empty_file(tmp_path: Path, kind: str) -> None:
    path = write(tmp_path / f"empty_data.{kind}", b"")
    with pytest.raises(DataFileError) as info:
        LOADERS[kind]("d", path)
    exc = check(info, DataFileError, "empty_data." + kind, "empty")
    assert exc.path == path


def test_empty_file_through_load(tmp_path: Path) -> None:
    path = write(tmp_path / "nothing.jsonl", b"")
    with pytest.raises(DataFileError) as info:
        DataLoader.load("d", path)
    assert check(info, DataFileError, "nothing.jsonl", "empty").path == path


@pytest.mark.parametrize("kind", ["csv", "json", "jsonl"])
def test_whitespace_only_file(tmp_path: Path, kind: str) -> None:
    path = write(tmp_path / f"blank.{kind}", "  \n\t\n   \n")
    with pytest.raises(DataFileError) as info:
        LOADERS[kind]("d", path)
    exc = check(info, DataFileError, f"blank.{kind}", "white space")
    assert exc.path == path


def test_header_only_csv(tmp_path: Path) -> None:
    # A file that holds no data rows is an empty data file (as `[]` is for load_json).
    path = write(tmp_path / "header_only.csv", "qid,response\n")
    with pytest.raises(DataFileError) as info:
        DataLoader.load_csv("d", path, "qid")
    exc = check(info, DataFileError, "header_only.csv")
    assert exc.path == path


def test_empty_json_list(tmp_path: Path) -> None:
    path = write(tmp_path / "none.json", "[]")
    with pytest.raises(DataFileError) as info:
        DataLoader.load_json("d", path)
    assert check(info, DataFileError, "none.json", "empty list").path == path


def test_csv_duplicate_header(tmp_path: Path) -> None:
    path = write(tmp_path / "dup.csv", "qid,response,response\n1,a,b\n")
    with pytest.raises(ColumnError) as info:
        DataLoader.load_csv("d", path, "qid")
    exc = check(info, ColumnError, "dup.csv", "'response'", "repeats")
    assert exc.column == "response"
    assert exc.path == path


def test_csv_header_with_empty_name(tmp_path: Path) -> None:
    path = write(tmp_path / "noname.csv", "qid,,response\n1,x,a\n")
    with pytest.raises(ColumnError) as info:
        DataLoader.load_csv("d", path, "qid")
    exc = check(info, ColumnError, "noname.csv", "column 2")
    assert exc.path == path


def test_csv_row_with_too_many_fields(tmp_path: Path) -> None:
    path = write(tmp_path / "ragged.csv", "qid,response\n1,a\n2,b,extra\n3,c\n")
    with pytest.raises(DataFileError) as info:
        DataLoader.load_csv("d", path, "qid")
    assert check(info, DataFileError, "ragged.csv").path == path


def test_csv_row_with_too_few_fields(tmp_path: Path) -> None:
    # Line 3 lost a field; padding it with null would silently change the data.
    path = write(tmp_path / "short_row.csv", "qid,prompt,response\n1,p,a\n2,p\n3,p,c\n")
    with pytest.raises(DataFileError) as info:
        DataLoader.load_csv("d", path, "qid")
    assert check(info, DataFileError, "short_row.csv").path == path


def test_parquet_file_given_to_load_csv(tmp_path: Path) -> None:
    path = tmp_path / "really_parquet.csv"
    frame().write_parquet(path)
    with pytest.raises(DataFileError) as info:
        DataLoader.load_csv("d", path, "qid")
    exc = check(info, DataFileError, "really_parquet.csv", "load_parquet")
    assert exc.path == path


def test_json_content_given_to_load_csv(tmp_path: Path) -> None:
    path = write(tmp_path / "records.csv", '[{"qid": 1, "response": "a"}]\n')
    with pytest.raises(DataFileError) as info:
        DataLoader.load_csv("d", path, "qid")
    exc = check(info, DataFileError, "records.csv", "load_json")
    assert exc.path == path


def test_malformed_json_gives_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path / "broken.json", '[\n  {"qid": 1},\n  {"qid": 2,}\n]\n')
    with pytest.raises(DataFileError) as info:
        DataLoader.load_json("d", path)
    exc = check(info, DataFileError, "broken.json", "line 3, column")
    assert exc.path == path


def test_jsonl_with_a_malformed_line(tmp_path: Path) -> None:
    path = write(tmp_path / "rows.jsonl", '{"qid": 1}\n{"qid": 2\n{"qid": 3}\n')
    with pytest.raises(DataFileError) as info:
        DataLoader.load_jsonl("d", path, "qid")
    exc = check(info, DataFileError, "rows.jsonl", "line 2")
    assert exc.path == path
    assert exc.row_id == 2


def test_jsonl_line_that_is_not_an_object(tmp_path: Path) -> None:
    # Line 3 (after a blank line) is a number; row_id must point at it as for a malformed line.
    path = write(tmp_path / "scalar_line.jsonl", '{"qid": 1}\n\n5\n')
    with pytest.raises(DataFileError) as info:
        DataLoader.load_jsonl("d", path, "qid")
    exc = check(info, DataFileError, "scalar_line.jsonl", "line 3")
    assert exc.row_id == 3


def test_json_scalar(tmp_path: Path) -> None:
    path = write(tmp_path / "scalar.json", "42\n")
    with pytest.raises(DataFileError) as info:
        DataLoader.load_json("d", path)
    exc = check(info, DataFileError, "scalar.json", "JSON int")
    assert exc.path == path


def test_json_object_whose_values_are_not_lists(tmp_path: Path) -> None:
    path = write(tmp_path / "cols.json", '{"qid": [1, 2], "response": "a"}')
    with pytest.raises(DataFileError) as info:
        DataLoader.load_json("d", path, "qid")
    exc = check(info, DataFileError, "cols.json", "'response'")
    assert exc.column == "response"
    assert exc.path == path


def test_json_columns_of_unequal_length(tmp_path: Path) -> None:
    path = write(tmp_path / "uneven.json", '{"qid": [1, 2], "response": ["a", "b", "c"]}')
    with pytest.raises(DataFileError) as info:
        DataLoader.load_json("d", path, "qid")
    exc = check(info, DataFileError, "uneven.json", "'qid': 2", "'response': 3")
    assert exc.path == path


def test_non_parquet_file_given_to_load_parquet(tmp_path: Path) -> None:
    path = write(tmp_path / "table.parquet", "qid,response\n1,a\n")
    with pytest.raises(DataFileError) as info:
        DataLoader.load_parquet("d", path, "qid")
    exc = check(info, DataFileError, "table.parquet", "not a Parquet file")
    assert exc.path == path


def test_truncated_parquet_file(tmp_path: Path) -> None:
    path = tmp_path / "cut.parquet"
    frame().write_parquet(path)
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(DataFileError) as info:
        DataLoader.load_parquet("d", path, "qid")
    assert check(info, DataFileError, "cut.parquet").path == path


@pytest.mark.parametrize("kind", [*sorted(LOADERS), "load"])
def test_directory_instead_of_file(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "folder.csv"
    path.mkdir()
    loader = DataLoader.load if kind == "load" else LOADERS[kind]
    with pytest.raises(DataFileError) as info:
        loader("d", path)
    exc = check(info, DataFileError, "folder.csv", "is a folder")
    assert exc.path == path


@pytest.mark.parametrize("kind", [*sorted(LOADERS), "load"])
def test_missing_file(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "missing_data.csv"
    loader = DataLoader.load if kind == "load" else LOADERS[kind]
    with pytest.raises(DataFileError) as info:
        loader("d", path)
    exc = check(info, DataFileError, "missing_data.csv", "no such file")
    assert exc.path == path


@pytest.mark.parametrize("name", ["data.txt", "data.xlsx", "data"])
def test_unknown_extension_with_load(tmp_path: Path, name: str) -> None:
    path = write(tmp_path / name, "qid,response\n1,a\n")
    with pytest.raises(DataFileError) as info:
        DataLoader.load("d", path, "qid")
    suffix = Path(name).suffix or "(none)"
    exc = check(info, DataFileError, name, repr(suffix), ".csv")
    assert exc.path == path


def test_not_utf8_csv(tmp_path: Path) -> None:
    path = write(tmp_path / "latin1.csv", "qid,response\n1,caf\xe9\n".encode("latin-1"))
    with pytest.raises(DataFileError) as info:
        DataLoader.load_csv("d", path, "qid")
    assert check(info, DataFileError, "latin1.csv", "UTF-8").path == path


# ----- ids ---------------------------------------------------------------------------------------


def test_duplicate_ids(tmp_path: Path) -> None:
    path = write(tmp_path / "dups.csv", "qid,response\na,1\nb,2\na,3\n")
    with pytest.raises(IdError) as info:
        DataLoader.load_csv("d", path, "qid")
    exc = check(
        info,
        IdError,
        "dups.csv",
        "'qid'",
        "['a']",
        "rows [1, 3] (row 1: the line after the header)",
    )
    assert exc.column == "qid"
    assert exc.row_id == "a"
    assert exc.path == path


def test_null_ids(tmp_path: Path) -> None:
    path = write(tmp_path / "nulls.csv", "qid,response\n1,a\n,b\n3,c\n")
    with pytest.raises(IdError) as info:
        DataLoader.load_csv("d", path, "qid")
    exc = check(
        info, IdError, "nulls.csv", "'qid'", "null", "row 2 (row 1: the line after the header)"
    )
    assert exc.column == "qid"
    assert exc.row_id == 1


def test_empty_string_ids(tmp_path: Path) -> None:
    records = [{"qid": "a", "r": "x"}, {"qid": "", "r": "y"}, {"qid": "  ", "r": "z"}]
    path = write(tmp_path / "blank_ids.json", json.dumps(records))
    with pytest.raises(IdError) as info:
        DataLoader.load_json("d", path, "qid")
    exc = check(info, IdError, "blank_ids.json", "'qid'", "empty", "rows [2, 3]")
    assert exc.column == "qid"
    assert exc.row_id == 1


@pytest.mark.parametrize(
    "content",
    [
        '[{"qid": 1, "r": "x"}, {"qid": "a", "r": "y"}]',
        '{"qid": [1, "a"], "r": ["x", "y"]}',
    ],
    ids=["records", "columns"],
)
def test_mixed_type_ids_in_json(tmp_path: Path, content: str) -> None:
    path = write(tmp_path / "mixed.json", content)
    with pytest.raises(IdError) as info:
        DataLoader.load_json("d", path, "qid")
    exc = check(info, IdError, "mixed.json", "'qid'", "int at row 1", "str at row 2")
    assert exc.column == "qid"
    assert exc.row_id == 1


def test_mixed_type_ids_in_jsonl(tmp_path: Path) -> None:
    path = write(tmp_path / "mixed.jsonl", '{"qid": "a"}\n{"qid": 2}\n')
    with pytest.raises(IdError) as info:
        DataLoader.load_jsonl("d", path, "qid")
    exc = check(info, IdError, "mixed.jsonl", "'qid'", "str at row 1", "int at row 2")
    assert exc.column == "qid"


@pytest.mark.parametrize(("values", "hint"), [("1.5,2.5", "Float64"), ("1.0,2.0", "Int64")])
def test_float_ids_in_csv(tmp_path: Path, values: str, hint: str) -> None:
    first, second = values.split(",")
    path = write(tmp_path / "floats.csv", f"qid,response\n{first},a\n{second},b\n")
    with pytest.raises(IdError) as info:
        DataLoader.load_csv("d", path, "qid")
    exc = check(info, IdError, "floats.csv", "'qid'", hint)
    assert exc.column == "qid"


def test_float_ids_in_json_records(tmp_path: Path) -> None:
    path = write(tmp_path / "floats.json", '[{"qid": 1.5}, {"qid": 2.5}]')
    with pytest.raises(IdError) as info:
        DataLoader.load_json("d", path, "qid")
    exc = check(info, IdError, "floats.json", "'qid'", "float", "1.5")
    assert exc.row_id == 0


def test_id_column_that_does_not_exist_suggests_close_name(tmp_path: Path) -> None:
    path = write(tmp_path / "ids.csv", "q_id,response\n1,a\n2,b\n")
    with pytest.raises(ColumnError) as info:
        DataLoader.load_csv("d", path, "qid")
    exc = check(info, ColumnError, "ids.csv", "'qid'", "Did you mean 'q_id'?")
    assert exc.column == "qid"
    assert exc.path == path


def test_auto_ids_refused_when_id_column_exists(tmp_path: Path) -> None:
    path = write(tmp_path / "has_id.csv", "id,response\n1,a\n2,b\n")
    with pytest.raises(ColumnError) as info:
        DataLoader.load_csv("d", path)
    exc = check(info, ColumnError, "has_id.csv", "'id'", "id_column='id'")
    assert exc.column == "id"


def test_id_column_that_is_not_a_name(tmp_path: Path) -> None:
    path = write(tmp_path / "rows.json", '[{"qid": 1}]')
    with pytest.raises(DataError) as info:
        DataLoader.load_json("d", path, 0)  # type: ignore[arg-type]
    exc = check(info, DataError, "rows.json", "id_column", "0")
    assert exc.field == "id_column"


def test_dataframe_with_no_rows() -> None:
    with pytest.raises(DataError) as info:
        DataLoader.load_from_dataframe("d", pl.DataFrame({"qid": [], "response": []}), "qid")
    check(info, DataError, "'qid'", "no rows")


def test_eval_data_from_a_dict_instead_of_a_polars_frame() -> None:
    with pytest.raises(DataError) as info:
        EvalData("d", {"qid": [1]}, "qid")  # type: ignore[arg-type]
    exc = check(info, DataError, "polars DataFrame", "dict")
    assert exc.field == "data"


# ----- sampling ----------------------------------------------------------------------------------


@pytest.fixture
def data() -> EvalData:
    return DataLoader.load_from_dataframe("main", frame(), "qid")


@pytest.mark.parametrize("fraction", [0, 1.5, 10, -0.1, True, "0.1"])
def test_sampling_with_bad_percentage(data: EvalData, fraction: Any) -> None:
    with pytest.raises(SamplingError) as info:
        data.stratified_sample_by_columns(["label"], fraction)
    exc = check(info, SamplingError, "sample_percentage", repr(fraction))
    assert exc.field == "sample_percentage"


def test_sampling_with_no_columns(data: EvalData) -> None:
    with pytest.raises(SamplingError) as info:
        data.stratified_sample_by_columns([], 0.5)
    exc = check(info, SamplingError, "at least one column")
    assert exc.field == "columns"


def test_sampling_with_repeated_column(data: EvalData) -> None:
    with pytest.raises(SamplingError) as info:
        data.stratified_sample_by_columns(["label", "label"], 0.5)
    exc = check(info, SamplingError, "'label'")
    assert exc.column == "label"


def test_sampling_by_unknown_column(data: EvalData) -> None:
    with pytest.raises(ColumnError) as info:
        data.stratified_sample_by_columns(["labl"], 0.5)
    exc = check(info, ColumnError, "'labl'", "Did you mean 'label'?")
    assert exc.column == "labl"


def test_sampling_with_negative_seed(data: EvalData) -> None:
    with pytest.raises(SamplingError) as info:
        data.stratified_sample_by_columns(["label"], 0.5, seed=-1)
    assert check(info, SamplingError, "seed", "-1").field == "seed"


# ----- EvalTask ----------------------------------------------------------------------------------


def test_task_with_a_single_label() -> None:
    with pytest.raises(TaskError) as info:
        EvalTask({"rejection": ["rejection"]}, ["prompt"], ["response"])
    exc = check(info, TaskError, "'rejection'", "at least 2 labels")
    assert "task_schemas" in exc.field


def test_task_with_labels_differing_only_by_case() -> None:
    with pytest.raises(TaskError) as info:
        EvalTask({"verdict": ["Yes", "yes", "no"]}, ["prompt"], ["response"])
    exc = check(info, TaskError, "'verdict'", "'Yes'", "'yes'")
    assert "task_schemas" in exc.field


def test_multilabel_outcomes_differing_only_by_case() -> None:
    with pytest.raises(TaskError) as info:
        EvalTask({"harms": {"outcomes": ["fraud", "Fraud "]}}, None, ["response"])
    check(info, TaskError, "'fraud'", "'Fraud '")


@pytest.mark.parametrize(
    "name",
    [
        "status",
        "llm_raw_response_content",
        "original_id",
        "outcome",
        "human_id",
        "fingerprint",
        "prompt_hash",
        "batch_id",
    ],
)
def test_task_with_reserved_name(name: str) -> None:
    with pytest.raises(TaskError) as info:
        EvalTask({name: ["a", "b"]}, ["prompt"], ["response"])
    exc = check(info, TaskError, repr(name), "reserved")
    assert "task_schemas" in exc.field


@pytest.mark.parametrize(
    ("typo", "right"),
    [("requried_tasks", "required_tasks"), ("answering_methd", "answering_method")],
)
def test_task_unknown_keyword_suggests_the_right_one(typo: str, right: str) -> None:
    with pytest.raises(TaskError) as info:
        EvalTask({"t": ["a", "b"]}, ["prompt"], ["response"], **{typo: None})
    exc = check(info, TaskError, f"unknown key {typo!r}", f"did you mean {right!r}?")
    assert typo in exc.field


def test_task_bad_answering_method() -> None:
    with pytest.raises(TaskError) as info:
        EvalTask({"t": ["a", "b"]}, ["prompt"], ["response"], answering_method="json")
    exc = check(info, TaskError, "answering_method", "'json'")
    assert "answering_method" in exc.field


def test_task_required_tasks_names_unknown_task() -> None:
    with pytest.raises(TaskError) as info:
        EvalTask({"t": ["a", "b"]}, ["prompt"], ["response"], required_tasks=["tt"])
    exc = check(info, TaskError, "required_tasks", "['tt']")
    assert exc.field is not None
    assert "required_tasks" in exc.field, f"field {exc.field!r} does not name required_tasks"


def test_task_prompt_and_response_columns_overlap() -> None:
    with pytest.raises(TaskError) as info:
        EvalTask({"t": ["a", "b"]}, ["prompt", "response"], ["response"])
    check(info, TaskError, "['response']", "both prompt and response")


def test_task_without_response_columns() -> None:
    with pytest.raises(TaskError) as info:
        EvalTask({"t": ["a", "b"]}, ["prompt"], [])
    exc = check(info, TaskError, "response_columns")
    assert "response_columns" in exc.field


@pytest.mark.parametrize("schemas", [{}, None, ["a", "b"]], ids=["empty", "none", "list"])
def test_task_schemas_not_a_non_empty_dict(schemas: Any) -> None:
    with pytest.raises(TaskError) as info:
        EvalTask(schemas, ["prompt"], ["response"])
    exc = check(info, TaskError, "task_schemas")
    assert "task_schemas" in exc.field


@pytest.mark.parametrize(
    "name", [" padded", "padded ", "tab\there", "x" * 65, "", "   "],
    ids=["leading-space", "trailing-space", "control", "too-long", "empty", "blank"],
)  # fmt: skip
def test_task_with_unusable_name(name: str) -> None:
    """Names with spaces are accepted (as in 0.3.3: tests/eval_task/test_v033_tasks.py)."""
    with pytest.raises(TaskError) as info:
        EvalTask({name: ["a", "b"]}, ["prompt"], ["response"])
    check(info, TaskError, f"task name {name!r}")


def test_task_labels_that_are_not_strings() -> None:
    with pytest.raises(TaskError) as info:
        EvalTask({"score": [1, 2, 3]}, ["prompt"], ["response"])
    check(info, TaskError, "'score'", "non-empty strings", "1")


def test_task_column_missing_from_data(tmp_path: Path, data: EvalData) -> None:
    evaluator = MetaEvaluator(tmp_path / "p")
    evaluator.add_data(data)
    bad = EvalTask({"t": ["a", "b"]}, ["prompt"], ["answer"])
    with pytest.raises(TaskError) as info:
        evaluator.add_eval_task(bad)
    exc = check(info, TaskError, "'answer'", "'main'", "'response'")
    assert exc.column == "answer"
    assert exc.field == "response_columns"
    assert evaluator.eval_task is None


def test_task_response_column_with_nulls_names_row_ids(tmp_path: Path) -> None:
    nulls = frame().with_columns(
        pl.when(pl.col("qid").is_in(["r2", "r4"])).then(None).otherwise(pl.col("response"))
        .alias("response")
    )  # fmt: skip
    evaluator = MetaEvaluator(tmp_path / "p")
    evaluator.add_eval_task(task())
    with pytest.raises(TaskError) as info:
        evaluator.add_data(DataLoader.load_from_dataframe("holey", nulls, "qid"))
    exc = check(info, TaskError, "'response'", "'holey'", "ids ['r2', 'r4']")
    assert exc.column == "response"
    assert exc.row_id == "r2"
    assert evaluator.data is None


def test_task_prompt_column_with_nulls_in_csv_names_file_and_ids(tmp_path: Path) -> None:
    path = write(tmp_path / "gaps.csv", "qid,prompt,response\n10,p,a\n11,,b\n12,p,c\n")
    loaded = DataLoader.load_csv("gaps", path, "qid")
    with pytest.raises(TaskError) as info:
        task().validate_against(loaded)
    exc = check(info, TaskError, "gaps.csv", "'prompt'", "ids [11]")
    assert exc.row_id == 11
    assert exc.path == path


# ----- judges ------------------------------------------------------------------------------------


@pytest.fixture
def evaluator(tmp_path: Path, data: EvalData) -> MetaEvaluator:
    project = MetaEvaluator(tmp_path / "project")
    project.add_data(data)
    return project


@pytest.mark.parametrize("judge_id", ["../x", "a/b", "CON", "nul.txt", ".hidden", "x.", ""])
def test_unsafe_judge_id(evaluator: MetaEvaluator, judge_id: str) -> None:
    with pytest.raises(UnsafeNameError) as info:
        evaluator.add_judge(judge_id, "mock", "m", "Judge {response}")
    exc = check(info, UnsafeNameError, f"judge_id {judge_id!r}")
    assert exc.field == "judge_id"
    assert evaluator.judge_registry == {}


def test_judge_api_key_env_holding_a_key(evaluator: MetaEvaluator) -> None:
    with pytest.raises(JudgeConfigError) as info:
        evaluator.add_judge("j1", "openai", "gpt", "Judge {response}", api_key_env="sk-abc123")
    exc = check(info, JudgeConfigError, "'j1'", "api_key_env", "NAME of an environment variable")
    assert "sk-abc123" not in str(exc), "the secret is echoed in the error message"
    assert exc.judge_id == "j1"
    assert exc.field.endswith("api_key_env")
    assert [e["loc"] for e in exc.errors] == [exc.field]
    assert "j1" not in evaluator.judge_registry


@pytest.mark.parametrize("header", ["Authorization", "x-api-key", "Cookie"])
def test_judge_credential_header(evaluator: MetaEvaluator, header: str) -> None:
    with pytest.raises(JudgeConfigError) as info:
        evaluator.add_judge(
            "j1", "openai", "gpt", "Judge {response}", extra_headers={header: "Bearer s3cr3t"}
        )
    exc = check(info, JudgeConfigError, "'j1'", "extra_headers", repr(header), "api_key_env")
    assert "s3cr3t" not in str(exc), "the secret is echoed in the error message"
    assert exc.judge_id == "j1"
    assert exc.field.endswith("extra_headers")


def test_judge_constructed_directly_with_a_key_as_api_key_env() -> None:
    # Judge is public and documented; pydantic's own error must not leak (nor echo the secret).
    with pytest.raises(JudgeConfigError) as info:
        Judge(
            id="j1",
            llm_client="openai",
            model="gpt",
            prompt=Prompt(id="p", prompt="Judge {response}"),
            api_key_env="sk-abc123",
        )
    exc = check(info, JudgeConfigError, "api_key_env")
    assert "sk-abc123" not in str(exc)


def test_prompt_constructed_directly_with_a_broken_template() -> None:
    with pytest.raises(JudgeConfigError) as info:
        Prompt(id="p", prompt="Judge {response")
    check(info, JudgeConfigError, "prompt", "'{{'")


def test_multilabel_schema_constructed_directly_with_duplicate_outcomes() -> None:
    with pytest.raises(TaskError) as info:
        MultiLabelSchema(outcomes=["fraud", "FRAUD"])
    check(info, TaskError, "'fraud'", "'FRAUD'")


def test_duplicate_judge_id(evaluator: MetaEvaluator) -> None:
    first = evaluator.add_judge("j1", "mock", "m", "Judge {response}")
    with pytest.raises(JudgeConfigError) as info:
        evaluator.add_judge("j1", "mock", "other", "Judge {prompt}")
    exc = check(info, JudgeConfigError, "'j1'", "already registered", "on_duplicate")
    assert exc.judge_id == "j1"
    assert exc.field in {"judge_id", "id"}
    assert evaluator.judge_registry["j1"] is first


def test_prompt_placeholder_naming_no_column(evaluator: MetaEvaluator) -> None:
    with pytest.raises(JudgeConfigError) as info:
        evaluator.add_judge("j1", "mock", "m", "Did {respnse} refuse {prompt}?")
    exc = check(info, JudgeConfigError, "'j1'", "{respnse}", "'response'")
    assert "{prompt}" not in str(exc).split("name no column")[0]
    assert exc.judge_id == "j1"
    assert exc.field == "prompt"
    assert evaluator.judge_registry == {}


def test_judge_setting_typo_suggests_the_right_one(evaluator: MetaEvaluator) -> None:
    with pytest.raises(JudgeConfigError) as info:
        evaluator.add_judge("j1", "mock", "m", "Judge {response}", temprature=0.0)
    exc = check(info, JudgeConfigError, "'temprature'", "did you mean 'temperature'?")
    assert exc.judge_id == "j1"


def test_judge_with_several_problems_lists_them_all(evaluator: MetaEvaluator) -> None:
    with pytest.raises(JudgeConfigError) as info:
        evaluator.add_judge(
            "j1", "gpt", "m", "Judge {response}", temperature=3.0, max_concurrency=0
        )
    exc = check(
        info, JudgeConfigError, "3 problem(s)", "llm_client", "temperature", "max_concurrency"
    )
    assert sorted(e["loc"].rsplit(".", 1)[-1] for e in exc.errors) == [
        "llm_client",
        "max_concurrency",
        "temperature",
    ]


def test_judge_prompt_file_missing(evaluator: MetaEvaluator, tmp_path: Path) -> None:
    path = tmp_path / "no_prompt.md"
    with pytest.raises(JudgeConfigError) as info:
        evaluator.add_judge("j1", "mock", "m", prompt_file=path)
    exc = check(info, JudgeConfigError, "no_prompt.md")
    assert exc.path == path
    assert exc.field == "prompt_file"


@pytest.mark.parametrize(
    ("prompt", "prompt_file"), [(None, None), ("Judge {response}", "p.md")], ids=["neither", "both"]
)
def test_judge_needs_exactly_one_prompt(
    evaluator: MetaEvaluator, prompt: str | None, prompt_file: str | None
) -> None:
    with pytest.raises(JudgeConfigError) as info:
        evaluator.add_judge("j1", "mock", "m", prompt, prompt_file=prompt_file)
    exc = check(info, JudgeConfigError, "'j1'", "prompt_file")
    assert exc.judge_id == "j1"
    assert exc.field == "prompt"


def test_judge_base_url_without_scheme(evaluator: MetaEvaluator) -> None:
    with pytest.raises(JudgeConfigError) as info:
        evaluator.add_judge("j1", "openai", "m", "Judge {response}", base_url="127.0.0.1:8000/v1")
    exc = check(info, JudgeConfigError, "'j1'", "base_url", "http:// or https://")  # URL not echoed
    assert exc.field.endswith("base_url")


def test_judge_unknown_on_duplicate(evaluator: MetaEvaluator) -> None:
    with pytest.raises(JudgeConfigError) as info:
        evaluator.add_judge("j1", "mock", "m", "Judge {response}", on_duplicate="replace")  # type: ignore[arg-type]
    exc = check(info, JudgeConfigError, "'replace'")
    assert exc.field == "on_duplicate"


def test_add_data_twice(evaluator: MetaEvaluator, data: EvalData) -> None:
    with pytest.raises(AlreadySetError) as info:
        evaluator.add_data(data)
    exc = check(info, AlreadySetError, "'main'", "overwrite=True")
    assert exc.field == "data"


# ----- the project folder ------------------------------------------------------------------------


def test_create_on_folder_that_holds_a_project(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    saved_project(root)
    before = snapshot(root)
    with pytest.raises(ProjectExistsError) as info:
        MetaEvaluator(root, load=False)
    exc = check(info, ProjectExistsError, str(root), STATE, "load=True")
    assert exc.path == root / STATE
    assert isinstance(exc, FileExistsError)
    assert_unchanged(root, before)


def test_load_on_empty_folder(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    with pytest.raises(ProjectNotFoundError) as info:
        MetaEvaluator(root, load=True)
    exc = check(info, ProjectNotFoundError, str(root), STATE, "load=False")
    assert exc.path == root / STATE
    assert list(root.iterdir()) == []


def test_load_of_results_without_state_says_save_state_was_never_called(
    tmp_path: Path, entry: Main
) -> None:
    """A script that wrote results but never called save_state(): said as such, with the fix."""
    root = tmp_path / "scripted"
    evaluator = MetaEvaluator(root)
    frame = pl.DataFrame({"id": [1, 2], "r": ["x", "y"]})
    evaluator.add_data(DataLoader.load_from_dataframe("d", frame, "id"))
    evaluator.add_eval_task(EvalTask({"ok": ["yes", "no"]}, None, ["r"]))
    labels = write(tmp_path / "a.csv", "original_id,ok\n1,yes\n2,no\n")
    evaluator.add_external_annotation_results(labels, "ana")
    with pytest.raises(ProjectNotFoundError) as info:
        MetaEvaluator(root, load=True)
    exc = check(info, ProjectNotFoundError, STATE, "annotations/", "never called save_state()")
    assert "`evaluator.save_state()` at the end of that script" in exc.message
    assert "load=False" not in exc.message
    done = entry("report", root)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "never called save_state()" in done.stderr
    assert "add `evaluator.save_state()` at the end of that Python script" in done.stderr
    assert f"`meta-evaluator init {root}` would make an empty project" in done.stderr
    assert not (root / STATE).exists()


def test_load_on_missing_folder(tmp_path: Path) -> None:
    root = tmp_path / "nowhere"
    with pytest.raises(ProjectNotFoundError) as info:
        MetaEvaluator(root, load=True)
    assert check(info, ProjectNotFoundError, "nowhere").path == root
    assert not root.exists()


@pytest.mark.parametrize("load", [True, False])
def test_project_on_a_file_path(tmp_path: Path, load: bool) -> None:
    path = write(tmp_path / "notes.txt", "not a project")
    with pytest.raises(ProjectError) as info:
        MetaEvaluator(path, load=load)
    exc = check(info, ProjectError, "notes.txt", "is a file")
    assert exc.path == path
    assert path.read_text(encoding="utf-8") == "not a project"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_state_malformed_json(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    write(root / STATE, '{\n  "schema_version": 1,\n  "judges": {,}\n}\n')
    before = snapshot(root)
    with pytest.raises(StateError) as info:
        MetaEvaluator(root, load=True)
    exc = check(info, StateError, STATE, "line 3, column 14")
    assert exc.path == root / STATE
    assert_unchanged(root, before)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ({"name": "some other tool", "version": 3}, "{state}: is not a meta-evaluator project "
         "state (no 'schema_version')."),
        ({"data": {"file": "x.csv"}, "eval_task": None}, "{root}: a meta-evaluator 0.3.3 "
         "project: run `meta-evaluator migrate {root}` to convert it in place"),
        ([1, 2, 3], "{state}: is not a meta-evaluator project state (no 'schema_version')."),
    ],
    ids=["other-tool", "old-format", "list"],
)  # fmt: skip
def test_state_without_schema_version(tmp_path: Path, content: Any, said: str) -> None:
    """A 0.3.3 folder leads with what it is and the command that converts it."""
    root = tmp_path / "proj"
    root.mkdir()
    write(root / STATE, json.dumps(content))
    before = snapshot(root)
    with pytest.raises(StateError) as info:
        MetaEvaluator(root, load=True)
    exc = check(info, StateError, said.format(root=root, state=root / STATE))
    assert str(exc).startswith(said.format(root=root, state=root / STATE)[:20])
    assert exc.field == "schema_version"
    assert exc.path == root / STATE
    assert_unchanged(root, before)


def test_state_from_newer_schema_version(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    saved_project(root)
    edit_state(root, lambda s: s.update(schema_version=99))
    before = snapshot(root)
    with pytest.raises(StateError) as info:
        MetaEvaluator(root, load=True)
    exc = check(info, StateError, STATE, "newer", "99", "upgrade")
    assert exc.field == "schema_version"
    assert_unchanged(root, before)


@pytest.mark.parametrize("version", ["1", 0, True, 1.5])
def test_state_with_bad_schema_version(tmp_path: Path, version: Any) -> None:
    root = tmp_path / "proj"
    saved_project(root, with_data=False)
    edit_state(root, lambda s: s.update(schema_version=version))
    with pytest.raises(StateError) as info:
        MetaEvaluator(root, load=True)
    exc = check(info, StateError, STATE, "schema_version", repr(version))
    assert exc.field == "schema_version"


def test_state_with_invalid_fields_lists_each_location(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    saved_project(root)

    def break_it(state: dict[str, Any]) -> None:
        state["judges"]["judge_a"]["llm_client"] = "bogus"
        state["data"]["num_rows"] = 0
        state["jduges"] = {}

    edit_state(root, break_it)
    before = snapshot(root)
    with pytest.raises(StateError) as info:
        MetaEvaluator(root, load=True)
    exc = check(
        info,
        StateError,
        STATE,
        "3 problem(s)",
        "judges.judge_a.llm_client",
        "'bogus'",
        "data.num_rows",
        "unknown key 'jduges'",
    )
    assert exc.path == root / STATE
    assert_unchanged(root, before)


def test_state_judge_key_differs_from_its_id(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    saved_project(root, with_data=False)
    edit_state(root, lambda s: s["judges"].update(other=s["judges"].pop("judge_a")))
    with pytest.raises(StateError) as info:
        MetaEvaluator(root, load=True)
    exc = check(info, StateError, "judges.other", "'judge_a'")
    assert exc.field == "judges.other.id"


def test_state_data_file_with_unsafe_name(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    saved_project(root)
    edit_state(root, lambda s: s["data"].update(file="../../etc/passwd"))
    with pytest.raises(StateError) as info:
        MetaEvaluator(root, load=True)
    exc = check(info, StateError, STATE, "'../../etc/passwd'")
    assert exc.path == root / STATE


def test_data_file_deleted_behind_the_projects_back(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    saved_project(root)
    data_file = root / "data" / "main_data.parquet"
    data_file.unlink()
    before = snapshot(root)
    with pytest.raises(DataFileError) as info:
        MetaEvaluator(root, load=True)
    exc = check(info, DataFileError, "main_data.parquet", "missing")
    assert exc.path == data_file
    assert_unchanged(root, before)


def test_data_file_replaced_by_other_rows(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    saved_project(root)
    data_file = root / "data" / "main_data.parquet"
    frame().head(2).write_parquet(data_file)
    with pytest.raises(StateError) as info:
        MetaEvaluator(root, load=True)
    exc = check(info, StateError, "main_data.parquet", "2 rows", "says 4")
    assert exc.path == data_file


# ----- saving ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "filename", ["../evil.parquet", "sub/x.parquet", "CON.parquet", ".x.parquet"]
)
def test_save_state_with_unsafe_data_filename(tmp_path: Path, filename: str) -> None:
    evaluator = saved_project(tmp_path / "proj")
    evaluator.add_judge("judge_b", "mock", "m", "Judge {response}")
    before = snapshot(evaluator.project_dir)
    with pytest.raises(UnsafeNameError) as info:
        evaluator.save_state(data_filename=filename)
    exc = check(info, UnsafeNameError, f"data_filename {filename!r}")
    assert exc.field == "data_filename"
    assert_unchanged(evaluator.project_dir, before)
    assert not (tmp_path / "evil.parquet").exists()


@pytest.mark.parametrize(
    ("filename", "data_format"),
    [("rows.csv", "parquet"), ("rows.parquet", "csv"), ("rows", "json")],
)
def test_save_state_with_wrong_extension(tmp_path: Path, filename: str, data_format: str) -> None:
    evaluator = saved_project(tmp_path / "proj")
    evaluator.add_judge("judge_b", "mock", "m", "Judge {response}")
    before = snapshot(evaluator.project_dir)
    with pytest.raises(DataError) as info:
        evaluator.save_state(data_format=data_format, data_filename=filename)  # type: ignore[arg-type]
    exc = check(info, DataError, repr(filename), f".{data_format}")
    assert exc.field == "data_filename"
    assert_unchanged(evaluator.project_dir, before)


def test_save_state_with_unknown_format(tmp_path: Path) -> None:
    evaluator = saved_project(tmp_path / "proj")
    before = snapshot(evaluator.project_dir)
    with pytest.raises(DataError) as info:
        evaluator.save_state(data_format="xlsx")  # type: ignore[arg-type]
    exc = check(info, DataError, "'xlsx'", "parquet")
    assert exc.field == "data_format"
    assert_unchanged(evaluator.project_dir, before)


@pytest.mark.parametrize("data_format", ["csv", "json"])
def test_save_nested_column_as_text(tmp_path: Path, data_format: str) -> None:
    root = tmp_path / "proj"
    evaluator = MetaEvaluator(root)
    nested = frame().with_columns(pl.Series("tags", [["a"], [], ["b", "c"], ["d"]]))
    evaluator.add_data(DataLoader.load_from_dataframe("nested", nested, "qid"))
    before = snapshot(root)
    with pytest.raises(ColumnError) as info:
        evaluator.save_state(data_format=data_format)  # type: ignore[arg-type]
    exc = check(info, ColumnError, "'tags'", "List", data_format.upper(), "parquet")
    assert exc.column == "tags"
    assert_unchanged(root, before)


def test_save_state_with_a_folder_in_the_way(tmp_path: Path) -> None:
    evaluator = saved_project(tmp_path / "proj")
    root = evaluator.project_dir
    (root / "data" / "rows.parquet").mkdir()
    evaluator.add_judge("judge_b", "mock", "m", "Judge {response}")
    before = snapshot(root)
    with pytest.raises(StorageError) as info:
        evaluator.save_state(data_filename="rows.parquet")
    exc = check(info, StorageError, "rows.parquet", "folder")
    assert exc.path == root / "data" / "rows.parquet"
    assert_unchanged(root, before)


def test_save_state_when_os_replace_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "proj"
    evaluator = saved_project(root, with_data=False)
    old_state = (root / STATE).read_bytes()
    evaluator.add_judge("judge_b", "mock", "m", "Judge {response}")
    before = snapshot(root)

    def no_space(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(meta_evaluator.storage.os, "replace", no_space)
        with pytest.raises(StorageError) as info:
            evaluator.save_state()
    exc = check(info, DiskFullError, STATE, "No space left on device")
    assert exc.path == root / STATE
    assert (root / STATE).read_bytes() == old_state
    assert not [p.name for p in root.iterdir() if p.name.endswith(".tmp")]
    assert_unchanged(root, before)
    assert sorted(MetaEvaluator(root, load=True).judge_registry) == ["judge_a"]


def test_save_state_when_state_replace_fails_keeps_data_and_state_consistent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The data file is written first; if the state then cannot be written, the old data file
    # must still be there, or the project no longer opens.
    root = tmp_path / "proj"
    evaluator = saved_project(root)
    evaluator.add_data(
        DataLoader.load_from_dataframe("smaller", frame().head(3), "qid"), overwrite=True
    )
    before = snapshot(root)
    real_replace = os.replace

    def fail_on_state(src: Any, dst: Any) -> None:
        if Path(dst).name == STATE:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    with monkeypatch.context() as patch:
        patch.setattr(meta_evaluator.storage.os, "replace", fail_on_state)
        with pytest.raises(StorageError) as info:
            evaluator.save_state()
    exc = check(info, DiskFullError, STATE)
    assert exc.path == root / STATE
    assert_unchanged(root, before)
    reloaded = MetaEvaluator(root, load=True).data
    assert reloaded is not None
    assert len(reloaded) == 4


# ----- annotations and scoring -------------------------------------------------------------------


def annotated_project(root: Path) -> MetaEvaluator:
    """A saved project with one judge and one annotator imported (ids r1..r4)."""
    evaluator = saved_project(root)
    labels = "original_id,rejection\nr1,rejection\nr2,not rejection\nr3,rejection\n"
    evaluator.add_external_judge_results(write(root.parent / "judge.csv", labels), "judge_x")
    evaluator.add_external_annotation_results(write(root.parent / "alice.csv", labels), "alice")
    return evaluator


def test_annotation_id_not_in_the_data(tmp_path: Path) -> None:
    evaluator = saved_project(tmp_path / "proj")
    path = write(tmp_path / "alice.csv", "original_id,rejection\nr1,rejection\nr9,rejection\n")
    before = snapshot(tmp_path / "proj")
    with pytest.raises(IdError) as info:
        evaluator.add_external_annotation_results(path, "alice")
    exc = check(info, IdError, "alice.csv", "'r9'")
    assert exc.row_id == "r9"
    assert exc.path == path
    assert_unchanged(tmp_path / "proj", before)


def test_annotation_without_the_required_task(tmp_path: Path) -> None:
    evaluator = saved_project(tmp_path / "proj")
    path = write(tmp_path / "alice.csv", "original_id,other\nr1,x\n")
    with pytest.raises(TaskError) as info:
        evaluator.add_external_annotation_results(path, "alice")
    assert check(info, TaskError, "alice.csv", "rejection").column == "rejection"


@pytest.mark.parametrize("annotator_id", ["../x", "a/b", "CON", ".hidden", ""])
def test_unsafe_annotator_id(tmp_path: Path, annotator_id: str) -> None:
    evaluator = saved_project(tmp_path / "proj")
    path = write(tmp_path / "alice.csv", "original_id,rejection\nr1,rejection\n")
    before = snapshot(tmp_path / "proj")
    with pytest.raises(UnsafeNameError) as info:
        evaluator.add_external_annotation_results(path, annotator_id)
    assert check(info, UnsafeNameError, "annotator_id").field == "annotator_id"
    assert_unchanged(tmp_path / "proj", before)


def test_annotation_before_data(tmp_path: Path) -> None:
    evaluator = MetaEvaluator(tmp_path / "proj")
    path = write(tmp_path / "alice.csv", "original_id,rejection\nr1,rejection\n")
    with pytest.raises(ProjectError) as info:
        evaluator.add_external_annotation_results(path, "alice")
    check(info, ProjectError, "annotations")


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"task_names": ["a", "b"], "aggregation_name": "single"}, "single"),
        ({"task_names": ["a"], "aggregation_name": "multitask"}, "multitask"),
        ({"task_names": ["a"], "aggregation_name": "average"}, "aggregation_name"),
        ({"task_names": ["a", "a"], "aggregation_name": "multitask"}, "task_names"),
        (
            {"task_names": ["a"], "aggregation_name": "single", "display_name": "../x"},
            "display_name",
        ),
        (
            {"task_names": ["a"], "aggregation_name": "single", "annotator_aggregation": "mean"},
            "annotator_aggregation",
        ),
    ],
)
def test_metric_config_mistakes(options: dict[str, Any], field: str) -> None:
    from meta_evaluator.errors import MetricConfigError
    from meta_evaluator.scores import MetricConfig
    from meta_evaluator.scores.metrics import AccuracyScorer

    with pytest.raises(MetricConfigError) as info:
        MetricConfig(scorer=AccuracyScorer(), **options)
    check(info, MetricConfigError, "MetricConfig(accuracy)", field)


def _scorer(name: str, *args: Any, **kwargs: Any) -> Any:
    from meta_evaluator.scores import metrics

    return getattr(metrics, name)(*args, **kwargs)


@pytest.mark.parametrize(
    ("name", "args", "kwargs", "fragment"),
    [
        ("CohensKappaScorer", (), {"weights": "cubic"}, "'cubic'"),
        ("AltTestScorer", (), {"epsilon": 1.5}, "1.5"),
        ("AltTestScorer", (), {"q_fdr": 0}, "q_fdr"),
        ("AltTestScorer", (), {"min_humans_per_instance": 1}, "min_humans_per_instance"),
        ("AltTestScorer", (), {"scoring_function": "x"}, "'x'"),
        ("KrippendorffAlphaScorer", ("bogus",), {}, "'bogus'"),
        ("SemanticSimilarityScorer", (), {"batch_size": 0}, "batch_size"),
        ("FairnessScorer", ("male", "H"), {}, "sensitive_columns"),
        ("FairnessScorer", (["male"], ""), {}, "positive_label"),
        ("FairnessScorer", (["male"], "H"), {"thresholds": {"male": (0.5, "yes")}}, "'yes'"),
        ("FairnessScorer", (["male"], "H"), {"gold_column": ""}, "gold_column"),
        ("FairnessScorer", (["male"], "H"), {"agg": "max"}, "'max'"),
        ("FairnessScorer", (["male"], "H"), {"method": "overall"}, "'overall'"),
        ("PreferenceScorer", (), {"comparison_column": ""}, "comparison_column"),
        ("StereotypeScorer", (("a", "b"),), {}, "option_label_columns"),
        ("StereotypeScorer", (), {"bias_type_column": ""}, "bias_type_column"),
        ("CounterfactualScorer", ("",), {}, "counterfactual_of_column"),
        ("CounterfactualScorer", (), {"group_column": 0}, "group_column"),
        ("MultipleChoiceScorer", (), {"options_column": ""}, "options_column"),
        ("MultipleChoiceScorer", (), {"language_column": ""}, "language_column"),
    ],
)
def test_scorer_arguments_are_checked_at_once(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], fragment: str
) -> None:
    from meta_evaluator.errors import ScoringError

    with pytest.raises(ScoringError) as info:
        _scorer(name, *args, **kwargs)
    check(info, ScoringError, name, fragment)


def test_compare_with_an_unknown_task_writes_nothing(tmp_path: Path) -> None:
    from meta_evaluator.errors import MetricConfigError
    from meta_evaluator.scores import MetricConfig, MetricsConfig
    from meta_evaluator.scores.metrics import AccuracyScorer

    root = tmp_path / "proj"
    evaluator = annotated_project(root)
    before = snapshot(root)
    config = MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=AccuracyScorer(), task_names=["rejection"], aggregation_name="single"
            ),
            MetricConfig(
                scorer=AccuracyScorer(), task_names=["rejecton"], aggregation_name="single"
            ),
        ]
    )
    with pytest.raises(MetricConfigError) as info:
        evaluator.compare_async(config)
    check(info, MetricConfigError, "metrics[1]", "'rejecton'", "rejection")
    assert_unchanged(root, before)


def test_compare_without_annotations(tmp_path: Path) -> None:
    from meta_evaluator.errors import ScoringError
    from meta_evaluator.scores import MetricConfig, MetricsConfig
    from meta_evaluator.scores.metrics import AccuracyScorer

    root = tmp_path / "proj"
    evaluator = saved_project(root)
    labels = "original_id,rejection\nr1,rejection\n"
    evaluator.add_external_judge_results(write(tmp_path / "judge.csv", labels), "judge_x")
    before = snapshot(root)
    config = MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=AccuracyScorer(), task_names=["rejection"], aggregation_name="single"
            )
        ]
    )
    with pytest.raises(ScoringError) as info:
        evaluator.compare_async(config)
    check(info, ScoringError, "human annotations", "add_external_annotation_results")
    assert_unchanged(root, before)


def test_compare_data_column_scorer_without_project_data() -> None:
    """A scorer that joins data columns, called without data: an error result naming them."""
    import anyio

    from meta_evaluator.scores import MetricConfig, MetricsConfig
    from meta_evaluator.scores.compare import IncompleteScoresWarning, compare
    from meta_evaluator.scores.metrics import StereotypeScorer

    judge = pl.DataFrame(
        {"original_id": ["r1"], "outcome": ["valid"], "answer": ["1"],
         "llm_raw_response_content": ["1"]}
    )  # fmt: skip
    config = MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=StereotypeScorer(), task_names=["answer"], aggregation_name="single"
            )
        ]
    )

    async def go() -> Any:
        return await compare(config, {"judge_x": judge}, {}, data=None)

    with pytest.warns(IncompleteScoresWarning, match="option_1_label"):
        table = anyio.run(go)
    ((_, (result,)),) = [(k, v[1]) for k, v in table.items()]
    assert result.error is not None and "no data" in result.error
    assert "'bias_type'" in result.error and result.failed_comparisons == 1
    assert result.scores == {}


def test_compare_with_a_list_instead_of_metrics_config(tmp_path: Path) -> None:
    from meta_evaluator.errors import MetricConfigError
    from meta_evaluator.scores import MetricConfig
    from meta_evaluator.scores.metrics import AccuracyScorer

    evaluator = annotated_project(tmp_path / "proj")
    metric = MetricConfig(
        scorer=AccuracyScorer(), task_names=["rejection"], aggregation_name="single"
    )
    with pytest.raises(MetricConfigError) as info:
        evaluator.compare_async([metric])  # type: ignore[arg-type]
    check(info, MetricConfigError, "MetricsConfig", "list")


def test_scoring_result_file_that_is_not_a_result(tmp_path: Path) -> None:
    from meta_evaluator.scores import BaseScoringResult

    path = write(tmp_path / "judge_result.json", '{"scores": {}}')
    with pytest.raises(StateError) as info:
        BaseScoringResult.load_state(path)
    assert check(info, StateError, "judge_result.json").path == path


# ----- preference pairs --------------------------------------------------------------------------


def pairs_document(annotators: dict[str, Any], votes: dict[str, str | None]) -> str:
    """An AnnotatedPairs v1 file with two comparisons; annotator "h" is the default."""
    comparisons = [
        {
            "id": cid,
            "prompt": f"q {cid}",
            "text_a": f"A {cid}",
            "text_b": f"B {cid}",
            "annotations": {a: {"pref": v} for a, v in votes.items()},
        }
        for cid in ("c1", "c2")
    ]
    return json.dumps(
        {
            "metadata": {"version": "1.0", "default_annotator": "h"},
            "annotators": annotators,
            "comparisons": comparisons,
        }
    )


def test_preference_pairs_not_annotated_pairs_leave_project_unchanged(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    evaluator = MetaEvaluator(root)
    evaluator.save_state()
    before = snapshot(root)
    path = write(tmp_path / "pairs.json", json.dumps({"pairs": []}))
    with pytest.raises(DataFileError) as info:
        evaluator.add_preference_pairs(path)
    assert check(info, DataFileError, "pairs.json", "comparisons").path == path
    assert evaluator.data is None and evaluator.eval_task is None
    assert_unchanged(root, before)


def test_preference_csv_without_preferred_leaves_project_unchanged(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    evaluator = MetaEvaluator(root)
    evaluator.save_state()
    before = snapshot(root)
    path = write(tmp_path / "pairs.csv", "comparison_id,text_a,text_b,winner\nc1,A,B,text_a\n")
    with pytest.raises(ColumnError) as info:
        evaluator.add_preference_pairs(path)
    exc = check(info, ColumnError, "pairs.csv", "preferred", "winner")
    assert exc.column == "preferred" and exc.path == path
    assert evaluator.data is None
    assert_unchanged(root, before)


def test_preference_pairs_with_null_comparison_ids_in_csv(tmp_path: Path) -> None:
    evaluator = MetaEvaluator(tmp_path / "proj")
    path = write(tmp_path / "pairs.csv", "comparison_id,text_a,text_b,preferred\n,A,B,text_a\n")
    with pytest.raises(IdError) as info:
        evaluator.add_preference_pairs(path)
    check(info, IdError, "comparison_id")


def test_preference_annotator_named_like_a_device_gets_a_safe_key(tmp_path: Path) -> None:
    annotators = {"h": {"name": "crowd", "type": "human"}, "x": {"name": "NUL", "type": "human"}}
    path = write(tmp_path / "pairs.json", pairs_document(annotators, {"h": "text_a", "x": "b"}))
    root = tmp_path / "proj"
    evaluator = MetaEvaluator(root)
    summary = evaluator.add_preference_pairs(path)
    assert "nul" not in summary["annotators"]
    assert len(evaluator.load_all_human_results()) == 2


def test_preference_principle_named_like_the_preference_task(tmp_path: Path) -> None:
    annotators = {
        "h": {"name": "crowd", "type": "human"},
        "p": {"description": "Select the response that preference", "type": "principle"},
    }
    path = write(tmp_path / "pairs.json", pairs_document(annotators, {"h": "text_a", "p": "b"}))
    evaluator = MetaEvaluator(tmp_path / "proj")
    try:
        summary = evaluator.add_preference_pairs(path)
    except TaskError:
        return  # refusing the clash with a clear error is fine too
    assert "preference" not in summary["traits"]
    assert evaluator.eval_task is not None and len(evaluator.eval_task.task_names) == 2
