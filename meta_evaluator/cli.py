"""The `meta-evaluator` command line: `meta-evaluator COMMAND [PROJECT_DIR]`.

Exit codes a scheduler can act on (one table for every command in docs/cli.md#exit-codes):
0 success, 1 failures in the run (rows that ended in an error, judges that could not be
scored, an endpoint check that failed), 2 bad input or configuration, or another `run` of the
project holding its lock (the message names what to fix; no traceback), 3 batches still running,
4 the file system stopped the command (disk full, read-only folder, no permission, a symlink out
of the project: fix the path named, run again, finished rows are reused), 5 `run` stopped at its
cost ceiling (`--max-cost`; rows not asked remain, run again to go on), 130 and 143 a run stopped
by Ctrl-C or SIGTERM. Any other exception is a bug and keeps its traceback.

This module reads the options and wires the commands; what they do lives in `_cli_run`
(`run`, `all`, `score`), `_cli_project` (projects from files) and `_cli_status`.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NoReturn

import typer

from meta_evaluator._cli_output import print_checks, print_run_comparison
from meta_evaluator._cli_run import (
    EXIT_BAD_INPUT,
    EXIT_COST_CEILING,
    EXIT_ENVIRONMENT,
    RunRequest,
    cli_message,
    exit_code_of,
    json_errors,
    print_json,
    run_command,
    score_project,
)
from meta_evaluator._cli_status import print_status, status_json
from meta_evaluator._stopped import EXIT_STOPPED, say_stopped
from meta_evaluator._version import __version__
from meta_evaluator.errors import (
    DiskFullError,
    JudgeConfigError,
    MetaEvaluatorError,
    PermissionDeniedError,
)
from meta_evaluator.judge.settings import RunSettings

if TYPE_CHECKING:
    from meta_evaluator.eval_task.labels import NormalisedLabels

EXAMPLE_NAMES = ("fairness", "pairwise", "refusal", "stereotype")
"""The built-in examples `init --example` offers, named in its help without importing them
(`meta_evaluator.examples.example_names()` is the list; a test keeps the two equal)."""

app = typer.Typer(
    name="meta-evaluator",
    help="Tell whether an LLM judge can stand in for human annotators.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

__all__ = ["EXIT_BAD_INPUT", "EXIT_COST_CEILING", "EXIT_ENVIRONMENT", "app", "main"]


def _show_version(value: bool) -> None:
    if value:
        print(f"meta-evaluator {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_show_version,
            is_eager=True,
            help="Print the version of meta-evaluator and exit.",
        ),
    ] = False,
) -> None:
    """Tell whether an LLM judge can stand in for human annotators."""


ProjectDir = Annotated[
    Path,
    typer.Argument(
        help="The project folder.", show_default=True, file_okay=False, metavar="PROJECT_DIR"
    ),
]


DataFormatOption = Literal["csv", "json", "jsonl", "parquet"]


@app.command()
def init(
    project_dir: ProjectDir = Path("."),
    example: Annotated[
        str | None,
        typer.Option(
            help="Fill the project from a built-in example: " + ", ".join(EXAMPLE_NAMES) + "."
        ),
    ] = None,
    from_file: Annotated[
        Path | None,
        typer.Option(
            "--from",
            metavar="PROJECT_YAML",
            help="Build the project from a project.yaml (data, task, judges, labels, metrics); "
            "what it names is copied in.",
            dir_okay=False,
        ),
    ] = None,
    data: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="Start the project with this data file.", dir_okay=False),
    ] = None,
    id_column: Annotated[
        str | None,
        typer.Option(help="With --data: the column of unique ids (default: ids are assigned)."),
    ] = None,
    data_format: Annotated[
        DataFormatOption | None,
        typer.Option("--format", help="With --data: the file's format (default: its extension)."),
    ] = None,
) -> None:
    """Create a new project: empty, from a built-in example, a project.yaml, or a data file.

    If it fails half-way (a full disk: exit 4), what it made is removed again: the folder if it
    was new, else only the files and folders it added. A project.yaml is checked whole first:
    every problem is listed at once (exit 2) and nothing is made.
    """
    from meta_evaluator._cli_project import init_from_data, init_from_file
    from meta_evaluator.examples import create_example_project
    from meta_evaluator.project import MetaEvaluator
    from meta_evaluator.storage import removed_on_error

    given = [name for name, value in (("--example", example), ("--from", from_file),
                                      ("--data", data)) if value is not None]  # fmt: skip
    if len(given) > 1:
        raise typer.BadParameter(f"give one of {' and '.join(given)}", param_hint=given[1])
    if data is None and (id_column is not None or data_format is not None):
        raise typer.BadParameter("goes with --data", param_hint="--id-column / --format")
    if from_file is not None:
        init_from_file(project_dir, from_file)
        print(f"Created project {project_dir} from {from_file}.")
    elif data is not None:
        init_from_data(project_dir, data, id_column=id_column, data_format=data_format)
        print(f"Created project {project_dir} with the data of {data}.")
    else:
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


@app.command("add-data")
def add_data(
    project_dir: ProjectDir,
    data_file: Annotated[Path, typer.Argument(help="The data file.", dir_okay=False)],
    id_column: Annotated[
        str | None, typer.Option(help="The column of unique ids (default: ids are assigned).")
    ] = None,
    data_format: Annotated[
        DataFormatOption | None,
        typer.Option("--format", help="The file's format (default: its extension)."),
    ] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace the project's data.")] = False,
) -> None:
    """Set the data of a project (made empty by `init`) from a file."""
    from meta_evaluator._cli_project import add_data_file

    evaluator = add_data_file(
        project_dir, data_file, id_column=id_column, data_format=data_format, overwrite=overwrite
    )
    assert evaluator.data is not None
    print(f"The data of {project_dir} is now {evaluator.data.name!r}: {len(evaluator.data)} rows.")


@app.command("add-task")
def add_task(
    project_dir: ProjectDir,
    task_file: Annotated[
        Path,
        typer.Argument(
            help="A YAML file with a `task:` mapping (a task file, or a project.yaml).",
            dir_okay=False,
        ),
    ],
    overwrite: Annotated[bool, typer.Option(help="Replace the project's task.")] = False,
) -> None:
    """Set the project's task (the tasks and labels, the columns judges see) from a YAML file."""
    from meta_evaluator._cli_project import add_task_file

    task = add_task_file(project_dir, task_file, overwrite=overwrite).eval_task
    assert task is not None
    print(f"The task of {project_dir} is now {task.task_names} (from {task_file}).")


