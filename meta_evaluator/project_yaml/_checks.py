"""The checks of `project.yaml`'s sections in depth: what the paths lead to, every problem kept.

Each function adds the problems it finds (`loc`, `msg`, `type`) to a list and returns what it
could read, so `reader` reports every problem of the file at once.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any, TypeVar

from meta_evaluator.data import EvalData
from meta_evaluator.data.loader import FORMAT_OF_EXTENSION, load_as
from meta_evaluator.errors import (
    ColumnError,
    DataError,
    IdError,
    JudgeConfigError,
    MetaEvaluatorError,
    MetricConfigError,
    SamplingError,
    StorageError,
    TaskError,
)
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge.yaml_config import read_judge_entries, read_judges_yaml
from meta_evaluator.project_yaml._recover import DROP, Repair, recovered
from meta_evaluator.project_yaml.schema import (
    AnnotationsEntry,
    DataSection,
    ProjectFile,
    ResultsEntry,
)
from meta_evaluator.project_yaml.spec import JudgesSource, LabelsSource
from meta_evaluator.scores import MetricsConfig
from meta_evaluator.scores.yaml_config import read_metric_entries, read_metrics_yaml

__all__ = [
    "Problems",
    "check_data",
    "check_judges",
    "check_labels",
    "check_metrics",
    "check_task",
    "columns_of",
    "judge_entries",
    "label_entries",
    "problem",
]

Problems = list[dict[str, Any]]
E = TypeVar("E", AnnotationsEntry, ResultsEntry)


def check_data(
    section: DataSection, base: Path, problems: Problems
) -> tuple[EvalData | None, Path | None]:
    """The data as loaded and sampled, or None with the problem added."""
    file = base / section.file
    fmt = section.format or FORMAT_OF_EXTENSION.get(file.suffix.lower())
    if fmt is None:
        problems.append(
            problem(
                "data.format",
                f"{file}: the extension {file.suffix or '(none)'!r} names no format; give "
                f"format: one of csv, json, jsonl, parquet",
            )
        )
        return None, None
    name = section.name or file.stem or "data"
    try:
        data = load_as(fmt, name, file, section.id_column)
    except (DataError, StorageError) as exc:
        on_ids = isinstance(exc, ColumnError | IdError) and exc.column == section.id_column
        problems.append(problem("data.id_column" if on_ids else "data.file", exc.message))
        return None, None
    sample = section.sample
    if sample is not None:
        try:
            data = data.stratified_sample_by_columns(
                sample.columns, sample.sample_percentage, sample.seed, sample.sample_name
            )
        except (SamplingError, ColumnError) as exc:
            problems.append(problem("data.sample", exc.message))
            return None, None
    return data, file


def check_task(task: EvalTask, data: EvalData, problems: Problems) -> None:
    """Every column the task shows is in the data (all missing ones named), and never null."""
    missing = False
    for field, columns in (
        ("prompt_columns", task.prompt_columns or []),
        ("response_columns", task.response_columns),
    ):
        absent = [c for c in columns if c not in data.columns]
        if absent:
            missing = True
            problems.append(
                problem(
                    f"task.{field}",
                    f"{absent} not in the data's columns {data.columns}; rename the column or "
                    "fix the task",
                )
            )
    if not missing:
        try:
            task.validate_against(data)
        except TaskError as exc:
            problems.append(problem("task", exc.message))


def columns_of(
    data: EvalData | None, task: EvalTask | None, *, data_given: bool
) -> list[str] | None:
    """What prompt placeholders may name: the data's columns; without a data section, the task's.

    None (placeholders unchecked) when the data section names data that could not be read:
    its columns are unknown, and the task's shown columns are not all of them.
    """
    if data is not None:
        return data.columns
    if data_given:
        return None
    return task.columns_shown() if task is not None else None


def judge_entries(raw: dict[str, Any], model: ProjectFile) -> list[tuple[int, Any]]:
    """The judge entries to check in depth, with their places.

    Of a section refused for entries that are neither mappings nor paths, the others.
    """
    entries = raw.get("judges")
    if "judges" in model.model_fields_set or not isinstance(entries, list):
        return list(enumerate(model.judges))
    return [(i, e) for i, e in enumerate(entries) if isinstance(e, dict | str)]


def check_judges(
    entries: list[tuple[int, Any]],
    base: Path,
    columns: Collection[str] | None,
    problems: Problems,
) -> list[JudgesSource]:
    """Each entry's judges; ids must differ across the whole list (an invalid entry's too)."""
    sources: list[JudgesSource] = []
    seen: dict[str, str] = {}
    for index, entry in entries:
        where = f"judges[{index}]"
        file = None
        if isinstance(entry, str):
            file = base / entry
            try:
                judges = read_judges_yaml(file, columns=columns)
            except JudgeConfigError as exc:
                problems += _inner(where, file, exc)
                continue
            ids, valid = [judge.id for judge in judges], True
        else:
            judges, found = read_judge_entries([entry], base=base, columns=columns)
            problems += [{**p, "loc": where + p["loc"].removeprefix("judges[0]")} for p in found]
            ids = [entry["id"]] if isinstance(entry.get("id"), str) else []
            valid = not found
        fresh = [_first(judge_id, where, file, seen, problems) for judge_id in ids]
        if valid and all(fresh):
            sources.append(JudgesSource(index, tuple(judges), file))
    return sources


def _first(
    judge_id: str, where: str, file: Path | None, seen: dict[str, str], problems: Problems
) -> bool:
    """Whether `judge_id` is new to the list; a problem naming the entry that gave it first."""
    if judge_id in seen:
        problems.append(problem(where, f"judge id {judge_id!r} is also given by {seen[judge_id]}"))
        return False
    seen[judge_id] = where if file is None else f"{where} ({file.name})"
    return True


def label_entries(raw: dict[str, Any], model: ProjectFile, section: str) -> list[tuple[int, E]]:
    """The entries of a labels section to check in depth, with their places.

    Of a section refused, each entry as far as it reads (`_recover`): a file is checked even
    when its owner id or a key's spelling is wrong. The problems found only so are added.
    """
    if section in model.model_fields_set:
        return list(enumerate(getattr(model, section)))
    entries = raw.get(section)
    kind: type[E] = AnnotationsEntry if section == "annotations" else ResultsEntry  # type: ignore[assignment]
    valid = []
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        read, _ = recovered(kind, entry, _LABELS_REPAIRS)
        if read is not None:
            valid.append((index, read))
    return valid


def _stand_in(value: Any, fields: dict[str, Any]) -> str:
    return "stand-in"


_LABELS_REPAIRS: dict[str, Repair] = {
    "annotator_id": _stand_in,  # names the saved set only: the file is checked all the same
    "judge_id": _stand_in,
    "run_id": lambda value, fields: DROP,
}


def check_labels(
    entries: list[tuple[int, E]],
    section: str,
    base: Path,
    data: EvalData | None,
    task: EvalTask | None,
    problems: Problems,
) -> list[LabelsSource]:
    """Each file of labels, checked as its import will check it, as far as data and task allow.

    The file itself (it exists, reads, has unique ids) always; its ids against the data when
    the data loaded; its task columns (and `tasks`) when there is a task.
    """
    from meta_evaluator.results.external import check_import

    sources = []
    for index, entry in entries:
        where = f"{section}[{index}]"
        file = base / entry.path
        found = check_import(
            file, data=data, task=task, id_column=entry.id_column, tasks=entry.tasks
        )
        for exc in found:
            problems.append(problem(f"{where}.{_labels_field(exc, entry)}", exc.message))
        if not found:
            sources.append(LabelsSource(index, entry, file))
    return sources


def _labels_field(exc: MetaEvaluatorError, entry: AnnotationsEntry | ResultsEntry) -> str:
    """The key of a labels entry a problem of its import is about."""
    if isinstance(exc, TaskError) and exc.field == "tasks":
        return "tasks"
    if isinstance(exc, ColumnError | IdError) and exc.column == entry.id_column:
        return "id_column"
    return "path"


def check_metrics(
    value: list[dict[str, Any]] | str | None,
    base: Path,
    task: EvalTask | None,
    problems: Problems,
) -> tuple[MetricsConfig | None, Path | None]:
    """The metrics (inline, or of the file named), their tasks checked against the task."""
    if value is None:
        return None, None
    file = None
    if isinstance(value, str):
        file = base / value
        try:
            config = read_metrics_yaml(file)
        except MetricConfigError as exc:
            problems += _inner("metrics", file, exc)
            return None, file
    else:
        found_config, found = read_metric_entries(value, where="metrics")
        problems += found
        if found_config is None:
            return None, None
        config = found_config
    if task is not None:
        for index, metric in enumerate(config.metrics):
            unknown = [t for t in metric.task_names if t not in task.task_names]
            if unknown:
                where = f"metrics[{index}].task_names"
                message = f"unknown task(s) {unknown}; the task has {task.task_names}"
                problems.append(
                    problem("metrics", f"{file}: {where}: {message}")
                    if file is not None
                    else problem(where, message)
                )
    return config, file


def _inner(where: str, file: Path, exc: MetaEvaluatorError) -> Problems:
    """The problems of a file `project.yaml` names, placed at the entry naming it."""
    if not exc.errors:
        return [problem(where, exc.message)]
    return [problem(where, f"{file}: {p['loc']}: {p['msg']}") for p in exc.errors]


def problem(where: str, message: str) -> dict[str, Any]:
    return {"loc": where, "msg": message, "type": "project"}
