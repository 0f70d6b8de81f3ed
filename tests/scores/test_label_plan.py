"""`MetaEvaluator.plan_labels`: a project's own labels as the pilot of the label-budget planner.

Synthetic judges built to have the property (a perfect judge, a random one, one near the
humans on a small pilot) and every error; the pilot is checked against `stats.plan_labels`
run on labels the test aligns itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from meta_evaluator.errors import ProjectError, ScoringError, TaskError, UnsafeNameError
from meta_evaluator.eval_task import MultiLabelSchema
from meta_evaluator.scores import MetricConfig, MetricsConfig
from meta_evaluator.scores.label_plan import LabelPlanReport
from meta_evaluator.scores.metrics import AccuracyScorer, AltTestScorer
from meta_evaluator.stats.label_budget import plan_labels
from tests.scores.monitor_projects import (
    LABELS,
    add_labels,
    add_run,
    make_project,
    noisy,
    random_labels,
)

QUICK = {"simulations": 40}
PNG = b"\x89PNG\r\n\x1a\n"


def test_a_perfect_judge_plans_small(tmp_path: Path) -> None:
    evaluator, truth = make_project(tmp_path, rows=200)
    add_run(evaluator, tmp_path, "perfect", "r1", truth)
    plan = evaluator.plan_labels(**QUICK)
    assert plan.judge_id == "perfect" and plan.run_id == "r1" and plan.task == "verdict"
    assert plan.annotators == ("ana", "ben", "cy") and plan.pilot_items == 200
    assert plan.chosen is not None and plan.reason is None
    assert plan.chosen.items <= 50 and plan.chosen.annotators == 2
    assert plan.chosen.labels == plan.chosen.items * plan.chosen.annotators
    assert plan.chosen.power >= 0.8
    # fewer labels never reach the power: the chosen design is the cheapest that does
    cheaper = [d for d in plan.designs if d.labels < plan.chosen.labels]
    assert all(d.power < 0.8 for d in cheaper)
    assert plan.judge_advantage is not None and plan.human_advantage is not None
    assert plan.judge_advantage > plan.human_advantage  # the judge is the truth; humans 80%
    reports = evaluator.project_dir / "reports"
    saved = json.loads((reports / "label_plan.json").read_text())
    assert saved == plan.to_json() and LabelPlanReport.load(reports / "label_plan.json") == plan
    assert (reports / "label_plan.png").read_bytes().startswith(PNG)


def test_a_random_judge_never_reaches_the_power(tmp_path: Path) -> None:
    evaluator, _ = make_project(tmp_path, rows=200)
    add_run(evaluator, tmp_path, "coin", "r1", random_labels(200, seed=5))
    plan = evaluator.plan_labels(**QUICK)
    assert plan.chosen is None
    assert max(d.power for d in plan.designs) <= 0.05
    assert plan.reason is not None and plan.reason.startswith("the judge is far below the humans")
    assert plan.human_advantage is not None and plan.judge_advantage is not None
    assert plan.human_advantage - plan.judge_advantage >= 0.2  # at least epsilon: hopeless
    assert f"advantage probability is {plan.judge_advantage:.2f} and the humans' " in plan.reason
    assert "rho^" not in plan.reason  # words: the line is read in a terminal and a report
    assert (
        json.loads((evaluator.project_dir / "reports/label_plan.json").read_text())["chosen"]
        is None
    )


def test_a_judge_within_epsilon_on_a_small_pilot_needs_more_items(tmp_path: Path) -> None:
    """Close to the humans, but 40 pilot rows (a grid of 30 to 50 items) give too little power."""
    evaluator, truth = make_project(tmp_path, rows=40)
    add_run(evaluator, tmp_path, "near", "r1", noisy(truth, 0.5, seed=99))
    plan = evaluator.plan_labels(epsilon=0.3, **QUICK)
    assert plan.chosen is None
    assert plan.human_advantage is not None and plan.judge_advantage is not None
    assert plan.human_advantage - plan.judge_advantage < 0.3
    assert plan.reason is not None and "within epsilon = 0.3" in plan.reason
    assert "More items than the grid tries" in plan.reason
    assert max(d.items for d in plan.designs) == 50  # the grid: up to twice the pilot


def test_the_pilot_is_the_project_rows_aligned_by_id(tmp_path: Path) -> None:
    """String ids, annotation files in another order and with gaps: the plan is that of
    `stats.plan_labels` on the labels aligned here by hand."""
    ids = [f"q{i:03d}" for i in range(120)]
    evaluator, truth = make_project(tmp_path, ids=ids, annotators=())
    humans = {name: noisy(truth, 0.8, seed=s) for s, name in enumerate(("ana", "ben", "cy"))}
    humans["ben"][:30] = [None] * 30  # ben skipped the first 30 rows
    for name, labels in humans.items():
        add_labels(evaluator, tmp_path, name, list(reversed(ids)), list(reversed(labels)))
    judge = noisy(truth, 0.9, seed=7)
    judge[5] = None  # no label for one row
    path = tmp_path / "judge.csv"
    kept = [(i, label) for i, label in zip(ids, judge, strict=True) if label is not None]
    pl.DataFrame({"original_id": [k[0] for k in kept][::-1], "verdict": [k[1] for k in kept][::-1]}
                 ).write_csv(path)  # fmt: skip
    evaluator.add_external_judge_results(path, "j", run_id="r1", tasks=["verdict"])
    plan = evaluator.plan_labels(simulations=30, seed=3)
    expected = plan_labels(judge, [humans[h] for h in ("ana", "ben", "cy")], simulations=30,
                           seed=3)  # fmt: skip
    assert plan.pilot_items == expected.pilot_items == 119
    assert [d.model_dump() for d in plan.designs] == [d.as_dict() for d in expected.designs]


def test_the_pilot_is_the_rows_the_humans_labelled(tmp_path: Path) -> None:
    """A judge run over 150 rows, of which the annotators labelled 60: a pilot of 60."""
    ids = list(range(1, 151))
    evaluator, truth = make_project(tmp_path, ids=ids, annotators=())
    humans = [noisy(truth[:60], 0.8, seed=s) for s in range(3)]
    for name, labels in zip(("ana", "ben", "cy"), humans, strict=True):
        add_labels(evaluator, tmp_path, name, ids[:60], labels)
    judge = noisy(truth, 0.8, seed=9)
    add_run(evaluator, tmp_path, "j", "r1", judge)
    plan = evaluator.plan_labels(simulations=20)
    expected = plan_labels(judge[:60], humans, simulations=20)
    assert plan.pilot_items == 60
    assert [d.model_dump() for d in plan.designs] == [d.as_dict() for d in expected.designs]


def test_epsilon_comes_from_the_projects_alt_test_metric(tmp_path: Path) -> None:
    evaluator, truth = make_project(tmp_path, rows=60)
    add_run(evaluator, tmp_path, "j", "r1", truth)
    assert evaluator.plan_labels(**QUICK).alt_test.source == "default"
    (evaluator.project_dir / "metrics.yaml").write_text(
        "metrics:\n"
        "  - {scorer: accuracy, task_names: [verdict], aggregation_name: single}\n"
        "  - scorer: alt_test\n"
        "    args: {epsilon: 0.1, multiplicative_epsilon: true, q_fdr: 0.1,\n"
        "           min_instances_per_human: 20}\n"
        "    task_names: [verdict]\n"
        "    aggregation_name: single\n"
        "    display_name: verdict_alt\n"
    )
    settings = evaluator.plan_labels(**QUICK).alt_test
    assert (settings.epsilon, settings.multiplicative_epsilon, settings.q_fdr) == (0.1, True, 0.1)
    assert settings.min_instances_per_human == 20 and settings.source == "metric verdict_alt"
    assert evaluator.plan_labels(epsilon=0.25, **QUICK).alt_test.epsilon == 0.25
    assert evaluator.plan_labels(epsilon=0.25, **QUICK).alt_test.source == "epsilon"
    # a config given from Python wins over the files
    evaluator.add_metrics_config(MetricsConfig(metrics=[
        MetricConfig(scorer=AltTestScorer(epsilon=0.05), task_names=["verdict"],
                     aggregation_name="single"),
        MetricConfig(scorer=AccuracyScorer(), task_names=["verdict"], aggregation_name="single"),
    ]))  # fmt: skip
    assert evaluator.plan_labels(**QUICK).alt_test.epsilon == 0.05


def test_the_same_seed_gives_the_same_plan(tmp_path: Path) -> None:
    evaluator, truth = make_project(tmp_path, rows=80)
    add_run(evaluator, tmp_path, "j", "r1", noisy(truth, 0.7, seed=1))
    first = evaluator.plan_labels(seed=4, **QUICK)
    assert evaluator.plan_labels(seed=4, **QUICK) == first
    assert evaluator.plan_labels(seed=5, **QUICK).designs != first.designs


def test_errors_name_what_is_missing(tmp_path: Path) -> None:
    evaluator, truth = make_project(tmp_path, rows=40, annotators=())
    with pytest.raises(ProjectError, match="no judge has a complete run"):
        evaluator.plan_labels()
    add_run(evaluator, tmp_path, "j", "r1", truth)
    with pytest.raises(ScoringError, match=r"at least two annotators.*the project has none"):
        evaluator.plan_labels()
    add_labels(evaluator, tmp_path, "ana", list(range(1, 41)), truth)
    with pytest.raises(ScoringError, match=r"has only \['ana'\]"):
        evaluator.plan_labels()
    add_labels(evaluator, tmp_path, "ben", list(range(1, 41)), truth)
    add_run(evaluator, tmp_path, "k", "r1", truth)
    with pytest.raises(ProjectError, match=r"several judges.*\['j', 'k'\].*judge_id="):
        evaluator.plan_labels()
    with pytest.raises(ProjectError, match=r"judge 'x' has no complete run; judges with one"):
        evaluator.plan_labels(judge_id="x")
    with pytest.raises(UnsafeNameError):
        evaluator.plan_labels(judge_id="../x")
    with pytest.raises(TaskError, match="no task 'tone'"):
        evaluator.plan_labels(judge_id="j", task="tone")
    for options, name in (
        ({"power": 1.5}, "power"), ({"power": 0}, "power"), ({"simulations": 5}, "simulations"),
        ({"seed": -1}, "seed"), ({"epsilon": 1.0}, "epsilon"),
    ):  # fmt: skip
        with pytest.raises(ScoringError, match=f"plan_labels: {name}"):
            evaluator.plan_labels(judge_id="j", **options)


def test_a_task_that_is_not_single_choice_is_refused(tmp_path: Path) -> None:
    schemas = {"verdict": LABELS, "tags": MultiLabelSchema(outcomes=["x", "y"]), "note": None}
    evaluator, truth = make_project(tmp_path, rows=40, schemas=schemas)
    add_run(evaluator, tmp_path, "j", "r1", truth)
    with pytest.raises(TaskError, match="'tags' is a multi-label task"):
        evaluator.plan_labels(task="tags")
    with pytest.raises(TaskError, match="'note' is free text"):
        evaluator.plan_labels(task="note")
    assert evaluator.plan_labels(task="verdict", **QUICK).task == "verdict"


def test_a_project_without_data_or_task(tmp_path: Path) -> None:
    from meta_evaluator import MetaEvaluator

    empty = MetaEvaluator(tmp_path / "empty")
    empty.save_state()
    with pytest.raises(TaskError, match="no data yet"):
        empty.plan_labels()


def test_a_judge_without_labels_of_the_task_is_named_and_left_out(tmp_path: Path) -> None:
    """An imported judge with labels of another task only (the pairwise example's trait votes)."""
    schemas = {"verdict": LABELS, "tone": LABELS}
    evaluator, truth = make_project(tmp_path, rows=40, schemas=schemas)
    add_run(evaluator, tmp_path, "j", "r1", truth)
    tones = tmp_path / "k-tones.csv"
    pl.DataFrame({"original_id": list(range(1, 41)), "tone": truth}).write_csv(tones)
    evaluator.add_external_judge_results(tones, "k", run_id="r1", tasks=["tone"])
    plan = evaluator.plan_labels(task="verdict", **QUICK)  # k is not a candidate
    assert plan.judge_id == "j"
    with pytest.raises(ProjectError, match=r"judge 'k' has no labels of task 'verdict'") as no:
        evaluator.plan_labels(judge_id="k", task="verdict", **QUICK)
    assert "judges with labels of it: ['j']" in no.value.message
    assert no.value.judge_id == "k" and "plan_labels" not in no.value.message


def test_a_judge_that_labelled_none_of_the_pilots_rows_is_named(tmp_path: Path) -> None:
    evaluator, truth = make_project(tmp_path, rows=40, annotators=())
    for annotator in ("ana", "ben"):
        add_labels(evaluator, tmp_path, annotator, list(range(1, 21)), truth[:20])
    add_run(evaluator, tmp_path, "j", "r1", truth[20:], ids=list(range(21, 41)))
    with pytest.raises(ScoringError, match=r"judge 'j' labelled none of the 20 rows") as none:
        evaluator.plan_labels(**QUICK)
    assert "task 'verdict'" in none.value.message and "plan_labels" not in none.value.message
