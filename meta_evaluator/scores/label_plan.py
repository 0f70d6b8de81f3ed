"""How many human labels a study needs: a project's pilot, planned by `stats.label_budget`.

The pilot is what the project holds: one judge's latest complete labels of one single-choice
task beside every annotator's labels of the same rows, on the rows an annotator labelled (read
through `results.row_table`). The
alt-test's settings come from the project's alt-test metric when it has one. `plan_pilot`
runs `stats.label_budget.plan_labels` over it and, when no design reaches the power, says why
from the pilot's own alt-test (the judge far below the humans, or more items than the grid).
`MetaEvaluator.plan_labels` saves the record as `reports/label_plan.json` with its plot.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import polars as pl
from pydantic import BaseModel, ConfigDict, ValidationError

from meta_evaluator._util import listed
from meta_evaluator.data import EvalData
from meta_evaluator.errors import ProjectError, ScoringError, StateError, TaskError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.results.row_table import (
    HUMAN_PREFIX,
    RowSources,
    build_row_table,
    read_row_sources,
)
from meta_evaluator.scores.config import MetricsConfig
from meta_evaluator.scores.run_comparison import comparable_task
from meta_evaluator.stats.alt_test import alt_test_table
from meta_evaluator.stats.checks import check_interval
from meta_evaluator.stats.label_budget import plan_labels
from meta_evaluator.storage import read_json

__all__ = [
    "DEFAULT_EPSILON",
    "LABEL_PLAN_FILE",
    "LABEL_PLAN_PLOT",
    "AltTestSettings",
    "LabelPlanReport",
    "Pilot",
    "PlannedDesign",
    "alt_test_settings",
    "check_plan_options",
    "label_plan_rows",
    "plan_pilot",
    "read_pilot",
]

LABEL_PLAN_FILE = "label_plan.json"
"""The plan's file under the project's `reports/`."""
LABEL_PLAN_PLOT = "label_plan.png"
"""Its plot (power against items, a line per annotator count), beside it."""
DEFAULT_EPSILON = 0.2
"""The alt-test's epsilon when neither the caller nor an alt-test metric of the project sets one."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class AltTestSettings(BaseModel):
    """The alt-test a plan simulates, and where its settings came from."""

    model_config = _FROZEN

    epsilon: float = DEFAULT_EPSILON
    multiplicative_epsilon: bool = False
    q_fdr: float = 0.05
    min_instances_per_human: int = 30
    min_humans_per_instance: int = 2
    source: str = "default"
    """`epsilon` (given by the caller), `metric <name>` (the project's alt-test metric) or
    `default`."""


def alt_test_settings(
    metrics: MetricsConfig | None, task: str, *, epsilon: float | None = None
) -> AltTestSettings:
    """The alt-test of the project's metrics scoring `task` (the first, if several); `epsilon` wins.

    Without such a metric the scorer's defaults apply (epsilon `DEFAULT_EPSILON`).
    """
    from meta_evaluator.scores.metrics import AltTestScorer

    found = [
        m
        for m in (metrics.metrics if metrics is not None else [])
        if isinstance(m.scorer, AltTestScorer) and task in m.task_names
    ]
    settings = AltTestSettings()
    if found:
        scorer = found[0].scorer
        assert isinstance(scorer, AltTestScorer)
        settings = AltTestSettings(
            epsilon=scorer.epsilon,
            multiplicative_epsilon=scorer.multiplicative_epsilon,
            q_fdr=scorer.q_fdr,
            min_instances_per_human=scorer.min_instances_per_human,
            min_humans_per_instance=scorer.min_humans_per_instance,
            source=f"metric {found[0].get_unique_name()}",
        )
    if epsilon is not None:
        check_interval("plan_labels", "epsilon", epsilon, 0.0, 1.0, closed="left")
        settings = settings.model_copy(update={"epsilon": float(epsilon), "source": "epsilon"})
    return settings


@dataclass(frozen=True)
class Pilot:
    """The labels a plan starts from: one judge's and each annotator's, on the data's rows."""

    judge_id: str
    run_id: str | None
    """The judge's run the labels come from."""
    task: str
    annotators: tuple[str, ...]
    """The annotators with a label of the task, sorted."""
    judge: pl.Series
    """The judge's label of each row an annotator labelled (null: none)."""
    humans: tuple[pl.Series, ...]
    """Each annotator's label of those rows (null: none), in `annotators` order."""


