"""What a checked `project.yaml` holds: its judges, its files of labels, the project it builds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from meta_evaluator.data import EvalData
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge import Judge
from meta_evaluator.project_yaml.schema import AnnotationsEntry, ProjectFile, ResultsEntry
from meta_evaluator.scores import MetricsConfig

__all__ = ["JudgesSource", "LabelsSource", "ProjectSpec"]


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
