"""The built-in example projects build through the public API and reload equal."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.errors import ProjectError, ProjectExistsError
from meta_evaluator.examples import create_example_project, example_names


@pytest.mark.parametrize("name", example_names())
def test_example_builds_and_reloads(name: str, tmp_path: Path) -> None:
    built = create_example_project(name, tmp_path / name)
    reloaded = MetaEvaluator(tmp_path / name, load=True)
    assert reloaded.data == built.data
    assert reloaded.eval_task == built.eval_task
    assert reloaded.judge_registry == built.judge_registry
    assert reloaded.judge_registry, "an example needs at least one judge"
    assert all(j.llm_client == "mock" for j in reloaded.judge_registry.values())


def test_refusal_example_has_integer_ids_and_both_kinds_of_answer(tmp_path: Path) -> None:
    evaluator = create_example_project("refusal", tmp_path / "r")
    assert evaluator.data is not None
    assert evaluator.data.data.schema["sample_id"] == pl.Int64
    assert evaluator.data.data["llm_response"].str.contains("(?i)can't|won't").sum() > 5


def test_unknown_example_and_existing_project(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match="refusal"):
        create_example_project("nope", tmp_path / "x")
    create_example_project("refusal", tmp_path / "r")
    with pytest.raises(ProjectExistsError):
        create_example_project("refusal", tmp_path / "r")


def test_committed_projects_equal_a_fresh_build(tmp_path: Path) -> None:
    """projects/ holds what `make projects` builds; regenerate it when this fails."""
    projects = Path(__file__).parents[1] / "projects"
    for name in example_names():
        create_example_project(name, tmp_path / name)
        fresh = tmp_path / name
        for relative in [
            "main_state.json",
            *(f"data/{p.name}" for p in (fresh / "data").iterdir()),
        ]:
            committed = projects / name / relative
            assert committed.is_file(), f"{committed} is missing: run make projects"
            assert committed.read_bytes() == (fresh / relative).read_bytes(), (
                f"{committed} differs from a fresh build: run make projects"
            )
        assert (
            MetaEvaluator(projects / name, load=True).data == MetaEvaluator(fresh, load=True).data
        )