def read_pilot(
    results_dir: Path,
    annotations_dir: Path,
    data: EvalData | None,
    eval_task: EvalTask | None,
    *,
    judge_id: str | None = None,
    task: str | None = None,
) -> Pilot:
    """The judge's latest complete labels of `task` and every annotator's, row by row.

    The pilot's rows are those at least one annotator labelled (in data order).

    Raises:
        TaskError: No data or task; `task` unknown; the task (given, or the only labelled one)
            is not single-choice (the plan simulates the alt-test of categorical labels).
        ProjectError: No judge has a complete run; `judge_id` has none (the judges that do are
            listed) or none with labels of the task; several have labels of it and none is
            named.
        ScoringError: Fewer than two annotators labelled the task; the judge labelled none of
            the rows they labelled.
    """
    if data is None:
        problem = "the project has no data yet"
        raise TaskError(
            f"{problem}; add it with add_data.", field="data", problem=problem, needs="data"
        )
    name = comparable_task(eval_task, task)
    assert eval_task is not None  # comparable_task raised otherwise
    if eval_task.task_kind(name) != "single":
        problem = (
            f"task: {name!r} is a multi-label task; a label plan simulates the alt-test of "
            "single-choice labels"
        )
        raise TaskError(
            f"{problem}: choose a single-choice task with task=...",
            field="task",
            problem=problem,
            cli_advice="choose a single-choice task with --task T.",
        )
    sources = read_row_sources(results_dir, annotations_dir, eval_task, data.ids, raw_answers=False)
    chosen = _judge(sources, judge_id, results_dir, name)
    table = build_row_table(data, eval_task, name, chosen, sources, shown=())
    frame = table.frame
    annotators = tuple(
        a for a in table.annotators if frame.get_column(HUMAN_PREFIX + a).null_count() < len(frame)
    )
    if len(annotators) < 2:
        have = f"only {listed(annotators)}" if annotators else "none"
        raise ScoringError(
            f"task {name!r}: a label plan needs the labels of at least two annotators (the "
            f"alt-test compares the judge with each human against the others); the project has "
            f"{have}. Import more with `meta-evaluator import-annotations` or collect them "
            "with `meta-evaluator annotate`.",
            field="annotators",
        )
    # the pilot is the rows a human labelled: a judge run over a million rows, of which the
    # annotators labelled 300, has a pilot of 300
    humans = [HUMAN_PREFIX + a for a in annotators]
    rows = frame.select("judge_label", *humans).filter(
        pl.any_horizontal(pl.col(humans).is_not_null())
    )
    if rows.get_column("judge_label").null_count() == rows.height:
        raise ScoringError(
            f"judge {chosen!r} labelled none of the {rows.height} rows the annotators labelled "
            f"(task {name!r}): the pilot is the rows both labelled. Run the judge over those "
            "rows, or name another judge.",
            field="judge_id",
            judge_id=chosen,
        )
    return Pilot(
        judge_id=chosen,
        run_id=sources.judge_runs.get(chosen),
        task=name,
        annotators=annotators,
        judge=rows.get_column("judge_label"),
        humans=tuple(rows.get_column(h) for h in humans),
    )


def _judge(sources: RowSources, judge_id: str | None, results_dir: Path, task: str) -> str:
    """The judge planned: the one named, else the only one with labels of `task`."""
    judges = sorted(sources.judges)
    if not judges:
        raise ProjectError(
            f"no judge has a complete run in {results_dir}; a label plan starts from a judge's "
            "labels: run one (`meta-evaluator run`) or import its results.",
            path=results_dir,
            field="judge_id",
        )
    if judge_id is not None and judge_id not in sources.judges:
        raise ProjectError(
            f"judge {judge_id!r} has no complete run; judges with one: {listed(judges)}.",
            field="judge_id",
            judge_id=judge_id,
        )
    labelling = [j for j in judges if _has_labels(sources.judges[j], task)]
    others = f"judges with labels of it: {listed(labelling)}" if labelling else "no judge has"
    if judge_id is not None:
        if judge_id not in labelling:
            raise ProjectError(
                f"judge {judge_id!r} has no labels of task {task!r} in its latest complete run; "
                f"{others}.",
                field="judge_id",
                judge_id=judge_id,
            )
        return judge_id
    if not labelling:
        raise ProjectError(
            f"no judge has labels of task {task!r} in its latest complete run (judges with a "
            f"complete run: {listed(judges)}); a label plan starts from a judge's labels of the "
            "task.",
            field="judge_id",
        )
    if len(labelling) > 1:
        problem = f"several judges have labels of task {task!r} ({listed(labelling)})"
        raise ProjectError(
            f"{problem}; name one with judge_id=...",
            field="judge_id",
            problem=problem,
            cli_advice="name one with --judge J.",
        )
    return labelling[0]


