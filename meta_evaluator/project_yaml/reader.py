"""Reading `project.yaml`: its schema, then what its paths lead to; every problem at once.

`read_project_yaml` checks the whole file in one pass, so a user fixes it once: every section's
keys and values (`schema.ProjectFile`, each section alone so one bad section hides none), then,
in `_checks`, each check as far as what it needs allows: the files named (the data, prompt
files, judges YAML files, files of labels), always; what needs the data (the task's columns,
placeholders, the labels' ids) whenever the data loads; what needs the task (the labels' task
columns, the metrics' tasks) whenever there is one. A `data` or `task` section with problems is
read as most likely meant for those checks (`_recover`: `id_colum` as `id_column`), never
built. Each problem is one line, `project.yaml: judges[1].temperature: ...`; a problem inside a
file that `project.yaml` names is placed at the entry naming it (`judges[2]: judges.yaml:
judges[0]...`). Nothing is written.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from meta_evaluator.errors import MetaEvaluatorError, MetricConfigError, ProjectFileError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.project_yaml._checks import (
    Problems,
    check_data,
    check_judges,
    check_labels,
    check_metrics,
    check_task,
    columns_of,
    judge_entries,
    label_entries,
    problem,
)
from meta_evaluator.project_yaml._recover import DROP, Repair, recovered
from meta_evaluator.project_yaml.schema import DataSection, ProjectFile
from meta_evaluator.project_yaml.spec import JudgesSource, ProjectSpec
from meta_evaluator.scores import MetricsConfig
from meta_evaluator.scores.yaml_config import read_metric_entries, read_metrics_yaml
from meta_evaluator.storage import path_argument, raise_problems, read_yaml, yaml_mapping

__all__ = [
    "PROJECT_FILE",
    "check_project",
    "parse_project_yaml",
    "read_metrics_file",
    "read_project_judges",
    "read_project_yaml",
    "read_task_yaml",
]

PROJECT_FILE = "project.yaml"
"""The name of a project folder's own project file."""


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
    data_section = model.data or _recovered("data", raw, problems)
    data, data_file = check_data(data_section, base, problems) if data_section else (None, None)
    task = model.task or _recovered("task", raw, problems)
    if task is not None and data is not None:
        check_task(task, data, problems)
    columns = columns_of(data, task, data_given=data_section is not None)
    judges = check_judges(judge_entries(raw, model), base, columns, problems)
    labelled = [s for s in ("annotations", "results") if raw.get(s)]
    if labelled and (raw.get("data") is None or raw.get("task") is None):
        problems.append(
            problem(labelled[0], "labels need the data and task sections, which they fit")
        )
    annotations, results = (
        tuple(check_labels(label_entries(raw, model, s), s, base, data, task, problems))
        for s in ("annotations", "results")
    )
    metrics, metrics_file = check_metrics(model.metrics, base, task, problems)
    # Built only when nothing is wrong, so from the sections as given, never as recovered.
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
    judges = check_judges(list(enumerate(model.judges)), file.parent, columns, problems)
    raise_problems(file, problems, what="project", error=ProjectFileError)
    return tuple(judges)


def read_task_yaml(path: str | Path) -> EvalTask:
    """The `task:` of a YAML file: a task file, or a `project.yaml` (its other sections unread).

    Raises:
        ProjectFileError: The file has no `task`, or the task is invalid, or a top-level key is
            neither `task` nor a section of `project.yaml`.
    """
    file, raw = _read_mapping(path)
    problems = _unknown_sections(raw)
    task = None
    if raw.get("task") is None:
        problems.append(problem("task", "missing: the file must hold a `task:` mapping"))
    else:
        try:
            task = ProjectFile(task=raw["task"]).task
        except ProjectFileError as exc:
            problems += exc.errors
    raise_problems(file, problems, what="task", error=ProjectFileError)
    assert task is not None, "no problem, so a task"
    return task


