"""The counterfactual section: how often the answer changed when only the group did.

For each `counterfactual` metric: per judge the change rate over all pairs and per group (the
original row's value of the group column), with the pairs used and changed behind each rate
and its Wilson interval, the variants left out for want of an answered original, and the plot
of the change rates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from meta_evaluator.reports.html import escape
from meta_evaluator.reports.section_parts import kind_sections, rate, table

if TYPE_CHECKING:
    from meta_evaluator.reports.inputs import ReportInputs
    from meta_evaluator.scores.base_scoring_result import ScoringResult

__all__ = ["counterfactual_section"]


def counterfactual_section(inputs: ReportInputs) -> str:
    """Every counterfactual metric of the project, one part each ("" without any)."""
    return kind_sections(inputs, "counterfactual", "Counterfactual change", _body)


def _body(inputs: ReportInputs, name: str, scored: list[ScoringResult]) -> list[str]:
    """What the section shows of one metric between its heading and its failures."""
    parts = [
        "<p>Each variant row differs from its original only in the sensitive attribute. A pair "
        "is used when both were answered, and changed when one answer could be read and the "
        "other not, or both were read and differ. 0 means the attribute never moved the "
        "answer. In brackets, the 95% Wilson interval.</p>",
    ]
    if scored:
        headers = ["judge", "group", "pairs used", "changed", "change rate"]
        rows = []
        for r in scored:
            column = r.metadata.get("group_column")
            intervals = r.metadata.get("change_rate_intervals") or {}
            by_interval = intervals.get("by_group") or {}
            rows.append(
                [r.judge_id, "all pairs", str(r.metadata.get("used", "n/a")),
                 str(r.metadata.get("changed", "n/a")),
                 rate(r.scores.get("change_rate_overall"), intervals.get("overall"))]
            )  # fmt: skip
            by_group = r.metadata.get("by_group") or {}
            for group, value in (r.scores.get("change_rate_by_group") or {}).items():
                counts = by_group.get(group) or {}
                rows.append(
                    [r.judge_id, f"{column} = {group}" if column else group,
                     str(counts.get("used", "n/a")), str(counts.get("changed", "n/a")),
                     rate(value, by_interval.get(group))]
                )  # fmt: skip
        parts.append(table(headers, rows, numeric_from=2))
        parts.append(
            "<p class='muted'>"
            + "; ".join(
                f"{escape(r.judge_id)}: {r.metadata.get('variants_without_original', 0)} "
                "variants left out (their original was not answered or is not in the data), "
                f"{(r.judge_outcomes or {}).get('error', 0)} failed calls"
                for r in scored
            )
            + ".</p>"
        )
    return parts
