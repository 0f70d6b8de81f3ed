"""Projects from files: the commands that build and extend them, and the judges `run` reads.

`init --from` and `--data`, `add-data`, `add-task`, `add-judges`, `import-annotations`,
`import-results`; `sync_judges` registers the judges of the project's files before every `run`.

A project built from files keeps its own `project.yaml`, whose paths lead inside the project:
`init` writes it, and `add-task`, `add-judges`, `import-annotations` and `import-results` add
to it, so `meta-evaluator init NEW --from PROJECT/project.yaml` builds the same project again.
What a `project.yaml` outside the project names is copied in first:

```
project.yaml                            the project's own
inputs/data/<file>                      the data file as given (saved as data/main_data.*)
inputs/annotations/<annotator_id>.<ext> each annotator's labels as given
inputs/results/<judge_id>.<ext>         each imported judge's labels as given
judges/<file>.yaml, judges/prompts/...  judges YAML files, and the prompts judges name
metrics.yaml                            the metrics file named
```

A file already inside the project stays where it is; a `project.yaml` inside the project folder
(`init . --from project.yaml`) must name only such files, and is left as it is.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from meta_evaluator._cli_copy import INPUTS, Copier
from meta_evaluator.data.loader import FORMAT_OF_EXTENSION
from meta_evaluator.data.persist import DataFormat
from meta_evaluator.errors import (
    AlreadySetError,
    JudgeConfigError,
    MetaEvaluatorError,
    ProjectFileError,
)
from meta_evaluator.eval_task.labels import NormalisedLabels
from meta_evaluator.judge import Judge
from meta_evaluator.judge.yaml_config import read_judges_yaml
from meta_evaluator.locks import ProjectLock
from meta_evaluator.project import MetaEvaluator
from meta_evaluator.project_yaml import (
    METRICS_FILE,
    PROJECT_FILE,
    ProjectFile,
    ProjectSpec,
    check_project,
    dump_project_yaml,
    parse_project_yaml,
    read_metrics_file,
    read_project_judges,
    read_project_metrics,
    read_project_yaml,
    read_task_yaml,
    write_project_yaml,
)
from meta_evaluator.scores import MetricsConfig
from meta_evaluator.storage import removed_on_error

__all__ = [
    "ImportedLabels",
    "add_data_file",
    "add_judges_file",
    "add_task_file",
    "import_labels",
    "init_from_data",
    "init_from_file",
    "project_metrics",
    "sync_judges",
]

LOCK_WAIT = 10.0
"""Seconds an add-* or import command waits for another command that holds the project's lock
(another import started with it, say) before refusing."""

_SAVED_AS: dict[str, DataFormat] = {"csv": "csv", "json": "json"}
"""The format the project's data is saved in, by the data file's; parquet for the others."""


# ----- init ------------------------------------------------------------------------------------


def init_from_file(project_dir: Path, source: Path) -> MetaEvaluator:
    """Build a new project from a `project.yaml`: checked whole first, then copied in.

    Raises:
        ProjectFileError: The file or what it names has a problem (every one listed), or a
            `project.yaml` inside the project names files outside it.
        ProjectExistsError: The folder already holds a project.
    """
    spec = read_project_yaml(source)
    return _build(Path(project_dir), spec, in_place=_same_file(source, project_dir / PROJECT_FILE))


def init_from_data(
    project_dir: Path, data_file: Path, *, id_column: str | None, data_format: str | None
) -> MetaEvaluator:
    """Build a new project holding one data file (the task and judges come later).

    Raises:
        ProjectFileError: The file cannot be read as data, or its id column is unusable.
        ProjectExistsError: The folder already holds a project.
    """
    spec = _data_spec(data_file, id_column=id_column, data_format=data_format, label="--data")
    return _build(Path(project_dir), spec, in_place=False)


def add_data_file(
    project_dir: Path,
    data_file: Path,
    *,
    id_column: str | None,
    data_format: str | None,
    overwrite: bool,
) -> MetaEvaluator:
    """Set the data of an existing project from a file (for a project made empty).

    Raises:
        ProjectFileError: The file cannot be read as data, or its id column is unusable.
        AlreadySetError: The project has data and `overwrite` is False.
        TaskError: The project's task does not fit the data.
    """
    spec = _data_spec(data_file, id_column=id_column, data_format=data_format, label="add-data")
    assert spec.data is not None and spec.data_file is not None
    MetaEvaluator(project_dir, load=True)  # a folder without a project: said as such, first
    with ProjectLock(Path(project_dir), wait=LOCK_WAIT):  # not while a run reads the data
        evaluator = MetaEvaluator(project_dir, load=True)
        with _said_as_flags():
            evaluator.add_data(spec.data, overwrite=overwrite)
        evaluator.save_state(data_format=_saved_format(spec))
        root = evaluator.project_dir
        if (root / PROJECT_FILE).is_file():
            data = dump_project_yaml(spec.model)["data"]
            data["file"] = Copier(root, Path.cwd()).copy(
                spec.data_file, f"{INPUTS}/data/{spec.data_file.name}"
            )
            _update_project_file(root, lambda raw: {**raw, "data": data})
    return evaluator


@contextlib.contextmanager
def _said_as_flags() -> Iterator[None]:
    """An AlreadySetError says how to replace with the command's flag, not the argument."""
    try:
        yield
    except AlreadySetError as exc:
        exc.message = exc.message.replace("pass overwrite=True", "pass --overwrite")
        exc.args = (exc.message,)
        raise


