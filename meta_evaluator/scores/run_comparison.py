"""Two runs on the same rows: which labels flipped, and did agreement with the humans change.

The runs are of one judge (a new prompt, a re-run) or of two judges (two models); the record
is a `RunComparison`.

`read_run_pair` reads both runs and the annotators' labels of one task and aligns them on
`original_id` (a `RunPair`, which `scores.drift` reads too); `compare_pair` hands its plain
label columns to `stats.paired.label_change`; `compare_runs` does both and writes nothing.
`MetaEvaluator.compare_runs` calls it and saves the record under `reports/compare-runs/`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl
from pydantic import BaseModel, ConfigDict, ValidationError

from meta_evaluator._util import json_time, listed
from meta_evaluator.errors import ProjectError, ScoringError, StateError, TaskError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.results.human_results import latest_annotations
from meta_evaluator.results.runs import RunRef, RunRows, read_run
from meta_evaluator.scores._frames import human_frame, judge_frame
from meta_evaluator.scores.config import BootstrapConfig
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.stats.paired import Direction, ScoreChange, label_change
from meta_evaluator.storage import read_json

__all__ = [
    "COMPARISONS_FOLDER",
    "SCORE_TITLES",
    "FlippedRow",
    "RunComparison",
    "RunPair",
    "RunSide",
    "comparable_task",
    "compare_pair",
    "compare_runs",
    "read_comparisons",
    "read_run_pair",
]

COMPARISONS_FOLDER = "compare-runs"
"""The folder under the project's `reports/` that holds every saved comparison."""

SCORE_TITLES = {
    "accuracy_majority_vote": "accuracy (humans' majority)",
    "cohens_kappa_majority_vote": "Cohen's kappa (humans' majority)",
    "accuracy_individual_average": "accuracy (mean over humans)",
}
"""How the command line and the report name each score of a comparison."""

_COLUMNS = ("original_id", "outcome", "status", "fingerprint")
"""The columns of a run read besides the task's (a million raw answers stay on disk)."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class RunSide(BaseModel):
    """One side of a comparison: a judge's complete run."""

    model_config = _FROZEN

    run_id: str
    judge_id: str
    fingerprint: str | None
    """Digest of the judge configuration that answered: equal on both sides for a plain re-run."""
    completed_at: str | None
    """When the run completed: `2026-11-28T14:35:42Z` (ISO 8601, UTC, whole seconds)."""
    rows: int
    """Rows in the run."""
    labelled: int
    """Rows with a usable label of the task (valid rows, and partial rows that answered it)."""


class FlippedRow(BaseModel):
    """A row whose label changed between the runs."""

    model_config = _FROZEN

    id: int | str
    """The row's `original_id`, in the data's own type."""
    a: Any
    """Its label in run A."""
    b: Any
    """Its label in run B."""
    human: Any = None
    """The humans' majority label (None when no human labelled the row; for a multi-label task
    the outcomes at least half of the humans chose, in the task's order: docs/scoring.md)."""
    direction: Direction
    """`toward` the humans' majority (wrong, then right), `away` (right, then wrong), `neither`
    (wrong both times) or `unrated` (no human label)."""


class RunComparison(BaseModel):
    """What changed from run A to run B on the rows both labelled; JSON-serialisable.

    Undefined figures are None with the reason (`human_reason`, `mcnemar_reason`, each score's
    `reason`), never 0. Differences are B - A: positive means B agrees more with the humans.
    """

    model_config = _FROZEN

    schema_version: Literal[1] = 1
    key: str
    """The comparison's name: its file is `reports/compare-runs/<key>.json`."""
    task: str
    """The task whose labels are compared."""
    run_a: RunSide
    run_b: RunSide
    items: int
    """Rows both runs labelled: the rows compared."""
    only_in_a: int
    """Rows only run A labelled (B's answer was invalid, failed or missing)."""
    only_in_b: int
    """Rows only run B labelled."""
    flipped: tuple[int | str, ...]
    """The ids of the rows whose label changed, ascending."""
    changes: tuple[FlippedRow, ...]
    """Each flipped row with both labels, the humans' majority and the direction."""
    toward: int | None
    """Flipped rows that moved toward the humans' majority (wrong → right)."""
    away: int | None
    """Flipped rows that moved away from it (right → wrong)."""
    neither: int | None
    """Flipped rows wrong both times."""
    unrated: int
    """Flipped rows no human labelled."""
    mcnemar_p: float | None
    """McNemar's exact two-sided p-value: is the change in rows right against the majority real?"""
    mcnemar_reason: str | None = None
    """Why `mcnemar_p` is None."""
    humans: tuple[str, ...]
    """The annotators whose labels of the task were compared with, sorted."""
    human_reason: str | None = None
    """Why the figures measured against the humans are None (no human labels)."""
    scores: tuple[ScoreChange, ...]
    """Accuracy and Cohen's kappa against the humans' majority, and accuracy averaged over
    individual humans, for both runs, with the change and its paired bootstrap interval."""
    bootstrap: BootstrapConfig
    """How the intervals were drawn."""

    def side_names(self) -> tuple[str, str]:
        """How each side is named to a reader: its run id, `run:judge` when the judges differ."""
        a, b = self.run_a, self.run_b
        if a.judge_id == b.judge_id and a.run_id != b.run_id:
            return a.run_id, b.run_id
        return f"{a.run_id}:{a.judge_id}", f"{b.run_id}:{b.judge_id}"

    def to_json(self) -> dict[str, Any]:
        """The record as JSON data (ids keep their type)."""
        return self.model_dump(mode="json")

    @classmethod
    def load(cls, path: str | Path) -> RunComparison:
        """Read a comparison saved as JSON.

        Raises:
            StateError: The file is not a comparison of this version.
            StorageError: It cannot be read.
        """
        try:
            return cls.model_validate(read_json(path))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:3]
            )
            raise StateError(
                f"{path}: not a run comparison ({problems}); run `meta-evaluator compare-runs` "
                "again to rewrite it, or delete it.",
                path=path,
            ) from None


