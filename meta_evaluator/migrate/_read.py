"""Reading the files meta-evaluator 0.3.3 wrote in a project folder, as frozen records.

```
main_state.json                          {version, data, eval_task, judge_registry}
data/<data_file>                         CSV, Parquet, or JSON (a mapping column -> values)
results/<...>_state.json                 one judge's run: counts, client, model, data_file
results/<data_file>                      its rows (JSON: a list of row objects; CSV: multi-label
                                         cells JSON-encoded)
annotations/<...>_metadata.json          one annotator's set, the same way
scores/                                  computed scores (not read: computed again)
```

Everything read is checked; a file that does not read as 0.3.3 wrote it raises `StateError`
naming the file and what is wrong, before anything is written.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl
from pydantic import BaseModel, ConfigDict, ValidationError

from meta_evaluator._validation import describe_errors
from meta_evaluator.errors import StateError
from meta_evaluator.storage import read_json

__all__ = [
    "ResultsFile",
    "V033Data",
    "V033Judge",
    "V033Results",
    "V033State",
    "is_v033_state",
    "read_data",
    "read_results",
    "read_state",
]

Format = Literal["json", "csv", "parquet"]


class _Model(BaseModel):
    """A record of 0.3.3's files: fields 0.3.3 wrote; unknown ones are ignored, as it did."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class V033Data(_Model):
    """`main_state.json`'s `data`: where the data is and what it is."""

    name: str
    id_column: str
    data_file: str
    data_format: Format
    type: Literal["EvalData", "SampleEvalData"] = "EvalData"
    sample_name: str | None = None
    stratification_columns: list[str] | None = None
    sample_percentage: float | None = None
    seed: int | None = None


class V033Prompt(_Model):
    """A judge's prompt."""

    id: str
    prompt: str


class V033Judge(_Model):
    """A judge of `judge_registry`."""

    id: str
    llm_client: str
    model: str
    prompt: V033Prompt
    temperature: float | None = None
    extra_headers: dict[str, str] | None = None
    eval_task: dict[str, Any] | None = None
    """The task the judge was made with (its prompt and response columns fill the prompt)."""


class V033State(_Model):
    """The whole of a 0.3.3 `main_state.json`."""

    version: str = "1.0"
    data: V033Data | None = None
    eval_task: dict[str, Any] | None = None
    judge_registry: dict[str, V033Judge] = {}


class V033Results(_Model):
    """A run's `*_state.json` (a judge's) or a set's `*_metadata.json` (an annotator's)."""

    run_id: str
    timestamp_local: dt.datetime
    total_count: int
    succeeded_count: int
    data_file: str
    data_format: Format
    judge_id: str | None = None
    annotator_id: str | None = None
    llm_client: str | None = None
    model_used: str | None = None
    task_schemas: dict[str, Any] | None = None
    """The tasks the run answered (a judge's run)."""


@dataclass(frozen=True)
class ResultsFile:
    """One run (or annotation set) of 0.3.3: its record, its rows, and the state file."""

    state: V033Results
    rows: pl.DataFrame
    path: Path


def is_v033_state(raw: Any) -> bool:
    """Whether a loaded `main_state.json` is 0.3.3's (no `schema_version`; its own keys)."""
    return (
        isinstance(raw, dict)
        and "schema_version" not in raw
        and bool({"judge_registry", "eval_task", "data"} & set(raw))
    )


def read_state(path: Path) -> V033State:
    """The 0.3.3 state in `path`.

    Raises:
        StateError: It is not a state 0.3.3 wrote (each problem named).
    """
    raw = read_json(path)
    if not is_v033_state(raw):
        raise StateError(
            f"{path}: is not a main_state.json of meta-evaluator 0.3 (it has "
            f"{sorted(raw) if isinstance(raw, dict) else type(raw).__name__}).",
            path=path,
        )
    state: V033State = _validated(V033State, raw, path)
    return state


def read_data(folder: Path, data: V033Data) -> pl.DataFrame:
    """The project's data as 0.3.3 saved it in `folder` (`data/`).

    Raises:
        StateError: The file is missing or does not read in its format.
    """
    return _read_table(folder / data.data_file, data.data_format, rows_as_objects=False)


def read_results(folder: Path, pattern: str) -> list[ResultsFile]:
    """Every run (or annotation set) under `folder` whose record file matches `pattern`.

    Sorted by the time each was made (0.3.3 picked the "latest" by sorting run ids as text).

    Raises:
        StateError: A record or its rows do not read as 0.3.3 wrote them.
    """
    found = []
    for path in sorted(folder.glob(pattern)) if folder.is_dir() else []:
        state = _validated(V033Results, read_json(path), path)
        rows = _read_table(path.parent / state.data_file, state.data_format, rows_as_objects=True)
        found.append(ResultsFile(state, rows, path))
    return sorted(found, key=lambda f: (f.state.timestamp_local, f.path.name))


def _read_table(path: Path, fmt: Format, *, rows_as_objects: bool) -> pl.DataFrame:
    if not path.is_file():
        raise StateError(f"{path}: is missing; 0.3.3's state names it.", path=path)
    try:
        if fmt == "parquet":
            return pl.read_parquet(path)
        if fmt == "csv":
            return pl.read_csv(path, infer_schema_length=None)
        with path.open(encoding="utf-8") as handle:
            loaded = json.load(handle)
        if rows_as_objects and isinstance(loaded, list):
            return pl.DataFrame(loaded, infer_schema_length=None) if loaded else pl.DataFrame()
        if not rows_as_objects and isinstance(loaded, dict):
            return pl.DataFrame(loaded)
        raise ValueError(f"a JSON {type(loaded).__name__} where 0.3.3 wrote a table")
    except (OSError, ValueError, pl.exceptions.PolarsError) as exc:
        raise StateError(
            f"{path}: does not read as the {fmt} file 0.3.3 wrote ({exc}).", path=path
        ) from exc


def _validated(model: type[_Model], raw: Any, path: Path) -> Any:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        lines, problems = describe_errors(exc, root=path.name)
        raise StateError(
            f"{path}: does not read as meta-evaluator 0.3.3 wrote it:\n{lines}",
            path=path,
            errors=problems,
        ) from exc
