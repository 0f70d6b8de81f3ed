"""Anthropic Message Batches over our own httpx client.

Create a batch with every request inline, poll it until `processing_status` is `ended`, then read
its results (JSONL, any order) back by custom id.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

import httpx

from meta_evaluator.llm._http import json_object, send
from meta_evaluator.llm.anthropic import DEFAULT_BASE_URL, AnthropicClient, parse_message
from meta_evaluator.llm.batch import (
    BatchNotIdentified,
    BatchResult,
    BatchStatus,
    id_of,
    jsonl_lines,
)
from meta_evaluator.llm.classify import CallFailed, MalformedResponse, Status
from meta_evaluator.llm.types import ChatRequest

__all__ = ["AnthropicBatchClient", "read_result_line"]

# Provider limits: 100,000 requests and 256 MB per batch; we keep a margin on the bytes.
MAX_REQUESTS = 100_000
MAX_BYTES = 240 * 1024 * 1024
_FIND_WINDOW = 3600.0  # seconds after the recorded submission a lost batch may have been created

_ERROR_STATUS: dict[str, tuple[int, Status]] = {
    "rate_limit_error": (429, "rate_limited"),
    "overloaded_error": (529, "http_error"),
    "api_error": (500, "http_error"),
    "invalid_request_error": (400, "http_error"),
    "authentication_error": (401, "http_error"),
    "permission_error": (403, "http_error"),
    "not_found_error": (404, "http_error"),
    "request_too_large": (413, "http_error"),
}


class AnthropicBatchClient:
    """Message batches at `base_url` (with or without a trailing `/v1`)."""

    provider = "anthropic"
    max_requests = MAX_REQUESTS
    max_bytes = MAX_BYTES

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 600.0,
        extra_headers: dict[str, str] | None = None,
    ) -> None:
        self._http = http
        self._messages = AnthropicClient(http, base_url=base_url, api_key=api_key)
        base = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self._root = f"{base if base.endswith('/v1') else base + '/v1'}/messages/batches"
        self._key = api_key
        self._timeout = timeout
        self._headers = {**self._messages.headers, **(extra_headers or {})}  # as live calls

    async def _call(
        self,
        method: str,
        url: str,
        content: bytes | None = None,
        query: dict[str, str] | None = None,
    ) -> httpx.Response:
        headers = self._headers
        if content is not None:
            headers = {**headers, "content-type": "application/json"}
        return await send(
            self._http,
            method,
            httpx.URL(url, params=query),
            headers=headers,
            timeout=self._timeout,
            content=content,
            secret=self._key,
        )

    def encode(self, request: ChatRequest) -> bytes:
        """The Messages body the live client would send."""
        return json.dumps(
            self._messages.body(request), ensure_ascii=False, separators=(",", ":")
        ).encode()

    def line(self, custom_id: str, body: bytes) -> bytes:
        """`{"custom_id", "params"}`: one entry of the batch's `requests` list."""
        return b"".join(
            (b'{"custom_id":', json.dumps(custom_id).encode(), b',"params":', body, b"}")
        )

    async def upload(self, lines: Sequence[bytes], key: str) -> str | None:
        """Nothing to upload: the requests go inline with the batch."""
        return None

    async def create(self, lines: Sequence[bytes], key: str, file_id: str | None) -> str:
        """POST the requests as one batch (the API has no metadata: `key` is in the custom ids)."""
        parts = [b'{"requests":[']
        for index, line in enumerate(lines):
            parts += (b",", line) if index else (line,)
        parts.append(b"]}")
        body = b"".join(parts)  # one copy of the lines, however many there are
        del parts
        created = json_object(await self._call("POST", self._root, body), self._key)
        return id_of(created, "creating the batch", self._key)

    async def find(self, key: str, since: str, count: int, known: set[str]) -> str | None:
        """The one unknown batch of `count` requests created within the hour after `since`.

        Message batches carry no metadata, so a batch is recognised by its time and size, among
        the batches no record of the project names (`known`).

        Raises:
            BatchNotIdentified: Several batches fit.
        """
        start = dt.datetime.fromisoformat(since).timestamp() - 60
        end = start + 60 + _FIND_WINDOW
        candidates: list[str] = []
        after: str | None = None
        for _ in range(50):
            query = {"limit": "100", **({"after_id": after} if after else {})}
            page = json_object(await self._call("GET", self._root, query=query), self._key)
            batches = [b for b in page.get("data") or [] if isinstance(b, dict)]
            oldest = None
            for batch in batches:
                created = _timestamp(batch.get("created_at"))
                if created is None:
                    continue
                oldest = created if oldest is None else min(oldest, created)
                total = sum(
                    v for v in (batch.get("request_counts") or {}).values() if isinstance(v, int)
                )
                batch_id = batch.get("id")
                if (
                    start <= created <= end
                    and total == count
                    and isinstance(batch_id, str)
                    and batch_id not in known
                ):
                    candidates.append(batch_id)
            if not page.get("has_more") or not batches or (oldest is not None and oldest < start):
                break
            after = page.get("last_id") or batches[-1].get("id")
        if len(candidates) > 1:
            raise BatchNotIdentified(
                f"batch {key}, submitted at {since} with {count} requests, was not saved with "
                f"its id, and {len(candidates)} batches at the provider could be it "
                f'({", ".join(candidates)}); put the right one\'s id as "batch_id" (and '
                '"status": "submitted") into its record in the run\'s .batches folder, or set '
                'its "status" to "abandoned" to submit its rows again.'
            )
        return candidates[0] if candidates else None

    async def status(self, batch_id: str) -> BatchStatus:
        """`in_progress` and `canceling` run; `ended` has results."""
        batch = json_object(await self._call("GET", f"{self._root}/{batch_id}"), self._key)
        raw = str(batch.get("processing_status"))
        counts = batch.get("request_counts")
        counts = (
            {k: v for k, v in counts.items() if isinstance(v, int)}
            if isinstance(counts, dict)
            else {}
        )
        if raw in ("in_progress", "canceling"):
            return BatchStatus("running", raw, counts)
        if raw == "ended":
            return BatchStatus("ended", raw, counts)
        raise MalformedResponse(f"batch {batch_id} has an unknown processing_status {raw!r}")

    async def results(self, batch_id: str) -> list[BatchResult]:
        """Every line of the batch's results (read from our own base URL, never another host)."""
        content = await self._call("GET", f"{self._root}/{batch_id}/results")
        found = []
        for raw in jsonl_lines(content.content):
            result = read_result_line(raw)
            if result is not None:
                found.append(result)
        return found

    async def cancel(self, batch_id: str) -> None:
        """POST `/messages/batches/{id}/cancel`."""
        await self._call("POST", f"{self._root}/{batch_id}/cancel")