def _data_spec(
    data_file: Path, *, id_column: str | None, data_format: str | None, label: str
) -> ProjectSpec:
    """A data file given on the command line, checked as project.yaml's `data` would be."""
    section: dict[str, Any] = {"file": str(data_file)}
    if id_column is not None:
        section["id_column"] = id_column
    if data_format is not None:
        section["format"] = data_format
    return check_project({"data": section}, file=Path(label), base=Path.cwd())


def _saved_format(spec: ProjectSpec) -> DataFormat:
    """How the project saves the data: CSV or JSON as given, Parquet for the others."""
    given: str | None = spec.model.data.format if spec.model.data else None
    if given is None and spec.data_file is not None:
        given = FORMAT_OF_EXTENSION.get(spec.data_file.suffix.lower())
    return _SAVED_AS.get(given or "", "parquet")


def _build(root: Path, spec: ProjectSpec, *, in_place: bool) -> MetaEvaluator:
    """Make the project `spec` describes in `root`; undone if any step fails."""
    evaluator = MetaEvaluator(root, load=False)  # a folder with a project is refused first
    copier = Copier(root, spec.file.parent)
    if in_place:
        outside = copier.outside(spec)
        if outside:
            raise ProjectFileError(
                f"{spec.file}: a project.yaml inside the project folder must name files inside "
                f"it; move these in, or init from a project.yaml elsewhere: "
                f"{', '.join(map(str, outside))}.",
                path=spec.file,
            )
    with removed_on_error(root):
        if spec.data is not None:
            evaluator.add_data(spec.data)
        if spec.task is not None:
            evaluator.add_eval_task(spec.task)
        evaluator.add_judges(spec.all_judges)
        evaluator.save_state(data_format=_saved_format(spec))
        model = spec.model if in_place else copier.copy_all(spec)
        imports = (
            (spec.annotations, evaluator.add_external_annotation_results),
            (spec.results, evaluator.add_external_judge_results),
        )
        for sources, add in imports:
            for source in sources:
                entry = source.entry
                add(
                    source.file, source.owner_id, run_id=entry.run_id, id_column=entry.id_column,
                    tasks=entry.tasks,
                )  # fmt: skip
        if not in_place:
            write_project_yaml(root / PROJECT_FILE, model, root=root)
    return evaluator


# ----- the commands that add to a project -------------------------------------------------------


