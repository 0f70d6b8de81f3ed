"""DataLoader: read evaluation data from CSV, JSON, JSON Lines, Parquet or a polars frame.

Each loader checks that the file exists, is a file, is not empty and holds its format, and turns
every parsing failure into a `DataFileError` naming the file (and the line, where known).
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import polars as pl

from meta_evaluator._util import repeated, shown
from meta_evaluator.data.checks import check_single_type, list_some
from meta_evaluator.data.eval_data import EvalData
from meta_evaluator.data.reading import read_errors
from meta_evaluator.errors import ColumnError, DataError, DataFileError
from meta_evaluator.storage import check_lfs_pointer

__all__ = ["FORMAT_OF_EXTENSION", "DataLoader", "FileFormat", "load_as"]

FileFormat = Literal["csv", "json", "jsonl", "parquet"]
"""A data file's format, as `project.yaml`'s `format:` and the imports' `data_format` name it."""

FORMAT_OF_EXTENSION: dict[str, FileFormat] = {
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}
"""The format a file's extension stands for (`DataLoader.load` reads files by it)."""

_PARQUET_MAGIC = b"PAR1"
_SNIFF_BYTES = 8192
# What polars raises when records or columns cannot form a frame (mixed types, huge integers).
_BUILD = (pl.exceptions.PolarsError, TypeError, ValueError, OverflowError)


