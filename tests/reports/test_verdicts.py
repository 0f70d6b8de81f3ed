"""The verdict per judge at the top of the report, and the humans' baseline in its tables.

`judge_verdicts` is checked on results made here (each case from the rule in docs/scoring.md);
the refusal example end to end: its scores table against the saved result files, the verdict
section right after the heading, and the page in headless Chromium (screenshot under /tmp).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.reports import write_report
from meta_evaluator.reports.verdicts import RULE, JudgeVerdict, judge_verdicts
from meta_evaluator.scores.base_scoring_result import ScoringResult
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.human_baseline import HumanBaseline
from meta_evaluator.scores.metrics.kappa import interpret_kappa
from tests.browser import open_page, screenshot
from tests.reports.projects import scored_example


def agreement(
    judge: str,
    value: float,
    interval: tuple[float, float] | None,
    humans: tuple[float, float] | None,
    *,
    key: str = "accuracy",
    error: str | None = None,
) -> ScoringResult:
    baseline = HumanBaseline(
        score=key, value=0.8, interval=humans, per_human={}, humans=3, items=40, method="m"
    )
    return ScoringResult(
        scorer_name=key, task_name="t", judge_id=judge, scores={key: value},
        metadata={"human_baseline": baseline.as_metadata()},
        aggregation_mode=TaskAggregationMode.SINGLE, num_comparisons=40,
        confidence_intervals=None if interval is None else {key: interval}, error=error,
    )  # fmt: skip


def alt_test(judge: str, passed: bool) -> ScoringResult:
    return ScoringResult(
        scorer_name="alt_test", task_name="t", judge_id=judge,
        scores={"passed": passed, "winning_rate": {"0.20": 1.0 if passed else 0.0},
                "advantage_probability": 0.6},
        metadata={"epsilon": 0.2}, aggregation_mode=TaskAggregationMode.SINGLE,
        num_comparisons=40,
    )  # fmt: skip


HUMANS = (0.7, 0.9)


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        # the alt-test decides, whatever the intervals say
        ({"alt_test/a": [alt_test("j", True)], "accuracy/acc": [
            agreement("j", 0.4, (0.3, 0.5), HUMANS)]}, "stands in"),
        ({"alt_test/a": [alt_test("j", False)], "accuracy/acc": [
            agreement("j", 0.8, (0.7, 0.9), HUMANS)]}, "does not"),
        # no alt-test: the intervals
        ({"accuracy/acc": [agreement("j", 0.75, (0.6, 0.85), HUMANS)]}, "stands in"),
        ({"accuracy/acc": [agreement("j", 0.95, (0.92, 0.98), HUMANS)]}, "stands in"),
        ({"accuracy/acc": [agreement("j", 0.5, (0.4, 0.6), HUMANS)]}, "does not"),
        ({"accuracy/acc": [agreement("j", 0.65, (0.55, 0.75), HUMANS)]}, "undecided"),
        ({"accuracy/acc": [agreement("j", 0.75, (0.6, 0.85), HUMANS)],
          "cohens_kappa/k": [agreement("j", 0.2, (0.1, 0.3), HUMANS, key="cohens_kappa")]},
         "does not"),
        ({"accuracy/acc": [agreement("j", 0.75, (0.6, 0.85), HUMANS)],
          "cohens_kappa/k": [agreement("j", 0.2, None, HUMANS, key="cohens_kappa")]},
         "stands in"),
        ({"accuracy/acc": [agreement("j", 0.75, None, HUMANS)]}, "undecided"),
        ({"accuracy/acc": [agreement("j", 0.75, (0.6, 0.85), None)]}, "undecided"),
        # a failed alt-test result has no say
        ({"alt_test/a": [alt_test("j", False).model_copy(update={"error": "too few"})],
          "accuracy/acc": [agreement("j", 0.75, (0.6, 0.85), HUMANS)]}, "stands in"),
    ],
)  # fmt: skip
def test_judge_verdict(scores: dict[str, list[ScoringResult]], expected: str) -> None:
    (found,) = judge_verdicts(scores)
    assert found.judge == "j" and found.verdict == expected


def test_the_basis_says_what_the_verdict_rests_on() -> None:
    scores = {
        "alt_test/rejection_alt_test": [alt_test("j", False)],
        "accuracy/acc": [agreement("j", 0.5, (0.4, 0.6), HUMANS)],
        "cohens_kappa/k": [agreement("j", 0.5, None, HUMANS, key="cohens_kappa")],
    }
    (found,) = judge_verdicts(scores)
    assert found == JudgeVerdict(
        "j",
        "does not",
        (
            "rejection_alt_test: failed (winning rate 0.00 at ε = 0.2)",
            "acc: 0.500 [0.400, 0.600] wholly below the humans' [0.700, 0.900]",
        ),
    )
    (none,) = judge_verdicts({"accuracy/acc": [agreement("j", 0.8, None, HUMANS)]})
    assert none.verdict == "undecided" and "add a bootstrap" in none.basis[0]


def test_judges_in_order_and_only_those_with_a_verdict() -> None:
    scores = {
        "accuracy/acc": [
            agreement("zed", 0.8, (0.7, 0.9), HUMANS),
            agreement("amy", 0.5, (0.4, 0.6), HUMANS),
            agreement("bob", 0.8, (0.7, 0.9), HUMANS, error="no items"),
        ],
        "preference/p": [
            ScoringResult(
                scorer_name="preference",
                task_name="t",
                judge_id="cat",
                scores={"strength": 0.1},
                aggregation_mode=TaskAggregationMode.SINGLE,
                num_comparisons=3,
            )
        ],
    }
    assert [(v.judge, v.verdict) for v in judge_verdicts(scores)] == [
        ("amy", "does not"),
        ("zed", "stands in"),
    ]


# ----- the refusal example, end to end ------------------------------------------------------


@pytest.fixture(scope="module")
def refusal(tmp_path_factory: pytest.TempPathFactory) -> MetaEvaluator:
    evaluator = scored_example("refusal", tmp_path_factory.mktemp("verdict") / "refusal")
    write_report(evaluator)
    return evaluator


def saved(evaluator: MetaEvaluator) -> dict[str, dict[str, Any]]:
    return {
        f"{p.parent.parent.name}/{p.parent.name}": json.loads(p.read_text(encoding="utf-8"))
        for p in evaluator.paths.scores_dir.glob("*/*/*_result.json")
    }


def test_scores_table_holds_the_saved_baselines(refusal: MetaEvaluator) -> None:
    with (refusal.paths.reports_dir / "scores.csv").open(encoding="utf-8") as handle:
        rows = {row["metric"]: row for row in csv.DictReader(handle)}
    results = saved(refusal)
    with_baseline = {m for m, r in results.items() if "human_baseline" in r["metadata"]}
    assert with_baseline == {
        "accuracy/rejection_accuracy", "cohens_kappa/rejection_kappa",
        "krippendorff_alpha/rejection_alpha", "text_similarity/explanation_similarity",
    }  # fmt: skip
    for metric in with_baseline:
        baseline = results[metric]["metadata"]["human_baseline"]
        row = rows[metric]
        assert float(row["human_baseline"]) == pytest.approx(baseline["value"], abs=1e-12)
        assert float(row["human_low"]) == pytest.approx(baseline["interval"][0], abs=1e-12)
        assert float(row["human_high"]) == pytest.approx(baseline["interval"][1], abs=1e-12)
        assert baseline["humans"] == 3 and baseline["reason"] is None
    assert rows["alt_test/rejection_alt_test"]["human_baseline"] == ""
    kappa = rows["cohens_kappa/rejection_kappa"]
    assert kappa["band"] == interpret_kappa(float(kappa["score"])) == "poor"
    assert rows["accuracy/rejection_accuracy"]["band"] == ""
    header = (refusal.paths.reports_dir / "scores.md").read_text(encoding="utf-8").splitlines()[0]
    assert "| band |" in header and "| human_baseline | human_low | human_high |" in header


def test_verdict_comes_first_after_the_heading(refusal: MetaEvaluator) -> None:
    text = (refusal.paths.reports_dir / "report.html").read_text(encoding="utf-8")
    headings = text.split("<h2>")[1:]
    assert headings[0].startswith("Verdict: can each judge stand in for the humans?")
    assert headings[1].startswith("Scores")
    section = headings[0]
    # the mock judge fails the alt-test: it does not stand in
    assert "<strong>mock_refusal_judge</strong>: <span class='fail'>does not</span>" in section
    assert "rejection_alt_test: failed (winning rate 0.00 at ε = 0.2)" in section
    assert RULE.replace('"', "&quot;").replace("'", "&#x27;") in section
    assert "<script" not in text


def test_no_verdict_without_agreement_scores(tmp_path: Path) -> None:
    """The pairwise example scores preferences only: no baseline, no alt-test, no verdict."""
    evaluator = scored_example("pairwise", tmp_path / "pairwise")
    text = write_report(evaluator).read_text(encoding="utf-8")
    assert "<h2>Verdict" not in text and "<h2>Scores" in text


def test_report_in_headless_chromium(refusal: MetaEvaluator, browser: Any, tmp_path: Path) -> None:
    with open_page(browser, 1100, 900) as page:
        page.goto((refusal.paths.reports_dir / "report.html").as_uri())
        first = page.locator("h2").first
        assert first.inner_text().startswith("Verdict")
        verdict = page.locator("ul.verdicts li").first
        assert verdict.is_visible()
        assert verdict.inner_text().startswith("mock_refusal_judge: does not")
        colour = page.locator("ul.verdicts .fail").first.evaluate("e => getComputedStyle(e).color")
        assert colour == "rgb(180, 35, 24)"  # STYLE's .fail
        box = verdict.bounding_box()
        assert box is not None and box["y"] < 400  # above the fold
        screenshot(page, tmp_path, "report_verdict")


def test_scores_table_gives_each_score_its_verdict_against_the_humans() -> None:
    """The Scores table's verdict column was empty but for the alt-test (trial #10): each
    agreement score is held against the humans' interval, by the rule of the verdict."""
    from meta_evaluator.reports._tables import score_rows

    table = {
        "accuracy/a": [
            agreement("within", 0.85, (0.80, 0.90), (0.75, 0.95)),  # j >= h_low
            agreement("below", 0.50, (0.40, 0.60), (0.75, 0.95)),  # j_high < h_low
            agreement("overlap", 0.72, (0.65, 0.80), (0.75, 0.95)),  # below, overlapping
            agreement("no_interval", 0.85, None, (0.75, 0.95)),
            agreement("failed", 0.85, (0.80, 0.90), (0.75, 0.95), error="no rows"),
        ],
        "alt_test/b": [alt_test("within", True)],
    }
    verdicts = {(r["metric"], r["judge"]): r["verdict"] for r in score_rows(table)}
    assert verdicts == {
        ("accuracy/a", "within"): "stands in",
        ("accuracy/a", "below"): "does not",
        ("accuracy/a", "overlap"): "undecided",
        ("accuracy/a", "no_interval"): None,
        ("accuracy/a", "failed"): None,
        ("alt_test/b", "within"): "passed (winning rate 1.00 at ε = 0.2)",
    }


def test_the_reports_scores_table_fills_its_verdict_column(refusal: MetaEvaluator) -> None:
    with (refusal.paths.reports_dir / "scores.csv").open(encoding="utf-8") as handle:
        rows = {row["metric"]: row for row in csv.DictReader(handle)}
    assert rows["alt_test/rejection_alt_test"]["verdict"].startswith("failed (winning rate")
    judged = [m for m, row in rows.items() if row["human_low"] and row["low"]]
    assert judged  # the example's agreement scores have intervals on both sides
    for metric in judged:
        assert rows[metric]["verdict"] in ("stands in", "does not", "undecided"), metric
    page = (refusal.paths.reports_dir / "report.html").read_text(encoding="utf-8")
    scores_section = page.split("<h2>Scores</h2>")[1].split("<h2>")[0]
    assert scores_section.count("<td><span class='") >= len(judged) + 1
