"""The `meta-evaluator` command line: `meta-evaluator COMMAND [PROJECT_DIR]`.

Exit codes a scheduler can act on: 0 success, 1 failures in the run (rows that ended in an
error, judges that could not be scored), 2 bad input or configuration, or another `run` of the
project holding its lock (the message names what to fix; no traceback), 3 batches still running,
4 the file system stopped the command (disk full, read-only folder, no permission, a symlink out
of the project: fix the path named, run again, finished rows are reused), 5 `run` stopped at its
cost ceiling (`--max-cost`; rows not asked remain, run again to go on). Any other exception is a
bug and keeps its traceback.
"""

from __future__ import annotations

import contextlib
import logging
import re
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import typer

from meta_evaluator._cli_output import (
    print_checks,
    print_plan,
    print_run_summary,
    print_saved,
    print_scores,
    unscored_line,
)
from meta_evaluator._cli_status import print_status
from meta_evaluator.errors import (
    CostCeilingError,
    DiskFullError,
    JudgeConfigError,
    JudgeRunError,
    MetaEvaluatorError,
    OutsideProjectError,
    PermissionDeniedError,
    ProjectNotFoundError,
)
from meta_evaluator.judge.settings import RunSettings
from meta_evaluator.locks import ProjectLock

app = typer.Typer(
    name="meta-evaluator",
    help="Tell whether an LLM judge can stand in for human annotators.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

EXIT_BAD_INPUT = 2
EXIT_ENVIRONMENT = 4
EXIT_COST_CEILING = 5

ProjectDir = Annotated[
    Path, typer.Argument(help="The project folder.", show_default=True, file_okay=False)
]


@app.command()
def init(
    project_dir: ProjectDir = Path("."),
    example: Annotated[
        str | None,
        typer.Option(help="Fill the project from a built-in example (for instance 'refusal')."),
    ] = None,
) -> None:
    """Create a new project folder (empty, or from a built-in example).

    If it fails half-way (a full disk: exit 4), what it made is removed again: the folder if it
    was new, else only the files and folders it added.
    """
    from meta_evaluator.examples import create_example_project
    from meta_evaluator.project import MetaEvaluator
    from meta_evaluator.storage import removed_on_error

    with removed_on_error(project_dir):
        if example is None:
            MetaEvaluator(project_dir, load=False).save_state()
        else:
            create_example_project(example, project_dir)
    if example is None:
        print(f"Created an empty project in {project_dir}.")
    else:
        print(f"Created project {project_dir} from the example {example!r}.")
    print_status(project_dir)


CheckOption = Annotated[
    bool,
    typer.Option(
        "--check",
        help="Also send one cheap request to each judge's endpoint (it lists the provider's "
        "models; no tokens) and say per endpoint: ok, its HTTP status, or why it cannot be "
        "reached. Exit status 1 when one fails.",
    ),
]


@app.command()
def status(project_dir: ProjectDir = Path("."), check: CheckOption = False) -> None:
    """Show what a project holds: data, task, judges with their latest run, and annotators."""
    print_status(project_dir)
    if check:
        from meta_evaluator.project import MetaEvaluator

        evaluator = MetaEvaluator(project_dir, load=True)
        if not print_checks(evaluator, None):
            raise typer.Exit(1)


@app.command()
def report(
    project_dir: ProjectDir = Path("."),
    output: Annotated[
        Path | None,
        typer.Option(
            help="The folder to write report.html into (default: reports/ in the project).",
            file_okay=False,
        ),
    ] = None,
) -> None:
    """Write a self-contained report.html (and tables) of the project's results and scores."""
    from meta_evaluator.project import MetaEvaluator
    from meta_evaluator.reports import write_report

    evaluator = MetaEvaluator(project_dir, load=True)
    path = write_report(evaluator, output if output is not None else evaluator.paths.reports_dir)
    print(f"Report written to {path}")


def _default(name: str) -> Any:
    """A run option's default, declared once in `RunSettings` (the CLI restates none)."""
    return RunSettings.model_fields[name].default


_FLAGS = {"batch_poll_interval": "--batch-poll", "resume": "--no-resume", "cache": "--no-cache"}
"""Run options whose flag is not the option's name with dashes."""


def _flags_as_settings(**options: Any) -> RunSettings:
    """The run's settings from the command line's flags; a bad value is named by its flag."""
    try:
        return RunSettings(**options)
    except JudgeConfigError as exc:
        message = re.sub(
            r"run settings\.([a-z_]+)",
            lambda found: _FLAGS.get(found[1], "--" + found[1].replace("_", "-")),
            exc.message,
        )
        raise JudgeConfigError(
            message.replace("run settings is invalid", "run options are invalid"),
            field=exc.field,
            errors=exc.errors,
        ) from None


@app.command()
def run(
    project_dir: ProjectDir = Path("."),
    judges: Annotated[
        str | None, typer.Option(help="Comma-separated judge ids (default: all).")
    ] = None,
    run_id: Annotated[str | None, typer.Option(help="The run to write or continue.")] = None,
    max_concurrency: Annotated[int, typer.Option(help="Requests in flight per judge.")] = _default(
        "max_concurrency"
    ),
    adaptive_concurrency: Annotated[
        bool,
        typer.Option(
            help="Adapt the requests in flight per endpoint under --max-concurrency: cut on "
            "429/503/529, grow while healthy, pace by the server's rate-limit headers. "
            "--no-adaptive-concurrency keeps --max-concurrency in flight."
        ),
    ] = _default("adaptive_concurrency"),
    max_retries: Annotated[int, typer.Option(help="Retries after the first attempt.")] = _default(
        "max_retries"
    ),
    timeout: Annotated[float, typer.Option(help="Seconds for one attempt.")] = _default("timeout"),
    retry: Annotated[
        str, typer.Option(help="Outcomes to ask again: invalid, error, or both.")
    ] = "",
    no_resume: Annotated[bool, typer.Option("--no-resume", help="Ask every row again.")] = False,
    consistency: Annotated[
        int,
        typer.Option(help="Answers per row; above 1, the majority vote of the valid answers."),
    ] = _default("consistency"),
    backoff_base: Annotated[
        float, typer.Option(help="Seconds of the first retry's backoff window (doubling).")
    ] = _default("backoff_base"),
    backoff_cap: Annotated[
        float, typer.Option(help="Most seconds of one backoff window.")
    ] = _default("backoff_cap"),
    requests_per_minute: Annotated[float | None, typer.Option(help="Per endpoint.")] = None,
    tokens_per_minute: Annotated[float | None, typer.Option(help="Per endpoint.")] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            help="Print what would be called (endpoints, rows reused, calls, estimated tokens) "
            "without calling or writing anything."
        ),
    ] = False,
    shard: Annotated[
        str | None,
        typer.Option(
            help="Run only part k of N of the rows, e.g. 2/4 (split by a hash of the id; needs "
            "--run-id, the same for every shard)."
        ),
    ] = None,
    batch: Annotated[
        bool,
        typer.Option(
            help="Ask through the provider's batch API (OpenAI Batch, Anthropic Message "
            "Batches): half the price, answers within 24 h. Submitted batches are recorded in "
            "the run folder; a later --batch run reconnects to them."
        ),
    ] = False,
    batch_poll: Annotated[
        float, typer.Option(help="Seconds between two looks at a running batch.")
    ] = _default("batch_poll_interval"),
    batch_wait: Annotated[
        float | None,
        typer.Option(
            help="Most seconds to wait for batches (default: until they end; 0: submit and "
            "exit, collecting on a later run)."
        ),
    ] = None,
    cancel_batches: Annotated[
        bool,
        typer.Option(
            help="With --batch: cancel the run's pending batches (submitting nothing) and "
            "collect what they answered; the rest become errors that --retry error asks again."
        ),
    ] = False,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache",
            help="Ask every row of the endpoint, neither reusing answers stored by earlier runs "
            "nor storing new ones (for runs measuring drift).",
        ),
    ] = False,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            help="The response cache's folder (default: $META_EVALUATOR_CACHE_DIR, else the "
            "user cache folder, ~/.cache/meta-evaluator on Linux)."
        ),
    ] = None,
    cache_max_mb: Annotated[
        float, typer.Option(help="Most MB the response cache keeps (least recently used go).")
    ] = _default("cache_max_mb"),
    check: CheckOption = False,
    max_cost: Annotated[
        float | None,
        typer.Option(
            metavar="USD",
            help="Most US dollars this run's calls may cost, all judges together, priced by the "
            "project's prices.yaml: no call starts once spent plus in flight would pass it; "
            "the rows not asked stay to do (exit 5).",
        ),
    ] = None,
) -> None:
    """Run the project's judges; finished rows are saved as they arrive and reused on rerun.

    One `run` of a project at a time: a second one exits with 2, naming the process that holds
    the project's lock file (.meta-evaluator.lock). Exit status: 0 when every row has an answer
    (valid or invalid), 1 when some rows ended in an error, 2 for bad configuration or a judge
    stopped (key, refused requests, endpoint unreachable), 3 when batches are still running (run
    again later to collect them; 3 wins over 1 and 2, whose error is printed too), 4 when the file
    system stopped the run (disk full, read-only, no permission; finished rows are kept), 5 when
    it stopped at its cost ceiling (--max-cost; run again to go on).
    """
    from meta_evaluator.project import MetaEvaluator

    if check and not dry_run:
        raise typer.BadParameter(
            "goes with --dry-run (or use `status --check`)", param_hint="--check"
        )
    settings = _flags_as_settings(
        max_concurrency=max_concurrency,
        adaptive_concurrency=adaptive_concurrency,
        max_retries=max_retries,
        timeout=timeout,
        resume=not no_resume,
        retry=[r.strip() for r in retry.split(",") if r.strip()],
        requests_per_minute=requests_per_minute,
        tokens_per_minute=tokens_per_minute,
        backoff_base=backoff_base,
        backoff_cap=backoff_cap,
        consistency=consistency,
        shard=shard,
        batch=batch,
        batch_poll_interval=batch_poll,
        batch_wait=batch_wait,
        cancel_batches=cancel_batches,
        max_cost=max_cost,
        cache=not no_cache,
        cache_dir=cache_dir,
        cache_max_mb=cache_max_mb,
    )
    part = settings.shard
    judge_ids = [j.strip() for j in judges.split(",") if j.strip()] if judges is not None else None
    if judge_ids == []:  # an empty $JUDGES in a scheduler must not mean "every judge"
        raise typer.BadParameter(
            "names no judge; leave it out to run them all", param_hint="--judges"
        )
    evaluator = MetaEvaluator(project_dir, load=True)
    if dry_run:
        plan = evaluator.plan_run(judge_ids, run_id, settings=settings)
        print_plan(plan.summary(), ProjectLock(evaluator.project_dir).holder(), part)
        problems = plan.problem_error()
        if problems is not None:
            raise problems  # the judges the run would stop: exit 2, as the run does
        if check and not print_checks(evaluator, [judge.judge_id for judge in plan.judges]):
            raise typer.Exit(1)
        return
    asked = judge_ids if judge_ids is not None else list(evaluator.judge_registry)
    rows = len(evaluator.data) if evaluator.data is not None and part is None else None
    with (
        _say_what_was_saved_if_stopped(evaluator.paths.results_dir, asked, rows),
        _sigterm_as_exit(),
        ProjectLock(evaluator.project_dir),
    ):
        try:
            results = evaluator.run_judges_async(judge_ids, run_id, settings=settings)
        except JudgeRunError as exc:  # some judges were stopped: say what the others did
            stopped = {error["loc"][0] for error in exc.errors}
            _, waiting = print_run_summary(
                exc.results, part, evaluator.paths.results_dir, stopped=stopped, max_cost=max_cost
            )
            if not waiting:
                raise
            # Batches still running win, as over rows in error: a scheduler runs `run` again
            # to collect them, and the stopped judges' error is said on the way.
            print(f"error: {exc}", file=sys.stderr)
            raise typer.Exit(3) from None
        except CostCeilingError as exc:  # not an error of the input: say what was done, go on
            print_run_summary(exc.results, part, evaluator.paths.results_dir, max_cost=max_cost)
            print(exc.message, file=sys.stderr)
            raise typer.Exit(EXIT_COST_CEILING) from None
    errors, waiting = print_run_summary(
        results, part, evaluator.paths.results_dir, max_cost=max_cost
    )
    if waiting:  # not done yet: a scheduler runs it again, whatever the errors so far
        raise typer.Exit(3)
    if errors:
        raise typer.Exit(1)


