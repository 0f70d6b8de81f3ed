"""Building, in a folder of its own, the project of ours that a 0.3.3 project folder becomes.

The data, task and judges go through the facade (every check a new project passes), the judge
runs and annotation sets through the writers of `results/`: each stored label is checked again
by the label rule, since 0.3.3 kept answers it should have refused (a multi-label vector of the
wrong length, a label not allowed). What cannot be carried over is said, never dropped quietly.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from meta_evaluator.data import EvalData
from meta_evaluator.errors import JudgeConfigError, MetricConfigError, StateError, UnsafeNameError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.eval_task.labels import check_frame
from meta_evaluator.judge import Judge, Prompt
from meta_evaluator.judge.run_files import RunFiles, RunState
from meta_evaluator.migrate._metrics import scored_metrics
from meta_evaluator.migrate._read import (
    ResultsFile,
    V033Judge,
    V033State,
    read_data,
    read_results,
    read_state,
)
from meta_evaluator.migrate._reuse import reuse_keys
from meta_evaluator.project import MetaEvaluator
from meta_evaluator.project_yaml import METRICS_FILE
from meta_evaluator.results.external import align_ids, filled_table
from meta_evaluator.results.human_results import annotation_schema, save_annotations
from meta_evaluator.results.judge_results import results_schema
from meta_evaluator.scores.yaml_config import read_metrics_yaml
from meta_evaluator.storage import check_safe_name, sha256, write_yaml

__all__ = ["AnnotationsMigrated", "Built", "RunMigrated", "build_project"]

STATE_FILE = "main_state.json"


@dataclass(frozen=True)
class RunMigrated:
    """One judge run carried over."""

    judge_id: str
    run_id: str
    counts: Mapping[str, int]
    """Rows per outcome, as checked now."""
    changed: int
    """Rows whose outcome differs from 0.3.3's status (0.3.3 kept answers it should have
    refused, or refused answers the label rule reads)."""
    reused: int = 0
    """Rows `run` reuses: they carry the migrated judge's fingerprint and our prompt hash."""
    not_reused: str | None = None
    """Why `run` asks some or all of the rows again (`migrate._reuse`); None when it asks none."""


@dataclass(frozen=True)
class AnnotationsMigrated:
    """One annotator's set carried over."""

    annotator_id: str
    run_id: str
    counts: Mapping[str, int]


@dataclass(frozen=True)
class Built:
    """What was built, for the report."""

    data_name: str | None
    data_rows: int
    data_format: str | None
    tasks: list[str]
    judges: list[str]
    judges_not_kept: dict[str, str]
    """Judge id -> why it could not be registered (its settings are written for editing)."""
    not_kept_yaml: str | None
    """Those judges as a judges YAML file, to fix and load (None when there are none)."""
    runs: list[RunMigrated] = field(default_factory=list)
    annotations: list[AnnotationsMigrated] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def build_project(old: Path, new: Path) -> Built:
    """Write into the empty folder `new` the project of ours that the 0.3.3 folder `old` is.

    Raises:
        StateError: A 0.3.3 file does not read as 0.3.3 wrote it.
        DataError, TaskError, IdError: The data or task does not pass our checks (0.3.3 let it
            through); the message names the file and what to fix.
    """
    state = read_state(old / STATE_FILE)
    evaluator = MetaEvaluator(new, load=False)
    notes: list[str] = []
    data = _data(old, state, notes)
    if data is not None:
        evaluator.add_data(data)
    task = EvalTask(**state.eval_task) if state.eval_task is not None else None
    if task is not None:
        evaluator.add_eval_task(task)
    kept, not_kept = [], {}
    for judge in state.judge_registry.values():
        try:
            evaluator.add_judge(
                judge.id, judge.llm_client, judge.model,
                Prompt(id=judge.prompt.id, prompt=judge.prompt.prompt),
                temperature=judge.temperature, extra_headers=judge.extra_headers or {},
            )  # fmt: skip
            kept.append(judge.id)
        except (JudgeConfigError, UnsafeNameError) as exc:
            not_kept[judge.id] = exc.message
    fmt = state.data.data_format if state.data is not None else None
    evaluator.save_state(data_format=fmt)
    built = Built(
        data_name=data.name if data is not None else None,
        data_rows=len(data) if data is not None else 0,
        data_format=fmt,
        tasks=task.task_names if task is not None else [],
        judges=kept,
        judges_not_kept=not_kept,
        not_kept_yaml=_judges_yaml(
            [j for j in state.judge_registry.values() if j.id in not_kept], not_kept
        ),
        notes=notes,
    )
    runs = read_results(old / "results", "*_state.json")
    sets = read_results(old / "annotations", "*_metadata.json")
    if (runs or sets) and (data is None or task is None):
        raise StateError(
            f"{old / STATE_FILE}: the project has results or annotations but no "
            f"{'data' if data is None else 'task'}; 0.3.3 could not score them either. Add "
            "it with 0.3.3 (save_state), then migrate.",
            path=old / STATE_FILE,
        )
    if data is None or task is None:
        return built
    taken: set[tuple[str, str]] = set()
    registry = evaluator.judge_registry
    for run in runs:
        judge_id = run.state.judge_id
        theirs = state.judge_registry.get(judge_id) if judge_id is not None else None
        ours = registry.get(judge_id) if judge_id is not None else None
        built.runs.append(_judge_run(run, data, task, new / "results", taken, (theirs, ours)))
    for annotation_set in sets:
        built.annotations.append(_annotation_set(annotation_set, data, task, new, taken))
    if (old / "scores").is_dir():
        notes.append(_metrics_file(old, new, task))
    return built


