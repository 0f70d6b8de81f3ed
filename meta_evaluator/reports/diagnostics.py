"""The report's sections on a judge measured against itself: position bias, self-consistency.

Each reads the saved results of its scorer (`position_bias`, `self_consistency`) from
`ReportInputs.scores`, one table row per metric, judge and task (a multitask metric's tasks
each get a row), and is left out when no such metric was scored. Plain HTML, no script.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from meta_evaluator._util import finite_number
from meta_evaluator.reports.html import escape
from meta_evaluator.reports.inputs import ReportInputs
from meta_evaluator.reports.section_parts import metrics_of
from meta_evaluator.scores.metrics.kappa import interpret_kappa

__all__ = ["position_bias", "self_consistency"]


def _entries(inputs: ReportInputs, scorer: str) -> Iterator[tuple[str, Any, str, dict[str, Any]]]:
    """(metric, result, task, entry) per scored task; entry has scores, metadata, intervals."""
    for metric, results in sorted(metrics_of(inputs, scorer), key=lambda pair: pair[0]):
        for result in results:
            per_task = result.metadata.get("per_task")
            if isinstance(per_task, dict) and per_task:
                for task, entry in per_task.items():
                    yield metric, result, task, entry
            else:
                yield (
                    metric,
                    result,
                    result.task_name,
                    {
                        "scores": result.scores,
                        "metadata": result.metadata,
                        "confidence_intervals": result.confidence_intervals,
                        "error": result.error,
                    },
                )


def _value(entry: dict[str, Any], key: str, digits: int = 3) -> str:
    """A score with its interval below it: `0.800<br>[0.750, 0.853]` (n/a when undefined)."""
    value = (entry.get("scores") or {}).get(key)
    if not finite_number(value):
        return "<span class='muted'>n/a</span>"
    text = f"{value:.{digits}f}"
    interval = (entry.get("confidence_intervals") or {}).get(key)
    if isinstance(interval, list | tuple) and all(finite_number(x) for x in interval or ()):
        low, high = interval
        shown = f"[{low:.{digits}f}, {high:.{digits}f}]"
        text += f"<br><span class='muted' style='white-space:nowrap'>{shown}</span>"
    return text


def _error_row(metric: str, judge: str, task: str, error: str, width: int) -> str:
    return (
        f"<tr><td>{escape(metric)}</td><td>{escape(judge)}</td><td>{escape(task)}</td>"
        f"<td colspan='{width}'><span class='err'>not scored: {escape(error)}</span></td></tr>"
    )


def position_bias(inputs: ReportInputs) -> str:
    """Per judge: does it pick an answer for where it stands (`PositionBiasScorer`)?"""
    rows = []
    for metric, result, task, entry in _entries(inputs, "position_bias"):
        if entry.get("error"):
            rows.append(_error_row(metric, result.judge_id, task, entry["error"], 5))
            continue
        scores, metadata = entry.get("scores") or {}, entry.get("metadata") or {}
        level = metadata.get("confidence_level", 0.95)
        alpha = 1.0 - float(level) if finite_number(level) else 0.05
        rate, p = scores.get("first_position_rate"), scores.get("p_value")
        if not finite_number(rate):
            reading = "<span class='muted'>undefined: no pair usable in both orders</span>"
        elif not finite_number(p):  # every pair consistent: the order decided nothing
            reading = (
                "<span class='pass'>no position preference found (every pair consistent)</span>"
            )
        elif p < alpha:
            where = "first" if rate > 0.5 else "second"
            reading = (
                f"<span class='fail'>prefers the answer shown {where} (p &lt; {alpha:g})</span>"
            )
        else:
            reading = f"<span class='pass'>no position preference found (p ≥ {alpha:g})</span>"
        shown_p = f"{p:.2g}" if finite_number(p) else ""
        rows.append(
            f"<tr><td>{escape(metric)}</td><td>{escape(result.judge_id)}</td>"
            f"<td>{escape(task)}</td><td class='num'>{escape(scores.get('pairs'))}</td>"
            f"<td class='num'>{_value(entry, 'consistency_rate')}</td>"
            f"<td class='num'>{_value(entry, 'first_position_rate')}</td>"
            f"<td class='num' style='white-space:nowrap'>{shown_p}</td><td>{reading}</td></tr>"
        )
    if not rows:
        return ""
    return (
        "<h2>Position bias</h2><p class='muted'>Each pair was judged twice, its two answers "
        "swapped the second time. <b>Consistency</b>: the share of pairs with the same winner "
        "both ways. <b>First-position rate</b>: the share of answers picking whichever answer "
        "was shown first; 0.5 without position bias. Its interval (Wilson's, of the "
        "inconsistent pairs' share picking the first place) takes their number as given, so "
        "when they all picked one place the rate sits at the interval's edge. "
        "<b>p</b>: the exact sign test of the "
        "inconsistent pairs (those picking the same place both times), as many picking the "
        "first place as the second without position bias. Use "
        "<code>PreferenceScorer(debias_positions=True)</code> to count only the verdicts that "
        "survive the swap.</p>"
        "<table><tr><th>metric</th><th>judge</th><th>task</th><th class='num'>pairs</th>"
        "<th class='num'>consistency</th><th class='num'>first-position rate</th>"
        "<th class='num'>p</th><th>reading</th></tr>" + "".join(rows) + "</table>"
    )


def self_consistency(inputs: ReportInputs) -> str:
    """Per judge asked k times: does it agree with itself, what does its majority buy?"""
    rows = []
    for metric, result, task, entry in _entries(inputs, "self_consistency"):
        if entry.get("error"):
            rows.append(_error_row(metric, result.judge_id, task, entry["error"], 7))
            continue
        scores = entry.get("scores") or {}
        kappa = scores.get("fleiss_kappa")
        band = interpret_kappa(float(kappa)) if finite_number(kappa) else None
        band_text = (
            f"<br><span class='muted'>{escape(band.replace('_', ' '))}</span>" if band else ""
        )
        rows.append(
            f"<tr><td>{escape(metric)}</td><td>{escape(result.judge_id)}</td>"
            f"<td>{escape(task)}</td><td class='num'>{escape(scores.get('rows_used'))}</td>"
            f"<td class='num'>{escape(scores.get('samples_per_row'))}</td>"
            f"<td class='num'>{_value(entry, 'fleiss_kappa')}{band_text}</td>"
            f"<td class='num'>{_value(entry, 'krippendorff_alpha')}</td>"
            f"<td class='num'>{_value(entry, 'unanimous_share')}</td>"
            f"<td class='num'>{_value(entry, 'flip_rate')}</td>"
            f"<td>{_voting(scores)}</td></tr>"
        )
    if not rows:
        return ""
    return (
        "<h2>Self-consistency</h2><p class='muted'>The judge answered each row k times "
        "(<code>consistency=k</code>). Fleiss' kappa and Krippendorff's alpha treat the k "
        "answers as k coders (1: it always repeats itself, 0: chance); <b>unanimous</b> is the "
        "share of rows whose answers all agree; the <b>flip rate</b> the share of a row's pairs "
        "of answers that disagree. Where humans labelled the rows, <b>voting</b> shows the "
        "accuracy against the humans' majority of the first answer alone and of the majority "
        "of the k answers (the label the run stores).</p>"
        "<table><tr><th>metric</th><th>judge</th><th>task</th><th class='num'>rows</th>"
        "<th class='num'>k</th><th class='num'>Fleiss' kappa</th>"
        "<th class='num'>Krippendorff's alpha</th><th class='num'>unanimous</th>"
        "<th class='num'>flip rate</th><th>voting</th></tr>" + "".join(rows) + "</table>"
    )


def _voting(scores: dict[str, Any]) -> str:
    """`0.600 → 0.883 (+0.283)`: first answer to majority, against the humans."""
    single, vote = scores.get("first_answer_accuracy"), scores.get("majority_accuracy")
    if not finite_number(single) or not finite_number(vote):
        return "<span class='muted'>no human labels</span>"
    gain = vote - single
    kind = "pass" if gain > 0 else ("fail" if gain < 0 else "muted")
    return (
        f"accuracy {single:.3f} → {vote:.3f} <span class='{kind}'>({gain:+.3f})</span>"
        f" <span class='muted'>on {escape(scores.get('human_rows'))} rows</span>"
    )
