"""The annotation page as a small ASGI application (no framework: a handful of routes).

```
GET  /                              start page: pick an annotator id; everyone's progress
GET  /start?annotator=ID            go to that annotator's next unlabelled row
GET  /annotate/ID                   the annotator's next unlabelled row (or "all done")
GET  /annotate/ID/N                 row N (0-based, data order) with the saved labels filled in
POST /annotate/ID/N                 save row N's labels (form fields named after the tasks)
GET  /summary                       agreement between annotators (alpha, pairwise kappa)
GET  /api/progress                  JSON: labelled rows per annotator
```
With a token, every request needs it: `?token=...` once (a cookie keeps it), the cookie, or
`Authorization: Bearer ...`.

Other sites are kept out before the token is looked at, as `web.guard` describes: a `Host`
that is not a loopback name is refused with 421 when bound to loopback (DNS rebinding), a POST
whose `Origin` (or `Referer`) is not this server's own address with 403, a body over
`MAX_BODY` bytes (`web.http`) with 413; nothing of a refused request is saved.

A label that cannot be saved, or labels that cannot be read (disk full, no permission,
`annotations/` linked out of the project, a git-lfs pointer, files that disagree), is answered
with a page saying what failed and that nothing was saved: 507 for a full disk, 409 for files
that disagree with the project (`DataError`), 400 for an unsafe annotator id, 500 otherwise.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

import anyio.to_thread

from meta_evaluator.annotate.pages import (
    done_page,
    index_page,
    message_page,
    row_page,
    summary_page,
)
from meta_evaluator.annotate.store import WEB_RUN, AnnotatorLabels
from meta_evaluator.errors import (
    DataError,
    DiskFullError,
    MetaEvaluatorError,
    ProjectError,
    UnsafeNameError,
)
from meta_evaluator.eval_task.labels import check_values
from meta_evaluator.storage import check_safe_name
from meta_evaluator.web import (
    MAX_BODY,
    Receive,
    Refusal,
    RefusalWording,
    RequestGuard,
    Scope,
    Send,
    TooLarge,
    http_request,
    read_form,
    respond,
)

if TYPE_CHECKING:
    from meta_evaluator.data import EvalData
    from meta_evaluator.eval_task import EvalTask
    from meta_evaluator.results.human_results import HumanAnnotationResults

__all__ = ["AnnotatedProject", "AnnotationApp"]

logger = logging.getLogger(__name__)

_COOKIE = "meta_evaluator_token"
#: Hidden form field naming each multi-label task shown (so "none ticked" reaches the server).
_SHOWN = "_shown"
#: What a refused visitor is told (`web.guard`).
_REFUSALS = RefusalWording(
    page="annotation page",
    origin=(
        "This request comes from another site, not from the annotation page itself; "
        "nothing was saved. Label rows on the page the server printed."
    ),
    size=(
        f"The labels sent are too large (over {MAX_BODY:,} bytes); nothing was saved. "
        "Shorten the free text and save again."
    ),
)


class _AnnotationFolders(Protocol):
    @property
    def annotations_dir(self) -> Path: ...


class AnnotatedProject(Protocol):
    """What the annotation page reads of a project: a `MetaEvaluator` is one.

    The page sits below the facade that launches it (docs/architecture.md), so it names what
    it needs instead of importing the facade.
    """

    @property
    def project_dir(self) -> Path:
        """The project folder."""

    @property
    def paths(self) -> _AnnotationFolders:
        """The project's folders (`annotations_dir`)."""

    @property
    def data(self) -> EvalData | None:
        """The evaluation data, or None."""

    @property
    def eval_task(self) -> EvalTask | None:
        """The task, or None."""

    def load_all_human_results(self) -> Mapping[str, HumanAnnotationResults]:
        """The latest labels of every annotator, by annotator id."""


