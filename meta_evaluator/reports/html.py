"""HTML pieces every report section uses: escaping, numbers, tables, the page's style.

Sections write plain HTML (no script, nothing loaded from the network), so the report is one
self-contained file that opens anywhere.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["STYLE", "breakable", "cell", "escape", "html_table", "markdown_table"]

#: The report page's style sheet (sections use the classes num, muted, pass, fail, err, warn;
#: stale frames the warning that scores are out of date).
STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:72rem;
color:#1d2433;line-height:1.45;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2.2rem;
border-bottom:1px solid #d8dde6;padding-bottom:.3rem}h3{font-size:1.02rem;margin-top:1.4rem}
.muted{color:#5b6475;font-size:.9rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.9rem;width:100%}
th,td{border:1px solid #d8dde6;padding:.35rem .55rem;text-align:left;vertical-align:top}
td{overflow-wrap:break-word}
th{background:#f3f5f9}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.pass{color:#1a7f37;font-weight:600}.fail{color:#b42318;font-weight:600}.err{color:#b42318}
.warn{color:#9a6700;font-weight:600}
.stale{border:2px solid #9a6700;background:#fff8e6;border-radius:4px;padding:0 1rem;margin:1.2rem 0}
.stale h2{color:#9a6700;border-bottom:none;margin-top:.8rem}
figure{margin:1rem 0}figure img{max-width:100%;border:1px solid #e3e7ee}
figcaption{font-size:.85rem;color:#5b6475}
section.kind td.num{white-space:nowrap}
"""


def escape(value: Any) -> str:
    """`value` as text safe inside HTML (None is empty)."""
    return "" if value is None else html.escape(str(value), quote=True)


def breakable(value: Any) -> str:
    """`value` escaped, with line-break chances after `/` and `_`.

    A long metric name (`classification_accuracy/classification_accuracy_1tasks_22e76eaf_single`)
    then wraps there instead of widening its table past the page.
    """
    text = escape(value)
    for mark in ("/", "_"):
        text = text.replace(mark, f"{mark}<wbr>")
    return text


def cell(value: Any) -> str:
    """A table cell's text: floats to four places (thousands grouped), None empty."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if abs(value) < 1000 else f"{value:,.0f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def html_table(
    columns: Sequence[str],
    rows: Sequence[Mapping[str, Any]],
    *,
    numeric: Sequence[str] = (),
    headers: Mapping[str, str] | None = None,
) -> str:
    """An HTML table of `rows` (dicts) over `columns`; `numeric` columns align right.

    `headers` renames columns in the header row. Every value is escaped; text may wrap after
    `/` and `_` (`breakable`), and anywhere as a last resort, so the table fits the page.
    """
    names = headers or {}
    right = set(numeric)
    head = "".join(
        f"<th class='num'>{escape(names.get(c, c))}</th>" if c in right
        else f"<th>{escape(names.get(c, c))}</th>"
        for c in columns
    )  # fmt: skip
    body = [
        "<tr>" + "".join(
            f"<td class='num'>{escape(cell(row.get(c)))}</td>" if c in right
            else f"<td>{breakable(cell(row.get(c)))}</td>"
            for c in columns
        ) + "</tr>"
        for row in rows
    ]  # fmt: skip
    return f"<table><tr>{head}</tr>" + "".join(body) + "</table>"


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """A Markdown table of `rows` over `columns` ("(nothing yet)" without rows)."""
    if not rows:
        return "(nothing yet)\n"
    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(cell(row.get(c)) for c in columns) + " |")
    return "\n".join(lines) + "\n"
