"""The sections of report.html, top to bottom: each a function of `ReportInputs` to HTML.

A section with nothing to show returns "" and is left out. `SECTIONS` is the page's order.
"""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Callable
from typing import Any

from meta_evaluator.reports.counterfactual import counterfactual_section
from meta_evaluator.reports.diagnostics import position_bias, self_consistency
from meta_evaluator.reports.disagreements import disagreements
from meta_evaluator.reports.drift import drift_section
from meta_evaluator.reports.fairness import fairness_section
from meta_evaluator.reports.freshness import freshness
from meta_evaluator.reports.html import breakable, escape, html_table
from meta_evaluator.reports.inputs import ReportInputs
from meta_evaluator.reports.label_plan import label_plan_section
from meta_evaluator.reports.multiple_choice import multiple_choice_section
from meta_evaluator.reports.preference import preference_section
from meta_evaluator.reports.purpose import report_title, subjects
from meta_evaluator.reports.run_comparisons import run_comparisons
from meta_evaluator.reports.section_parts import shown_by_kind
from meta_evaluator.reports.stereotype import stereotype_section
from meta_evaluator.reports.verdicts import verdicts
from meta_evaluator.scores.metrics.kappa import interpret_kappa

__all__ = ["JUDGE_COLUMNS", "SCORE_COLUMNS", "SECTIONS", "Section"]

#: A section of the page: what was read -> its HTML ("" to leave it out).
Section = Callable[[ReportInputs], str]

SCORE_COLUMNS = [
    "metric", "judge", "run_id", "score_name", "score", "band", "low", "high", "tasks_averaged",
    "task_low", "task_high", "human_baseline", "human_low", "human_high", "verdict", "error",
]  # fmt: skip
JUDGE_COLUMNS = [
    "judge", "run_id", "rows", "valid", "invalid", "error", "prompt_tokens", "completion_tokens",
    "latency_mean_ms", "latency_p95_ms", "cost_usd",
]  # fmt: skip


def heading(inputs: ReportInputs) -> str:
    """The title and one line on what the project holds."""
    data, task = inputs.data, inputs.eval_task
    name = escape(inputs.project_name)
    held = [
        f"Data: {escape(data.name)} ({len(data):,} rows)" if data is not None else "Data: none",
        f"tasks: {escape(', '.join(task.task_names))}" if task is not None else "tasks: none",
        escape(subjects(inputs)),
    ]
    if inputs.humans:
        count = len(inputs.humans)
        held.append(f"{count} human annotator{'s' if count != 1 else ''}")
    title = escape(report_title(inputs))
    return (
        f"<h1>{title}</h1><p class='muted'>Generated {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} "
        f"UTC for project {name}. {'; '.join(held)}.</p>"
    )


_VERDICT_CLASS = {"passed": "pass", "stands in": "pass", "failed": "fail", "does not": "fail"}
"""The colour of a verdict in the Scores table (an alt-test's, or a score's against the
humans'); "undecided" stays muted."""


def scores(inputs: ReportInputs) -> str:
    """The main score of every metric and judge, with its interval and verdict."""
    parts = ["<h2>Scores</h2>"]
    if not inputs.score_table:
        parts.append("<p>No scores yet: run <code>meta-evaluator score</code> first.</p>")
        return "".join(parts)
    parts.append(
        "<table><tr><th>metric</th><th>judge</th><th>run scored</th><th>score</th>"
        "<th class='num'>value</th><th>interval</th><th>humans' baseline</th><th>verdict</th>"
        "</tr>"
    )
    for row in inputs.score_table:
        interval = _interval(row["low"], row["high"])
        named = (
            f"<tr><td>{breakable(row['metric'])}</td><td>{breakable(row['judge'])}</td>"
            f"<td>{_run(row['run_id'])}</td><td>{breakable(row['score_name'])}</td>"
        )
        if row["error"]:  # the reason fills the value's cells, where the eye looks for one
            parts.append(
                f"{named}<td colspan='4'><span class='err'>not scored: "
                f"{escape(row['error'])}</span></td></tr>"
            )
            continue
        if row["verdict"]:
            kind = _VERDICT_CLASS.get(row["verdict"].split(" (")[0], "muted")
            verdict = f"<span class='{kind}'>{escape(row['verdict'])}</span>"
        else:
            verdict = ""
        value = "" if row["score"] is None else f"{row['score']:.3f}"
        if row.get("band"):
            value += f" <span class='muted'>({escape(str(row['band']).replace('_', ' '))})</span>"
        if row.get("tasks_averaged") and row["score"] is not None:
            value += _spread(row)
        parts.append(
            f"{named}"
            f"<td class='num'>{value}</td><td>{interval}</td><td>{_baseline_cell(row)}</td>"
            f"<td>{verdict}</td></tr>"
        )
    parts.append("</table>")
    return "".join(parts)


