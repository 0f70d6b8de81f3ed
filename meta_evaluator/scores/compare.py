"""compare: score every judge against the humans with every configured metric.

For each metric and judge: take the usable labels (valid rows, and the valid tasks of partial
rows), shape them per aggregation mode, keep the ids both sides have, call the scorer, add
bootstrap intervals when asked, and write `scores/<scorer>/<unique_name>/<judge>_result.json`;
then let the scorer draw its plots over all judges. A scorer that cannot score a judge gives a
result with `error` (logged at ERROR, and warned about at the end); a misconfigured metric
raises before anything is written. Each such log record carries the judge id as its attribute
`NOT_SCORED`, so a caller that says the failures itself (`meta-evaluator score`) can filter the
records out rather than say each failure twice.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

import numpy as np
import polars as pl

from meta_evaluator.errors import MetaEvaluatorWarning, MetricConfigError, ScoringError
from meta_evaluator.results.external import is_imported_labels
from meta_evaluator.results.human_results import HumanAnnotationResults
from meta_evaluator.results.judge_results import JudgeResults
from meta_evaluator.results.pair_votes import is_pair_votes, voted_tasks
from meta_evaluator.scores._frames import first_label, judge_frame, no_valid_rows
from meta_evaluator.scores._scorer_frames import HumanLabels, JudgeFrames
from meta_evaluator.scores.base_scorer import (
    BaseScorer,
    ResamplingStatistic,
    ScoringCall,
    call_scorer,
)
from meta_evaluator.scores.base_scoring_result import ScoringResult
from meta_evaluator.scores.config import BootstrapConfig, MetricConfig, MetricsConfig
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.human_baseline import BaselineCache, HumanBaseline
from meta_evaluator.storage import check_safe_name

if TYPE_CHECKING:
    from meta_evaluator.data import EvalData
    from meta_evaluator.eval_task import EvalTask
    from meta_evaluator.eval_task.eval_task import TaskKind

__all__ = [
    "NOT_SCORED",
    "HumanResultsInput",
    "IncompleteScoresWarning",
    "JudgeResultsInput",
    "ScoreTable",
    "ScoringColumns",
    "compare",
    "left_out_reason",
    "scoring_columns",
]

logger = logging.getLogger(__name__)

NOT_SCORED = "not_scored"
"""The attribute of the log record of a judge a metric could not score: the judge's id."""

#: unique metric name -> (its config, one result per judge)
ScoreTable = dict[str, tuple[MetricConfig, list[ScoringResult]]]

#: Judge results by judge id (as `load_all_judge_results()` returns them), or a list of them;
#: a bare results frame keyed by judge id is accepted too.
JudgeResultsInput: TypeAlias = Mapping[str, JudgeResults | pl.DataFrame] | Sequence[JudgeResults]
#: Human annotations by annotator id (as `load_all_human_results()` returns them), or a list.
HumanResultsInput: TypeAlias = (
    Mapping[str, HumanAnnotationResults | pl.DataFrame] | Sequence[HumanAnnotationResults]
)


class IncompleteScoresWarning(MetaEvaluatorWarning):
    """Some judge could not be scored by some metric; its result carries the reason in `error`."""


class ScoringColumns(NamedTuple):
    """Which result columns `compare` reads, of judges and of annotators, and which as codes."""

    judges: list[str]
    humans: list[str]
    categories: list[str]
    """Text columns of few distinct values, best held as polars Categoricals."""