def _has_labels(results: pl.DataFrame, task: str) -> bool:
    """Whether a judge's rows hold a label of `task` (an imported judge may have other tasks)."""
    return task in results.columns and results.get_column(task).null_count() < results.height


class PlannedDesign(BaseModel):
    """One design simulated: items x annotators, the human labels it needs, and its figures."""

    model_config = _FROZEN

    items: int
    annotators: int
    labels: int
    """Human labels the design needs (every annotator labels every item)."""
    power: float
    """Share of the simulated studies the alt-test passed."""
    kappa_width: float | None
    """The central 95% range of Cohen's kappa (judge vs. the annotators' majority) over the
    simulated studies; None where kappa was never defined."""


class LabelPlanReport(BaseModel):
    """A project's label plan: the designs simulated, the smallest reaching the power, or why not.

    JSON-serialisable; undefined values are None.
    """

    model_config = _FROZEN

    schema_version: Literal[1] = 1
    judge_id: str
    run_id: str | None
    task: str
    annotators: tuple[str, ...]
    alt_test: AltTestSettings
    target_power: float
    simulations: int
    seed: int
    pilot_items: int
    """Rows of the pilot (labelled by an annotator) the judge labelled: the items resampled."""
    pilot_annotators: int
    judge_advantage: float | None
    """On the whole pilot: the judge's advantage probability rho^f averaged over annotators."""
    human_advantage: float | None
    """The humans' advantage probability rho^h, averaged likewise."""
    designs: tuple[PlannedDesign, ...]
    chosen: PlannedDesign | None
    """The design with the fewest labels (then annotators) whose power reaches the target."""
    reason: str | None = None
    """Why no design reaches the target (None when one does)."""

    def to_json(self) -> dict[str, object]:
        """The record as JSON data."""
        return self.model_dump(mode="json")

    @classmethod
    def load(cls, path: str | Path) -> LabelPlanReport:
        """Read a plan saved as JSON.

        Raises:
            StateError: The file is not a label plan of this version.
            StorageError: It cannot be read.
        """
        try:
            return cls.model_validate(read_json(path))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise StateError(
                f"{path}: not a label plan ({where}: {first['msg']}); run `meta-evaluator "
                "plan-labels` again to rewrite it, or delete it.",
                path=path,
            ) from None


def check_plan_options(
    *, power: float, simulations: int, seed: int, epsilon: float | None = None
) -> None:
    """Check a plan's settings before anything is read.

    Raises:
        ScoringError: `power` not in (0, 1), `simulations` below 10, `seed` negative, or
            `epsilon` not in [0, 1) (each named, with the value given).
    """
    function = "plan_labels"
    check_interval(function, "power", power, 0, 1)
    check_interval(function, "simulations", simulations, 10, math.inf, closed="left", integer=True)
    check_interval(function, "seed", seed, 0, math.inf, closed="left", integer=True)
    if epsilon is not None:
        check_interval(function, "epsilon", epsilon, 0, 1, closed="left")


def plan_pilot(
    pilot: Pilot,
    settings: AltTestSettings,
    *,
    power: float = 0.8,
    simulations: int = 200,
    seed: int = 0,
) -> LabelPlanReport:
    """Simulate the designs of `stats.label_budget.plan_labels` from the pilot; say why if none.

    Raises:
        ScoringError: A setting out of range (`check_plan_options`), or the judge labelled
            none of the pilot's rows.
    """
    check_plan_options(power=power, simulations=simulations, seed=seed)
    plan = plan_labels(
        pilot.judge.to_list(), [h.to_list() for h in pilot.humans], epsilon=settings.epsilon,
        multiplicative_epsilon=settings.multiplicative_epsilon, q_fdr=settings.q_fdr,
        min_instances_per_human=settings.min_instances_per_human,
        min_humans_per_instance=settings.min_humans_per_instance, target_power=power,
        simulations=simulations, seed=seed,
    )  # fmt: skip
    judge_adv, human_adv = _pilot_advantages(pilot, settings)
    designs = tuple(PlannedDesign(**d.as_dict()) for d in plan.designs)
    chosen = None if plan.chosen is None else PlannedDesign(**plan.chosen.as_dict())
    report = LabelPlanReport(
        judge_id=pilot.judge_id, run_id=pilot.run_id, task=pilot.task,
        annotators=pilot.annotators, alt_test=settings, target_power=plan.target_power,
        simulations=plan.simulations, seed=plan.seed, pilot_items=plan.pilot_items,
        pilot_annotators=plan.pilot_annotators, judge_advantage=judge_adv,
        human_advantage=human_adv, designs=designs, chosen=chosen,
    )  # fmt: skip
    if chosen is None:
        report = report.model_copy(update={"reason": _why_not(report, pilot, settings)})
    return report


