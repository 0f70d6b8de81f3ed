"""What `meta-evaluator run` (and `all`) does once its options are read, and its JSON summary.

A run first registers the judges of the project's files (`judges/*.yaml`, `project.yaml`),
then plans and executes under the project's lock, prints each judge's counts, and, asked to,
scores and writes the report. `--json` prints one JSON object on standard output at the end,
whatever the exit status (the text goes to standard error then):

```json
{"command": "run", "project": "/abs/my_project", "exit_status": 0, "error": null,
 "judges": {"gpt4": {"run_id": "run_...", "rows": 40, "valid": 38, "invalid": 1, "error": 1,
                     "skipped": 0, "cached": 12, "reused": 0, "cost_usd": 0.0123,
                     "complete": true, "stopped": false}},
 "totals": {"rows": 40, "valid": 38, ...}, "run_ids": ["run_..."]}
```
"""

from __future__ import annotations

import contextlib
import json
import shlex
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING, Any

import typer

from meta_evaluator._cli_output import (
    print_checks,
    print_plan,
    print_run_summary,
    print_saved,
    print_scores,
    unscored_line,
)
from meta_evaluator._stopped import EXIT_STOPPED
from meta_evaluator.errors import (
    CostCeilingError,
    DiskFullError,
    JudgeRunError,
    MetaEvaluatorError,
    OutsideProjectError,
    PermissionDeniedError,
    ProjectError,
    ProjectExistsError,
    ProjectNotFoundError,
)
from meta_evaluator.judge.settings import RunSettings
from meta_evaluator.locks import ProjectLock

if TYPE_CHECKING:
    import polars as pl

    from meta_evaluator.project import MetaEvaluator
    from meta_evaluator.results import JudgeResults
    from meta_evaluator.results.unfinished import RowFile
    from meta_evaluator.scores import MetricsConfig
    from meta_evaluator.scores.compare import ScoreTable

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_BATCHES_RUNNING",
    "EXIT_COST_CEILING",
    "EXIT_DRIFT",
    "EXIT_ENVIRONMENT",
    "EXIT_FAILURES",
    "RunRequest",
    "cli_message",
    "exit_code_of",
    "json_errors",
    "print_json",
    "run_command",
    "score_project",
]

EXIT_FAILURES = 1
EXIT_BAD_INPUT = 2
EXIT_BATCHES_RUNNING = 3
EXIT_ENVIRONMENT = 4
EXIT_COST_CEILING = 5
EXIT_DRIFT = 5  # `drift`: a threshold was exceeded (each command gives 5 for its own reason)


_ADDED_BY = {
    "data": "add it with `meta-evaluator add-data {folder} FILE --id-column COLUMN`",
    "task": "add one with `meta-evaluator add-task {folder} task.yaml`",
    "annotations": "import them with `meta-evaluator import-annotations {folder} FILE "
    "--annotator NAME`, or label rows with `meta-evaluator annotate {folder}`",
    "results": "run the judges first (`meta-evaluator run {folder}`), or import a judge's "
    "labels (`meta-evaluator import-results {folder} FILE --judge NAME`)",
    "state": "add `evaluator.save_state()` at the end of that Python script and run it again "
    "(`meta-evaluator init {folder}` would make an empty project beside them)",
}
"""The command that adds what a project lacks (an error's `needs`), instead of the Python call."""


def cli_message(exc: MetaEvaluatorError) -> str:
    """The error's message as the command line says it: a command to type, not an argument.

    A project folder missing or already there says `meta-evaluator init DIR` (or `status`)
    where Python callers read `load=False` (or `load=True`); a project without data, a task,
    human annotations or a judge's run names the command that adds it (`add-data`, `add-task`,
    `import-annotations`, `run`) where they read `add_data`, `add_eval_task`, ...; a fix that
    is an argument names its flag (`--task T`, not `task=...`); any other message as it is.
    """
    if exc.problem is not None and exc.cli_advice is not None:
        return f"{exc.problem}; {exc.cli_advice}"
    if exc.problem is not None and exc.needs is not None:
        folder = shlex.quote(str(exc.project_dir)) if exc.project_dir is not None else "DIR"
        return f"{exc.problem}; {_ADDED_BY[exc.needs].format(folder=folder)}."
    if isinstance(exc, ProjectError) and exc.problem is not None and exc.project_dir is not None:
        folder = shlex.quote(str(exc.project_dir))
        if isinstance(exc, ProjectNotFoundError):
            return (
                f"{exc.problem}; check the path, or create a project there with "
                f"`meta-evaluator init {folder}`."
            )
        if isinstance(exc, ProjectExistsError):
            return (
                f"{exc.problem}; choose another folder, or work on this project with the other "
                f"commands (`meta-evaluator status {folder}`)."
            )
    return exc.message