def scoring_columns(config: MetricsConfig, task: EvalTask) -> ScoringColumns:
    """The result columns `compare` reads with `config`, and those best held as categories.

    Loading only these leaves a run's raw answers, tokens, run ids and time stamps on disk:
    most of a result table's memory. Judges' error messages name why a judge has no valid
    row, and their fingerprints whether the rows are the votes imported with preference pairs
    (`left_out_reason`); scorers that look at invalid rows also get the raw answer.
    Annotators' rows need their ids, outcomes and labels alone. The outcome, the status, the
    fingerprint and single-choice labels repeat a few values: read as polars Categoricals they
    take 4 bytes a row instead of 16 (scorers get labels as text unless they take categories:
    `BaseScorer.label_categories`).
    Error messages stay text: there can be as many as rows.
    """
    humans = ["original_id", "outcome", "status", *task.task_names]
    judges = [*humans, "error_message", "fingerprint"]  # the fingerprint: pair votes or not
    if any(m.scorer.include_invalid for m in config.metrics):
        judges.append("llm_raw_response_content")
    judges += list(dict.fromkeys(c for m in config.metrics for c in m.scorer.result_columns))
    single = [t for t in task.task_names if task.task_kind(t) == "single"]
    return ScoringColumns(judges, humans, ["outcome", "status", "fingerprint", *single])


async def compare(
    config: MetricsConfig,
    judge_results: JudgeResultsInput,
    human_results: HumanResultsInput | None,
    *,
    scores_dir: Path | None = None,
    task: EvalTask | None = None,
    data: EvalData | None = None,
) -> ScoreTable:
    """Score each judge with each metric; write the results and plots under `scores_dir`.

    Args:
        config: The metrics.
        judge_results: JudgeResults by judge id (or a list of them).
        human_results: HumanAnnotationResults by annotator id (or a list of them).
        scores_dir: The project's scores folder; nothing is written when None.
        task: The project's EvalTask, to check task names and know free-text tasks.
        data: The project's EvalData, for scorers that join data columns.

    Returns:
        unique metric name -> (metric config, one result per judge, in judge order).

    Raises:
        MetricConfigError: A task name that does not exist, or a scorer that cannot score a
            task's labels; raised before any score is computed or written.
        ScoringError: No judge results, or no human annotations for scorers that need them.
    """
    if not isinstance(config, MetricsConfig):
        raise MetricConfigError(
            f"compare: expected a MetricsConfig, got {type(config).__name__}; wrap the metrics "
            "as MetricsConfig(metrics=[...])."
        )
    judges, judge_runs = _frames_by_owner(judge_results, "judge results")
    humans, human_runs = _frames_by_owner(human_results, "human annotations")
    if not judges:
        raise ScoringError("compare: there are no judge results to score; run or import judges.")
    if not humans and any(m.scorer.min_human_annotators > 0 for m in config.metrics):
        raise ScoringError(
            "compare: there are no human annotations; import them with "
            "add_external_annotation_results (or annotate) before scoring.",
            problem="there are no human annotations to score the judges against",
            needs="annotations",
        )
    _check_config(config, judges, humans, task)
    labels = HumanLabels(humans)
    for metric in config.metrics:  # every humans' frame, so their results can be let go
        for group in _task_groups(metric):
            with contextlib.suppress(ScoringError):  # kept, and raised for each judge later
                labels.prepare(metric.scorer, group, _call_mode(metric))
    # Results handed over (compare_async's own loading) are freed as they are done with.
    del judge_results, human_results
    humans.clear()
    names = [metric.get_unique_name() for metric in config.metrics]
    scored: dict[str, list[ScoringResult]] = {name: [] for name in names}
    baselines = BaselineCache()  # the humans' own agreement: once per metric and item set
    # Judge by judge: a judge's frames are shared by its metrics, then let go (bounded memory).
    for judge_id in list(judges):
        frames = JudgeFrames(judge_id, judges.pop(judge_id), labels, data)
        for metric, name in zip(config.metrics, names, strict=True):
            reason = left_out_reason(metric, frames.frame)
            if reason is not None:
                logger.info("%s: %r left out: %s", name, judge_id, reason)
                if scores_dir is not None:  # a result of an earlier scoring would stay shown
                    _forget(scores_dir, metric, name, judge_id)
                continue
            result = await _score_judge(metric, name, frames, task, baselines)
            # what was scored, so that a report can tell when a newer run or label set came
            result = result.model_copy(
                update={"run_id": judge_runs.get(judge_id), "human_run_ids": human_runs or None}
            )
            if result.error is not None:
                logger.error(
                    "%s: judge %r not scored: %s", name, judge_id, result.error,
                    extra={NOT_SCORED: judge_id},
                )  # fmt: skip
            scored[name].append(result)
    table: ScoreTable = {}
    failures: list[str] = []
    for metric, name in zip(config.metrics, names, strict=True):
        results = scored[name]
        failures += [f"{name}/{r.judge_id}: {r.error}" for r in results if r.error is not None]
        if scores_dir is not None and results:
            metric.scorer.save_results(results, scores_dir, name)
            metric.scorer.aggregate_results(results, scores_dir, name)
        table[name] = (metric, results)
    if failures:
        warnings.warn(
            f"{len(failures)} score(s) could not be computed:\n" + "\n".join(failures),
            IncompleteScoresWarning,
            stacklevel=2,
        )
    return table


