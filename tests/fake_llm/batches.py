"""The batch endpoints of the fake LLM server: OpenAI Files + Batch API, Anthropic Message Batches.

State lives in memory for the server's life (a client may die and reconnect; the server does
not). A batch ends `batch_seconds` after it was created; its requests are then answered exactly
as the live endpoints would answer them (same deterministic answers), each drawing the same
faults from the server's fault RNG: 429 and 500 become failed requests, `malformed` a 200 whose
body lacks the expected shape; `batch_expire_rate` expires requests. A model in
`fail_status_for_model` fails an OpenAI batch's validation, and errors each Anthropic request.

Endpoints (OpenAI under /v1, Azure OpenAI under /openai with ?api-version=, Anthropic under
/v1/messages/batches):
    POST /v1/files (multipart: purpose, file)   GET /v1/files/{id}/content
    POST /v1/batches   GET /v1/batches[?after&limit]   GET /v1/batches/{id}
    POST /v1/batches/{id}/cancel
    POST /v1/messages/batches   GET /v1/messages/batches[?after_id&limit]
    GET /v1/messages/batches/{id}   GET /v1/messages/batches/{id}/results
    POST /v1/messages/batches/{id}/cancel
"""

from __future__ import annotations

import datetime as dt
import email.parser
import email.policy
import json
import random
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

Reply = tuple[int, Any]  # status, JSON object (or bytes for a JSONL body)


