"""The fairness section: the eight metrics, per sensitive column, and every group's rates.

For each `fairness` metric: what was scored (positive label, reference, counts), the eight
scores with each column's own value (`per_variable`), how each column was split
(`thresholds_used`), each group's size, selection rate, TPR and FPR with their Wilson
intervals (`group_rates`), the spreads over a text column's groups (`multigroup`, with the
`agg` and `method` they were computed with), and the plot of the group rates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from meta_evaluator.reports.html import escape
from meta_evaluator.reports.section_parts import kind_sections, number, rate, table

if TYPE_CHECKING:
    from meta_evaluator.reports.inputs import ReportInputs
    from meta_evaluator.scores.base_scoring_result import ScoringResult

__all__ = ["METRICS", "fairness_section"]

#: The eight scores: key, name, the fair (or best) value, and what it compares.
METRICS = (
    ("statistical_parity_difference", "statistical parity difference", "0",
     "selection rate of U minus P"),
    ("disparate_impact", "disparate impact", "1", "selection rate of U over P"),
    ("average_odds_difference", "average odds difference", "0",
     "mean of the FPR and TPR differences, U minus P"),
    ("average_abs_odds_difference", "average absolute odds difference", "0",
     "mean of the absolute FPR and TPR differences"),
    ("equal_opportunity_difference", "equal opportunity difference", "0", "TPR of U minus P"),
    ("accuracy", "accuracy", "1", "(TP + TN) / n, over all rows"),
    ("precision", "precision", "1", "TP / (TP + FP), over all rows"),
    ("recall", "recall", "1", "TP / (TP + FN), over all rows"),
)  # fmt: skip
_PER_VARIABLE = {key for key, *_ in METRICS[:5]}
#: The spreads over the groups of a text column (fairlearn's view).
SPREADS = (
    ("demographic_parity_difference", "demographic parity difference"),
    ("demographic_parity_ratio", "demographic parity ratio"),
    ("equalized_odds_difference", "equalized odds difference"),
    ("equalized_odds_ratio", "equalized odds ratio"),
    ("equal_opportunity_difference", "equal opportunity difference"),
    ("equal_opportunity_ratio", "equal opportunity ratio"),
)
#: How each option of the spreads reads (fairlearn's `agg` and `method`).
_OPTIONS = {
    "worst_case": "equalized odds takes the worse of its TPR and FPR parts",
    "mean": "equalized odds takes the mean of its TPR and FPR parts",
    "between_groups": "demographic parity compares the groups' selection rates with each other",
    "to_overall": "demographic parity compares each group's selection rate with that of all rows",
}


def fairness_section(inputs: ReportInputs) -> str:
    """Every fairness metric of the project, one part each ("" without any)."""
    return kind_sections(inputs, "fairness", "Fairness", _body)


def _body(inputs: ReportInputs, name: str, scored: list[ScoringResult]) -> list[str]:
    """What the section shows of one metric between its heading and its failures."""
    parts: list[str] = []
    if scored:
        first = scored[0].metadata
        positive = escape(first.get("positive_label"))
        parts.append(
            f"<p>Is the positive prediction, the model answering <code>{positive}</code> on "
            f"<code>{escape(scored[0].task_name)}</code> (the label the metric counts as "
            "positive: its <code>positive_label</code>), given as often, and as rightly, to "
            "each group? U is a column's unprivileged group, P its privileged one; differences "
            "of 0 and a disparate impact of 1 are fair. Reference (the right answer): "
            f"{escape(first.get('reference'))}.{_question(inputs)}</p>"
        )
        parts.append(_counts(scored))
        parts.append("<h3>The eight metrics</h3>")
        parts.append(_metrics_table(scored))
        parts.append("<h3>Each group's rates</h3>")
        parts.append(
            "<p class='muted'>Selection rate: share of the group predicted positive; TPR: of "
            "its gold positives; FPR: of its gold negatives. In brackets, the 95% Wilson "
            "interval.</p>"
        )
        parts.append(_groups_table(scored))
        parts.append(_spreads(scored))
    return parts


def _question(inputs: ReportInputs) -> str:
    """` The task asks: "..."`: what a label answers, when the task says it (not the default)."""
    task = inputs.eval_task
    if task is None:
        return ""
    default = type(task).model_fields["annotation_prompt"].default
    if not task.annotation_prompt or task.annotation_prompt == default:
        return ""
    return f" The task asks: “{escape(task.annotation_prompt)}”"


def _counts(results: list[ScoringResult]) -> str:
    lines = []
    for r in results:
        counts = r.metadata.get("counts") or {}
        errors = (r.judge_outcomes or {}).get("error", 0)
        variants = counts.get("counterfactual_variants") or 0
        twins = (
            f" {variants} counterfactual variant row(s) (made-up twins of the original rows) "
            "left out: group fairness is about the original rows."
            if variants
            else ""
        )
        lines.append(
            f"<li>{escape(r.judge_id)}: {counts.get('scored', r.num_comparisons)} valid answers "
            f"scored; {counts.get('invalid', 0)} invalid and {counts.get('no_reference', 0)} "
            f"without a reference left out; {errors} failed calls (never scored).{twins}</li>"
        )
    return f"<ul class='muted'>{''.join(lines)}</ul>"


def _columns(result: ScoringResult) -> list[str]:
    """The numeric sensitive columns split into P and U (those with per-variable values)."""
    per_variable = result.metadata.get("per_variable") or {}
    return list(per_variable.get("statistical_parity_difference") or {})


def _metrics_table(results: list[ScoringResult]) -> str:
    """Rows: the eight metrics; columns: each judge's score, then its value per column."""
    headers = ["metric", "what it compares", "fair (best)"]
    for r in results:
        columns = _columns(r)
        if len(columns) > 1:
            headers += [f"{r.judge_id}: mean", *(f"{r.judge_id}: {c}" for c in columns)]
        else:
            headers.append(f"{r.judge_id} ({columns[0]})" if columns else r.judge_id)
    rows = []
    for key, label, fair, meaning in METRICS:
        row = [label, meaning, fair]
        for r in results:
            row.append(number(r.scores.get(key)))
            columns = _columns(r)
            if len(columns) > 1:
                per_variable = (r.metadata.get("per_variable") or {}).get(key) or {}
                row += [
                    number(per_variable.get(c)) if key in _PER_VARIABLE else "" for c in columns
                ]
        rows.append(row)
    return table(headers, rows, numeric_from=2)


