"""Property tests: file round trips, id rules, auto ids, stratified sampling, safe names."""

from __future__ import annotations

import math
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from meta_evaluator.data import DataLoader, EvalData, SampleEvalData
from meta_evaluator.errors import IdError, UnsafeNameError
from meta_evaluator.storage import check_safe_name

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
FINITE = st.floats(allow_nan=False, allow_infinity=False)
# Characters that stress every format: separators, quotes, line breaks of every kind, non-ASCII.
SPECIAL = st.sampled_from(
    [",", ";", '"', "'", "\n", "\r", "\r\n", "\t", " ", "é", "日本", "✓", "\u2028", "\x85", "{"]
)


def text(*, nul: bool) -> st.SearchStrategy[str]:
    """Any text (no surrogates); `nul=False` leaves out NUL, which marks a file as binary."""
    chars = st.characters(codec="utf-8", exclude_characters=None if nul else "\x00")
    return st.lists(st.one_of(chars, SPECIAL), max_size=12).map("".join)


def string_ids(*, nul: bool) -> st.SearchStrategy[str]:
    """Ids that are not empty after stripping white space."""
    return text(nul=nul).filter(lambda s: s.strip() != "")


@st.composite
def frames(draw: st.DrawFn, id_kind: str, *, nul: bool = True, csv_safe_ids: bool = False) -> Any:
    """A frame with an id column, a text column, a float column with nulls and an int column."""
    n = draw(st.integers(min_value=1, max_value=12))
    if id_kind == "int":
        ids: list[Any] = draw(st.lists(INT64, min_size=n, max_size=n, unique=True))
        id_dtype: Any = pl.Int64
    else:
        strategy = string_ids(nul=nul)
        if csv_safe_ids:  # a leading letter: never read back as a number or a boolean
            strategy = strategy.map(lambda s: "k" + s)
        ids = draw(st.lists(strategy, min_size=n, max_size=n, unique=True))
        id_dtype = pl.String
    floats = draw(st.lists(st.none() | FINITE, min_size=n, max_size=n))
    # at least one value, or JSON could not tell the column is a float column
    floats[draw(st.integers(0, n - 1))] = draw(FINITE)
    return pl.DataFrame(
        {
            "id": pl.Series(ids, dtype=id_dtype),
            "text": pl.Series(draw(st.lists(text(nul=nul), min_size=n, max_size=n))),
            "score": pl.Series(floats, dtype=pl.Float64),
            "count": pl.Series(draw(st.lists(INT64, min_size=n, max_size=n)), dtype=pl.Int64),
        }
    )


def round_trip(frame: pl.DataFrame, suffix: str, write: Callable[[Path], None], load: Any) -> Any:
    note(f"rows: {frame.to_dicts()!r}")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"data{suffix}"
        write(path)
        return load(path)


def assert_same_frame(loaded: EvalData, frame: pl.DataFrame) -> None:
    assert loaded.id_column == "id"
    assert loaded.data.schema == frame.schema
    assert loaded.data.equals(frame, null_equal=True)
    assert loaded == EvalData("p", frame, "id")


# --- round trips through files -----------------------------------------------------------


@pytest.mark.parametrize("id_kind", ["int", "str"])
@SETTINGS
@given(data=st.data())
def test_json_records_round_trip(id_kind: str, data: st.DataObject) -> None:
    frame = data.draw(frames(id_kind))
    loaded = round_trip(
        frame, ".json", frame.write_json, lambda p: DataLoader.load_json("p", p, "id")
    )
    assert_same_frame(loaded, frame)


@pytest.mark.parametrize("id_kind", ["int", "str"])
@SETTINGS
@given(data=st.data())
def test_json_lines_round_trip(id_kind: str, data: st.DataObject) -> None:
    frame = data.draw(frames(id_kind))
    loaded = round_trip(
        frame, ".jsonl", frame.write_ndjson, lambda p: DataLoader.load_jsonl("p", p, "id")
    )
    assert_same_frame(loaded, frame)


@pytest.mark.parametrize("id_kind", ["int", "str"])
@SETTINGS
@given(data=st.data())
def test_parquet_round_trip(id_kind: str, data: st.DataObject) -> None:
    frame = data.draw(frames(id_kind))
    loaded = round_trip(
        frame, ".parquet", frame.write_parquet, lambda p: DataLoader.load_parquet("p", p, "id")
    )
    assert_same_frame(loaded, frame)


