"""`check_frame` (labels checked as columns) equals `check_values` row by row."""

from __future__ import annotations

import sys
from typing import Any

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.eval_task.labels import _WHITESPACE, check_frame, check_values

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