def read_comparisons(folder: Path) -> list[RunComparison]:
    """Every comparison saved in `folder` (`reports/compare-runs/`), by file name.

    Raises:
        StateError: A file is not a run comparison.
        StorageError: A file cannot be read.
    """
    if not folder.is_dir():
        return []
    return [RunComparison.load(path) for path in sorted(folder.glob("*.json"))]


def comparable_task(eval_task: EvalTask | None, task: str | None) -> str:
    """The task whose labels two runs are compared on: `task`, else the only labelled one.

    Of several labelled tasks, the default is the project's required task when it names
    exactly one (set as `required_tasks`): the task its judges are asked for first.

    Raises:
        TaskError: No task; `task` is not one of the project's tasks, or is free text; no task
            given while several have labels and not one alone is required (they are listed).
    """
    if eval_task is None:
        problem = "the project has no task yet"
        raise TaskError(
            f"{problem}; add one with add_eval_task.", field="task", problem=problem, needs="task"
        )
    names = eval_task.task_names
    labelled = [t for t in names if eval_task.task_kind(t) != "free_text"]
    if task is not None:
        if not isinstance(task, str) or task not in names:
            raise TaskError(
                f"task: the project has no task {task!r}; its tasks: {listed(names)}.", field="task"
            )
        if task not in labelled:
            raise TaskError(
                f"task: {task!r} is free text; runs are compared on labels: choose one of "
                f"{listed(labelled)}.",
                field="task",
            )
        return task
    if not labelled:
        raise TaskError(
            f"the project's tasks {listed(names)} are all free text; runs are compared on labels.",
            field="task",
        )
    required = [t for t in eval_task.required_tasks or [] if t in labelled]  # not free text
    if len(labelled) > 1 and len(required) == 1:
        return required[0]
    if len(labelled) > 1:
        problem = (
            f"the project has several labelled tasks {listed(labelled)} and no single required "
            "one among them"
        )
        raise TaskError(
            f"{problem}; choose one with task=...",
            field="task",
            problem=problem,
            cli_advice="choose one with --task T.",
        )
    return labelled[0]


@dataclass(frozen=True)
class RunPair:
    """Two complete runs read back and aligned on the rows both labelled, with the humans.

    What `compare_runs` compares, and what `drift` measures the label shift on
    (`scores.drift`).
    """

    task: str
    """The task whose labels are compared."""
    key: str
    """The comparison's name (`_key`): `<A>__<B>[__<judge>][__<task>]`."""
    sides: tuple[RunSide, RunSide]
    """Run A and run B."""
    items: pl.DataFrame
    """`original_id`, `a`, `b`: the rows both runs labelled, ids ascending."""
    humans: tuple[str, ...]
    """The annotators who labelled the task, sorted."""
    human_labels: tuple[pl.Series, ...]
    """Each annotator's label of every row of `items` (null where none), in `humans` order."""
    outcomes: tuple[str, ...] | None = None
    """A multi-label task's outcomes in the task's order, the order its majority lists them
    (None for another task)."""