def exit_code_of(exc: MetaEvaluatorError) -> int:
    """4 when the file system stopped the command, 2 for every other error in the input."""
    environment = (DiskFullError, PermissionDeniedError, OutsideProjectError)
    return EXIT_ENVIRONMENT if isinstance(exc, environment) else EXIT_BAD_INPUT


def print_json(out: IO[str], summary: dict[str, Any]) -> None:
    """One JSON object on its own line (what a scheduler parses)."""
    out.write(json.dumps(summary, ensure_ascii=False, default=str) + "\n")
    out.flush()


@contextlib.contextmanager
def json_errors(command: str, json_output: bool) -> Iterator[None]:
    """With --json, an error is also printed as one JSON object (then raised as usual)."""
    try:
        yield
    except MetaEvaluatorError as exc:
        if json_output:
            print_json(sys.stdout, {"command": command, "exit_status": exit_code_of(exc),
                                    "error": cli_message(exc)})  # fmt: skip
        raise


@dataclass(frozen=True)
class RunRequest:
    """What the command line asked of `run` (the run's own settings in `settings`)."""

    judge_ids: list[str] | None
    run_id: str | None
    settings: RunSettings
    dry_run: bool = False
    check: bool = False
    score: bool = False
    """Score the judges once the run is done (rows in error or not)."""
    report: bool = False
    """Write the report once the run is done (after scoring, when asked)."""
    metrics: Path | None = None
    json_output: bool = False
    command: str = "run"
    """The command asked, as the JSON summary names it (`run`, or `all`)."""


def run_command(project_dir: Path, request: RunRequest) -> None:
    """Run (or plan) the project's judges as `request` says; exits with the run's status.

    Raises:
        typer.Exit: With the exit status when it is not 0.
        MetaEvaluatorError: Bad input or configuration (after the JSON summary, with --json).
    """
    out = sys.stdout
    summary: dict[str, Any] = {
        "command": request.command,
        "project": str(Path(project_dir).resolve()),
        "exit_status": None,
        "error": None,
    }
    to_stderr = contextlib.redirect_stdout(sys.stderr) if request.json_output else None
    try:
        with to_stderr or contextlib.nullcontext():
            code = _run(project_dir, request, summary)
    except MetaEvaluatorError as exc:
        if request.json_output:
            print_json(
                out, {**summary, "exit_status": exit_code_of(exc), "error": cli_message(exc)}
            )
        raise
    except (KeyboardInterrupt, SystemExit) as exc:  # stopped: 130, 143
        if request.json_output:
            code = exc.code if isinstance(exc, SystemExit) and isinstance(exc.code, int) else 130
            print_json(out, {**summary, "exit_status": code, "error": "stopped"})
        if isinstance(exc, KeyboardInterrupt) and request.json_output:  # said: exit 130
            raise SystemExit(EXIT_STOPPED) from None
        raise  # an interrupt before the run began is said by `cli.main`
    if request.json_output:
        print_json(out, {**summary, "exit_status": code})
    if code:
        raise typer.Exit(code)


