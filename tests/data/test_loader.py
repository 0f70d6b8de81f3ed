"""Unit tests of DataLoader: every format, with and without an id column."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from meta_evaluator.data import DataLoader, EvalData
from meta_evaluator.errors import ColumnError, DataError, DataFileError, IdError

ROWS = [
    {"qid": 10, "text": "hello, world", "label": "yes"},
    {"qid": 3, "text": 'say "hi"', "label": "no"},
    {"qid": 7, "text": "é ✓ 日本", "label": "yes"},
]


def expected_frame() -> pl.DataFrame:
    return pl.DataFrame(ROWS, schema={"qid": pl.Int64, "text": pl.String, "label": pl.String})


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def csv_file(tmp_path: Path, name: str = "data.csv") -> Path:
    return write(
        tmp_path / name,
        'qid,text,label\n10,"hello, world",yes\n3,"say ""hi""",no\n7,é ✓ 日本,yes\n',
    )


def json_file(tmp_path: Path, name: str = "data.json") -> Path:
    return write(tmp_path / name, json.dumps(ROWS, ensure_ascii=False))


def jsonl_file(tmp_path: Path, name: str = "data.jsonl") -> Path:
    return write(tmp_path / name, "".join(json.dumps(r) + "\n" for r in ROWS))


def parquet_file(tmp_path: Path, name: str = "data.parquet") -> Path:
    path = tmp_path / name
    expected_frame().write_parquet(path)
    return path


MAKERS = {
    "csv": (DataLoader.load_csv, csv_file),
    "json": (DataLoader.load_json, json_file),
    "jsonl": (DataLoader.load_jsonl, jsonl_file),
    "parquet": (DataLoader.load_parquet, parquet_file),
}


# --- every loader ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_loader_with_integer_id_column(tmp_path: Path, kind: str) -> None:
    loader, make = MAKERS[kind]
    path = make(tmp_path)
    data = loader("demo", path, "qid")
    assert isinstance(data, EvalData)
    assert data.name == "demo"
    assert data.id_column == "qid"
    assert data.ids.dtype == pl.Int64
    assert data.ids.to_list() == [10, 3, 7]
    assert data.columns == ["qid", "text", "label"]
    assert data.data.equals(expected_frame())
    assert data.data.schema == expected_frame().schema
    assert data.source == str(path)
    assert len(data) == 3


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_loader_with_string_id_column(tmp_path: Path, kind: str) -> None:
    loader, make = MAKERS[kind]
    # the "text" values are unique strings: use them as ids
    data = loader("demo", make(tmp_path), "text")
    assert data.id_column == "text"
    assert data.ids.dtype == pl.String
    assert data.ids.to_list() == ["hello, world", 'say "hi"', "é ✓ 日本"]
    assert data.data.equals(expected_frame())


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_loader_without_id_column_assigns_ids(tmp_path: Path, kind: str) -> None:
    loader, make = MAKERS[kind]
    data = loader("demo", make(tmp_path))
    assert data.id_column == "id"
    assert data.columns == ["id", "qid", "text", "label"]
    assert data.ids.dtype == pl.String
    assert data.ids.to_list() == ["id-1", "id-2", "id-3"]
    assert data.data.drop("id").equals(expected_frame())


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_loader_without_id_column_refuses_existing_id_column(tmp_path: Path, kind: str) -> None:
    loader, _ = MAKERS[kind]
    frame = pl.DataFrame({"id": [5, 6], "text": ["a", "b"]})
    path = tmp_path / f"with_id.{kind}"
    {
        "csv": frame.write_csv,
        "json": frame.write_json,
        "jsonl": frame.write_ndjson,
        "parquet": frame.write_parquet,
    }[kind](path)
    with pytest.raises(ColumnError, match="'id'") as info:
        loader("demo", path)
    assert info.value.column == "id"
    data = loader("demo", path, "id")
    assert data.ids.to_list() == [5, 6]
    assert data.ids.dtype == pl.Int64


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_loader_reports_missing_id_column(tmp_path: Path, kind: str) -> None:
    loader, make = MAKERS[kind]
    with pytest.raises(ColumnError, match="'qidd'") as info:
        loader("demo", make(tmp_path), "qidd")
    assert "Did you mean 'qid'?" in str(info.value)


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_loader_refuses_missing_file(tmp_path: Path, kind: str) -> None:
    loader, _ = MAKERS[kind]
    path = tmp_path / f"missing.{kind}"
    with pytest.raises(DataFileError) as info:
        loader("demo", path)
    assert info.value.path == path
    assert str(path) in str(info.value)


# --- JSON --------------------------------------------------------------------------------