class AnnotationApp:
    """ASGI app serving the annotation page of one project (its data and task).

    `host` and `port` are the address the server listens on (`port=None`: not known); `host`
    decides which `Host` headers are accepted (see the module docstring), at any port.
    """

    def __init__(
        self,
        evaluator: AnnotatedProject,
        *,
        token: str | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
    ) -> None:
        if evaluator.data is None or evaluator.eval_task is None:
            raise ProjectError(
                f"{evaluator.project_dir}: add data and a task before annotating.",
                path=evaluator.project_dir,
            )
        self.evaluator = evaluator
        self.eval_data = evaluator.data
        self.task = evaluator.eval_task
        self.token = token
        self.host = host
        self.port = port
        self._annotators: dict[str, AnnotatorLabels] = {}
        self._rows = self.eval_data.data.select(self.task.columns_shown()).to_dicts()
        self._ids = self.eval_data.ids.to_list()

    # ----- plumbing ---------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one HTTP request (lifespan events are acknowledged)."""
        request = await http_request(scope, receive, send)
        if request is None:
            return
        method, path, query = request.method, request.path, request.query
        guard = RequestGuard(host=self.host, token=self.token, cookie=_COOKIE)
        admission = guard.admit(request)
        if admission.refusal is not None:
            refusal = admission.refusal
            await respond(send, refusal.status, self._refused(refusal), [*admission.headers])
            return
        try:
            status, body, more = await self._route(method, path, query, receive)
        except UnsafeNameError as exc:
            status, body, more = 400, message_page("Not a valid annotator id", exc.message), []
        except MetaEvaluatorError as exc:
            status, body, more = _failure_status(exc), _failure_page(method, exc), []
            logger.error("%s %s: %s", method, path, exc.message)
        except TooLarge:
            status, body, more = 413, self._refused(Refusal("size")), []
        await respond(send, status, body, [*admission.headers, *more])

    def _refused(self, refusal: Refusal) -> str:
        """The page saying why the guard refused a request."""
        return message_page(refusal.title, _REFUSALS.message(refusal, self.host))

    async def _route(
        self, method: str, path: str, query: dict[str, list[str]], receive: Receive
    ) -> tuple[int, str, list[tuple[str, str]]]:
        parts = [p for p in path.split("/") if p]
        if method == "GET" and not parts:
            return 200, self._index(), []
        if method == "GET" and parts == ["start"]:
            annotator = check_safe_name((query.get("annotator") or [""])[0].strip(),
                                        field="annotator_id")  # fmt: skip
            return 303, "", [("location", f"/annotate/{quote(annotator)}")]
        if method == "GET" and parts == ["summary"]:
            return 200, self._summary(), []
        if method == "GET" and parts == ["api", "progress"]:
            progress = self._progress(self._everyone())
            return 200, json.dumps(progress), [("content-type", "application/json")]
        if len(parts) in (2, 3) and parts[0] == "annotate":
            labels = self._labels(parts[1])
            if len(parts) == 2 and method == "GET":
                position = labels.next_unlabelled()
                if position is None:
                    return 200, done_page(self._name, labels.annotator_id, len(self._ids)), []
                return 303, "", [("location", f"/annotate/{quote(labels.annotator_id)}/{position}")]
            if len(parts) == 2:
                return 405, message_page("Not allowed", "Labels are sent to a row's address."), []
            position = _position(parts[2], len(self._ids))
            if position is None:
                return (
                    404,
                    message_page("No such row", f"Rows go from 0 to {len(self._ids) - 1}."),
                    [],
                )
            if method == "GET":
                return 200, self._row(labels, position), []
            if method == "POST":
                form = await read_form(receive)
                return await self._submit(labels, position, form)
        return 404, message_page("Not found", f"Nothing at {path}."), []

    # ----- pages ------------------------------------------------------------------------------

    @property
    def _name(self) -> str:
        return self.evaluator.project_dir.name

    def _imported_notice(self, labels: AnnotatorLabels, position: int) -> str | None:
        if labels.imported is None:
            return None
        run, count = labels.imported
        who = labels.annotator_id
        notice = (
            f"{who} has {count} imported labels (run {run}). Labels you give here are saved "
            f"apart, as web labels (annotations/web/{who}.parquet), and merged with the imported "
            "ones row by row: for scoring, a row you label here replaces its imported label; "
            "the other imported labels stay."
        )
        row = labels.get(position)
        if row is not None and row["run_id"] != WEB_RUN:
            notice += " This row's label below is the imported one; saving replaces it."
        return notice

    def _labels(self, annotator_id: str) -> AnnotatorLabels:
        """The annotator's labels as on disk now (refreshed: call once per request)."""
        check_safe_name(annotator_id, field="annotator_id")
        if annotator_id not in self._annotators:
            self._annotators[annotator_id] = AnnotatorLabels(
                self.evaluator.paths.annotations_dir,
                annotator_id,
                self.eval_data,
                self.task,
            )
        labels = self._annotators[annotator_id]
        labels.refresh()
        return labels

    def _everyone(self) -> list[AnnotatorLabels]:
        """Every annotator with labels (from the page or imported) or seen here, by id."""
        found = set(self._annotators)
        annotations = self.evaluator.paths.annotations_dir
        if annotations.is_dir():
            for state in annotations.glob("*/*_state.json"):
                found.add(state.name.removesuffix("_state.json"))
        everyone = []
        for annotator in sorted(found):
            try:
                everyone.append(self._labels(annotator))
            except UnsafeNameError:
                continue
        return everyone

    @staticmethod
    def _progress(everyone: list[AnnotatorLabels]) -> dict[str, int]:
        """Rows labelled per annotator of `everyone` (`_everyone`, once per request)."""
        return {labels.annotator_id: len(labels.labelled()) for labels in everyone}

    def _index(self) -> str:
        everyone = self._everyone()
        total = len(self._ids)
        return index_page(
            self._name,
            {annotator: (done, total) for annotator, done in self._progress(everyone).items()},
            {
                labels.annotator_id: labels.imported[1]
                for labels in everyone
                if labels.imported is not None
            },
        )

    def _row(self, labels: AnnotatorLabels, position: int, error: str | None = None,
             given: dict[str, Any] | None = None) -> str:  # fmt: skip
        return row_page(
            project=self._name,
            annotator=labels.annotator_id,
            task=self.task,
            position=position,
            total=len(self._ids),
            done=len(labels.labelled()),
            row_id=self._ids[position],
            shown=self._rows[position],
            saved=given if given is not None else labels.get(position),
            error=error,
            notice=self._imported_notice(labels, position),
        )

    async def _submit(
        self, labels: AnnotatorLabels, position: int, form: dict[str, list[str]]
    ) -> tuple[int, str, list[tuple[str, str]]]:
        raw: dict[str, Any] = {}
        shown = set(form.get(_SHOWN, []))
        for name in self.task.task_names:
            values = [v for v in form.get(name, []) if v.strip()]
            if self.task.task_kind(name) == "multilabel":
                # no box ticked is an answer too (the page marks the task as shown)
                raw[name] = values if (name in form or name in shown) else None
            else:
                raw[name] = values[0] if values else None
        checked = check_values(raw, self.task)
        refused = [
            t for t, v in raw.items() if v not in (None, "") and t not in checked.labels
        ]  # an optional task given a label it does not allow is refused, not dropped
        if checked.outcome != "valid" or refused:
            reason = checked.error_message or f"{', '.join(refused)}: label not allowed"
            return 400, self._row(labels, position, f"Not saved: {reason}.", raw), []
        # the lock may be held by another server: wait for it off the event loop
        await anyio.to_thread.run_sync(labels.save, position, checked.labels)
        logger.info("annotator=%s row=%s saved", labels.annotator_id, self._ids[position])
        try:
            labels.refresh()
        except MetaEvaluatorError as exc:
            logger.error("annotator=%s: %s", labels.annotator_id, exc.message)
            unreadable = (
                "The label was saved, but the annotator's labels cannot be read back: "
                f"{exc.message}"
            )
            return _failure_status(exc), message_page("Saved, not readable", unreadable), []
        following = labels.next_unlabelled(position)
        target = (
            f"/annotate/{quote(labels.annotator_id)}/{following}"
            if following is not None
            else f"/annotate/{quote(labels.annotator_id)}"
        )
        return 303, "", [("location", target)]

    def _summary(self) -> str:
        from meta_evaluator.annotate.agreement import agreement_sections

        humans = self.evaluator.load_all_human_results()
        return summary_page(self._name, agreement_sections(humans, self.task))


def _position(text: str, total: int) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and int(text) < total else None


def _failure_status(exc: MetaEvaluatorError) -> int:
    """The status for a failure to save or read labels (see the module docstring)."""
    if isinstance(exc, DiskFullError):
        return 507
    if isinstance(exc, DataError):
        return 409
    return 500


def _failure_page(method: str, exc: MetaEvaluatorError) -> str:
    if method == "POST":
        return message_page("Not saved", (
            f"The label was NOT saved: {exc.message} Go back, and save the row again once "
            "this is fixed (labels saved before are kept)."))  # fmt: skip
    return message_page("Labels cannot be read", (
        f"The annotator's labels could not be read; nothing was saved: {exc.message}"))  # fmt: skip
