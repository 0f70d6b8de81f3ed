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
