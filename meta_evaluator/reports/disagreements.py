"""The report's section on where the judges disagree with the humans, in small.

It shows what the viewer (`meta-evaluator view`) shows in full. For each judge and each task
with labels: the confusion matrix of the judge's labels against the humans' majority, and the
rows where they differ, most humans against the judge first (`row_table.most_disagreed`),
each with the judge's reasoning. Plain HTML, no script. The rows are read here, from the
result files (only the columns needed), as the viewer reads them; a project without humans or
judges gets no section.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from meta_evaluator.reports.html import escape
from meta_evaluator.reports.inputs import ReportInputs
from meta_evaluator.results.row_table import (
    DATA_PREFIX,
    HUMAN_PREFIX,
    RowSources,
    RowTable,
    build_row_table,
    confusion,
    human_columns,
    judge_columns,
    most_disagreed,
    ordered_labels,
    read_row_sources,
)

__all__ = ["MOST_DISAGREED", "disagreements"]

#: Rows listed per judge and task.
MOST_DISAGREED = 20
#: Characters of a reasoning or a data value shown.
_REASONING_CHARS = 400
_DATA_CHARS = 200


def disagreements(inputs: ReportInputs) -> str:
    """Per judge and task: the confusion matrix against the humans' majority, the worst rows.

    The rows the judge gets wrong come most humans against it first; "" without judges or
    humans.
    """
    data, task = inputs.data, inputs.eval_task
    if data is None or task is None or not inputs.judges or not inputs.humans:
        return ""
    tasks = [t for t in task.task_names if task.task_kind(t) != "free_text"]
    if not tasks:
        return ""
    sources = _sources(inputs)
    shown = task.columns_shown()[:1]
    parts = [
        "<h2>Where the judges disagree with the humans</h2>",
        "<p class='muted'>Each judge's labels against the humans' majority (ties go to the "
        "lexicographically largest label, as in scoring), then the rows where they differ, "
        f"most humans against the judge first (at most {MOST_DISAGREED}). "
        "<code>meta-evaluator view</code> lists every row.</p>",
    ]
    for judge in sorted(sources.judges):
        for name in tasks:
            # one data column is shown: the table need not carry the others
            table = build_row_table(data, task, name, judge, sources, shown=shown)
            parts.append(_judge_task(table, inputs))
            del table  # a million rows' table: let it go before the next is built
    return "".join(parts)


def _sources(inputs: ReportInputs) -> RowSources:
    """The judges' and annotators' rows: from the files when the project names its folders."""
    project, task = inputs.project, inputs.eval_task
    assert task is not None and inputs.data is not None
    paths = project.paths
    results = getattr(paths, "results_dir", None)
    annotations = getattr(paths, "annotations_dir", None)
    # the reasoning is a free-text task when there is one; only then are raw answers not read
    raw = not any(task.task_kind(t) == "free_text" for t in task.task_names)
    if isinstance(results, Path) and isinstance(annotations, Path):
        return read_row_sources(results, annotations, task, inputs.data.ids, raw_answers=raw)
    judges = {
        j: r.results_data.select(c for c in judge_columns(task) if c in r.results_data.columns)
        for j, r in project.load_all_judge_results().items()
    }
    humans = {
        h: r.results_data.select(c for c in human_columns(task) if c in r.results_data.columns)
        for h, r in project.load_all_human_results().items()
    }
    return RowSources(judges, humans)


def _judge_task(table: RowTable, inputs: ReportInputs) -> str:
    assert inputs.eval_task is not None
    cells = confusion(table)
    found = {*cells["judge_key"].to_list(), *cells["majority_key"].to_list()}
    labels = ordered_labels(inputs.eval_task, table.task_name, found)
    counts = {(a, b): n for a, b, n in cells.iter_rows()}
    compared = sum(counts.values())
    agreed = sum(n for (a, b), n in counts.items() if a == b)
    title = f"{escape(table.judge_id)} on {escape(table.task_name)}"
    if not compared:
        return f"<h3>{title}</h3><p>No row has both a judge's label and a human label.</p>"
    head = "".join(f"<th class='num'>{escape(b)}</th>" for b in labels)
    lines = "".join(
        f"<tr><th>{escape(a)}</th>"
        + "".join(
            f"<td class='num'>{'<b>' if a == b else ''}{counts.get((a, b), 0):,}"
            f"{'</b>' if a == b else ''}</td>"
            for b in labels
        )
        + "</tr>"
        for a in labels
    )
    matrix = (
        f"<table style='width:auto'><tr><th>judge ↓ · humans' majority →</th>{head}</tr>"
        f"{lines}</table><p class='muted'>{agreed:,} of {compared:,} rows agree "
        f"({agreed / compared:.1%}); {table.frame.height - compared:,} rows lack a judge's "
        "label or a human label.</p>"
    )
    return f"<h3>{title}</h3>{matrix}{_rows(table)}"


def _rows(table: RowTable) -> str:
    worst = most_disagreed(table, MOST_DISAGREED)
    if worst.height == 0:
        return "<p>The judge gives the humans' majority label on every row both labelled.</p>"
    first = table.shown[0] if table.shown else None
    head = f"<th>{escape(first)}</th>" if first else ""
    lines = [
        "<table><tr><th>id</th>" + head + "<th>judge</th><th>humans</th>"
        "<th>judge's reasoning</th></tr>"
    ]
    for row in worst.iter_rows(named=True):
        humans = ", ".join(
            f"{escape(a)}: {escape(_label(row[HUMAN_PREFIX + a]))}"
            for a in table.annotators
            if row[HUMAN_PREFIX + a] is not None
        )
        reasoning = row["reasoning"] if row["reasoning"] is not None else row["raw_answer"]
        shown = f"<td>{escape(_cut(row[DATA_PREFIX + first], _DATA_CHARS))}</td>" if first else ""
        lines.append(
            f"<tr><td>{escape(row['original_id'])}</td>{shown}"
            f"<td><b>{escape(_label(row['judge_label']))}</b></td>"
            f"<td><b>{escape(_label(row['human_majority']))}</b> "
            f"<span class='fail'>{row['humans_against']} of {row['humans_labelled']} against"
            f"</span><br><span class='muted'>{humans}</span></td>"
            f"<td>{escape(_cut(reasoning, _REASONING_CHARS))}</td></tr>"
        )
    lines.append("</table>")
    return "".join(lines)


def _label(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, list):
        return "{" + ", ".join(str(v) for v in value) + "}"
    return str(value)


def _cut(value: Any, limit: int) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