@app.command("add-judges")
def add_judges(
    project_dir: ProjectDir,
    judges_file: Annotated[
        Path,
        typer.Argument(help="A judges YAML file (prompt files relative to it).", dir_okay=False),
    ],
    overwrite: Annotated[
        bool, typer.Option(help="Replace registered judges of the same ids.")
    ] = False,
) -> None:
    """Copy a judges YAML file (with its prompts) into the project's judges/ and add its judges.

    Every problem of the file is listed at once (exit 2), placeholders naming no column of the
    project's data and ids already registered included. `run` reads judges/ each time.
    """
    from meta_evaluator._cli_project import add_judges_file

    judges = add_judges_file(project_dir, judges_file, overwrite=overwrite)
    print(f"Added {len(judges)} judge(s) to {project_dir}: {', '.join(j.id for j in judges)}.")


IdColumnOption = Annotated[str, typer.Option(help="The file's column holding the data's ids.")]
RunIdOption = Annotated[
    str | None, typer.Option(help="The run the labels are saved as (default: a new id).")
]
TasksOption = Annotated[
    str | None,
    typer.Option(
        help="Comma-separated tasks to import (default: every task the file has a column for; "
        "the required ones must have one)."
    ),
]
LabelsFileArgument = Annotated[
    Path, typer.Argument(help="CSV, JSON, JSON Lines or Parquet labels.", dir_okay=False)
]


