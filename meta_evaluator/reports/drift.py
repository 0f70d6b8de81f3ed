"""The report's section on drift: each check of a judge's run against its baseline, over time.

`meta-evaluator drift` (`MetaEvaluator.drift`) appends each check to
`reports/drift_history.jsonl` and redraws `reports/drift_history.png`; this section reads them
itself (they are not in `ReportInputs`) and shows the latest checks, newest first, with the
thresholds each exceeded, and the plot. A damaged line of the history is named, not fatal.
"""

from __future__ import annotations

from meta_evaluator.reports.html import escape
from meta_evaluator.reports.inputs import ReportInputs
from meta_evaluator.reports.section_parts import embedded_figure, number
from meta_evaluator.scores.drift import DriftCheck
from meta_evaluator.scores.drift_history import (
    DRIFT_HISTORY_FILE,
    DRIFT_HISTORY_PLOT,
    read_history,
)
from meta_evaluator.scores.run_comparison import SCORE_TITLES

__all__ = ["CHECKS_SHOWN", "drift_section"]

CHECKS_SHOWN = 20
"""Checks listed, newest first; the history file has them all."""


def drift_section(inputs: ReportInputs) -> str:
    """The drift history ("" without one).

    Raises:
        StorageError: The history cannot be read.
    """
    folder = inputs.project.paths.reports_dir
    path = folder / DRIFT_HISTORY_FILE
    history = read_history(path)
    if not history.checks and not history.damaged:
        return ""
    parts = [
        "<h2>Drift</h2>",
        "<p class='muted'>Saved by <code>meta-evaluator drift</code>: each check compares a "
        "judge's run with its baseline run on the rows both labelled: the share of rows whose "
        "label changed, the population stability index (PSI) of its label shares, "
        "Stuart-Maxwell's test of paired labels, and the change in agreement with the humans "
        "with its paired bootstrap interval. A check <span class='fail'>drifted</span> when a "
        "threshold of the project's <code>drift:</code> settings was exceeded.</p>",
    ]
    if history.damaged:
        lines = "; ".join(f"line {d.line}: {d.reason}" for d in history.damaged)
        parts.append(
            f"<p class='warn'>{len(history.damaged)} line(s) of {DRIFT_HISTORY_FILE} are not "
            f"drift checks and are left out: {escape(lines)}.</p>"
        )
    # Oldest first, file order within a second (times are whole seconds), then reversed.
    newest = sorted(history.checks, key=lambda c: c.checked_at)[::-1][:CHECKS_SHOWN]
    if newest:
        parts.append(_table(newest))
        more = len(history.checks) - len(newest)
        if more > 0:
            parts.append(f"<p class='muted'>… and {more} older checks in {DRIFT_HISTORY_FILE}.</p>")
    plot = folder / DRIFT_HISTORY_PLOT
    if plot.is_file():
        parts.append(embedded_figure(plot, "Agreement with the humans and PSI per check"))
    return "".join(parts)


def _table(checks: list[DriftCheck]) -> str:
    head = (
        "<tr><th>checked (UTC)</th><th>judge</th><th>baseline → run</th>"
        "<th class='num'>rows</th><th class='num'>changed</th><th class='num'>PSI</th>"
        "<th class='num'>Stuart-Maxwell p</th><th>agreement</th><th>change [interval]</th>"
        "<th>verdict</th></tr>"
    )
    body = []
    for c in checks:
        watched = c.watched()
        score = "" if watched is None else SCORE_TITLES.get(watched.name, watched.name)
        if watched is None or watched.difference is None:
            change = f"n/a ({c.human_reason or (watched.reason if watched else '')})"
        else:
            change = f"{watched.difference:+.3f}"
            if watched.low is not None and watched.high is not None:
                change += f" [{watched.low:+.3f}, {watched.high:+.3f}]"
        agreement = "" if watched is None else f"{score}: {number(watched.a)} → {number(watched.b)}"
        verdict = (
            f"<span class='fail'>drifted: {escape(', '.join(c.exceeded))}</span>"
            if c.drifted
            else "<span class='pass'>steady</span>"
        )
        body.append(
            f"<tr><td>{escape(c.time[:19].replace('T', ' '))}</td><td>{escape(c.judge_id)}</td>"
            f"<td>{escape(c.baseline.run_id)} → {escape(c.against.run_id)}</td>"
            f"<td class='num'>{c.rows}</td><td class='num'>{number(c.shift.changed_share)}</td>"
            f"<td class='num'>{number(c.shift.psi)}</td>"
            f"<td class='num'>{_p_value(c.shift.stuart_maxwell_p_value)}</td>"
            f"<td>{escape(agreement)}</td><td>{escape(change)}</td><td>{verdict}</td></tr>"
        )
    return "<table>" + head + "".join(body) + "</table>"


def _p_value(value: float | None) -> str:
    """A p-value to two significant digits (a tiny one stays readable: `3.1e-12`)."""
    return "n/a" if value is None else f"{value:.2g}"
