"""The annotation page's HTML: server-rendered, a little JavaScript for the keyboard, no build."""

from __future__ import annotations

import html
from typing import Any

from meta_evaluator.eval_task import EvalTask

__all__ = ["done_page", "index_page", "message_page", "row_page", "summary_page"]

_STYLE = """
*{box-sizing:border-box}body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;
margin:0;color:#1d2433;background:#f6f7fa;line-height:1.5}
header{background:#fff;border-bottom:1px solid #dde2ea;padding:.7rem 1.5rem;display:flex;
gap:1.5rem;align-items:center;flex-wrap:wrap}header b{font-size:1.05rem}
main{max-width:60rem;margin:1.2rem auto;padding:0 1rem}
.card{background:#fff;border:1px solid #dde2ea;border-radius:8px;padding:1rem 1.2rem;margin:.8rem 0}
.prompt{color:#3a4356;font-size:.95rem}.col{font-size:.8rem;color:#5b6475;text-transform:uppercase;
letter-spacing:.04em;margin:.6rem 0 .2rem}pre.text{white-space:pre-wrap;font-family:inherit;margin:0;
background:#fafbfc;border:1px solid #eceff4;border-radius:6px;padding:.6rem .8rem}
fieldset{border:1px solid #dde2ea;border-radius:8px;margin:.8rem 0;padding:.6rem 1rem}
fieldset.active{border-color:#4c72b0;box-shadow:0 0 0 2px #4c72b022}
legend{font-weight:600;padding:0 .3rem}.req{color:#b42318}
label.opt{display:inline-flex;align-items:center;gap:.35rem;margin:.25rem 1rem .25rem 0;cursor:pointer}
kbd{font-size:.75rem;border:1px solid #c9d0db;border-bottom-width:2px;border-radius:4px;
padding:0 .3rem;background:#fff;color:#3a4356}
textarea{width:100%;min-height:5rem;font:inherit;padding:.5rem;border:1px solid #c9d0db;border-radius:6px}
button{font:inherit;padding:.5rem 1.1rem;border-radius:6px;border:1px solid #4c72b0;background:#4c72b0;
color:#fff;cursor:pointer}a{color:#2f5597}.muted{color:#5b6475;font-size:.9rem}
.notice{background:#eef3fb;border:1px solid #c6d5ee;border-radius:6px;padding:.5rem .8rem}
.error{background:#fdecea;border:1px solid #f5c2bd;color:#8a1c12;border-radius:6px;padding:.5rem .8rem}
.bar{height:6px;background:#e3e7ee;border-radius:3px;min-width:10rem;flex:1;max-width:20rem}
.bar i{display:block;height:6px;background:#4c72b0;border-radius:3px}
table{border-collapse:collapse;background:#fff}td,th{border:1px solid #dde2ea;padding:.3rem .6rem}
"""

_SCRIPT = """
(() => {
  const form = document.getElementById('labels');
  if (!form) return;
  const sets = [...form.querySelectorAll('fieldset')];
  const pending = () => sets.find(s => s.dataset.kind === 'single' &&
    !s.querySelector('input:checked')) || sets.find(s => s.dataset.kind === 'multi') ||
    sets.find(s => s.dataset.kind !== 'text') || sets[0];
  const mark = () => { sets.forEach(s => s.classList.remove('active'));
    const s = pending(); if (s) s.classList.add('active'); };
  mark(); form.addEventListener('change', mark);
  document.addEventListener('keydown', e => {
    const t = e.target;
    if (t.tagName === 'TEXTAREA') {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); form.requestSubmit(); }
      return;
    }
    if (e.key === 'Enter') { e.preventDefault(); form.requestSubmit(); return; }
    if (/^[1-9]$/.test(e.key)) {
      const s = form.querySelector('fieldset.active') || pending();
      const inputs = s ? [...s.querySelectorAll('input:not([type=hidden])')] : [];
      const input = inputs[Number(e.key) - 1];
      if (input) { e.preventDefault();
        if (input.type === 'checkbox') input.checked = !input.checked; else input.checked = true;
        mark(); }
    }
  });
  const text = form.querySelector('textarea');
  if (text && !sets.some(s => s.dataset.kind !== 'text')) text.focus();
})();
"""


def _page(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>{body}"
        f"<script>{_SCRIPT}</script></body></html>"
    )


def index_page(
    project: str,
    annotators: dict[str, tuple[int, int]],
    imported: dict[str, int] | None = None,
) -> str:
    """Landing page: start or resume as an annotator; progress of everyone.

    `annotators` gives (rows labelled, rows) per annotator, `imported` the imported labels of
    those who have some (shown in a column of their own).
    """
    e = html.escape
    imported = imported or {}
    rows = "".join(
        f"<tr><td><a href='/annotate/{e(a)}'>{e(a)}</a></td><td>{done} / {total}</td>"
        f"<td>{imported.get(a, '')}</td></tr>"
        for a, (done, total) in sorted(annotators.items())
    )
    table = (
        f"<table><tr><th>annotator</th><th>labelled</th><th>imported</th></tr>{rows}</table>"
        if rows
        else "<p class='muted'>Nobody has annotated yet.</p>"
    )
    body = (
        f"<header><b>Annotate: {e(project)}</b><a href='/summary'>agreement summary</a></header>"
        "<main><div class='card'><form method='get' action='/start'>"
        "<label>Your annotator id <input name='annotator' required pattern='[A-Za-z0-9][A-Za-z0-9_.-]*'"
        " autofocus placeholder='e.g. ana'></label> <button>Start or resume</button></form>"
        "<p class='muted'>Letters, digits, '_', '-' and '.'. You continue where you stopped.</p>"
        f"</div><div class='card'><h3>Progress</h3>{table}</div></main>"
    )
    return _page(f"Annotate {project}", body)