def _groups_table(results: list[ScoringResult]) -> str:
    headers = [
        "judge", "column", "group", "rows", "predicted positive", "selection rate",
        "gold positive", "TPR", "gold negative", "FPR",
    ]  # fmt: skip
    rows = []
    for r in results:
        thresholds = r.metadata.get("thresholds_used") or {}
        for column, groups in (r.metadata.get("group_rates") or {}).items():
            for group, g in groups.items():
                rows.append(
                    [
                        r.judge_id, column, _group(column, group, thresholds.get(column)),
                        str(g["size"]), str(g["selected"]),
                        rate(g["selection_rate"], g["selection_rate_interval"]),
                        _count(g["positives"]), rate(g["tpr"], g["tpr_interval"]),
                        _count(g["negatives"]), rate(g["fpr"], g["fpr_interval"]),
                    ]
                )  # fmt: skip
    if not rows:
        return "<p class='muted'>No group rates saved: score again to add them.</p>"
    return table(headers, rows, numeric_from=3)


def _group(column: str, group: str, rule: Any) -> str:
    """`privileged (male > 0.5)`; a text column's group as it is."""
    if group not in ("privileged", "unprivileged") or not rule or rule[0] is None:
        return group
    threshold, greater = rule[0], bool(rule[1])
    if group == "privileged":
        return f"privileged ({column} {'>' if greater else '<'} {threshold:g})"
    return f"unprivileged ({column} {'≤' if greater else '≥'} {threshold:g} or missing)"


def _count(value: Any) -> str:
    return "n/a" if value is None else str(value)


def _spreads(results: list[ScoringResult]) -> str:
    rows = [
        [
            r.judge_id,
            column,
            str(len(found.get("per_group") or {})),
            *(number(found.get(key)) for key, _ in SPREADS),
        ]
        for r in results
        for column, found in (r.metadata.get("multigroup") or {}).items()
    ]
    if not rows:
        return ""
    # results saved before the options existed were computed with fairlearn's defaults
    options = (results[0].metadata.get("multigroup_options") or {}) if results else {}
    agg = str(options.get("agg", "worst_case"))
    method = str(options.get("method", "between_groups"))
    parity, odds = _OPTIONS.get(method, f"method {method}"), _OPTIONS.get(agg, f"agg {agg}")
    return (
        "<h3>Spreads over a column's groups</h3><p class='muted'>For columns of text or with "
        "more than two values, one group per value: the largest gap (difference, 0 is fair) or "
        "the smallest ratio (1 is fair) between the groups' rates. With few rows per group the "
        "gaps are large by chance alone.</p>"
        f"<p class='muted'>As fairlearn defines them: {escape(parity)} "
        f"(<code>method={escape(method)}</code>); {escape(odds)} "
        f"(<code>agg={escape(agg)}</code>). A group "
        "without gold positives (negatives) has no TPR (FPR) and is left out of that rate's "
        "spread.</p>"
        + table(
            ["judge", "column", "groups", *(label for _, label in SPREADS)], rows, numeric_from=2
        )
    )
