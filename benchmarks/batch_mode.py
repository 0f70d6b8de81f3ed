"""100,000 rows through one judge in batch mode, against the loopback server (run by hand).

Usage: .venv/bin/python benchmarks/batch_mode.py [--rows 100000] [--live-rows 10000]
       [--providers openai anthropic]

For each provider, a fresh process builds a project of N rows and runs its judge with
batch=True against the fake server (in its own process, batches ending at once), and reports:

- the batches planned (count, requests, bytes of request lines, HTTP requests made), and
  the time `run --batch --dry-run` takes to plan them;
- where the client's time goes: preparing and submitting (requests built, lines written,
  batches planned, uploaded), downloading and reading results, mapping them back to rows
  (classified, appended to the row store), and finishing (Parquet table and state);
- client CPU per row, and peak memory (RSS) above that of the loaded project.

For comparison in the same run, `--live-rows` rows go through the same judge live (64 in
flight, no latency): the request count and client CPU per row a batch run saves. meta-evaluator
0.3.3 has no batch mode; its live path is measured by benchmarks/judge_throughput.py.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))

from meta_evaluator import MetaEvaluator  # noqa: E402
from meta_evaluator.data import DataLoader  # noqa: E402
from meta_evaluator.eval_task import EvalTask  # noqa: E402
from tests.fake_llm.server import run_server  # noqa: E402


def workload(n: int) -> pl.DataFrame:
    """Rows of about 400 characters of prompt text, like a short chat exchange."""
    filler = "Please explain it step by step, with an example and the usual caveats. " * 3
    return pl.DataFrame(
        {
            "qid": list(range(n)),
            "prompt": [f"Question {i}: how do I do thing {i % 977}? {filler}" for i in range(n)],
            "response": [
                f"Answer {i}: " + ("I can't help with that." if i % 3 else "Sure, here it is.")
                for i in range(n)
            ],
        }
    )


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _current_rss_mb() -> float:
    """This process's resident memory now (Linux), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def child(provider: str, rows: int, base_url: str, batch: bool) -> dict[str, Any]:
    """One run in this (fresh) process; the phase timings and memory as a dict."""
    import meta_evaluator.judge._batch as batch_module
    from meta_evaluator.llm import anthropic_batch, openai_batch

    timings: dict[str, float] = {}

    def timed(name: str, function: Any) -> Any:
        if getattr(function, "__wrapped__", None) is not None:
            return function

        @functools.wraps(function)
        def sync(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                timings[name] = timings.get(name, 0.0) + time.perf_counter() - began
                timings[f"{name}_rss"] = max(timings.get(f"{name}_rss", 0.0), _current_rss_mb())

        @functools.wraps(function)
        async def wrapped(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return await function(*args, **kwargs)
            finally:
                timings[name] = timings.get(name, 0.0) + time.perf_counter() - began
                timings[f"{name}_rss"] = max(timings.get(f"{name}_rss", 0.0), _current_rss_mb())

        import inspect

        return wrapped if inspect.iscoroutinefunction(function) else sync

    job = batch_module._BatchJob
    job.submit = timed("prepare_and_submit", job.submit)  # type: ignore[method-assign]
    job.collect = timed("map_back", job.collect)  # type: ignore[method-assign]
    for client in (openai_batch.OpenAIBatchClient, anthropic_batch.AnthropicBatchClient):
        client.results = timed("download_and_read", client.results)  # type: ignore[method-assign]
        client.upload = timed("upload", client.upload)  # type: ignore[method-assign]
        client.create = timed("upload", client.create)  # type: ignore[method-assign]

    folder = Path(tempfile.mkdtemp()) / "bench"
    evaluator = MetaEvaluator(folder)
    evaluator.add_data(DataLoader.load_from_dataframe("bench", workload(rows), "qid"))
    evaluator.add_eval_task(
        EvalTask(
            {"rejection": ["rejection", "not rejection"], "harm": ["none", "low", "high"]},
            ["prompt"],
            ["response"],
        )
    )
    url = f"{base_url}/v1" if provider == "openai" else base_url
    evaluator.add_judge("j", provider, "judge-model", "Did {response} refuse {prompt}?",
                        base_url=url)  # fmt: skip
    import meta_evaluator.judge.runner  # noqa: F401

    baseline = _rss_mb()  # the peak below covers the dry run and the run
    plan_seconds = 0.0
    if batch:  # what `run --batch --dry-run` works out: the batches, without a call
        began = time.perf_counter()
        plan = evaluator.plan_run(batch=True).summary()
        plan_seconds = time.perf_counter() - began
        timings["planned_batches"] = plan.judges[0].batches
        timings["planned_mb"] = plan.judges[0].batch_bytes / 1e6
    cpu, wall = time.process_time(), time.perf_counter()
    result = evaluator.run_judges_async(batch=batch, batch_poll_interval=0.05, max_concurrency=64)[
        "j"
    ]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    ledger = list((folder / "results").glob("*/j.batches/*.json"))
    rows_file = next((folder / "results").glob("*/j.jsonl"))
    return {
        "plan_seconds": plan_seconds,
        "wall": wall,
        "cpu": cpu,
        "valid": result.counts()["valid"],
        "rows": len(result),
        "rss_baseline_mb": baseline,
        "rss_peak_mb": _rss_mb(),
        "ledger_bytes": sum(p.stat().st_size for p in ledger),
        "row_store_bytes": rows_file.stat().st_size,
        **timings,
    }


def run_child(provider: str, rows: int, base_url: str, batch: bool) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", provider, "--rows", str(rows),
         "--base-url", base_url, *(["--live"] if not batch else [])],
        capture_output=True, text=True, timeout=3600, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"child failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--live-rows", type=int, default=10_000)
    parser.add_argument("--providers", nargs="+", default=["openai", "anthropic"])
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--base-url", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--live", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    # Live rows would be answered from the response cache (on by default since issue 17) on a
    # second sitting: it goes to an empty folder of each process's own.
    os.environ["META_EVALUATOR_CACHE_DIR"] = tempfile.mkdtemp()
    if args.child:
        print(json.dumps(child(args.child, args.rows, args.base_url, not args.live)))
        return
    header = (
        f"{'provider':<10} {'mode':<6} {'rows':>7} {'batches':>7} {'requests':>8} {'MB up':>6} "
        f"{'HTTP':>6} {'wall s':>7} {'prep+sub':>8} {'download':>8} {'map back':>8} "
        f"{'cpu µs/row':>10} {'RSS +MB':>7}"
    )
    print(header)
    for provider in args.providers:
        for batch, rows in ((True, args.rows), (False, args.live_rows)):
            if rows <= 0:
                continue
            with run_server(batch_seconds=0.0, max_seconds=3600) as server:
                found = run_child(provider, rows, server.base_url, batch)
                stats = server.stats()
            assert found["valid"] == rows, f"{provider}: only {found['valid']} of {rows} valid"
            counts = stats["batch"]
            http = (
                counts.get("files_uploaded", 0) + counts.get("batches_created", 0)
                + counts.get("polls", 0) + counts.get("downloads", 0) + stats["total_requests"]
            )  # fmt: skip
            print(
                f"{provider:<10} {'batch' if batch else 'live':<6} {rows:>7} "
                f"{counts.get('batches_created', 0):>7} "
                f"{counts.get('requests_submitted', stats['total_requests']):>8} "
                f"{_upload_mb(provider, counts, found):>6.1f} {http:>6} {found['wall']:>7.2f} "
                f"{found.get('prepare_and_submit', 0):>8.2f} "
                f"{found.get('download_and_read', 0):>8.2f} {found.get('map_back', 0):>8.2f} "
                f"{found['cpu'] / rows * 1e6:>10.0f} "
                f"{found['rss_peak_mb'] - found['rss_baseline_mb']:>7.0f}"
            )
            if batch:
                print(
                    f"{'':<10} dry run: {found['planned_batches']:.0f} batches, "
                    f"{found['planned_mb']:.1f} MB planned in {found['plan_seconds']:.2f} s; "
                    f"ledger {found['ledger_bytes'] / 1e6:.1f} MB, row store "
                    f"{found['row_store_bytes'] / 1e6:.1f} MB; upload and create "
                    f"{found.get('upload', 0):.2f} s"
                )


def _upload_mb(provider: str, counts: dict[str, int], found: dict[str, Any]) -> float:
    """MB of request lines sent: the uploaded files (OpenAI); Anthropic sends them inline."""
    if provider == "openai":
        return counts.get("bytes_uploaded", 0) / 1e6
    return found.get("request_bytes", 0) / 1e6


if __name__ == "__main__":
    main()
