"""The built-in example projects build through the public API and reload equal."""

from __future__ import annotations

import csv
from pathlib import Path

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.errors import ProjectError, ProjectExistsError
from meta_evaluator.examples import create_example_project, example_names
from meta_evaluator.scores.yaml_config import read_metrics_yaml


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


# ----- the pairwise example ----------------------------------------------------------------------

PAIRWISE_TRAITS = {
    "is_more_concise",
    "gives_a_concrete_example",
    "uses_a_bulleted_list",
    "is_more_polite",
}


def test_pairwise_example_traits_the_crowd_rewards_and_penalises(tmp_path: Path) -> None:
    evaluator = create_example_project("pairwise", tmp_path / "pairwise")
    config = read_metrics_yaml(tmp_path / "pairwise" / "metrics.yaml")
    judges = evaluator.load_all_judge_results()
    assert list(judges) == ["annotated_pairs"]  # the mock judge has not run yet
    table = evaluator.compare_async(config, judges)
    ((metric, results),) = table.values()
    assert metric.get_unique_name() == "traits"
    (result,) = results
    assert result.judge_id == "annotated_pairs" and result.error is None
    per_task = result.metadata["per_task"]
    assert set(per_task) == PAIRWISE_TRAITS
    strength = {trait: entry["scores"]["strength"] for trait, entry in per_task.items()}
    assert strength["gives_a_concrete_example"] > 0.2
    assert strength["is_more_concise"] < -0.3
    assert max(strength, key=lambda t: strength[t]) == "gives_a_concrete_example"
    assert min(strength, key=lambda t: strength[t]) == "is_more_concise"
    # the crowd's two missing preferences are left out of every trait
    assert {entry["metadata"]["num_pairs"] for entry in per_task.values()} == {61}
    written = tmp_path / "pairwise" / "scores" / "preference" / "traits" / "trait_table.csv"
    with written.open(encoding="utf-8", newline="") as handle:
        rows = {r["trait"]: float(r["strength"]) for r in csv.DictReader(handle)}
    assert rows == pytest.approx(strength)


def test_committed_pairwise_project_has_metrics_annotations_and_trait_table(
    tmp_path: Path,
) -> None:
    """projects/pairwise is what `make projects` builds (init, run, score); regenerate it."""
    root = Path(__file__).parents[1]
    committed = root / "projects" / "pairwise"
    example = root / "meta_evaluator" / "examples" / "pairwise"
    assert (committed / "metrics.yaml").read_bytes() == (example / "metrics.yaml").read_bytes()

    evaluator = MetaEvaluator(committed, load=True)
    humans = evaluator.load_all_human_results()
    assert sorted(humans) == ["crowd_preference", "expert"]
    assert all(h.results_data.height == 63 for h in humans.values())
    assert sorted(evaluator.load_all_judge_results()) == ["annotated_pairs", "mock_trait_judge"]

    folder = committed / "scores" / "preference" / "traits"
    assert (folder / "trait_table.md").is_file()
    with (folder / "trait_table.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {(r["trait"], r["judge"]) for r in rows} == {
        (t, j) for t in PAIRWISE_TRAITS for j in ("annotated_pairs", "mock_trait_judge")
    }
    strengths = [float(r["strength"]) for r in rows]
    assert strengths == sorted(strengths, reverse=True)
    table_md = (folder / "trait_table.md").read_text(encoding="utf-8")
    assert all(f"| {r['trait']} | {r['judge']} |" in table_md for r in rows)

    # the imported judge's rows are reproducible from the committed example files
    fresh = create_example_project("pairwise", tmp_path / "fresh")
    config = read_metrics_yaml(committed / "metrics.yaml")
    ((_, (result,)),) = fresh.compare_async(config, fresh.load_all_judge_results()).values()
    recomputed = {t: e["scores"]["strength"] for t, e in result.metadata["per_task"].items()}
    stored = {r["trait"]: float(r["strength"]) for r in rows if r["judge"] == "annotated_pairs"}
    assert stored == pytest.approx(recomputed), "projects/pairwise is stale: run make projects"
