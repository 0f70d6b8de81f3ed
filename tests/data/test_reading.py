"""`meta_evaluator.data.reading`: one wording for every failure of reading a table."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from meta_evaluator.data.reading import first_line, read_errors, read_parquet_snapshot
from meta_evaluator.errors import DataFileError, StorageError


def test_read_errors_names_file_problem_cause_and_advice(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    cause = pl.exceptions.ComputeError("bad row 3\n\nResolved plan: ...")
    with (
        pytest.raises(DataFileError) as info,
        read_errors(path, "cannot be read as CSV", "check quoting."),
    ):
        raise cause
    assert info.value.message == f"{path}: cannot be read as CSV (bad row 3); check quoting."
    assert info.value.path == path
    assert info.value.__cause__ is cause


def test_read_errors_without_advice_ends_after_the_cause(tmp_path: Path) -> None:
    with (
        pytest.raises(DataFileError, match=r"cannot form a table \(TypeError\)\.$"),
        read_errors(tmp_path / "x.json", "the columns cannot form a table", catch=(TypeError,)),
    ):
        raise TypeError()


def test_read_errors_lets_other_exceptions_through(tmp_path: Path) -> None:
    with (
        pytest.raises(KeyError),
        read_errors(tmp_path / "x.parquet", "cannot be read as Parquet"),
    ):
        raise KeyError("a bug of ours stays a bug")


def test_first_line() -> None:
    assert first_line(ValueError("  one\ntwo ")) == "one"
    assert first_line(ValueError()) == "ValueError"


def test_parquet_snapshot_reads_and_refuses(tmp_path: Path) -> None:
    table = tmp_path / "t.parquet"
    pl.DataFrame({"a": [1, 2]}).write_parquet(table)
    assert read_parquet_snapshot(table, advice="restore it.").to_dict(as_series=False) == {
        "a": [1, 2]
    }
    text = tmp_path / "t.csv"
    text.write_text("a\n1\n")
    with pytest.raises(StorageError, match=r"t\.csv: is not a readable Parquet table \(.*\); "):
        read_parquet_snapshot(text, advice="restore it.", error=StorageError)
    with pytest.raises(StorageError, match=r"missing\.parquet"):
        read_parquet_snapshot(tmp_path / "missing.parquet", advice="restore it.")
