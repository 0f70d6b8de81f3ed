"""`check_frame` (labels checked as columns) equals `check_values` row by row."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.eval_task.labels import _WHITESPACE, check_frame, check_values
from meta_evaluator.results.external import align_ids, import_scope
from meta_evaluator.results.human_results import annotation_schema
from meta_evaluator.results.judge_results import JudgeResults

TASK = EvalTask(
    task_schemas={
        "verdict": ["Yes", "no", "Not Sure"],
        "number": ["1", "2", "true", "1.5"],
        "harms": MultiLabelSchema(outcomes=["crime", "Fraud", "spam"]),
        "note": None,
    },
    prompt_columns=None,
    response_columns=["response"],
    required_tasks=["verdict", "harms"],
)
LABELS = ["Yes", "no", "Not Sure", "1", "2", "true", "1.5", "crime", "Fraud", "spam"]


def _odd(label: str, case: str, pad: str) -> str:
    """A label in another case, padded and with its inner spaces doubled."""
    changed = {"upper": label.upper(), "lower": label.lower(), "same": label}[case]
    return f"{pad}{changed.replace(' ', '  ')}{pad}"


PADDING = st.sampled_from(["", " ", "\t", "\n", "\x1c", "\u3000", " \xa0"])
ODD_LABEL = st.builds(
    _odd, st.sampled_from(LABELS), st.sampled_from(["upper", "lower", "same"]), PADDING
)
MULTI = st.lists(st.one_of(ODD_LABEL, st.text(max_size=4)), max_size=4).flatmap(
    lambda items: st.sampled_from([",", ";", "\n", ", "]).map(lambda sep: sep.join(items))
)
TEXT = st.one_of(ODD_LABEL, MULTI, PADDING, st.text(max_size=8), st.none())
COLUMNS: dict[str, tuple[pl.DataType, st.SearchStrategy[Any]]] = {
    "text": (pl.String(), TEXT),
    "int": (pl.Int64(), st.one_of(st.none(), st.integers(-3, 3))),
    "float": (
        pl.Float64(),
        st.one_of(st.none(), st.sampled_from([1.0, 2.0, 1.5, -0.0, 0.0]), st.floats()),
    ),
    "bool": (pl.Boolean(), st.one_of(st.none(), st.booleans())),
    "list": (
        pl.List(pl.String()),
        st.one_of(st.none(), st.lists(st.one_of(ODD_LABEL, st.none()), max_size=3)),
    ),
    "null": (pl.Null(), st.none()),
}


@st.composite
def frames(draw: st.DrawFn) -> pl.DataFrame:
    """A frame of a few rows whose task columns each have a random kind (or are absent)."""
    rows = draw(st.integers(0, 8))
    columns: list[pl.Series] = []
    for name in TASK.task_names:
        kind = draw(st.sampled_from([*COLUMNS, "absent"]))
        if kind == "absent":
            continue
        dtype, values = COLUMNS[kind]
        columns.append(
            pl.Series(name, draw(st.lists(values, min_size=rows, max_size=rows)), dtype=dtype)
        )
    return pl.DataFrame(columns, height=rows) if columns else pl.DataFrame(height=rows)


def expected(frame: pl.DataFrame, required: list[str] | None) -> list[dict[str, Any]]:
    """`check_values` of each row, as `check_frame` gives it."""
    found = []
    for row in frame.iter_rows(named=True):
        checked = check_values(row, TASK, required=required)
        found.append(
            {
                "outcome": checked.outcome,
                "status": checked.status,
                "error_message": checked.error_message,
                **{t: checked.labels.get(t) for t in TASK.task_names},
            }
        )
    return found


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    frame=frames(),
    required=st.one_of(
        st.none(), st.lists(st.sampled_from(TASK.task_names), max_size=4, unique=True)
    ),
)
def test_check_frame_equals_check_values_row_by_row(
    frame: pl.DataFrame, required: list[str] | None
) -> None:
    checked = check_frame(frame, TASK, required=required)
    assert checked.height == frame.height
    assert checked.columns == ["outcome", "status", "error_message", *TASK.task_names]
    assert checked.schema["harms"] == pl.List(pl.String())
    assert checked.to_dicts() == expected(frame, required)


def test_a_million_like_column_maps_few_values_back_in_order() -> None:
    frame = pl.DataFrame({"verdict": [" yes", "NO", "maybe", None] * 3, "harms": ["crime"] * 12})
    checked = check_frame(frame, TASK, required=["verdict", "harms"])
    assert checked.to_dicts() == expected(frame, ["verdict", "harms"])
    assert checked.get_column("verdict").to_list()[:4] == ["Yes", "no", None, None]
    assert checked.get_column("status").to_list()[:4] == [
        "success",
        "success",
        "label_not_allowed",
        "partial",
    ]


def test_whitespace_is_what_str_strip_removes() -> None:
    every = "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace())
    assert every == _WHITESPACE


# The imports: the table written equals the one the former per-row path built (`label_row`).


def label_row(
    record: dict[str, Any], id_column: str, task: EvalTask, required: Sequence[str]
) -> dict[str, Any]:
    """The former per-row import of one row: `check_values`, then id, outcome and labels."""
    checked = check_values(record, task, required=required)
    return {
        "original_id": record[id_column],
        "outcome": checked.outcome,
        "status": checked.status,
        "error_message": checked.error_message,
        **checked.labels,
    }


CSV = (
    "original_id,verdict,number,harms,note\n"
    '1, YES ,2,"crime, FRAUD", a note \n'
    "2,maybe,1.5,spam;eggs,\n"
    "3,,true,,   \n"
    '4,Not  sure,7,"spam\nCRIME",x\n'
    "5,no,,,\n"
)
JSON = (
    '[{"original_id": 6, "verdict": "no", "number": 2, "harms": ["spam", " crime"]},'
    ' {"original_id": 7, "verdict": "yes", "number": 1.5, "harms": ["nope"], "note": " t "},'
    ' {"original_id": 8, "verdict": null, "number": null, "harms": [], "note": ""}]'
)


def _project(tmp_path: Path) -> MetaEvaluator:
    evaluator = MetaEvaluator(tmp_path / "p")
    frame = pl.DataFrame({"qid": list(range(1, 9)), "response": ["r"] * 8})
    evaluator.add_data(DataLoader.load_from_dataframe("d", frame, "qid"))
    evaluator.add_eval_task(TASK)
    return evaluator


def _former_rows(
    evaluator: MetaEvaluator, file: Path, tasks: list[str] | None
) -> list[dict[str, Any]]:
    """The rows as the per-row import made them: `label_row` of each row.

    With `tasks`, the file's columns of other tasks are not imported (null in every row).
    """
    data, task = evaluator.data, evaluator.eval_task
    assert data is not None and task is not None
    frame = align_ids(DataLoader.load("x", file, "original_id").data, "original_id", data, file)
    if tasks is not None:
        frame = frame.drop(t for t in task.task_names if t in frame.columns and t not in tasks)
    required, _ = import_scope(task, tasks, file)
    return [label_row(r, "original_id", task, required) for r in frame.iter_rows(named=True)]


@pytest.mark.parametrize(("text", "suffix"), [(CSV, "csv"), (JSON, "json")])
@pytest.mark.parametrize("tasks", [None, ["verdict", "number", "harms"], ["number"]])
def test_imports_write_the_table_the_per_row_path_made(
    tmp_path: Path, text: str, suffix: str, tasks: list[str] | None
) -> None:
    evaluator = _project(tmp_path)
    data = evaluator.data
    assert data is not None
    id_dtype = data.data.schema["qid"]
    file = tmp_path / f"labels.{suffix}"
    file.write_text(text)
    rows = _former_rows(evaluator, file, tasks)

    judged = evaluator.add_external_judge_results(file, "j", tasks=tasks)
    (table,) = (tmp_path / "p").glob("results/*/j.parquet")
    written = pl.read_parquet(table)
    assert written.equals(judged.results_data)
    assert written.get_column("timestamp").n_unique() == 1
    run = judged.run_id
    fingerprint = written.get_column("fingerprint")[0]
    stamp = written.get_column("timestamp")[0]
    stamped = [
        {**r, "judge_id": "j", "run_id": run, "fingerprint": fingerprint, "timestamp": stamp}
        for r in rows
    ]
    former = JudgeResults.from_rows("j", run, stamped, TASK, id_dtype).results_data
    assert_frame_equal(written, former)

    annotated = evaluator.add_external_annotation_results(file, "ann", tasks=tasks)
    (table,) = (tmp_path / "p").glob("annotations/*/ann.parquet")
    written = pl.read_parquet(table)
    assert written.equals(annotated.results_data)
    assert written.get_column("timestamp").n_unique() == 1
    run, stamp = annotated.run_id, written.get_column("timestamp")[0]
    schema = annotation_schema(TASK, id_dtype)
    stamped = [{**r, "annotator_id": "ann", "run_id": run, "timestamp": stamp} for r in rows]
    former = pl.DataFrame(
        [{c: r.get(c) for c in schema} for r in stamped], schema=schema, orient="row"
    )
    assert_frame_equal(written, former)
