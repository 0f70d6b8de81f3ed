"""What a report is made from: the project it reads (`ReportedProject`) and what was read.

`write_report` reads the project once into a `ReportInputs`; every section of the page is a
function of it, so sections never read files themselves unless they say so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import polars as pl

    from meta_evaluator.data import EvalData
    from meta_evaluator.eval_task import EvalTask
    from meta_evaluator.judge import Judge
    from meta_evaluator.judge.run_files import CompleteRun
    from meta_evaluator.results import JudgeResults
    from meta_evaluator.results.human_results import HumanAnnotationResults
    from meta_evaluator.scores.base_scoring_result import BaseScoringResult

__all__ = ["ReportInputs", "ReportedProject"]


class _ReportFolders(Protocol):
    @property
    def reports_dir(self) -> Path: ...
    @property
    def scores_dir(self) -> Path: ...


class ReportedProject(Protocol):
    """What the report reads of a project: a `MetaEvaluator` is one.

    The report sits below the facade (docs/architecture.md), so it names what it needs instead
    of importing the facade.
    """

    @property
    def project_dir(self) -> Path:
        """The project folder."""

    @property
    def paths(self) -> _ReportFolders:
        """The project's folders (`reports_dir`, `scores_dir`)."""

    @property
    def data(self) -> EvalData | None:
        """The evaluation data, or None."""

    @property
    def eval_task(self) -> EvalTask | None:
        """The task, or None."""

    @property
    def judge_registry(self) -> Mapping[str, Judge]:
        """Judge id -> Judge."""

    def load_all_judge_results(self) -> Mapping[str, JudgeResults]:
        """The latest complete results of every judge, by judge id."""

    def load_all_human_results(self) -> Mapping[str, HumanAnnotationResults]:
        """The latest labels of every annotator, by annotator id."""


@dataclass(frozen=True)
class ReportInputs:
    """Everything the report's sections show, read once from the project."""

    project: ReportedProject
    """The project reported (sections that need more than below read it through this)."""
    project_name: str
    """The project folder's name: the report names the project, never a path of this machine."""
    judges: Mapping[str, pl.DataFrame]
    """Each judge's latest rows (`RESULT_COLUMNS` and the task's labels at least), by judge id."""
    humans: Mapping[str, Any]
    """Each annotator's latest labels (`HumanAnnotationResults`: ids, outcomes, statuses and
    the task's labels at least), by annotator id."""
    scores: Mapping[str, list[BaseScoringResult]]
    """`<scorer>/<metric>` -> the saved results by judge (`load_scores`)."""
    score_table: list[dict[str, Any]]
    """`score_rows(scores)`: the rows of scores.csv."""
    judge_table: list[dict[str, Any]]
    """`judge_rows(...)`: the rows of judges.csv."""
    reasons: list[dict[str, Any]]
    """`reason_rows(judges)`: why rows were not valid, per judge and status."""
    plots: list[Path] = field(default_factory=list)
    """The PNG plots saved under `scores/`, sorted."""
    judge_runs: Mapping[str, CompleteRun] = field(default_factory=dict)
    """Each judge's latest complete run (the one `judges` holds the rows of), by judge id."""
    vote_sets: frozenset[str] = frozenset()
    """The ids of `judges` that are the votes imported with preference pairs, not judges
    (`results.pair_votes`): not counted or tabled as judges."""
    has_prices: bool = False
    """Whether the project has a `prices.yaml` (the judges table says so where a cost is blank)."""

    @property
    def data(self) -> EvalData | None:
        """The project's evaluation data, or None."""
        return self.project.data

    @property
    def eval_task(self) -> EvalTask | None:
        """The project's task, or None."""
        return self.project.eval_task
