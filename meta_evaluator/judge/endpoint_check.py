"""`--check`: one cheap request per endpoint, to tell before a run which judges can be reached.

The request lists the provider's models (`GET {base_url}/models` for OpenAI-compatible servers,
`GET {base_url}/openai/models?api-version=` for Azure OpenAI, `GET {base_url}/v1/models` for
Anthropic): it costs no tokens, and it needs the key, so a wrong key shows as 401. The offline
mock always passes. Results name the endpoint and its judges, never a key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from meta_evaluator.errors import JudgeConfigError
from meta_evaluator.judge.config import Judge

if TYPE_CHECKING:  # HTTP loads on first check, not with `meta_evaluator.judge`
    import httpx

    from meta_evaluator.llm.limits import EndpointKey

__all__ = ["CHECK_TIMEOUT", "EndpointCheck", "check_endpoints"]

CHECK_TIMEOUT = 10.0
"""Seconds for one check request, connect to last byte."""


@dataclass(frozen=True)
class EndpointCheck:
    """What one endpoint answered to the check."""

    endpoint: str
    """`client base_url`, as progress and errors name it (never the key)."""
    judge_ids: tuple[str, ...]
    ok: bool
    detail: str
    """`ok`, `HTTP 401 from …`, `connection refused at host:port` ..."""

    def line(self) -> str:
        """`openai http://127.0.0.1:9/v1 (gpt4, gpt4_mini): connection refused at 127.0.0.1:9`."""
        return f"{self.endpoint} ({', '.join(self.judge_ids)}): {self.detail}"


@dataclass
class _Target:
    key: EndpointKey
    api_key: str | None
    judge: Judge
    judge_ids: list[str]


async def check_endpoints(
    judges: Sequence[Judge],
    *,
    timeout: float = CHECK_TIMEOUT,
    transport: httpx.AsyncBaseTransport | None = None,
) -> list[EndpointCheck]:
    """Ask each distinct endpoint (and key) of `judges` once, all at the same time.

    A judge whose key cannot be read fails its check with the reason; it makes no request.
    Results come in the order the endpoints first appear among `judges`.
    """
    import anyio
    import httpx

    from meta_evaluator.judge._clients import judge_endpoint
    from meta_evaluator.judge.addresses import configured_url
    from meta_evaluator.llm import make_transport
    from meta_evaluator.llm.limits import EndpointKey

    targets: dict[EndpointKey, _Target] = {}
    order: list[EndpointKey | str] = []
    unusable: dict[str, EndpointCheck] = {}
    for judge in judges:
        try:
            key, api_key = judge_endpoint(judge)
        except JudgeConfigError as exc:
            where = configured_url(judge) or judge.llm_client  # the variable may be at fault
            unusable[judge.id] = EndpointCheck(f"{judge.llm_client} {where}", (judge.id,), False,
                                               exc.message)  # fmt: skip
            order.append(judge.id)
            continue
        if key in targets:
            targets[key].judge_ids.append(judge.id)
        else:
            targets[key] = _Target(key, api_key, judge, [judge.id])
            order.append(key)
    found: dict[EndpointKey, EndpointCheck] = {}
    size = max(1, len(targets))
    urls = [key.base_url for key in targets]
    async with httpx.AsyncClient(
        transport=transport or make_transport(size, *urls),  # None: httpx's, through a proxy
        limits=httpx.Limits(max_connections=size),
        timeout=httpx.Timeout(timeout),
    ) as http:

        async def check(target: _Target) -> None:
            found[target.key] = await _check(http, target, timeout)

        async with anyio.create_task_group() as group:
            for target in targets.values():
                group.start_soon(check, target)
    return [found[item] if isinstance(item, EndpointKey) else unusable[item] for item in order]


async def _check(http: httpx.AsyncClient, target: _Target, timeout: float) -> EndpointCheck:
    """List the models of one endpoint through the judge's own client (its URL and headers)."""
    from meta_evaluator.judge._clients import build_client
    from meta_evaluator.llm import AnthropicClient, CallFailed, EndpointRejected, OpenAIClient

    key = target.key
    ids = tuple(target.judge_ids)
    if key.client == "mock":
        return EndpointCheck(str(key), ids, True, "ok")
    client = build_client(target.judge, http, target.api_key, timeout=timeout)
    assert isinstance(client, OpenAIClient | AnthropicClient), "HTTP judges have HTTP clients"
    try:
        await client.list_models(target.judge.extra_headers)
    except EndpointRejected as exc:
        return EndpointCheck(str(key), ids, False, str(exc))
    except CallFailed as exc:
        if exc.status == "rate_limited":  # reachable, key accepted: only busy right now
            return EndpointCheck(str(key), ids, True, "ok (rate limited right now: HTTP 429)")
        return EndpointCheck(str(key), ids, False, str(exc))
    return EndpointCheck(str(key), ids, True, "ok")