def read_run_pair(
    results_dir: Path,
    annotations_dir: Path,
    eval_task: EvalTask | None,
    run_a: str,
    run_b: str,
    *,
    judge_id: str | None = None,
    task: str | None = None,
    ids: pl.Series | None = None,
    fields: tuple[str, str] = ("run_a", "run_b"),
) -> RunPair:
    """Read two complete runs and the annotators' labels of one task, aligned on the ids.

    Arguments and errors as in `compare_runs` (which compares what this reads); `fields` are
    the names errors give the two runs (the caller's arguments).
    """
    name = comparable_task(eval_task, task)
    assert eval_task is not None  # comparable_task raised otherwise
    columns = [*_COLUMNS, name]
    refs = [
        RunRef.parse(run, field=field) for run, field in zip((run_a, run_b), fields, strict=True)
    ]
    sides = [
        read_run(results_dir, ref, judge_id=judge_id, field=field, ids=ids, columns=columns)
        for ref, field in zip(refs, fields, strict=True)
    ]
    a, b = sides
    if (a.run_id, a.judge_id) == (b.run_id, b.judge_id):
        raise ProjectError(
            f"{fields[1]}: {run_b!r} is the same run as {fields[0]} {run_a!r} (judge "
            f"{a.judge_id!r}); name another run, or another judge of it as {a.run_id}:JUDGE.",
            field=fields[1],
            judge_id=a.judge_id,
        )
    labels = [_labels(side, name) for side in sides]
    items = _aligned(labels[0], labels[1], sides)
    humans, human_labels = _human_columns(annotations_dir, name, items)
    multilabel = eval_task.task_kind(name) == "multilabel"
    return RunPair(
        task=name,
        key=_key(sides, name, eval_task),
        sides=(_side(sides[0], labels[0]), _side(sides[1], labels[1])),
        items=items,
        humans=tuple(humans),
        human_labels=tuple(human_labels),
        outcomes=tuple(eval_task.allowed_labels(name) or ()) if multilabel else None,
    )


def compare_runs(
    results_dir: Path,
    annotations_dir: Path,
    eval_task: EvalTask | None,
    run_a: str,
    run_b: str,
    *,
    judge_id: str | None = None,
    task: str | None = None,
    bootstrap: BootstrapConfig | None = None,
    ids: pl.Series | None = None,
) -> RunComparison:
    """Compare two complete runs on one task, against the project's annotators; write nothing.

    Args:
        results_dir: The project's `results/` folder.
        annotations_dir: The project's `annotations/` folder.
        eval_task: The project's task.
        run_a: The first run: `RUN` or `RUN:JUDGE`.
        run_b: The second run, likewise.
        judge_id: The judge of a side that names none (needed when its run holds several).
        task: The task compared (default: the only task with labels).
        bootstrap: How to draw the intervals (default `BootstrapConfig()`).
        ids: The data's ids, to order a sharded run's rows.

    Raises:
        ProjectError: An unknown run or judge (what exists is listed), an unfinished run, or
            the same run of the same judge twice.
        TaskError: No such labelled task, or a run without labels of it.
        ScoringError: The runs share no row with a label, or their ids differ in type.
    """
    config = _bootstrap(bootstrap)
    pair = read_run_pair(
        results_dir, annotations_dir, eval_task, run_a, run_b, judge_id=judge_id, task=task,
        ids=ids,
    )  # fmt: skip
    return compare_pair(pair, config)


def compare_pair(pair: RunPair, bootstrap: BootstrapConfig | None = None) -> RunComparison:
    """What changed from run A to run B of `pair` (`stats.paired.label_change`).

    Raises:
        ScoringError: `bootstrap` is not a BootstrapConfig.
    """
    config = _bootstrap(bootstrap)
    items = pair.items
    change = label_change(
        items.get_column("a"), items.get_column("b"), pair.human_labels,
        n_resamples=config.n_resamples, confidence_level=config.confidence_level, seed=config.seed,
        order=pair.outcomes,
    )  # fmt: skip
    at = pl.Series(change.changed, dtype=pl.Int64)
    ids_changed, a_changed, b_changed = (items.get_column(c).gather(at).to_list()
                                         for c in ("original_id", "a", "b"))  # fmt: skip
    side_a, side_b = pair.sides
    return RunComparison(
        key=pair.key,
        task=pair.task,
        run_a=side_a,
        run_b=side_b,
        items=items.height,
        only_in_a=side_a.labelled - items.height,
        only_in_b=side_b.labelled - items.height,
        flipped=tuple(ids_changed),
        changes=tuple(
            FlippedRow(id=i, a=a, b=b, human=list(h) if isinstance(h, tuple) else h, direction=d)
            for i, a, b, h, d in zip(
                ids_changed, a_changed, b_changed, change.majority, change.directions, strict=True
            )
        ),
        toward=change.toward,
        away=change.away,
        neither=change.neither,
        unrated=change.unrated,
        mcnemar_p=change.mcnemar_p,
        mcnemar_reason=change.mcnemar_reason,
        humans=pair.humans,
        human_reason=change.human_reason,
        scores=change.scores,
        bootstrap=config,
    )


