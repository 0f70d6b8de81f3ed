"""Reading `project.yaml`: its schema, then what its paths lead to; every problem at once.

`read_project_yaml` checks the whole file in one pass, so a user fixes it once: every section's
keys and values (`schema.ProjectFile`), the data file (read, ids checked, the sample drawn),
the task against the data's columns, each judge (inline, or every judge of a judges YAML it
names, placeholders against the columns), each file of labels (its columns and ids, as an import
would check them, nothing saved), and the metrics (their tasks against the task). Each problem
is one line, `project.yaml: judges[1].temperature: ...`; a problem inside a file that
`project.yaml` names is placed at the entry naming it (`judges[2]: judges.yaml: judges[0]...`).
Nothing is written.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from meta_evaluator.data import DataLoader, EvalData
from meta_evaluator.errors import (
    ColumnError,
    DataError,
    IdError,
    JudgeConfigError,
    MetaEvaluatorError,
    MetricConfigError,
    ProjectFileError,
    SamplingError,
    StorageError,
    TaskError,
    UnsafeNameError,
)
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge import Judge
from meta_evaluator.judge.yaml_config import read_judge_entries, read_judges_yaml
from meta_evaluator.project_yaml.schema import (
    DATA_FORMATS,
    AnnotationsEntry,
    DataSection,
    ProjectFile,
    ResultsEntry,
)
from meta_evaluator.scores import MetricsConfig
from meta_evaluator.scores.yaml_config import read_metric_entries, read_metrics_yaml
from meta_evaluator.storage import check_safe_name, path_argument, raise_problems, read_yaml

__all__ = [
    "PROJECT_FILE",
    "JudgesSource",
    "LabelsSource",
    "ProjectSpec",
    "check_project",
    "parse_project_yaml",
    "read_project_judges",
    "read_project_yaml",
    "read_task_yaml",
]

PROJECT_FILE = "project.yaml"
"""The name of a project folder's own project file."""

Problems = list[dict[str, Any]]
E = TypeVar("E", AnnotationsEntry, ResultsEntry)


@dataclass(frozen=True)
class JudgesSource:
    """The judges of one entry of `project.yaml`'s `judges`: inline, or a judges YAML file."""

    index: int
    """The entry's place in the list."""
    judges: tuple[Judge, ...]
    file: Path | None
    """The judges YAML file the entry names; None for a judge written inline."""


@dataclass(frozen=True)
class LabelsSource:
    """One file of labels `project.yaml` names (under `annotations` or `results`), checked."""

    index: int
    entry: AnnotationsEntry | ResultsEntry
    file: Path
    """The file, relative to the working folder (the entry's path, from `project.yaml`'s)."""

    @property
    def owner_id(self) -> str:
        """The annotator's or the judge's id."""
        entry = self.entry
        return entry.annotator_id if isinstance(entry, AnnotationsEntry) else entry.judge_id


@dataclass(frozen=True)
class ProjectSpec:
    """A `project.yaml` read and checked: what a project built from it holds."""

    file: Path
    model: ProjectFile
    """The file as written (paths relative to it)."""
    data: EvalData | None
    """The data as loaded (and sampled), or None without a `data` section."""
    data_file: Path | None
    task: EvalTask | None
    judges: tuple[JudgesSource, ...]
    annotations: tuple[LabelsSource, ...]
    results: tuple[LabelsSource, ...]
    metrics: MetricsConfig | None
    metrics_file: Path | None
    """The metrics YAML file named, or None (inline metrics, or none)."""

    @property
    def all_judges(self) -> list[Judge]:
        """Every judge, in the order of the file."""
        return [judge for source in self.judges for judge in source.judges]


def parse_project_yaml(path: str | Path) -> tuple[Path, ProjectFile]:
    """The file's sections, their keys and values checked (not what the paths lead to).

    Raises:
        ProjectFileError: The file cannot be read, is not YAML, is not a mapping, or any
            section is invalid: every problem is listed.
    """
    file, raw = _read_mapping(path)
    model, problems = _sections(raw)
    raise_problems(file, problems, what="project", error=ProjectFileError)
    return file, model


def read_project_yaml(path: str | Path) -> ProjectSpec:
    """Read and check a whole `project.yaml` (see the module); nothing is written.

    A section whose keys or values are wrong is reported, and the others are still checked in
    depth, so one error lists everything.

    Raises:
        ProjectFileError: Any problem of the file or of what it names; every one is listed.
    """
    file, raw = _read_mapping(path)
    return check_project(raw, file=file)