def _metrics_file(old: Path, new: Path, task: EvalTask) -> str:
    """Write `metrics.yaml` for the metrics 0.3.3's `scores/` shows; the note saying so.

    Not when the folder has a `metrics.yaml` already (the user's: it stays, and is used).
    """
    scored = scored_metrics(old / "scores", task.task_names)
    kept = "scores/ is kept aside, not converted"
    command = f"`meta-evaluator score {old}`"
    left = "".join(f"; left out {why}" for why in scored.left_out)
    if (old / METRICS_FILE).exists():
        return f"{kept}: {command} scores again with the folder's own {METRICS_FILE}{left}"
    if not scored.entries:
        return (
            f"{kept}, and none of its metrics could be read back{left}; give them with "
            f"`meta-evaluator score {old} --metrics FILE` (docs/scoring.md) or compare_async"
        )
    path = new / METRICS_FILE
    write_yaml(path, {"metrics": list(scored.entries)}, root=new)
    try:
        read_metrics_yaml(path)
    except MetricConfigError as exc:  # 0.3.3 wrote what no metrics file of ours can say
        path.unlink()
        return f"{kept}; its metrics could not be written as {METRICS_FILE} ({exc.message})"
    names = ", ".join(f"{e['scorer']} ({e['display_name']})" for e in scored.entries)
    return (
        f"{kept}; {METRICS_FILE} lists the {len(scored.entries)} metric(s) it shows ({names}), "
        f"with the scorers' default arguments (0.3.3 did not save them: check them): "
        f"{command} scores them again, into the same folders{left}"
    )


def _data(old: Path, state: V033State, notes: list[str]) -> EvalData | None:
    if state.data is None:
        return None
    meta = state.data
    frame = read_data(old / "data", meta)
    source = old / "data" / meta.data_file
    if meta.type == "SampleEvalData":
        notes.append(
            f"the data is a sample ({meta.sample_name}: {meta.sample_percentage} by "
            f"{meta.stratification_columns}, seed {meta.seed}) whose original size 0.3.3 did "
            "not record; it is kept as the project's data"
        )
    return EvalData(meta.name, frame, meta.id_column, source=str(source))


def _judges_yaml(judges: list[V033Judge], reasons: Mapping[str, str]) -> str | None:
    """The judges not kept, as a judges YAML file with why in comments."""
    if not judges:
        return None
    entries = []
    for judge in judges:
        entry: dict[str, Any] = {
            "id": judge.id,
            "llm_client": judge.llm_client,
            "model": judge.model,
            "prompt": judge.prompt.prompt,
        }
        if judge.temperature is not None:
            entry["temperature"] = judge.temperature
        if judge.extra_headers:
            entry["extra_headers"] = dict(judge.extra_headers)
        entries.append(entry)
    why = "".join(
        f"#   {judge_id}: {line}\n"
        for judge_id, reason in reasons.items()
        for line in reason.splitlines()[-1:]
    )
    return (
        "# Judges of the meta-evaluator 0.3.3 project that could not be registered as they were\n"
        f"# written:\n{why}# Fix each entry, then load it: "
        "evaluator.load_judges_from_yaml('judges-not-migrated.yaml').\n"
        + yaml.safe_dump({"judges": entries}, sort_keys=False, allow_unicode=True)
    )


def _utc(stamp: dt.datetime) -> str:
    """0.3.3's local, naive time stamp as our UTC ISO 8601 text."""
    aware = stamp if stamp.tzinfo is not None else stamp.astimezone()
    return aware.astimezone(dt.UTC).isoformat(timespec="microseconds")


def _run_id(record: ResultsFile, owner: str, taken: set[tuple[str, str]]) -> str:
    """0.3.3's run id, made unique for its owner (a judge or annotator) and a safe name."""
    base = record.state.run_id
    try:
        check_safe_name(base, field="run_id")
    except UnsafeNameError:
        base = "run_" + sha256(record.path)[:12]
    run_id, number = base, 1
    while (owner, run_id) in taken:
        number += 1
        run_id = f"{base}_{number}"
    taken.add((owner, run_id))
    return run_id


