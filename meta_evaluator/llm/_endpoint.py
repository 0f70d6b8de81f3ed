"""One provider endpoint as our clients reach it: the HTTP client, base URL, key, headers, timeout.

Every client (chat, batch, embeddings) holds one `Endpoint` instead of keeping these five
values itself, so they are set up in one place and every request goes out the same way: through
`_http.post_json` or `_http.send`, under the per-attempt timeout, with the key kept out of
messages. A batch client derives its endpoint from its live client's (`derive`), so batch calls
carry exactly the headers live calls do.

`EndpointClient` is the constructor the live clients share: `(http, base_url=, api_key=,
timeout=)` becomes an `Endpoint`, each provider saying only its default URL, the root its paths
hang from and how the key travels.

The HTTP client is whatever the caller built (`httpx.AsyncClient(transport=...)`): tests pass
one over `httpx.MockTransport` or respx, production one over `llm.transport.make_transport`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypedDict

import httpx

from meta_evaluator.llm._http import json_object, list_model_ids, post_json, send
from meta_evaluator.llm.transport import PooledTransport
from meta_evaluator.llm.types import RateLimits

__all__ = [
    "Endpoint",
    "EndpointAddress",
    "EndpointClient",
    "EndpointOptions",
    "bearer",
    "root_url",
]


def root_url(base_url: str | None, default: str) -> str:
    """`base_url` (or the provider's `default`) without a trailing slash."""
    return (base_url or default).rstrip("/")


def bearer(api_key: str | None) -> dict[str, str]:
    """The `Authorization: Bearer` header OpenAI-style servers take; none without a key."""
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


@dataclass(frozen=True)
class Endpoint:
    """Where and how a client's requests go; the key is never shown in what it raises."""

    http: httpx.AsyncClient
    """The HTTP client requests are sent through (its transport is the test seam)."""
    base: str
    """The base URL, without a trailing slash."""
    key: str | None
    """The API key's value, redacted from every message."""
    headers: Mapping[str, str]
    """The headers every request carries (the key as the provider wants it, versions ...)."""
    timeout: float
    """Seconds one attempt may take, connect to last byte."""
    direct: PooledTransport | None = None
    """The transport `http` sends through, when chat calls may go to it straight (see
    `_http.post_json`); None sends them through `http` (a test's transport, a proxy)."""

    def derive(self, *, timeout: float, extra_headers: Mapping[str, str] | None) -> Endpoint:
        """The same endpoint with another timeout and `extra_headers` added (batch calls)."""
        return dataclasses.replace(
            self, timeout=timeout, headers={**self.headers, **(extra_headers or {})}
        )

    async def post(
        self,
        url: httpx.URL | str,
        body: dict[str, Any],
        extra_headers: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """POST `body` as JSON; the JSON object answered (failures: see `_http.post_json`)."""
        answer, _ = await self.post_with_limits(url, body, extra_headers)
        return answer

    async def post_with_limits(
        self,
        url: httpx.URL | str,
        body: dict[str, Any],
        extra_headers: Mapping[str, str] | None = None,
    ) -> tuple[dict[str, Any], RateLimits | None]:
        """`post`, and what the answer's rate-limit headers say (None when they say nothing)."""
        answer, _, limits = await post_json(
            self.http,
            url,
            headers={**self.headers, **(extra_headers or {})},
            body=body,
            timeout=self.timeout,
            secret=self.key,
            direct=self.direct,
        )
        return answer, limits

    async def send(
        self,
        method: str,
        url: httpx.URL | str,
        extra_headers: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        """One request of any kind (`send`'s `json_body`, `content`, `files`, `data`)."""
        return await send(
            self.http,
            method,
            url,
            headers={**self.headers, **(extra_headers or {})},
            timeout=self.timeout,
            secret=self.key,
            **kwargs,
        )

    async def send_json(
        self,
        method: str,
        url: httpx.URL | str,
        extra_headers: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """`send`, and the answer's body as a JSON object (MalformedResponse otherwise)."""
        return json_object(await self.send(method, url, extra_headers, **kwargs), self.key)

    async def model_ids(
        self, url: str, extra_headers: Mapping[str, str] | None = None
    ) -> list[str]:
        """The ids of the models listed at `url`: one cheap GET, no tokens, the key checked.

        Raises:
            CallFailed: A timeout, connection error, 429/5xx; MalformedResponse when the answer
                is not a JSON object.
            EndpointRejected: 401/403/404 ...: a wrong key or URL.
        """
        return await list_model_ids(
            self.http,
            url,
            headers={**self.headers, **(extra_headers or {})},
            timeout=self.timeout,
            secret=self.key,
        )


class EndpointAddress(TypedDict, total=False):
    """Where a provider's endpoint is and the key it takes: what a batch client forwards."""

    base_url: str | None
    """Where the provider's API is; None: the provider's public URL."""
    api_key: str | None
    """The key's value (never logged nor shown); None: send no key (local servers)."""


class EndpointOptions(EndpointAddress, total=False):
    """The options every client takes after its HTTP client, for a subclass that adds its own."""

    timeout: float
    """Seconds one attempt may take, connect to last byte."""
    direct: PooledTransport | None
    """The transport `http` was built over, for chat calls to go to straight (`Endpoint.direct`)."""


class EndpointClient:
    """A client of one provider endpoint; its constructor arguments become its `endpoint`.

    Subclasses set `default_base_url`, and override `_root` (the URL their paths hang from)
    and `_auth` (the headers carrying the key) where the provider wants something else than
    the base URL and a bearer token.
    """

    default_base_url: ClassVar[str]

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        direct: PooledTransport | None = None,
    ) -> None:
        root = self._root(root_url(base_url, self.default_base_url))
        self.endpoint = Endpoint(http, root, api_key, self._auth(api_key), timeout, direct)

    @property
    def headers(self) -> dict[str, str]:
        """The headers every request carries (the key among them)."""
        return dict(self.endpoint.headers)

    def _root(self, base: str) -> str:
        """The URL the client's paths hang from, given the base URL without trailing slash."""
        return base

    def _auth(self, api_key: str | None) -> dict[str, str]:
        """The headers that carry `api_key` (and any the provider requires on every call)."""
        return bearer(api_key)
