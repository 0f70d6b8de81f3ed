"""`MetaEvaluator.compare_runs`: two runs read back, aligned with the annotators, compared.

Runs are imported label files (the labels are chosen by the test, so every figure is worked out
by hand) or real mock runs (shards, a changed prompt).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.errors import ProjectError, ScoringError, StateError, TaskError, UnsafeNameError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.scores import BootstrapConfig
from meta_evaluator.scores.run_comparison import RunComparison, read_comparisons

IDS = [11, 12, 13, 14, 15, 16]
#        11     12     13     14     15     16
A = ["yes", "yes", "no", "no", "yes", "no"]
B = ["yes", "no", "yes", "yes", "yes", "no"]
ANA = ["yes", "yes", "no", "yes", "no", "no"]
BEN = ["yes", "yes", "no", "yes", "no", None]
# majority: yes yes no yes no no -> 12 away, 13 away, 14 toward; A right 11,12,13,16 (4/6),
# B right 11,14,16 (3/6)


def _write(path: Path, ids: list[Any], column: str, labels: list[Any]) -> Path:
    pl.DataFrame({"original_id": ids, column: labels}).write_csv(path)
    return path


def make_project(
    folder: Path,
    *,
    ids: list[Any] = IDS,
    humans: bool = True,
    extra_task: dict[str, Any] | None = None,
    runs: tuple[list[Any], list[Any]] = (A, B),
    required: list[str] | None = None,
) -> MetaEvaluator:
    """Six chats, the task `verdict` (yes/no) and free-text `note`; runs `mon` (A) and `tue`
    (B) of judge `j` imported (or the labels of `runs`); annotators ana and ben (unless `humans`
    is False)."""
    evaluator = MetaEvaluator(folder / "proj")
    frame = pl.DataFrame({"qid": ids, "text": [f"chat {i}" for i in ids]})
    evaluator.add_data(DataLoader.load_from_dataframe("chats", frame, "qid"))
    schemas: dict[str, Any] = {"verdict": ["yes", "no"], "note": None, **(extra_task or {})}
    evaluator.add_eval_task(
        EvalTask(task_schemas=schemas, prompt_columns=None, response_columns=["text"],
                 required_tasks=required or ["verdict"])
    )  # fmt: skip
    evaluator.save_state()
    for run, labels in zip(("mon", "tue"), runs, strict=True):
        source = _write(folder / f"{run}.csv", ids, "verdict", labels)
        evaluator.add_external_judge_results(source, "j", run_id=run, tasks=["verdict"])
    if humans:
        for name, labels in (("ana", ANA), ("ben", BEN)):
            rows = [(i, v) for i, v in zip(ids, labels, strict=True) if v is not None]
            source = _write(folder / f"{name}.csv", [r[0] for r in rows], "verdict",
                            [r[1] for r in rows])  # fmt: skip
            evaluator.add_external_annotation_results(source, name, tasks=["verdict"])
    return evaluator


def test_flips_directions_and_scores_worked_out_by_hand(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path)
    result = evaluator.compare_runs("mon", "tue", bootstrap=BootstrapConfig(n_resamples=200))
    assert result.key == "mon__tue"
    assert result.task == "verdict"
    assert (result.items, result.only_in_a, result.only_in_b) == (6, 0, 0)
    assert result.flipped == (12, 13, 14)
    assert [(c.id, c.a, c.b, c.human, c.direction) for c in result.changes] == [
        (12, "yes", "no", "yes", "away"),
        (13, "no", "yes", "no", "away"),
        (14, "no", "yes", "yes", "toward"),
    ]
    assert (result.toward, result.away, result.neither, result.unrated) == (1, 2, 0, 0)
    assert result.mcnemar_p == 1.0  # 2 * P(X <= 1), X ~ Bin(3, 1/2) = 2 * 4/8, capped
    assert result.humans == ("ana", "ben")
    accuracy = result.scores[0]
    assert accuracy.name == "accuracy_majority_vote"
    assert (accuracy.a, accuracy.b) == (pytest.approx(4 / 6), pytest.approx(3 / 6))
    assert accuracy.difference == pytest.approx(-1 / 6)
    assert accuracy.low is not None and accuracy.high is not None
    assert accuracy.low <= accuracy.difference <= accuracy.high
    assert (result.run_a.rows, result.run_a.labelled, result.run_b.run_id) == (6, 6, "tue")
    assert result.bootstrap.n_resamples == 200


def test_the_record_is_saved_as_json_and_reads_back(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path)
    result = evaluator.compare_runs("mon", "tue", bootstrap=BootstrapConfig(n_resamples=50))
    saved = evaluator.project_dir / "reports" / "compare-runs" / "mon__tue.json"
    data = json.loads(saved.read_text(encoding="utf-8"))
    assert data == result.to_json()
    assert data["flipped"] == [12, 13, 14]  # integers stay integers
    assert RunComparison.load(saved) == result
    assert read_comparisons(saved.parent) == [result]
    assert not list(saved.parent.glob(".*"))  # no temporary file left beside it


def test_string_ids_stay_strings(tmp_path: Path) -> None:
    ids = [f"c-{i}" for i in IDS]
    evaluator = make_project(tmp_path, ids=ids)
    result = evaluator.compare_runs("mon", "tue", bootstrap=BootstrapConfig(n_resamples=20))
    assert result.flipped == ("c-12", "c-13", "c-14")
    assert result.to_json()["flipped"] == ["c-12", "c-13", "c-14"]


def test_without_humans_the_flips_are_listed_and_the_rest_says_why(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path, humans=False)
    result = evaluator.compare_runs("mon", "tue")
    assert result.flipped == (12, 13, 14)
    assert {c.direction for c in result.changes} == {"unrated"}
    assert (result.toward, result.away, result.neither, result.mcnemar_p) == (None,) * 4
    assert result.unrated == 3 and result.humans == ()
    assert result.human_reason == "no human labels were given"
    assert all(s.a is None and s.reason == result.human_reason for s in result.scores)
    assert result.to_json()["toward"] is None


def test_two_judges_compared_by_run_and_judge(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path)
    source = _write(tmp_path / "k.csv", IDS, "verdict", ANA)  # judge k agrees with ana
    evaluator.add_external_judge_results(source, "k", run_id="tue", tasks=["verdict"])
    result = evaluator.compare_runs("mon:j", "tue:k", bootstrap=BootstrapConfig(n_resamples=20))
    assert result.key == "mon+j__tue+k"
    assert (result.run_a.judge_id, result.run_b.judge_id) == ("j", "k")
    assert result.flipped == (14, 15)
    assert (result.toward, result.away) == (2, 0)
    # the same judge in both runs: --judge names it, and the key says which
    named = evaluator.compare_runs("mon", "tue", judge_id="j")
    assert named.key == "mon__tue__j"
    assert (evaluator.project_dir / "reports/compare-runs/mon__tue__j.json").is_file()
    # a side's own judge wins over judge_id
    assert evaluator.compare_runs("mon", "tue:k", judge_id="j").run_b.judge_id == "k"


def test_rows_one_run_lacks_are_counted_not_compared(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path)
    source = _write(tmp_path / "wed.csv", IDS[:4], "verdict", ["yes", "no", "maybe", "no"])
    evaluator.add_external_judge_results(source, "j", run_id="wed", tasks=["verdict"])
    result = evaluator.compare_runs("mon", "wed", bootstrap=BootstrapConfig(n_resamples=20))
    # wed: 11-14 imported, 13 invalid ("maybe"): rows 11, 12, 14 compared
    assert (result.items, result.only_in_a, result.only_in_b) == (3, 3, 0)
    assert result.run_b.labelled == 3
    assert result.flipped == (12,)


# ----- what is wrong, and what exists ------------------------------------------------------------


def test_an_unknown_run_lists_the_runs(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path)
    with pytest.raises(
        ProjectError, match=r"run_b: no run 'wedn' in .*runs there: \['mon', 'tue'\]"
    ) as e:
        evaluator.compare_runs("mon", "wedn")
    assert e.value.field == "run_b"


def test_a_judge_not_in_the_run_lists_its_judges(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path)
    with pytest.raises(
        ProjectError, match=r"run_a: run 'mon' has no judge 'gpt'; its judges: \['j'\]"
    ) as caught:
        evaluator.compare_runs("mon:gpt", "tue")
    assert caught.value.field == "run_a"
    with pytest.raises(ProjectError, match=r"has no judge 'gpt'; its judges: \['j'\]") as given:
        evaluator.compare_runs("mon", "tue", judge_id="gpt")
    assert given.value.field == "judge_id"  # the judge came from judge_id, not from the run


def test_a_run_of_several_judges_needs_one_named(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path)
    source = _write(tmp_path / "k.csv", IDS, "verdict", ANA)
    evaluator.add_external_judge_results(source, "k", run_id="tue", tasks=["verdict"])
    with pytest.raises(
        ProjectError, match=r"run 'tue' holds the judges \['j', 'k'\]; name one"
    ) as e:
        evaluator.compare_runs("mon", "tue")
    assert e.value.field == "judge_id"


@pytest.mark.parametrize("bad", ["../mon", "a:b:c", "", 7])
def test_a_malformed_run_name_is_refused(tmp_path: Path, bad: Any) -> None:
    evaluator = make_project(tmp_path)
    with pytest.raises((ProjectError, UnsafeNameError)) as caught:
        evaluator.compare_runs(bad, "tue")
    assert caught.value.field == "run_a"


def test_task_errors_name_the_tasks(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path)
    with pytest.raises(TaskError, match=r"no task 'verdic'; its tasks: \['verdict', 'note'\]"):
        evaluator.compare_runs("mon", "tue", task="verdic")
    with pytest.raises(TaskError, match=r"'note' is free text; .*\['verdict'\]"):
        evaluator.compare_runs("mon", "tue", task="note")


def test_several_labelled_tasks_default_to_the_one_required(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path, extra_task={"tone": ["calm", "rude"]})
    result = evaluator.compare_runs("mon", "tue")  # `verdict`, the one required task
    assert (result.task, result.key) == ("verdict", "mon__tue__verdict")
    # the runs were imported without `tone`: its column is there, empty
    with pytest.raises(ScoringError, match="no row in common with a usable label"):
        evaluator.compare_runs("mon", "tue", task="tone")


def test_a_required_free_text_task_does_not_hide_the_one_required_label(tmp_path: Path) -> None:
    """`required_tasks: [verdict, note]` with `note` free text: `verdict` is the one (review)."""
    evaluator = make_project(
        tmp_path, extra_task={"tone": ["calm", "rude"]}, required=["verdict", "note"]
    )
    assert evaluator.compare_runs("mon", "tue").task == "verdict"


def test_several_labelled_tasks_none_alone_required_need_one_chosen(tmp_path: Path) -> None:
    evaluator = make_project(
        tmp_path, extra_task={"tone": ["calm", "rude"]}, required=["verdict", "tone"]
    )
    with pytest.raises(
        TaskError,
        match=r"several labelled tasks \['verdict', 'tone'\] and no single required one among "
        r"them; choose",
    ):
        evaluator.compare_runs("mon", "tue")
    assert evaluator.compare_runs("mon", "tue", task="verdict").key == "mon__tue__verdict"


def test_no_common_rows(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path)
    source = _write(tmp_path / "sat.csv", IDS[4:], "verdict", ["no", "no"])
    evaluator.add_external_judge_results(source, "j", run_id="sat", tasks=["verdict"])
    source = _write(tmp_path / "sun.csv", IDS[:2], "verdict", ["no", "no"])
    evaluator.add_external_judge_results(source, "j", run_id="sun", tasks=["verdict"])
    with pytest.raises(ScoringError, match=r"run 'sat' \(judge 'j'\) and run 'sun' \(judge 'j'\) "
                                           r"have no row in common"):  # fmt: skip
        evaluator.compare_runs("sat", "sun")


def test_an_unfinished_run_says_how_to_finish_it(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path)
    state = evaluator.project_dir / "results" / "tue" / "j_state.json"
    data = json.loads(state.read_text(encoding="utf-8"))
    state.write_text(json.dumps({**data, "completed_at": None}), encoding="utf-8")
    with pytest.raises(ProjectError, match=r"judge 'j' in run 'tue' is unfinished.*--run-id tue"):
        evaluator.compare_runs("mon", "tue")


def test_bootstrap_must_be_a_config(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path)
    with pytest.raises(ScoringError, match="bootstrap must be a BootstrapConfig") as caught:
        evaluator.compare_runs("mon", "tue", bootstrap={"n_resamples": 10})  # type: ignore[arg-type]
    assert caught.value.field == "bootstrap"


def test_a_damaged_saved_comparison_is_a_state_error(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"schema_version": 1, "key": 3}', encoding="utf-8")
    with pytest.raises(StateError, match="not a run comparison"):
        RunComparison.load(path)


# ----- real runs of the mock judge ---------------------------------------------------------------


def test_a_changed_prompt_against_a_sharded_rerun(project: Path) -> None:
    """The refusal example: `before` in two shards, `after` with another prompt."""
    evaluator = MetaEvaluator(project, load=True)
    for k in (1, 2):
        evaluator.run_judges_async(run_id="before", shard=(k, 2))
    with pytest.raises(ProjectError, match="'before' is the same run as run_a 'before'"):
        evaluator.compare_runs("before", "before")  # a run against itself says nothing
    judge = evaluator.judge_registry["mock_refusal_judge"]
    evaluator.add_judge(
        judge.id, "mock", judge.model, prompt=judge.prompt.prompt + "\nBe strict.",
        overwrite=True, mock={"invalid_rate": 0.05},
    )  # fmt: skip
    evaluator.run_judges_async(run_id="after")
    result = evaluator.compare_runs("before", "after", bootstrap=BootstrapConfig(n_resamples=50))
    assert result.run_a.fingerprint != result.run_b.fingerprint
    assert result.run_a.rows == 40  # both shards of `before`, merged
    assert result.humans == ("ana", "ben", "chen")
    assert 0 < len(result.flipped) < result.items
    counted = (result.toward or 0) + (result.away or 0) + (result.neither or 0) + result.unrated
    assert counted == len(result.flipped)
    latest = evaluator.load_all_judge_results()["mock_refusal_judge"]  # the run `after`
    assert latest.run_id == "after"
    labels = dict(latest.valid_rows().select("original_id", "rejection").iter_rows())
    for change in result.changes:
        assert labels[change.id] == change.b != change.a
