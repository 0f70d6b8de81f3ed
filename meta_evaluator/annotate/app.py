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

Other sites are kept out, before the token is looked at:
- Bound to loopback, the `Host` header must be a loopback name (`localhost`, `127.0.0.1`,
  `[::1]` ...) at the server's port, else 421: a site whose DNS name was rebound to 127.0.0.1
  still sends its own name. Bound to any other address (which needs a token), any name is
  accepted: others reach the page under names the server cannot know (a LAN name, a proxy),
  and the token, which a foreign site does not have, is what keeps it out.
- A POST whose `Origin` (or, without one, `Referer`) is not this server's own address is
  refused with 403 (`Origin: null` too); requests without either (scripts, curl) are served.
- A body over `_MAX_BODY` bytes is refused with 413; nothing of it is saved.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, urlsplit

from meta_evaluator.annotate.pages import (
    done_page,
    index_page,
    message_page,
    row_page,
    summary_page,
)
from meta_evaluator.annotate.store import WEB_RUN, AnnotatorLabels
from meta_evaluator.errors import ProjectError, UnsafeNameError
from meta_evaluator.judge._parse import check_values
from meta_evaluator.storage import check_safe_name

if TYPE_CHECKING:
    from meta_evaluator.project import MetaEvaluator

__all__ = ["AnnotationApp"]

logger = logging.getLogger(__name__)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
_COOKIE = "meta_evaluator_token"
#: Hidden form field naming each multi-label task shown (so "none ticked" reaches the server).
_SHOWN = "_shown"
#: The largest request body read (bytes); a larger one is refused with 413.
_MAX_BODY = 1_000_000


class _TooLarge(Exception):
    """A request body over `_MAX_BODY`."""


