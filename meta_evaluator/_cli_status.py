"""What `meta-evaluator status` prints (or `status --json`): data, task, judges, annotators.

Each judge gets one line on its latest run (rows done, outcomes, complete or not, last change,
rows still in submitted batches, whether its configuration changed since); results of judges no
longer in the registry are listed too; then whether the saved scores are those of each judge's
latest run and the current labels (`reports.freshness`). Used by `status` and after `init`
(`meta_evaluator.cli`).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from meta_evaluator._util import json_time

if TYPE_CHECKING:
    from meta_evaluator.judge import Judge
    from meta_evaluator.judge.batch_ledger import BatchRecord
    from meta_evaluator.project import MetaEvaluator
    from meta_evaluator.reports.freshness import StaleScores
    from meta_evaluator.results.human_results import HumanAnnotationResults


def print_status(project_dir: Path) -> None:
    """Print the project's data, task, judges with their latest run, and annotators."""
    from meta_evaluator.data import SampleEvalData
    from meta_evaluator.project import MetaEvaluator

    evaluator = MetaEvaluator(project_dir, load=True)
    print(f"Project {evaluator.project_dir.resolve()}")
    eval_data = evaluator.data
    if eval_data is None:
        print(
            "  data:   none (add it with `meta-evaluator add-data DIR FILE --id-column C`, or "
            "MetaEvaluator.add_data)"
        )
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
        print(
            "  task:   none (add it with `meta-evaluator add-task DIR task.yaml`, or "
            "MetaEvaluator.add_eval_task)"
        )
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
    if judges:
        print(f"  judges: {len(judges)}")
    else:
        print(
            "  judges: none (add them with `meta-evaluator add-judges DIR judges.yaml`, or "
            "MetaEvaluator.add_judge)"
        )
    for judge in judges.values():
        where = _where(judge)
        print(
            f"          {judge.id}: {judge.llm_client} {judge.model!r}{where}, prompt "
            f"{judge.prompt.id!r} fills {judge.prompt.placeholders}"
        )
        print(f"            {_latest_run(evaluator, judge.id, rows)}")
    others = sorted(_judges_with_runs(evaluator.paths.results_dir) - set(judges))
    if others:
        from meta_evaluator.judge.run_files import latest_complete_runs
        from meta_evaluator.results.pair_votes import is_pair_votes_source

        latest = latest_complete_runs(evaluator.paths.results_dir)
        print("  results of judges not in the registry (imported):")
        for judge_id in others:
            line = _latest_run(evaluator, judge_id, rows)
            if judge_id in latest and is_pair_votes_source(latest[judge_id].fingerprint):
                line += "; the trait votes imported with preference pairs, not a judge"
            print(f"          {judge_id}: {line}")
    humans = _annotators(evaluator)
    print(f"  annotators: {len(humans) or 'none yet'}")
    for annotator_id, human in humans.items():
        counts = human.counts()
        of = f" of {rows} rows" if rows is not None else ""
        tasks = _labelled_tasks(human, evaluator)
        print(
            f"          {annotator_id}: {counts['valid']} valid labels{of} "
            f"({counts['invalid']} invalid), run {human.run_id}"
            + (f", labels of {', '.join(tasks)}" if tasks else "")
        )
    for line in _scores_lines(evaluator, project_dir, {h: r.run_id for h, r in humans.items()}):
        print(line)


def _annotators(evaluator: MetaEvaluator) -> dict[str, HumanAnnotationResults]:
    """Each annotator's outcomes and task columns (time stamps and messages stay on disk)."""
    from meta_evaluator.results.human_results import latest_annotations

    task = evaluator.eval_task
    tasks = task.task_names if task is not None else []
    return latest_annotations(
        evaluator.paths.annotations_dir, columns=("outcome", *tasks), categories=tasks
    )


def _labelled_tasks(human: HumanAnnotationResults, evaluator: MetaEvaluator) -> list[str]:
    """The tasks an annotator gave at least one label of (an import takes every task column)."""
    import polars as pl

    task = evaluator.eval_task
    frame = human.results_data
    names = [t for t in (task.task_names if task is not None else []) if t in frame.columns]
    if not names:
        return []
    has = frame.select(pl.col(t).is_not_null().any() for t in names).row(0)
    return [t for t, any_label in zip(names, has, strict=True) if any_label]


def _stale(evaluator: MetaEvaluator, human_runs: dict[str, str]) -> tuple[int, list[StaleScores]]:
    """(metrics with saved scores, the judges whose scores are out of date)."""
    from meta_evaluator.judge.run_files import latest_complete_runs
    from meta_evaluator.reports import load_scores
    from meta_evaluator.reports.freshness import stale_scores
    from meta_evaluator.results.pair_votes import is_pair_votes_source

    scores = load_scores(evaluator.paths.scores_dir)
    latest = latest_complete_runs(evaluator.paths.results_dir)
    votes = {j for j, run in latest.items() if is_pair_votes_source(run.fingerprint)}
    return len(scores), stale_scores(scores, latest, human_runs or None, unscored_ok=votes)