def _labels_frame(record: ResultsFile, data: EvalData, task: EvalTask) -> pl.DataFrame:
    """The rows' ids (the data's dtype) and task columns (absent ones null)."""
    rows = record.rows
    if "original_id" not in rows.columns:
        raise StateError(f"{record.path}: its rows have no original_id.", path=record.path)
    columns = [pl.col("original_id")] + [
        pl.col(t) if t in rows.columns else pl.lit(None).alias(t) for t in task.task_names
    ]
    return align_ids(rows.select(columns), "original_id", data, record.path)


def _checked(frame: pl.DataFrame, task: EvalTask) -> pl.DataFrame:
    """`original_id`, then each row checked by the label rule (`check_frame`'s columns)."""
    return check_frame(frame, task).insert_column(0, frame.get_column("original_id"))


def _judge_run(
    record: ResultsFile,
    data: EvalData,
    task: EvalTask,
    results_dir: Path,
    taken: set[tuple[str, str]],
    judges: tuple[V033Judge | None, Judge | None],
) -> RunMigrated:
    """Write one 0.3.3 run as ours; `judges` are its judge in 0.3.3's registry and ours."""
    state = record.state
    if state.judge_id is None:
        raise StateError(f"{record.path}: names no judge_id.", path=record.path)
    judge_id = state.judge_id
    run_id = _run_id(record, judge_id, taken)
    frame = _labels_frame(record, data, task)
    checked = _checked(frame, task)
    old = record.rows.get_column("status") if "status" in record.rows.columns else None
    old_status = old if old is not None else pl.Series("status", ["success"] * frame.height)
    failed = old_status.is_in(["llm_error", "other_error"])
    skipped = old_status == "skipped"
    message = (
        record.rows.get_column("error_message").cast(pl.String)
        if "error_message" in record.rows.columns
        else pl.Series([None] * frame.height, dtype=pl.String)
    )
    checked = checked.with_columns(
        pl.when(failed).then(pl.lit("error")).when(skipped).then(pl.lit("skipped"))
        .otherwise(pl.col("outcome")).alias("outcome"),
        pl.when(failed).then(pl.lit("llm_error")).when(skipped).then(pl.lit("skipped"))
        .otherwise(pl.col("status")).alias("status"),
        pl.when(failed | skipped).then(message).otherwise(pl.col("error_message"))
        .alias("error_message"),
        *(
            pl.when(failed | skipped).then(None).otherwise(pl.col(t)).alias(t)
            for t in task.task_names
        ),
    )  # fmt: skip
    for ours, theirs in (
        ("llm_raw_response_content", "llm_raw_response_content"),
        ("llm_prompt_tokens", "llm_prompt_tokens"),
        ("llm_completion_tokens", "llm_completion_tokens"),
        ("llm_call_duration_seconds", "llm_call_duration_seconds"),
    ):
        if theirs in record.rows.columns:
            checked = checked.with_columns(record.rows.get_column(theirs).alias(ours))
    unmatched = f"migrated-0.3.3:{sha256(record.path.parent / state.data_file)[:16]}"
    reuse = reuse_keys(record, frame.get_column("original_id"), *judges, data, task, unmatched)
    source = reuse.fingerprint
    checked = checked.with_columns(pl.Series("prompt_hash", reuse.prompt_hashes, pl.String))
    stamp = _utc(state.timestamp_local)
    values = {"judge_id": judge_id, "run_id": run_id, "fingerprint": source, "timestamp": stamp,
              "cached": False}  # fmt: skip
    table = filled_table(checked, results_schema(task, data.ids.dtype), values)
    files = RunFiles(results_dir, run_id, judge_id)
    files.write_table(table)
    counts = {
        o: int((table.get_column("outcome") == o).sum())
        for o in ("valid", "invalid", "error", "skipped")
    }
    files.write_state(
        RunState(
            judge_id,
            run_id,
            source,
            stamp,
            stamp,
            counts,
            llm_client=state.llm_client,
            model=state.model_used,
        )
    )
    was_valid = old_status == "success"
    changed = int((was_valid != (table.get_column("outcome") == "valid")).sum())
    return RunMigrated(judge_id, run_id, counts, changed, reuse.reused, reuse.problem)


def _annotation_set(
    record: ResultsFile,
    data: EvalData,
    task: EvalTask,
    new: Path,
    taken: set[tuple[str, str]],
) -> AnnotationsMigrated:
    state = record.state
    if state.annotator_id is None:
        raise StateError(f"{record.path}: names no annotator_id.", path=record.path)
    annotator_id = state.annotator_id
    run_id = _run_id(record, "annotator:" + annotator_id, taken)
    frame = _labels_frame(record, data, task)
    checked = _checked(frame, task)
    stamp = _utc(state.timestamp_local)
    values = {"annotator_id": annotator_id, "run_id": run_id, "timestamp": stamp}
    table = filled_table(checked, annotation_schema(task, data.ids.dtype), values)
    source = f"migrated-0.3.3:{sha256(record.path.parent / state.data_file)[:16]}"
    found = save_annotations(
        new / "annotations", run_id, annotator_id, table, source=source, created_at=stamp
    )
    return AnnotationsMigrated(annotator_id, run_id, found.counts())
