"""The report's position-bias and self-consistency sections, from a project scored end to end.

One project of 40 pairs and their swapped twins; two judges behind a loopback server, each
asked three times per row: `leans_first` picks the answer shown first on 60% of its calls
(drawn per call, so it also contradicts itself), `clean` always picks the better answer. The
humans know the better answer. Screenshots of both sections are kept in /tmp.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.reports import write_report
from meta_evaluator.reports.diagnostics import position_bias, self_consistency
from meta_evaluator.reports.inputs import ReportInputs
from meta_evaluator.scores import BootstrapConfig, MetricConfig, MetricsConfig
from meta_evaluator.scores.base_scoring_result import ScoringResult
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.metrics import (
    PositionBiasScorer,
    PreferenceScorer,
    SelfConsistencyScorer,
)
from tests.browser import open_page, screenshot
from tests.loopback import JsonHandler, serving
from tests.scores.test_position_bias_scorer import PROMPT, pairs_file

_ANSWERS = re.compile(r"Answer A:\n(.*?)\n\nAnswer B:", re.DOTALL)


class Judges(JsonHandler):
    """`clean` picks the answer saying "good"; `leans_first` picks text_a on 60% of its calls
    (a model's n-th call for a prompt decides by a hash of both), else the good one."""

    calls: ClassVar[Counter[str]] = Counter()

    def do_POST(self) -> None:
        body = json.loads(self.read_body())
        prompt = body["messages"][-1]["content"]
        key = body["model"] + prompt
        self.calls[key] += 1  # one call at a time per row: a row's answers come in turn
        first = _ANSWERS.search(prompt).group(1)  # type: ignore[union-attr]
        good = "text_a" if first.startswith("good") else "text_b"
        digest = hashlib.sha256(f"{key}#{self.calls[key]}".encode()).digest()
        lean = body["model"] == "leans_first" and digest[0] < 0.6 * 256
        content = json.dumps({"preference": "text_a" if lean else good})
        self.send_json(200, {"choices": [{"message": {"content": content},
                                          "finish_reason": "stop"}]})  # fmt: skip


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> MetaEvaluator:
    folder = tmp_path_factory.mktemp("diagnostics")
    evaluator = MetaEvaluator(folder / "pairs_project")
    evaluator.add_preference_pairs(pairs_file(folder / "pairs.csv", 40), swap_positions=True)
    Judges.calls = Counter()
    with serving(Judges) as server:
        base = f"http://127.0.0.1:{server.server_address[1]}/v1"
        for model in ("clean", "leans_first"):
            evaluator.add_judge(model, "openai", model, PROMPT, base_url=base, max_concurrency=4)
        evaluator.run_judges_async(consistency=3, max_concurrency=4)
    boot = BootstrapConfig(n_resamples=300, seed=0)
    task = ["preference"]
    evaluator.compare_async(
        MetricsConfig(
            metrics=[
                MetricConfig(scorer=PositionBiasScorer(), task_names=task,
                             aggregation_name="single", display_name="order", bootstrap=boot),
                MetricConfig(scorer=SelfConsistencyScorer(n_resamples=300), task_names=task,
                             aggregation_name="single", display_name="repeat"),
                MetricConfig(scorer=PreferenceScorer(debias_positions=True, n_resamples=100),
                             task_names=task, aggregation_name="single", display_name="debiased"),
            ]
        )
    )  # fmt: skip
    write_report(evaluator)
    return evaluator


def _section(page: str, title: str) -> str:
    start = page.index(f"<h2>{title}</h2>")
    end = page.find("<h2>", start + 4)
    return page[start : end if end > 0 else len(page)]


def test_position_bias_section_reads_each_judge(scored: MetaEvaluator) -> None:
    page = (scored.paths.reports_dir / "report.html").read_text(encoding="utf-8")
    section = _section(page, "Position bias")
    rows = {r.split("</td>")[1].removeprefix("<td>"): r for r in section.split("<tr>")[2:]}
    assert set(rows) == {"clean", "leans_first"}
    assert "prefers the answer shown first (p &lt; 0.05)" in rows["leans_first"]
    assert "no position preference found" in rows["clean"]
    result = ScoringResult.load_state(
        scored.paths.scores_dir / "position_bias/order/leans_first_result.json"
    )
    low, high = result.confidence_intervals["first_position_rate"]  # type: ignore[index]
    rate = result.scores["first_position_rate"]
    shown = f"{rate:.3f}<br><span class='muted' style='white-space:nowrap'>[{low:.3f}, {high:.3f}]"
    assert shown in rows["leans_first"]
    assert "<td class='num'>40</td>" in rows["leans_first"]  # pairs
    # the section sits after the scores, before the judges' table; the chart is in the plots
    assert page.index("<h2>Scores") < page.index("<h2>Position bias") < page.index("<h2>Judges")
    assert "position_bias / order / position_bias.png" in page


def test_self_consistency_section_shows_what_voting_buys(scored: MetaEvaluator) -> None:
    page = (scored.paths.reports_dir / "report.html").read_text(encoding="utf-8")
    section = _section(page, "Self-consistency")
    rows = {r.split("</td>")[1].removeprefix("<td>"): r for r in section.split("<tr>")[2:]}
    leaning = ScoringResult.load_state(
        scored.paths.scores_dir / "self_consistency/repeat/leans_first_result.json"
    )
    scores = leaning.scores
    assert scores["samples_per_row"] == 3 and scores["rows_used"] == 80  # pairs and twins
    assert scores["flip_rate"] > 0.2
    single, vote = scores["first_answer_accuracy"], scores["majority_accuracy"]
    assert f"accuracy {single:.3f} → {vote:.3f}" in rows["leans_first"]
    assert f"({vote - single:+.3f})" in rows["leans_first"]
    assert "1.000<br><span class='muted' style='white-space:nowrap'>[1.000, 1.000]" in rows["clean"]
    assert "<span class='muted'>almost perfect</span>" in rows["clean"]
    assert "self_consistency / repeat / self_consistency.png" in page


def test_sections_are_left_out_without_their_metrics_and_show_errors() -> None:
    def inputs(scores: dict[str, list[ScoringResult]]) -> ReportInputs:
        return ReportInputs(None, "p", {}, {}, scores, [], [], [])  # type: ignore[arg-type]

    assert position_bias(inputs({})) == "" and self_consistency(inputs({})) == ""
    failed = ScoringResult(
        scorer_name="self_consistency", task_name="t", judge_id="gpt", scores={},
        aggregation_mode=TaskAggregationMode.SINGLE, num_comparisons=0, failed_comparisons=1,
        error="the judge's rows hold one answer each <consistency=1>",
    )  # fmt: skip
    html = self_consistency(inputs({"self_consistency/m": [failed]}))
    assert "not scored: the judge&#x27;s rows hold one answer each &lt;consistency=1&gt;" in html
    per_task = failed.model_copy(
        update={
            "scorer_name": "position_bias", "error": None, "failed_comparisons": 0,
            "metadata": {"per_task": {
                "a": {"scores": {"first_position_rate": 0.5, "p_value": 1.0, "pairs": 9}},
                "b": {"error": "no swapped row has an answer"},
            }},
        }
    )  # fmt: skip
    html = position_bias(inputs({"position_bias/m": [per_task]}))
    assert "<td>a</td>" in html and "no position preference found" in html
    assert "<td>b</td>" in html and "not scored: no swapped row has an answer" in html


def test_the_sections_in_a_browser(scored: MetaEvaluator, browser: Any, tmp_path: Path) -> None:
    """Readings are coloured (red: a position preferred), tables fit the page."""
    with open_page(browser, 1100, 900) as page:
        page.goto((scored.paths.reports_dir / "report.html").as_uri())
        biased = page.locator("span.fail", has_text="prefers the answer shown first")
        clean = page.locator("span.pass", has_text="no position preference found")
        assert biased.evaluate("e => getComputedStyle(e).color") == "rgb(180, 35, 24)"
        assert clean.evaluate("e => getComputedStyle(e).color") == "rgb(26, 127, 55)"
        assert page.evaluate("document.documentElement.scrollWidth") <= 1100
        top = page.locator("h2", has_text="Position bias").bounding_box()
        bottom = page.locator("h2", has_text="Judges: answers").bounding_box()
        assert top is not None and bottom is not None
        clip = {"x": 0, "y": top["y"] - 10, "width": 1100, "height": bottom["y"] - top["y"]}
        screenshot(page, tmp_path, "report_diagnostics", full_page=True, clip=clip)