@app.command("import-annotations")
def import_annotations(
    project_dir: ProjectDir,
    file: LabelsFileArgument,
    annotator: Annotated[str, typer.Option(help="Whose labels these are.")],
    id_column: IdColumnOption = "original_id",
    run_id: RunIdOption = None,
    tasks: TasksOption = None,
) -> None:
    """Import one human annotator's labels made elsewhere (add_external_annotation_results)."""
    from meta_evaluator._cli_project import import_labels

    done = import_labels(
        project_dir, file, annotator_id=annotator, run_id=run_id, id_column=id_column,
        tasks=_names(tasks, "--tasks"),
    )  # fmt: skip
    print(f"Imported the labels of {annotator!r}{_tasks_text(done.tasks)}: "
          f"{done.counts['valid']} valid, {done.counts['invalid']} "
          f"invalid{_normalised_text(done.normalised)}.")  # fmt: skip


@app.command("import-results")
def import_results(
    project_dir: ProjectDir,
    file: LabelsFileArgument,
    judge: Annotated[str, typer.Option(help="The judge that made these labels.")],
    id_column: IdColumnOption = "original_id",
    run_id: RunIdOption = None,
    tasks: TasksOption = None,
) -> None:
    """Import a judge's labels made elsewhere as its complete run (add_external_judge_results)."""
    from meta_evaluator._cli_project import import_labels

    done = import_labels(
        project_dir, file, judge_id=judge, run_id=run_id, id_column=id_column,
        tasks=_names(tasks, "--tasks"),
    )  # fmt: skip
    print(f"Imported the results of judge {judge!r}{_tasks_text(done.tasks)}: "
          f"{done.counts['valid']} valid, {done.counts['invalid']} "
          f"invalid{_normalised_text(done.normalised)}.")  # fmt: skip


def _tasks_text(tasks: tuple[str, ...]) -> str:
    """` for tasks resolved, tone`: which task columns of the file were taken."""
    return f" for task{'s' if len(tasks) > 1 else ''} {', '.join(tasks)}" if tasks else ""


def _normalised_text(found: NormalisedLabels | None) -> str:
    """`; 3 labels normalised ('HELPFUL' → 'helpful', ...) to the allowed labels`, or nothing."""
    if found is None or not found.count:
        return ""
    return (
        f"; {found.describe()} to the allowed labels (case, white space and accent encoding "
        "ignored)"
    )


def _names(text: str | None, flag: str) -> list[str] | None:
    """A comma-separated option as a list; one naming nothing is refused."""
    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise typer.BadParameter("names nothing; leave it out for the default", param_hint=flag)
    return names


MetricsOption = Annotated[
    Path | None,
    typer.Option(
        help="A metrics YAML file, or a project.yaml whose metrics: are read (default: the "
        "project's project.yaml's metrics, else metrics.yaml in the project).",
        dir_okay=False,
    ),
]

CheckOption = Annotated[
    bool,
    typer.Option(
        "--check",
        help="Also send one cheap request to each judge's endpoint (it lists the provider's "
        "models; no tokens) and say per endpoint: ok, its HTTP status, or why it cannot be "
        "reached. Exit status 1 when one fails.",
    ),
]


JsonOption = Annotated[
    bool,
    typer.Option(
        "--json",
        help="End with one JSON object on standard output (the text goes to standard error).",
    ),
]


@app.command()
def status(
    project_dir: ProjectDir = Path("."), check: CheckOption = False, json_output: JsonOption = False
) -> None:
    """Show what a project holds: data, task, judges with their latest run, and annotators."""
    if json_output:
        out = sys.stdout
        sys.stdout = sys.stderr  # the text, if any, is not mixed with the JSON
        try:
            summary = status_json(project_dir)
            code = 0
            if check:
                from meta_evaluator.project import MetaEvaluator

                code = 0 if print_checks(MetaEvaluator(project_dir, load=True), None) else 1
        except MetaEvaluatorError as exc:
            print_json(out, {"command": "status", "exit_status": exit_code_of(exc),
                             "error": cli_message(exc)})  # fmt: skip
            raise
        finally:
            sys.stdout = out
        print_json(out, {**summary, "exit_status": code})
        if code:
            raise typer.Exit(code)
        return
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
    with _what_is_kept("report"):
        path = write_report(evaluator, output or evaluator.paths.reports_dir)
    print(f"Report written to {path}")