def _run(project_dir: Path, request: RunRequest, summary: dict[str, Any]) -> int:
    """The run itself; fills `summary`, returns the exit status."""
    from meta_evaluator.project import MetaEvaluator

    settings = request.settings
    part = settings.shard
    evaluator = MetaEvaluator(project_dir, load=True)
    from meta_evaluator._cli_project import sync_judges  # not at import: every command pays

    changed = sync_judges(evaluator, save=False)  # judges/*.yaml and project.yaml's judges
    metrics = _metrics(evaluator, request) if request.score else None  # before any call
    if request.dry_run:
        plan = evaluator.plan_run(request.judge_ids, request.run_id, settings=settings)
        figures = plan.summary()
        print_plan(figures, ProjectLock(evaluator.project_dir).holder(), part)
        summary["dry_run"] = {
            "judges": {j.judge_id: _plain(j) for j in figures.judges},
            "refused": list(figures.refused),
        }
        problems = plan.problem_error()
        if problems is not None:
            raise problems  # the judges the run would stop: exit 2, as the run does
        ids = [judge.judge_id for judge in plan.judges]
        if request.check and not print_checks(evaluator, ids):
            return EXIT_FAILURES
        return 0
    asked = request.judge_ids or list(evaluator.judge_registry)
    rows = len(evaluator.data) if evaluator.data is not None and part is None else None
    stopped: set[str] = set()
    error: MetaEvaluatorError | None = None
    reused: dict[str, int] = {}  # filled once planned; read by the summary of a stopped run
    with (
        _say_what_was_saved_if_stopped(
            evaluator.paths.results_dir, asked, rows, summary=summary, reused=reused
        ),
        _sigterm_as_exit(),
        ProjectLock(evaluator.project_dir),
    ):
        if changed:
            evaluator.save_state(include_data=False)
        plan = evaluator.plan_run(request.judge_ids, request.run_id, settings=settings)
        reused.update({judge.judge_id: len(judge.kept) for judge in plan.judges})
        max_cost = settings.max_cost
        try:
            results = evaluator.run_judges_async(plan=plan)
        except JudgeRunError as exc:  # some judges were stopped: say what the others did
            results, error = exc.results, exc
            stopped = {problem["loc"][0] for problem in exc.errors}
        except CostCeilingError as exc:  # not an error of the input: say what was done, go on
            results, error = exc.results, exc
        errors, waiting = print_run_summary(
            results, part, evaluator.paths.results_dir, stopped=stopped, max_cost=max_cost
        )
    summary.update(_run_json(evaluator, results, reused, stopped))
    if isinstance(error, JudgeRunError):
        if not waiting:
            raise error
        # Batches still running win, as over rows in error: a scheduler runs `run` again to
        # collect them, and the stopped judges' error is said on the way.
        print(f"error: {error}", file=sys.stderr)
        summary["error"] = error.message
        return EXIT_BATCHES_RUNNING
    if isinstance(error, CostCeilingError):
        print(error.message, file=sys.stderr)
        summary["error"] = error.message
        return EXIT_COST_CEILING
    if waiting:  # not done yet: a scheduler runs it again, whatever the errors so far
        return EXIT_BATCHES_RUNNING
    code = EXIT_FAILURES if errors else 0
    if metrics is not None:
        failed, table = score_project(evaluator, metrics, project_dir)
        summary["scores"] = _scores_json(table)
        code = max(code, EXIT_FAILURES if failed else 0)
    if request.report:
        from meta_evaluator.reports import write_report

        path = write_report(evaluator, evaluator.paths.reports_dir)
        print(f"Report written to {path}")
        summary["report"] = str(path)
    return code


def _metrics(evaluator: MetaEvaluator, request: RunRequest) -> MetricsConfig:
    from meta_evaluator._cli_project import project_metrics

    return project_metrics(evaluator, request.metrics)


def score_project(
    evaluator: MetaEvaluator, config: MetricsConfig, project_dir: Path
) -> tuple[int, ScoreTable]:
    """Score every judge with `config`, print the scores; (judges not scored, the scores).

    Each registered judge without a complete run is named with why and the command that fixes
    it, and counts as not scored.
    """
    import warnings

    from meta_evaluator.results.unfinished import unscored_judges
    from meta_evaluator.scores.compare import IncompleteScoresWarning

    judge_results = evaluator.load_all_judge_results()
    rows = len(evaluator.data) if evaluator.data is not None else None
    unscored = unscored_judges(
        evaluator.paths.results_dir, evaluator.judge_registry, judge_results, rows=rows
    )
    if unscored and not judge_results:  # nothing to score: say why, judge by judge
        for judge in unscored:
            print(unscored_line(project_dir, judge))
        return len(unscored), {}
    with warnings.catch_warnings(), _unscored_not_logged():  # each failure is printed
        warnings.simplefilter("ignore", IncompleteScoresWarning)
        table = evaluator.compare_async(config, judge_results)
    left_out = _left_out(table, judge_results)
    failed = len(unscored) + print_scores(table, evaluator.paths.scores_dir, left_out)
    for judge in unscored:
        print(unscored_line(project_dir, judge))
    print(f"Scores are in {evaluator.paths.scores_dir}")
    return failed, table


