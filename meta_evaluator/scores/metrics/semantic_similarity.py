"""SemanticSimilarityScorer: cosine similarity of embeddings of the judge's and humans' texts."""

from __future__ import annotations

from typing import Any

import anyio
import numpy as np
import numpy.typing as npt

from meta_evaluator.api_keys import check_endpoint_url, check_key_variable, read_api_key
from meta_evaluator.errors import ScoringError
from meta_evaluator.scores.metrics._arguments import refuse
from meta_evaluator.scores.metrics._items import Items
from meta_evaluator.scores.metrics.text_similarity import SimilarityScorer, as_text
from meta_evaluator.stats.checks import is_missing

__all__ = ["SemanticSimilarityScorer"]

FloatArray = npt.NDArray[np.float64]


class SemanticSimilarityScorer(SimilarityScorer):
    """Cosine similarity of text embeddings from an OpenAI-compatible `/embeddings` endpoint.

    Each distinct text is embedded once (cached on the scorer, so several judges and the
    bootstrap reuse it), in batches, with retries on transient failures. An embedding that
    cannot be had is an error, never a zero vector. Score key: `semantic_similarity`.

    Args:
        model: The embedding model.
        base_url: The server (default OpenAI's); any OpenAI-compatible one works.
        api_key_env: The NAME of the variable holding the key (default OPENAI_API_KEY when
            base_url is not given; none needed for a local server without it). A value that
            looks like a key is refused, and so is a key with white space, control or
            non-ASCII characters (see `meta_evaluator.api_keys`).
        batch_size: Texts per request.
        max_concurrency: Requests in flight.
        max_retries: Retries after the first attempt of a request.
        timeout: Seconds per attempt.
        transport: An httpx transport (tests; a loopback server needs none).
    """

    score_key = "semantic_similarity"

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        batch_size: int = 256,
        max_concurrency: int = 4,
        max_retries: int = 3,
        timeout: float = 60.0,
        transport: Any = None,
    ) -> None:
        problems = [
            f"{name} must be an integer >= {low}; got {value!r}"
            for name, value, low in (
                ("batch_size", batch_size, 1),
                ("max_concurrency", max_concurrency, 1),
                ("max_retries", max_retries, 0),
            )
            if isinstance(value, bool) or not isinstance(value, int) or value < low
        ]
        if not isinstance(model, str) or not model:
            problems.append(f"model must be a non-empty string; got {model!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            problems.append(f"timeout must be a number of seconds > 0; got {timeout!r}")
        if api_key_env is not None:
            try:
                check_key_variable(api_key_env)
            except ValueError as exc:  # never repeats the value: it may be the key itself
                problems.append(str(exc))
        if base_url is not None and not isinstance(base_url, str):
            problems.append(f"base_url must be a URL string; got {type(base_url).__name__}")
        elif base_url is not None:
            try:
                check_endpoint_url(base_url)
            except ValueError as exc:  # never repeats the URL: it may hold a key
                problems.append(str(exc))
        refuse("SemanticSimilarityScorer", problems)
        super().__init__(scorer_name="semantic_similarity")
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env or (None if base_url else "OPENAI_API_KEY")
        self.batch_size = batch_size
        self.max_concurrency = max_concurrency
        self.max_retries = max_retries
        self.timeout = float(timeout)
        self._transport = transport
        self._cache: dict[str, FloatArray] = {}

    async def prepare(self, items: Items) -> None:
        """Embed every text of the items not embedded yet."""
        texts = {as_text(v) for v in items.judge.to_list() if not is_missing(v)}
        for column in items.human:
            texts.update(as_text(v) for v in column.to_list() if not is_missing(v))
        await self.embed([t for t in sorted(texts) if t not in self._cache])

    async def embed(self, texts: list[str]) -> None:
        """Embed `texts` into the cache.

        Raises:
            ScoringError: The key variable is not set or its key holds stray characters, or a
                batch failed after its retries.
        """
        if not texts:
            return
        import httpx

        from meta_evaluator.llm.classify import CallFailed, EndpointRejected, MalformedResponse
        from meta_evaluator.llm.embeddings import DEFAULT_BASE_URL, EmbeddingsClient
        from meta_evaluator.llm.retry import call_with_retries
        from meta_evaluator.llm.transport import make_transport

        key = None
        if self.api_key_env is not None:
            try:
                key = read_api_key(self.api_key_env)
            except ValueError as exc:  # names the variable and the problem, never the key
                raise ScoringError(
                    f"semantic_similarity: api_key_env: {exc} (the embedding endpoint's key)."
                ) from exc
        batches = [texts[i : i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        limiter = anyio.CapacityLimiter(self.max_concurrency)
        size = self.max_concurrency
        # No transport of ours for a URL the environment proxies: httpx's own goes through it.
        transport = self._transport or make_transport(size, self.base_url or DEFAULT_BASE_URL)
        async with httpx.AsyncClient(
            transport=transport, limits=httpx.Limits(max_connections=size), timeout=self.timeout
        ) as http:
            client = EmbeddingsClient(
                http, base_url=self.base_url, api_key=key, timeout=self.timeout
            )

            failures: list[ScoringError] = []

            async def one(batch: list[str], scope: anyio.CancelScope) -> None:
                async with limiter:
                    try:
                        vectors = await call_with_retries(
                            lambda: client.embed(batch, self.model),
                            max_retries=self.max_retries,
                            backoff_base=1.0,
                            backoff_cap=30.0,
                            describe=lambda: f"embeddings {client.url}",
                        )
                    except (CallFailed, EndpointRejected, MalformedResponse) as exc:
                        failure = ScoringError(
                            f"semantic_similarity: embedding {len(batch)} text(s) at "
                            f"{client.url} with model {self.model!r} failed: {exc}"
                        )
                        failure.__cause__ = exc
                        failures.append(failure)
                        scope.cancel()  # the other batches cannot make the scores whole
                        return
                for text, vector in zip(batch, vectors, strict=True):
                    self._cache[text] = np.asarray(vector, dtype=np.float64)

            async with anyio.create_task_group() as group:
                for batch in batches:
                    group.start_soon(one, batch, group.cancel_scope)
            if failures:
                raise failures[0]

    def similarity_matrix(self, items: Items) -> FloatArray:
        """Cosine similarity of the judge's and each human's embedding per item."""
        judge = [None if is_missing(v) else self._cache[as_text(v)] for v in items.judge.to_list()]
        out = np.full((items.n, len(items.humans)), np.nan)
        for h, column in enumerate(items.human):
            for i, value in enumerate(column.to_list()):
                a = judge[i]
                if a is None or is_missing(value):
                    continue
                b = self._cache[as_text(value)]
                norm = float(np.linalg.norm(a) * np.linalg.norm(b))
                if a.shape == b.shape and norm > 0:
                    out[i, h] = float(a @ b) / norm
        return out
