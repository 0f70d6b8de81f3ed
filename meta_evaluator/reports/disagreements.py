"""The report's section on where the judges disagree with the humans, in small.

It shows what the viewer (`meta-evaluator view`) shows in full. For each judge and each task
with labels: the confusion matrix of the judge's labels against the humans' majority, and the
rows where they differ, most humans against the judge first (`row_table.most_disagreed`),
each with the judge's reasoning. Plain HTML, no script. The labels come with what the report
read (`ReportInputs`); raw answers are read for the rows listed alone. A project without
humans or judges gets no section.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from meta_evaluator.reports.html import escape
from meta_evaluator.reports.inputs import ReportInputs
from meta_evaluator.results.row_table import (
    DATA_PREFIX,
    HUMAN_PREFIX,
    RowSources,
    RowTable,
    build_row_table,
    confusion,
    judge_columns,
    most_disagreed,
    ordered_labels,
    read_raw_answers,
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
    sources = RowSources(
        judges={
            j: frame.select(c for c in judge_columns(task) if c in frame.columns)
            for j, frame in inputs.judges.items()
        },
        humans={h: labels.results_data for h, labels in inputs.humans.items()},
    )
    shown = task.columns_shown()[:1]
    found = []
    for judge in sorted(sources.judges):
        for name in tasks:
            # one data column is shown: the table need not carry the others
            table = build_row_table(data, task, name, judge, sources, shown=shown)
            found.append(_Found.of(table))
            del table  # a million rows' table: let it go before the next is built
    found = _with_raw_answers(found, inputs)
    parts = [
        "<h2>Where the judges disagree with the humans</h2>",
        "<p class='muted'>Each judge's labels against the humans' majority (ties go to the "
        "lexicographically largest label, as in scoring), then the rows where they differ, "
        f"most humans against the judge first (at most {MOST_DISAGREED}), with the judge's "
        "reasoning (its free-text answer, else its raw answer). "
        "<code>meta-evaluator view</code> lists every row.</p>",
    ]
    listed = [f for f in found if f.compared]
    if not listed:
        return ""
    parts += [_judge_task(f, inputs) for f in listed]
    parts.append(_not_shown([f for f in found if not f.compared], inputs))
    return "".join(parts)


def _not_shown(empty: list[_Found], inputs: ReportInputs) -> str:
    """One line on the judge-task pairs left out, with no row that both labelled ("" if none).

    The tasks no human labelled are named once; the votes imported with preference pairs are
    not named (they vote on their own traits, which no human labels).
    """
    unlabelled = sorted({f.task_name for f in empty if not f.humans_labelled})
    others = [
        f"{f.judge_id} on {f.task_name}"
        for f in empty
        if f.humans_labelled and f.judge_id not in inputs.vote_sets
    ]
    said = []
    if unlabelled:
        said.append(f"the tasks no human labelled ({', '.join(unlabelled)})")
    if others:
        said.append(f"{', '.join(others)} (no row with both the judge's and a human's label)")
    if not said:
        return ""
    return f"<p class='muted'>Not shown: {escape('; '.join(said))}.</p>"


@dataclass(frozen=True)
class _Found:
    """What the section shows of one judge's table on one task (the table itself let go)."""

    judge_id: str
    task_name: str
    annotators: tuple[str, ...]
    shown: tuple[str, ...]
    rows: int
    confusion: pl.DataFrame
    worst: pl.DataFrame
    humans_labelled: bool
    """Whether any human labelled a row of the task."""
    disagreeing: int
    """Rows where the judge's label is not the humans' majority (`worst` lists the first)."""

    @property
    def compared(self) -> int:
        """Rows with both a judge's label and a human label (the matrix's total)."""
        return int(self.confusion.get_column("rows").sum()) if self.confusion.height else 0

    @classmethod
    def of(cls, table: RowTable) -> _Found:
        return cls(
            judge_id=table.judge_id,
            task_name=table.task_name,
            annotators=table.annotators,
            shown=table.shown,
            rows=table.frame.height,
            confusion=confusion(table),
            worst=most_disagreed(table, MOST_DISAGREED),
            humans_labelled=bool(table.frame.get_column("majority_key").is_not_null().any()),
            disagreeing=int(table.frame.get_column("disagree").sum()),
        )


