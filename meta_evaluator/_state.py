"""The schema of `main_state.json`, its version, and the migrations from older versions.

The file holds no secrets: judges name the environment variable of their key, never the key.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from meta_evaluator._util import shown
from meta_evaluator._validation import describe_errors
from meta_evaluator._version import __version__
from meta_evaluator.data.persist import DataFormat
from meta_evaluator.errors import MetaEvaluatorError, StateError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge import Judge

__all__ = [
    "SCHEMA_VERSION",
    "STATE_FILE",
    "DataState",
    "LoadedState",
    "ProjectState",
    "SampleState",
    "dump_state",
    "parse_state",
]

STATE_FILE = "main_state.json"
SCHEMA_VERSION = 1

# Version N → a function turning a version-N dict into a version-(N+1) dict. Empty while only
# version 1 exists; every future change of the schema adds one entry, never drops keys silently.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


class SampleState(BaseModel):
    """How a sample was drawn (see `SampleEvalData`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sample_name: str
    stratification_columns: list[str] = Field(min_length=1)
    sample_percentage: float = Field(gt=0, le=1)
    seed: int = Field(ge=0)
    original_size: int = Field(ge=1)


class DataState(BaseModel):
    """Where the project's data is saved, and what it holds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    id_column: str
    file: str
    """The data file's name inside `data/`."""
    format: DataFormat
    num_rows: int = Field(ge=1)
    sha256: str | None = None
    """Digest of the data file as saved; lets a load finish a save that was interrupted."""
    columns: dict[str, str]
    """Column name → dtype, in order; used to restore dtypes from CSV and JSON."""
    sample: SampleState | None = None


class ProjectState(BaseModel):
    """The whole of `main_state.json`; the task and judges are checked by their own models."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int
    meta_evaluator_version: str
    data: DataState | None = None
    eval_task: dict[str, Any] | None = None
    judges: dict[str, dict[str, Any]] = Field(default_factory=dict)


class LoadedState(NamedTuple):
    """What `parse_state` returns: the validated parts of a state file."""

    data: DataState | None
    eval_task: EvalTask | None
    judges: dict[str, Judge]


def dump_state(
    data: DataState | None, eval_task: EvalTask | None, judges: dict[str, Judge]
) -> dict[str, Any]:
    """The JSON-ready content of `main_state.json` (judges sorted by id, so saves are stable)."""
    return ProjectState(
        schema_version=SCHEMA_VERSION,
        meta_evaluator_version=__version__,
        data=data,
        eval_task=eval_task.model_dump(mode="json") if eval_task else None,
        judges={k: j.model_dump(mode="json") for k, j in sorted(judges.items())},
    ).model_dump(mode="json")


def parse_state(raw: Any, path: Path) -> LoadedState:
    """Validate a loaded `main_state.json`, migrating older versions; list every problem.

    Raises:
        StateError: The content is not a meta-evaluator state, is from a newer version, or
            has invalid fields (each listed with its location).
    """
    if not isinstance(raw, dict) or "schema_version" not in raw:
        if isinstance(raw, dict) and {"data", "eval_task", "judge_registry"} & set(raw):
            message = (
                f"{path.parent}: a meta-evaluator 0.3.3 project: run `meta-evaluator migrate "
                f"{path.parent}` to convert it in place (0.3.3's files are kept aside)."
            )
        else:
            message = f"{path}: is not a meta-evaluator project state (no 'schema_version')."
        raise StateError(message, path=path, field="schema_version")
    version = raw["schema_version"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise StateError(
            f"{path}: schema_version must be a positive integer, got {shown(version)}.",
            path=path,
            field="schema_version",
        )
    if version > SCHEMA_VERSION:
        raise StateError(
            f"{path}: was written by a newer meta-evaluator (state schema {version}; this "
            f"version reads up to {SCHEMA_VERSION}); upgrade meta-evaluator.",
            path=path,
            field="schema_version",
        )
    while raw["schema_version"] < SCHEMA_VERSION:
        raw = MIGRATIONS[raw["schema_version"]](raw)
    problems: list[dict[str, Any]] = []
    state = None
    try:
        state = ProjectState.model_validate(raw)
    except ValidationError as exc:
        problems += describe_errors(exc, known_fields=ProjectState.model_fields)[1]
    # The task and judges are checked even when the rest failed, so every problem shows at once.
    eval_task, judges = None, {}
    raw_task, raw_judges = raw.get("eval_task"), raw.get("judges")
    if isinstance(raw_task, dict):
        try:
            eval_task = EvalTask(**raw_task)
        except MetaEvaluatorError as exc:
            problems += [{**p, "loc": f"eval_task.{p['loc']}"} for p in exc.errors]
    for key, fields in raw_judges.items() if isinstance(raw_judges, dict) else ():
        if not isinstance(fields, dict):
            continue  # reported by ProjectState
        try:
            judges[key] = Judge(**fields)
        except MetaEvaluatorError as exc:
            problems += [{**p, "loc": f"judges.{key}.{p['loc']}"} for p in exc.errors]
            continue
        if judges[key].id != key:
            problems.append(
                {"loc": f"judges.{key}.id", "msg": f"is {judges[key].id!r}; it must equal its key"}
            )
    if problems or state is None:
        lines = "\n".join(f"{path.name}: {p['loc']}: {p['msg']}" for p in problems)
        raise StateError(
            f"{path}: is invalid ({len(problems)} problem(s)):\n{lines}\nRestore the file from "
            "version control or fix the fields named.",
            path=path,
            errors=problems,
            field=problems[0]["loc"] if problems else None,
        )
    return LoadedState(state.data, eval_task, judges)