_KEPT = {
    "score": "The judges' results are untouched, and so are the scores saved before it.",
    "report": "The judges' results and scores are untouched; the next `report` writes the "
    "report whole.",
    "compare-runs": "The runs compared are untouched; the comparison was not saved.",
}
"""What a command that writes only its own output says is safe when a write is refused."""


@contextlib.contextmanager
def _what_is_kept(command: str) -> Iterator[None]:
    """A write refused by the file system (exit 4) says what of the project is as it was.

    The message of the storage layer knows the file, not the command; a run's row store says
    that its rows are kept, and the commands here say what fits them.
    """
    try:
        yield
    except (DiskFullError, PermissionDeniedError) as exc:
        error = type(exc)(f"{exc.message} {_KEPT[command]}", path=exc.path)
        error.errno = exc.errno
        raise error from exc


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
    progress: Annotated[
        Literal["auto", "bar", "lines", "off"],
        typer.Option(
            help="auto: log lines when standard output is not a terminal or CI=true, else a "
            "bar per judge; bar; lines (one per judge every --progress-every percent or "
            "--progress-seconds); off."
        ),
    ] = _default("progress"),
    progress_every: Annotated[
        float, typer.Option(metavar="PERCENT", help="With progress lines: a line per this much.")
    ] = _default("progress_every"),
    progress_seconds: Annotated[
        float, typer.Option(metavar="S", help="With progress lines: a line at least this often.")
    ] = _default("progress_seconds"),
    score: Annotated[
        bool,
        typer.Option(
            "--score",
            help="Then score the judges (with the metrics of --metrics, project.yaml or "
            "metrics.yaml, read before any call).",
        ),
    ] = False,
    report: Annotated[bool, typer.Option("--report", help="Then write the report.")] = False,
    metrics: MetricsOption = None,
    json_output: JsonOption = False,
) -> None:
    """Run the project's judges; finished rows are saved as they arrive and reused on rerun.

    The judges of the project's files are read first: every judges YAML in judges/, and the
    judges of project.yaml (a judge edited there replaces the registered one). One `run` of a
    project at a time: a second one exits with 2, naming the process that holds the project's
    lock file (.meta-evaluator.lock). Exit status: 0 when every row has an answer (valid or
    invalid), 1 when some rows ended in an error (or, with --score, a judge was not scored), 2
    for bad configuration or a judge stopped (key, refused requests, endpoint unreachable), 3
    when batches are still running (run again later to collect them; 3 wins over 1 and 2, whose
    error is printed too), 4 when the file system stopped the run (disk full, read-only, no
    permission; finished rows are kept), 5 when it stopped at its cost ceiling (--max-cost; run
    again to go on). --score and --report follow a run that ended with 0 or 1.
    """
    if check and not dry_run:
        raise typer.BadParameter(
            "goes with --dry-run (or use `status --check`)", param_hint="--check"
        )
    if metrics is not None and not score:
        raise typer.BadParameter("goes with --score", param_hint="--metrics")
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
        progress=progress,
        progress_every=progress_every,
        progress_seconds=progress_seconds,
    )
    judge_ids = [j.strip() for j in judges.split(",") if j.strip()] if judges is not None else None
    if judge_ids == []:  # an empty $JUDGES in a scheduler must not mean "every judge"
        raise typer.BadParameter(
            "names no judge; leave it out to run them all", param_hint="--judges"
        )
    request = RunRequest(
        judge_ids, run_id, settings, dry_run=dry_run, check=check, score=score, report=report,
        metrics=metrics, json_output=json_output,
    )  # fmt: skip
    run_command(project_dir, request)