def test_json_columns_format(tmp_path: Path) -> None:
    path = write(
        tmp_path / "cols.json",
        json.dumps(
            {"qid": [10, 3, 7], "text": [r["text"] for r in ROWS], "label": ["yes", "no", "yes"]}
        ),
    )
    data = DataLoader.load_json("demo", path, "qid")
    assert data.data.equals(expected_frame())
    assert data.data.schema == expected_frame().schema


def test_json_columns_format_with_string_ids_and_floats(tmp_path: Path) -> None:
    path = write(
        tmp_path / "cols.json", '{"qid": ["007", "008"], "score": [1, 2.5], "x": [null, 1]}'
    )
    data = DataLoader.load_json("demo", path, "qid")
    assert data.ids.to_list() == ["007", "008"]
    assert data.ids.dtype == pl.String
    assert data.data.get_column("score").to_list() == [1.0, 2.5]
    assert data.data.get_column("x").to_list() == [None, 1]


def test_json_columns_format_without_ids(tmp_path: Path) -> None:
    path = write(tmp_path / "cols.json", '{"text": ["a", "b"]}')
    data = DataLoader.load_json("demo", path)
    assert data.data.to_dicts() == [{"id": "id-1", "text": "a"}, {"id": "id-2", "text": "b"}]


def test_json_records_with_missing_keys_are_null(tmp_path: Path) -> None:
    path = write(tmp_path / "r.json", '[{"qid": 1, "a": "x"}, {"qid": 2, "b": 2.5}]')
    data = DataLoader.load_json("demo", path, "qid")
    assert data.data.to_dicts() == [
        {"qid": 1, "a": "x", "b": None},
        {"qid": 2, "a": None, "b": 2.5},
    ]


def test_json_mixed_id_types_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "r.json", '[{"qid": 1}, {"qid": "1"}]')
    with pytest.raises(IdError, match="mixes types"):
        DataLoader.load_json("demo", path, "qid")


def test_json_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(ROWS).encode())
    assert DataLoader.load_json("demo", path, "qid").data.equals(expected_frame())


# --- JSON Lines --------------------------------------------------------------------------


def test_jsonl_skips_blank_lines(tmp_path: Path) -> None:
    lines = [json.dumps(r) for r in ROWS]
    path = write(
        tmp_path / "blank.jsonl",
        "\n" + lines[0] + "\n\n   \n" + lines[1] + "\n\t\n" + lines[2] + "\n\n",
    )
    data = DataLoader.load_jsonl("demo", path, "qid")
    assert data.data.equals(expected_frame())


def test_jsonl_with_crlf_and_no_final_newline(tmp_path: Path) -> None:
    path = write(tmp_path / "crlf.jsonl", "\r\n".join(json.dumps(r) for r in ROWS))
    data = DataLoader.load_jsonl("demo", path, "qid")
    assert data.data.equals(expected_frame())


def test_jsonl_keeps_unicode_line_separators_inside_strings(tmp_path: Path) -> None:
    # JSON allows U+2028, U+2029 and U+0085 unescaped inside strings; only "\n" ends a line.
    texts = ["a\u2028b", "c\u2029d", "e\x85f"]
    path = write(
        tmp_path / "seps.jsonl",
        "".join(
            json.dumps({"qid": i, "text": t}, ensure_ascii=False) + "\n"
            for i, t in enumerate(texts)
        ),
    )
    data = DataLoader.load_jsonl("demo", path, "qid")
    assert data.data.get_column("text").to_list() == texts


def test_jsonl_reports_the_bad_line_number(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.jsonl", '{"qid": 1}\n\n{"qid": 2\n')
    with pytest.raises(DataFileError, match="line 3") as info:
        DataLoader.load_jsonl("demo", path, "qid")
    assert info.value.row_id == 3


# --- CSV ---------------------------------------------------------------------------------


def test_csv_with_utf8_bom(tmp_path: Path) -> None:
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + csv_file(tmp_path).read_bytes())
    data = DataLoader.load_csv("demo", path, "qid")
    assert data.columns == ["qid", "text", "label"]
    assert data.data.equals(expected_frame())


def test_csv_with_utf8_bom_and_no_id_column(tmp_path: Path) -> None:
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbftext,n\na,1\nb,2\n")
    data = DataLoader.load_csv("demo", path)
    assert data.columns == ["id", "text", "n"]


@pytest.mark.parametrize("separator", [";", "\t", "|"])
def test_csv_with_custom_separator(tmp_path: Path, separator: str) -> None:
    path = tmp_path / "sep.csv"
    expected_frame().write_csv(path, separator=separator)
    data = DataLoader.load_csv("demo", path, "qid", separator=separator)
    assert data.data.equals(expected_frame())
    assert data.data.schema == expected_frame().schema


def test_csv_with_semicolons_read_with_default_separator_is_one_column(tmp_path: Path) -> None:
    path = write(tmp_path / "semi.csv", "qid;text\n1;a\n2;b\n")
    data = DataLoader.load_csv("demo", path)
    assert data.columns == ["id", "qid;text"]


