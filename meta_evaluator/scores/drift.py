"""Has a judge changed? Two complete runs of one judge over the same rows, checked for drift.

`check_drift` reads the two runs as `compare-runs` does (`run_comparison.read_run_pair`), takes
the label shift between them (`stats.drift.label_shift`: chi-square, Stuart-Maxwell, PSI, share
changed) and the change in agreement with the humans with its paired bootstrap interval
(`run_comparison.compare_pair`), and holds each figure against the project's `DriftThresholds`
(the `drift:` section of `project.yaml`). The record is a `DriftCheck`; a threshold exceeded is a
drift a scheduler acts on (`meta-evaluator drift` exits with 5). Nothing is written here.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, ClassVar, Literal

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, field_validator

from meta_evaluator._util import json_time, listed
from meta_evaluator._validation import ConfigModel
from meta_evaluator.errors import (
    MetaEvaluatorError,
    MetricConfigError,
    NothingToCompareError,
    ProjectError,
)
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge.run_files import complete_run_ids, now_iso, run_ids, run_judges
from meta_evaluator.scores.config import BootstrapConfig
from meta_evaluator.scores.run_comparison import RunSide, compare_pair, read_run_pair
from meta_evaluator.stats.drift import label_shift
from meta_evaluator.stats.paired import ScoreChange
from meta_evaluator.storage import check_safe_name

__all__ = [
    "FIRST",
    "LATEST",
    "DriftCheck",
    "DriftThresholds",
    "LabelShift",
    "ThresholdCheck",
    "check_drift",
]

FIRST = "first"
"""Names the judge's first complete run (the default baseline)."""
LATEST = "latest"
"""Names the judge's latest complete run (the default run checked)."""

AgreementScore = Literal[
    "accuracy_majority_vote", "cohens_kappa_majority_vote", "accuracy_individual_average"
]


class DriftThresholds(ConfigModel):
    """When a judge counts as drifted: the most each figure may move (null: not checked).

    The `drift:` section of `project.yaml`. A figure above its limit is a threshold exceeded.
    """

    model_config = ConfigDict(
        frozen=True, extra="forbid", hide_input_in_errors=True, use_attribute_docstrings=True
    )
    error_class: ClassVar[type[MetaEvaluatorError]] = MetricConfigError

    max_psi: float | None = Field(0.1, ge=0)
    """The most population stability index of the judge's label shares between the two runs
    (0: the same shares; below 0.1 is read as no shift, above 0.25 as a major one)."""
    max_changed_share: float | None = Field(0.1, ge=0, le=1)
    """The most share of the rows compared whose label changed, in [0, 1]."""
    max_agreement_drop: float | None = Field(0.05, ge=0)
    """The most the agreement with the humans (`agreement`) may fall from the baseline run to
    the run checked (baseline minus checked; not checked without human labels)."""
    agreement: AgreementScore = "accuracy_majority_vote"
    """The agreement score `max_agreement_drop` watches: `accuracy_majority_vote`,
    `cohens_kappa_majority_vote` or `accuracy_individual_average` (as `compare-runs` defines
    them)."""

    @classmethod
    def _error_root(cls, data: dict[str, Any]) -> str:
        return "drift"


_RECORD = ConfigDict(frozen=True, extra="forbid")


class LabelShift(BaseModel):
    """How the judge's label distribution moved (`stats.drift.label_shift`'s figures)."""

    model_config = _RECORD

    rows: int
    labels: list[Any]
    counts_before: list[int]
    counts_after: list[int]
    changed: int
    changed_share: float | None
    chi_square: float | None
    chi_square_df: int | None
    chi_square_p_value: float | None
    stuart_maxwell: float | None
    stuart_maxwell_df: int | None
    stuart_maxwell_p_value: float | None
    psi: float | None


class ThresholdCheck(BaseModel):
    """One threshold held against its figure."""

    model_config = _RECORD

    name: str
    """`max_psi`, `max_changed_share` or `max_agreement_drop`."""
    limit: float | None
    """The threshold (None: not checked)."""
    value: float | None
    """The figure (None: undefined; `reason` says why)."""
    exceeded: bool
    """Whether the figure is above the limit: the threshold is exceeded."""
    reason: str | None = None
    """Why the threshold was not checked."""


