"""Embeddings from an OpenAI-compatible `/embeddings` endpoint, through our own HTTP client."""

from __future__ import annotations

import functools
from typing import Any

import httpx

from meta_evaluator.llm._endpoint import EndpointClient
from meta_evaluator.llm.classify import MalformedResponse

__all__ = ["EmbeddingsClient"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class EmbeddingsClient(EndpointClient):
    """POST `{"model", "input": [texts]}` to `<base_url>/embeddings`; vectors in input order."""

    default_base_url = DEFAULT_BASE_URL

    @functools.cached_property
    def _url(self) -> httpx.URL:
        return httpx.URL(f"{self.endpoint.base}/embeddings")

    @property
    def url(self) -> str:
        """Where the requests go."""
        return str(self._url)

    async def embed(self, texts: list[str], model: str) -> list[list[float]]:
        """One attempt: the embedding of each text, in order.

        Raises:
            CallFailed, EndpointRejected: The request failed (see `post_json`).
            MalformedResponse: The answer is not one numeric vector per text.
        """
        answer = await self.endpoint.post(self._url, {"model": model, "input": texts})
        return parse_embeddings(answer, len(texts))


def parse_embeddings(answer: dict[str, Any], expected: int) -> list[list[float]]:
    """The vectors of an embeddings answer, ordered by `index`, all of one length."""
    data = answer.get("data")
    if not isinstance(data, list) or len(data) != expected:
        got = len(data) if isinstance(data, list) else type(data).__name__
        raise MalformedResponse(f"embeddings answer has {got} vectors for {expected} texts")
    vectors: list[list[float] | None] = [None] * expected
    for position, item in enumerate(data):
        index = item.get("index", position) if isinstance(item, dict) else None
        vector = item.get("embedding") if isinstance(item, dict) else None
        if (
            not isinstance(index, int)
            or not 0 <= index < expected
            or not isinstance(vector, list)
            or not vector
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in vector)
        ):
            raise MalformedResponse(f"embeddings answer: data[{position}] is not a vector")
        if not any(vector):
            # no direction, so no similarity; some servers send zeros for a failed input
            raise MalformedResponse(f"embeddings answer: data[{position}] is a zero vector")
        vectors[index] = [float(v) for v in vector]
    if any(v is None for v in vectors) or len({len(v or ()) for v in vectors}) != 1:
        raise MalformedResponse("embeddings answer: vectors missing or of different lengths")
    return [v for v in vectors if v is not None]