@pytest.mark.parametrize("id_kind", ["int", "str"])
@SETTINGS
@given(data=st.data())
def test_csv_round_trip_keeps_ids(id_kind: str, data: st.DataObject) -> None:
    frame = data.draw(frames(id_kind, nul=False, csv_safe_ids=True))
    loaded = round_trip(frame, ".csv", frame.write_csv, lambda p: DataLoader.load_csv("p", p, "id"))
    assert loaded.id_column == "id"
    assert loaded.columns == frame.columns
    assert len(loaded) == frame.height
    assert loaded.ids.dtype == frame.schema["id"]
    assert loaded.ids.to_list() == frame.get_column("id").to_list()


@SETTINGS
@given(data=st.data())
def test_csv_round_trip_keeps_any_string_ids_with_schema_overrides(data: st.DataObject) -> None:
    frame = data.draw(frames("str", nul=False))
    loaded = round_trip(
        frame,
        ".csv",
        frame.write_csv,
        lambda p: DataLoader.load_csv("p", p, "id", schema_overrides={"id": pl.String}),
    )
    assert loaded.ids.dtype == pl.String
    assert loaded.ids.to_list() == frame.get_column("id").to_list()


@SETTINGS
@given(ids=st.lists(st.integers(0, 10**6), min_size=1, max_size=12, unique=True))
def test_csv_numeric_looking_string_ids_become_integers(ids: list[int]) -> None:
    frame = pl.DataFrame({"id": [str(i) for i in ids], "text": ["x"] * len(ids)})
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "data.csv"
        frame.write_csv(path)
        inferred = DataLoader.load_csv("p", path, "id")
        kept = DataLoader.load_csv("p", path, "id", schema_overrides={"id": pl.String})
    assert inferred.ids.dtype == pl.Int64
    assert inferred.ids.to_list() == ids
    assert kept.ids.dtype == pl.String
    assert kept.ids.to_list() == [str(i) for i in ids]


# --- id rules ----------------------------------------------------------------------------

# Python's str.strip also strips the ASCII separators U+001C..U+001F, which are not Unicode
# white space; leave them out so "empty after stripping" means the same to both sides.
ID_CHARS = st.characters(codec="utf-8", exclude_characters="\x1c\x1d\x1e\x1f")
INT_ID = st.none() | st.integers(-3, 3) | INT64
STR_ID = (
    st.none()
    | st.sampled_from(["", " ", "\t\n", "\u3000", "a", " a", "A"])
    | st.text(ID_CHARS, max_size=3)
)


@SETTINGS
@given(kind=st.sampled_from(["int", "str"]), data=st.data())
def test_id_rules(kind: str, data: st.DataObject) -> None:
    ids = data.draw(st.lists(INT_ID if kind == "int" else STR_ID, min_size=1, max_size=10))
    dtype = pl.Int64 if kind == "int" else pl.String
    frame = pl.DataFrame({"id": pl.Series(ids, dtype=dtype), "row": range(len(ids))})

    null_rows = [i for i, v in enumerate(ids) if v is None]
    empty_rows = [i for i, v in enumerate(ids) if isinstance(v, str) and not v.strip()]
    counts = Counter(v for v in ids if v is not None)
    repeated = [v for v, c in counts.items() if c > 1]
    valid = not null_rows and not empty_rows and not repeated

    if valid:
        loaded = EvalData("p", frame, "id")
        assert loaded.ids.dtype == dtype
        assert loaded.ids.to_list() == ids
        return
    with pytest.raises(IdError) as info:
        EvalData("p", frame, "id")
    message = str(info.value)
    offending = [*null_rows, *empty_rows, *repeated]
    assert any(repr(x) in message for x in offending), (message, offending)
    assert info.value.row_id in offending
    assert info.value.column == "id"


# --- auto ids ----------------------------------------------------------------------------


@SETTINGS
@given(
    rows=st.integers(1, 300),
    columns=st.lists(
        st.text(min_size=1, max_size=5).filter(lambda c: c.strip() and c != "id"),
        min_size=1,
        max_size=4,
        unique=True,
    ),
)
def test_auto_ids(rows: int, columns: list[str]) -> None:
    frame = pl.DataFrame({c: [f"{c}{i}" for i in range(rows)] for c in columns})
    loaded = EvalData("p", frame)
    assert loaded.id_column == "id"
    assert loaded.columns == ["id", *columns]
    assert loaded.ids.dtype == pl.String
    assert loaded.ids.to_list() == [f"id-{i}" for i in range(1, rows + 1)]
    assert loaded.data.drop("id").equals(frame)