@app.command()
def score(
    project_dir: ProjectDir = Path("."),
    metrics: Annotated[
        Path | None,
        typer.Option(help="The metrics YAML file (default: metrics.yaml in the project)."),
    ] = None,
) -> None:
    """Score every judge against the human annotations with the metrics of a YAML file.

    Results go to scores/<scorer>/<metric>/ (JSON, plots, and for preference metrics the trait
    table). Each registered judge without a complete run (never run, or its latest run
    unfinished: stopped by a dead endpoint or interrupted) is named with why. Exit status: 0 when
    every judge was scored, 1 when some could not be (or have no complete run), 2 for bad
    configuration.
    """
    import warnings

    from meta_evaluator.project import MetaEvaluator
    from meta_evaluator.results.unfinished import unscored_judges
    from meta_evaluator.scores.compare import IncompleteScoresWarning
    from meta_evaluator.scores.yaml_config import read_metrics_yaml

    evaluator = MetaEvaluator(project_dir, load=True)
    config = read_metrics_yaml(metrics or evaluator.project_dir / "metrics.yaml")
    judge_results = evaluator.load_all_judge_results()
    rows = len(evaluator.data) if evaluator.data is not None else None
    unscored = unscored_judges(
        evaluator.paths.results_dir, evaluator.judge_registry, judge_results, rows=rows
    )
    if unscored and not judge_results:  # nothing to score: say why, judge by judge
        for judge in unscored:
            print(unscored_line(project_dir, judge))
        raise typer.Exit(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteScoresWarning)  # each failure is printed
        table = evaluator.compare_async(config, judge_results)
    failed = len(unscored) + print_scores(table, evaluator.paths.scores_dir)
    for judge in unscored:
        print(unscored_line(project_dir, judge))
    print(f"Scores are in {evaluator.paths.scores_dir}")
    if failed:
        raise typer.Exit(1)


