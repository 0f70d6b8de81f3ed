"""The results viewer as a small read-only ASGI application (no framework, a handful of routes).

```
GET /                    the rows of a judge on a task: filters, flags, confusion matrix, pages
GET /rows/ID             everything about one row (ID percent-encoded), a link to label it
GET /summary             judges, tasks, annotators, rows per flag
GET /runs                two runs of a judge side by side (`?a=RUN&b=RUN`), and the saved ones
GET /api/rows            JSON: a page of rows (parameters: `view.query`)
GET /api/rows/ID         JSON: everything about one row
GET /api/confusion       JSON: the judge's labels against the humans' majority
GET /api/summary         JSON: judges, tasks, annotators, rows per flag
GET /api/comparisons     JSON: the comparisons `meta-evaluator compare-runs` saved
GET /api/compare         JSON: two runs compared (`a`, `b`, optional `judge`, `task`), not saved
```
It answers GET and HEAD only; any other method is refused with 405. Other sites are kept out
as on the annotation page (`web.guard`): a `Host` that is not a loopback name is refused with
421 when bound to loopback, and with a token every request needs it (`?token=...` once, its
HttpOnly cookie, or `Authorization: Bearer ...`; 401 otherwise). A bad parameter is answered
with 400 and, under `/api/`, JSON naming the parameter and the values it takes; a file that
cannot be read with 500 saying which.

Requests are served one at a time, in a worker thread (building a table of a million rows
takes a moment; the event loop stays free to accept connections meanwhile).
"""

from __future__ import annotations

import logging
import threading
from typing import Any
from urllib.parse import urlencode, urlsplit

import anyio.to_thread

from meta_evaluator.errors import (
    MetaEvaluatorError,
    ProjectError,
    QueryError,
    ScoringError,
    TaskError,
    UnsafeNameError,
)
from meta_evaluator.results.row_table import RowTable, ordered_labels
from meta_evaluator.view import api, pages, runs
from meta_evaluator.view.query import (
    PARAMETERS,
    LabelRule,
    RowPage,
    RowQuery,
    apply_query,
    parse_judge_task,
    parse_row_query,
)
from meta_evaluator.view.store import RowStore, ViewedProject
from meta_evaluator.web import (
    Receive,
    Refusal,
    RefusalWording,
    Request,
    RequestGuard,
    Scope,
    Send,
    http_request,
    respond,
    respond_json,
)

__all__ = ["ViewerApp", "check_annotate_url"]

logger = logging.getLogger(__name__)

#: The cookie keeping the viewer's token (not the annotation page's: browsers share cookies
#: between the ports of one host).
COOKIE = "meta_evaluator_view_token"

#: What a refused visitor is told (`web.guard`).
_REFUSALS = RefusalWording(
    page="viewer",
    origin="This request comes from another site; the viewer only reads anyway.",
    size="The viewer takes no request body.",
)

#: The query parameter of `/api/compare` each field of a comparison's errors comes from.
_COMPARE_PARAMETERS = {"run_a": "a", "run_b": "b", "judge_id": "judge", "task": "task"}

#: How `/api/compare` says to choose what a comparison lacks (the flags are the command line's).
_API_ADVICE = {
    "judge": "name one with judge=JUDGE, or give a run as RUN:JUDGE.",
    "task": "choose one with task=TASK.",
}

#: status, body (HTML text, or a value sent as JSON), whether it is JSON.
_Reply = tuple[int, Any, bool]


def check_annotate_url(url: str | None) -> str | None:
    """`url` (the annotation page's address) without a trailing slash, or None.

    Raises:
        ProjectError: It is not an http(s) address with a host (`field="annotate_url"`).
    """
    if url is None:
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        problem = f"annotate_url {url!r} is no http(s) address of an annotation page"
        fix = (
            "give the address `meta-evaluator annotate` printed (http://127.0.0.1:PORT), "
            "or leave it out."
        )
        raise ProjectError(
            f"launch_viewer: {problem}; {fix}", field="annotate_url",
            problem=problem.replace("annotate_url", "--annotate-url", 1), cli_advice=fix,
        )  # fmt: skip
    if parts.query or parts.fragment:
        problem = f"annotate_url {url!r} has a query or fragment"
        fix = "give the page's address alone (a token goes in a cookie once the page was opened)."
        raise ProjectError(
            f"launch_viewer: {problem}; {fix}", field="annotate_url",
            problem=problem.replace("annotate_url", "--annotate-url", 1), cli_advice=fix,
        )  # fmt: skip
    return url.strip().rstrip("/")


