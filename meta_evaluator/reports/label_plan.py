"""The report's section on the label plan: how many human labels the alt-test needs.

`meta-evaluator plan-labels` (`MetaEvaluator.plan_labels`) saves `reports/label_plan.json` and
its plot; this section reads them itself (they are not in `ReportInputs`) and shows the design
chosen (or why none reaches the power), the grid of power and kappa width, and the plot.
"""

from __future__ import annotations

from meta_evaluator.reports.html import escape
from meta_evaluator.reports.inputs import ReportInputs
from meta_evaluator.reports.section_parts import embedded_figure, table
from meta_evaluator.scores.label_plan import (
    LABEL_PLAN_FILE,
    LABEL_PLAN_PLOT,
    LabelPlanReport,
    label_plan_rows,
)

__all__ = ["label_plan_section"]


def label_plan_section(inputs: ReportInputs) -> str:
    """The saved label plan ("" without one).

    Raises:
        StateError: `reports/label_plan.json` is not a label plan.
        StorageError: It cannot be read.
    """
    folder = inputs.project.paths.reports_dir
    saved = folder / LABEL_PLAN_FILE
    if not saved.is_file():
        return ""
    r = LabelPlanReport.load(saved)
    eps = r.alt_test.epsilon
    parts = [
        "<h2>Label plan</h2>",
        "<p class='muted'>Saved by <code>meta-evaluator plan-labels</code>: the alt-test's power "
        "(the share of simulated studies it passes) for each design of items x annotators, "
        "resampled from the project's labels as a pilot; in brackets the width of the central "
        "95% range of Cohen's kappa over those studies.</p>",
        f"<p>Judge {escape(r.judge_id)}, task {escape(r.task)}; epsilon {eps:g} "
        f"({escape(r.alt_test.source)}), target power {r.target_power:g}, {r.simulations} "
        f"studies per design; pilot of {r.pilot_items} rows and {r.pilot_annotators} "
        f"annotators.</p>",
    ]
    if r.chosen is not None:
        c = r.chosen
        parts.append(
            f"<p><span class='pass'>{c.items:,} items x {c.annotators} annotators = "
            f"{c.labels:,} human labels</span> is the smallest design reaching the power "
            f"({c.power:.2f}).</p>"
        )
    else:
        parts.append(
            f"<p><span class='fail'>No design reaches power {r.target_power:g}</span>: "
            f"{escape(r.reason)}</p>"
        )
    by_annotators = label_plan_rows(r)
    cell = {(d.items, d.annotators): d for d in r.designs}
    rows = []
    for n in sorted({d.items for d in r.designs}):
        row: list[str] = [f"{n:,}"]
        for m in by_annotators:
            d = cell.get((n, m))
            width = "" if d is None or d.kappa_width is None else f" ({d.kappa_width:.2f})"
            chosen = " ✓" if d is not None and d == r.chosen else ""
            row.append("" if d is None else f"{d.power:.2f}{width}{chosen}")
        rows.append(row)
    parts.append(table(["items", *[f"{m} annotators" for m in by_annotators]], rows))
    plot = folder / LABEL_PLAN_PLOT
    if plot.is_file():
        parts.append(embedded_figure(plot, "Power against items, a line per annotator count"))
    return "".join(parts)