def read_result_line(raw: bytes) -> BatchResult | None:
    """One results line as a result; None for a line without a custom id."""
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("custom_id"), str):
        return None
    custom_id = entry["custom_id"]
    result = entry.get("result")
    kind = result.get("type") if isinstance(result, dict) else None
    if kind == "succeeded":
        message = result.get("message") if isinstance(result, dict) else None
        try:
            if not isinstance(message, dict):
                raise MalformedResponse(f"the result holds no message: {str(result)[:200]}")
            return BatchResult(custom_id, response=parse_message(message))
        except MalformedResponse as exc:
            return BatchResult(custom_id, failure=exc)
    if kind == "expired":
        return BatchResult(
            custom_id, failure=CallFailed("the batch expired first", status="batch_expired")
        )
    if kind == "canceled":
        return BatchResult(
            custom_id, failure=CallFailed("the batch was canceled", status="batch_canceled")
        )
    if kind == "errored":
        return BatchResult(custom_id, failure=_errored(result))
    return BatchResult(
        custom_id, failure=CallFailed(f"unknown result type {kind!r}", status="batch_failed")
    )


def _errored(result: Any) -> CallFailed:
    """An `errored` result, classified like the live call's status would be."""
    error = result.get("error") if isinstance(result, dict) else None
    inner = error.get("error", error) if isinstance(error, dict) else {}
    kind = str(inner.get("type", "api_error")) if isinstance(inner, dict) else "api_error"
    message = inner.get("message", "") if isinstance(inner, dict) else ""
    http_status, status = _ERROR_STATUS.get(kind, (500, "http_error"))
    return CallFailed(
        f"{kind} in the batch: {str(message)[:300]}",
        status=status,
        http_status=http_status,
        retryable=http_status >= 500 or http_status == 429,
    )


def _timestamp(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
