"""Reports: one self-contained `report.html` (plots embedded) and CSV/Markdown tables.

`write_report(evaluator)` reads what the project holds (judge results, annotations, scores and
their plots) into `ReportInputs` and writes `reports/report.html` (its sections, in
`sections.SECTIONS`), `reports/scores.csv`, `reports/scores.md`, `reports/judges.csv` and
`reports/judges.md`. Nothing is computed anew: the report shows the scores `compare_async` (or
`meta-evaluator score`) saved. The evaluator is any `ReportedProject` (a `MetaEvaluator` is
one): reports sit below the facade and never import it. The report names the project by its
folder's name, never by a path of the machine that made it, so it can be committed and shared.
`judge_rows` gives the judges table's figures (counts, tokens, latency, cost by `prices.yaml`)
to whoever else shows them (`meta-evaluator run --json`); `main_score` and `task_spread` the
score a table shows for a result and, for a mean over tasks, its lowest and highest task
(`meta-evaluator score`).
"""

from meta_evaluator.reports._tables import TaskSpread, judge_rows, main_score, task_spread
from meta_evaluator.reports.inputs import ReportedProject, ReportInputs
from meta_evaluator.reports.report import load_scores, read_report_inputs, write_report
from meta_evaluator.reports.score_report import ScoreReport

__all__ = [
    "ReportInputs",
    "ReportedProject",
    "ScoreReport",
    "TaskSpread",
    "judge_rows",
    "load_scores",
    "main_score",
    "read_report_inputs",
    "task_spread",
    "write_report",
]