@app.command("all")
def all_steps(
    project_dir: ProjectDir = Path("."),
    metrics: MetricsOption = None,
    progress: Annotated[
        Literal["auto", "bar", "lines", "off"],
        typer.Option(help="As for `run`: auto, bar, lines or off."),
    ] = _default("progress"),
    json_output: JsonOption = False,
) -> None:
    """Run the judges, score them and write the report: `run --score --report` with defaults.

    Scoring and the report follow a run that ended with 0 or 1; the exit status is the run's,
    or 1 when a judge could not be scored. For more run options, use `run --score --report`.
    """
    settings = _flags_as_settings(progress=progress)
    request = RunRequest(
        None, None, settings, score=True, report=True, metrics=metrics, json_output=json_output,
        command="all",
    )  # fmt: skip
    run_command(project_dir, request)


@app.command()
def score(project_dir: ProjectDir = Path("."), metrics: MetricsOption = None) -> None:
    """Score every judge against the human annotations with the metrics of a YAML file.

    The metrics are those of --metrics, else of the project's project.yaml, else of its
    metrics.yaml. Results go to scores/<scorer>/<metric>/ (JSON, plots, and for preference
    metrics the trait table). Each registered judge without a complete run (never run, or its
    latest run unfinished: stopped by a dead endpoint or interrupted) is named with why. Exit
    status: 0 when every judge was scored, 1 when some could not be (or have no complete run),
    2 for bad configuration.
    """
    from meta_evaluator._cli_project import project_metrics
    from meta_evaluator.project import MetaEvaluator

    evaluator = MetaEvaluator(project_dir, load=True)
    with _what_is_kept("score"):
        failed, _ = score_project(evaluator, project_metrics(evaluator, metrics), project_dir)
    if failed:
        raise typer.Exit(1)


ComparedTaskOption = Annotated[
    str | None,
    typer.Option(
        help="The task compared (default: the only task with labels, else the project's one "
        "required task)."
    ),
]


@app.command("compare-runs")
def compare_runs(
    project_dir: ProjectDir,
    run_a: Annotated[str, typer.Argument(help="The first run: RUN, or RUN:JUDGE.")],
    run_b: Annotated[str, typer.Argument(help="The second run: RUN, or RUN:JUDGE.")],
    judge: Annotated[
        str | None,
        typer.Option(help="The judge of a run given without one (needed when it holds several)."),
    ] = None,
    task: ComparedTaskOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the comparison as JSON instead of a table.")
    ] = False,
) -> None:
    """Show what changed between two runs: the rows whose label flipped, and the agreement.

    The change in agreement with the humans comes with a paired bootstrap interval and
    McNemar's exact test. RUN_B may be the same judge run again (a new prompt, a re-run) or,
    as RUN:JUDGE, another judge. Every call also saves the comparison as
    reports/compare-runs/<A>__<B>[__<judge>].json, which the report shows. Exit status: 0, or 2
    when a run, judge or task is unknown (what exists is named), the two are the same run of
    the same judge, or the runs share no labelled row.
    """
    import json

    from meta_evaluator.project import MetaEvaluator
    from meta_evaluator.scores.run_comparison import COMPARISONS_FOLDER

    with json_errors("compare-runs", as_json):
        evaluator = MetaEvaluator(project_dir, load=True)
        with _what_is_kept("compare-runs"):
            comparison = evaluator.compare_runs(run_a, run_b, judge_id=judge, task=task)
    saved = evaluator.paths.reports_dir / COMPARISONS_FOLDER / f"{comparison.key}.json"
    if as_json:
        print(json.dumps(comparison.to_json(), indent=2, ensure_ascii=False))
    else:
        print_run_comparison(comparison, saved)


