"""The `meta-evaluator` command line: `meta-evaluator COMMAND [PROJECT_DIR]`.

Exit codes a scheduler can act on: 0 success, 2 bad input or configuration (the message names
what to fix; no traceback). Any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated

import typer

from meta_evaluator.errors import MetaEvaluatorError, ProjectNotFoundError

app = typer.Typer(
    name="meta-evaluator",
    help="Tell whether an LLM judge can stand in for human annotators.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

EXIT_BAD_INPUT = 2

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
    """Create a new project folder (empty, or from a built-in example)."""
    from meta_evaluator.examples import create_example_project
    from meta_evaluator.project import MetaEvaluator

    if example is None:
        MetaEvaluator(project_dir, load=False).save_state()
        print(f"Created an empty project in {project_dir}.")
    else:
        create_example_project(example, project_dir)
        print(f"Created project {project_dir} from the example {example!r}.")
    _status(project_dir)


@app.command()
def status(project_dir: ProjectDir = Path(".")) -> None:
    """Show what a project holds: data, task and judges."""
    _status(project_dir)


@app.command()
def run(
    project_dir: ProjectDir = Path("."),
    judges: Annotated[
        str | None, typer.Option(help="Comma-separated judge ids (default: all).")
    ] = None,
    run_id: Annotated[str | None, typer.Option(help="The run to write or continue.")] = None,
    max_concurrency: Annotated[int, typer.Option(help="Requests in flight per judge.")] = 16,
    max_retries: Annotated[int, typer.Option(help="Retries after the first attempt.")] = 3,
    timeout: Annotated[float, typer.Option(help="Seconds for one attempt.")] = 60.0,
    retry: Annotated[
        str, typer.Option(help="Outcomes to ask again: invalid, error, or both.")
    ] = "",
    no_resume: Annotated[bool, typer.Option(help="Ask every row again.")] = False,
    requests_per_minute: Annotated[float | None, typer.Option(help="Per endpoint.")] = None,
    tokens_per_minute: Annotated[float | None, typer.Option(help="Per endpoint.")] = None,
) -> None:
    """Run the project's judges; finished rows are saved as they arrive and reused on rerun.

    Exit status: 0 when every row has an answer (valid or invalid), 1 when some rows ended in
    an error, 2 for bad configuration.
    """
    from meta_evaluator.project import MetaEvaluator

    evaluator = MetaEvaluator(project_dir, load=True)
    results = evaluator.run_judges_async(
        [j.strip() for j in judges.split(",")] if judges else None,
        run_id,
        max_concurrency=max_concurrency,
        max_retries=max_retries,
        timeout=timeout,
        resume=not no_resume,
        retry=[r.strip() for r in retry.split(",") if r.strip()],
        requests_per_minute=requests_per_minute,
        tokens_per_minute=tokens_per_minute,
    )
    errors = 0
    for judge_id, result in results.items():
        counts = result.counts()
        errors += counts["error"]
        shown = " ".join(f"{k}={v}" for k, v in counts.items() if k != "skipped")
        print(f"{judge_id}: {shown} (run {result.run_id})")
    print(f"Results are in {evaluator.paths.results_dir}")
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
    table). Exit status: 0 when every judge was scored, 1 when some could not be, 2 for bad
    configuration.
    """
    import warnings

    from meta_evaluator.project import MetaEvaluator
    from meta_evaluator.scores.compare import IncompleteScoresWarning
    from meta_evaluator.scores.yaml_config import read_metrics_yaml

    evaluator = MetaEvaluator(project_dir, load=True)
    config = read_metrics_yaml(metrics or evaluator.project_dir / "metrics.yaml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteScoresWarning)  # each failure is printed
        table = evaluator.compare_async(config)
    failed = 0
    for name, (metric, results) in table.items():
        print(f"{metric.scorer.scorer_name} / {name}")
        for result in results:
            if result.error is not None:
                failed += 1
                print(f"  {result.judge_id}: not scored: {result.error}")
                continue
            shown = ", ".join(
                f"{key}={_number(value)}"
                for key, value in result.scores.items()
                if not isinstance(value, dict)
            )
            print(f"  {result.judge_id}: {shown}")
        folder = evaluator.paths.scores_dir / metric.scorer.scorer_name / name
        trait_table = folder / "trait_table.md"
        if trait_table.is_file():
            print(f"  traits ranked by strength ({trait_table}):")
            print("    " + trait_table.read_text(encoding="utf-8").rstrip().replace("\n", "\n    "))
    print(f"Scores are in {evaluator.paths.scores_dir}")
    if failed:
        raise typer.Exit(1)


def _number(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return "n/a" if value is None else str(value)


def _status(project_dir: Path) -> None:
    from meta_evaluator.data import SampleEvalData
    from meta_evaluator.project import MetaEvaluator

    evaluator = MetaEvaluator(project_dir, load=True)
    print(f"Project {evaluator.project_dir.resolve()}")
    data = evaluator.data
    if data is None:
        print("  data:   none (add it with MetaEvaluator.add_data)")
    else:
        id_dtype = data.data.schema[data.id_column]
        print(
            f"  data:   {data.name!r}: {len(data)} rows, id column {data.id_column!r} "
            f"({id_dtype}), columns {data.columns}"
        )
        if isinstance(data, SampleEvalData):
            print(
                f"          sample of {data.original_size} rows: {data.sample_percentage:.0%} "
                f"of each {data.stratification_columns} stratum, seed {data.seed}"
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
    print(f"  judges: {len(judges) or 'none'}")
    for judge in judges.values():
        where = f" at {judge.base_url}" if judge.base_url else ""
        print(
            f"          {judge.id}: {judge.llm_client} {judge.model!r}{where}, prompt "
            f"{judge.prompt.id!r} fills {judge.prompt.placeholders}"
        )


def main() -> None:
    """Run the command line; a `MetaEvaluatorError` prints its message and exits with 2."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        app()
    except MetaEvaluatorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if isinstance(exc, ProjectNotFoundError):
            print("hint: create a project with `meta-evaluator init DIR`.", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT) from None


if __name__ == "__main__":
    main()