class DataLoader:
    """Load evaluation data into an `EvalData`, validating it on the way in.

    Example:
        >>> import polars as pl
        >>> data = DataLoader.load_from_dataframe("tiny", pl.DataFrame({"text": ["a", "b"]}))
        >>> data.ids.to_list()
        ['id-1', 'id-2']
    """

    @staticmethod
    def load_csv(
        name: str,
        file_path: str | Path,
        id_column: str | None = None,
        *,
        separator: str = ",",
        schema_overrides: Mapping[str, pl.DataType | type[pl.DataType]] | None = None,
    ) -> EvalData:
        """Load a UTF-8 CSV file with a header row; column types are inferred from every row.

        Args:
            name: The data set's name.
            file_path: The CSV file.
            id_column: The column of unique ids; `None` assigns `id-1 … id-N`.
            separator: The field separator (one character).
            schema_overrides: Column types to use instead of the inferred ones
                (for example `{"qid": pl.String}` to keep `007` as text).

        Raises:
            DataFileError: The file is missing, a folder, empty, binary, JSON, not UTF-8, or
                has rows with more fields than the header.
            ColumnError: The header is empty or repeats a name.
            IdError: See `EvalData`.
        """
        _check_arguments(id_column, separator, source=file_path)
        path = _check_file(file_path)
        raw = _read_bytes(path)
        head = raw[:_SNIFF_BYTES]
        if b"\x00" in head or head.startswith(_PARQUET_MAGIC):
            raise DataFileError(
                f"{path}: is a binary file, not CSV text; use DataLoader.load_parquet for "
                "Parquet files.",
                path=path,
            )
        text = _decode(raw, path)
        if _looks_like_json(text):
            raise DataFileError(
                f"{path}: holds JSON, not CSV; use DataLoader.load_json (or load_jsonl).",
                path=path,
            )
        if "\r" in text and "\n" not in text:
            raise DataFileError(
                f"{path}: line 1 is not valid CSV: its lines end in bare carriage returns (old "
                "Mac style); save the file with \\n or \\r\\n line endings.",
                path=path,
                row_id=1,
            )
        header, blank_rows = _check_csv_shape(text, path, separator)
        with read_errors(
            path,
            "cannot be read as CSV",
            "check quoting and that every row has as many fields as the header.",
            catch=(pl.exceptions.PolarsError, ValueError, OverflowError),
        ):
            try:  # types inferred from the first rows; a later row that disagrees raises, and
                # the file is read again with types inferred from every row.
                frame = _read_csv(raw, separator, schema_overrides, infer_rows=1000)
            except pl.exceptions.ComputeError:
                frame = _read_csv(raw, separator, schema_overrides, infer_rows=None)
        if blank_rows:  # polars reads a blank line as a row of nulls; skip them, as pandas does
            frame = frame.with_row_index("__row").filter(~pl.col("__row").is_in(blank_rows))
            frame = frame.drop("__row")
        if frame.columns != header:
            if len(header) != frame.width:
                raise DataFileError(
                    f"{path}: the header reads as {len(header)} or {frame.width} columns "
                    "depending on the parser; check its quoting and line endings.",
                    path=path,
                    row_id=1,
                )
            # polars keeps the escaping of quoted header names ('say ""hi""'); csv undoes it.
            frame = frame.rename(dict(zip(frame.columns, header, strict=True)))
        return _to_eval_data(name, frame, id_column, path)

    @staticmethod
    def load_json(name: str, file_path: str | Path, id_column: str | None = None) -> EvalData:
        """Load a JSON file of records, or of columns.

        Records: `[{"id": 1, ...}, ...]`; columns: `{"id": [1, 2], "text": ["a", "b"]}`.
        A column mixing numbers and strings becomes a string column (`5` reads as `"5"`),
        except the id column, where `1` and `"1"` are different ids and mixing them is an error.

        Raises:
            DataFileError: The file is missing, a folder, empty, not UTF-8, malformed JSON, or
                neither records nor columns.
            IdError: The id column mixes types (`1` and `"1"`), or see `EvalData`.
        """
        _check_arguments(id_column, source=file_path)
        path = _check_file(file_path)
        text = _decode(_read_bytes(path), path)
        try:
            content = json.loads(text)
        except RecursionError as exc:
            raise DataFileError(
                f"{path}: nests JSON too deeply to read; flatten the records.", path=path
            ) from exc
        except json.JSONDecodeError as exc:
            raise DataFileError(
                f"{path}: not valid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})"
                f"{_jsonl_hint(text)}.",
                path=path,
            ) from exc
        if isinstance(content, list):
            return _from_records(name, content, id_column, path, line_of=None)
        if isinstance(content, dict):
            return _from_columns(name, content, id_column, path)
        raise DataFileError(
            f"{path}: holds a JSON {type(content).__name__}; expected a list of records or an "
            "object mapping column names to lists.",
            path=path,
        )

    @staticmethod
    def load_jsonl(name: str, file_path: str | Path, id_column: str | None = None) -> EvalData:
        """Load a JSON Lines file: one JSON object per line; blank lines are skipped.

        Raises:
            DataFileError: The file is missing, a folder, empty, not UTF-8, or a line is not a
                JSON object (the message gives the line number).
            IdError: The id column mixes types, or see `EvalData`.
        """
        _check_arguments(id_column, source=file_path)
        path = _check_file(file_path)
        text = _decode(_read_bytes(path), path)
        # Split on "\n" only: str.splitlines would also cut at U+2028 and others, which JSON
        # allows unescaped inside strings.
        numbered = [(n, line) for n, line in enumerate(text.split("\n"), 1) if line.strip()]
        line_numbers = [n for n, _ in numbered]
        if not numbered:
            raise DataFileError(f"{path}: has no JSON lines; add one record per line.", path=path)
        try:  # fast path: one parse of all lines as an array; on any doubt, line by line
            records = json.loads("[" + ",".join(line for _, line in numbered) + "]")
            if len(records) == len(numbered):
                return _from_records(name, records, id_column, path, line_of=line_numbers)
        except (json.JSONDecodeError, RecursionError):
            pass
        records = []
        for number, line in numbered:
            try:
                records.append(json.loads(line))
            except RecursionError as exc:
                raise DataFileError(
                    f"{path}: line {number} nests JSON too deeply to read; flatten the record.",
                    path=path,
                    row_id=number,
                ) from exc
            except json.JSONDecodeError as exc:
                raise DataFileError(
                    f"{path}: line {number} is not valid JSON at column {exc.colno} ({exc.msg}); "
                    "JSON Lines needs one complete object per line.",
                    path=path,
                    row_id=number,
                ) from exc
        return _from_records(name, records, id_column, path, line_of=line_numbers)

    @staticmethod
    def load_parquet(name: str, file_path: str | Path, id_column: str | None = None) -> EvalData:
        """Load a Parquet file.

        Raises:
            DataFileError: The file is missing, a folder, empty or not Parquet.
            IdError: See `EvalData`.
        """
        _check_arguments(id_column, source=file_path)
        path = _check_file(file_path)
        with path.open("rb") as handle:
            head = handle.read(len(_PARQUET_MAGIC))
        if head != _PARQUET_MAGIC:
            raise DataFileError(
                f"{path}: is not a Parquet file (it does not start with 'PAR1'); use the "
                "loader for its format (load_csv, load_json, load_jsonl).",
                path=path,
            )
        with read_errors(path, "cannot be read as Parquet", "the file may be truncated."):
            frame = pl.read_parquet(path)
        return _to_eval_data(name, frame, id_column, path)

    @staticmethod
    def load_from_dataframe(
        name_or_frame: str | pl.DataFrame | pl.LazyFrame | None = None,
        df: pl.DataFrame | pl.LazyFrame | str | None = None,
        id_column: str | None = None,
        *,
        name: str | None = None,
        data: pl.DataFrame | pl.LazyFrame | None = None,
    ) -> EvalData:
        """Wrap an in-memory polars frame (a LazyFrame is collected).

        Called `load_from_dataframe(name, df, id_column)`, by keyword (`name=`, `df=`,
        `id_column=`), or frame first as meta-evaluator 0.3.3 took it
        (`load_from_dataframe(frame, name, id_column)`, `data=` for the frame).

        Raises:
            DataError: No name, the frame not given exactly once, or not a polars frame (a
                pandas frame: convert it with `pl.from_pandas`), or see `EvalData`.
        """
        if isinstance(name_or_frame, pl.DataFrame | pl.LazyFrame):  # 0.3.3: the frame first
            if data is not None:
                raise DataError(
                    "load_from_dataframe got the frame twice (first and as data=); give it once.",
                    field="data",
                )
            data, name_or_frame = name_or_frame, None
            if isinstance(df, str) and name is None:  # (frame, name): the name came second
                name, df = df, None
        if name_or_frame is not None and name is not None:
            raise DataError(
                "load_from_dataframe got the name twice (first and as name=); give it once.",
                field="name",
            )
        name = name if name is not None else name_or_frame
        if not isinstance(name, str):
            raise DataError(
                f"load_from_dataframe needs a name (text), got {type(name).__name__}.",
                field="name",
            )
        if (df is None) == (data is None):
            raise DataError(
                "load_from_dataframe needs the frame as df (or data), exactly once.", field="df"
            )
        frame = df if df is not None else data
        _check_arguments(id_column)
        if isinstance(frame, pl.LazyFrame):
            frame = frame.collect()
        return EvalData(name, frame, id_column)  # type: ignore[arg-type]

    @staticmethod
    def load(name: str, file_path: str | Path, id_column: str | None = None) -> EvalData:
        """Load a file with the loader its extension names (.csv, .json, .jsonl/.ndjson, .parquet).

        Raises:
            DataError: `file_path` is no path (`field="file_path"`).
            DataFileError: The extension is none of those, or see the loader it names.
        """
        if not isinstance(file_path, str | Path):
            raise DataError(
                f"file_path must be a str or pathlib.Path, got {type(file_path).__name__}.",
                field="file_path",
            )
        path = Path(file_path)
        suffix = path.suffix.lower()
        if suffix not in FORMAT_OF_EXTENSION:
            raise DataFileError(
                f"{path}: unknown data file extension {suffix or '(none)'!r}; use one of "
                f"{', '.join(sorted(FORMAT_OF_EXTENSION))}, or call the DataLoader.load_* method "
                "for the file's format.",
                path=path,
            )
        return load_as(FORMAT_OF_EXTENSION[suffix], name, path, id_column)


