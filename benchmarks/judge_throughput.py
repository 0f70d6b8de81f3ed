"""N rows through one judge against the loopback server (run by hand; prints a table).

Usage: .venv/bin/python benchmarks/judge_throughput.py [--rows 2000] [--latency 0.2]
       [--concurrency 64 256] [--repeat 1] [--meta-venv benchmarks/.venvs/meta]
       [--inspect-venv benchmarks/.venvs/inspect] [--server-core 1] [--client-core 0]

efficiency = (N x latency / concurrency) / wall time: 1.0 is the physical limit. Client CPU is
the client process's user+sys time during the run (the server runs in its own process; a
16-row warm-up run with another prompt pays the one-time imports and first uses, about 0.3 s of
CPU, before the clock starts).
Our response cache is on, as by default, in an empty folder of its own: every row is a miss and
is stored, as in a first run (its cost is in our figure), and the user's cache is left alone.

Peers, each in its own venv (../shared/REFERENCE_TOOLS.md) and its own process, run the same
workload against the same kind of server: --meta-venv runs meta-evaluator 0.3.3's
Judge.evaluate_eval_data_async (_reference_meta_evaluator.py), --inspect-venv runs an inspect-ai
eval of the same prompts through its OpenAI-compatible provider (_reference_inspect.py, whose
docstring says where that is not like for like). Every run gets a fresh server. Both peers'
HTTP pools have caps of their own (litellm 500 connections a host, inspect 1000) that would
hold them below a higher --concurrency; this script raises the cap to the concurrency then.

Cores: this process pins itself (every thread) to --client-core, the peers inherit that core,
and each server process (every thread, and its children if any) is pinned to --server-core, so
the client's CPU never competes with the server's; `none` leaves scheduling alone. The defaults
are 0 and 1 on a machine with two cores or more. --realtime (root) also runs them all under the
real-time FIFO policy, so that nothing else on the machine takes their cores: on a shared VM
the efficiency of one run at 256 in flight then varied by 0.03 (0.87-0.90), not 0.07. With
--repeat K every (tool, concurrency) runs K times, the tools interleaved run by run so that
drift hits them alike; each run is printed and then a median row per tool (the figure to
quote). `peak` is the most requests the server saw in
flight at once: below the concurrency, the client (or its HTTP pool) held back.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import polars as pl

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))

from meta_evaluator import MetaEvaluator  # noqa: E402
from meta_evaluator.data import DataLoader  # noqa: E402
from meta_evaluator.eval_task import EvalTask  # noqa: E402
from tests.fake_llm.server import run_server  # noqa: E402

#: (wall seconds, client CPU seconds, valid rows) of one run.
Measure = tuple[float, float, int]
#: A tool under test: (server base URL, rows, concurrency) -> Measure.
Runner = Callable[[str, int, int], Measure]
#: The server's own limit on its lifetime, well above any run here.
SERVER_SECONDS = 3600.0
OURS = "meta-evaluator (this)"


@dataclass(frozen=True)
class Run:
    tool: str
    concurrency: int
    wall: float
    cpu: float
    valid: int
    peak: int


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


def _project(base_url: str, n: int, prompt: str) -> tuple[MetaEvaluator, Path]:
    """A new project of `n` workload rows and one judge `j` on the server; its cache folder."""
    folder = Path(tempfile.mkdtemp()) / "bench"
    evaluator = MetaEvaluator(folder)
    evaluator.add_data(DataLoader.load_from_dataframe("bench", workload(n), "qid"))
    evaluator.add_eval_task(
        EvalTask({"rejection": ["rejection", "not rejection"]}, ["prompt"], ["response"])
    )
    evaluator.add_judge("j", "openai", "gpt-4o-mini", prompt, base_url=f"{base_url}/v1")
    return evaluator, folder.parent / "cache"  # empty: every row a miss; not ~/.cache


def ours(base_url: str, n: int, concurrency: int) -> Measure:
    # A warm-up run of 16 rows (another prompt, so none of its answers is reused) pays what a
    # process pays once, before the clock: imports, the first Parquet write, SQLite, regexes.
    # It is what a long run amortises; the inspect peer warms up the same way.
    warm, cache = _project(base_url, 16, "Warm-up: did {response} refuse {prompt}?")
    warm.run_judges_async(max_concurrency=16, cache_dir=cache)
    evaluator, cache = _project(base_url, n, "Did {response} refuse {prompt}?")
    cpu, wall = time.process_time(), time.perf_counter()
    result = evaluator.run_judges_async(max_concurrency=concurrency, cache_dir=cache)["j"]
    return time.perf_counter() - wall, time.process_time() - cpu, result.counts()["valid"]


def peer(venv: Path, script: str, env: dict[str, str], n: int, concurrency: int) -> Measure:
    """`script` run by `venv`'s Python (it inherits this process's core); its last line."""
    with tempfile.TemporaryDirectory() as home:
        done = subprocess.run(
            [str(venv / "bin" / "python"), str(Path(__file__).with_name(script)),
             str(n), str(concurrency)],
            capture_output=True, text=True, timeout=3600, check=False,
            env={**env, "PATH": "/usr/bin:/bin", "HOME": home},
        )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{script} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    wall, cpu, valid = done.stdout.split()[-3:]
    return float(wall), float(cpu), int(valid)


def reference(venv: Path, base_url: str, n: int, concurrency: int) -> Measure:
    """The workload through meta-evaluator 0.3.3 in its own venv: (wall, cpu, valid rows)."""
    env = {
        "OPENAI_BASE_URL": f"{base_url}/v1",
        "OPENAI_API_BASE": f"{base_url}/v1",
        "OPENAI_API_KEY": "x",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        # litellm's aiohttp pool stops at 500 connections a host (1000 in all); raised to the
        # concurrency above that, as ours is sized by it (the peak column shows the effect).
        "AIOHTTP_CONNECTOR_LIMIT_PER_HOST": str(max(500, concurrency)),
        "AIOHTTP_CONNECTOR_LIMIT": str(max(1000, concurrency)),
    }
    return peer(venv, "_reference_meta_evaluator.py", env, n, concurrency)


def inspect_eval(venv: Path, base_url: str, n: int, concurrency: int) -> Measure:
    """The workload as an inspect-ai eval in its own venv: (wall, cpu, samples without error)."""
    env = {
        "MOCK_BASE_URL": f"{base_url}/v1",
        "MOCK_API_KEY": "x",
        # inspect's HTTP pool stops at 1000 connections: raised likewise above that.
        "INSPECT_HTTP_POOL_CONNECTIONS": str(max(1000, concurrency)),
    }
    return peer(venv, "_reference_inspect.py", env, n, concurrency)


def version(venv: Path, package: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({package!r}))"
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def core(text: str) -> int | None:
    """A --server-core / --client-core value: a core number, or `none` for no pinning."""
    return None if text.lower() == "none" else int(text)


def core_label(cpu: int | None) -> str:
    return "none (not pinned)" if cpu is None else str(cpu)


def pin(pid: int, cpu: int | None, *, realtime: bool = False) -> None:
    """Every thread of process `pid`, and of its child processes, on core `cpu` only.

    `realtime` also gives them the real-time FIFO policy (root only), so no other process of
    the machine takes their core while they run.
    """
    if cpu is None and not realtime:
        return
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(ProcessLookupError):  # a thread that has just ended
            if cpu is not None:
                os.sched_setaffinity(int(task.name), {cpu})
            if realtime:
                os.sched_setscheduler(int(task.name), os.SCHED_FIFO, os.sched_param(10))
        with contextlib.suppress(FileNotFoundError):
            for child in (task / "children").read_text().split():
                pin(int(child), cpu, realtime=realtime)


def measure(tool: str, runner: Runner, args: argparse.Namespace, concurrency: int) -> Run:
    """One run of `runner` against a fresh server pinned to the server core."""
    with run_server(latency=args.latency, max_seconds=SERVER_SECONDS) as server:
        pin(server.process.pid, args.server_core, realtime=args.realtime)
        wall, cpu, valid = runner(server.base_url, args.rows, concurrency)
        peak = int(server.stats()["max_in_flight"])
    return Run(tool, concurrency, wall, cpu, valid, peak)


def row(run: Run, label: str, n: int, latency: float) -> str:
    ideal = n * latency / run.concurrency
    short = "" if run.valid == n else f"  only {run.valid} of {n} rows valid"
    return (
        f"{run.tool:<26} {label:>4} {run.concurrency:>5} {run.wall:>7.2f} {n / run.wall:>7.0f} "
        f"{run.cpu / n * 1000:>10.3f} {ideal / run.wall:>10.2f} {run.peak:>5}{short}"
    )


def median(runs: list[Run]) -> Run:
    """The median wall time and the median CPU time (each on its own) of one tool's runs."""
    first = runs[0]
    return Run(
        first.tool,
        first.concurrency,
        statistics.median(r.wall for r in runs),
        statistics.median(r.cpu for r in runs),
        min(r.valid for r in runs),
        int(statistics.median(r.peak for r in runs)),
    )