class DriftCheck(BaseModel):
    """One drift check of a judge: its two runs, the figures, the thresholds exceeded.

    One line of `reports/drift_history.jsonl` each; undefined figures are None, never 0.
    """

    model_config = _RECORD

    schema_version: Literal[1] = 1
    time: str
    """When the check ran: `2026-11-28T14:35:42Z` (ISO 8601, UTC, whole seconds; lines written
    by earlier versions give microseconds and an offset)."""
    judge_id: str
    task: str
    baseline: RunSide
    against: RunSide
    """The run checked against the baseline."""
    rows: int
    """Rows both runs labelled: the rows compared."""
    only_in_baseline: int
    only_in_against: int
    shift: LabelShift
    humans: tuple[str, ...]
    """The annotators whose labels the agreement is measured with."""
    human_reason: str | None = None
    """Why the agreement figures are None (no human labels)."""
    agreement: tuple[ScoreChange, ...]
    """Each agreement score for both runs (`a`: baseline, `b`: checked), the change b - a and
    its paired bootstrap interval."""
    mcnemar_p: float | None
    thresholds: DriftThresholds
    checks: tuple[ThresholdCheck, ...]
    exceeded: tuple[str, ...]
    """The names of the thresholds exceeded: the judge drifted when there is one."""
    bootstrap: BootstrapConfig

    @field_validator("time")
    @classmethod
    def _iso_time(cls, value: str) -> str:
        dt.datetime.fromisoformat(value)  # ValueError: pydantic names the field
        return value

    @property
    def checked_at(self) -> dt.datetime:
        """`time` as an aware UTC datetime (a time without a zone is taken as UTC)."""
        moment = dt.datetime.fromisoformat(self.time)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.UTC)
        return moment.astimezone(dt.UTC)

    @property
    def drifted(self) -> bool:
        """Whether a threshold was exceeded."""
        return bool(self.exceeded)

    def watched(self) -> ScoreChange | None:
        """The agreement score `thresholds.agreement` names."""
        return next((s for s in self.agreement if s.name == self.thresholds.agreement), None)

    def to_json(self) -> dict[str, Any]:
        """The record as JSON data."""
        return self.model_dump(mode="json")


def check_drift(
    results_dir: Path,
    annotations_dir: Path,
    eval_task: EvalTask | None,
    judge_id: str,
    *,
    baseline: str | None = None,
    against: str | None = None,
    task: str | None = None,
    thresholds: DriftThresholds | None = None,
    bootstrap: BootstrapConfig | None = None,
    ids: pl.Series | None = None,
) -> DriftCheck:
    """Check a judge for drift between two of its complete runs; write nothing.

    Args:
        results_dir: The project's `results/` folder.
        annotations_dir: The project's `annotations/` folder.
        eval_task: The project's task.
        judge_id: The judge.
        baseline: A run id, or `first` (default: the judge's first complete run).
        against: A run id, or `latest` (default: the judge's latest complete run).
        task: The task compared (default: the only task with labels).
        thresholds: The limits (default `DriftThresholds()`).
        bootstrap: How the interval of the agreement change is drawn (default
            `BootstrapConfig()`).
        ids: The data's ids, to order a sharded run's rows.

    Raises:
        NothingToCompareError: The judge has one complete run only (not a mistake: a
            scheduler's first night).
        ProjectError: The judge has no complete run (the judges that do are listed); a run
            that is unknown, unfinished or of another judge; both runs the same.
        UnsafeNameError: The judge or a run id is not a safe file name.
        TaskError: No such labelled task, several and none named, or a run without it.
        ScoringError: The runs share no labelled row.
        MetricConfigError: `thresholds` is not a DriftThresholds.
    """
    check_safe_name(judge_id, field="judge_id")
    limits = DriftThresholds() if thresholds is None else thresholds
    if not isinstance(limits, DriftThresholds):
        raise MetricConfigError(
            f"thresholds must be a DriftThresholds (or None for the defaults); got "
            f"{type(limits).__name__}.",
            field="thresholds",
        )
    first, last = _run_pair(results_dir, judge_id, baseline, against)
    pair = read_run_pair(
        results_dir, annotations_dir, eval_task, first, last, judge_id=judge_id, task=task,
        ids=ids, fields=("baseline", "against"),
    )  # fmt: skip
    comparison = compare_pair(pair, bootstrap)
    items = pair.items
    shift = LabelShift(**label_shift(items["a"].to_list(), items["b"].to_list()))
    checks = _checks(limits, shift, comparison.scores, comparison.human_reason)
    return DriftCheck(
        time=json_time(now_iso()),
        judge_id=judge_id,
        task=pair.task,
        baseline=comparison.run_a,
        against=comparison.run_b,
        rows=comparison.items,
        only_in_baseline=comparison.only_in_a,
        only_in_against=comparison.only_in_b,
        shift=shift,
        humans=comparison.humans,
        human_reason=comparison.human_reason,
        agreement=comparison.scores,
        mcnemar_p=comparison.mcnemar_p,
        thresholds=limits,
        checks=checks,
        exceeded=tuple(c.name for c in checks if c.exceeded),
        bootstrap=comparison.bootstrap,
    )


