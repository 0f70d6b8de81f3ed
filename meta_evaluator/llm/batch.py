"""Provider batch engines (OpenAI Batch, Anthropic Message Batches): what they have in common.

A batch client turns chat requests into the provider's batch lines, submits them as one batch,
reports the batch's state, and reads its results back as one `BatchResult` per request: the
response, or the failure that the runner classifies like any failed call.

`BatchClient` is what the runner relies on; `BatchClientBase` is what both providers' clients
share (their live client's endpoint and bodies, batch lines, cancelling, listing, reading
results files), so each provider's module holds only what its API does differently.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Unpack

import httpx

from meta_evaluator.llm._endpoint import Endpoint, EndpointAddress
from meta_evaluator.llm._http import compact_json, redact
from meta_evaluator.llm.classify import CallFailed, MalformedResponse
from meta_evaluator.llm.types import ChatRequest, ChatResponse

__all__ = [
    "BatchClient",
    "BatchClientBase",
    "BatchNotIdentified",
    "BatchOptions",
    "BatchResult",
    "BatchStatus",
    "answered",
    "id_of",
    "jsonl_lines",
    "read_line",
]

BatchState = Literal["running", "ended", "failed"]


@dataclass(frozen=True)
class BatchStatus:
    """Where a submitted batch stands.

    `running`: still processing; `ended`: results can be read (some may be failures);
    `failed`: the provider refused the batch as a whole and no result will come.
    """

    state: BatchState
    provider_status: str
    counts: dict[str, int] = field(default_factory=dict)
    message: str | None = None


@dataclass(frozen=True)
class BatchResult:
    """The outcome of one request of a batch: a response, or why there is none."""

    custom_id: str
    response: ChatResponse | None = None
    failure: CallFailed | None = None


class BatchNotIdentified(Exception):
    """A batch whose id was lost matches several batches at the provider.

    Which one is ours cannot be told, so nothing is submitted again until the user says.
    """


class BatchClient(Protocol):
    """What the runner needs of a provider's batch engine."""

    provider: str
    max_requests: int
    """Most requests one batch may hold."""
    max_bytes: int
    """Most bytes of request lines one batch may hold."""

    def encode(self, request: ChatRequest) -> bytes:
        """The request's body as the provider takes it (UTF-8 JSON), serialised once."""
        ...

    def line(self, custom_id: str, body: bytes) -> bytes:
        """One batch line (UTF-8 JSON, no newline) of an `encode`d body under `custom_id`."""
        ...

    async def upload(self, lines: Sequence[bytes], key: str) -> str | None:
        """Upload the lines where the provider wants a file first: its id (None: no upload).

        Safe to retry: a lost answer leaves at most an unused file.
        """
        ...

    async def create(self, lines: Sequence[bytes], key: str, file_id: str | None) -> str:
        """Create one batch of `lines` (or of the uploaded file); its id.

        Tagged with our `key` where the provider allows. Not safe to retry blindly (a lost
        answer would make a second batch): see the runner.
        """
        ...

    async def find(self, key: str, since: str, count: int, known: set[str]) -> str | None:
        """The id of a batch submitted under `key`, none of `known`, or None.

        For a run killed between submitting a batch and saving its id: the batch was submitted
        at about `since` (ISO time) with `count` requests.

        Raises:
            BatchNotIdentified: Several batches could be it.
        """
        ...

    async def status(self, batch_id: str) -> BatchStatus:
        """The batch's state and counts."""
        ...

    async def results(self, batch_id: str) -> list[BatchResult]:
        """Every result an ended batch holds (requests without one are absent)."""
        ...

    async def cancel(self, batch_id: str) -> None:
        """Ask the provider to stop the batch."""
        ...


class LiveClient(Protocol):
    """What a batch client takes from its provider's live client: endpoint and request body."""

    endpoint: Endpoint

    def body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body a live call of `request` sends."""
        ...


class BatchOptions(EndpointAddress, total=False):
    """The options every batch client takes: its live client's address, timeout, headers."""

    timeout: float
    """Seconds one batch call (an upload, a poll, a download) may take."""
    extra_headers: dict[str, str] | None
    """Headers sent with every batch call, as the judge's live calls send them."""


