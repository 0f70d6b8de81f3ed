"""Provider batch engines (OpenAI Batch, Anthropic Message Batches): what they have in common.

A batch client turns chat requests into the provider's batch lines, submits them as one batch,
reports the batch's state, and reads its results back as one `BatchResult` per request: the
response, or the failure that the runner classifies like any failed call.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from meta_evaluator.llm._http import redact
from meta_evaluator.llm.classify import CallFailed, MalformedResponse
from meta_evaluator.llm.types import ChatRequest, ChatResponse

__all__ = [
    "BatchClient",
    "BatchNotIdentified",
    "BatchResult",
    "BatchStatus",
    "id_of",
    "jsonl_lines",
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