def row_page(
    *,
    project: str,
    annotator: str,
    task: EvalTask,
    position: int,
    total: int,
    done: int,
    row_id: Any,
    shown: dict[str, Any],
    saved: dict[str, Any] | None,
    error: str | None = None,
    notice: str | None = None,
) -> str:
    """One row to label: the columns shown, a control per task, keyboard help.

    `notice` (plain text) is shown above the row: how labels given here combine with the
    annotator's imported ones.
    """
    e = html.escape
    required = set(task.get_required_tasks())
    columns = "".join(
        f"<div class='col'>{e(name)}</div><pre class='text'>{e('' if v is None else str(v))}</pre>"
        for name, v in shown.items()
    )
    sets = []
    for name in task.task_names:
        kind = task.task_kind(name)
        star = " <span class='req' title='required'>*</span>" if name in required else ""
        value = (saved or {}).get(name)
        if kind == "free_text":
            control = (
                f"<textarea name='{e(name)}' aria-label='{e(name)}'>"
                f"{e('' if value is None else str(value))}</textarea>"
                "<div class='muted'><kbd>Ctrl</kbd>+<kbd>Enter</kbd> saves</div>"
            )
            sets.append(
                f"<fieldset data-kind='text'><legend>{e(name)}{star}</legend>{control}</fieldset>"
            )
            continue
        labels = task.allowed_labels(name) or []
        chosen = set(value) if isinstance(value, list) else {value}
        input_type = "checkbox" if kind == "multilabel" else "radio"
        options = "".join(
            f"<label class='opt'><input type='{input_type}' name='{e(name)}' value='{e(label)}'"
            f"{' checked' if label in chosen else ''}>{e(label)} <kbd>{i}</kbd></label>"
            for i, label in enumerate(labels, start=1)
        )
        shown_marker = (
            f"<input type='hidden' name='_shown' value='{e(name)}'>" if kind == "multilabel" else ""
        )
        sets.append(
            f"<fieldset data-kind='{'multi' if kind == 'multilabel' else 'single'}'>"
            f"<legend>{e(name)}{star}</legend>{options}{shown_marker}</fieldset>"
        )
    share = 100 * done / total if total else 0
    nav = (
        f"<a href='/annotate/{e(annotator)}/{position - 1}'>&larr; previous</a>" if position > 0
        else ""
    ) + (
        f" <a href='/annotate/{e(annotator)}/{position + 1}'>next &rarr;</a>"
        if position + 1 < total else ""
    )  # fmt: skip
    body = (
        f"<header><b>{e(project)}</b><span>annotator <b>{e(annotator)}</b></span>"
        f"<span>{done} / {total} labelled</span><span class='bar'><i style='width:{share:.1f}%'>"
        f"</i></span><a href='/'>switch annotator</a><a href='/summary'>agreement</a></header>"
        f"<main>{f'<p class=error>{e(error)}</p>' if error else ''}"
        f"{f'<p class=notice>{e(notice)}</p>' if notice else ''}"
        f"<div class='card'><div class='prompt'>{e(task.annotation_prompt)}</div>"
        f"<div class='muted'>row {position + 1} of {total} &middot; id {e(str(row_id))}</div>"
        f"{columns}</div>"
        f"<form id='labels' method='post' action='/annotate/{e(annotator)}/{position}'>"
        f"{''.join(sets)}<p><button type='submit'>Save and next</button> "
        "<span class='muted'>keys: <kbd>1</kbd>-<kbd>9</kbd> pick an option of the highlighted "
        "task, <kbd>Enter</kbd> saves; <span class='req'>*</span> required</span></p></form>"
        f"<p>{nav}</p></main>"
    )
    return _page(f"{project}: row {position + 1}", body)


def done_page(project: str, annotator: str, total: int) -> str:
    """Shown when the annotator has labelled every row."""
    e = html.escape
    body = (
        f"<header><b>{e(project)}</b><span>annotator <b>{e(annotator)}</b></span></header>"
        f"<main><div class='card'><h2>All {total} rows are labelled. Thank you!</h2>"
        f"<p>Your labels are saved. <a href='/annotate/{e(annotator)}/0'>Review them</a> or see "
        "the <a href='/summary'>agreement summary</a>.</p></div></main>"
    )
    return _page(f"{project}: done", body)


def summary_page(project: str, sections: list[tuple[str, str]]) -> str:
    """The agreement summary: one section per task."""
    e = html.escape
    content = "".join(f"<div class='card'><h3>{e(t)}</h3>{body}</div>" for t, body in sections)
    body = (
        f"<header><b>Agreement between annotators: {e(project)}</b><a href='/'>back</a></header>"
        f"<main>{content or '<p>Agreement appears once two annotators labelled the same rows.</p>'}"
        "</main>"
    )
    return _page(f"{project}: agreement", body)


def message_page(title: str, message: str) -> str:
    """A short page for errors (not found, not allowed)."""
    body = (
        f"<main><div class='card'><h2>{html.escape(title)}</h2>"
        f"<p>{html.escape(message)}</p><p><a href='/'>Start page</a></p></div></main>"
    )
    return _page(title, body)