def _bootstrap(bootstrap: BootstrapConfig | None) -> BootstrapConfig:
    if bootstrap is None:
        return BootstrapConfig()
    if not isinstance(bootstrap, BootstrapConfig):
        raise ScoringError(
            f"bootstrap must be a BootstrapConfig (or None for the default); got "
            f"{type(bootstrap).__name__}.",
            field="bootstrap",
        )
    return bootstrap


def _labels(side: RunRows, task: str) -> pl.DataFrame:
    """`original_id`, `label` of the side's rows with a usable label of `task`."""
    if task not in side.frame.columns:
        raise TaskError(
            f"run {side.run_id!r} of judge {side.judge_id!r} has no labels of task {task!r}; it "
            "was run with another task. Compare runs made with the project's task.",
            field="task",
            judge_id=side.judge_id,
        )
    return judge_frame(side.frame, [task], TaskAggregationMode.SINGLE, judge_id=side.judge_id)


def _aligned(a: pl.DataFrame, b: pl.DataFrame, sides: list[RunRows]) -> pl.DataFrame:
    """`original_id`, `a`, `b`: the rows both sides labelled, ids ascending."""
    names = [f"run {s.run_id!r} (judge {s.judge_id!r})" for s in sides]
    left, right = a.schema["original_id"], b.schema["original_id"]
    if a.height and b.height and left != right:
        raise ScoringError(
            f"{names[0]} has ids of type {left}, {names[1]} of type {right}; compare runs made "
            "on the same project data."
        )
    items = (
        a.rename({"label": "a"})
        .join(b.rename({"label": "b"}), on="original_id", how="inner")
        .sort("original_id")
    )
    if items.height == 0:
        raise ScoringError(
            f"{names[0]} and {names[1]} have no row in common with a usable label ({a.height} "
            f"and {b.height} labelled rows); compare runs made on the same data."
        )
    return items


def _human_columns(
    annotations_dir: Path, task: str, items: pl.DataFrame
) -> tuple[list[str], list[pl.Series]]:
    """The annotators who labelled `task`, sorted, and each one's labels on the items' rows."""
    found = latest_annotations(annotations_dir, columns=["original_id", "outcome", "status", task])
    frames = {h: r.results_data for h, r in found.items() if task in r.results_data.columns}
    if not frames:
        return [], []
    labels = human_frame(frames, [task], TaskAggregationMode.SINGLE)
    ids = items.select("original_id")
    if labels.schema["original_id"] != ids.schema["original_id"]:
        raise ScoringError(
            f"task {task!r}: the runs' ids are {ids.schema['original_id']}, the annotators' "
            f"{labels.schema['original_id']}; import both against the same project data."
        )
    humans = sorted(frames)
    columns = []
    for human in humans:
        own = labels.filter(pl.col("human_id") == human).select("original_id", "label")
        placed = ids.join(own, on="original_id", how="left", maintain_order="left")
        columns.append(placed.get_column("label").rename(human))
    return humans, columns


def _said_time(stamp: str | None) -> str | None:
    """A run state's completion time as JSON gives times (kept as it is when not ISO 8601)."""
    try:
        return json_time(stamp)
    except ValueError:
        return stamp


def _side(side: RunRows, labels: pl.DataFrame) -> RunSide:
    return RunSide(
        run_id=side.run_id,
        judge_id=side.judge_id,
        fingerprint=side.fingerprint,
        completed_at=_said_time(side.completed_at),
        rows=side.frame.height,
        labelled=labels.height,
    )


def _key(sides: list[RunRows], task: str, eval_task: EvalTask) -> str:
    """The comparison's name, `<A>__<B>[__<judge>][__<task>]`.

    A side is its run id (`run+judge` when the judges differ); the judge is added when a run
    holds several, the task when several tasks have labels.
    """
    a, b = sides
    if a.judge_id == b.judge_id:
        key = f"{a.run_id}__{b.run_id}"
        if len(a.judges_in_run) > 1 or len(b.judges_in_run) > 1:
            key += f"__{a.judge_id}"
    else:
        key = f"{a.run_id}+{a.judge_id}__{b.run_id}+{b.judge_id}"
    labelled = [t for t in eval_task.task_names if eval_task.task_kind(t) != "free_text"]
    return key + (f"__{task}" if len(labelled) > 1 else "")
