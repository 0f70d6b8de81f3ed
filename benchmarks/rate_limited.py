"""N rows through one judge against a rate-limited loopback server (run by hand; prints a table).

Usage: .venv/bin/python benchmarks/rate_limited.py [--rows 1000] [--rate 50] [--burst 50]
       [--latency 0.2] [--concurrency 512] [--no-headers] [--retry-after-ms]
       [--adaptive | --no-adaptive]

The server (tests/fake_llm/server.py) admits `--rate` requests per second from a token bucket
of `--burst`; beyond it, it answers 429 at once with `Retry-After` (the true wait, rounded up to
whole seconds) and `x-ratelimit-remaining-requests: 0`. Unless `--no-headers`, every reply also
carries `x-ratelimit-limit-requests` / `-remaining-requests` / `-reset-requests`, as OpenAI's do.
The goal (issue 17): every row valid, at least 0.8 x rate rows/s, under 5% of calls answered
429. `--adaptive` / `--no-adaptive` set `adaptive_concurrency` (left out: the runner's default,
so the script also runs against a runner that predates the setting).
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.judge_throughput import workload  # noqa: E402
from meta_evaluator import MetaEvaluator  # noqa: E402
from meta_evaluator.data import DataLoader  # noqa: E402
from meta_evaluator.eval_task import EvalTask  # noqa: E402
from tests.fake_llm.server import run_server  # noqa: E402


def run(base_url: str, n: int, concurrency: int, options: dict[str, Any]) -> tuple[float, dict]:
    folder = Path(tempfile.mkdtemp()) / "bench"
    evaluator = MetaEvaluator(folder)
    evaluator.add_data(DataLoader.load_from_dataframe("bench", workload(n), "qid"))
    evaluator.add_eval_task(
        EvalTask({"rejection": ["rejection", "not rejection"]}, ["prompt"], ["response"])
    )
    evaluator.add_judge("j", "openai", "gpt-4o-mini", "Did {response} refuse {prompt}?",
                        base_url=f"{base_url}/v1")  # fmt: skip
    import meta_evaluator.judge.runner  # noqa: F401 - brings the transport; not a per-row cost

    wall = time.perf_counter()
    # No response cache: every row is a call, and benchmark rows stay out of ~/.cache.
    result = evaluator.run_judges_async(max_concurrency=concurrency, cache=False, **options)["j"]
    return time.perf_counter() - wall, result.counts()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=50.0, help="requests/s the server admits")
    parser.add_argument("--burst", type=float, default=0.0, help="bucket size (0: one second's)")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[512])
    parser.add_argument("--no-headers", action="store_true", help="no x-ratelimit-* headers")
    parser.add_argument("--retry-after-ms", action="store_true", help="send retry-after-ms too")
    parser.add_argument("--adaptive", action=argparse.BooleanOptionalAction, default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    options = {} if args.adaptive is None else {"adaptive_concurrency": args.adaptive}
    print(
        f"{'C':>4} {'rows':>5} {'valid':>5} {'errors':>6} {'wall s':>7} {'rows/s':>7} "
        f"{'valid/s':>7} {'calls':>6} {'429':>5} {'429 share':>9}"
    )
    for concurrency in args.concurrency:
        with run_server(
            latency=args.latency,
            requests_per_second=args.rate,
            burst=args.burst,
            rate_limit_headers=not args.no_headers,
            retry_after_ms=args.retry_after_ms,
        ) as server:
            wall, counts = run(server.base_url, args.rows, concurrency, options)
            stats = server.stats()
        calls = stats["total_requests"]
        refused = stats["by_status"].get("429", 0)
        print(
            f"{concurrency:>4} {args.rows:>5} {counts['valid']:>5} {counts['error']:>6} "
            f"{wall:>7.2f} {args.rows / wall:>7.1f} {counts['valid'] / wall:>7.1f} {calls:>6} "
            f"{refused:>5} "
            f"{refused / max(calls, 1):>9.1%}"
        )


if __name__ == "__main__":
    main()