def load_as(
    file_format: FileFormat, name: str, file_path: str | Path, id_column: str | None = None
) -> EvalData:
    """Load a file with the `DataLoader` method of `file_format`, whatever its extension.

    Raises:
        DataError, DataFileError: As the method raises them.
    """
    loader = {
        "csv": DataLoader.load_csv,
        "json": DataLoader.load_json,
        "jsonl": DataLoader.load_jsonl,
        "parquet": DataLoader.load_parquet,
    }[file_format]
    return loader(name, file_path, id_column)


def _check_file(file_path: str | Path) -> Path:
    if not isinstance(file_path, str | Path):
        raise DataError(
            f"file_path must be a str or pathlib.Path, got {type(file_path).__name__}.",
            field="file_path",
        )
    path = Path(file_path)
    if not path.exists():
        raise DataFileError(f"{path}: no such file; check the path.", path=path)
    if path.is_dir():
        raise DataFileError(f"{path}: is a folder, not a data file.", path=path)
    if path.stat().st_size == 0:
        raise DataFileError(f"{path}: is empty; it holds no data.", path=path)
    check_lfs_pointer(path)
    return path


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise DataFileError(f"{path}: cannot be read ({exc.strerror or exc}).", path=path) from exc


def _decode(raw: bytes, path: Path) -> str:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataFileError(
            f"{path}: is not UTF-8 text (invalid byte at offset {exc.start}); save it as UTF-8.",
            path=path,
        ) from exc
    if not text.strip():
        raise DataFileError(f"{path}: holds only white space; it holds no data.", path=path)
    return text


def _looks_like_json(text: str) -> bool:
    stripped = text.lstrip()
    if not stripped or stripped[0] not in "[{":
        return False
    first = stripped.splitlines()[0]
    for candidate in (stripped, first):
        try:
            json.loads(candidate)
        except json.JSONDecodeError:
            continue
        return True
    return False


