"""N rows through one judge against the loopback server (run by hand; prints a table).

Usage: .venv/bin/python benchmarks/judge_throughput.py [--rows 2000] [--latency 0.2]
       [--concurrency 64 256]

efficiency = (N x latency / concurrency) / wall time: 1.0 is the physical limit. Client CPU is
this process's CPU time during the run (the server runs in its own process; the one-time import
of the runner and HTTP transport, about 0.3 s, is done before the clock starts).
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))

from meta_evaluator import MetaEvaluator  # noqa: E402
from meta_evaluator.data import DataLoader  # noqa: E402
from meta_evaluator.eval_task import EvalTask  # noqa: E402
from tests.fake_llm.server import run_server  # noqa: E402


def workload(n: int) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "qid": list(range(n)),
            "prompt": [f"Question {i}: how do I do thing {i}?" for i in range(n)],
            "response": [
                f"Answer {i}: " + ("I can't help." if i % 3 else "Sure.") for i in range(n)
            ],
        }
    )


def ours(base_url: str, n: int, concurrency: int) -> tuple[float, float, int]:
    folder = Path(tempfile.mkdtemp()) / "bench"
    evaluator = MetaEvaluator(folder)
    evaluator.add_data(DataLoader.load_from_dataframe("bench", workload(n), "qid"))
    evaluator.add_eval_task(
        EvalTask({"rejection": ["rejection", "not rejection"]}, ["prompt"], ["response"])
    )
    evaluator.add_judge("j", "openai", "gpt-4o-mini", "Did {response} refuse {prompt}?",
                        base_url=f"{base_url}/v1")  # fmt: skip
    import httpx_aiohttp  # noqa: F401 - one-time imports are not a per-row cost

    import meta_evaluator.judge._runner  # noqa: F401

    cpu, wall = time.process_time(), time.perf_counter()
    result = evaluator.run_judges_async(max_concurrency=concurrency)["j"]
    return time.perf_counter() - wall, time.process_time() - cpu, result.counts()["valid"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[64, 256])
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print(
        f"{'tool':<26} {'C':>4} {'wall s':>7} {'rows/s':>7} {'cpu ms/row':>10} {'efficiency':>10}"
    )
    for concurrency in args.concurrency:
        with run_server(latency=args.latency) as server:
            wall, cpu, valid = ours(server.base_url, args.rows, concurrency)
            assert valid == args.rows, f"only {valid} of {args.rows} rows valid"
            ideal = args.rows * args.latency / concurrency
            print(
                f"{'meta-evaluator (this)':<26} {concurrency:>4} {wall:>7.2f} "
                f"{args.rows / wall:>7.0f} {cpu / args.rows * 1000:>10.3f} {ideal / wall:>10.2f}"
            )


if __name__ == "__main__":
    main()
