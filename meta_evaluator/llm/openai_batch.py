"""The OpenAI Batch API (and Azure OpenAI's, and compatible servers'), over our own httpx client.

Upload the request lines as a JSONL file (`purpose=batch`), create a batch over it, poll it,
then read its output file (answers) and error file (failed requests) back by custom id.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

import httpx

from meta_evaluator.llm._http import json_object, send
from meta_evaluator.llm.batch import BatchResult, BatchStatus, id_of, jsonl_lines
from meta_evaluator.llm.classify import CallFailed, MalformedResponse, Status
from meta_evaluator.llm.openai import DEFAULT_BASE_URL, OpenAIClient, parse_completion
from meta_evaluator.llm.types import ChatRequest

__all__ = ["OpenAIBatchClient", "read_output_line"]

# Provider limits: 50,000 requests and 200 MB per input file; we keep a margin on the bytes.
MAX_REQUESTS = 50_000
MAX_BYTES = 190 * 1024 * 1024
KEY_FIELD = "meta_evaluator_key"

_RUNNING = {"validating", "in_progress", "finalizing", "cancelling"}
_ENDED = {"completed", "expired", "cancelled"}


class OpenAIBatchClient:
    """Batches at `base_url`; with `azure_api_version`, an Azure OpenAI resource's batches."""

    provider = "openai"
    max_requests = MAX_REQUESTS
    max_bytes = MAX_BYTES

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        azure_api_version: str | None = None,
        timeout: float = 600.0,
        extra_headers: dict[str, str] | None = None,
    ) -> None:
        self._http = http
        self._chat = OpenAIClient(
            http, base_url=base_url, api_key=api_key, azure_api_version=azure_api_version
        )
        base = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self._azure_version = azure_api_version
        self._root = f"{base}/openai" if azure_api_version else base
        self._key = api_key
        self._timeout = timeout
        self._headers = {**self._chat.headers, **(extra_headers or {})}  # as live calls
        self._endpoint = "/chat/completions" if azure_api_version else "/v1/chat/completions"
        self._line_middle = f',"method":"POST","url":{json.dumps(self._endpoint)},"body":'.encode()

    def _url(self, path: str, **query: str) -> httpx.URL:
        if self._azure_version:
            query = {"api-version": self._azure_version, **query}
        return httpx.URL(f"{self._root}{path}", params=query or None)

    async def _call(self, method: str, url: httpx.URL, **kwargs: Any) -> httpx.Response:
        return await send(
            self._http,
            method,
            url,
            headers=self._headers,
            timeout=self._timeout,
            secret=self._key,
            **kwargs,
        )

    def encode(self, request: ChatRequest) -> bytes:
        """The chat completions body the live client would send."""
        return json.dumps(
            self._chat.body(request), ensure_ascii=False, separators=(",", ":")
        ).encode()

    def line(self, custom_id: str, body: bytes) -> bytes:
        """`{"custom_id", "method", "url", "body"}` as one JSON line."""
        return b"".join(
            (b'{"custom_id":', json.dumps(custom_id).encode(), self._line_middle, body, b"}")
        )

    async def upload(self, lines: Sequence[bytes], key: str) -> str | None:
        """Upload the lines as one JSONL file (`purpose=batch`); the file's id."""
        content = b"\n".join([*lines, b""])  # ends with a newline; one copy of the lines
        uploaded = json_object(
            await self._call(
                "POST",
                self._url("/files"),
                data={"purpose": "batch"},
                files={"file": (f"{key}.jsonl", content, "application/jsonl")},
            ),
            self._key,
        )
        return id_of(uploaded, "the file upload", self._key)

    async def create(self, lines: Sequence[bytes], key: str, file_id: str | None) -> str:
        """Create a batch over the uploaded file, with `key` in its metadata."""
        if file_id is None:
            raise ValueError("an OpenAI batch is created over an uploaded file")
        created = json_object(
            await self._call(
                "POST",
                self._url("/batches"),
                json_body={
                    "input_file_id": file_id,
                    "endpoint": self._endpoint,
                    "completion_window": "24h",
                    "metadata": {KEY_FIELD: key},
                },
            ),
            self._key,
        )
        return id_of(created, "creating the batch", self._key)

    async def find(self, key: str, since: str, count: int, known: set[str]) -> str | None:
        """The batch whose metadata carries `key` (listing newest first, back to `since`)."""
        floor = dt.datetime.fromisoformat(since).timestamp() - 3600
        after: str | None = None
        for _ in range(50):  # at most 5,000 batches back
            query = {"limit": "100", **({"after": after} if after else {})}
            page = json_object(await self._call("GET", self._url("/batches", **query)), self._key)
            batches = [b for b in page.get("data") or [] if isinstance(b, dict)]
            for batch in batches:
                metadata = batch.get("metadata") or {}
                if isinstance(metadata, dict) and metadata.get(KEY_FIELD) == key:
                    found = batch.get("id")
                    return found if isinstance(found, str) and found not in known else None
            created = [b.get("created_at") for b in batches]
            oldest = min((c for c in created if isinstance(c, int | float)), default=None)
            if not page.get("has_more") or not batches or (oldest is not None and oldest < floor):
                return None
            after = page.get("last_id") or batches[-1].get("id")
        return None

    async def status(self, batch_id: str) -> BatchStatus:
        """The batch's state: `failed` when the provider refused its input as a whole.

        `validating`, `in_progress`, `finalizing` and `cancelling` are running; `completed`,
        `expired` and `cancelled` have ended (results can be read).
        """
        batch = json_object(await self._call("GET", self._url(f"/batches/{batch_id}")), self._key)
        raw = str(batch.get("status"))
        counts = batch.get("request_counts")
        counts = (
            {k: v for k, v in counts.items() if isinstance(v, int)}
            if isinstance(counts, dict)
            else {}
        )
        if raw in _RUNNING:
            return BatchStatus("running", raw, counts)
        if raw in _ENDED:
            return BatchStatus("ended", raw, counts)
        if raw == "failed":
            errors = (
                (batch.get("errors") or {}).get("data")
                if isinstance(batch.get("errors"), dict)
                else None
            )
            messages = [
                f"line {e.get('line')}: {e.get('message')}"
                if e.get("line")
                else str(e.get("message"))
                for e in errors or []
                if isinstance(e, dict)
            ]
            return BatchStatus("failed", raw, counts, "; ".join(messages[:5]) or "failed")
        raise MalformedResponse(f"batch {batch_id} has an unknown status {raw!r}")

    async def results(self, batch_id: str) -> list[BatchResult]:
        """The output file's answers and the error file's failures."""
        batch = json_object(await self._call("GET", self._url(f"/batches/{batch_id}")), self._key)
        found: list[BatchResult] = []
        for field in ("output_file_id", "error_file_id"):
            file_id = batch.get(field)
            if not isinstance(file_id, str):
                continue
            content = await self._call("GET", self._url(f"/files/{file_id}/content"))
            for raw in jsonl_lines(content.content):
                result = read_output_line(raw)
                if result is not None:
                    found.append(result)
        return found

    async def cancel(self, batch_id: str) -> None:
        """POST `/batches/{id}/cancel`."""
        await self._call("POST", self._url(f"/batches/{batch_id}/cancel"))