@app.command()
def annotate(
    project_dir: ProjectDir = Path("."),
    port: Annotated[
        int | None,
        typer.Option(help="Port, 1 to 65535 (default, or 0: a free one).", min=0, max=65535),
    ] = None,
    host: Annotated[str, typer.Option(help="Address to bind (default: loopback only).")] = (
        "127.0.0.1"
    ),
    token: Annotated[
        str | None,
        typer.Option(
            help="Access token annotators must present (needed for a non-loopback host).",
            envvar="META_EVALUATOR_ANNOTATION_TOKEN",
        ),
    ] = None,
) -> None:
    """Serve the annotation page for the project's data and task until Ctrl-C.

    Labels are saved at every submission under annotations/web/, where scoring finds them.
    A port out of range or in use, or a host that is not this machine's, exits with 2.
    """
    from meta_evaluator.project import MetaEvaluator

    MetaEvaluator(project_dir, load=True).launch_annotator(port=port, host=host, token=token)


@app.command()
def migrate(
    project_dir: ProjectDir = Path("."),
    dry_run: Annotated[
        bool,
        typer.Option(help="Check everything and say what would be done; change nothing."),
    ] = False,
) -> None:
    """Convert a project folder written by meta-evaluator 0.3.3 into one of this version.

    Its data, task, judges, judge results and annotations are converted in place (every stored
    label checked again); 0.3.3's files are kept in migrated-from-0.3.3/, with the report and
    the judges that could not be carried over. Nothing is half-written: a failed or stopped
    migration leaves the 0.3.3 project as it was. Exit status: 0 migrated, 2 not a 0.3.3
    project or a file it cannot read, 4 the file system refused a write.
    """
    from meta_evaluator.migrate import migrate_project

    report = migrate_project(project_dir, dry_run=dry_run)
    for line in report.lines():
        print(line)