@app.command("plan-labels")
def plan_labels(
    project_dir: ProjectDir,
    judge: Annotated[
        str | None,
        typer.Option(help="The judge whose labels are the pilot (default: the only one)."),
    ] = None,
    task: Annotated[
        str | None,
        typer.Option(
            help="The single-choice task planned (default: the only task with labels, else the "
            "project's one required task)."
        ),
    ] = None,
    epsilon: Annotated[
        float | None,
        typer.Option(
            help="The alt-test's epsilon, in [0, 1) (default: the project's alt-test metric's, "
            "else 0.2)."
        ),
    ] = None,
    power: Annotated[float, typer.Option(help="The power a design must reach, in (0, 1).")] = 0.8,
    simulations: Annotated[
        int, typer.Option(help="Studies simulated per design (at least 10).")
    ] = 200,
    seed: Annotated[
        int, typer.Option(help="Seed of every draw: the same seed, the same plan.")
    ] = 0,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the plan as JSON instead of a table.")
    ] = False,
) -> None:
    """How many human labels the answer needs: the alt-test's power by items x annotators.

    The pilot is the project: the judge's latest complete labels and the annotators' labels of
    the same rows, resampled for each design. Prints the grid of power (and the width of
    kappa's 95% range), the smallest design that reaches --power or why none does, and saves
    reports/label_plan.json and reports/label_plan.png, which the report shows. Exit status: 0,
    or 2 when the project lacks what the plan needs (a judge's run, two annotators, a
    single-choice task: the message says which).
    """
    from meta_evaluator._cli_monitor import plan_labels_command

    plan_labels_command(
        project_dir, judge=judge, task=task, epsilon=epsilon, power=power,
        simulations=simulations, seed=seed, json_output=json_output,
    )  # fmt: skip