def add_task_file(project_dir: Path, file: Path, *, overwrite: bool) -> MetaEvaluator:
    """Set the project's task from a YAML file's `task:` (a task file or a `project.yaml`).

    Raises:
        ProjectFileError: The file has no usable task.
        AlreadySetError: The project has a task and `overwrite` is False.
        TaskError: The task does not fit the project's data.
    """
    task = read_task_yaml(file)
    MetaEvaluator(project_dir, load=True)  # a folder without a project: said as such, first
    with ProjectLock(Path(project_dir), wait=LOCK_WAIT):  # not while a run saves the registry
        evaluator = MetaEvaluator(project_dir, load=True)
        with _said_as_flags():
            evaluator.add_eval_task(task, overwrite=overwrite)
        evaluator.save_state(include_data=False)
        _update_project_file(
            evaluator.project_dir,
            lambda raw: {**raw, "task": task.model_dump(mode="json", exclude_defaults=True)},
        )
    return evaluator


def add_judges_file(project_dir: Path, file: Path, *, overwrite: bool) -> list[Judge]:
    """Copy a judges YAML file (and its prompts) into `judges/`, and register its judges.

    Every problem of the file is listed at once, with ids already registered and placeholders
    that name no column of the project's data.

    Raises:
        JudgeConfigError: The file has a problem, or (without `overwrite`) an id is taken.
    """
    MetaEvaluator(project_dir, load=True)  # a folder without a project: said as such, first
    with ProjectLock(Path(project_dir), wait=LOCK_WAIT):  # not while a run saves the registry
        return _add_judges_file(project_dir, file, overwrite=overwrite)


def _add_judges_file(project_dir: Path, file: Path, *, overwrite: bool) -> list[Judge]:
    evaluator = MetaEvaluator(project_dir, load=True)
    try:
        judges = read_judges_yaml(
            file, columns=_columns(evaluator), taken=() if overwrite else evaluator.judge_registry
        )
    except JudgeConfigError as exc:  # the command's own way to replace a judge
        python, flag = (
            "pass on_duplicate='overwrite' to replace it or 'skip' to keep it",
            ("pass --overwrite to replace it"),
        )
        raise JudgeConfigError(
            exc.message.replace(python, flag),
            errors=[{**p, "msg": p["msg"].replace(python, flag)} for p in exc.errors],
            path=exc.path, field=exc.field, judge_id=exc.judge_id,
        ) from None  # fmt: skip
    root = evaluator.project_dir
    copier = Copier(root, Path(file).parent)
    ids = {judge.id for judge in judges}
    named = _project_judges(root)
    replaced = copier.replaced_judges_files(Path(file), ids, named) if overwrite else []
    rel = copier.judges_file(Path(file), replace=replaced)
    evaluator.add_judges(judges, on_duplicate="overwrite" if overwrite else None)
    evaluator.save_state(include_data=False)
    # Files replaced whole (inside the project: `replaced_judges_files` refuses others), by
    # resolved path, however project.yaml spells them; the new copy itself was written over.
    gone = {path.resolve() for path in replaced} - {(root / rel).resolve()}
    inline_gone = ids if overwrite else set()  # project.yaml's own entries of those judges

    def kept_entry(entry: str | dict[str, Any]) -> bool:
        if isinstance(entry, str):
            return (root / entry).resolve() not in gone
        return entry.get("id") not in inline_gone

    def add(raw: dict[str, Any]) -> dict[str, Any]:
        kept = [entry for entry in raw.get("judges", []) if kept_entry(entry)]
        return {**raw, "judges": kept if rel in kept else [*kept, rel]}

    _update_project_file(root, add)  # first: a project.yaml that cannot be written keeps them
    for path in gone:
        path.unlink(missing_ok=True)
    return judges


def _project_judges(root: Path) -> list[str | dict[str, Any]]:
    """The `judges:` entries of the project's own project.yaml (none without one)."""
    path = root / PROJECT_FILE
    if not path.is_file():
        return []
    _, model = parse_project_yaml(path)
    return list(dump_project_yaml(model).get("judges", []))


