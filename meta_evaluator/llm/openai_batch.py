"""The OpenAI Batch API (and Azure OpenAI's, and compatible servers'), over our own httpx client.

Upload the request lines as a JSONL file (`purpose=batch`), create a batch over it, poll it,
then read its output file (answers) and error file (failed requests) back by custom id.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any, Unpack

import httpx

from meta_evaluator.llm._endpoint import EndpointAddress
from meta_evaluator.llm.batch import (
    BatchClientBase,
    BatchOptions,
    BatchResult,
    BatchStatus,
    answered,
    read_line,
)
from meta_evaluator.llm.classify import CallFailed, MalformedResponse, Status
from meta_evaluator.llm.openai import OpenAIClient, parse_completion

__all__ = ["OpenAIBatchClient", "read_output_line"]

# Provider limits: 50,000 requests and 200 MB per input file; we keep a margin on the bytes.
MAX_REQUESTS = 50_000
MAX_BYTES = 190 * 1024 * 1024
KEY_FIELD = "meta_evaluator_key"

_RUNNING = {"validating", "in_progress", "finalizing", "cancelling"}
_ENDED = {"completed", "expired", "cancelled"}


class OpenAIBatchClient(BatchClientBase):
    """Batches at `base_url`; with `azure_api_version`, an Azure OpenAI resource's batches."""

    provider = "openai"
    max_requests = MAX_REQUESTS
    max_bytes = MAX_BYTES

    _live: OpenAIClient

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        azure_api_version: str | None = None,
        **options: Unpack[BatchOptions],
    ) -> None:
        self._azure_version = azure_api_version
        self._path = "/chat/completions" if azure_api_version else "/v1/chat/completions"
        self.line_middle = f',"method":"POST","url":{json.dumps(self._path)},"body":'.encode()
        super().__init__(http, **options)

    def _live_client(
        self, http: httpx.AsyncClient, **address: Unpack[EndpointAddress]
    ) -> OpenAIClient:
        return OpenAIClient(http, azure_api_version=self._azure_version, **address)

    def _url(self, path: str, **query: str) -> httpx.URL:
        return self._live.resource_url(path, **query)

    def _batch_url(self, batch_id: str, action: str = "") -> httpx.URL:
        return self._url(f"/batches/{batch_id}{action}")

    async def upload(self, lines: Sequence[bytes], key: str) -> str | None:
        """Upload the lines as one JSONL file (`purpose=batch`); the file's id."""
        content = b"\n".join([*lines, b""])  # ends with a newline; one copy of the lines
        return await self._created_id(
            "the file upload",
            "POST",
            self._url("/files"),
            data={"purpose": "batch"},
            files={"file": (f"{key}.jsonl", content, "application/jsonl")},
        )

    async def create(self, lines: Sequence[bytes], key: str, file_id: str | None) -> str:
        """Create a batch over the uploaded file, with `key` in its metadata."""
        if file_id is None:
            raise ValueError("an OpenAI batch is created over an uploaded file")
        return await self._created_id(
            "creating the batch",
            "POST",
            self._url("/batches"),
            json_body={
                "input_file_id": file_id,
                "endpoint": self._path,
                "completion_window": "24h",
                "metadata": {KEY_FIELD: key},
            },
        )

    async def find(self, key: str, since: str, count: int, known: set[str]) -> str | None:
        """The batch whose metadata carries `key` (listing newest first, back to `since`)."""
        floor = dt.datetime.fromisoformat(since).timestamp() - 3600

        async def page(after: str | None) -> dict[str, Any]:
            query = {"limit": "100", **({"after": after} if after else {})}
            return await self._endpoint.send_json("GET", self._url("/batches", **query))

        def ours(batch: dict[str, Any]) -> bool:
            metadata = batch.get("metadata") or {}
            return isinstance(metadata, dict) and metadata.get(KEY_FIELD) == key

        listed = await self._listed(page, created=_created, floor=floor, until=ours)
        if not listed or not ours(listed[-1]):
            return None
        found = listed[-1].get("id")
        return found if isinstance(found, str) and found not in known else None

    async def status(self, batch_id: str) -> BatchStatus:
        """The batch's state: `failed` when the provider refused its input as a whole.

        `validating`, `in_progress`, `finalizing` and `cancelling` are running; `completed`,
        `expired` and `cancelled` have ended (results can be read).
        """
        batch = await self._batch(batch_id)
        raw = str(batch.get("status"))
        counts = self._counts(batch)
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
        batch = await self._batch(batch_id)
        found: list[BatchResult] = []
        for field in ("output_file_id", "error_file_id"):
            file_id = batch.get(field)
            if not isinstance(file_id, str):
                continue
            found += await self._read_results(
                self._url(f"/files/{file_id}/content"), read_output_line
            )
        return found


def read_output_line(raw: bytes) -> BatchResult | None:
    """One line of an output or error file as a result; None for a line without a custom id."""
    return read_line(raw, _read_entry)


def _read_entry(custom_id: str, entry: dict[str, Any]) -> BatchResult:
    """`{"custom_id", "response": {"status_code", "body"}, "error"}`: an answer or a failure."""
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
        return answered(
            custom_id,
            body,
            parse_completion,
            missing="the response body is not an object",
            shown=body,
        )
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


def _created(batch: dict[str, Any]) -> float | None:
    """When a batch was created (its `created_at`, seconds since the epoch)."""
    value = batch.get("created_at")
    return value if isinstance(value, int | float) else None
