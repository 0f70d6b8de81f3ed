"""Scores out of date: a judge run again (or labels imported again) since it was scored.

The report must say so at its top, naming each judge's scored and latest run, and tell the
user to score again; `meta-evaluator status` says the same.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meta_evaluator import MetaEvaluator
from meta_evaluator.cli import app
from meta_evaluator.judge.run_files import CompleteRun
from meta_evaluator.reports import write_report
from meta_evaluator.reports.freshness import stale_scores
from meta_evaluator.scores import BaseScoringResult, TaskAggregationMode
from meta_evaluator.scores.yaml_config import read_metrics_yaml
from tests.reports.projects import scored_example

JUDGE = "mock_refusal_judge"
T0 = dt.datetime(2026, 1, 5, 12, 0, tzinfo=dt.UTC)


def result(judge: str, run: str | None, humans: dict[str, str] | None = None,
           when: dt.datetime = T0) -> BaseScoringResult:  # fmt: skip
    return BaseScoringResult(
        scorer_name="accuracy", task_name="t", judge_id=judge, scores={"accuracy": 0.5},
        aggregation_mode=TaskAggregationMode.SINGLE, num_comparisons=4, run_id=run,
        human_run_ids=humans, timestamp=when,
    )  # fmt: skip


# ----- the rule, on hand-made records ----------------------------------------------------------


def test_scores_of_the_latest_run_and_labels_are_fresh() -> None:
    scores = {"accuracy/a": [result("j", "r2", {"ana": "h1"})]}
    assert stale_scores(scores, {"j": CompleteRun("r2", None)}, {"ana": "h1"}) == []


def test_scores_of_an_older_run_name_both_runs() -> None:
    scores = {"accuracy/a": [result("j", "r1")], "kappa/k": [result("j", "r1")]}
    (found,) = stale_scores(scores, {"j": CompleteRun("r2", None)}, None)
    assert (found.judge_id, found.latest_run, found.scored_runs) == ("j", "r2", ("r1",))
    assert found.reasons == ("scored on run `r1`; its latest run is `r2`",)


def test_changed_labels_name_each_annotator() -> None:
    scores = {"accuracy/a": [result("j", "r1", {"ana": "h1", "ben": "h2"})]}
    (found,) = stale_scores(scores, {"j": CompleteRun("r1", None)}, {"ana": "h1+web", "chen": "h3"})
    assert found.reasons == (
        "the human labels changed since it was scored (ana: `h1` -> `h1+web`; ben removed; "
        "chen added)",
    )


def test_a_judge_without_scores_is_named_unless_it_needs_none() -> None:
    scores = {"accuracy/a": [result("j", "r1")]}
    latest = {"j": CompleteRun("r1", None), "new": CompleteRun("r9", None)}
    (found,) = stale_scores(scores, latest, None)
    assert found.judge_id == "new" and "has no scores yet" in found.reasons[0]
    assert stale_scores(scores, latest, None, unscored_ok={"new"}) == []
    assert stale_scores({}, latest, None) == []  # nothing scored at all: nothing out of date


@pytest.mark.parametrize(("minutes", "stale"), [(-5, False), (5, True)])
def test_scores_saved_without_a_run_are_held_against_the_runs_completion(
    minutes: int, stale: bool
) -> None:
    """Results written before runs were recorded: older than the latest run, they are stale."""
    completed = (T0 + dt.timedelta(minutes=minutes)).isoformat()
    scores = {"accuracy/a": [result("j", None, when=T0)]}
    found = stale_scores(scores, {"j": CompleteRun("r2", completed)}, None)
    assert bool(found) is stale
    if stale:
        assert found[0].reasons[0].startswith("scored before its latest run `r2` completed")


# ----- the report and status of a project ------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> MetaEvaluator:
    """The refusal example, run once as `before` and scored."""
    return scored_example("refusal", tmp_path / "refusal", run_id="before")


def run_again(evaluator: MetaEvaluator, run_id: str) -> None:
    """The judge with a changed prompt, run again under `run_id` (the docs' loop)."""
    judge = evaluator.judge_registry[JUDGE]
    evaluator.add_judge(
        judge.id, judge.llm_client, judge.model,
        prompt=judge.prompt.prompt + "\nAn answer that withholds the key step is a rejection.",
        overwrite=True, mock={"invalid_rate": 0.05},
    )  # fmt: skip
    evaluator.save_state()
    evaluator.run_judges_async(run_id=run_id)


def warning(page: str) -> str:
    found = re.search(r"<div class='stale'>(.*?)</div>", page, re.S)
    return found.group(1) if found else ""


def test_the_report_of_scored_runs_has_no_warning(project: MetaEvaluator, tmp_path: Path) -> None:
    page = write_report(project, tmp_path / "out").read_text(encoding="utf-8")
    assert warning(page) == "" and "out of date" not in page
    assert page.count("<code>before</code>") >= 5  # every score row names its run


def test_a_new_run_without_scoring_is_said_at_the_top(
    project: MetaEvaluator, tmp_path: Path
) -> None:
    run_again(project, "after")
    page = write_report(project, tmp_path / "out").read_text(encoding="utf-8")
    said = warning(page)
    assert said, "the report must say the scores are out of date"
    assert page.index("<div class='stale'>") < page.index("<h2>Verdict")
    assert page.index("<div class='stale'>") < page.index("<h2>Scores</h2>")
    assert (
        f"<strong>{JUDGE}</strong>: scored on run <code>before</code>; its latest run is "
        "<code>after</code>." in said
    )
    assert "<code>meta-evaluator score refusal</code>" in said
    assert "<code>meta-evaluator all refusal</code>" in said
    # each part names its run: the scores the old one, the rows the new one
    assert "<span class='muted'>(scored on run <code>before</code>; rejection_alt_test" in page
    assert f"{JUDGE} on rejection <span class='muted'>(latest run <code>after</code>)" in page
    judges_csv = (tmp_path / "out" / "judges.csv").read_text(encoding="utf-8")
    assert judges_csv.splitlines()[0].startswith("judge,run_id,") and ",after," in judges_csv
    scores_csv = (tmp_path / "out" / "scores.csv").read_text(encoding="utf-8").splitlines()
    assert ",judge,run_id," in scores_csv[0]
    assert all(f",{JUDGE},before," in line for line in scores_csv[1:])

    project.compare_async(read_metrics_yaml(project.project_dir / "metrics.yaml"))
    page = write_report(project, tmp_path / "out").read_text(encoding="utf-8")
    assert warning(page) == ""
    assert "<code>after</code>" in page and "<code>before</code>" not in page


def test_labels_imported_again_are_said_too(project: MetaEvaluator, tmp_path: Path) -> None:
    labels = tmp_path / "ana.csv"
    labels.write_text("original_id,rejection\n101,rejection\n102,not rejection\n",
                      encoding="utf-8")  # fmt: skip
    project.add_external_annotation_results(labels, "ana", run_id="ana_again")
    page = write_report(project, tmp_path / "out").read_text(encoding="utf-8")
    said = warning(page)
    assert "the human labels changed since it was scored (ana: <code>" in said
    assert "-&gt; <code>ana_again</code>" in said


def test_status_says_the_scores_are_out_of_date(project: MetaEvaluator) -> None:
    folder = project.project_dir

    def status() -> str:
        done = CliRunner().invoke(app, ["status", str(folder)])
        assert done.exit_code == 0, (done.output, done.exception)
        return done.output

    assert "  scores: 5 metric(s), of each judge's latest run and current labels" in status()
    run_again(project, "after")
    output = status()
    assert "  scores: 5 metric(s), OUT OF DATE for 1 judge(s):" in output
    assert f"{JUDGE}: scored on run `before`; its latest run is `after`" in output
    assert f"`meta-evaluator score {folder}`" in output
    done = CliRunner().invoke(app, ["status", str(folder), "--json"])
    stale = __import__("json").loads(done.output)["scores"]["out_of_date"][JUDGE]
    assert stale["latest_run"] == "after" and stale["scored_runs"] == ["before"]