def _spread(row: dict[str, object]) -> str:
    """Under a mean over a metric's tasks: how many, and the highest and lowest task."""
    preference = row.get("scorer") == "preference"
    noun = "traits" if preference else "tasks"
    low, high = float(row["task_low"]), float(row["task_high"])  # type: ignore[arg-type]
    sign = "+" if preference or low < 0 else ""  # a strength is signed; an accuracy is not
    return (
        f"<br><span class='muted spread'>mean of {row['tasks_averaged']} {noun}<br>"
        f"highest {high:{sign}.3f} {escape(row['task_high_name'])}<br>"
        f"lowest {low:{sign}.3f} {escape(row['task_low_name'])}</span>"
    )


def _run(run_id: object) -> str:
    """A run id as the tables show it ("not recorded" for scores saved before runs were)."""
    if run_id is None:
        return "<span class='muted'>not recorded</span>"
    # `run_20261128_151135_eaebb9` may wrap at its underscores in a narrow column
    return f"<code>{breakable(run_id)}</code>"


def _interval(low: float | None, high: float | None) -> str:
    return f"[{low:.3f}, {high:.3f}]" if low is not None and high is not None else ""


def _baseline_cell(row: dict[str, object]) -> str:
    """The humans' baseline of a score row: value, Landis-Koch band for kappa, interval."""
    value = row.get("human_baseline")
    if not isinstance(value, float | int):
        return ""
    text = f"{value:.3f}"
    if row.get("score_name") == "cohens_kappa":
        band = str(interpret_kappa(float(value))).replace("_", " ")
        text += f" <span class='muted'>({escape(band)})</span>"
    low, high = row.get("human_low"), row.get("human_high")
    if isinstance(low, float | int) and isinstance(high, float | int):
        text += f" {_interval(float(low), float(high))}"
    return text


def judges(inputs: ReportInputs) -> str:
    """Per judge: rows by outcome, tokens, latency, cost; and why rows were not valid."""
    parts = ["<h2>Judges: answers, tokens, latency, cost</h2>"]
    if not inputs.judge_table:
        parts.append("<p>No judge results yet.</p>")
        return "".join(parts)
    numeric = [c for c in JUDGE_COLUMNS if c != "judge"]
    numeric.remove("run_id")
    shown = [{**row, "cost_usd": _cost_cell(row, inputs.has_prices)} for row in inputs.judge_table]
    parts.append(
        html_table(JUDGE_COLUMNS, shown, numeric=numeric, headers=_JUDGE_HEADERS)
    )  # fmt: skip
    if inputs.reasons:
        parts.append("<h3>Why rows were not valid</h3><table><tr><th>judge</th><th>outcome</th>"
                     "<th>status</th><th class='num'>rows</th><th>example</th></tr>")  # fmt: skip
        for row in inputs.reasons:
            parts.append(
                f"<tr><td>{escape(row['judge'])}</td><td>{escape(row['outcome'])}</td>"
                f"<td>{escape(row['status'])}</td><td class='num'>{row['rows']}</td>"
                f"<td>{escape((row['example'] or '')[:200])}</td></tr>"
            )
        parts.append("</table>")
    return "".join(parts)


def _cost_cell(row: dict[str, Any], has_prices: bool) -> object:
    """The cost, or why there is none (the CSV leaves it blank)."""
    if row.get("cost_usd") is not None:
        return row["cost_usd"]
    if not has_prices:
        return "no prices.yaml"
    if row.get("prompt_tokens") is None and row.get("completion_tokens") is None:
        return "no tokens recorded"
    return "no price in prices.yaml"


#: The judges table's headers on the page (words that can wrap; the CSV keeps the names).
_JUDGE_HEADERS = {
    "run_id": "latest run", "prompt_tokens": "prompt tokens",
    "completion_tokens": "completion tokens", "latency_mean_ms": "latency mean (ms)",
    "latency_p95_ms": "latency p95 (ms)", "cost_usd": "cost (USD)",
}  # fmt: skip


def plots(inputs: ReportInputs) -> str:
    """Every plot saved under `scores/`, embedded (but those a kind's section shows)."""
    shown = [plot for plot in inputs.plots if not shown_by_kind(plot)]
    if not shown:
        return ""
    parts = ["<h2>Plots</h2>"]
    for plot in shown:
        encoded = base64.b64encode(plot.read_bytes()).decode("ascii")
        caption = f"{plot.parent.parent.name} / {plot.parent.name} / {plot.name}"
        parts.append(
            f"<figure><img alt='{escape(caption)}' src='data:image/png;base64,{encoded}'>"
            f"<figcaption>{escape(caption)}</figcaption></figure>"
        )
    return "".join(parts)


#: The page's sections, in order.
SECTIONS: tuple[Section, ...] = (
    heading, freshness, verdicts, scores, disagreements, position_bias, self_consistency,
    preference_section, fairness_section, counterfactual_section, stereotype_section,
    multiple_choice_section, judges, run_comparisons, drift_section, label_plan_section, plots,
)  # fmt: skip