def left_out_reason(metric: MetricConfig, frame: pl.DataFrame) -> str | None:
    """Why a metric leaves a judge's rows out, or None when it scores them.

    Labels imported from a file (one per row) are left out of a scorer that needs several
    answers per row; the votes imported with preference pairs (`results.pair_votes`) of a
    scorer that needs both orders of a pair (they were cast on the original order only), and
    of a metric on tasks they hold no vote for. A judge's own rows are always scored: a judge
    that cannot be is told so in its result's `error`.
    """
    if metric.scorer.needs_samples and is_imported_labels(frame):
        return (
            "labels imported from a file, one answer per row; this metric needs a judge run "
            "with several answers per row (consistency)"
        )
    if not is_pair_votes(frame):
        return None
    if metric.scorer.needs_both_orders:
        return (
            "votes imported with the preference pairs, cast on the original order only; this "
            "metric needs a judge that answered both orders"
        )
    tasks = [*metric.task_names]
    if not voted_tasks(frame, tasks):
        return (
            f"votes imported with the preference pairs, none on {', '.join(tasks)} (they vote "
            "on their own traits)"
        )
    return None


def _forget(scores_dir: Path, metric: MetricConfig, name: str, judge_id: str) -> None:
    """Remove a judge's result file of this metric, left by an earlier scoring."""
    with contextlib.suppress(FileNotFoundError):
        (scores_dir / metric.scorer.scorer_name / name / f"{judge_id}_result.json").unlink()


def _frames_by_owner(
    results: JudgeResultsInput | HumanResultsInput | None, what: str
) -> tuple[dict[str, pl.DataFrame], dict[str, str]]:
    """{id: frame} from result objects (or frames keyed by id), and {id: run} where known."""
    if results is None:
        return {}, {}
    items: list[tuple[str | None, object]] = (
        list(results.items()) if isinstance(results, Mapping) else [(None, r) for r in results]
    )
    out: dict[str, pl.DataFrame] = {}
    runs: dict[str, str] = {}
    for key, value in items:
        frame, ident, run = _frame_and_id(value, key)
        if frame is None or ident is None:
            raise ScoringError(
                f"compare: {what} must be JudgeResults / HumanAnnotationResults (or polars "
                f"frames keyed by id); got {type(value).__name__}."
            )
        # the id names a file under scores/
        check_safe_name(ident, field="judge_id" if what == "judge results" else "annotator_id")
        if "outcome" not in frame.columns or "original_id" not in frame.columns:
            raise ScoringError(
                f"compare: {what} of {ident!r} have no 'original_id' and 'outcome' columns."
            )
        out[ident] = frame
        if run is not None:
            runs[ident] = run
    return out, runs