@contextlib.contextmanager
def _unscored_not_logged() -> Iterator[None]:
    """Meanwhile, `compare` logs no judge it could not score: the command prints each one."""
    import logging

    from meta_evaluator.scores.compare import NOT_SCORED

    def said_by_the_command(record: logging.LogRecord) -> bool:
        return not hasattr(record, NOT_SCORED)

    compare_logger = logging.getLogger("meta_evaluator.scores.compare")
    compare_logger.addFilter(said_by_the_command)
    try:
        yield
    finally:
        compare_logger.removeFilter(said_by_the_command)


def _left_out(table: ScoreTable, judges: dict[str, JudgeResults]) -> dict[str, dict[str, str]]:
    """Metric -> {judge: why}: the judges a metric left out (`left_out_reason`).

    The votes imported with preference pairs, and labels imported from a file where a metric
    needs several answers per row.
    """
    from meta_evaluator.scores.compare import left_out_reason

    frames = {j: r.results_data for j, r in judges.items()}
    found: dict[str, dict[str, str]] = {}
    for name, (metric, results) in table.items():
        scored = {r.judge_id for r in results}
        for judge_id, frame in frames.items():
            reason = left_out_reason(metric, frame)
            if judge_id not in scored and reason is not None:
                found.setdefault(name, {})[judge_id] = reason
    return found


# ----- the JSON summary ------------------------------------------------------------------------


def _plain(figures: Any) -> dict[str, Any]:
    """A dataclass of figures as JSON-ready values."""
    import dataclasses

    return {k: v for k, v in dataclasses.asdict(figures).items() if k != "judge_id"}


def _run_json(
    evaluator: MetaEvaluator,
    results: dict[str, JudgeResults],
    reused: dict[str, int],
    stopped: set[str],
) -> dict[str, Any]:
    """Per judge: run id, rows per outcome, cached, reused, cost, complete; and the totals."""
    from meta_evaluator.llm.prices import read_prices
    from meta_evaluator.reports import judge_rows

    prices = read_prices(evaluator.project_dir / "prices.yaml")
    models = {j.id: j.model for j in evaluator.judge_registry.values()}
    judges: dict[str, Any] = {}
    for judge_id, result in results.items():
        frame = result.results_data
        counts = result.counts()
        cost = result.cost_usd
        if cost is None and prices is not None:
            (row,) = judge_rows({judge_id: frame}, prices.table, models)
            cost = row["cost_usd"]
        judges[judge_id] = {
            "run_id": result.run_id,
            "rows": frame.height,
            **{k: counts.get(k, 0) for k in ("valid", "invalid", "error", "skipped")},
            "cached": int(frame["cached"].sum()) if "cached" in frame.columns else 0,
            "reused": reused.get(judge_id, 0),
            "cost_usd": cost,
            "complete": result.complete,
            "stopped": judge_id in stopped,
        }
    keys = ("rows", "valid", "invalid", "error", "skipped", "cached", "reused")
    totals: dict[str, Any] = {k: sum(j[k] for j in judges.values()) for k in keys}
    costs = [j["cost_usd"] for j in judges.values() if j["cost_usd"] is not None]
    totals["cost_usd"] = sum(costs) if costs else None
    run_ids = sorted({j["run_id"] for j in judges.values()})
    return {"run_ids": run_ids, "judges": judges, "totals": totals}


def _scores_json(table: ScoreTable) -> dict[str, Any]:
    """Each metric's scores per judge (or why a judge was not scored)."""
    scores: dict[str, Any] = {}
    for name, (metric, results) in table.items():
        scores[name] = {
            "scorer": metric.scorer.scorer_name,
            "judges": {
                r.judge_id: {"error": r.error} if r.error is not None else dict(r.scores)
                for r in results
            },
        }
    return scores


