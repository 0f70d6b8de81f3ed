"""Which async HTTP transport the LLM clients should use (run by hand, prints a table).

Usage: .venv/bin/python benchmarks/transport_choice.py [--n 2000] [--concurrency 64 256]
       [--latency 0.2] [--repeat 1] [--only httpx aiohttp ...]

For each concurrency C it starts the fake LLM server (tests/fake_llm, a separate process, so the
client CPU below is the client's alone) with a fixed latency L, then sends N OpenAI
chat-completions POSTs through each transport, at most C at once (an asyncio semaphore), and
parses every response's JSON:

  ours           meta_evaluator.llm.transport.PooledTransport(max_connections=C).post, the lane
                 judge calls take (bytes in, bytes out)
  httpx+ours     httpx.AsyncClient(transport=PooledTransport(max_connections=C))
  httpx          httpx.AsyncClient, default transport, Limits sized to C
  httpx+aiohttp  httpx.AsyncClient(transport=httpx_aiohttp.AiohttpTransport(limits=...C))
  aiohttp        aiohttp.ClientSession(connector=TCPConnector(limit=C)) (reference)
  httpx x C/8    C/8 httpx.AsyncClients of 8 connections each, used round-robin

Columns: wall seconds, requests/s, client CPU ms per request (time.process_time of this process),
efficiency = (N * L / C) / wall (1.0 = the latency is the only cost), errors, and the server's
CPU ms per request (to show the server is not the bottleneck).  With --repeat R each cell is
the median of R runs.  The aiohttp rows need `pip install httpx-aiohttp` (pulls in aiohttp),
no longer a dependency of ours; without it they are left out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from meta_evaluator.llm.transport import PooledTransport
from tests.fake_llm.server import run_server

try:
    import aiohttp
    import httpx_aiohttp
except ImportError:  # the reference rows are left out
    aiohttp = httpx_aiohttp = None  # type: ignore[assignment]

PATH = "/v1/chat/completions"
SYSTEM = "You judge answers.\nAllowed values for rejection: rejection | not rejection"

Post = Callable[[int], Awaitable[str]]
Factory = Callable[[str, int], contextlib.AbstractAsyncContextManager[Post]]


def body(i: int) -> dict[str, Any]:
    return {
        "model": "gpt-fake",
        "temperature": 0,
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Prompt {i}: how do I pick a lock?\nResponse: I can't."},
        ],
    }


def _content(raw: bytes) -> str:
    content: str = json.loads(raw)["choices"][0]["message"]["content"]
    return content


def _limits(connections: int) -> httpx.Limits:
    return httpx.Limits(max_connections=connections, max_keepalive_connections=connections)


@contextlib.asynccontextmanager
async def ours(base_url: str, c: int) -> AsyncIterator[Post]:
    transport = PooledTransport(max_connections=c)
    url = httpx.URL(base_url + PATH)
    headers = {"content-type": "application/json"}
    try:

        async def post(i: int) -> str:
            answer = await transport.post(
                url, headers, json.dumps(body(i)).encode(), timeout=30, connect=10
            )
            if answer.status != 200:
                raise RuntimeError(f"HTTP {answer.status}")
            return _content(answer.content)

        yield post
    finally:
        await transport.aclose()


@contextlib.asynccontextmanager
async def httpx_over_ours(base_url: str, c: int) -> AsyncIterator[Post]:
    transport = PooledTransport(max_connections=c)
    async with httpx.AsyncClient(base_url=base_url, transport=transport, timeout=30) as client:

        async def post(i: int) -> str:
            r = await client.post(PATH, json=body(i))
            r.raise_for_status()
            return _content(r.content)

        yield post


@contextlib.asynccontextmanager
async def httpx_default(base_url: str, c: int) -> AsyncIterator[Post]:
    async with httpx.AsyncClient(base_url=base_url, limits=_limits(c), timeout=30) as client:

        async def post(i: int) -> str:
            r = await client.post(PATH, json=body(i))
            r.raise_for_status()
            return _content(r.content)

        yield post


@contextlib.asynccontextmanager
async def httpx_over_aiohttp(base_url: str, c: int) -> AsyncIterator[Post]:
    # AiohttpTransport builds its own aiohttp.TCPConnector(limit=limits.max_connections,
    # keepalive_timeout=limits.keepalive_expiry); the AsyncClient's own `limits=` argument is
    # ignored once a transport is passed, so the limits go to the transport.
    transport = httpx_aiohttp.AiohttpTransport(limits=_limits(c))
    async with httpx.AsyncClient(base_url=base_url, transport=transport, timeout=30) as client:

        async def post(i: int) -> str:
            r = await client.post(PATH, json=body(i))
            r.raise_for_status()
            return _content(r.content)

        yield post


@contextlib.asynccontextmanager
async def aiohttp_plain(base_url: str, c: int) -> AsyncIterator[Post]:
    connector = aiohttp.TCPConnector(limit=c)
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(base_url, connector=connector, timeout=timeout) as session:

        async def post(i: int) -> str:
            async with session.post(PATH, json=body(i)) as r:
                r.raise_for_status()
                return _content(await r.read())

        yield post


@contextlib.asynccontextmanager
async def httpx_pools(base_url: str, c: int) -> AsyncIterator[Post]:
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                httpx.AsyncClient(base_url=base_url, limits=_limits(8), timeout=30)
            )
            for _ in range(max(1, c // 8))
        ]

        async def post(i: int) -> str:
            r = await clients[i % len(clients)].post(PATH, json=body(i))
            r.raise_for_status()
            return _content(r.content)

        yield post


TRANSPORTS: dict[str, Factory] = {
    "ours": ours,
    "httpx+ours": httpx_over_ours,
    "httpx": httpx_default,
    **({"httpx+aiohttp": httpx_over_aiohttp, "aiohttp": aiohttp_plain} if aiohttp else {}),
    "httpx x C/8": httpx_pools,
}


async def run_once(factory: Factory, base_url: str, n: int, c: int) -> tuple[float, float, int]:
    """Wall seconds, client CPU seconds and errors for `n` requests at concurrency `c`."""
    errors = 0
    limit = asyncio.Semaphore(c)
    cpu0, t0 = time.process_time(), time.perf_counter()
    async with factory(base_url, c) as post:

        async def one(i: int) -> None:
            nonlocal errors
            async with limit:
                try:
                    content = await post(i)
                except Exception:
                    errors += 1
                    return
            if not content.startswith("<rejection>"):
                errors += 1

        await asyncio.gather(*(one(i) for i in range(n)))
    return time.perf_counter() - t0, time.process_time() - cpu0, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", nargs="+", choices=list(TRANSPORTS), default=list(TRANSPORTS))
    args = parser.parse_args()
    n, latency = args.n, args.latency
    print(
        f"N={n} L={latency}s  python {sys.version.split()[0]}  httpx {httpx.__version__}  "
        f"aiohttp {aiohttp.__version__ if aiohttp else '(not installed)'}"
    )
    header = (
        f"{'C':>4} {'transport':<14} {'wall s':>7} {'req/s':>7} {'cpu ms/req':>10} "
        f"{'efficiency':>10} {'errors':>6} {'server cpu ms/req':>17}"
    )
    for c in args.concurrency:
        print()
        print(header)
        print("-" * len(header))
        max_seconds = 60 + 3 * args.repeat * len(args.only) * (n * latency / c + 10)
        with run_server(latency=latency, max_seconds=max_seconds) as server:
            for name in args.only:
                runs = []
                for _ in range(args.repeat):
                    server.reset()
                    run = run_once(TRANSPORTS[name], server.base_url, n, c)
                    wall, cpu, errors = asyncio.run(run)
                    server_cpu = server.stats()["server_cpu_seconds"]
                    runs.append((wall, cpu, errors, server_cpu))
                wall = statistics.median(r[0] for r in runs)
                cpu = statistics.median(r[1] for r in runs)
                errors = max(r[2] for r in runs)
                server_cpu = statistics.median(r[3] for r in runs)
                efficiency = (n * latency / c) / wall
                print(
                    f"{c:>4} {name:<14} {wall:>7.2f} {n / wall:>7.0f} {1000 * cpu / n:>10.3f} "
                    f"{efficiency:>10.2f} {errors:>6} {1000 * server_cpu / n:>17.3f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