def _with_raw_answers(found: list[_Found], inputs: ReportInputs) -> list[_Found]:
    """The worst rows with the judges' raw answers where no free-text task gives a reasoning.

    Raw answers are read for those rows alone (a million rows' answers stay on disk); a
    project whose folders are not named gave its judges' rows whole, answers included.
    """
    results = getattr(inputs.project.paths, "results_dir", None)
    if not isinstance(results, Path):
        return found
    missing = pl.col("reasoning").is_null() & pl.col("raw_answer").is_null()
    wanted = [f.worst.filter(missing).get_column("original_id") for f in found]
    ids = pl.concat(wanted).unique() if wanted else None
    if ids is None or ids.len() == 0:
        return found
    answers = read_raw_answers(results, ids)
    out = []
    for f in found:
        own = answers.get(f.judge_id)
        if own is None:
            out.append(f)
            continue
        read = own.rename({"raw_answer": "_read"})
        worst = f.worst.join(read, on="original_id", how="left", maintain_order="left")
        worst = worst.with_columns(pl.coalesce("raw_answer", "_read").alias("raw_answer"))
        out.append(dataclasses.replace(f, worst=worst.drop("_read")))
    return out


def _judge_task(table: _Found, inputs: ReportInputs) -> str:
    assert inputs.eval_task is not None
    cells = table.confusion
    found = {*cells["judge_key"].to_list(), *cells["majority_key"].to_list()}
    labels = ordered_labels(inputs.eval_task, table.task_name, found)
    counts = {(a, b): n for a, b, n in cells.iter_rows()}
    compared = sum(counts.values())
    agreed = sum(n for (a, b), n in counts.items() if a == b)
    title = f"{escape(table.judge_id)} on {escape(table.task_name)}"
    run = inputs.judge_runs.get(table.judge_id)
    if run is not None:
        title += f" <span class='muted'>(latest run <code>{escape(run.run_id)}</code>)</span>"
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
        f"({agreed / compared:.1%}); {_rows_lack(table.rows - compared)} a judge's "
        "label or a human label.</p>"
    )
    return f"<h3>{title}</h3>{matrix}{_rows(table)}"


def _rows(table: _Found) -> str:
    worst = table.worst
    if worst.height == 0:
        return "<p>The judge gives the humans' majority label on every row both labelled.</p>"
    first = table.shown[0] if table.shown else None
    head = f"<th>{escape(first)}</th>" if first else ""
    lines = [f"<p class='disagreeing'>{_how_many(worst.height, table.disagreeing)}</p>"]
    lines.append(
        "<table><tr><th>id</th>" + head + "<th>judge</th><th>humans</th>"
        "<th>judge's reasoning</th></tr>"
    )
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


def _how_many(shown: int, disagreeing: int) -> str:
    """`20 of 21 disagreeing rows shown, ...`: how many of the disagreeing rows are listed."""
    if shown < disagreeing:
        return (
            f"{shown:,} of {disagreeing:,} disagreeing rows shown, most humans against the judge "
            "first; <code>meta-evaluator view</code> lists them all."
        )
    if disagreeing == 1:
        return "The one disagreeing row."
    return f"All {disagreeing:,} disagreeing rows, most humans against the judge first."


def _label(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, list):
        return "{" + ", ".join(str(v) for v in value) + "}"
    return str(value)


def _cut(value: Any, limit: int) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _rows_lack(missing: int) -> str:
    """`1 row lacks`, `3 rows lack`: the count with its noun and verb agreeing."""
    return f"{missing:,} row lacks" if missing == 1 else f"{missing:,} rows lack"