def _frame_and_id(
    value: object, key: str | None
) -> tuple[pl.DataFrame | None, str | None, str | None]:
    """A result object's frame, id (its own wins over the key it was given under) and run.

    A bare frame's run is its `run_id` column's, when it holds one run only.
    """
    if isinstance(value, JudgeResults):
        return value.results_data, value.judge_id, value.run_id
    if isinstance(value, HumanAnnotationResults):
        return value.results_data, value.annotator_id, value.run_id
    if isinstance(value, pl.DataFrame) and isinstance(key, str):
        run = None
        if "run_id" in value.columns:
            found = value.get_column("run_id").drop_nulls().unique()
            run = str(found[0]) if found.len() == 1 else None
        return value, key, run
    return None, None, None


def _task_groups(metric: MetricConfig) -> list[list[str]]:
    if metric.aggregation_mode is TaskAggregationMode.MULTITASK:
        return [[t] for t in metric.task_names]
    return [list(metric.task_names)]


def _call_mode(metric: MetricConfig) -> TaskAggregationMode:
    """The mode a scorer is told: each task of a multitask metric is scored as single."""
    if metric.aggregation_mode is TaskAggregationMode.MULTITASK:
        return TaskAggregationMode.SINGLE
    return metric.aggregation_mode


def _check_config(
    config: MetricsConfig,
    judges: Mapping[str, pl.DataFrame],
    humans: Mapping[str, pl.DataFrame],
    task: EvalTask | None,
) -> None:
    """Every task exists, and every scorer can score the labels it will get."""
    problems = []
    known = list(task.task_names) if task is not None else None
    for i, metric in enumerate(config.metrics):
        where = f"metrics[{i}] ({metric.get_unique_name()})"
        reference = metric.scorer.reference_task
        if reference is not None and metric.aggregation_mode is TaskAggregationMode.MULTILABEL:
            problems.append(
                f"{where}: scorer {metric.scorer.scorer_name!r} compares each task with the "
                f"humans' {reference!r}; use 'single' or 'multitask', not 'multilabel'"
            )
        if known is not None:
            unknown = [t for t in [*metric.task_names, *([reference] if reference else [])]
                       if t not in known]  # fmt: skip
            if unknown:
                problems.append(f"{where}: unknown task(s) {unknown}; the task has {known}")
                continue
            assert task is not None
            found = metric.scorer.task_problems(task, metric.task_names)
            problems += [f"{where}: {problem}" for problem in found]
        for group in _task_groups(metric):
            sample = _sample(judges, group, _call_mode(metric))
            if sample is None:
                sample = _sample(humans, group, _call_mode(metric))
            if sample is not None and not metric.scorer.can_score_task(sample):
                problems.append(
                    f"{where}: scorer {metric.scorer.scorer_name!r} cannot score labels of "
                    f"{'+'.join(group)} like {sample!r} ({_call_mode(metric).value}); choose "
                    "another scorer or aggregation"
                )
    if problems:
        raise MetricConfigError(
            f"MetricsConfig cannot be used ({len(problems)} problem(s)):\n" + "\n".join(problems)
        )


def _sample(frames: Mapping[str, pl.DataFrame], tasks: list[str], mode: TaskAggregationMode) -> Any:
    for frame in frames.values():
        if not all(t in frame.columns for t in tasks):
            continue
        label = first_label(judge_frame(frame, tasks, mode, judge_id="?"))
        if label is not None:
            return label
    return None


def _task_kind(task: EvalTask | None, tasks: list[str]) -> TaskKind | None:
    if task is None or len(tasks) != 1:
        return None
    return task.task_kind(tasks[0])