class ViewerApp:
    """ASGI app serving the results viewer of one project (read-only).

    `host` and `port` are the address the server listens on (`port=None`: not known); `host`
    decides which `Host` headers are accepted (see `web.guard`). `annotate_url` is the address
    of the project's annotation page, where the row page links to label a row.
    """

    def __init__(
        self,
        project: ViewedProject,
        *,
        token: str | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        annotate_url: str | None = None,
    ) -> None:
        """The viewer of `project`.

        Raises:
            ProjectError: The project has no data or task; `annotate_url` is no http(s)
                address.
        """
        self.store = RowStore(project)
        self.token = token
        self.host = host
        self.port = port
        self.annotate_url = check_annotate_url(annotate_url)
        self.name = project.project_dir.resolve().name
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one HTTP request (lifespan events are acknowledged)."""
        request = await http_request(scope, receive, send)
        if request is None:
            return
        head = request.method == "HEAD"
        is_api = request.segments[:1] == ("api",)
        admission = RequestGuard(host=self.host, token=self.token, cookie=COOKIE).admit(request)
        if admission.refusal is not None:
            status, body, is_json = self._refused(admission.refusal, is_api)
        elif request.method not in ("GET", "HEAD"):
            status, body, is_json = self._error(
                405, "Not allowed", "The viewer only reads: it answers GET and HEAD.", is_api
            )
        else:
            status, body, is_json = await anyio.to_thread.run_sync(self._serve, request)
        headers = [*admission.headers]
        if status == 405:
            headers.append(("allow", "GET, HEAD"))
        if is_json:
            await respond_json(send, status, body, headers, head=head)
        else:
            await respond(send, status, body, headers, head=head)

    # ----- answers ----------------------------------------------------------------------------

    def _serve(self, request: Request) -> _Reply:
        """The reply to a GET (in a worker thread, one request at a time)."""
        is_api = request.segments[:1] == ("api",)
        with self._lock:
            try:
                self.store.refresh()
                return self._route(request)
            except QueryError as exc:
                if is_api:
                    error = {"error": exc.message, "parameter": exc.field, "allowed": exc.allowed}
                    return 400, error, True
                return 400, pages.message_page(self.name, "Cannot show that", exc.message), False
            except MetaEvaluatorError as exc:
                logger.error("GET %s: %s", request.path, exc.message)
                return self._error(500, "Cannot read the results", exc.message, is_api)

    def _route(self, request: Request) -> _Reply:
        parts, query = request.segments, request.query
        if parts == ():
            return 200, self._list_page(query), False
        if parts == ("summary",):
            return 200, self._summary_page(), False
        if len(parts) == 2 and parts[0] == "rows":
            return self._row(parts[1], query, page=True)
        if parts == ("api", "rows"):
            found = self._rows(query)
            return 200, api.rows_json(found[1], found[0], found[2]), True
        if len(parts) == 3 and parts[:2] == ("api", "rows"):
            return self._row(parts[2], query, page=False)
        if parts == ("api", "confusion"):
            judge, task = parse_judge_task(query, judges=self.store.judges, tasks=self.store.tasks)
            return 200, api.confusion_json(self.store, judge, task), True
        if parts == ("api", "summary"):
            return 200, api.summary_json(self.store), True
        if parts == ("runs",):
            return 200, self._runs_page(query), False
        if parts == ("api", "comparisons"):
            saved = runs.saved_comparisons(self.store.project.paths.reports_dir)
            return 200, {"comparisons": [c.to_json() for c in saved]}, True
        if parts == ("api", "compare"):
            return self._compare(query)
        return self._error(404, "Not found", f"Nothing at {request.path}.", parts[:1] == ("api",))

    def _rule(self, judge: str, task: str) -> LabelRule:
        """What the label filters of `judge` on `task` may be."""
        kind = self.store.task.task_kind(task)
        if kind == "free_text":
            return LabelRule(free=True)
        allowed = self.store.task.allowed_labels(task) or []
        if kind == "multilabel":
            return LabelRule(labels=tuple(allowed), multilabel=True)
        judged, voted = self.store.keys(judge, task)
        return LabelRule(labels=tuple(dict.fromkeys([*allowed, *sorted(judged | voted)])))

    def _rows(self, params: dict[str, list[str]]) -> tuple[RowQuery, RowPage, RowTable]:
        store = self.store
        query = parse_row_query(params, judges=store.judges, tasks=store.tasks, rule=self._rule)
        table = store.table(query.judge, query.task)
        search = store.search_text(query.judge, query.task) if query.q else None
        order = store.order(query.judge, query.task, query.sort)
        return query, apply_query(table.frame, query, search, order), table

    def _list_page(self, params: dict[str, list[str]]) -> str:
        store = self.store
        if not store.judges:
            return pages.message_page(
                self.name,
                "No judge results yet",
                "No judge has a complete run in this project: run one (meta-evaluator run "
                f"{self.name}); this page shows it once it is done.",
            )
        query, page, table = self._rows(params)
        judged, voted = store.keys(query.judge, query.task)
        view = pages.ListView(
            project=self.name,
            query=query,
            page=page,
            judges=store.judges,
            tasks=store.tasks,
            shown=table.shown,
            annotators=table.annotators,
            rows=[api.row_json(r, table) for r in page.rows.iter_rows(named=True)],
            counts=store.counts(query.judge, query.task),
            confusion=api.confusion_json(store, query.judge, query.task),
            judge_labels=ordered_labels(store.task, query.task, judged),
            human_labels=ordered_labels(store.task, query.task, voted),
        )
        return pages.list_page(view)

    def _runs_page(self, params: dict[str, list[str]]) -> str:
        store = self.store
        paths = store.project.paths
        choice = runs.parse_run_choice(params)
        comparison, error = None, None
        if choice is not None:
            try:
                comparison = runs.compared(paths.results_dir, paths.annotations_dir,
                                           store.project.eval_task, choice)  # fmt: skip
            except (ProjectError, TaskError, ScoringError, UnsafeNameError) as exc:
                error = exc.message
        view = pages.RunsView(
            project=self.name,
            runs=runs.run_choices(paths.results_dir),
            judges=store.judges,
            tasks=store.tasks,
            choice=dict(choice.params()) if choice is not None else {},
            comparison=comparison,
            saved=runs.saved_comparisons(paths.reports_dir),
            error=error,
        )
        return pages.runs_page(view)

    def _compare(self, params: dict[str, list[str]]) -> _Reply:
        """`/api/compare`: the chosen runs compared; 400 naming what is wrong and what exists."""
        paths = self.store.project.paths
        choice = runs.parse_run_choice(params)
        if choice is None:
            raise QueryError("a: name the two runs to compare (a=RUN&b=RUN).", field="a")
        try:
            found = runs.compared(paths.results_dir, paths.annotations_dir,
                                  self.store.project.eval_task, choice)  # fmt: skip
        except (ProjectError, TaskError, ScoringError, UnsafeNameError) as exc:
            parameter = _COMPARE_PARAMETERS.get(exc.field or "", exc.field)
            task = self.store.project.eval_task
            allowed = (
                runs.run_choices(paths.results_dir) if parameter in ("a", "b")
                else [t for t in task.task_names if task.task_kind(t) != "free_text"]
                if parameter == "task" and task is not None
                else runs.judges_of_runs(paths.results_dir, choice) if parameter == "judge"
                else []
            )  # fmt: skip
            message = exc.message
            if exc.problem is not None and parameter in _API_ADVICE:  # not a flag, not Python's
                message = f"{exc.problem}; {_API_ADVICE[parameter]}"
            for argument, own in (("run_a: ", "a: "), ("run_b: ", "b: ")):  # the API's names
                if message.startswith(argument):
                    message = own + message.removeprefix(argument)
            error = {"error": message, "parameter": parameter, "allowed": allowed}
            return 400, error, True
        return 200, found.to_json(), True

    def _summary_page(self) -> str:
        if not self.store.judges:
            return pages.message_page(
                self.name, "No judge results yet", "No judge has a complete run yet.", "/summary"
            )
        return pages.summary_page(self.name, api.summary_json(self.store))

    def _row(self, text: str, params: dict[str, list[str]], *, page: bool) -> _Reply:
        position = self.store.position_of(text)
        if position is None:
            return self._error(404, "No such row", f"No row has the id {text!r}.", not page)
        detail = api.row_detail(self.store, position, self.annotate_url)
        if not page:
            return 200, detail, True
        kept = [(k, v) for k in PARAMETERS for v in params.get(k, [])]
        back = "/" + ("?" + urlencode(kept) if kept else "")
        return 200, pages.row_page(self.name, detail, back), False

    def _error(self, status: int, title: str, message: str, is_api: bool) -> _Reply:
        if is_api:
            return status, {"error": message}, True
        return status, pages.message_page(self.name, title, message), False

    def _refused(self, refusal: Refusal, is_api: bool) -> _Reply:
        """The reply saying why the guard refused a request."""
        message = _REFUSALS.message(refusal, self.host)
        return self._error(refusal.status, refusal.title, message, is_api)
