"""Reports: one self-contained `report.html` (plots embedded) and CSV/Markdown tables.

`write_report(evaluator)` reads what the project holds (judge results, annotations, scores and
their plots) and writes `reports/report.html`, `reports/scores.csv`, `reports/scores.md`,
`reports/judges.csv` and `reports/judges.md`. Nothing is computed anew: the report shows the
scores `compare_async` (or `meta-evaluator score`) saved. The evaluator is any
`ReportedProject` (a `MetaEvaluator` is one): reports sit below the facade and never import it.
"""

from meta_evaluator.reports.report import ReportedProject, load_scores, write_report

__all__ = ["ReportedProject", "load_scores", "write_report"]