class BatchClientBase(ABC):
    """What both providers' batch clients do alike: they talk to their live client's endpoint.

    Batch calls carry the live calls' headers (the key, `extra_headers`) under their own,
    longer timeout; a request's body is the one a live call would send, serialised once, and
    framed into a batch line around the provider's `line_middle`.
    """

    line_middle: bytes
    """What stands between a batch line's custom id and its body (`,"params":` ...)."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        timeout: float = 600.0,
        extra_headers: dict[str, str] | None = None,
        **address: Unpack[EndpointAddress],
    ) -> None:
        self._live = self._live_client(http, **address)
        self._endpoint = self._live.endpoint.derive(timeout=timeout, extra_headers=extra_headers)

    def encode(self, request: ChatRequest) -> bytes:
        """The body the live client would send, as compact UTF-8 JSON."""
        return compact_json(self._live.body(request))

    def line(self, custom_id: str, body: bytes) -> bytes:
        """`{"custom_id": ...<line_middle><body>}`: one batch line, the body inserted as is."""
        return b"".join(
            (b'{"custom_id":', json.dumps(custom_id).encode(), self.line_middle, body, b"}")
        )

    async def cancel(self, batch_id: str) -> None:
        """Ask the provider to stop the batch (POST `<batch>/cancel`)."""
        await self._endpoint.send("POST", self._batch_url(batch_id, "/cancel"))

    @abstractmethod
    def _live_client(
        self, http: httpx.AsyncClient, **address: Unpack[EndpointAddress]
    ) -> LiveClient:
        """The provider's live client at `address`, whose endpoint and bodies batch calls use."""

    @abstractmethod
    def _batch_url(self, batch_id: str, action: str = "") -> httpx.URL | str:
        """The URL of batch `batch_id`, or of one of its `action`s (`/cancel`, `/results`)."""

    async def _batch(self, batch_id: str) -> dict[str, Any]:
        """The provider's record of batch `batch_id` (status, counts, files)."""
        return await self._endpoint.send_json("GET", self._batch_url(batch_id))

    @staticmethod
    def _counts(batch: dict[str, Any]) -> dict[str, int]:
        """A batch's `request_counts` (succeeded, errored ...), the integer ones only."""
        counts = batch.get("request_counts")
        if not isinstance(counts, dict):
            return {}
        return {k: v for k, v in counts.items() if isinstance(v, int)}

    @staticmethod
    async def _listed(
        fetch: Callable[[str | None], Awaitable[dict[str, Any]]],
        *,
        created: Callable[[dict[str, Any]], float | None],
        floor: float,
        until: Callable[[dict[str, Any]], bool] = lambda batch: False,
    ) -> list[dict[str, Any]]:
        """The provider's batches, newest first, back to the page that reaches before `floor`.

        `fetch(after)` returns one page of the list (`data`, `has_more`, `last_id`) after the
        cursor `after` (None: the first page); `created` reads a batch's creation time (seconds
        since the epoch). Listing stops early at the first batch `until` accepts (it is the last
        returned), and after 50 pages at most (5,000 batches back at 100 a page).
        """
        listed: list[dict[str, Any]] = []
        after: str | None = None
        for _ in range(50):
            page = await fetch(after)
            batches = [b for b in page.get("data") or [] if isinstance(b, dict)]
            for batch in batches:
                listed.append(batch)
                if until(batch):
                    return listed
            times = [t for t in map(created, batches) if t is not None]
            if not page.get("has_more") or not batches or (times and min(times) < floor):
                break
            after = page.get("last_id") or batches[-1].get("id")
        return listed

    async def _created_id(self, what: str, method: str, url: httpx.URL | str, **kwargs: Any) -> str:
        """Send a request that makes something (a file, a batch); the id of what it made."""
        return id_of(
            await self._endpoint.send_json(method, url, **kwargs), what, self._endpoint.key
        )

    async def _read_results(
        self, url: httpx.URL | str, read: Callable[[bytes], BatchResult | None]
    ) -> list[BatchResult]:
        """Every result in the JSON Lines file at `url` (on our own endpoint, never elsewhere)."""
        content = (await self._endpoint.send("GET", url)).content
        found = []
        for raw in jsonl_lines(content):
            result = read(raw)
            if result is not None:
                found.append(result)
        return found


def jsonl_lines(data: bytes) -> Iterator[bytes]:
    """The non-blank lines of a JSON Lines body, one at a time (no list of them all)."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        if end < 0:
            end = len(data)
        line = data[start:end]
        if line.strip():
            yield line
        start = end + 1


def id_of(answer: dict[str, Any], what: str, secret: str | None) -> str:
    """The `id` of what the provider made (a file, a batch).

    Raises:
        MalformedResponse: The answer has no string `id` (shown without `secret`).
    """
    made = answer.get("id")
    if not isinstance(made, str):
        raise MalformedResponse(f"{what} answered no id: {redact(str(answer)[:200], secret)}")
    return made


def read_line(raw: bytes, read: Callable[[str, dict[str, Any]], BatchResult]) -> BatchResult | None:
    """One results line as a result, the entry read by `read(custom_id, entry)`.

    None for a line that is not a JSON object with a string `custom_id`: no request of ours.
    """
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("custom_id"), str):
        return None
    return read(entry["custom_id"], entry)


def answered(
    custom_id: str,
    answer: Any,
    parse: Callable[[dict[str, Any]], ChatResponse],
    *,
    missing: str,
    shown: object,
) -> BatchResult:
    """The result of a request the batch answered: `parse(answer)`, or why it cannot be read.

    When `answer` is not a JSON object, the failure says `missing` and quotes the start of
    `shown` (the part of the line that should have held it).
    """
    try:
        if not isinstance(answer, dict):
            raise MalformedResponse(f"{missing}: {str(shown)[:200]}")
        return BatchResult(custom_id, response=parse(answer))
    except MalformedResponse as exc:
        return BatchResult(custom_id, failure=exc)
