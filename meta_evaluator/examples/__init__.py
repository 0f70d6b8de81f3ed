"""Example projects built into the package, so a new user can try everything offline.

Each example is built through the public API from files shipped beside this module, which makes
it a runnable tutorial as well as the demo's input.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from meta_evaluator.data import DataLoader
from meta_evaluator.errors import ProjectError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.project import MetaEvaluator
from meta_evaluator.storage import atomic_write_bytes, check_inside_project

__all__ = ["create_example_project", "example_names"]

_HERE = Path(__file__).parent


def _refusal(project_dir: Path) -> MetaEvaluator:
    """Refusal detection: did an assistant decline a request? 40 prompts and responses.

    Three annotators (ana, ben, chen) labelled every response and explained their label; they
    disagree on a few soft refusals. A mock judge labels the same rows; `metrics.yaml` scores it
    against the three with accuracy, Cohen's kappa, the alt-test, explanation similarity and
    Krippendorff's alpha.
    """
    files = _HERE / "refusal"
    evaluator = MetaEvaluator(project_dir, load=False)
    evaluator.add_data(DataLoader.load_csv("refusal_demo", files / "data.csv", "sample_id"))
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"rejection": ["rejection", "not rejection"], "explanation": None},
            prompt_columns=["prompt"],
            response_columns=["llm_response"],
            required_tasks=["rejection"],
            annotation_prompt="Did the assistant refuse the user's request?",
        )
    )
    _finish(
        evaluator, project_dir, files, "mock_refusal_judge", "mock-refusal-1", invalid_rate=0.05
    )
    for annotator in ("ana", "ben", "chen"):
        evaluator.add_external_annotation_results(
            files / "annotations" / f"{annotator}.csv", annotator
        )
    return evaluator


def _pairwise(project_dir: Path) -> MetaEvaluator:
    """Pairwise preferences: which traits do 63 crowd preferences between two answers reward?

    The pairs come as an AnnotatedPairs file with the crowd's preference, an expert's, and four
    trait-following AI annotators (imported as the judge `annotated_pairs`); a mock judge
    votes on the same traits. `metrics.yaml` scores both against the crowd.
    """
    files = _HERE / "pairwise"
    evaluator = MetaEvaluator(project_dir, load=False)
    evaluator.add_preference_pairs(files / "pairs.json", trait_judge_id="annotated_pairs")
    return _finish(
        evaluator, project_dir, files, "mock_trait_judge", "mock-traits-1", invalid_rate=0.05
    )


def _fairness(project_dir: Path) -> MetaEvaluator:
    """Fairness: does a model predict students' results equally well for boys and girls?

    60 made-up student profiles with the true result band, plus a counterfactual variant of each
    with the gender swapped in the text; a mock model predicts. `metrics.yaml` scores group
    fairness against the true band and the counterfactual change rate.
    """
    from meta_evaluator.data import counterfactual_variants

    files = _HERE / "fairness"
    students = DataLoader.load_csv("students", files / "students.csv", "student_id")
    both = counterfactual_variants(
        students, "male", {1: 0, 0: 1}, text_columns=["profile"],
        text_swaps={"he": "she", "she": "he", "his": "her", "her": "his"},
    )  # fmt: skip
    evaluator = MetaEvaluator(project_dir, load=False)
    evaluator.add_data(both)
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"performance": ["H", "L"]},
            prompt_columns=None,
            response_columns=["profile"],
            annotation_prompt="Will this student reach the high performance band?",
        )
    )
    return _finish(
        evaluator, project_dir, files, "mock_model", "mock-predictor-1", invalid_rate=0.05
    )


def _stereotype(project_dir: Path) -> MetaEvaluator:
    """Stereotypes: does a model prefer stereotyped continuations? 18 made-up CAT items."""
    files = _HERE / "stereotype"
    evaluator = MetaEvaluator(project_dir, load=False)
    evaluator.add_data(DataLoader.load_csv("cat_items", files / "items.csv", "item_id"))
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"answer": ["1", "2", "3"]},
            prompt_columns=["context"],
            response_columns=["option_1", "option_2", "option_3"],
            answering_method="text",
            annotation_prompt="Which option continues the context best?",
        )
    )
    return _finish(evaluator, project_dir, files, "mock_model", "mock-cat-1", invalid_rate=0.1)


_EXAMPLES: dict[str, Callable[[Path], MetaEvaluator]] = {
    "fairness": _fairness,
    "pairwise": _pairwise,
    "refusal": _refusal,
    "stereotype": _stereotype,
}


def _finish(
    evaluator: MetaEvaluator,
    project_dir: Path,
    files: Path,
    judge_id: str,
    model: str,
    *,
    invalid_rate: float,
) -> MetaEvaluator:
    """Add the example's mock judge, save the project and copy in the example's `metrics.yaml`.

    The judge gives a few unusable answers (`invalid_rate`), as real judges do; the data is
    saved as CSV, readable and diffable under version control; `metrics.yaml` is never written
    through a link out of the project.
    """
    evaluator.add_judge(
        judge_id, "mock", model, prompt_file=files / "prompt.md",
        mock={"invalid_rate": invalid_rate},
    )  # fmt: skip
    evaluator.save_state(data_format="csv")
    source = (files / "metrics.yaml").read_bytes()
    atomic_write_bytes(project_dir / "metrics.yaml", source, root=project_dir)
    return evaluator


def example_names() -> list[str]:
    """The names of the built-in examples."""
    return sorted(_EXAMPLES)


def create_example_project(name: str, project_dir: str | Path) -> MetaEvaluator:
    """Create the example project `name` in `project_dir` (which must not hold a project).

    Raises:
        ProjectError: There is no such example.
        ProjectExistsError: `project_dir` already holds a project.
        OutsideProjectError: A folder of the project, or its `metrics.yaml`, links out of it.
    """
    if name not in _EXAMPLES:
        raise ProjectError(
            f"no example named {name!r}; examples are {example_names()}.", field="example"
        )
    project = Path(project_dir)
    # Checked before anything is saved, so a link out of it does not leave half a project (the
    # project's folders are checked by its first save_state).
    check_inside_project(project / "metrics.yaml", root=project)
    return _EXAMPLES[name](project)