def check_project(raw: dict[str, Any], *, file: Path, base: Path | None = None) -> ProjectSpec:
    """Check the content of a project file (`raw`, as read from YAML) as `read_project_yaml` does.

    `file` names the content in messages; paths are relative to `base` (default: its folder).
    For content that is not a file of its own (`meta-evaluator init --data`).

    Raises:
        ProjectFileError: Any problem, every one listed.
    """
    model, problems = _sections(raw)
    base = file.parent if base is None else base
    data, data_file = _check_data(model.data, base, problems) if model.data else (None, None)
    task = model.task
    if task is not None and data is not None:
        _check_task(task, data, problems)
    columns = _columns(data, task)
    judges = _check_judges(_judge_entries(raw, model), base, columns, problems)
    labelled = [s for s in ("annotations", "results") if raw.get(s)]
    if labelled and (raw.get("data") is None or raw.get("task") is None):
        problems.append(
            _problem(labelled[0], "labels need the data and task sections, which they fit")
        )
    annotations: tuple[LabelsSource, ...] = ()
    results: tuple[LabelsSource, ...] = ()
    if data is not None and task is not None:
        annotations = tuple(
            _check_labels(
                _entries(raw, model, "annotations"), "annotations", base, data, task, problems
            )
        )
        results = tuple(
            _check_labels(_entries(raw, model, "results"), "results", base, data, task, problems)
        )
    metrics, metrics_file = _check_metrics(model.metrics, base, task, problems)
    raise_problems(file, problems, what="project", error=ProjectFileError)
    return ProjectSpec(
        file, model, data, data_file, task, tuple(judges), annotations, results, metrics,
        metrics_file,
    )  # fmt: skip


def read_project_judges(
    path: str | Path, *, columns: Collection[str] | None
) -> tuple[JudgesSource, ...]:
    """The judges of a `project.yaml` (every section's schema is checked, only judges deeper).

    What `meta-evaluator run` reads of a project's own `project.yaml` each time.

    Raises:
        ProjectFileError: The file or one of its judges is invalid; every problem is listed.
    """
    file, model = parse_project_yaml(path)
    problems: Problems = []
    judges = _check_judges(list(enumerate(model.judges)), file.parent, columns, problems)
    raise_problems(file, problems, what="project", error=ProjectFileError)
    return tuple(judges)


def read_task_yaml(path: str | Path) -> EvalTask:
    """The `task:` of a YAML file: a task file, or a `project.yaml` (its other sections unread).

    Raises:
        ProjectFileError: The file has no `task`, or the task is invalid, or a top-level key is
            neither `task` nor a section of `project.yaml`.
    """
    file, raw = _read_mapping(path)
    problems: Problems = []
    for key in raw:
        if key not in ProjectFile.model_fields:
            try:
                ProjectFile(**{str(key): raw[key]})
            except ProjectFileError as exc:
                problems += exc.errors
    task = None
    if raw.get("task") is None:
        problems.append(_problem("task", "missing: the file must hold a `task:` mapping"))
    else:
        try:
            task = ProjectFile(task=raw["task"]).task
        except ProjectFileError as exc:
            problems += exc.errors
    raise_problems(file, problems, what="task", error=ProjectFileError)
    assert task is not None, "no problem, so a task"
    return task


# ----- the sections -----------------------------------------------------------------------------


def _sections(raw: dict[str, Any]) -> tuple[ProjectFile, Problems]:
    """The valid sections as a model, and every problem of the others (each checked alone)."""
    problems: Problems = []
    valid = {}
    for key, value in raw.items():
        try:
            ProjectFile(**{str(key): value})  # one bad section hides none of the others
        except ProjectFileError as exc:
            problems += exc.errors
            continue
        valid[str(key)] = value
    return ProjectFile(**valid), problems


def _read_mapping(path: str | Path) -> tuple[Path, dict[str, Any]]:
    file = path_argument(path, what="project.yaml", field="path", error=ProjectFileError)
    try:
        raw = read_yaml(file)
    except MetaEvaluatorError as exc:
        raise ProjectFileError(exc.message, path=file) from exc
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ProjectFileError(
            f"{file}: must be a mapping of sections (data, task, judges, annotations, results, "
            f"metrics), got {type(raw).__name__}.",
            path=file,
        )
    return file, raw


def _check_data(
    section: DataSection, base: Path, problems: Problems
) -> tuple[EvalData | None, Path | None]:
    """The data as loaded and sampled, or None with the problem added."""
    file = base / section.file
    fmt = section.format or DATA_FORMATS.get(file.suffix.lower())
    if fmt is None:
        problems.append(
            _problem(
                "data.format",
                f"{file}: the extension {file.suffix or '(none)'!r} names no format; give "
                f"format: one of csv, json, jsonl, parquet",
            )
        )
        return None, None
    loader = {
        "csv": DataLoader.load_csv,
        "json": DataLoader.load_json,
        "jsonl": DataLoader.load_jsonl,
        "parquet": DataLoader.load_parquet,
    }[fmt]
    name = section.name or file.stem or "data"
    try:
        data = loader(name, file, section.id_column)
    except (DataError, StorageError) as exc:
        on_ids = isinstance(exc, ColumnError | IdError) and exc.column == section.id_column
        problems.append(_problem("data.id_column" if on_ids else "data.file", exc.message))
        return None, None
    sample = section.sample
    if sample is not None:
        try:
            data = data.stratified_sample_by_columns(
                sample.columns, sample.sample_percentage, sample.seed, sample.sample_name
            )
        except (SamplingError, ColumnError) as exc:
            problems.append(_problem("data.sample", exc.message))
            return None, None
    return data, file