# ----- stopping --------------------------------------------------------------------------------


@contextlib.contextmanager
def _say_what_was_saved_if_stopped(
    results_dir: Path,
    judge_ids: list[str],
    rows: int | None,
    *,
    summary: dict[str, Any],
    reused: dict[str, int],
) -> Iterator[None]:
    """On Ctrl-C or SIGTERM, once the run has cleaned up: each judge's saved rows and errors.

    The run's row files are those written since the run began; their counts and top error
    reasons are printed as at the end of a run, and put in `summary` (the JSON of `--json`)
    as a finished run's are; the run then exits with 130 or 143.
    """
    from meta_evaluator.results.unfinished import row_files, saved_since

    before = row_files(results_dir)
    try:
        yield
    except (KeyboardInterrupt, SystemExit) as exc:
        if isinstance(exc, KeyboardInterrupt):
            how = "by Ctrl-C"
        elif exc.code == 128 + signal.SIGTERM:
            how = "by SIGTERM"
        else:
            how = f"(exit {exc.code})"
        try:
            saved = saved_since(results_dir, before, judge_ids)
        except MetaEvaluatorError as error:  # a row file that cannot be read: say so, go on
            print(f"Stopped {how}; what was saved cannot be read: {error}")
        else:
            print_saved(saved, judge_ids, rows, how, results_dir)
            summary.update(_saved_json(saved, judge_ids, reused))
        if isinstance(exc, KeyboardInterrupt):  # said: exit 130 without `cli.main` saying more
            raise SystemExit(EXIT_STOPPED) from None
        raise


def _saved_json(
    saved: list[tuple[RowFile, pl.DataFrame]], judge_ids: list[str], reused: dict[str, int]
) -> dict[str, Any]:
    """A stopped run's JSON figures, with a finished run's keys: each judge's latest row file.

    A judge with no row finished has `rows` 0 and no run id; `cost_usd` is not counted.
    """
    latest = {file.judge_id: (file, frame) for file, frame in saved}  # path order: the last
    judges: dict[str, Any] = {}
    for judge_id in judge_ids:
        file, frame = latest.get(judge_id, (None, None))
        counts = dict(frame.group_by("outcome").len().iter_rows()) if frame is not None else {}
        judges[judge_id] = {
            "run_id": file.run_id if file is not None else None,
            "rows": frame.height if frame is not None else 0,
            **{k: counts.get(k, 0) for k in ("valid", "invalid", "error", "skipped")},
            "cached": int(frame["cached"].sum()) if frame is not None else 0,
            "reused": reused.get(judge_id, 0),
            "cost_usd": None,
            "complete": file.complete if file is not None else False,
            "stopped": False,
        }
    keys = ("rows", "valid", "invalid", "error", "skipped", "cached", "reused")
    totals: dict[str, Any] = {k: sum(j[k] for j in judges.values()) for k in keys}
    totals["cost_usd"] = None
    run_ids = sorted({j["run_id"] for j in judges.values() if j["run_id"] is not None})
    return {"run_ids": run_ids, "judges": judges, "totals": totals}


@contextlib.contextmanager
def _sigterm_as_exit() -> Iterator[None]:
    """Stop on SIGTERM (a scheduler stopping the job) as on Ctrl-C, then exit with 143.

    SIGTERM goes the way of SIGINT: while the run's event loop turns, its Ctrl-C handler
    cancels the run, whose rows in flight are dropped and whose files and project lock are
    released, and the KeyboardInterrupt it ends with becomes SystemExit(143). (Raised from the
    signal handler, SystemExit would land inside whatever task runs, and asyncio's shutdown
    would print that task's traceback.) With Ctrl-C ignored (a job started with `nohup` or
    `&`), SIGTERM raises SystemExit at once. Only the main thread can set signal handlers;
    elsewhere, nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        on_ctrl_c = signal.getsignal(signal.SIGINT)
        if callable(on_ctrl_c):
            on_ctrl_c(signal.SIGINT, frame)  # asyncio's cancels the run; Python's raises
        else:
            raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    except KeyboardInterrupt:
        if received:
            raise SystemExit(128 + received[0]) from None
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