def _kept(pilot: Pilot, settings: AltTestSettings) -> int:
    """Pilot rows the alt-test keeps: a judge label and enough human labels."""
    labelled = pl.DataFrame([h.is_not_null() for h in pilot.humans]).sum_horizontal()
    keep = pilot.judge.is_not_null() & (labelled >= settings.min_humans_per_instance)
    return int(keep.sum())


def _pilot_advantages(pilot: Pilot, settings: AltTestSettings) -> tuple[float | None, float | None]:
    """rho^f and rho^h of the whole pilot, averaged over annotators (every annotator tested)."""
    if _kept(pilot, settings) == 0:
        return None, None
    result = alt_test_table(
        pilot.judge, list(pilot.humans), list(pilot.annotators), epsilon=settings.epsilon,
        multiplicative_epsilon=settings.multiplicative_epsilon, q_fdr=settings.q_fdr,
        min_instances_per_human=1, min_humans_per_instance=settings.min_humans_per_instance,
        scoring_function="accuracy",
    )  # fmt: skip
    outcomes = list(result.per_annotator.values())
    if not outcomes:
        return None, None
    judge = sum(o.llm_advantage for o in outcomes) / len(outcomes)
    human = sum(o.human_advantage for o in outcomes) / len(outcomes)
    return judge, human


def _why_not(report: LabelPlanReport, pilot: Pilot, settings: AltTestSettings) -> str:
    """Why no design reaches the target power, read from the pilot."""
    eps = settings.epsilon
    if report.judge_advantage is None or report.human_advantage is None:
        return (
            f"no pilot row has the judge's label and {settings.min_humans_per_instance} "
            "annotators' labels, which the alt-test needs; label some rows by several "
            "annotators first."
        )
    rho_f, rho_h = report.judge_advantage, report.human_advantage
    best = max(report.designs, key=lambda d: (d.power, -d.labels))
    if settings.multiplicative_epsilon:
        below = rho_f <= (1.0 - eps) * rho_h
        margin = f"the judge's is at most (1 - epsilon) times the humans', epsilon = {eps:g}"
    else:
        below = rho_h - rho_f >= eps
        margin = f"the humans' lead of {rho_h - rho_f:.2f} is at least epsilon = {eps:g}"
    pilot_figures = (  # words, not rho^f: the line is read in a terminal and in the report
        f"on the pilot the judge's advantage probability is {rho_f:.2f} and the humans' {rho_h:.2f}"
    )
    if below:
        return (
            f"the judge is far below the humans: {pilot_figures}, and {margin}; more labels "
            "only make the alt-test surer that it fails. Improve the judge (or accept a larger "
            "epsilon) before collecting labels."
        )
    return (
        f"{pilot_figures}: the judge is within epsilon = {eps:g} of the humans, but the best "
        f"design tried ({best.items} items x {best.annotators} annotators) reaches power "
        f"{best.power:.2f} of {report.target_power:g}. More items than the grid tries are "
        f"needed (it tries up to twice the pilot's {report.pilot_items} rows): label a larger "
        "pilot and plan again, or aim for a lower power."
    )


def label_plan_rows(report: LabelPlanReport) -> Mapping[int, Sequence[PlannedDesign]]:
    """The designs by annotator count, each list by items (what the table and plot show)."""
    rows: dict[int, list[PlannedDesign]] = {}
    for design in sorted(report.designs, key=lambda d: (d.annotators, d.items)):
        rows.setdefault(design.annotators, []).append(design)
    return rows
