"""How long `meta-evaluator plan-labels` takes on a pilot of 5 annotators x 1,000 items (issue 20).

Usage: nice .venv/bin/python benchmarks/plan_labels.py [--items 1000] [--annotators 5]
       [--runs 5] [--simulations 200] [--keep]

The project is built first (untimed, in a temporary folder): --items rows labelled a/b/c from
a hidden truth, --annotators annotators and one judge (imported as its complete run), each
right about 80% of the time (else a random label). Then the whole command,
`python -m meta_evaluator.cli plan-labels PROJECT` (start-up, reading the labels, the
simulation of every design: 4 annotator counts x 12 item counts, --simulations studies each,
writing the JSON and the plot), runs --runs times after one untimed warm-up, each as a process
of its own. Printed: wall seconds (median, min, max), CPU seconds (user + system) and the peak
resident memory of the process, from the operating system's accounting of each finished child
(`os.wait4`). The target is under 5 s. On a shared machine, run it with `nice` and read the
figures as upper bounds.

Measured (2026-11-28, the shared 2-core machine, whole process, 5 x 1,000, 200 simulations):
wall 1.78 s median of 9 runs (min 1.69, max 2.23), CPU 2.1 s, peak 158 MB. Before
`stats.label_budget` scored each study from draw counts (commit ade27dc), the same command
took 4.7 s wall and 4.2 s CPU at a peak of 258 MB (7 runs paired with the new code under the
same load: wall ratio 0.49). Of the 2.1 s, the simulation of the 44 designs is about 0.6 s
(2.6 s before), importing matplotlib for the plot 0.5 s, start-up most of the rest.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
LABELS = ["a", "b", "c"]


def build(folder: Path, items: int, annotators: int, seed: int = 0) -> Path:
    """The project: data, the annotators' labels, one judge's complete run, all imported."""
    sys.path.insert(0, str(ROOT))
    from meta_evaluator import MetaEvaluator
    from meta_evaluator.data import DataLoader
    from meta_evaluator.eval_task import EvalTask

    rng = np.random.default_rng(seed)
    truth = rng.integers(0, len(LABELS), items)
    ids = np.arange(1, items + 1)

    def noisy() -> list[str]:
        right = rng.random(items) < 0.8
        codes = np.where(right, truth, rng.integers(0, len(LABELS), items))
        return [LABELS[c] for c in codes]

    project = folder / "project"
    evaluator = MetaEvaluator(project)
    frame = pl.DataFrame({"id": ids, "text": [f"row {i}" for i in ids]})
    evaluator.add_data(DataLoader.load_from_dataframe("rows", frame, "id"))
    evaluator.add_eval_task(
        EvalTask(task_schemas={"verdict": LABELS}, prompt_columns=None, response_columns=["text"])
    )
    evaluator.save_state()
    for index in range(annotators):
        path = folder / f"human{index}.csv"
        pl.DataFrame({"original_id": ids, "verdict": noisy()}).write_csv(path)
        evaluator.add_external_annotation_results(path, f"human{index}")
    path = folder / "judge.csv"
    pl.DataFrame({"original_id": ids, "verdict": noisy()}).write_csv(path)
    evaluator.add_external_judge_results(path, "judge", run_id="pilot")
    return project


def run_once(command: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak memory (MB) of one run of `command`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    began = time.perf_counter()
    # `python -m` puts the working folder first on the path: run from the repository's root
    process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - began
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{command} exited with {process.returncode}")
    peak = usage.ru_maxrss / 1024  # KB on Linux
    return wall, usage.ru_utime + usage.ru_stime, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--annotators", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--simulations", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="keep the project folder")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="plan_labels_"))
    try:
        project = build(folder, args.items, args.annotators)
        command = [sys.executable, "-m", "meta_evaluator.cli", "plan-labels", str(project),
                   "--simulations", str(args.simulations)]  # fmt: skip
        run_once(command)  # warm-up: file caches, bytecode
        figures = [run_once(command) for _ in range(args.runs)]
        walls, cpus, peaks = zip(*figures, strict=True)
        print(f"plan-labels, {args.annotators} annotators x {args.items:,} items, "
              f"{args.simulations} simulations per design, {args.runs} runs "
              "(whole process):")  # fmt: skip
        print("| figure | median | min | max |\n| --- | --- | --- | --- |")
        for name, values, unit in (("wall", walls, "s"), ("cpu", cpus, "s"),
                                   ("peak memory", peaks, "MB")):  # fmt: skip
            print(f"| {name} | {statistics.median(values):.2f} {unit} | {min(values):.2f} | "
                  f"{max(values):.2f} |")  # fmt: skip
        print(f"target: under 5 s wall; {'met' if statistics.median(walls) < 5 else 'NOT met'}")
    finally:
        if args.keep:
            print(f"project kept in {folder / 'project'}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
