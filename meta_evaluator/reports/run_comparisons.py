"""The report's section on run comparisons: what changed from one run to another.

`meta-evaluator compare-runs` (`MetaEvaluator.compare_runs`) saves each comparison under
`reports/compare-runs/`; this section reads those files itself (they are not in
`ReportInputs`) and shows, per comparison, the change in agreement with the humans and the rows
whose label flipped. Plain HTML, no script.
"""

from __future__ import annotations

from meta_evaluator.reports.html import escape, html_table
from meta_evaluator.reports.inputs import ReportInputs
from meta_evaluator.scores.run_comparison import (
    COMPARISONS_FOLDER,
    SCORE_TITLES,
    RunComparison,
    read_comparisons,
)

__all__ = ["FLIPS_SHOWN", "run_comparisons"]

FLIPS_SHOWN = 100
"""Flipped rows listed per comparison; the saved JSON file has them all."""

_DIRECTION_CLASS = {"toward": "pass", "away": "fail"}


def run_comparisons(inputs: ReportInputs) -> str:
    """Every saved comparison, by file name: its scores, McNemar's test, its flipped rows.

    Raises:
        StateError: A saved comparison is not one (the file is named).
        StorageError: It cannot be read.
    """
    folder = inputs.project.paths.reports_dir / COMPARISONS_FOLDER
    comparisons = read_comparisons(folder)
    if not comparisons:
        return ""
    parts = [
        "<h2>Run comparisons</h2>",
        "<p class='muted'>Saved by <code>meta-evaluator compare-runs</code>. A flipped row moved "
        "<span class='pass'>toward</span> the humans' majority label (wrong, then right) or "
        "<span class='fail'>away</span> from it; changes are the second run minus the first, "
        "with a paired bootstrap interval.</p>",
    ]
    for comparison in comparisons:
        parts.append(_one(comparison))
    return "".join(parts)


def _one(c: RunComparison) -> str:
    a, b = c.side_names()
    judge = f", judge {c.run_a.judge_id}" if c.run_a.judge_id == c.run_b.judge_id else ""
    parts = [f"<h3>{escape(a)} → {escape(b)} (task {escape(c.task)}{escape(judge)})</h3>"]
    if c.toward is None:
        moved = f"no direction: {c.human_reason}"
    else:
        moved = f"{c.toward} toward the humans, {c.away} away, {c.neither} wrong both times"
        moved += f", {c.unrated} without a human label" if c.unrated else ""
    test = (
        f"McNemar's exact test: p = {c.mcnemar_p:.3g}"
        if c.mcnemar_p is not None
        else f"McNemar's exact test: n/a ({c.mcnemar_reason})"
    )
    parts.append(
        f"<p>{c.items} rows labelled by both ({c.only_in_a} only by {escape(a)}, "
        f"{c.only_in_b} only by {escape(b)}); <strong>{len(c.flipped)} flipped</strong> "
        f"({escape(moved)}). {escape(test)}.</p>"
    )
    level = f"{c.bootstrap.confidence_level:.0%} interval"
    rows = [
        {
            "score": SCORE_TITLES.get(s.name, s.name),
            a: _number(s.a),
            b: _number(s.b),
            "change": _number(s.difference, sign=True),
            level: f"[{s.low:+.3f}, {s.high:+.3f}]" if s.low is not None and s.high is not None
            else "",
            "why undefined": s.reason,
        }
        for s in c.scores
    ]  # fmt: skip
    columns = ["score", a, b, "change", level, "why undefined"]
    if not any(s.reason for s in c.scores):
        columns.pop()
    parts.append(html_table(columns, rows, numeric=[a, b, "change"]))
    if c.changes:
        parts.append(_flips(c, a, b))
    return "".join(parts)


def _flips(c: RunComparison, a: str, b: str) -> str:
    """The flipped rows, the first `FLIPS_SHOWN`, direction coloured."""
    body = [
        f"<tr><td>{escape(f.id)}</td><td>{escape(_label(f.a))}</td><td>{escape(_label(f.b))}</td>"
        f"<td>{escape(_label(f.human))}</td>"
        f"<td class='{_DIRECTION_CLASS.get(f.direction, 'muted')}'>{escape(f.direction)}</td></tr>"
        for f in c.changes[:FLIPS_SHOWN]
    ]
    more = len(c.changes) - FLIPS_SHOWN
    tail = (
        f"<p class='muted'>… and {more} more in {COMPARISONS_FOLDER}/{escape(c.key)}.json.</p>"
        if more > 0
        else ""
    )
    return (
        f"<p><strong>Flipped rows</strong> ({len(c.changes)})</p>"
        f"<table><tr><th>id</th><th>{escape(a)}</th><th>{escape(b)}</th><th>humans' majority</th>"
        "<th>direction</th></tr>" + "".join(body) + "</table>" + tail
    )


def _number(value: float | None, *, sign: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def _label(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