@app.command()
def drift(
    project_dir: ProjectDir,
    judge: Annotated[str, typer.Option(help="The judge checked.")],
    baseline: Annotated[
        str | None,
        typer.Option(
            help="The baseline run's id, or 'first' (default: the judge's first complete run)."
        ),
    ] = None,
    against: Annotated[
        str | None,
        typer.Option(help="The run checked: a run id, or 'latest' (the default)."),
    ] = None,
    task: ComparedTaskOption = None,
    json_output: Annotated[
        bool,
        typer.Option("--json", help="Print the check as one JSON object instead of the text."),
    ] = False,
) -> None:
    """Has the judge changed? Its labels and agreement between two of its runs, against limits.

    Compares two complete runs of the judge over the same rows: the label shift (chi-square,
    Stuart-Maxwell, PSI, share of rows changed) and the change in agreement with the humans
    with a paired bootstrap interval, on --task (default: the only task with labels, else the
    project's one required task, named in the output). Each is held against the thresholds of
    the `drift:` section of the project's project.yaml (default: max_psi 0.1,
    max_changed_share 0.1, max_agreement_drop 0.05). Each check is appended to
    reports/drift_history.jsonl, whose plot reports/drift_history.png the report shows. Each
    check needs a new run of the judge: run DIR --judges J --run-id NEW --no-cache. Exit status:
    0, also when the judge has one complete run (nothing to compare yet; --json says "checked":
    false); 5 when a threshold is exceeded; 2 when a run or the judge is unknown (what exists is
    named).
    """
    from meta_evaluator._cli_monitor import drift_command

    code = drift_command(
        project_dir, judge, baseline=baseline, against=against, task=task,
        json_output=json_output,
    )  # fmt: skip
    if code:
        raise typer.Exit(code)


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
def view(
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
            help="Access token visitors must present (needed for a non-loopback host).",
            envvar="META_EVALUATOR_VIEW_TOKEN",
        ),
    ] = None,
    annotate_url: Annotated[
        str | None,
        typer.Option(
            help="Address of the project's annotation page (`meta-evaluator annotate`), "
            "which each row links to for labelling."
        ),
    ] = None,
) -> None:
    """Serve the results viewer for the project until Ctrl-C: every row, flags, disagreements.

    Lists each judge's rows beside the humans' labels (filters, a confusion matrix, a page per
    row) and serves the same as JSON under /api/. It only reads the project. A project without
    a complete judge run, a port out of range or in use, or a host that is not this machine's
    exits with 2.
    """
    from meta_evaluator.project import MetaEvaluator

    evaluator = MetaEvaluator(project_dir, load=True)
    evaluator.launch_viewer(port=port, host=host, token=token, annotate_url=annotate_url)


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
    the judges that could not be carried over. A migrated judge whose configuration is
    unchanged reuses its rows (`run` asks them again only where the report says why). Nothing
    is half-written and nothing of 0.3.3's is lost: a failed migration is undone at once, one
    stopped at any moment (killed) by the next `migrate` (not by --dry-run, which says so).
    Exit status: 0 migrated, 2 not a 0.3.3 project or a file it cannot read, 4 the file
    system refused a write.
    """
    from meta_evaluator.migrate import migrate_project

    report = migrate_project(project_dir, dry_run=dry_run)
    for line in report.lines():
        print(line)


def _flowing(doc: str) -> str:
    """A command's docstring as its --help: each paragraph one line, wrapped by the terminal.

    Typer keeps a docstring's line breaks and wraps each line again at the terminal's width,
    which leaves a stub on every other line in an 80-column terminal.
    """
    paragraphs = inspect.cleandoc(doc).split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


for _command in app.registered_commands:
    if _command.help is None and _command.callback is not None and _command.callback.__doc__:
        _command.help = _flowing(_command.callback.__doc__)


@contextlib.contextmanager
def _progress_lines_shown() -> Iterator[None]:
    """Show a run's progress lines (INFO of the progress logger) on standard error meanwhile.

    The logger is put back as it was afterwards, so calling `main` in a process (tests, a
    script) leaves its logging as it found it.
    """
    progress = logging.getLogger("meta_evaluator.judge._progress")
    level, propagate = progress.level, progress.propagate
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s progress %(message)s", "%H:%M:%S"))
    progress.addHandler(handler)
    progress.setLevel(logging.INFO)
    progress.propagate = False
    try:
        yield
    finally:
        progress.removeHandler(handler)
        progress.setLevel(level)
        progress.propagate = propagate


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to the standard error of the moment (which tests and `--json` replace)."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def main() -> None:
    """Run the command line; a `MetaEvaluatorError` prints its message and exits with 2 or 4.

    4 when the file system stopped the command (`DiskFullError`, `PermissionDeniedError`,
    `OutsideProjectError`), 2 for every other error in the input. A usage error the parser
    finds (an unknown option, a file given as the project folder) is shown as typer shows it
    and exits with 2; with `--json` among the arguments it also ends standard output with
    `{"command": ..., "exit_status": 2, "error": ...}`, as the commands' own errors do. Ctrl-C
    exits with 130 saying `stopped by Ctrl-C` (and its JSON object with `--json`): `run` and
    `all` say what was saved themselves.
    """
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = sys.argv[1:]
    try:
        with _progress_lines_shown():
            code = app(args=args, standalone_mode=False)
    except MetaEvaluatorError as exc:
        print(f"error: {cli_message(exc)}", file=sys.stderr)
        raise SystemExit(exit_code_of(exc)) from None
    except _USAGE_ERROR as exc:
        _usage_error(exc, args)
    except typer.Abort:
        print("Aborted!", file=sys.stderr)
        raise SystemExit(1) from None
    if code == EXIT_STOPPED:  # typer's silent exit for Ctrl-C in a command that did not say it
        say_stopped(args)
    raise SystemExit(code if isinstance(code, int) else 0)


_USAGE_ERROR: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)
"""The base of the parser's errors: click's, or that of the copy of click typer 0.29 ships."""


def _usage_error(exc: Any, args: list[str]) -> NoReturn:
    """Show a usage error as typer does (and as JSON with --json); exit with its status."""
    from typer import rich_utils

    given = args[: args.index("--")] if "--" in args else args
    if "--json" in given:
        ctx = getattr(exc, "ctx", None)
        if ctx is not None and ctx.parent is not None:
            command: str | None = ctx.info_name
        else:  # the parser stopped before choosing the command
            command = next((a for a in given if a in _command_names()), None)
        print_json(sys.stdout, {"command": command, "exit_status": exc.exit_code,
                                "error": exc.format_message()})  # fmt: skip
    rich_utils.rich_format_error(exc)
    raise SystemExit(exc.exit_code) from None


def _command_names() -> set[str]:
    return {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}


if __name__ == "__main__":
    main()