@dataclass(frozen=True)
class ImportedLabels:
    """What an import of labels saved, for the command to say."""

    counts: dict[str, int]
    """Rows per outcome."""
    normalised: NormalisedLabels | None
    """The labels normalised to an allowed label (None: unknown)."""
    tasks: tuple[str, ...]
    """The tasks whose labels were imported (the file's columns of other tasks are not)."""


def import_labels(
    project_dir: Path,
    file: Path,
    *,
    annotator_id: str | None = None,
    judge_id: str | None = None,
    run_id: str | None = None,
    id_column: str = "original_id",
    tasks: list[str] | None = None,
) -> ImportedLabels:
    """Import an annotator's labels (or a judge's results) made elsewhere.

    With a `project.yaml` in the project, the file is copied into `inputs/` and the project
    file lists it (an earlier entry of the same annotator or judge is replaced).

    Raises:
        ProjectError: The project has no data or task yet, or another command holds the
            project's lock (the import and project.yaml's update are made under it).
        DataFileError, ColumnError, IdError, TaskError, UnsafeNameError: The file does not fit.
    """
    MetaEvaluator(project_dir, load=True)  # a folder without a project: said as such, first
    # one change of project.yaml at a time; not in a run
    with ProjectLock(Path(project_dir), wait=LOCK_WAIT):
        return _import_labels(
            project_dir, file, annotator_id=annotator_id, judge_id=judge_id, run_id=run_id,
            id_column=id_column, tasks=tasks,
        )  # fmt: skip


def _import_labels(
    project_dir: Path,
    file: Path,
    *,
    annotator_id: str | None,
    judge_id: str | None,
    run_id: str | None,
    id_column: str,
    tasks: list[str] | None,
) -> ImportedLabels:
    evaluator = MetaEvaluator(project_dir, load=True)
    options: dict[str, Any] = {"run_id": run_id, "id_column": id_column, "tasks": tasks}
    normalised, imported = _preview(evaluator, file, id_column, tasks)
    if annotator_id is not None:
        owner, key, section = annotator_id, "annotator_id", "annotations"
        counts = evaluator.add_external_annotation_results(file, annotator_id, **options).counts()
    else:
        assert judge_id is not None, "an annotator or a judge"
        owner, key, section = judge_id, "judge_id", "results"
        counts = evaluator.add_external_judge_results(file, judge_id, **options).counts()
    root = evaluator.project_dir
    if (root / PROJECT_FILE).is_file():
        rel = Copier(root, Path(file).parent).copy(
            Path(file), f"{INPUTS}/{section}/{owner}{Path(file).suffix}"
        )
        entry = {"path": rel, key: owner}
        entry.update({k: v for k, v in options.items() if v is not None and v != "original_id"})

        def add(raw: dict[str, Any]) -> dict[str, Any]:
            kept = [e for e in raw.get(section, []) if e.get(key) != owner]
            return {**raw, section: [*kept, entry]}

        _update_project_file(root, add)
    return ImportedLabels(counts, normalised, tuple(imported))


def _preview(
    evaluator: MetaEvaluator, file: Path, id_column: str, tasks: list[str] | None
) -> tuple[NormalisedLabels | None, list[str]]:
    """The file's labels that match an allowed label only once normalised, and the tasks imported.

    Read before the import, which checks the file and says what is wrong with it (then: None
    and no tasks).
    """
    from meta_evaluator.data import DataLoader
    from meta_evaluator.eval_task.labels import normalised_labels
    from meta_evaluator.results.external import imported_tasks

    task = evaluator.eval_task
    if task is None:
        return None, []
    try:
        frame = DataLoader.load("labels", file, id_column).data
    except MetaEvaluatorError:
        return None, []  # the import says why
    imported = imported_tasks(frame.columns, task, tasks)
    return normalised_labels(frame, task, imported), imported