async def _score_judge(
    metric: MetricConfig,
    name: str,
    frames: JudgeFrames,
    task: EvalTask | None,
    baselines: BaselineCache,
) -> ScoringResult:
    scorer = metric.scorer
    judge_id, frame = frames.judge_id, frames.frame
    mode = _call_mode(metric)
    task_label = "+".join(metric.task_names)
    per_task: dict[str, ScoringResult] = {}
    prepared: dict[str, ScoringCall] = {}
    errors: dict[str, str] = {}
    nothing = no_valid_rows(frame, judge_id, include_invalid=scorer.include_invalid)
    for group in _task_groups(metric) if nothing is None else []:
        tasks = "+".join(group)
        try:
            judge_data, human_data, shared = frames.prepare(scorer, group, mode)
            call = ScoringCall(
                judge_data, human_data, tasks, judge_id, mode,
                metric.annotator_aggregation, _task_kind(task, group), shared,
            )  # fmt: skip
            per_task[tasks] = await call_scorer(scorer, call)
        except ScoringError as exc:
            errors[tasks] = str(exc)
            continue
        prepared[tasks] = call
    if nothing is not None:
        errors[task_label] = nothing
    if not per_task:
        return ScoringResult(
            scorer_name=scorer.scorer_name,
            task_name=task_label,
            judge_id=judge_id,
            scores={},
            metadata={"errors": errors} if len(errors) > 1 else {},
            aggregation_mode=metric.aggregation_mode,
            num_comparisons=0,
            failed_comparisons=max(1, len(errors)),
            error="; ".join(errors.values()),
        )
    baseline = await baselines.baseline(name, scorer, prepared, metric.bootstrap)
    if metric.aggregation_mode is TaskAggregationMode.MULTITASK:
        if baseline is not None:
            per_task = {t: _with_baseline(r, baseline.per_task[t]) for t, r in per_task.items()}
        result = _average(metric, judge_id, per_task, errors)
    else:
        result = next(iter(per_task.values()))
    if baseline is not None:
        result = _with_baseline(result, baseline.overall)
    if metric.bootstrap is not None:  # replaces the scorer's own intervals of those scores
        intervals = await _intervals(scorer, prepared, metric, result)
        own = result.confidence_intervals or {}
        result = result.model_copy(update={"confidence_intervals": {**own, **intervals}})
    # errors never enter a metric, but they are counted beside it
    outcomes = dict(frame.group_by("outcome").len().iter_rows())
    counted = {o: int(outcomes.get(o, 0)) for o in ("valid", "invalid", "error")}
    return _clean(result.model_copy(update={"judge_outcomes": counted}))


def _with_baseline(result: ScoringResult, baseline: HumanBaseline) -> ScoringResult:
    """`result` with the humans' baseline in its metadata (`human_baseline`)."""
    metadata = {**result.metadata, "human_baseline": baseline.as_metadata()}
    return result.model_copy(update={"metadata": metadata})


def _average(
    metric: MetricConfig,
    judge_id: str,
    per_task: dict[str, ScoringResult],
    errors: dict[str, str],
) -> ScoringResult:
    """One result from a multitask metric: scores averaged, each task's result kept."""
    keys = list(dict.fromkeys(k for r in per_task.values() for k in r.scores))
    scores = {k: _mean_of([r.scores.get(k) for r in per_task.values()]) for k in keys}
    breakdown: dict[str, Any] = {
        name: {
            "scores": r.scores,
            "metadata": r.metadata,
            "num_comparisons": r.num_comparisons,
            "confidence_intervals": r.confidence_intervals,
        }
        for name, r in per_task.items()
    }
    for name, message in errors.items():
        breakdown[name] = {"error": message}
    return ScoringResult(
        scorer_name=metric.scorer.scorer_name,
        task_name="+".join(metric.task_names),
        judge_id=judge_id,
        scores=scores,
        metadata={"per_task": breakdown, "scoring_method": "average_across_tasks"},
        aggregation_mode=TaskAggregationMode.MULTITASK,
        num_comparisons=sum(r.num_comparisons for r in per_task.values()),
        failed_comparisons=len(errors) + sum(r.failed_comparisons for r in per_task.values()),
    )


