"""What `meta-evaluator status` prints: a project's data, task, judges and annotators.

Each judge gets one line on its latest run (rows done, outcomes, complete or not, last change,
rows still in submitted batches, whether its configuration changed since); results of judges no
longer in the registry are listed too. Used by `status` and after `init` (`meta_evaluator.cli`).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from meta_evaluator.judge.batch_ledger import BatchRecord
    from meta_evaluator.project import MetaEvaluator


def print_status(project_dir: Path) -> None:
    """Print the project's data, task, judges with their latest run, and annotators."""
    from meta_evaluator.data import SampleEvalData
    from meta_evaluator.project import MetaEvaluator

    evaluator = MetaEvaluator(project_dir, load=True)
    print(f"Project {evaluator.project_dir.resolve()}")
    eval_data = evaluator.data
    if eval_data is None:
        print("  data:   none (add it with MetaEvaluator.add_data)")
    else:
        id_dtype = eval_data.ids.dtype
        print(
            f"  data:   {eval_data.name!r}: {len(eval_data)} rows, id column "
            f"{eval_data.id_column!r} ({id_dtype}), columns {eval_data.columns}"
        )
        if isinstance(eval_data, SampleEvalData):
            print(
                f"          sample of {eval_data.original_size} rows: "
                f"{eval_data.sample_percentage:.0%} of each {eval_data.stratification_columns} "
                f"stratum, seed {eval_data.seed}"
            )
    task = evaluator.eval_task
    if task is None:
        print("  task:   none (add it with MetaEvaluator.add_eval_task)")
    else:
        print(f"  task:   answering method {task.answering_method!r}; shows {task.columns_shown()}")
        required = set(task.get_required_tasks())
        for name in task.task_names:
            labels = task.allowed_labels(name)
            kind = task.task_kind(name)
            shown = "free text" if labels is None else f"{kind}: {labels}"
            print(f"          {name}{' (required)' if name in required else ''}: {shown}")
    judges = evaluator.judge_registry
    rows = len(eval_data) if eval_data is not None else None
    print(f"  judges: {len(judges) or 'none'}")
    for judge in judges.values():
        where = f" at {judge.base_url}" if judge.base_url else ""
        print(
            f"          {judge.id}: {judge.llm_client} {judge.model!r}{where}, prompt "
            f"{judge.prompt.id!r} fills {judge.prompt.placeholders}"
        )
        print(f"            {_latest_run(evaluator, judge.id, rows)}")
    others = sorted(_judges_with_runs(evaluator.paths.results_dir) - set(judges))
    if others:
        print("  results of judges not in the registry (imported):")
        for judge_id in others:
            print(f"          {judge_id}: {_latest_run(evaluator, judge_id, rows)}")
    from meta_evaluator.results.human_results import latest_annotations

    # The outcomes alone: a million rows of labels and time stamps stay on disk.
    humans = latest_annotations(evaluator.paths.annotations_dir, columns=("outcome",))
    print(f"  annotators: {len(humans) or 'none yet'}")
    for annotator_id, human in humans.items():
        counts = human.counts()
        of = f" of {rows} rows" if rows is not None else ""
        print(
            f"          {annotator_id}: {counts['valid']} valid labels{of} "
            f"({counts['invalid']} invalid), run {human.run_id}"
        )


def _judges_with_runs(results_dir: Path) -> set[str]:
    if not results_dir.is_dir():
        return set()
    from meta_evaluator.judge.run_files import judge_of_state_file

    return {judge_of_state_file(p) for p in results_dir.glob("*/*_state.json")}


def _latest_run(evaluator: MetaEvaluator, judge_id: str, rows: int | None) -> str:
    """One line on a judge's latest run (by start): rows done, outcomes, complete, last change."""
    from meta_evaluator.judge import fingerprint
    from meta_evaluator.judge.batch_ledger import BatchLedger
    from meta_evaluator.judge.row_store import read_rows
    from meta_evaluator.judge.run_files import latest_run

    files = latest_run(evaluator.paths.results_dir, judge_id, complete=None)
    if files is None:
        return _sharded_run(evaluator.paths.results_dir, judge_id) or "no runs yet"
    state = files.read_state()
    assert state is not None  # latest_run only finds runs with a state file
    if state.complete and state.counts:
        counts = dict(state.counts)
    else:  # an unfinished run's counts are in its rows only; the last line of an id wins
        counts = _outcome_counts(read_rows(files.rows))
    done = sum(counts.values())
    shown = ", ".join(
        f"{outcome} {counts.get(outcome, 0)}"
        for outcome in ("valid", "invalid", "error", "skipped")
        if outcome != "skipped" or counts.get(outcome)
    )
    changed = max(
        (p.stat().st_mtime for p in (files.rows, files.table, files.state) if p.is_file()),
        default=None,
    )
    when = (
        dt.datetime.fromtimestamp(changed, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        if changed is not None
        else "unknown"
    )
    line = (
        f"latest run {state.run_id}: {done}{f' of {rows}' if rows is not None else ''} rows "
        f"done ({shown}), {'complete' if state.complete else 'unfinished'}, last changed {when}"
    )
    line += _in_batches(BatchLedger(files).pending())
    judge = evaluator.judge_registry.get(judge_id)
    task = evaluator.eval_task
    if judge is not None and task is not None and fingerprint(judge, task) != state.fingerprint:
        line += "; the judge's configuration has changed since, so `run` starts a new run"
    return line


def _outcome_counts(records: list[dict[str, Any]]) -> dict[str, int]:
    """Rows per outcome (`"None"` for a row without one), the last record of an id counting."""
    import polars as pl

    frame = pl.DataFrame(
        {
            "original_id": [r.get("original_id") for r in records],
            "outcome": [r.get("outcome") for r in records],
        },
        strict=False,
    )
    last = frame.unique("original_id", keep="last")
    return {str(o): int(n) for o, n in last.group_by("outcome").len().iter_rows()}


def _sharded_run(results_dir: Path, judge_id: str) -> str | None:
    """One line on a judge's latest sharded run: shards complete, rows in them; None if none."""
    from meta_evaluator.judge.batch_ledger import BatchLedger
    from meta_evaluator.judge.run_files import RunFiles, shard_states

    runs = shard_states(results_dir, judge_id)
    if not runs:
        return None
    run = max(runs, key=lambda r: (max(state.created_at for state in runs[r]), r))
    states = runs[run]
    count = max(state.shard[1] for state in states if state.shard is not None)
    finished = [state for state in states if state.complete]
    rows = sum(sum(state.counts.values()) for state in finished)
    line = (
        f"latest run {run} (sharded): {len(finished)} of {count} shard(s) complete, "
        f"{rows} rows in them"
    )
    pending = [
        record
        for state in states
        for record in BatchLedger(RunFiles(results_dir, run, judge_id, shard=state.shard)).pending()
    ]
    return line + _in_batches(pending)


def _in_batches(pending: list[BatchRecord]) -> str:
    """The rows a run still has in submitted batches, as the end of a status line."""
    if not pending:
        return ""
    held = sum(len(record.ids) for record in pending)
    names = ", ".join(record.batch_id or record.key for record in pending)
    return (
        f"; {held} rows in {len(pending)} submitted batch(es) ({names}): `run --batch` "
        "collects them"
    )