@contextlib.contextmanager
def _say_what_was_saved_if_stopped(
    results_dir: Path, judge_ids: list[str], rows: int | None
) -> Iterator[None]:
    """On Ctrl-C or SIGTERM, once the run has cleaned up: each judge's saved rows and errors.

    The run's row files are those written since the run began; their counts and top error
    reasons are printed as at the end of a run, and the interrupt goes on (exit 130 or 143).
    """
    from meta_evaluator.results.unfinished import row_files

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
            print_saved(results_dir, before, judge_ids, rows, how)
        except MetaEvaluatorError as error:  # a row file that cannot be read: say so, go on
            print(f"Stopped {how}; what was saved cannot be read: {error}")
        raise


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


def main() -> None:
    """Run the command line; a `MetaEvaluatorError` prints its message and exits with 2 or 4.

    4 when the file system stopped the command (`DiskFullError`, `PermissionDeniedError`,
    `OutsideProjectError`), 2 for every other error in the input.
    """
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        app()
    except MetaEvaluatorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if isinstance(exc, ProjectNotFoundError):
            print("hint: create a project with `meta-evaluator init DIR`.", file=sys.stderr)
        environment = (DiskFullError, PermissionDeniedError, OutsideProjectError)
        code = EXIT_ENVIRONMENT if isinstance(exc, environment) else EXIT_BAD_INPUT
        raise SystemExit(code) from None


if __name__ == "__main__":
    main()