def _check_task(task: EvalTask, data: EvalData, problems: Problems) -> None:
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
                _problem(
                    f"task.{field}",
                    f"{absent} not in the data's columns {data.columns}; rename the column or "
                    "fix the task",
                )
            )
    if not missing:
        try:
            task.validate_against(data)
        except TaskError as exc:
            problems.append(_problem("task", exc.message))


def _columns(data: EvalData | None, task: EvalTask | None) -> list[str] | None:
    """What prompt placeholders may name: the data's columns, else the task's."""
    if data is not None:
        return data.columns
    return task.columns_shown() if task is not None else None


def _judge_entries(raw: dict[str, Any], model: ProjectFile) -> list[tuple[int, Any]]:
    """The judge entries to check in depth, with their places.

    Of a section refused for entries that are neither mappings nor paths, the others.
    """
    entries = raw.get("judges")
    if "judges" in model.model_fields_set or not isinstance(entries, list):
        return list(enumerate(model.judges))
    return [(i, e) for i, e in enumerate(entries) if isinstance(e, dict | str)]


def _check_judges(
    entries: list[tuple[int, Any]],
    base: Path,
    columns: Collection[str] | None,
    problems: Problems,
) -> list[JudgesSource]:
    """Each entry's judges; ids must differ across the whole list."""
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
        else:
            judges, found = read_judge_entries([entry], base=base, columns=columns)
            problems += [{**p, "loc": where + p["loc"].removeprefix("judges[0]")} for p in found]
            if found:
                continue
        kept = []
        for judge in judges:
            if judge.id in seen:
                problems.append(
                    _problem(where, f"judge id {judge.id!r} is also given by {seen[judge.id]}")
                )
                continue
            seen[judge.id] = where if file is None else f"{where} ({file.name})"
            kept.append(judge)
        sources.append(JudgesSource(index, tuple(kept), file))
    return sources


def _entries(raw: dict[str, Any], model: ProjectFile, section: str) -> list[tuple[int, Any]]:
    """The entries of a labels section to check in depth, with their places.

    Of a section refused for some entries, the entries that are valid alone.
    """
    if section in model.model_fields_set:
        return list(enumerate(getattr(model, section)))
    entries = raw.get(section)
    valid = []
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        try:
            valid.append((index, getattr(ProjectFile(**{section: [entry]}), section)[0]))
        except ProjectFileError:
            continue  # said already, with the section's problems
    return valid


def _check_labels(
    entries: list[tuple[int, E]],
    section: str,
    base: Path,
    data: EvalData,
    task: EvalTask,
    problems: Problems,
) -> list[LabelsSource]:
    """Each file of labels, checked as its import will check it."""
    from meta_evaluator.results.external import check_import

    sources = []
    owner = "annotator_id" if section == "annotations" else "judge_id"
    for index, entry in entries:
        where = f"{section}[{index}]"
        file = base / entry.path
        source = LabelsSource(index, entry, file)
        try:
            if entry.run_id is not None:
                check_safe_name(entry.run_id, field="run_id")
            check_import(
                file, source.owner_id, owner,
                {"data": data, "task": task, "id_column": entry.id_column, "tasks": entry.tasks},
            )  # fmt: skip
        except (DataError, TaskError, UnsafeNameError, StorageError) as exc:
            problems.append(_problem(f"{where}.{_labels_field(exc, entry, owner)}", exc.message))
            continue
        sources.append(source)
    return sources


def _labels_field(
    exc: MetaEvaluatorError, entry: AnnotationsEntry | ResultsEntry, owner: str
) -> str:
    """The key of a labels entry a problem of its import is about."""
    if isinstance(exc, UnsafeNameError):
        return "run_id" if exc.field == "run_id" else owner
    if isinstance(exc, TaskError) and exc.field == "tasks":
        return "tasks"
    if isinstance(exc, ColumnError | IdError) and exc.column == entry.id_column:
        return "id_column"
    return "path"


def _check_metrics(
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
                    _problem("metrics", f"{file}: {where}: {message}")
                    if file is not None
                    else _problem(where, message)
                )
    return config, file


def _inner(where: str, file: Path, exc: MetaEvaluatorError) -> Problems:
    """The problems of a file `project.yaml` names, placed at the entry naming it."""
    if not exc.errors:
        return [_problem(where, exc.message)]
    return [_problem(where, f"{file}: {p['loc']}: {p['msg']}") for p in exc.errors]


def _problem(where: str, message: str) -> dict[str, Any]:
    return {"loc": where, "msg": message, "type": "project"}
