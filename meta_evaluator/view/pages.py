"""The viewer's HTML: server-rendered, every value escaped, no script.

Each page is a tab (`TABS`) or a page under one (a row belongs to "Rows"). Another section is
one more `Tab` here and one more route in `app.py` rendering its body inside `layout`.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from meta_evaluator.results.row_table import FLAGS
from meta_evaluator.view.query import MAX_PAGE_SIZE, SORTS, RowPage, RowQuery

__all__ = [
    "TABS",
    "ListView",
    "Tab",
    "layout",
    "list_page",
    "message_page",
    "row_page",
    "runs_page",
    "summary_page",
]


@dataclass(frozen=True)
class Tab:
    """A section of the viewer: its address and its name in the header."""

    path: str
    name: str


#: The viewer's sections, in the header's order.
TABS: tuple[Tab, ...] = (Tab("/", "Rows"), Tab("/runs", "Runs"), Tab("/summary", "Summary"))

#: Characters of a data value shown in a list cell (the row page shows all).
CELL_CHARS = 220

_FLAG_NAMES = {
    "disagree": "judge ≠ humans",
    "humans_split": "humans split",
    "invalid": "invalid",
    "error": "error",
}

_STYLE = """
*{box-sizing:border-box}body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;
color:#1d2433;background:#f6f7fa;line-height:1.45;font-size:15px}
header{background:#fff;border-bottom:1px solid #dde2ea;padding:.55rem 1.5rem;display:flex;
gap:1.2rem;align-items:center;flex-wrap:wrap}header b{font-size:1.05rem}
nav a{padding:.35rem .8rem;border-radius:6px;text-decoration:none;color:#3a4356}
nav a.on{background:#e8eef8;color:#1d3f7a;font-weight:600}
main{max-width:90rem;margin:1rem auto;padding:0 1rem}
.card{background:#fff;border:1px solid #dde2ea;border-radius:8px;padding:.9rem 1.1rem;margin:.8rem 0}
h1{font-size:1.35rem;margin:.4rem 0}h2{font-size:1.1rem;margin:.2rem 0 .6rem}
h3{font-size:.95rem;margin:.8rem 0 .3rem}
.muted{color:#5b6475;font-size:.88rem}a{color:#2f5597}
form.filters{display:flex;flex-wrap:wrap;gap:.6rem 1rem;align-items:flex-end}
form.filters label{display:flex;flex-direction:column;font-size:.78rem;color:#5b6475;gap:.15rem}
select,input[type=search]{font:inherit;padding:.3rem .4rem;border:1px solid #c9d0db;border-radius:6px;
background:#fff;min-width:8rem}input[type=search]{min-width:16rem}
fieldset{border:0;padding:0;margin:0;display:flex;gap:.7rem;align-items:center}
fieldset label{flex-direction:row!important;align-items:center;gap:.25rem!important;font-size:.88rem!important;color:#1d2433!important}
button{font:inherit;padding:.35rem 1rem;border-radius:6px;border:1px solid #4c72b0;background:#4c72b0;
color:#fff;cursor:pointer}
.chips{display:flex;gap:.5rem;flex-wrap:wrap;margin:.3rem 0}
.chip{border:1px solid #c9d0db;border-radius:999px;padding:.15rem .7rem;text-decoration:none;
color:#1d2433;background:#fff;font-size:.88rem}.chip.on{background:#1d3f7a;color:#fff;border-color:#1d3f7a}
.top{display:flex;gap:0 1rem;flex-wrap:wrap;align-items:stretch}.top>.card{flex:0 1 auto}
.top>.card.flags{flex:1 1 20rem}.chips.column{flex-direction:column;align-items:flex-start}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{border-bottom:1px solid #e3e7ee;padding:.4rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f5f9;font-weight:600;font-size:.8rem;color:#3a4356}
table.matrix{width:auto}table.matrix td,table.matrix th{border:1px solid #dde2ea;text-align:center;min-width:3.5rem}
table.matrix td a{display:block;text-decoration:none;color:inherit;font-variant-numeric:tabular-nums}
table.matrix td.agree{background:#e6f4ea}table.matrix td.miss{background:#fdecea}
table.matrix td.empty{color:#b0b7c3}
.toward{color:#1a7f37;font-weight:600}.away{color:#b42318;font-weight:600}
.neither,.unrated{color:#5b6475}td.num{text-align:right;font-variant-numeric:tabular-nums}table.matrix td.on{outline:3px solid #1d3f7a;outline-offset:-3px}
td.text{max-width:28rem;white-space:pre-wrap;word-break:break-word}
.label{font-weight:600}.against{color:#b42318}.ok{color:#1a7f37}
.badge{display:inline-block;font-size:.72rem;border-radius:4px;padding:0 .35rem;margin:0 .2rem .2rem 0;
background:#eef1f6;color:#3a4356;white-space:nowrap}
.badge.disagree{background:#fdecea;color:#8a1c12}.badge.humans_split{background:#fff4d6;color:#7a5300}
.badge.invalid{background:#f1e8fb;color:#5b2a86}.badge.error{background:#fde2e1;color:#8a1c12}
.humans{font-size:.82rem;color:#5b6475}
.pager{display:flex;gap:.8rem;align-items:center;margin:.6rem 0}
pre{white-space:pre-wrap;word-break:break-word;font-family:inherit;margin:0;background:#fafbfc;
border:1px solid #eceff4;border-radius:6px;padding:.5rem .7rem}
pre.raw{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.82rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1rem;margin:0}dt{color:#5b6475;font-size:.85rem}
dd{margin:0}.error{background:#fdecea;border:1px solid #f5c2bd;color:#8a1c12;border-radius:6px;padding:.5rem .8rem}
code{background:#eef1f6;border-radius:4px;padding:0 .3rem}
"""


def _e(value: Any) -> str:
    """`value` as text safe in HTML content and quoted attributes (None is empty)."""
    return "" if value is None else html.escape(str(value), quote=True)


def _label(value: Any) -> str:
    """A label as shown: a list as its items joined, none as a dash."""
    if value is None:
        return "—"
    if isinstance(value, list):
        return "{" + ", ".join("—" if v is None else str(v) for v in value) + "}"
    return str(value)


def _cut(value: Any, limit: int = CELL_CHARS) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _href(path: str, params: Sequence[tuple[str, str]]) -> str:
    return path + ("?" + urlencode(params) if params else "")


def row_href(row_id: Any, query: RowQuery) -> str:
    """The row page of `row_id`, remembering the list it was opened from."""
    return _href(f"/rows/{quote(str(row_id), safe='')}", query.params())


def layout(project: str, title: str, active: str, body: str) -> str:
    """A whole page: the header with the tabs (`active` marked), then `body`."""
    tabs = "".join(
        f"<a href='{_e(t.path)}'{' class=on' if t.path == active else ''}>{_e(t.name)}</a>"
        for t in TABS
    )
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>"
        f"<header><b>Results: {_e(project)}</b><nav>{tabs}</nav></header>"
        f"<main>{body}</main></body></html>"
    )


def message_page(project: str, title: str, message: str, active: str = "/") -> str:
    """A page that says one thing (no judge results yet, a bad parameter, no such row)."""
    body = f"<div class='card'><h1>{_e(title)}</h1><p>{_e(message)}</p></div>"
    return layout(project, title, active, body)


@dataclass(frozen=True)
class ListView:
    """What the list page shows: the query, its page, the table's choices and counts."""

    project: str
    query: RowQuery
    page: RowPage
    judges: Sequence[str]
    tasks: Sequence[str]
    shown: Sequence[str]
    annotators: Sequence[str]
    rows: Sequence[dict[str, Any]]
    """The page's rows as the API gives them (`api.row_json`)."""
    counts: Mapping[str, int]
    confusion: Mapping[str, Any]
    """`api.confusion_json` of the judge and task."""
    judge_labels: Sequence[str]
    human_labels: Sequence[str]


def list_page(view: ListView) -> str:
    """Filters, flags with their counts, the confusion matrix and one page of rows."""
    query = view.query
    body = [
        _filters(view),
        f"<div class='top'>{_matrix(view)}{_chips(view)}</div>",
        f"<section class='card'>{_rows_table(view)}{_pager(view)}</section>",
    ]
    title = f"{view.project}: {query.judge} on {query.task}"
    return layout(view.project, title, "/", "".join(body))


def _select(name: str, label: str, options: Sequence[tuple[str, str]], chosen: str | None) -> str:
    items = "".join(
        f"<option value='{_e(value)}'{' selected' if value == (chosen or '') else ''}>"
        f"{_e(text)}</option>"
        for value, text in options
    )
    return f"<label>{_e(label)}<select name='{_e(name)}'>{items}</select></label>"


def _filters(view: ListView) -> str:
    query = view.query
    sorts = [(s, s.replace("_", " ")) for s in SORTS]
    sorts += [(f"-{s}", f"{s.replace('_', ' ')} (descending)") for s in SORTS]
    sizes = sorted({20, 50, 100, 200, MAX_PAGE_SIZE, query.page_size})
    flags = "".join(
        f"<label><input type='checkbox' name='flag' value='{f}'"
        f"{' checked' if f in query.flags else ''}>{_e(_FLAG_NAMES[f])}</label>"
        for f in FLAGS
    )
    parts = [
        _select("judge", "judge", [(j, j) for j in view.judges], query.judge),
        _select("task", "task", [(t, t) for t in view.tasks], query.task),
        _select(
            "judge_label",
            "judge's label",
            [("", "any"), *((k, _key_text(k)) for k in view.judge_labels)],
            query.judge_label,
        ),
        _select(
            "human_label",
            "humans' majority",
            [("", "any"), *((k, _key_text(k)) for k in view.human_labels)],
            query.human_label,
        ),
        f"<label>search<input type='search' name='q' value='{_e(query.q)}' "
        "placeholder='text, label or answer'></label>",
        _select("sort", "sort by", sorts, query.sort),
        _select(
            "page_size", "rows per page", [(str(n), str(n)) for n in sizes], str(query.page_size)
        ),
        f"<fieldset><legend class='muted'>only rows that are</legend>{flags}</fieldset>",
        "<button type='submit'>Show</button>",
        f"<a href='{_e(_href('/', [('judge', query.judge), ('task', query.task)]))}'>clear</a>",
    ]
    return f"<form class='filters card' method='get' action='/'>{''.join(parts)}</form>"


def _key_text(key: str) -> str:
    """A label's text as a filter shows it (a multi-label list's JSON as a set)."""
    if key.startswith("[") and key.endswith("]"):
        try:
            return _label(json.loads(key))
        except ValueError:
            return key
    return key


def _chips(view: ListView) -> str:
    query = view.query
    chips = []
    for flag in FLAGS:
        on = flag in query.flags
        flags = tuple(f for f in query.flags if f != flag) if on else (*query.flags, flag)
        href = _href("/", query.params(flags=flags, page=1))
        chips.append(
            f"<a class='chip{' on' if on else ''}' href='{_e(href)}' data-flag='{flag}'>"
            f"{_e(_FLAG_NAMES[flag])} <b>{view.counts.get(flag, 0):,}</b></a>"
        )
    total = view.counts.get("rows", 0)
    return (
        f"<section class='card flags'><h2>Flags</h2><p class='muted'>{total:,} rows of "
        f"{_e(query.judge)} on {_e(query.task)}. A flag lists the rows it marks; "
        f"clicked again, it is dropped.</p><div class='chips column'>{''.join(chips)}</div></section>"
    )


def _matrix(view: ListView) -> str:
    query, matrix = view.query, view.confusion
    labels: list[str] = list(matrix["labels"])
    cells = {(c["judge_label"], c["human_label"]): c["rows"] for c in matrix["cells"]}
    if not labels:
        inner = "<p class='muted'>No row has both a judge's label and a human label.</p>"
    else:
        head = "".join(f"<th scope='col'>{_e(_key_text(b))}</th>" for b in labels)
        lines = []
        for a in labels:
            tds = []
            for b in labels:
                n = cells.get((a, b), 0)
                kind = "agree" if a == b else "miss"
                kind = "empty" if n == 0 else kind
                on = query.judge_label == a and query.human_label == b
                href = _href(
                    "/",
                    query.params(flags=(), q=None, page=1, judge_label=a, human_label=b),
                )
                tds.append(
                    f"<td class='{kind}{' on' if on else ''}'><a href='{_e(href)}' "
                    f"data-judge='{_e(a)}' data-human='{_e(b)}' "
                    f"title='judge: {_e(_key_text(a))}; humans: {_e(_key_text(b))}'>{n:,}</a></td>"
                )
            lines.append(f"<tr><th scope='row'>{_e(_key_text(a))}</th>{''.join(tds)}</tr>")
        inner = (
            f"<table class='matrix'><tr><th rowspan=2 class='muted'>judge's label</th>"
            f"<th colspan={len(labels)} class='muted'>humans' majority</th></tr>"
            f"<tr>{head}</tr>{''.join(lines)}</table>"
        )
    missing = (
        f"{matrix['rows_compared']:,} rows compared; {matrix['rows_without_judge_label']:,} "
        f"without a judge's label, {matrix['rows_without_human_label']:,} without a human label."
    )
    return (
        "<section class='card'><h2>Judge against the humans' majority</h2>"
        f"{inner}<p class='muted'>{missing} A cell lists its rows.</p></section>"
    )


def _rows_table(view: ListView) -> str:
    query, page = view.query, view.page
    if page.total == 0:
        return "<h2>Rows</h2><p class='muted' id='nothing'>No row matches.</p>"
    first = (page.page - 1) * page.page_size + 1
    last = first + len(view.rows) - 1
    shown = (
        f"rows {first:,}–{last:,} of {page.total:,}" if view.rows
        else f"no rows on page {page.page:,} of {page.pages:,} ({page.total:,} rows)"
    )  # fmt: skip
    head = "".join(f"<th>{_e(c)}</th>" for c in view.shown)
    lines = []
    for row in view.rows:
        humans = ", ".join(
            f"{_e(a)}: {_e(_label(v))}" for a, v in row["human_labels"].items() if v is not None
        )
        against = row["humans_against"]
        verdict = (
            f"<span class='against'>{against} of {row['humans_labelled']} against</span>"
            if against else ""
        )  # fmt: skip
        flags = "".join(
            f"<span class='badge {f}'>{_e(_FLAG_NAMES[f])}</span>" for f in row["flags"]
        )
        status = row["status"] if row["status"] not in (None, "success") else ""
        cells = "".join(f"<td class='text'>{_e(_cut(row['data'][c]))}</td>" for c in view.shown)
        lines.append(
            f"<tr data-id='{_e(row['original_id'])}'>"
            f"<td><a href='{_e(row_href(row['original_id'], query))}'>{_e(row['original_id'])}</a>"
            f"</td>{cells}<td><span class='label'>{_e(_label(row['judge_label']))}</span>"
            f"<div class='muted'>{_e(row['outcome'] or 'no answer')} {_e(status)}</div></td>"
            f"<td><span class='label'>{_e(_label(row['human_majority']))}</span> {verdict}"
            f"<div class='humans'>{humans}</div></td><td>{flags}</td></tr>"
        )
    return (
        f"<h2>Rows <span class='muted' id='shown'>{shown}</span></h2>"
        f"<table class='rows'><tr><th>id</th>{head}<th>judge</th><th>humans' majority</th>"
        f"<th>flags</th></tr>{''.join(lines)}</table>"
    )


def _pager(view: ListView) -> str:
    query, page = view.query, view.page
    if page.pages <= 1:
        return ""

    def link(number: int, text: str, rel: str) -> str:
        if number < 1 or number > page.pages or number == page.page:
            return f"<span class='muted'>{text}</span>"
        href = _href("/", query.params(page=number))
        return f"<a href='{_e(href)}' rel='{rel}'>{text}</a>"

    return (
        "<div class='pager'>"
        f"{link(1, '« first', 'first')}{link(page.page - 1, '‹ previous', 'prev')}"
        f"<span>page {page.page:,} of {page.pages:,}</span>"
        f"{link(page.page + 1, 'next ›', 'next')}{link(page.pages, 'last »', 'last')}</div>"
    )


def row_page(project: str, detail: Mapping[str, Any], back: str) -> str:
    """Everything about one row: its data, every task's human labels, every judge's answer."""
    row_id = detail["original_id"]
    shown = list(detail["shown"])
    data = detail["data"]
    ordered = shown + [c for c in data if c not in shown]
    columns = "".join(
        f"<dt>{_e(c)}{' <span class=badge>shown to judges</span>' if c in shown else ''}</dt>"
        f"<dd><pre>{_e(data[c])}</pre></dd>"
        for c in ordered
    )
    tasks = "".join(_task_card(name, task) for name, task in detail["tasks"].items())
    body = (
        f"<p><a href='{_e(back)}' id='back'>← back to the list</a></p>"
        f"<h1>Row {_e(row_id)} <span class='muted'>(position {detail['position']} in the "
        "data)</span></h1>"
        f"<section class='card'><h2>Data</h2><dl>{columns}</dl></section>"
        f"{_annotate_card(detail['annotate'])}{tasks}"
    )
    return layout(project, f"{project}: row {row_id}", "/", body)


def _task_card(name: str, task: Mapping[str, Any]) -> str:
    humans = task["human_labels"]
    human_rows = "".join(
        f"<tr><td>{_e(a)}</td><td class='label'>{_e(_label(v))}</td></tr>"
        for a, v in humans.items()
    ) or "<tr><td colspan=2 class='muted'>no annotator</td></tr>"  # fmt: skip
    free = task["kind"] == "free_text"  # no majority of free texts worth showing
    majority = (
        "" if free
        else f"<tr><th>majority</th><th class='label'>{_e(_label(task['human_majority']))}</th></tr>"
    )  # fmt: skip
    judges = []
    for judge, answer in task["judges"].items():
        flags = "".join(
            f"<span class='badge {f}'>{_e(_FLAG_NAMES[f])}</span>"
            for f in answer["flags"]
            if not (free and f in ("disagree", "humans_split"))
        )
        error = (
            f"<p class='error'>{_e(answer['error_message'])}</p>" if answer["error_message"] else ""
        )
        reasoning = (
            f"<h3>reasoning</h3><pre>{_e(answer['reasoning'])}</pre>"
            if answer["reasoning"] else ""
        )  # fmt: skip
        raw = (
            f"<h3>raw answer</h3><pre class='raw'>{_e(answer['raw_answer'])}</pre>"
            if answer["raw_answer"] is not None else ""
        )  # fmt: skip
        judges.append(
            f"<div class='judge' data-judge='{_e(judge)}'><h3>{_e(judge)}: "
            f"<span class='label'>{_e(_label(answer['judge_label']))}</span> "
            f"<span class='muted'>{_e(answer['outcome'] or 'no answer')} · "
            f"{_e(answer['status'] or '')} · run {_e(answer['run_id'])}</span> {flags}</h3>"
            f"{error}{reasoning}{raw}</div>"
        )
    return (
        f"<section class='card task' data-task='{_e(name)}'><h2>{_e(name)} "
        f"<span class='muted'>({_e(task['kind'].replace('_', ' '))})</span></h2>"
        f"<table style='width:auto'><tr><th>annotator</th><th>label</th></tr>{human_rows}"
        f"{majority}</table>"
        f"{''.join(judges)}</section>"
    )


def _annotate_card(annotate: Mapping[str, Any]) -> str:
    links: Mapping[str, str] = annotate["links"]
    path = str(annotate["path"]).replace("{annotator}", "<annotator id>")
    if annotate["url"]:
        listed = " ".join(
            f"<a class='chip' href='{_e(href)}'>label as {_e(a)}</a>" for a, href in links.items()
        )
        other = f"{annotate['url']}{path}"
        text = (
            f"<div class='chips'>{listed}</div><p class='muted'>Another annotator: "
            f"<code>{_e(other)}</code> with their id.</p>"
        )
    else:
        text = (
            f"<p>Label this row on the annotation page: run <code>{_e(annotate['command'])}</code>"
            f" and open <code>{_e(path)}</code> at the address it prints (or start the viewer "
            "with <code>--annotate-url</code> to link there).</p>"
        )
    return f"<section class='card' id='annotate'><h2>Label it</h2>{text}</section>"


def summary_page(project: str, summary: Mapping[str, Any]) -> str:
    """Judges, tasks and annotators, with the rows each flag marks (each a link to them)."""
    lines = []
    for entry in summary["flags"]:
        base = [("judge", entry["judge"]), ("task", entry["task"])]
        cells = "".join(
            f"<td class='num'><a href='{_e(_href('/', [*base, ('flag', f)]))}'>"
            f"{entry[f]:,}</a></td>"
            for f in FLAGS
        )
        lines.append(
            f"<tr><td><a href='{_e(_href('/', base))}'>{_e(entry['judge'])}</a></td>"
            f"<td>{_e(entry['task'])}</td><td>{entry['rows']:,}</td>{cells}</tr>"
        )
    head = "".join(f"<th>{_e(_FLAG_NAMES[f])}</th>" for f in FLAGS)
    runs = "".join(
        f"<li>{_e(j['id'])}: run <code>{_e(j['run_id'])}</code></li>" for j in summary["judges"]
    )
    tasks = "".join(
        f"<li>{_e(t['name'])} ({_e(t['kind'].replace('_', ' '))})"
        f"{': ' + _e(', '.join(t['labels'])) if t['labels'] else ''}</li>"
        for t in summary["tasks"]
    )
    annotators = ", ".join(_e(a) for a in summary["annotators"]) or "none"
    body = (
        f"<h1>{_e(project)} <span class='muted'>{summary['rows']:,} rows</span></h1>"
        f"<section class='card'><h2>Rows by flag</h2><table><tr><th>judge</th><th>task</th>"
        f"<th>rows</th>{head}</tr>{''.join(lines)}</table></section>"
        f"<section class='card'><h2>Judges</h2><ul>{runs}</ul><h2>Tasks</h2><ul>{tasks}</ul>"
        f"<h2>Annotators</h2><p>{annotators}</p></section>"
        "<section class='card'><h2>For scripts</h2><p>The same as JSON: "
        "<a href='/api/summary'>/api/summary</a>, <code>/api/rows</code>, "
        "<code>/api/rows/{id}</code>, <code>/api/confusion</code> (docs/viewer.md).</p></section>"
    )
    return layout(project, f"{project}: summary", "/summary", body)


#: Flipped rows listed on the Runs tab (all of them are in `/api/compare`).
FLIPS_SHOWN = 200


@dataclass(frozen=True)
class RunsView:
    """What the Runs tab shows: the runs to pick from, a comparison, and the saved ones."""

    project: str
    runs: Sequence[str]
    judges: Sequence[str]
    """The judges with a complete run (suggested in the judge field)."""
    tasks: Sequence[str]
    """The tasks (suggested in the task field)."""
    choice: Mapping[str, str]
    """The parameters asked for (`a`, `b`, `judge`, `task`), to fill the form again."""
    comparison: Any | None
    """The `RunComparison` asked for (None: none asked)."""
    saved: Sequence[Any]
    """The comparisons `meta-evaluator compare-runs` saved."""
    error: str | None = None
    """Why the comparison asked for cannot be made."""


def runs_page(view: RunsView) -> str:
    """Pick two runs, see what changed between them; the comparisons saved before."""

    def choices(name: str, values: Sequence[str]) -> str:
        options = "".join(f"<option value='{_e(v)}'>" for v in values)
        return f"<datalist id='{name}'>{options}</datalist>"

    def field(name: str, label: str, hint: str, suggested: str) -> str:
        return (
            f"<label>{_e(label)}<input type=search name='{name}' list='{suggested}' "
            f"value='{_e(view.choice.get(name, ''))}' placeholder='{_e(hint)}'></label>"
        )

    form = (
        "<form class='filters card' method='get' action='/runs'>"
        f"{choices('runs', view.runs)}{choices('judges', view.judges)}"
        f"{choices('tasks', view.tasks)}"
        f"{field('a', 'run A', 'RUN or RUN:JUDGE', 'runs')}"
        f"{field('b', 'run B', 'RUN or RUN:JUDGE', 'runs')}"
        f"{field('judge', 'judge (if a run has several)', 'judge id', 'judges')}"
        f"{field('task', 'task (if several)', 'task', 'tasks')}<button>Compare</button></form>"
    )
    body = [f"<h1>Runs <span class='muted'>{len(view.runs)} in this project</span></h1>", form]
    if view.error is not None:
        body.append(f"<div class='card error'>{_e(view.error)}</div>")
    if view.comparison is not None:
        body.append(_comparison(view.comparison))
    body.append(_saved(view.saved))
    return layout(view.project, f"{view.project}: runs", "/runs", "".join(body))


def _comparison(comparison: Any) -> str:
    """One comparison: its counts, score changes and flipped rows (each a link to the row)."""
    name_a, name_b = comparison.side_names()
    judge, task = comparison.run_b.judge_id, comparison.task
    counts = (
        f"<p>{comparison.items:,} rows labelled by both; <b>{len(comparison.flipped):,}</b> flipped"
    )
    if comparison.toward is not None:
        counts += (
            f": <span class='toward'>{comparison.toward:,} toward</span> the humans' majority, "
            f"<span class='away'>{comparison.away:,} away</span>, "
            f"{comparison.neither:,} wrong both times"
        )
    counts += (
        f"{f', {comparison.unrated:,} no human labelled' if comparison.unrated else ''}. "
        f"McNemar's exact test: p = {_number(comparison.mcnemar_p)}"
        f"{' (' + _e(comparison.mcnemar_reason) + ')' if comparison.mcnemar_reason else ''}.</p>"
    )
    if comparison.human_reason:
        counts += f"<p class='muted'>{_e(comparison.human_reason)}</p>"
    from meta_evaluator.scores.run_comparison import SCORE_TITLES

    scores = "".join(
        f"<tr><td>{_e(SCORE_TITLES.get(s.name, s.name))}</td><td class='num'>{_number(s.a)}</td>"
        f"<td class='num'>{_number(s.b)}</td><td class='num'>{_number(s.difference, sign=True)}"
        f"</td><td>{_interval(s.low, s.high)}</td></tr>"
        for s in comparison.scores
    )
    on_row = [("judge", judge), ("task", task)]
    flips = "".join(
        f"<tr><td><a href='{_e(_href(_row_path(c.id), on_row))}'>{_e(c.id)}</a></td>"
        f"<td>{_e(_label(c.a))}</td><td>{_e(_label(c.b))}</td><td>{_e(_label(c.human))}</td>"
        f"<td class='{_e(c.direction)}'>{_e(c.direction)}</td></tr>"
        for c in comparison.changes[:FLIPS_SHOWN]
    )
    more = len(comparison.changes) - FLIPS_SHOWN
    return (
        f"<section class='card'><h2>{_e(name_a)} → {_e(name_b)} "
        f"<span class='muted'>judge {_e(judge)}, task {_e(task)}</span></h2>{counts}"
        "<table><tr><th>score</th><th>run A</th><th>run B</th><th>change</th>"
        f"<th>95% interval of the change</th></tr>{scores}</table>"
        f"<h3>Flipped rows</h3><table><tr><th>id</th><th>{_e(name_a)}</th><th>{_e(name_b)}</th>"
        f"<th>humans' majority</th><th>direction</th></tr>{flips}</table>"
        f"{f'<p class=muted>and {more:,} more (all in /api/compare)</p>' if more > 0 else ''}"
        "</section>"
    )


def _saved(saved: Sequence[Any]) -> str:
    """The comparisons saved by `meta-evaluator compare-runs`, each a link that shows it."""
    if not saved:
        return (
            "<section class='card'><h2>Saved comparisons</h2><p class='muted'>None yet: "
            "<code>meta-evaluator compare-runs PROJECT RUN_A RUN_B</code> saves one under "
            "reports/compare-runs/, and the report shows it.</p></section>"
        )
    lines = []
    for c in saved:
        params = [("a", f"{c.run_a.run_id}:{c.run_a.judge_id}"),
                  ("b", f"{c.run_b.run_id}:{c.run_b.judge_id}"), ("task", c.task)]  # fmt: skip
        name_a, name_b = c.side_names()
        lines.append(
            f"<tr><td><a href='{_e(_href('/runs', params))}'>{_e(name_a)} → {_e(name_b)}</a></td>"
            f"<td>{_e(c.task)}</td><td class='num'>{c.items:,}</td>"
            f"<td class='num'>{len(c.flipped):,}</td>"
            f"<td class='num'>{'' if c.toward is None else f'{c.toward:,} / {c.away:,}'}</td></tr>"
        )
    return (
        "<section class='card'><h2>Saved comparisons</h2><table><tr><th>runs</th><th>task</th>"
        "<th>rows</th><th>flipped</th><th>toward / away</th></tr>"
        f"{''.join(lines)}</table></section>"
    )


def _row_path(row_id: Any) -> str:
    return f"/rows/{quote(str(row_id), safe='')}"


def _number(value: float | None, *, sign: bool = False) -> str:
    if value is None:
        return "—"
    return f"{value:+.3f}" if sign else f"{value:.3g}" if abs(value) < 0.001 else f"{value:.3f}"


def _interval(low: float | None, high: float | None) -> str:
    return "—" if low is None or high is None else f"[{low:+.3f}, {high:+.3f}]"