def read_metrics_file(path: str | Path) -> MetricsConfig:
    """The metrics of a YAML file: a metrics file, or a `project.yaml` read as `read_task_yaml`.

    A file with a section of `project.yaml` other than `metrics` is a `project.yaml`: its
    `metrics:` is read (inline, or the metrics file it names, relative to it) and its other
    sections are not; any other file is a metrics file (`read_metrics_yaml`).

    Raises:
        MetricConfigError: The file is unusable, a `project.yaml` has no `metrics:` or a key
            that is no section, or a metric is invalid; every problem is listed.
    """
    try:
        file, raw = _read_mapping(path)
    except ProjectFileError:
        return read_metrics_yaml(path)  # says what is wrong, as a metrics file
    if not any(key != "metrics" and key in ProjectFile.model_fields for key in raw):
        return read_metrics_yaml(file)
    problems = _unknown_sections(raw)
    metrics: list[Any] | str | None = None
    if raw.get("metrics") is None:
        problems.append(
            problem("metrics", "missing: the file must hold a `metrics:` list (or a file's path)")
        )
    else:
        try:
            metrics = ProjectFile(metrics=raw["metrics"]).metrics
        except ProjectFileError as exc:
            problems += exc.errors
    if isinstance(metrics, str):
        raise_problems(file, problems, what="metrics", error=MetricConfigError)
        return read_metrics_yaml(file.parent / metrics)
    config, found = read_metric_entries(metrics) if metrics is not None else (None, [])
    raise_problems(file, problems + found, what="metrics", error=MetricConfigError)
    assert config is not None, "no problem, so a config"
    return config


def _unknown_sections(raw: dict[str, Any]) -> Problems:
    """A problem per top-level key that is no section of `project.yaml` (did you mean ...)."""
    problems: Problems = []
    for key in raw:
        if key not in ProjectFile.model_fields:
            try:
                ProjectFile(**{str(key): raw[key]})
            except ProjectFileError as exc:
                problems += exc.errors
    return problems


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


def _recovered(section: str, raw: dict[str, Any], problems: Problems) -> Any:
    """A refused `data` or `task` section as most likely meant, for the checks that need it.

    The problems this reading finds are added; a key's "Field required" that a misspelt key
    turned out to give is dropped (one mistake, one line).
    """
    model = DataSection if section == "data" else EvalTask
    value = raw.get(section)
    read, found = recovered(model, value, _REPAIRS[section])
    if read is None and not found:
        return None
    given = {(p["loc"], p["msg"]) for p in problems}
    if isinstance(value, dict):  # missing as written, given once read as meant
        still = {p["loc"] for p in found}
        meant = {f"{section}.{f}" for f in model.model_fields if f not in value and f not in still}
        problems[:] = [p for p in problems if not (p["loc"] in meant and p["type"] == "missing")]
    for p in found:
        loc = f"{section}.{p['loc']}"
        if (loc, p["msg"]) not in given:
            problems.append({**p, "loc": loc})
    return read


def _known_tasks(value: Any, fields: dict[str, Any]) -> Any:
    """`required_tasks` without the names that are not tasks (none left: every task)."""
    tasks = fields.get("task_schemas")
    kept = (
        [t for t in value if t in tasks]
        if isinstance(value, list) and isinstance(tasks, dict)
        else []
    )
    return kept or DROP


_REPAIRS: dict[str, dict[str, Repair]] = {
    "data": {"name": lambda value, fields: DROP},
    "task": {
        "required_tasks": _known_tasks,
        **dict.fromkeys(
            (
                "prompt_columns",
                "answering_method",
                "structured_outputs_fallback",
                "annotation_prompt",
            ),
            lambda value, fields: DROP,
        ),
    },
}


def _read_mapping(path: str | Path) -> tuple[Path, dict[str, Any]]:
    file = path_argument(path, what="project.yaml", field="path", error=ProjectFileError)
    try:
        raw = read_yaml(file)
    except MetaEvaluatorError as exc:
        raise ProjectFileError(exc.message, path=file) from exc
    expected = (
        "must be a mapping of sections (data, task, judges, annotations, results, metrics, "
        "drift), got"
    )
    return file, yaml_mapping(raw, file, expected=expected, error=ProjectFileError)