def _jsonl_hint(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1:
        try:
            json.loads(lines[0])
        except json.JSONDecodeError:
            return ""
        return "; it looks like JSON Lines: use DataLoader.load_jsonl"
    return ""


def _read_csv(
    raw: bytes,
    separator: str,
    schema_overrides: Mapping[str, pl.DataType | type[pl.DataType]] | None,
    *,
    infer_rows: int | None,
) -> pl.DataFrame:
    return pl.read_csv(
        io.BytesIO(raw),
        separator=separator,
        infer_schema_length=infer_rows,
        schema_overrides=schema_overrides,
        encoding="utf8",
    )


def _check_csv_shape(text: str, path: Path, separator: str) -> tuple[list[str], list[int]]:
    """Check the header and every row's width; return the header and the blank rows' indices.

    polars pads short rows with nulls silently, so widths are checked here first, with the
    csv module (its field size limit lifted for the call: LLM responses can be long).
    """
    limit = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=separator)
    try:
        header = next(reader, [])
        _check_header(header, path)
        blank: list[int] = []
        for index, row in enumerate(reader):
            if not row:
                blank.append(index)
            elif len(row) != len(header):
                raise DataFileError(
                    f"{path}: line {reader.line_num} has {len(row)} field(s), but the header has "
                    f"{len(header)}; check the separator and quoting on that line.",
                    path=path,
                    row_id=reader.line_num,
                )
    except csv.Error as exc:
        raise DataFileError(
            f"{path}: line {reader.line_num} is not valid CSV ({exc}); check its quoting, and "
            "save the file with \\n or \\r\\n line endings.",
            path=path,
            row_id=reader.line_num,
        ) from exc
    finally:
        csv.field_size_limit(limit)
    return header, blank


def _check_header(header: list[str], path: Path) -> None:
    for position, column in enumerate(header):
        if not column.strip():
            raise ColumnError(
                f"{path}: column {position + 1} of the header has no name; name every column.",
                path=path,
                column=column,
            )
    twice = repeated(header)
    if twice:
        raise ColumnError(
            f"{path}: the header repeats column name(s) {list_some(twice)}; make them unique.",
            path=path,
            column=twice[0],
        )


def _check_arguments(id_column: object, separator: str = ",", *, source: object = None) -> None:
    prefix = f"{source}: " if isinstance(source, str | Path) else ""
    if id_column is not None and not isinstance(id_column, str):
        raise DataError(
            f"{prefix}id_column must be a column name (str) or None, got {id_column!r}.",
            field="id_column",
        )
    if not isinstance(separator, str) or len(separator) != 1 or separator in '"\r\n':
        raise DataError(
            f"{prefix}separator must be one character other than a quote or a line break, got "
            f"{separator!r}.",
            field="separator",
        )


def _from_records(
    name: str,
    records: list[Any],
    id_column: str | None,
    path: Path,
    *,
    line_of: Sequence[int] | None,
) -> EvalData:
    if not records:
        raise DataFileError(f"{path}: holds an empty list; it holds no data.", path=path)
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            # row_id is the line number in JSON Lines (as for parse errors), the index in JSON;
            # messages count records from 1, as lines and the id checks' rows are.
            row = line_of[index] if line_of else index
            place = f"line {row}" if line_of else f"record {index + 1}"
            raise DataFileError(
                f"{path}: {place} is a JSON {type(record).__name__}, not an object; every "
                "record must be an object of column values.",
                path=path,
                row_id=row,
            )
    if id_column is not None:
        check_single_type([r.get(id_column) for r in records], id_column, source=str(path))
    with read_errors(
        path,
        "the records cannot form a table",
        "give each column values of one type.",
        catch=_BUILD,
    ):
        frame = pl.from_dicts(records, infer_schema_length=None)
    return _to_eval_data(name, frame, id_column, path)


def _from_columns(
    name: str, columns: dict[str, Any], id_column: str | None, path: Path
) -> EvalData:
    lengths = {}
    for key, values in columns.items():
        if not isinstance(values, list):
            raise DataFileError(
                f"{path}: key {shown(key)} holds a JSON {type(values).__name__}; a JSON object "
                "must map every column name to a list of values (or the file must be a list of "
                "records).",
                path=path,
                column=key,
            )
        lengths[key] = len(values)
    if len(set(lengths.values())) > 1:
        raise DataFileError(
            f"{path}: columns have different lengths {lengths}; every column needs one value "
            "per row.",
            path=path,
        )
    if id_column is not None and id_column in columns:
        check_single_type(columns[id_column], id_column, source=str(path))
    with read_errors(path, "the columns cannot form a table", catch=_BUILD):
        frame = pl.DataFrame(columns, strict=False)
    return _to_eval_data(name, frame, id_column, path)


def _to_eval_data(name: str, frame: pl.DataFrame, id_column: str | None, path: Path) -> EvalData:
    if frame.height == 0:
        raise DataFileError(
            f"{path}: has columns {list_some(frame.columns)} but no rows; it holds no data.",
            path=path,
        )
    return EvalData(name, frame, id_column, source=str(path))