def _mean_of(values: list[Any]) -> Any:
    """Mean of numbers (undefined ones skipped), per key of dicts, all() of booleans."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    if all(isinstance(v, bool) for v in present):
        return all(present)
    if all(isinstance(v, dict) for v in present):
        keys = list(dict.fromkeys(k for v in present for k in v))
        return {k: _mean_of([v.get(k) for v in present]) for k in keys}
    numbers = [float(v) for v in present if _is_number(v) and np.isfinite(float(v))]
    if len(numbers) != len(present):
        return None
    return sum(numbers) / len(numbers)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)


async def _intervals(
    scorer: BaseScorer,
    prepared: dict[str, ScoringCall],
    metric: MetricConfig,
    result: ScoringResult,
) -> dict[str, tuple[float | None, float | None]]:
    """Percentile intervals of the numeric scores, resampling items.

    Every task of a multitask metric sees the same resamples, so the interval of the average
    is the average's own.
    """
    from meta_evaluator.stats.bootstrap import percentile_interval, resample_indices, weight_chunks

    boot: BootstrapConfig = metric.bootstrap  # type: ignore[assignment]
    keys = [k for k, v in result.scores.items() if _is_number(v)]
    if not keys:
        return {}
    ids = pl.concat([scorer.resampled_ids(c) for c in prepared.values()]).unique().sort()
    statistics: list[ResamplingStatistic] = []
    for call in prepared.values():
        stat = scorer.resampling_statistic(call, ids)
        if stat is None:
            break
        statistics.append(stat)
    replicates: dict[str, list[np.ndarray[Any, Any]]] = {k: [] for k in keys}
    if len(statistics) == len(prepared):
        for weights in weight_chunks(ids.len(), boot.n_resamples, boot.seed):
            per_task = [s(weights) for s in statistics]
            for k in keys:
                stack = [p[k] for p in per_task if k in p]
                if stack:
                    replicates[k].append(_nanmean_rows(np.column_stack(stack)))
    else:
        indices = resample_indices(ids.len(), boot.n_resamples, boot.seed)
        rows = []
        for row in indices:
            values = [await _rescore(scorer, call, ids, row) for call in prepared.values()]
            rows.append({k: _mean_of([v.get(k) for v in values]) for k in keys})
        for k in keys:
            replicates[k].append(
                np.array([np.nan if r[k] is None else float(r[k]) for r in rows], dtype=float)
            )
    return {
        k: percentile_interval(np.concatenate(v), boot.confidence_level)
        for k, v in replicates.items()
        if v
    }


def _nanmean_rows(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(np.nanmean(values.astype(np.float64), axis=1))


async def _rescore(
    scorer: BaseScorer, call: ScoringCall, ids: pl.Series, row: np.ndarray[Any, Any]
) -> dict[str, Any]:
    """One resample for a scorer without a resampling statistic: items drawn get fresh ids."""
    drawn = pl.DataFrame(
        {"original_id": ids.gather(row.tolist()), "_item": pl.int_range(len(row), eager=True)}
    )

    def take(frame: pl.DataFrame) -> pl.DataFrame:
        joined = drawn.join(frame, on="original_id", how="inner")
        return joined.drop("original_id").rename({"_item": "original_id"}).select(frame.columns)

    drawn_call = dataclasses.replace(
        call,
        judge_data=take(call.judge_data),
        human_data=take(call.human_data),
        task_name="resample",
        judge_id="resample",
        shared={},  # other frames: nothing in common with the call's
    )
    try:
        result = await call_scorer(scorer, drawn_call)
    except ScoringError:
        return {}
    return {k: v for k, v in result.scores.items() if _is_number(v)}


def _clean(result: ScoringResult) -> ScoringResult:
    """NaN and infinite values become None: undefined is null, never a number."""
    from meta_evaluator.scores.base_scoring_result import _finite

    return result.model_copy(
        update={"scores": _finite(result.scores), "metadata": _finite(result.metadata)}
    )
