"""Collect a project's results and scores, and write the report files atomically."""

from __future__ import annotations

import base64
import datetime as dt
import html
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from meta_evaluator.llm.prices import read_prices
from meta_evaluator.reports._tables import RESULT_COLUMNS, judge_rows, reason_rows, score_rows
from meta_evaluator.scores.base_scoring_result import BaseScoringResult
from meta_evaluator.storage import atomic_write_text, write_csv

if TYPE_CHECKING:
    import polars as pl

    from meta_evaluator.data import EvalData
    from meta_evaluator.eval_task import EvalTask
    from meta_evaluator.judge import Judge
    from meta_evaluator.results import JudgeResults
    from meta_evaluator.results.human_results import HumanAnnotationResults

__all__ = ["ReportedProject", "load_scores", "write_report"]


class _ReportFolders(Protocol):
    @property
    def reports_dir(self) -> Path: ...
    @property
    def scores_dir(self) -> Path: ...


@runtime_checkable
class _ResultFolders(Protocol):
    """Where a project keeps its results: a `MetaEvaluator`'s `paths` has both."""

    @property
    def results_dir(self) -> Path: ...
    @property
    def annotations_dir(self) -> Path: ...


class ReportedProject(Protocol):
    """What the report reads of a project: a `MetaEvaluator` is one.

    The report sits below the facade (docs/architecture.md), so it names what it needs instead
    of importing the facade.
    """

    @property
    def project_dir(self) -> Path:
        """The project folder."""

    @property
    def paths(self) -> _ReportFolders:
        """The project's folders (`reports_dir`, `scores_dir`)."""

    @property
    def data(self) -> EvalData | None:
        """The evaluation data, or None."""

    @property
    def eval_task(self) -> EvalTask | None:
        """The task, or None."""

    @property
    def judge_registry(self) -> Mapping[str, Judge]:
        """Judge id -> Judge."""

    def load_all_judge_results(self) -> Mapping[str, JudgeResults]:
        """The latest complete results of every judge, by judge id."""

    def load_all_human_results(self) -> Mapping[str, HumanAnnotationResults]:
        """The latest labels of every annotator, by annotator id."""


def load_scores(scores_dir: Path) -> dict[str, list[BaseScoringResult]]:
    """`<scorer>/<metric>` -> results by judge, from the JSON files under `scores_dir` (sorted)."""
    table: dict[str, list[BaseScoringResult]] = {}
    if not scores_dir.is_dir():
        return table
    for path in sorted(scores_dir.glob("*/*/*_result.json")):
        key = f"{path.parent.parent.name}/{path.parent.name}"
        table.setdefault(key, []).append(BaseScoringResult.load_state(path))
    return table


def write_report(evaluator: ReportedProject, out_dir: str | Path | None = None) -> Path:
    """Write the report of the project's current results and scores; return report.html's path.

    Prices for the cost column come from `<project>/prices.yaml` when it exists: a mapping of
    model (or judge id) to `prompt` and `completion` US dollars per million tokens, and
    optionally `batch_prompt` and `batch_completion` for rows a provider batch answered (half
    the live price by default); `meta_evaluator.llm.prices` reads it.

    Raises:
        PricesError: `prices.yaml` cannot be used (a `StateError`).
        StateError: A results or scores file cannot be read.
        StorageError: A report file cannot be written.
    """
    folder = Path(out_dir) if out_dir is not None else evaluator.paths.reports_dir
    judges, humans = _results(evaluator)
    models = {j.id: j.model for j in evaluator.judge_registry.values()}
    prices = read_prices(evaluator.project_dir / "prices.yaml")
    scores = load_scores(evaluator.paths.scores_dir)
    judge_table = judge_rows(judges, prices.table if prices is not None else None, models)
    reasons = reason_rows(judges)
    score_table = score_rows(scores)
    plots = sorted(evaluator.paths.scores_dir.glob("*/*/*.png"))
    tables = sorted(evaluator.paths.scores_dir.glob("*/*/trait_table.md"))
    write_csv(folder / "scores.csv", score_table)
    atomic_write_text(folder / "scores.md", _markdown(score_table, SCORE_COLUMNS))
    write_csv(folder / "judges.csv", judge_table)
    atomic_write_text(folder / "judges.md", _markdown(judge_table, JUDGE_COLUMNS))
    page = _html(evaluator, judge_table, reasons, score_table, plots, tables, humans)
    target = folder / "report.html"
    atomic_write_text(target, page)
    return target


def _results(evaluator: ReportedProject) -> tuple[dict[str, pl.DataFrame], Mapping[str, Any]]:
    """Every judge's latest rows (the columns the tables read), and the annotators' labels.

    A project whose `paths` names its results folders is read there, only `RESULT_COLUMNS`
    of each judge's table and the outcomes of each annotator's (a million rows' answers and
    labels stay on disk), in the order `load_all_judge_results` gives (the data's ids). Any
    other `ReportedProject` is asked through its two load methods.
    """
    paths = evaluator.paths
    if not isinstance(paths, _ResultFolders):
        judges = {j: r.results_data for j, r in evaluator.load_all_judge_results().items()}
        return judges, evaluator.load_all_human_results()
    from meta_evaluator.results.human_results import latest_annotations
    from meta_evaluator.results.judge_results import latest_results

    data = evaluator.data
    ids = data.ids if data is not None else None
    found = latest_results(paths.results_dir, ids, columns=RESULT_COLUMNS)
    humans = latest_annotations(paths.annotations_dir, columns=("outcome",))
    return {j: r.results_data for j, r in found.items()}, humans


