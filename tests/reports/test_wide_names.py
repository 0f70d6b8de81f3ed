"""The Scores and Judges tables stay within the page for long names (trial 2 #5).

0.3.3-style metrics without a display name are called
`classification_accuracy/classification_accuracy_1tasks_22e76eaf_single`; that cell did not
wrap, so at 1300 px the interval, baseline and verdict columns (and a not-scored reason in
them) were off to the right, and the Judges table's cost column too. Rendered in headless
Chromium and measured.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from meta_evaluator.reports.html import STYLE
from meta_evaluator.reports.inputs import ReportInputs
from meta_evaluator.reports.sections import judges, scores
from tests.browser import open_page, screenshot

LONG = "classification_accuracy/classification_accuracy_1tasks_22e76eaf_single"
JUDGE = "openrouter_qwen_2_5_72b_instruct_judge_with_a_long_name"
REASON = "alt_test: no annotator can be tested: each has fewer than 30 instances"


def _score_row(metric: str, error: str | None = None) -> dict[str, Any]:
    return {
        "metric": metric, "judge": JUDGE, "run_id": "run_20261128_170747_01c092",
        "score_name": "advantage_probability", "score": None if error else 0.9375,
        "low": None, "high": None, "error": error, "verdict": None, "human_score": 0.875,
    }  # fmt: skip


def _inputs() -> ReportInputs:
    table = [_score_row(LONG), _score_row("alt_test/alt_test_1tasks_22e76eaf_single", REASON)]
    judge = {
        "judge": JUDGE, "run_id": "run_20261128_170747_01c092", "rows": 8, "valid": 8,
        "invalid": 0, "error": 0, "prompt_tokens": 400, "completion_tokens": 80,
        "latency_mean_ms": None, "latency_p95_ms": None, "cost_usd": None,
    }  # fmt: skip
    return ReportInputs(None, "p", {}, {}, {}, table, [judge], [])  # type: ignore[arg-type]


def test_long_names_wrap_and_the_tables_stay_within_the_page(browser: Any, tmp_path: Path) -> None:
    inputs = _inputs()
    page_html = f"<!doctype html><style>{STYLE}</style><body>{scores(inputs)}{judges(inputs)}"
    (tmp_path / "page.html").write_text(page_html)
    with open_page(browser, width=1300, height=900) as page:
        page.goto((tmp_path / "page.html").as_uri())
        screenshot(page, tmp_path, "t2r_wide_names", full_page=True)
        body = page.evaluate("document.body.getBoundingClientRect().right")
        for box in page.evaluate(
            "[...document.querySelectorAll('table')].map(t => t.getBoundingClientRect().right)"
        ):
            assert box <= body + 0.5, (box, body)
        assert page.evaluate("document.documentElement.scrollWidth") <= 1300
        reason = page.get_by_text("not scored: alt_test").bounding_box()
        assert reason is not None and reason["x"] + reason["width"] <= body + 0.5
        # the reason sits in the score's cells, not in a last column squeezed to a strip
        assert reason["width"] > 300, reason
    text = scores(inputs)
    assert "classification_<wbr>accuracy/<wbr>classification_<wbr>accuracy_<wbr>1tasks" in text


def test_a_blank_cost_says_why() -> None:
    inputs = _inputs()
    assert "no prices.yaml" in judges(inputs)
    priced = ReportInputs(None, "p", {}, {}, {}, [], inputs.judge_table, [], has_prices=True)  # type: ignore[arg-type]
    assert "no price in prices.yaml" in judges(priced)
    assert "no prices.yaml" not in judges(priced)
