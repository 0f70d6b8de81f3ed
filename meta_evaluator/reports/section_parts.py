"""What the sections of each kind of project share: their results, numbers with intervals, plots.

A kind's section (fairness, stereotype, counterfactual, multiple choice, preference) shows every
score and breakdown its scorer saved, as the scorer saved it: nothing is computed here but the
text. Its plots sit beside its tables, so the page's closing Plots section leaves them out
(`shown_by_kind`).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from meta_evaluator._util import finite_number
from meta_evaluator.reports.html import escape, html_table

if TYPE_CHECKING:
    from meta_evaluator.reports.inputs import ReportInputs
    from meta_evaluator.scores.base_scoring_result import ScoringResult

__all__ = [
    "KIND_SCORERS",
    "embedded_figure",
    "failures",
    "figures",
    "kind_sections",
    "metrics_of",
    "number",
    "rate",
    "shown_by_kind",
    "table",
]

#: The scorers with a section of their own (and whose plots it shows).
KIND_SCORERS = frozenset(
    {"preference", "fairness", "counterfactual", "stereotype", "multiple_choice"}
)


def metrics_of(inputs: ReportInputs, scorer: str) -> list[tuple[str, list[ScoringResult]]]:
    """The metrics scored by `scorer`: (metric name, results by judge), in the page's order."""
    prefix = f"{scorer}/"
    return [
        (key[len(prefix) :], results)
        for key, results in inputs.scores.items()
        if key.startswith(prefix) and results
    ]


def kind_sections(
    inputs: ReportInputs,
    scorer: str,
    title: str,
    body: Callable[[ReportInputs, str, list[ScoringResult]], list[str]],
    *,
    plots_in_body: bool = False,
) -> str:
    """Every metric of `scorer`, one section each ("" without any).

    A section is the heading `<title>: <metric>`, what `body(inputs, metric, scored)` shows of
    the results scored without error (an empty list: none), the judges that failed, and the
    metric's plots, last unless `plots_in_body` (then `body` places them).
    """
    sections = []
    for name, results in metrics_of(inputs, scorer):
        scored = [r for r in results if r.error is None]
        parts = [
            f"<section class='kind {scorer}'><h2>{escape(title)}: {escape(name)}</h2>",
            *body(inputs, name, scored),
            failures(results),
        ]
        if not plots_in_body:
            parts.append(figures(inputs, scorer, name))
        parts.append("</section>")
        sections.append("".join(parts))
    return "".join(sections)


def number(value: Any, digits: int = 3) -> str:
    """A value as the tables show it: `digits` decimals, "n/a" when undefined (None)."""
    if value is None:
        return "n/a"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if not finite_number(value):
        return str(value)
    return f"{value:.{digits}f}"


def rate(value: Any, interval: Any, digits: int = 3) -> str:
    """`0.596 [0.467, 0.714]`: a value with its interval when there is one."""
    text = number(value, digits)
    if (
        value is not None
        and isinstance(interval, list | tuple)
        and len(interval) == 2
        and all(finite_number(x) for x in interval)
    ):
        text += f" [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"
    return text


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, numeric_from: int = 1) -> str:
    """An HTML table of rows of text; the columns from `numeric_from` on align right."""
    return html_table(
        headers,
        [dict(zip(headers, row, strict=True)) for row in rows],
        numeric=headers[numeric_from:],
    )


def failures(results: Sequence[ScoringResult]) -> str:
    """One line per judge this metric could not score, with why ("" when all were)."""
    lines = [
        f"<li>{escape(r.judge_id)}: <span class='err'>not scored: {escape(r.error)}</span></li>"
        for r in results
        if r.error is not None
    ]
    return f"<ul>{''.join(lines)}</ul>" if lines else ""


def figures(inputs: ReportInputs, scorer: str, metric: str) -> str:
    """The plots saved for one metric, embedded (no file is linked: the page stands alone)."""
    parts = []
    for plot in inputs.plots:
        if (plot.parent.parent.name, plot.parent.name) != (scorer, metric):
            continue
        parts.append(embedded_figure(plot, f"{scorer} / {metric} / {plot.name}"))
    return "".join(parts)


def shown_by_kind(plot: Path) -> bool:
    """Whether a kind's section shows this plot (saved as `scores/<scorer>/<metric>/x.png`)."""
    return plot.parent.parent.name in KIND_SCORERS


def embedded_figure(path: Path, caption: str) -> str:
    """A PNG file as a figure inside the page (base64: no file is linked), with its caption."""
    encoded = base64.b64encode(path.read_bytes()).decode("ascii")
    return (
        f"<figure><img alt='{escape(caption)}' src='data:image/png;base64,{encoded}'>"
        f"<figcaption>{escape(caption)}</figcaption></figure>"
    )