SCORE_COLUMNS = ["metric", "judge", "score_name", "score", "low", "high", "verdict", "error"]
JUDGE_COLUMNS = [
    "judge", "rows", "valid", "invalid", "error", "prompt_tokens", "completion_tokens",
    "latency_mean_ms", "latency_p95_ms", "cost_usd",
]  # fmt: skip


def _markdown(rows: list[dict[str, Any]], columns: list[str]) -> str:
    if not rows:
        return "(nothing yet)\n"
    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row.get(c)) for c in columns) + " |")
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if abs(value) < 1000 else f"{value:,.0f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:72rem;
color:#1d2433;line-height:1.45;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2.2rem;
border-bottom:1px solid #d8dde6;padding-bottom:.3rem}
.muted{color:#5b6475;font-size:.9rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.9rem;width:100%}
th,td{border:1px solid #d8dde6;padding:.35rem .55rem;text-align:left;vertical-align:top}
th{background:#f3f5f9}td.num{text-align:right;font-variant-numeric:tabular-nums}
.pass{color:#1a7f37;font-weight:600}.fail{color:#b42318;font-weight:600}.err{color:#b42318}
figure{margin:1rem 0}figure img{max-width:100%;border:1px solid #e3e7ee}
figcaption{font-size:.85rem;color:#5b6475}
"""


def _html(
    evaluator: ReportedProject,
    judges: list[dict[str, Any]],
    reasons: list[dict[str, Any]],
    scores: list[dict[str, Any]],
    plots: list[Path],
    trait_tables: list[Path],
    humans: Mapping[str, Any],
) -> str:
    e = html.escape
    data = evaluator.data
    task = evaluator.eval_task
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>meta-evaluator report: {e(evaluator.project_dir.name)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Can the judges stand in for the humans? {e(evaluator.project_dir.name)}</h1>",
        f"<p class='muted'>Generated {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC from "
        f"{e(str(evaluator.project_dir.resolve()))}. Data: "
        f"{e(data.name) + f' ({len(data)} rows)' if data is not None else 'none'}; tasks: "
        f"{e(', '.join(task.task_names)) if task is not None else 'none'}; "
        f"{len(judges)} judge(s), {len(humans)} human annotator(s).</p>",
        "<h2>Scores</h2>",
    ]
    if scores:
        parts.append(
            "<table><tr><th>metric</th><th>judge</th><th>score</th><th class='num'>value</th>"
            "<th>interval</th><th>verdict</th></tr>"
        )
        for row in scores:
            interval = (
                f"[{row['low']:.3f}, {row['high']:.3f}]"
                if row["low"] is not None and row["high"] is not None
                else ""
            )
            if row["error"]:
                verdict = f"<span class='err'>not scored: {e(row['error'])}</span>"
            elif row["verdict"]:
                kind = "pass" if row["verdict"].startswith("passed") else "fail"
                verdict = f"<span class='{kind}'>{e(row['verdict'])}</span>"
            else:
                verdict = ""
            value = "" if row["score"] is None else f"{row['score']:.3f}"
            parts.append(
                f"<tr><td>{e(row['metric'])}</td><td>{e(row['judge'])}</td>"
                f"<td>{e(row['score_name'] or '')}</td><td class='num'>{value}</td>"
                f"<td>{interval}</td><td>{verdict}</td></tr>"
            )
        parts.append("</table>")
    else:
        parts.append("<p>No scores yet: run <code>meta-evaluator score</code> first.</p>")
    for table in trait_tables:
        parts.append(f"<h2>Traits ranked by strength: {e(table.parent.name)}</h2>")
        parts.append(_markdown_table_html(table.read_text(encoding="utf-8")))
    parts.append("<h2>Judges: answers, tokens, latency, cost</h2>")
    if judges:
        parts.append("<table><tr>" + "".join(f"<th>{e(c)}</th>" for c in JUDGE_COLUMNS) + "</tr>")
        for row in judges:
            parts.append(
                "<tr>" + "".join(
                    f"<td class='num'>{e(_cell(row.get(c)))}</td>" if c != "judge"
                    else f"<td>{e(row['judge'])}</td>"
                    for c in JUDGE_COLUMNS
                ) + "</tr>"
            )  # fmt: skip
        parts.append("</table>")
    else:
        parts.append("<p>No judge results yet.</p>")
    if reasons:
        parts.append("<h3>Why rows were not valid</h3><table><tr><th>judge</th><th>outcome</th>"
                     "<th>status</th><th class='num'>rows</th><th>example</th></tr>")  # fmt: skip
        for row in reasons:
            parts.append(
                f"<tr><td>{e(row['judge'])}</td><td>{e(row['outcome'])}</td>"
                f"<td>{e(row['status'])}</td><td class='num'>{row['rows']}</td>"
                f"<td>{e((row['example'] or '')[:200])}</td></tr>"
            )
        parts.append("</table>")
    if plots:
        parts.append("<h2>Plots</h2>")
        for plot in plots:
            encoded = base64.b64encode(plot.read_bytes()).decode("ascii")
            caption = f"{plot.parent.parent.name} / {plot.parent.name} / {plot.name}"
            parts.append(
                f"<figure><img alt='{e(caption)}' src='data:image/png;base64,{encoded}'>"
                f"<figcaption>{e(caption)}</figcaption></figure>"
            )
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _markdown_table_html(text: str) -> str:
    """A Markdown table (as the trait tables are written) as an HTML table."""
    e = html.escape
    lines = [line for line in text.splitlines() if line.startswith("|")]
    if len(lines) < 2:
        return f"<pre>{e(text)}</pre>"
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    head, body = cells[0], cells[2:]
    out = ["<table><tr>" + "".join(f"<th>{e(c)}</th>" for c in head) + "</tr>"]
    for row in body:
        out.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>")
    out.append("</table>")
    return "".join(out)