def tools(args: argparse.Namespace) -> dict[str, Runner]:
    found: dict[str, Runner] = {OURS: ours}
    if args.meta_venv is not None:
        name = f"meta-evaluator {version(args.meta_venv, 'meta-evaluator')}"
        found[name] = partial(reference, args.meta_venv)
    if args.inspect_venv is not None:
        found[f"inspect-ai {version(args.inspect_venv, 'inspect-ai')}"] = partial(
            inspect_eval, args.inspect_venv
        )
    return found


def main() -> None:
    two = (os.cpu_count() or 1) >= 2
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--repeat", type=int, default=1, help="runs per tool and concurrency")
    parser.add_argument("--meta-venv", type=Path, default=None)
    parser.add_argument("--inspect-venv", type=Path, default=None)
    parser.add_argument("--server-core", type=core, default=1 if two else None)
    parser.add_argument("--client-core", type=core, default=0 if two else None)
    parser.add_argument(
        "--realtime",
        action="store_true",
        help="run client, peers and servers under the real-time FIFO policy (root): other "
        "processes of the machine cannot take their cores",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    pin(os.getpid(), args.client_core, realtime=args.realtime)
    runners = tools(args)
    print(
        f"rows {args.rows}, latency {args.latency} s; client core {core_label(args.client_core)}, "
        f"server core {core_label(args.server_core)}"
        f"{'; real-time FIFO' if args.realtime else ''}; python {sys.version.split()[0]}"
    )
    print(
        f"{'tool':<26} {'run':>4} {'C':>5} {'wall s':>7} {'rows/s':>7} {'cpu ms/row':>10} "
        f"{'efficiency':>10} {'peak':>5}"
    )
    for concurrency in args.concurrency:
        runs: dict[str, list[Run]] = {tool: [] for tool in runners}
        for k in range(1, args.repeat + 1):
            for tool, runner in runners.items():
                run = measure(tool, runner, args, concurrency)
                runs[tool].append(run)
                print(row(run, str(k), args.rows, args.latency), flush=True)
        short = [r.valid for r in runs[OURS] if r.valid != args.rows]
        assert not short, f"ours: only {short} of {args.rows} rows valid"
        if args.repeat > 1:
            for tool_runs in runs.values():
                print(row(median(tool_runs), "med", args.rows, args.latency))


if __name__ == "__main__":
    main()
