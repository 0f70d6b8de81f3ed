"""Anthropic Message Batches over our own httpx client.

Create a batch with every request inline, poll it until `processing_status` is `ended`, then read
its results (JSONL, any order) back by custom id.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Sequence
from typing import Any, Unpack

import httpx

from meta_evaluator.llm._endpoint import EndpointAddress
from meta_evaluator.llm.anthropic import AnthropicClient, parse_message
from meta_evaluator.llm.batch import (
    BatchClientBase,
    BatchNotIdentified,
    BatchResult,
    BatchStatus,
    answered,
    read_line,
)
from meta_evaluator.llm.classify import CallFailed, MalformedResponse, Status

__all__ = ["AnthropicBatchClient", "read_result_line"]

# Provider limits: 100,000 requests and 256 MB per batch; we keep a margin on the bytes.
MAX_REQUESTS = 100_000
MAX_BYTES = 240 * 1024 * 1024
_JSON = {"content-type": "application/json"}  # the batch body is built as bytes
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


class AnthropicBatchClient(BatchClientBase):
    """Message batches at `base_url` (with or without a trailing `/v1`)."""

    provider = "anthropic"
    max_requests = MAX_REQUESTS
    max_bytes = MAX_BYTES

    line_middle = b',"params":'

    def _live_client(
        self, http: httpx.AsyncClient, **address: Unpack[EndpointAddress]
    ) -> AnthropicClient:
        return AnthropicClient(http, **address)

    @functools.cached_property
    def _root(self) -> str:
        return f"{self._endpoint.base}/messages/batches"

    def _batch_url(self, batch_id: str, action: str = "") -> str:
        return f"{self._root}/{batch_id}{action}"

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
        return await self._created_id(
            "creating the batch", "POST", self._root, extra_headers=_JSON, content=body
        )

    async def find(self, key: str, since: str, count: int, known: set[str]) -> str | None:
        """The one unknown batch of `count` requests created within the hour after `since`.

        Message batches carry no metadata, so a batch is recognised by its time and size, among
        the batches no record of the project names (`known`).

        Raises:
            BatchNotIdentified: Several batches fit.
        """
        start = dt.datetime.fromisoformat(since).timestamp() - 60
        end = start + 60 + _FIND_WINDOW

        async def page(after: str | None) -> dict[str, Any]:
            query = {"limit": "100", **({"after_id": after} if after else {})}
            return await self._endpoint.send_json("GET", httpx.URL(self._root, params=query))

        candidates: list[str] = []
        for batch in await self._listed(page, created=_created, floor=start):
            created = _created(batch)
            batch_id = batch.get("id")
            if (
                created is not None
                and start <= created <= end
                and sum(self._counts(batch).values()) == count
                and isinstance(batch_id, str)
                and batch_id not in known
            ):
                candidates.append(batch_id)
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
        batch = await self._batch(batch_id)
        raw = str(batch.get("processing_status"))
        counts = self._counts(batch)
        if raw in ("in_progress", "canceling"):
            return BatchStatus("running", raw, counts)
        if raw == "ended":
            return BatchStatus("ended", raw, counts)
        raise MalformedResponse(f"batch {batch_id} has an unknown processing_status {raw!r}")

    async def results(self, batch_id: str) -> list[BatchResult]:
        """Every line of the batch's results (read from our own base URL, never another host)."""
        return await self._read_results(self._batch_url(batch_id, "/results"), read_result_line)


def read_result_line(raw: bytes) -> BatchResult | None:
    """One results line as a result; None for a line without a custom id."""
    return read_line(raw, _read_entry)


def _read_entry(custom_id: str, entry: dict[str, Any]) -> BatchResult:
    """`{"custom_id", "result": {"type": succeeded | errored | canceled | expired, ...}}`."""
    result = entry.get("result")
    kind = result.get("type") if isinstance(result, dict) else None
    if kind == "succeeded":
        message = result.get("message") if isinstance(result, dict) else None
        return answered(
            custom_id, message, parse_message, missing="the result holds no message", shown=result
        )
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


def _created(batch: dict[str, Any]) -> float | None:
    """When a message batch was created (its ISO `created_at`), in seconds since the epoch."""
    value = batch.get("created_at")
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