def sync_judges(evaluator: MetaEvaluator, *, save: bool) -> list[str]:
    """Register the judges of the project's files: `judges/*.yaml`, and `project.yaml`'s.

    What `meta-evaluator run` does first, so a judges YAML dropped in `judges/` (or a judge
    edited there) is run. A judge of the files replaces the registered judge of its id; judges
    registered otherwise (from Python) stay. With `save`, the registry is saved when it changed.

    Returns:
        The ids of the judges the files hold.

    Raises:
        JudgeConfigError, ProjectFileError: A file has problems (every file's listed), or two
            files give one judge id.
    """
    root = evaluator.project_dir
    columns = _columns(evaluator)
    files = sorted(
        p for p in evaluator.paths.judges_dir.glob("*.yaml") if not p.name.startswith(".")
    )
    failed: list[MetaEvaluatorError] = []
    found: list[tuple[Judge, str]] = []
    for file in files:
        try:
            found += [(judge, str(file)) for judge in read_judges_yaml(file, columns=columns)]
        except JudgeConfigError as exc:
            failed.append(exc)
    project_file = root / PROJECT_FILE
    if project_file.is_file():
        read = {f.resolve() for f in files}
        try:
            for source in read_project_judges(project_file, columns=columns):
                if source.file is not None and source.file.resolve() in read:
                    continue
                where = f"{project_file}: judges[{source.index}]"
                found += [(judge, where) for judge in source.judges]
        except ProjectFileError as exc:
            failed.append(exc)
    seen: dict[str, str] = {}
    for judge, where in found:
        if judge.id in seen:
            failed.append(
                JudgeConfigError(
                    f"judge {judge.id!r} is given twice, by {seen[judge.id]} and by {where}; "
                    "keep one.",
                    judge_id=judge.id,
                    field="id",
                )
            )
        seen[judge.id] = where
    if len(failed) == 1:
        raise failed[0]
    if failed:
        raise JudgeConfigError(
            "\n".join(exc.message for exc in failed),
            errors=[problem for exc in failed for problem in exc.errors],
        )
    registry = evaluator.judge_registry
    changed = [judge for judge, _ in found if registry.get(judge.id) != judge]
    if changed:
        evaluator.add_judges(changed, on_duplicate="overwrite")
        if save:
            evaluator.save_state(include_data=False)
    return [judge.id for judge, _ in found]


def project_metrics(evaluator: MetaEvaluator, metrics: Path | None) -> MetricsConfig:
    """The metrics `score` computes: `--metrics`, else project.yaml's, else `metrics.yaml`.

    `--metrics` may name a metrics file or a `project.yaml` (its `metrics:` is read, as
    `add-task` reads its `task:`).

    Raises:
        MetricConfigError: The metrics file (or project.yaml's metrics) has problems, all
            listed, or the project has no metrics at all.
        ProjectFileError: The project's `project.yaml` is invalid.
    """
    from meta_evaluator.errors import MetricConfigError

    if metrics is not None:
        return read_metrics_file(metrics)
    found = read_project_metrics(evaluator.project_dir)
    if found is not None:
        return found
    root = evaluator.project_dir
    raise MetricConfigError(
        f"{root}: the project has no metrics (no `metrics:` in a {PROJECT_FILE}, no "
        f"{METRICS_FILE}); give them with --metrics FILE (a metrics YAML or a project.yaml), "
        f"a `metrics:` section in {root / PROJECT_FILE}, or a file {root / METRICS_FILE}.",
        path=root / METRICS_FILE,
        field="metrics",
    )


# ----- files -----------------------------------------------------------------------------------


def _columns(evaluator: MetaEvaluator) -> list[str] | None:
    """What prompt placeholders may name: the data's columns, else the task's."""
    if evaluator.data is not None:
        return evaluator.data.columns
    return evaluator.eval_task.columns_shown() if evaluator.eval_task is not None else None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def _update_project_file(root: Path, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Apply `change` to the project's own `project.yaml`, when it has one."""
    path = root / PROJECT_FILE
    if not path.is_file():
        return
    _, model = parse_project_yaml(path)
    write_project_yaml(path, ProjectFile(**change(dump_project_yaml(model))), root=root)