def test_csv_schema_overrides_keep_leading_zeros(tmp_path: Path) -> None:
    path = write(tmp_path / "zeros.csv", "qid,text\n007,a\n008,b\n010,c\n")
    kept = DataLoader.load_csv("demo", path, "qid", schema_overrides={"qid": pl.String})
    assert kept.ids.dtype == pl.String
    assert kept.ids.to_list() == ["007", "008", "010"]
    inferred = DataLoader.load_csv("demo", path, "qid")
    assert inferred.ids.dtype == pl.Int64
    assert inferred.ids.to_list() == [7, 8, 10]


def test_csv_schema_overrides_with_dtype_instance(tmp_path: Path) -> None:
    path = write(tmp_path / "x.csv", "qid,score\n1,2\n2,3\n")
    data = DataLoader.load_csv("demo", path, "qid", schema_overrides={"score": pl.Float64()})
    assert data.data.schema == pl.Schema({"qid": pl.Int64, "score": pl.Float64})


def test_csv_infers_types_from_every_row(tmp_path: Path) -> None:
    rows = "".join(f"{i},{i}\n" for i in range(1, 2001)) + "2001,x\n"
    path = write(tmp_path / "late.csv", "qid,value\n" + rows)
    data = DataLoader.load_csv("demo", path, "qid")
    assert data.data.schema["value"] == pl.String
    assert len(data) == 2001


def test_csv_with_crlf_line_endings(tmp_path: Path) -> None:
    path = write(tmp_path / "crlf.csv", "qid,text\r\n1,a\r\n2,b\r\n")
    data = DataLoader.load_csv("demo", path, "qid")
    assert data.data.to_dicts() == [{"qid": 1, "text": "a"}, {"qid": 2, "text": "b"}]


def test_csv_refuses_duplicate_ids(tmp_path: Path) -> None:
    path = write(tmp_path / "dup.csv", "qid,text\n1,a\n2,b\n1,c\n")
    with pytest.raises(IdError) as info:
        DataLoader.load_csv("demo", path, "qid")
    assert info.value.row_id == 1
    assert str(path) in str(info.value)


def test_csv_refuses_json_content(tmp_path: Path) -> None:
    path = json_file(tmp_path, "really.csv")
    with pytest.raises(DataFileError, match="load_json"):
        DataLoader.load_csv("demo", path, "qid")


# --- in-memory frames --------------------------------------------------------------------


def test_load_from_dataframe() -> None:
    frame = expected_frame()
    data = DataLoader.load_from_dataframe("demo", frame, "qid")
    assert data.data.equals(frame)
    assert data.source is None


def test_load_from_lazyframe() -> None:
    lazy = expected_frame().lazy().filter(pl.col("label") == "yes")
    data = DataLoader.load_from_dataframe("demo", lazy, "qid")
    assert isinstance(data, EvalData)
    assert data.ids.to_list() == [10, 7]
    assert data.data.schema == expected_frame().schema


def test_load_from_lazyframe_without_ids() -> None:
    data = DataLoader.load_from_dataframe("demo", pl.LazyFrame({"t": ["a", "b", "c"]}))
    assert data.ids.to_list() == ["id-1", "id-2", "id-3"]


def test_load_from_dataframe_refuses_non_polars() -> None:
    with pytest.raises(DataError, match="polars"):
        DataLoader.load_from_dataframe("demo", {"qid": [1, 2]}, "qid")  # type: ignore[arg-type]


# --- dispatch by extension ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("suffix", "make"),
    [
        (".csv", csv_file),
        (".CSV", csv_file),
        (".json", json_file),
        (".jsonl", jsonl_file),
        (".ndjson", jsonl_file),
        (".parquet", parquet_file),
        (".pq", parquet_file),
    ],
)
def test_load_dispatches_by_extension(
    tmp_path: Path, suffix: str, make: Callable[[Path, str], Path]
) -> None:
    path = make(tmp_path, f"data{suffix}")
    data = DataLoader.load("demo", path, "qid")
    assert data.data.equals(expected_frame())
    assert data.data.schema == expected_frame().schema
    assert data.source == str(path)


def test_load_dispatch_passes_no_id_column(tmp_path: Path) -> None:
    data = DataLoader.load("demo", str(jsonl_file(tmp_path)))
    assert data.ids.to_list() == ["id-1", "id-2", "id-3"]


def test_load_dispatch_uses_the_extension_not_the_content(tmp_path: Path) -> None:
    # a JSON Lines file named .json is read by load_json, which says it looks like JSON Lines
    path = jsonl_file(tmp_path, "lines.json")
    with pytest.raises(DataFileError, match="load_jsonl"):
        DataLoader.load("demo", path, "qid")


