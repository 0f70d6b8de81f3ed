"""Client CPU per row against @copilotkit/aimock, a server nobody here wrote (run by hand).

Usage: taskset -c 0 .venv/bin/python benchmarks/aimock_throughput.py [--rows 2000]
       [--concurrency 64] [--core 1]

Checks `judge_throughput.py`'s figures (measured against our own loopback server) with another
server: aimock answers every request at once from one fixture, pinned to `--core` while the
client should run on another core (`taskset -c 0`). A first run (another run id) pays the
imports and the connection set-up before the clock starts. aimock is the copy the tests install
(`tests/integration/test_aimock.py` puts it under `.cache/`); run that test once first.
To compare two checkouts, run this in each, interleaved, with `PYTHONPATH=<checkout>`.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import polars as pl

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask

CLI = Path(__file__).parents[1] / ".cache/aimock-1.43.0/node_modules/@copilotkit/aimock/dist/cli.js"


def start(folder: Path, core: int) -> tuple[subprocess.Popen[bytes], str]:
    """aimock on a free loopback port, answering every judge request with one label."""
    answer = json.dumps({"rejection": "rejection"})
    fixtures = {"fixtures": [{"match": {"userMessage": "Judge"}, "response": {"content": answer}}]}
    (folder / "fixtures.json").write_text(json.dumps(fixtures))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        ["taskset", "-c", str(core), "node", str(CLI), "-p", str(port),
         "-f", str(folder / "fixtures.json"), "--log-level", "warn"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    return server, f"http://127.0.0.1:{port}/v1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--core", type=int, default=1, help="the core aimock runs on")
    args = parser.parse_args()
    if not CLI.is_file():
        raise SystemExit(f"{CLI} is missing: run tests/integration/test_aimock.py once first")
    folder = Path(tempfile.mkdtemp())
    # The response cache (on by default since issue 17) in an empty folder of the run's own:
    # every timed row is a call, and the user's cache is left alone.
    os.environ["META_EVALUATOR_CACHE_DIR"] = str(folder / "cache")
    server, base_url = start(folder, args.core)
    try:
        evaluator = MetaEvaluator(folder / "bench")
        frame = pl.DataFrame(
            {"qid": list(range(args.rows)), "response": [f"r{i}" for i in range(args.rows)]}
        )
        evaluator.add_data(DataLoader.load_from_dataframe("bench", frame, "qid"))
        evaluator.add_eval_task(
            EvalTask({"rejection": ["rejection", "not rejection"]}, None, ["response"])
        )
        evaluator.add_judge("j", "openai", "gpt-4o-mini", "Judge: {response}", base_url=base_url)
        evaluator.add_judge("warm", "openai", "gpt-4o-mini", "Judge (warm-up): {response}",
                            base_url=base_url)  # fmt: skip
        evaluator.run_judges_async(["warm"], run_id="warm", max_concurrency=args.concurrency)
        cpu, wall = time.process_time(), time.perf_counter()
        timed = evaluator.run_judges_async(["j"], run_id="timed", max_concurrency=args.concurrency)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        valid = timed["j"].counts()["valid"]
        print(f"{'rows':>6} {'C':>4} {'wall s':>7} {'rows/s':>7} {'cpu ms/row':>11} {'valid':>6}")
        print(
            f"{args.rows:>6} {args.concurrency:>4} {wall:>7.2f} {args.rows / wall:>7.0f} "
            f"{cpu / args.rows * 1e3:>11.3f} {valid:>6}"
        )
    finally:
        server.terminate()
        server.wait(5)


if __name__ == "__main__":
    main()