def _scores_lines(
    evaluator: MetaEvaluator, project_dir: Path, human_runs: dict[str, str]
) -> list[str]:
    """`scores:` and, when they are out of date, one line per judge and what to run."""
    import shlex

    from meta_evaluator.reports.freshness import fix_commands

    metrics, stale = _stale(evaluator, human_runs)
    if not metrics:
        return ["  scores: none yet"]
    if not stale:
        return [f"  scores: {metrics} metric(s), of each judge's latest run and current labels"]
    lines = [f"  scores: {metrics} metric(s), OUT OF DATE for {len(stale)} judge(s):"]
    lines += [f"          {s.judge_id}: {'; '.join(s.reasons)}" for s in stale]
    lines.append(f"          {fix_commands(shlex.quote(str(project_dir)))}")
    return lines


def status_json(project_dir: Path) -> dict[str, Any]:
    """What `status --json` prints: the project's data, task, judges and annotators as data.

    Each judge's latest run has its rows per outcome, `cached` (answered from the response
    cache) and `cost_usd` (by `prices.yaml`, when the project has one and the run is complete).
    """
    from meta_evaluator.llm.prices import read_prices
    from meta_evaluator.project import MetaEvaluator

    evaluator = MetaEvaluator(project_dir, load=True)
    data, task = evaluator.data, evaluator.eval_task
    prices = read_prices(evaluator.project_dir / "prices.yaml")
    registry = evaluator.judge_registry
    judges: dict[str, Any] = {}
    imported = sorted(_judges_with_runs(evaluator.paths.results_dir) - set(registry))
    for judge_id in [*registry, *imported]:
        judge = registry.get(judge_id)
        entry: dict[str, Any] = {"registered": judge is not None}
        if judge is not None:
            entry.update(llm_client=judge.llm_client, model=judge.model, **_address_json(judge))
        info = latest_run_info(evaluator, judge_id)
        entry["latest_run"] = None if info is None else _run_json(judge_id, info, judge, prices)
        judges[judge_id] = entry
    humans = _annotators(evaluator)
    metrics, stale = _stale(evaluator, {h: r.run_id for h, r in humans.items()})
    return {
        "command": "status",
        "project": str(evaluator.project_dir.resolve()),
        "data": None
        if data is None
        else {
            "name": data.name,
            "rows": len(data),
            "id_column": data.id_column,
            "id_dtype": str(data.ids.dtype),
            "columns": data.columns,
        },
        "task": None
        if task is None
        else {
            "answering_method": task.answering_method,
            "columns_shown": task.columns_shown(),
            "tasks": {
                name: {
                    "kind": task.task_kind(name),
                    "labels": task.allowed_labels(name),
                    "required": name in task.get_required_tasks(),
                }
                for name in task.task_names
            },
        },
        "judges": judges,
        "annotators": {
            annotator_id: {
                **human.counts(),
                "run_id": human.run_id,
                "tasks": _labelled_tasks(human, evaluator),
            }
            for annotator_id, human in humans.items()
        },
        "scores": {
            "metrics": metrics,
            "out_of_date": {
                s.judge_id: {
                    "latest_run": s.latest_run,
                    "scored_runs": list(s.scored_runs),
                    "reasons": list(s.reasons),
                }
                for s in stale
            },
        },
    }


def _run_json(judge_id: str, info: dict[str, Any], judge: Any, prices: Any) -> dict[str, Any]:
    """A latest run for `status --json`: counts, cached rows and cost read from its table."""
    import polars as pl

    counts = info["counts"]
    cached, cost = None, None
    if info["table"] is not None:
        from meta_evaluator.reports import judge_rows

        frame = pl.read_parquet(info["table"])
        cached = int(frame["cached"].sum()) if "cached" in frame.columns else 0
        if prices is not None:
            models = {judge_id: judge.model} if judge is not None else {}
            (row,) = judge_rows({judge_id: frame}, prices.table, models)
            cost = row["cost_usd"]
    return {
        "run_id": info["run_id"],
        "rows_done": info["rows_done"],
        **{k: counts.get(k, 0) for k in ("valid", "invalid", "error", "skipped")},
        "cached": cached,
        "cost_usd": cost,
        "complete": info["complete"],
        "last_changed": json_time(info["last_changed"]),
        "rows_in_batches": sum(len(record.ids) for record in info["pending"]),
        "configuration_changed": info["configuration_changed"],
    }