@pytest.mark.parametrize("name", ["data.txt", "data", "data.csv.gz", "data.xlsx"])
def test_load_refuses_unknown_extension(tmp_path: Path, name: str) -> None:
    path = write(tmp_path / name, "qid\n1\n")
    with pytest.raises(DataFileError, match="extension") as info:
        DataLoader.load("demo", path)
    assert info.value.path == path


# ----- edge cases found in review --------------------------------------------------------------


def test_csv_blank_lines_are_skipped_not_read_as_null_rows(tmp_path: Path) -> None:
    path = write(tmp_path / "b.csv", 'text,x\na,1\n\nb,2\n"multi\n\nline",3\n\n\n')
    data = DataLoader.load_csv("d", path)
    assert data.data.select("text", "x").rows() == [("a", 1), ("b", 2), ("multi\n\nline", 3)]
    assert data.ids.to_list() == ["id-1", "id-2", "id-3"]


def test_csv_header_with_escaped_quotes_keeps_the_real_name(tmp_path: Path) -> None:
    path = write(tmp_path / "q.csv", 'id,"say ""hi"""\n1,x\n')
    assert DataLoader.load_csv("d", path, "id").columns == ["id", 'say "hi"']


def test_csv_with_a_very_long_field(tmp_path: Path) -> None:
    long = "word " * 50_000  # 250,000 characters, past the csv module's default limit
    path = write(tmp_path / "long.csv", f"id,response\n1,{long}\n")
    assert DataLoader.load_csv("d", path, "id").data["response"][0] == long


def test_csv_with_bare_carriage_returns_is_a_clear_error(tmp_path: Path) -> None:
    path = write(tmp_path / "cr.csv", "id,x\r1,a\r2,b\r")
    with pytest.raises(DataFileError, match=r"cr\.csv: line \d+ is not valid CSV"):
        DataLoader.load_csv("d", path, "id")


@pytest.mark.parametrize("separator", ["", ";;", '"', "\n"])
def test_bad_separator(tmp_path: Path, separator: str) -> None:
    path = write(tmp_path / "s.csv", "id,x\n1,a\n")
    with pytest.raises(DataError, match="separator") as caught:
        DataLoader.load_csv("d", path, "id", separator=separator)
    assert caught.value.field == "separator"


@pytest.mark.parametrize("id_column", [["id"], 0, ("id",)])
def test_id_column_must_be_a_name(tmp_path: Path, id_column: object) -> None:
    path = write(tmp_path / "r.json", '[{"id": 1}]')
    with pytest.raises(DataError, match="id_column") as caught:
        DataLoader.load_json("d", path, id_column)  # type: ignore[arg-type]
    assert caught.value.field == "id_column"


def test_json_integer_too_big_for_any_column_type(tmp_path: Path) -> None:
    path = write(tmp_path / "big.json", '[{"id": 1, "n": ' + "9" * 50 + "}]")
    with pytest.raises(DataFileError, match=r"big\.json"):
        DataLoader.load_json("d", path, "id")


def test_json_nested_too_deeply(tmp_path: Path) -> None:
    path = write(tmp_path / "deep.json", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(DataFileError, match="too deeply"):
        DataLoader.load_json("d", path)


def test_object_columns_are_refused() -> None:
    frame = pl.DataFrame({"x": [object(), object()]}, schema={"x": pl.Object})
    with pytest.raises(ColumnError, match="Python objects") as caught:
        DataLoader.load_from_dataframe("d", frame)
    assert caught.value.column == "x"


def test_load_from_dataframe_accepts_data_as_in_the_original_docs() -> None:
    frame = pl.DataFrame({"text": ["a", "b"]})
    assert DataLoader.load_from_dataframe(name="d", data=frame, id_column=None).ids.to_list() == [
        "id-1",
        "id-2",
    ]
    with pytest.raises(DataError, match="exactly once"):
        DataLoader.load_from_dataframe("d", frame, data=frame)


def test_csv_type_that_changes_after_the_first_thousand_rows(tmp_path: Path) -> None:
    lines = ["id,x", *(f"{i},{i}" for i in range(1500)), "1500,2.5"]
    path = write(tmp_path / "late.csv", "\n".join(lines) + "\n")
    data = DataLoader.load_csv("d", path, "id")
    assert data.data.schema["x"] == pl.Float64
    assert data.data["x"][-1] == 2.5


@pytest.mark.parametrize("bad_line", ['{"id": 2}, {"id": 3}', '{"id": 2} {"id": 3}', '{"id": 2},'])
def test_jsonl_line_holding_more_than_one_value(tmp_path: Path, bad_line: str) -> None:
    path = write(tmp_path / "two.jsonl", '{"id": 1}\n' + bad_line + '\n{"id": 4}\n')
    with pytest.raises(DataFileError, match=r"two\.jsonl: line 2") as caught:
        DataLoader.load_jsonl("d", path, "id")
    assert caught.value.row_id == 2
