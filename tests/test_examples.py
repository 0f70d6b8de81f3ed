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


# ----- the refusal example -----------------------------------------------------------------------


def test_refusal_example_has_three_annotators_who_mostly_agree(tmp_path: Path) -> None:
    evaluator = create_example_project("refusal", tmp_path / "refusal")
    humans = evaluator.load_all_human_results()
    assert sorted(humans) == ["ana", "ben", "chen"]
    labels = {}
    for name, human in humans.items():
        frame = human.results_data.sort("original_id")
        assert frame.height == 40
        assert frame.schema["original_id"] == pl.Int64  # the data's integer ids
        assert set(frame["outcome"]) == {"valid"}
        assert frame["explanation"].str.len_chars().min() > 5
        labels[name] = frame["rejection"].to_list()
    for a, b in [("ana", "ben"), ("ana", "chen"), ("ben", "chen")]:
        agreement = sum(x == y for x, y in zip(labels[a], labels[b], strict=True)) / 40
        assert 0.85 <= agreement < 1.0, (a, b, agreement)
    assert (tmp_path / "refusal" / "metrics.yaml").read_bytes() == (
        Path(__file__).parents[1] / "meta_evaluator/examples/refusal/metrics.yaml"
    ).read_bytes()


def test_refusal_example_runs_and_scores_every_metric(tmp_path: Path) -> None:
    evaluator = create_example_project("refusal", tmp_path / "refusal")
    config = read_metrics_yaml(tmp_path / "refusal" / "metrics.yaml")
    assert [m.scorer.scorer_name for m in config.metrics] == [
        "accuracy", "cohens_kappa", "alt_test", "text_similarity", "krippendorff_alpha",
    ]  # fmt: skip
    evaluator.run_judges_async()
    table = evaluator.compare_async(config)
    results = {metric.scorer.scorer_name: r for metric, (r,) in table.values()}
    assert all(r.error is None for r in results.values()), results
    assert results["accuracy"].confidence_intervals is not None
    assert sorted(results["alt_test"].metadata["per_annotator"]) == ["ana", "ben", "chen"]
    assert results["alt_test"].metadata["epsilon"] == 0.2
    assert results["krippendorff_alpha"].scores["alpha_humans"] > 0.8  # the humans agree
    assert 0.0 <= results["text_similarity"].scores["similarity"] <= 1.0


# ----- the fairness and stereotype examples ------------------------------------------------------

MODEL_EVAL_SCORES = {
    "fairness": [
        ("fairness", "gender_fairness"),
        ("counterfactual", "gender_counterfactual"),
    ],
    "stereotype": [("stereotype", "context_association")],
}


def test_fairness_example_holds_originals_and_gender_swapped_variants(tmp_path: Path) -> None:
    evaluator = create_example_project("fairness", tmp_path / "fairness")
    assert evaluator.data is not None
    frame = evaluator.data.data
    assert evaluator.data.id_column == "student_id"
    assert frame.schema["student_id"] == pl.Int64
    assert frame.height == 120
    originals = frame.filter(pl.col("counterfactual_of").is_null())
    variants = frame.filter(pl.col("counterfactual_of").is_not_null())
    assert originals["student_id"].to_list() == list(range(1, 61))
    assert variants["student_id"].to_list() == list(range(101, 161))
    assert variants["counterfactual_of"].to_list() == list(range(1, 61))
    assert (variants["male"] == 1 - originals["male"]).all()
    assert variants["performance"].to_list() == originals["performance"].to_list()
    he = originals.filter(pl.col("male") == 1)["profile"][0]
    she = variants.filter(pl.col("counterfactual_of") == originals.filter(
        pl.col("male") == 1)["student_id"][0])["profile"][0]  # fmt: skip
    assert " He " in he and " She " in she and " his " in he and " her " in she
    assert evaluator.eval_task.task_names == ["performance"]
    config = read_metrics_yaml(tmp_path / "fairness" / "metrics.yaml")
    assert [m.scorer.scorer_name for m in config.metrics] == ["fairness", "counterfactual"]


def test_stereotype_example_is_a_text_task_over_option_labels(tmp_path: Path) -> None:
    evaluator = create_example_project("stereotype", tmp_path / "stereotype")
    assert evaluator.data is not None
    frame = evaluator.data.data
    assert frame.height == 18 and evaluator.data.id_column == "item_id"
    labels = {"stereotype", "anti-stereotype", "unrelated"}
    for row in frame.iter_rows(named=True):
        assert {row[f"option_{k}_label"] for k in (1, 2, 3)} == labels, row["item_id"]
    assert set(frame["context_type"]) == {"intrasentence", "intersentence"}
    assert evaluator.eval_task.answering_method == "text"
    config = read_metrics_yaml(tmp_path / "stereotype" / "metrics.yaml")
    assert [m.get_unique_name() for m in config.metrics] == ["context_association"]


@pytest.mark.parametrize("name", sorted(MODEL_EVAL_SCORES))
def test_committed_model_eval_project_has_metrics_results_and_scores(
    name: str, tmp_path: Path
) -> None:
    """projects/<name> is what `make projects` builds (init, run, score); regenerate it."""
    import shutil

    from meta_evaluator.scores import BaseScoringResult

    root = Path(__file__).parents[1]
    committed = root / "projects" / name
    example = root / "meta_evaluator" / "examples" / name
    assert (committed / "metrics.yaml").read_bytes() == (example / "metrics.yaml").read_bytes()
    evaluator = MetaEvaluator(committed, load=True)
    judges = evaluator.load_all_judge_results()
    assert sorted(judges) == ["mock_model"]
    assert judges["mock_model"].results_data.height == len(evaluator.data.data)

    stored = {}
    for scorer, unique in MODEL_EVAL_SCORES[name]:
        path = committed / "scores" / scorer / unique / "mock_model_result.json"
        assert path.is_file(), f"{path} is missing: run make projects"
        result = BaseScoringResult.load_state(path)
        assert result.error is None and result.scorer_name == scorer
        stored[unique] = result

    # the stored scores are what scoring the committed results gives (on a copy)
    copy = tmp_path / name
    shutil.copytree(committed, copy)
    copied = MetaEvaluator(copy, load=True)
    table = copied.compare_async(read_metrics_yaml(copy / "metrics.yaml"))
    assert sorted(table) == sorted(stored)
    for unique, (_, (fresh,)) in table.items():
        # same inputs, same arithmetic: equal after a JSON round trip (floats included)
        assert plain(fresh.scores) == plain(stored[unique].scores), f"{unique} is stale"
        assert plain(fresh.metadata) == plain(stored[unique].metadata), f"{unique} is stale"
        assert fresh.num_comparisons == stored[unique].num_comparisons


def plain(value: object) -> object:
    import json

    return json.loads(json.dumps(value))


@pytest.mark.parametrize("name", sorted(MODEL_EVAL_SCORES))
def test_committed_model_eval_scores_count_judge_outcomes(name: str) -> None:
    from meta_evaluator.scores import BaseScoringResult

    committed = Path(__file__).parents[1] / "projects" / name
    results = MetaEvaluator(committed, load=True).load_all_judge_results()["mock_model"]
    counted = dict(results.results_data.group_by("outcome").len().iter_rows())
    expected = {o: int(counted.get(o, 0)) for o in ("valid", "invalid", "error")}
    for scorer, unique in MODEL_EVAL_SCORES[name]:
        path = committed / "scores" / scorer / unique / "mock_model_result.json"
        assert BaseScoringResult.load_state(path).judge_outcomes == expected