def _where(judge: Judge) -> str:
    """` at URL` (and the variable that set it) for a judge's status line; "" for the mock."""
    from meta_evaluator.errors import JudgeConfigError
    from meta_evaluator.judge.addresses import judge_address

    if judge.llm_client == "mock":
        return ""
    try:
        address = judge_address(judge)
    except JudgeConfigError as exc:  # a variable that is no URL: said, as `run` would refuse it
        return f" (its address cannot be used: {exc.message})"
    return f" at {address.describe()}" if address.base_url else ""


def _address_json(judge: Judge) -> dict[str, Any]:
    """`base_url` (where calls go now) and `base_url_from` (the variable that set it, if any)."""
    from meta_evaluator.errors import JudgeConfigError
    from meta_evaluator.judge.addresses import judge_address

    if judge.llm_client == "mock":
        return {"base_url": None, "base_url_from": None}
    try:
        address = judge_address(judge)
    except JudgeConfigError as exc:
        return {"base_url": None, "base_url_from": None, "base_url_problem": exc.message}
    return {"base_url": address.base_url, "base_url_from": address.variable}


def _said(moment: dt.datetime | None) -> str:
    """`2026-11-28 14:35:42 UTC`, for people."""
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC") if moment is not None else "unknown"


def _judges_with_runs(results_dir: Path) -> set[str]:
    if not results_dir.is_dir():
        return set()
    from meta_evaluator.judge.run_files import judge_of_state_file

    return {judge_of_state_file(p) for p in results_dir.glob("*/*_state.json")}


def _latest_run(evaluator: MetaEvaluator, judge_id: str, rows: int | None) -> str:
    """One line on a judge's latest run (by start): rows done, outcomes, complete, last change."""
    info = latest_run_info(evaluator, judge_id)
    if info is None:
        return _sharded_run(evaluator.paths.results_dir, judge_id) or "no runs yet"
    counts = info["counts"]
    shown = ", ".join(
        f"{outcome} {counts.get(outcome, 0)}"
        for outcome in ("valid", "invalid", "error", "skipped")
        if outcome != "skipped" or counts.get(outcome)
    )
    line = (
        f"latest run {info['run_id']}: {info['rows_done']}"
        f"{f' of {rows}' if rows is not None else ''} rows done ({shown}), "
        f"{'complete' if info['complete'] else 'unfinished'}, last changed "
        f"{_said(info['last_changed'])}"
    )
    line += _in_batches(info["pending"])
    if info["configuration_changed"]:
        line += "; the judge's configuration has changed since, so `run` starts a new run"
    return line


def latest_run_info(evaluator: MetaEvaluator, judge_id: str) -> dict[str, Any] | None:
    """A judge's latest run (by start) as data; None when it has none (sharded runs aside)."""
    from meta_evaluator.judge import fingerprint
    from meta_evaluator.judge.batch_ledger import BatchLedger
    from meta_evaluator.judge.row_store import read_rows
    from meta_evaluator.judge.run_files import latest_run

    files = latest_run(evaluator.paths.results_dir, judge_id, complete=None)
    if files is None:
        return None
    state = files.read_state()
    assert state is not None  # latest_run only finds runs with a state file
    if state.complete and state.counts:
        counts = dict(state.counts)
    else:  # an unfinished run's counts are in its rows only; the last line of an id wins
        counts = _outcome_counts(read_rows(files.rows))
    when = _completed(state.completed_at) or _last_written(files.rows, files.table, files.state)
    judge = evaluator.judge_registry.get(judge_id)
    task = evaluator.eval_task
    return {
        "run_id": state.run_id,
        "rows_done": sum(counts.values()),
        "counts": counts,
        "complete": state.complete,
        "last_changed": when,
        "pending": BatchLedger(files).pending(),
        "configuration_changed": judge is not None
        and task is not None
        and fingerprint(judge, task) != state.fingerprint,
        "table": files.table if state.complete and files.table.is_file() else None,
    }


def _completed(stamp: str | None) -> dt.datetime | None:
    """A complete run's last change: its completion time, or None (unfinished, unreadable).

    The state keeps it through a copy or a migration of the run's files; their modification
    times do not.
    """
    try:
        return dt.datetime.fromisoformat(stamp).astimezone(dt.UTC) if stamp else None
    except ValueError:
        return None


def _last_written(*paths: Path) -> dt.datetime | None:
    """When the last of `paths` that exist was written (an unfinished run's last change)."""
    changed = max((p.stat().st_mtime for p in paths if p.is_file()), default=None)
    return None if changed is None else dt.datetime.fromtimestamp(changed, dt.UTC)


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