def _run_pair(
    results_dir: Path, judge_id: str, baseline: str | None, against: str | None
) -> tuple[str, str]:
    """The run ids of the baseline and the run checked, `first` and `latest` resolved."""
    for field, value in (("baseline", baseline), ("against", against)):
        if value is not None and (not isinstance(value, str) or ":" in value):
            raise ProjectError(
                f"{field}: name a run of judge {judge_id!r} by its id alone (or {FIRST!r}, "
                f"{LATEST!r}); got {value!r}. The judge is named once, with --judge.",
                field=field,
            )
    runs = complete_run_ids(results_dir, judge_id)
    named = {FIRST: runs[0] if runs else None, LATEST: runs[-1] if runs else None}
    wanted = [baseline or FIRST, against or LATEST]
    if any(w in named for w in wanted) and not runs:
        judges = sorted(
            {j for r in run_ids(results_dir) for j, done in run_judges(results_dir, r).items()
             if done}
        )  # fmt: skip
        there = f"judges with one: {listed(judges)}" if judges else "no judge has one yet"
        raise ProjectError(
            f"judge {judge_id!r} has no complete run in {results_dir}; {there}.",
            path=results_dir,
            field="judge_id",
            judge_id=judge_id,
        )
    first, last = (named.get(w) or w for w in wanted)
    if first == last and len(runs) == 1:
        raise NothingToCompareError(
            f"nothing to compare yet: judge {judge_id!r} has one complete run ({first!r}), and "
            f"drift compares two; run it again under a new run id, asking every row "
            f"(`evaluator.run_judges({judge_id!r}, run_id='NEW', cache=False)`), then check "
            f"again.",
            run_id=first,
            field="against",
            judge_id=judge_id,
        )
    if first == last:
        raise ProjectError(
            f"drift compares two runs of judge {judge_id!r}, but the baseline and the run "
            f"checked are both {first!r}: name two runs of its {listed(runs)}.",
            field="against",
            judge_id=judge_id,
        )
    return first, last


def _checks(
    limits: DriftThresholds,
    shift: LabelShift,
    scores: tuple[ScoreChange, ...],
    human_reason: str | None,
) -> tuple[ThresholdCheck, ...]:
    """Each threshold against its figure; one whose figure is undefined is not exceeded."""
    watched = next(s for s in scores if s.name == limits.agreement)
    drop = None if watched.difference is None else 0.0 - watched.difference  # never -0.0
    drop_reason = human_reason or watched.reason
    figures = (
        ("max_psi", limits.max_psi, shift.psi, "no row labelled by both runs"),
        ("max_changed_share", limits.max_changed_share, shift.changed_share,
         "no row labelled by both runs"),
        ("max_agreement_drop", limits.max_agreement_drop, drop,
         drop_reason or f"{limits.agreement} is undefined"),
    )  # fmt: skip
    checks = []
    for name, limit, value, why in figures:
        if limit is None:
            checks.append(ThresholdCheck(name=name, limit=None, value=value, exceeded=False,
                                         reason="not set"))  # fmt: skip
        elif value is None:
            checks.append(ThresholdCheck(name=name, limit=limit, value=None, exceeded=False,
                                         reason=why))  # fmt: skip
        else:
            checks.append(
                ThresholdCheck(name=name, limit=limit, value=value, exceeded=value > limit + 1e-12)
            )
    return tuple(checks)