class AnnotationApp:
    """ASGI app serving the annotation page of one project (its data and task).

    `host` and `port` are the address the server listens on (`port=None`: any port); they
    decide which `Host` headers are accepted (see the module docstring).
    """

    def __init__(
        self,
        evaluator: MetaEvaluator,
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
        self.data = evaluator.data
        self.task = evaluator.eval_task
        self.token = token
        self.host = host
        self.port = port
        self._annotators: dict[str, AnnotatorLabels] = {}
        self._rows = self.data.data.select(self.task.columns_shown()).to_dicts()
        self._ids = self.data.ids.to_list()

    # ----- plumbing ---------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one HTTP request (lifespan events are acknowledged)."""
        if scope["type"] == "lifespan":
            while True:
                event = await receive()
                if event["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif event["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        method, path = scope["method"], scope["path"]
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        extra: list[tuple[str, str]] = []
        if not self._host_allowed(headers.get("host")):
            shown = f"[{self.host}]" if ":" in self.host else self.host
            await _respond(send, 421, message_page("Wrong address", (
                f"This annotation page answers at {shown}:{self.port or '<port>'} (or localhost"
                " at that port) only, not at the name this request was sent to; open the "
                "address the server printed.")))  # fmt: skip
            return
        if self.token is not None:
            given = self._token_of(query, headers)
            if given is None or not hmac.compare_digest(given.encode(), self.token.encode()):
                await _respond(send, 401, message_page("Token needed", "Open the link with "
                               "?token=... that the project owner shared."))  # fmt: skip
                return
            if query.get("token"):
                extra.append(("set-cookie", f"{_COOKIE}={quote(self.token)}; HttpOnly; "
                              "SameSite=Strict; Path=/"))  # fmt: skip
        if method not in ("GET", "HEAD") and not _same_origin(headers):
            await _respond(send, 403, message_page("Refused", (
                "This request comes from another site, not from the annotation page itself; "
                "nothing was saved. Label rows on the page the server printed.")))  # fmt: skip
            return
        try:
            if _declared_length(headers) > _MAX_BODY:
                raise _TooLarge
            status, body, more = await self._route(method, path, query, receive)
        except UnsafeNameError as exc:
            status, body, more = 400, message_page("Not a valid annotator id", exc.message), []
        except _TooLarge:
            status, more = 413, []
            body = message_page("Too large", (
                f"The labels sent are too large (over {_MAX_BODY:,} bytes); nothing was saved. "
                "Shorten the free text and save again."))  # fmt: skip
        await _respond(send, status, body, [*extra, *more])

    def _host_allowed(self, host: str | None) -> bool:
        """Whether the `Host` header names this server (see the module docstring)."""
        if not _is_loopback(self.host):
            return True  # the token guards it (serve refuses a non-loopback host without one)
        if not host:
            return False
        name, _, port = host.lower().rpartition(":")
        if not name or name.endswith(":") or (name.startswith("[") != name.endswith("]")):
            name, port = host.lower(), ""  # no port given (a bare IPv6 literal is no name)
        if not port:
            port = "80"
        if self.port is not None and port != str(self.port):
            return False
        return _is_loopback(name.removeprefix("[").removesuffix("]"))

    def _token_of(self, query: dict[str, list[str]], headers: dict[str, str]) -> str | None:
        if query.get("token"):
            return query["token"][0]
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip()
        for part in headers.get("cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == _COOKIE:
                from urllib.parse import unquote

                return unquote(value)
        return None

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
            return 200, json.dumps(self._progress()), [("content-type", "application/json")]
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
                form = await _form(receive)
                return self._submit(labels, position, form)
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
        check_safe_name(annotator_id, field="annotator_id")
        if annotator_id not in self._annotators:
            self._annotators[annotator_id] = AnnotatorLabels(
                self.evaluator.paths.annotations_dir, annotator_id, self.data, self.task
            )
        return self._annotators[annotator_id]

    def _progress(self) -> dict[str, int]:
        counts = {a: len(labels.labelled()) for a, labels in self._annotators.items()}
        web = self.evaluator.paths.annotations_dir / "web"
        if web.is_dir():
            for state in web.glob("*_state.json"):
                annotator = state.name.removesuffix("_state.json")
                if annotator not in counts:
                    try:
                        counts[annotator] = len(self._labels(annotator).labelled())
                    except UnsafeNameError:
                        continue
        return dict(sorted(counts.items()))

    def _index(self) -> str:
        total = len(self._ids)
        return index_page(self._name, {a: (n, total) for a, n in self._progress().items()})

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

    def _submit(
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
        labels.save(position, checked.labels)
        logger.info("annotator=%s row=%s saved", labels.annotator_id, self._ids[position])
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


async def _form(receive: Receive) -> dict[str, list[str]]:
    """The form posted, read whole; raises _TooLarge past `_MAX_BODY` (nothing is cut)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > _MAX_BODY:
            raise _TooLarge
        chunks.append(chunk)
        if not message.get("more_body"):
            break
    return parse_qs(b"".join(chunks).decode("utf-8", errors="replace"), keep_blank_values=True)


def _declared_length(headers: dict[str, str]) -> int:
    """The `Content-Length` announced (0 without one; the server rejects malformed ones)."""
    value = headers.get("content-length", "").strip()
    return int(value) if value.isascii() and value.isdigit() else 0


def _same_origin(headers: dict[str, str]) -> bool:
    """Whether a request's `Origin` (else `Referer`) is the address it was sent to (`Host`).

    Browsers send `Origin` with every POST; a request with neither header is no browser's
    cross-site request (scripts, curl) and passes.
    """
    source = headers.get("origin") or headers.get("referer")
    if source is None:
        return True
    if source.strip().lower() == "null":
        return False
    try:
        netloc = urlsplit(source.strip()).netloc.rpartition("@")[2].lower()
    except ValueError:
        return False
    return bool(netloc) and netloc == headers.get("host", "").lower()


def _is_loopback(host: str) -> bool:
    """Whether `host` (a name or an IP address) is this machine's loopback."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def _respond(
    send: Send, status: int, body: str, headers: list[tuple[str, str]] | None = None
) -> None:
    names = {k for k, _ in headers or []}
    out = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers or []]
    if "content-type" not in names:
        out.append((b"content-type", b"text/html; charset=utf-8"))
    out.append((b"cache-control", b"no-store"))
    data = body.encode("utf-8")
    out.append((b"content-length", str(len(data)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": data})
