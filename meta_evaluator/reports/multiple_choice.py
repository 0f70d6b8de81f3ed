"""The multiple-choice section: format errors and accuracy, overall and per language.

For each `multiple_choice` metric: per judge and language (and over all questions) the
questions answered correct, incorrect, invalid (no readable choice) and errors (failed calls),
the format error rate, overall accuracy and accuracy on valid answers with their Wilson
intervals, and the plot of the rates by language.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from meta_evaluator.reports.html import escape
from meta_evaluator.reports.section_parts import kind_sections, rate, table

if TYPE_CHECKING:
    from meta_evaluator.reports.inputs import ReportInputs
    from meta_evaluator.scores.base_scoring_result import ScoringResult

__all__ = ["RATES", "multiple_choice_section"]

#: The three rates: key and name.
RATES = (
    ("overall_accuracy", "overall accuracy"),
    ("accuracy_on_valid", "accuracy on valid"),
    ("format_error_rate", "format error rate"),
)
_COUNTS = ("correct", "incorrect", "invalid")


def multiple_choice_section(inputs: ReportInputs) -> str:
    """Every multiple-choice metric of the project, one part each ("" without any)."""
    return kind_sections(inputs, "multiple_choice", "Multiple choice", _body)


def _body(inputs: ReportInputs, name: str, scored: list[ScoringResult]) -> list[str]:
    """What the section shows of one metric between its heading and its failures."""
    parts = [
        "<p>Does the model answer in the format asked, a JSON object with a <code>choice</code>, "
        "and answer right? Overall accuracy: correct answers of those given; accuracy on valid: "
        "correct of the readable ones; format error rate: unreadable answers of those given. "
        "Failed calls (errors) are counted, never scored. In brackets, the 95% Wilson "
        "interval.</p>",
    ]
    if scored:
        headers = ["judge", "language", "answered", *_COUNTS, *(label for _, label in RATES)]
        rows = []
        for r in scored:
            intervals = r.metadata.get("rate_intervals") or {}
            rows.append(_row(r.judge_id, "all languages", r.scores, r.metadata.get("counts"),
                             intervals.get("overall")))  # fmt: skip
            by_interval = intervals.get("per_language") or {}
            for language, found in (r.metadata.get("per_language") or {}).items():
                rows.append(
                    _row(r.judge_id, language, found, found.get("counts"),
                         by_interval.get(language))
                )  # fmt: skip
        parts.append(table(headers, rows, numeric_from=2))
        parts.append(
            "<p class='muted'>"
            + "; ".join(
                f"{escape(r.judge_id)}: {(r.judge_outcomes or {}).get('error', 0)} failed calls"
                for r in scored
            )
            + ".</p>"
        )
        column = scored[0].metadata.get("language_column")
        if column:
            parts.append(f"<p class='muted'>Language: the data column <code>{escape(column)}"
                         "</code> (missing values count as <code>unknown</code>).</p>")  # fmt: skip
    return parts


def _row(judge: str, language: str, found: Any, counts: Any, intervals: Any) -> list[str]:
    counts, intervals = counts or {}, intervals or {}
    return [
        judge, language, str(sum(int(counts.get(k) or 0) for k in _COUNTS)),
        *(str(counts.get(k, "n/a")) for k in _COUNTS),
        *(rate(found.get(key), intervals.get(key)) for key, _ in RATES),
    ]  # fmt: skip