# --- stratified sampling -----------------------------------------------------------------


@SETTINGS
@given(
    strata=st.lists(
        st.tuples(st.none() | st.sampled_from(["a", "b", "c"]), st.none() | st.integers(0, 2)),
        min_size=1,
        max_size=60,
    ),
    by=st.sampled_from([["g"], ["h"], ["g", "h"], ["h", "g"]]),
    fraction=st.floats(min_value=0, max_value=1, exclude_min=True),
    seed=st.integers(0, 2**64),
)
def test_stratified_sample(
    strata: list[tuple[str | None, int | None]], by: list[str], fraction: float, seed: int
) -> None:
    frame = pl.DataFrame(
        {
            "rid": [f"r{i:03d}" for i in range(len(strata))],
            "g": pl.Series([g for g, _ in strata], dtype=pl.String),
            "h": pl.Series([h for _, h in strata], dtype=pl.Int64),
        }
    )
    source = EvalData("p", frame, "rid")
    sample = source.stratified_sample_by_columns(by, fraction, seed=seed)

    def key(row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(row[c] for c in by)

    sizes = Counter(key(r) for r in frame.iter_rows(named=True))
    kept = Counter(key(r) for r in sample.data.iter_rows(named=True))
    assert set(kept) == set(sizes)  # every stratum survives
    for stratum, size in sizes.items():
        assert kept[stratum] == max(1, math.floor(round(size * fraction, 9) + 0.5)), stratum

    original_ids = frame.get_column("rid").to_list()
    sample_ids = sample.ids.to_list()
    assert set(sample_ids) <= set(original_ids)
    assert sample_ids == sorted(sample_ids)  # original relative order (ids sort like rows)
    assert sample.data.equals(frame.filter(pl.col("rid").is_in(sample_ids)))

    again = source.stratified_sample_by_columns(by, fraction, seed=seed)
    assert again == sample
    assert again.ids.to_list() == sample_ids
    assert isinstance(sample, SampleEvalData)
    assert sample.original_size == len(strata)
    assert sample.sampling_info["sampled_size"] == len(sample)


# --- safe names --------------------------------------------------------------------------

NAME_PARTS = st.sampled_from(
    ["a", "Z", "0", "9", ".", "..", "_", "-", "/", "\\", "\x00", " ", ":", "é", "\n", "CON", "nul"]
)
NAMES = st.one_of(
    st.lists(NAME_PARTS, max_size=8).map("".join),
    st.text(max_size=12),
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,20}", fullmatch=True),
    st.sampled_from(["..", ".", "./x", "../x", "a/../b", ".git", "x" * 128, "x" * 129]),
)


@settings(max_examples=300, deadline=None)
@given(name=NAMES)
def test_check_safe_name(name: str) -> None:
    try:
        result = check_safe_name(name, field="judge_id")
    except UnsafeNameError as exc:
        assert "judge_id" in str(exc)
        accepted = False
    else:
        accepted = True
        assert result == name

    if "/" in name or "\\" in name or "\x00" in name or name == ".." or name.startswith("."):
        assert not accepted
    if accepted:
        assert Path(name).name == name
        assert len(Path(name).parts) == 1
        assert PurePosixPath(name).name == name
        assert PureWindowsPath(name).name == name
        assert len(PureWindowsPath(name).parts) == 1
        assert name not in (".", "..")
        assert 1 <= len(name) <= 128


@settings(max_examples=100, deadline=None)
@given(name=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,60}[A-Za-z0-9_-]", fullmatch=True))
def test_check_safe_name_accepts_documented_names(name: str) -> None:
    reserved = {"CON", "PRN", "AUX", "NUL"} | {
        f"{p}{i}" for p in ("COM", "LPT") for i in range(1, 10)
    }
    if name.split(".")[0].upper() in reserved:
        with pytest.raises(UnsafeNameError):
            check_safe_name(name, field="judge_id")
    else:
        assert check_safe_name(name, field="judge_id") == name
