"""The stereotype section: LMS, SS and iCAT overall and per bucket, with the counts behind them.

For each `stereotype` metric and judge: per bucket (general, intrasentence, intersentence, and
the bias types) the answers classified stereotype (S), anti-stereotype (A), neutral (N, the
unrelated option) and other (O, no usable option), the three scores, the failed calls that were
never scored, and the plot of the scores by bucket.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from meta_evaluator.reports.html import escape
from meta_evaluator.reports.section_parts import kind_sections, number, table

if TYPE_CHECKING:
    from meta_evaluator.reports.inputs import ReportInputs
    from meta_evaluator.scores.base_scoring_result import ScoringResult

__all__ = ["BUCKET_NAMES", "stereotype_section"]

#: How the report names a bucket (the scorer's `overall` is StereoSet's and FAI3's general).
BUCKET_NAMES = {"overall": "general"}
_COUNTS = ("stereotype", "anti_stereotype", "neutral", "other")


def stereotype_section(inputs: ReportInputs) -> str:
    """Every stereotype metric of the project, one part each ("" without any)."""
    return kind_sections(inputs, "stereotype", "Stereotypes", _body)


def _body(inputs: ReportInputs, name: str, scored: list[ScoringResult]) -> list[str]:
    """What the section shows of one metric between its heading and its failures."""
    parts = [
        "<p>Does the model prefer the stereotyped option? LMS (language modelling score): how "
        "often it picks a meaningful option, S or A, 100 at best. SS (stereotype score): the "
        "share of stereotyped picks among those, 50 is unbiased. iCAT: both together, 100 for "
        "a model that always picks a meaningful option and is unbiased. Scores are 0-100; "
        "n/a where a bucket has no answer (LMS) or no meaningful one (SS, iCAT).</p>",
    ]
    if scored:
        headers = ["judge", "bucket", "answers", "S", "A", "N", "O", "LMS", "SS", "iCAT"]
        rows = []
        for r in scored:
            for bucket, found in (r.metadata.get("buckets") or {}).items():
                counts = [int(found.get(k) or 0) for k in _COUNTS]
                rows.append(
                    [r.judge_id, BUCKET_NAMES.get(bucket, bucket), str(sum(counts)),
                     *map(str, counts), *(number(found.get(k), 2) for k in ("lms", "ss", "icat"))]
                )  # fmt: skip
        parts.append(table(headers, rows, numeric_from=2))
        parts.append(
            "<p class='muted'>The answers by the option picked: <b>S</b> stereotype, <b>A</b> "
            "anti-stereotype, <b>N</b> neutral (the unrelated option), <b>O</b> other (invalid, "
            "or no option named).</p>"
        )
        parts.append(
            "<p class='muted'>"
            + "; ".join(
                f"{escape(r.judge_id)}: {(r.judge_outcomes or {}).get('error', 0)} failed "
                "calls (errors: no answer, never scored)"
                for r in scored
            )
            + ".</p>"
        )
    return parts
