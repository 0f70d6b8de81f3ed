"""ScoreReport: one row per judge, one column per metric, as meta-evaluator 0.3.3 printed it.

`evaluator.score_report` (after `add_metrics_config` and `compare_async`) reads the results
`compare_async` saved under `scores/<scorer_name>/<unique_name>/` for the metrics of the
configuration, and shows each metric's main score (the alt-test: its winning rate at the
configured epsilon and its advantage probability) in the console, as CSV, text or an HTML table
that marks the best value of each column. Nothing is computed anew.

Example:
    >>> import tempfile
    >>> from meta_evaluator.scores import MetricConfig, MetricsConfig
    >>> from meta_evaluator.scores.metrics import AccuracyScorer
    >>> config = MetricsConfig(metrics=[MetricConfig(scorer=AccuracyScorer(),
    ...                                              task_names=["t"], task_strategy="single")])
    >>> ScoreReport(tempfile.mkdtemp(), config).generate().height  # nothing scored yet
    0
"""

from __future__ import annotations

import html
import math
import sys
from pathlib import Path
from typing import Any, Literal, TextIO

import polars as pl

from meta_evaluator.errors import MetaEvaluatorError
from meta_evaluator.reports._tables import MAIN_SCORES
from meta_evaluator.scores import MetricsConfig
from meta_evaluator.scores.base_scoring_result import ScoringResult
from meta_evaluator.stats.alt_test import epsilon_key
from meta_evaluator.storage import atomic_write_text, check_safe_name

__all__ = ["ReportFormat", "ScoreReport"]

ReportFormat = Literal["html", "csv", "txt"]


class ScoreReport:
    """The scores of every judge under the metrics of `metrics_config`, from `scores_dir`."""

    def __init__(self, scores_dir: str | Path, metrics_config: MetricsConfig) -> None:
        if not isinstance(metrics_config, MetricsConfig):
            raise MetaEvaluatorError(
                f"ScoreReport needs a MetricsConfig, got {type(metrics_config).__name__}.",
                field="metrics_config",
            )
        self.scores_dir = Path(scores_dir)
        self.metrics_config = metrics_config
        self.report_df: pl.DataFrame | None = None
        """The last table `generate` made (0.3.3's attribute)."""

    def generate(self) -> pl.DataFrame:
        """The table: `judge_id`, then a column per metric (its unique name), in config order.

        A judge without a result for a metric has null there; a metric nobody was scored with
        has no column. The alt-test gives two columns, `<name>_winning_rate` (at the metric's
        own epsilon) and `<name>_advantage_prob`.
        """
        rows: dict[str, dict[str, Any]] = {}
        columns: list[str] = []
        for metric in self.metrics_config.metrics:
            name = metric.get_unique_name()
            folder = self.scores_dir / metric.scorer.scorer_name / name
            for path in sorted(folder.glob("*_result.json")) if folder.is_dir() else []:
                result = ScoringResult.load_state(path)
                for column, value in _columns(name, result, metric.scorer).items():
                    if column not in columns:
                        columns.append(column)
                    rows.setdefault(result.judge_id, {"judge_id": result.judge_id})[column] = value
        schema = {"judge_id": pl.String(), **dict.fromkeys(columns, pl.Float64())}
        table = pl.DataFrame(
            [{c: row.get(c) for c in schema} for row in rows.values()], schema=schema, orient="row"
        )
        self.report_df = table
        return table

    def to_text(self) -> str:
        """The table as text, for a console."""
        return _text(self.generate())

    def print(self, file: TextIO | None = None) -> None:
        """Print the table (to `file`, default the console)."""
        (file or sys.stdout).write(self.to_text() + "\n")

    def save(self, filename: str, format: ReportFormat = "html") -> str:
        """Write the table to `scores/<filename>` (atomically) and return what was written.

        Args:
            filename: A file name (no folder) inside the scores folder.
            format: `html` (a table marking each column's highest value), `csv` or `txt`.

        Raises:
            UnsafeNameError: `filename` is not a plain file name.
            MetaEvaluatorError: An unknown format.
            StorageError: The file cannot be written.
        """
        check_safe_name(filename, field="filename")
        if format not in ("html", "csv", "txt"):
            raise MetaEvaluatorError(
                f"ScoreReport.save: format must be 'html', 'csv' or 'txt'; got {format!r}.",
                field="format",
            )
        table = self.generate()
        if format == "csv":
            content = table.write_csv()
        elif format == "html":
            content = _html(table)
        else:
            content = _text(table) + "\n"  # the table read once
        atomic_write_text(self.scores_dir / filename, content)
        return content


def _text(table: pl.DataFrame) -> str:
    """The table as text, for a console or a .txt file."""
    if table.is_empty():
        return "No scores saved yet for these metrics; run compare_async() first."
    with pl.Config(tbl_rows=-1, tbl_cols=-1, fmt_str_lengths=80, tbl_width_chars=200):
        return f"Score Report:\n{table}"


def _columns(name: str, result: ScoringResult, scorer: Any) -> dict[str, float | None]:
    """The columns a result fills: its main score, or the alt-test's two."""
    scores = result.scores
    if result.scorer_name == "alt_test":
        rates = scores.get("winning_rate") or {}
        rate = rates.get(epsilon_key(getattr(scorer, "epsilon", 0.2)))
        return {
            f"{name}_winning_rate": _number(rate),
            f"{name}_advantage_prob": _number(scores.get("advantage_probability")),
        }
    key = MAIN_SCORES.get(result.scorer_name)
    if key is None:  # a scorer of the user's own: its first number
        key = next((k for k, v in scores.items() if _number(v) is not None), None)
    return {name: _number(scores.get(key)) if key is not None else None}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return None
    return float(value)


def _html(table: pl.DataFrame) -> str:
    """A table of the scores, each column's highest value marked `best-score`."""
    metrics = [c for c in table.columns if c != "judge_id"]
    best = {c: table.get_column(c).max() for c in metrics}
    head = "".join(f"<th>{html.escape(c)}</th>" for c in metrics)
    rows = []
    for row in table.iter_rows(named=True):
        cells = []
        for c in metrics:
            value = row[c]
            if value is None:
                cells.append("<td>-</td>")
            else:
                mark = " class='best-score'" if value == best[c] else ""
                cells.append(f"<td{mark}>{value:.3f}</td>")
        rows.append(f"<tr><td>{html.escape(row['judge_id'])}</td>{''.join(cells)}</tr>")
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<title>Score report</title><style>"
        "body{font-family:system-ui,sans-serif;margin:1.5em}"
        ".score-report-table{border-collapse:collapse;font-family:monospace}"
        ".score-report-table th,.score-report-table td{border:1px solid #ddd;padding:6px 10px;"
        "text-align:center}.score-report-table th{background:#f2f2f2;max-width:16em;"
        "overflow-wrap:anywhere}.best-score{background:rgb(199,224,185);font-weight:bold}"
        "</style></head><body>\n<h1>Score report</h1>\n"
        "<p>One row per judge, one column per metric; the highest value of each column is "
        "marked.</p>\n"
        f"<table class='score-report-table'>\n<tr><th>Judge</th>{head}</tr>\n"
        + "\n".join(rows)
        + "\n</table>\n</body></html>\n"
    )
