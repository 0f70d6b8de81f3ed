"""The runner's own CPU per row, with no HTTP: N rows through the offline mock judge.

Usage: taskset -c 0 .venv/bin/python benchmarks/runner_overhead.py [--rows 20000] [--repeat 5]

Render the prompt, ask the mock client, parse and classify the answer, make the result row,
append it to the row store, build the table: everything a row costs outside an HTTP call. A
first run (another run id) pays the one-time imports and caches before the clock starts; then
each timed run is a fresh run of all N rows. Prints each run and the median, in ms of client
CPU per row. To compare two checkouts, run it in each, interleaved, in one sitting
(`PYTHONPATH=<checkout>`), pinned to one core.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import polars as pl

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask


def project(rows: int) -> MetaEvaluator:
    evaluator = MetaEvaluator(Path(tempfile.mkdtemp()) / "bench")
    frame = pl.DataFrame(
        {
            "qid": list(range(rows)),
            "prompt": [f"Question {i}?" for i in range(rows)],
            "response": [f"Answer {i}." for i in range(rows)],
        }
    )
    evaluator.add_data(DataLoader.load_from_dataframe("bench", frame, "qid"))
    evaluator.add_eval_task(
        EvalTask({"rejection": ["rejection", "not rejection"]}, ["prompt"], ["response"])
    )
    evaluator.add_judge("j", "mock", "mock-1", "Did {response} refuse {prompt}?")
    return evaluator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    evaluator = project(args.rows)
    evaluator.run_judges_async(run_id="warm", max_concurrency=64)
    figures = []
    print(f"{'run':>4} {'rows':>8} {'cpu ms/row':>11}")
    for run in range(1, args.repeat + 1):
        began = time.process_time()
        results = evaluator.run_judges_async(run_id=f"timed-{run}", max_concurrency=64)["j"]
        per_row = (time.process_time() - began) / args.rows * 1e3
        assert len(results) == args.rows
        figures.append(per_row)
        print(f"{run:>4} {args.rows:>8} {per_row:>11.4f}")
    print(f"{'med':>4} {args.rows:>8} {statistics.median(figures):>11.4f}")


if __name__ == "__main__":
    main()
