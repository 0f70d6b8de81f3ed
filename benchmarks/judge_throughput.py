"""N rows through one judge against the loopback server (run by hand; prints a table).

Usage: .venv/bin/python benchmarks/judge_throughput.py [--rows 2000] [--latency 0.2]
       [--concurrency 64 256] [--meta-venv benchmarks/.venvs/meta]

efficiency = (N x latency / concurrency) / wall time: 1.0 is the physical limit. Client CPU is
this process's CPU time during the run (the server runs in its own process; the one-time import
of the runner and HTTP transport, about 0.3 s, is done before the clock starts). With
--meta-venv (meta-evaluator 0.3.3 installed per ../shared/REFERENCE_TOOLS.md), the same workload
also runs through its Judge.evaluate_eval_data_async against the same server.
"""

from __future__ import annotations

import argparse
import logging
import subprocess
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

    import meta_evaluator.judge.runner  # noqa: F401

    cpu, wall = time.process_time(), time.perf_counter()
    result = evaluator.run_judges_async(max_concurrency=concurrency)["j"]
    return time.perf_counter() - wall, time.process_time() - cpu, result.counts()["valid"]


def reference(venv: Path, base_url: str, n: int, concurrency: int) -> tuple[float, float, int]:
    """The workload through meta-evaluator 0.3.3 in its own venv: (wall, cpu, valid rows)."""
    env = {
        "OPENAI_BASE_URL": f"{base_url}/v1",
        "OPENAI_API_BASE": f"{base_url}/v1",
        "OPENAI_API_KEY": "x",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PATH": "/usr/bin:/bin",
        "HOME": tempfile.mkdtemp(),
    }
    script = Path(__file__).with_name("_reference_meta_evaluator.py")
    done = subprocess.run(
        [str(venv / "bin" / "python"), str(script), str(n), str(concurrency)],
        capture_output=True,
        text=True,
        env=env,
        timeout=3600,
        check=True,
    )
    wall, cpu, valid = done.stdout.split()[-3:]
    return float(wall), float(cpu), int(valid)


def row(tool: str, concurrency: int, n: int, wall: float, cpu: float, ideal: float) -> str:
    return (
        f"{tool:<26} {concurrency:>4} {wall:>7.2f} {n / wall:>7.0f} "
        f"{cpu / n * 1000:>10.3f} {ideal / wall:>10.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--meta-venv", type=Path, default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print(
        f"{'tool':<26} {'C':>4} {'wall s':>7} {'rows/s':>7} {'cpu ms/row':>10} {'efficiency':>10}"
    )
    for concurrency in args.concurrency:
        ideal = args.rows * args.latency / concurrency
        with run_server(latency=args.latency) as server:
            wall, cpu, valid = ours(server.base_url, args.rows, concurrency)
            assert valid == args.rows, f"only {valid} of {args.rows} rows valid"
            print(row("meta-evaluator (this)", concurrency, args.rows, wall, cpu, ideal))
            if args.meta_venv is not None:
                server.reset()
                wall, cpu, valid = reference(
                    args.meta_venv, server.base_url, args.rows, concurrency
                )
                assert valid == args.rows, f"0.3.3: only {valid} of {args.rows} rows valid"
                print(row("meta-evaluator 0.3.3", concurrency, args.rows, wall, cpu, ideal))


if __name__ == "__main__":
    main()