def _iso(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat().replace("+00:00", "Z")


@dataclass
class _Batch:
    id: str
    api: str  # "openai" | "anthropic"
    created: float
    ends: float
    requests: list[tuple[str, dict[str, Any]]]  # (custom_id, body)
    input_file_id: str | None = None
    endpoint: str = "/v1/chat/completions"
    metadata: dict[str, Any] = field(default_factory=dict)
    failed: list[dict[str, Any]] = field(default_factory=list)  # validation errors (OpenAI)
    canceled_at: float | None = None
    results: list[dict[str, Any]] | None = None  # computed once, when it ends
    output_file_id: str | None = None
    error_file_id: str | None = None


class BatchEngine:
    """Files and batches of one server; `parse` and `answer` are the live endpoints' own."""

    def __init__(
        self,
        config: Any,
        fault_rng: random.Random,
        *,
        parse: Callable[[str, Any], Any],
        answer: Callable[[Any, int], tuple[dict[str, Any], str]],
        on_prompt: Callable[[str], None],
    ) -> None:
        self.config = config
        self.rng = fault_rng
        self.parse = parse
        self.answer = answer
        self.on_prompt = on_prompt
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, _Batch] = {}
        self.serial = 0
        self.create_calls = 0
        self.counts: Counter[str] = Counter()

    def stats(self) -> dict[str, Any]:
        """Counters: files uploaded, batches created, requests answered in batches, polls..."""
        return dict(self.counts)

    # -- routing

    def handle(
        self, method: str, path: str, query: dict[str, str], body: bytes, headers: dict[str, str]
    ) -> Reply | None:
        """The reply to a batch endpoint, or None when `path` is not one."""
        parts = path.strip("/").split("/")
        if parts[:2] in (["openai", "files"], ["openai", "batches"]):
            if "api-version" not in query:  # Azure OpenAI: the same API under /openai
                return 404, {"error": {"code": "404", "message": "api-version is required"}}
            parts = ["v1", *parts[1:]]
        if parts[:3] == ["v1", "messages", "batches"]:
            rest = parts[3:]
            if not rest:
                if method == "POST":
                    return self._anthropic_create(body)
                if method == "GET":
                    return self._list("anthropic", query)
            elif len(rest) == 1 and method == "GET":
                return self._with_batch(rest[0], "anthropic", self._anthropic_object)
            elif len(rest) == 2 and rest[1] == "results" and method == "GET":
                return self._with_batch(rest[0], "anthropic", self._anthropic_results)
            elif len(rest) == 2 and rest[1] == "cancel" and method == "POST":
                return self._with_batch(rest[0], "anthropic", self._cancel)
            return 405, {"error": {"message": f"{method} {path}"}}
        if parts[:2] == ["v1", "files"]:
            if len(parts) == 2 and method == "POST":
                return self._upload(body, headers)
            if len(parts) == 4 and parts[3] == "content" and method == "GET":
                content = self.files.get(parts[2])
                if content is None:
                    return 404, {"error": {"message": f"no file {parts[2]}"}}
                self.counts["downloads"] += 1
                return 200, content
            return 405, {"error": {"message": f"{method} {path}"}}
        if parts[:2] == ["v1", "batches"]:
            rest = parts[2:]
            if not rest:
                if method == "POST":
                    return self._openai_create(body)
                if method == "GET":
                    return self._list("openai", query)
            elif len(rest) == 1 and method == "GET":
                return self._with_batch(rest[0], "openai", self._openai_object)
            elif len(rest) == 2 and rest[1] == "cancel" and method == "POST":
                return self._with_batch(rest[0], "openai", self._cancel)
            return 405, {"error": {"message": f"{method} {path}"}}
        return None

    def _with_batch(self, batch_id: str, api: str, then: Callable[[_Batch], Reply]) -> Reply:
        batch = self.batches.get(batch_id)
        if batch is None or batch.api != api:
            return 404, {"error": {"type": "not_found_error", "message": f"no batch {batch_id}"}}
        self.counts["polls"] += 1
        self._settle(batch)
        return then(batch)

    # -- OpenAI

    def _upload(self, body: bytes, headers: dict[str, str]) -> Reply:
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {headers.get('content-type', '')}\r\n\r\n".encode() + body
        )
        if not message.is_multipart():
            return 400, {"error": {"message": "expected multipart/form-data"}}
        fields: dict[str, bytes] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            if isinstance(name, str) and isinstance(payload, bytes):
                fields[name] = payload
        if fields.get("purpose") != b"batch" or "file" not in fields:
            return 400, {"error": {"message": "need purpose=batch and a file"}}
        self.serial += 1
        file_id = f"file-{self.serial}"
        self.files[file_id] = fields["file"]
        self.counts["files_uploaded"] += 1
        self.counts["bytes_uploaded"] += len(fields["file"])
        return 200, {
            "id": file_id,
            "object": "file",
            "bytes": len(fields["file"]),
            "created_at": int(time.time()),
            "filename": "batch.jsonl",
            "purpose": "batch",
        }

    def _create_fault(self) -> Reply | None:
        self.create_calls += 1
        if self.create_calls <= self.config.batch_create_failures:
            return 500, {"error": {"type": "api_error", "message": "create failed (fake)"}}
        return None

    def _openai_create(self, raw: bytes) -> Reply:
        if (fault := self._create_fault()) is not None:
            return fault
        try:
            body = json.loads(raw)
        except ValueError:
            return 400, {"error": {"message": "body is not JSON"}}
        file_id = body.get("input_file_id")
        content = self.files.get(file_id)
        if content is None:
            return 400, {"error": {"message": f"no input file {file_id!r}"}}
        endpoint = body.get("endpoint")
        requests, errors, models, seen = [], [], set(), set()
        for number, line in enumerate(content.splitlines(), start=1):
            try:
                entry = json.loads(line)
                custom_id, request_body = entry["custom_id"], entry["body"]
                if entry.get("url") != endpoint or entry.get("method") != "POST":
                    raise ValueError(f"url must be {endpoint} and method POST")
                if custom_id in seen:
                    raise ValueError(f"custom_id {custom_id} is repeated")
            except (ValueError, KeyError, TypeError) as exc:
                errors.append({"code": "invalid_request", "message": str(exc), "line": number})
                continue
            seen.add(custom_id)
            models.add(request_body.get("model"))
            requests.append((custom_id, request_body))
        if len(models) > 1:
            errors.append({"code": "mixed_models", "message": "lines name several models"})
        failing = [m for m in models if m in self.config.fail_status_for_model]
        if failing:
            errors.append({"code": "model_not_found", "message": f"model {failing[0]!r} fails"})
        batch = self._new("openai", requests, metadata=body.get("metadata") or {})
        batch.input_file_id = file_id
        batch.endpoint = str(endpoint)
        batch.failed = errors
        return 200, self._openai_object(batch)[1]

    def _openai_object(self, batch: _Batch) -> Reply:
        total = len(batch.requests)
        if batch.failed:
            status = "failed"
        elif batch.results is None:
            status = "cancelling" if batch.canceled_at else "in_progress"
        elif batch.canceled_at is not None:
            status = "cancelled"
        elif any(r.get("kind") == "expired" for r in batch.results):
            status = "expired"
        else:
            status = "completed"
        done = [r for r in batch.results or [] if r["kind"] == "answer"]
        return 200, {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "errors": {"object": "list", "data": batch.failed} if batch.failed else None,
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": status,
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "created_at": int(batch.created),
            "request_counts": {
                "total": total,
                "completed": len(done),
                "failed": len(batch.results or []) - len(done),
            },
            "metadata": batch.metadata,
        }

    # -- Anthropic

    def _anthropic_create(self, raw: bytes) -> Reply:
        if (fault := self._create_fault()) is not None:
            return fault
        try:
            body = json.loads(raw)
            entries = body["requests"]
            requests, seen = [], set()
            for entry in entries:
                custom_id, params = entry["custom_id"], entry["params"]
                if not isinstance(custom_id, str) or not _CUSTOM_ID.match(custom_id):
                    raise ValueError(f"custom_id {custom_id!r} does not match {_CUSTOM_ID.pattern}")
                if custom_id in seen:
                    raise ValueError(f"custom_id {custom_id} is repeated")
                if "max_tokens" not in params or "model" not in params:
                    raise ValueError("params need model and max_tokens")
                seen.add(custom_id)
                requests.append((custom_id, params))
        except (ValueError, KeyError, TypeError) as exc:
            return 400, {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": str(exc)},
            }
        return 200, self._anthropic_object(self._new("anthropic", requests))[1]

    def _anthropic_object(self, batch: _Batch) -> Reply:
        kinds = Counter(r["kind"] for r in batch.results or [])
        ended = batch.results is not None
        return 200, {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended"
            if ended
            else "canceling"
            if batch.canceled_at
            else "in_progress",
            "request_counts": {
                "processing": 0 if ended else len(batch.requests),
                "succeeded": kinds["answer"],
                "errored": kinds["error"],
                "canceled": kinds["canceled"],
                "expired": kinds["expired"],
            },
            "created_at": _iso(batch.created),
            "ended_at": _iso(batch.ends) if ended else None,
            "expires_at": _iso(batch.created + 86400),
            "cancel_initiated_at": _iso(batch.canceled_at) if batch.canceled_at else None,
            "archived_at": None,
            "results_url": f"/v1/messages/batches/{batch.id}/results" if ended else None,
        }

    def _anthropic_results(self, batch: _Batch) -> Reply:
        if batch.results is None:
            return 400, {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": "not ended"},
            }
        self.counts["downloads"] += 1
        lines = []
        for result in batch.results:
            kind = result["kind"]
            if kind == "answer":
                entry = {"type": "succeeded", "message": result["body"]}
            elif kind == "error":
                entry = {
                    "type": "errored",
                    "error": {
                        "type": "error",
                        "error": {"type": result["error_type"], "message": result["message"]},
                    },
                }
            else:
                entry = {"type": kind}
            lines.append(json.dumps({"custom_id": result["custom_id"], "result": entry}))
        random.Random(batch.id).shuffle(lines)  # results come in any order
        return 200, ("\n".join(lines) + "\n").encode()

    # -- both

    def _new(
        self,
        api: str,
        requests: list[tuple[str, dict[str, Any]]],
        metadata: dict[str, Any] | None = None,
    ) -> _Batch:
        self.serial += 1
        prefix = "batch_" if api == "openai" else "msgbatch_"
        now = time.time()
        batch = _Batch(
            f"{prefix}{self.serial:06d}",
            api,
            now,
            now + self.config.batch_seconds,
            requests,
            metadata=metadata or {},
        )
        self.batches[batch.id] = batch
        self.counts["batches_created"] += 1
        self.counts["requests_submitted"] += len(requests)
        return batch

    def _list(self, api: str, query: dict[str, str]) -> Reply:
        limit = int(query.get("limit", "20"))
        after = query.get("after") or query.get("after_id")
        mine = sorted(
            (b for b in self.batches.values() if b.api == api), key=lambda b: b.id, reverse=True
        )
        if after:
            mine = [b for b in mine if b.id < after]
        page = mine[:limit]
        for batch in page:
            self._settle(batch)
        render = self._openai_object if api == "openai" else self._anthropic_object
        data = [render(b)[1] for b in page]
        return 200, {
            "object": "list",
            "data": data,
            "first_id": page[0].id if page else None,
            "last_id": page[-1].id if page else None,
            "has_more": len(mine) > limit,
        }

    def _cancel(self, batch: _Batch) -> Reply:
        if batch.results is None and batch.canceled_at is None:
            batch.canceled_at = time.time()
            batch.ends = min(batch.ends, batch.canceled_at)
        self._settle(batch)
        render = self._openai_object if batch.api == "openai" else self._anthropic_object
        return render(batch)

    def _settle(self, batch: _Batch) -> None:
        """Answer the batch's requests once its time has come (or it was canceled)."""
        if batch.results is not None or batch.failed or time.time() < batch.ends:
            return
        results = []
        for custom_id, body in batch.requests:
            if batch.canceled_at is not None:
                results.append({"custom_id": custom_id, "kind": "canceled"})
                continue
            results.append(self._answer_one(batch.api, custom_id, body))
        batch.results = results
        if batch.api == "openai":
            self._write_openai_files(batch)

    def _answer_one(self, api: str, custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
        parsed = self.parse(api, body)
        self.on_prompt(parsed.prompt)
        self.counts["requests_answered"] += 1
        fault = None
        draw = self.rng.random()
        edge = 0.0
        for name, kind in (
            ("rate_429", "429"),
            ("rate_500", "500"),
            ("rate_malformed", "malformed"),
            ("batch_expire_rate", "expired"),
        ):
            edge += getattr(self.config, name)
            if draw < edge:
                fault = kind
                break
        status = self.config.fail_status_for_model.get(parsed.model)
        if status is not None:
            return {
                "custom_id": custom_id,
                "kind": "error",
                "status": status,
                "error_type": "not_found_error" if status == 404 else "api_error",
                "message": f"model {parsed.model!r} fails",
            }
        if fault == "expired":
            return {"custom_id": custom_id, "kind": "expired"}
        if fault == "429":
            return {
                "custom_id": custom_id,
                "kind": "error",
                "status": 429,
                "error_type": "rate_limit_error",
                "message": "rate limited (fake)",
            }
        if fault == "500":
            return {
                "custom_id": custom_id,
                "kind": "error",
                "status": 500,
                "error_type": "api_error",
                "message": "internal error (fake)",
            }
        self.serial += 1
        answer, _ = self.answer(parsed, self.serial)
        if fault == "malformed":
            answer = {"unexpected": "shape"}
        return {"custom_id": custom_id, "kind": "answer", "body": answer}

    def _write_openai_files(self, batch: _Batch) -> None:
        output, errors = [], []
        assert batch.results is not None
        for n, result in enumerate(batch.results):
            kind, custom_id = result["kind"], result["custom_id"]
            request_id = f"req_{batch.id}_{n}"
            if kind == "answer":
                output.append(
                    {
                        "id": f"batch_req_{n}",
                        "custom_id": custom_id,
                        "response": {
                            "status_code": 200,
                            "request_id": request_id,
                            "body": result["body"],
                        },
                        "error": None,
                    }
                )
            elif kind == "error":
                errors.append(
                    {
                        "id": f"batch_req_{n}",
                        "custom_id": custom_id,
                        "response": {
                            "status_code": result["status"],
                            "request_id": request_id,
                            "body": {
                                "error": {
                                    "message": result["message"],
                                    "type": result["error_type"],
                                }
                            },
                        },
                        "error": None,
                    }
                )
            elif kind == "expired":
                errors.append(
                    {
                        "id": f"batch_req_{n}",
                        "custom_id": custom_id,
                        "response": None,
                        "error": {
                            "code": "batch_expired",
                            "message": "not executed before the completion window expired",
                        },
                    }
                )
            # canceled requests are in neither file
        for lines, attribute in ((output, "output_file_id"), (errors, "error_file_id")):
            if lines:
                self.serial += 1
                file_id = f"file-{self.serial}"
                self.files[file_id] = "".join(json.dumps(line) + "\n" for line in lines).encode()
                setattr(batch, attribute, file_id)