def read_output_line(raw: bytes) -> BatchResult | None:
    """One line of an output or error file as a result; None for a line without a custom id."""
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("custom_id"), str):
        return None
    custom_id = entry["custom_id"]
    error = entry.get("error")
    response = entry.get("response")
    if isinstance(error, dict) and error:
        reason = str(error.get("code") or "")
        message = str(error.get("message") or reason or "failed")
        status: Status = (
            "batch_expired"
            if reason == "batch_expired"
            else "batch_canceled"
            if reason in ("batch_cancelled", "batch_canceled")
            else "batch_failed"
        )
        return BatchResult(custom_id, failure=CallFailed(f"{reason}: {message}", status=status))
    if not isinstance(response, dict):
        return BatchResult(
            custom_id,
            failure=CallFailed("the result line holds no response", status="batch_failed"),
        )
    code = response.get("status_code")
    body = response.get("body")
    if code == 200 or code is None:
        try:
            if not isinstance(body, dict):
                raise MalformedResponse(f"the response body is not an object: {str(body)[:200]}")
            return BatchResult(custom_id, response=parse_completion(body))
        except MalformedResponse as exc:
            return BatchResult(custom_id, failure=exc)
    return BatchResult(custom_id, failure=status_failure(code, body))


def status_failure(code: Any, body: Any) -> CallFailed:
    """A request the batch answered with a non-200 status, classified like a live call."""
    detail = body.get("error", body) if isinstance(body, dict) else body
    message = detail.get("message") if isinstance(detail, dict) else detail
    text = f"HTTP {code} in the batch: {str(message)[:300]}"
    if code == 429:
        return CallFailed(text, status="rate_limited", http_status=429)
    return CallFailed(
        text,
        status="http_error",
        http_status=code if isinstance(code, int) else None,
        retryable=isinstance(code, int) and (code >= 500 or code in (408, 409)),
    )
