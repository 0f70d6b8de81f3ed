"""A generated project of N rows, end to end: each step's wall time and peak memory (issue 21).

Usage: nice .venv/bin/python benchmarks/project_scale.py [--rows 10000 100000 1000000] [--keep]

For each size N (default 1,000,000) the script writes, untimed, into a temporary folder: the
data (`qid`, `prompt`, `response`: N rows), three annotators' label files and one judge's label
file (CSV, `original_id` + `rejection`, about 10% of labels flipped from a shared truth and
about 1% not a label of the task, so each import has invalid rows to report). Then it times,
in this order, on one project with a single-choice task of two labels:

  data         DataLoader.load_csv + add_data + add_eval_task + add_judge (mock) + save_state
  annot:<id>   add_external_annotation_results, once per annotator (ana, ben, chen)
  judge-import add_external_judge_results (judge `imported`)
  mock-run     run_judges_async(["mock"]): the offline mock judge over all N rows
  load         load_all_judge_results + load_all_human_results
  compare      compare_async: accuracy, Cohen's kappa, alt-test (two judges: mock, imported)
  report       meta_evaluator.reports.write_report

How it is measured. Each step runs in a fresh Python process (this script, re-invoked), so no
step inherits another's caches, garbage or heap high-water mark. That process imports
meta-evaluator and opens the project (`MetaEvaluator(dir, load=True)`, for every step but
`data`); both are outside the step's figures, and the opening's seconds are shown apart
(`open s`). Then it resets the kernel's RSS high-water mark (writing 5 to
/proc/self/clear_refs), reads its RSS (`start MB`), runs the step with `time.perf_counter()`
around it (`seconds`, `us/row` = seconds / N), and reads VmHWM from /proc/self/status
(`peak MB`): the largest resident set of the whole process (every thread) during the step,
including what was resident at its start (the interpreter, polars, the opened project). The
kernel keeps that figure itself, so no short spike between samples is missed. Where
clear_refs cannot be written, `peak MB` is the process's peak since it started (marked `*`).

Targets (issue 21), at 1,000,000 rows: each import <= 2 s; compare <= 5 s and <= 600 MB peak;
the mock run <= 90 s; report <= 10 s; and each step growing linearly from 10^4 to 10^6 rows
(`--rows 10000 100000 1000000` prints the three tables). Figures are not asserted. On a shared
machine, run it with `nice` and read seconds as upper bounds. To measure another checkout, put
it first on the path (`PYTHONPATH=<checkout>`, running the script from outside this folder's
root); the first line printed names the meta_evaluator package measured.

Peak MB is the resident set, which includes memory polars' allocator (jemalloc) has freed but
not yet returned; `_RJEM_MALLOC_CONF=dirty_decay_ms:0,muzzy_decay_ms:0` makes it return pages
at once, and the peak then shows the memory in use.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import numpy as np
import polars as pl

if TYPE_CHECKING:
    from meta_evaluator import MetaEvaluator

ANNOTATORS = ("ana", "ben", "chen")
LABELS = ("rejection", "not rejection")
BAD_LABEL = "unsure"  # not a label of the task: kept as an invalid row by every import
JUDGE = "mock"
IMPORTED_JUDGE = "imported"


# --- generation (untimed) ------------------------------------------------------------------


def labels_file(path: Path, ids: np.ndarray, truth: np.ndarray, seed: int) -> None:
    """`original_id`, `rejection`: about 10% of `truth` flipped, about 1% not a label."""
    rng = np.random.default_rng(seed)
    flip = rng.random(ids.size) < 0.10
    bad = rng.random(ids.size) < 0.01
    codes = np.where(flip, 1 - truth, truth)
    values = np.where(bad, BAD_LABEL, np.asarray(LABELS)[codes])
    pl.DataFrame({"original_id": ids, "rejection": values}).write_csv(path)


def generate(folder: Path, rows: int, seed: int) -> None:
    ids = np.arange(1, rows + 1)
    pl.DataFrame({"qid": ids}).with_columns(
        prompt=pl.format("Question {} about something a user asked?", pl.col("qid")),
        response=pl.format("Answer {}: a reasonably long reply, with a comma.", pl.col("qid")),
    ).write_csv(folder / "data.csv")
    truth = np.random.default_rng(seed).integers(0, 2, rows)
    for k, name in enumerate((*ANNOTATORS, IMPORTED_JUDGE), start=1):
        labels_file(folder / f"{name}.csv", ids, truth, seed + k)


# --- one step, in a fresh process ----------------------------------------------------------


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


class Figures(TypedDict):
    seconds: float
    peak_mb: float
    peak_exact: bool
    start_mb: float
    open_s: float
    note: str


def data_step(project: Path, folder: Path) -> str:
    from meta_evaluator import MetaEvaluator
    from meta_evaluator.data import DataLoader
    from meta_evaluator.eval_task import EvalTask

    evaluator = MetaEvaluator(project, load=False)
    evaluator.add_data(DataLoader.load_csv("bench", folder / "data.csv", id_column="qid"))
    evaluator.add_eval_task(EvalTask({"rejection": list(LABELS)}, ["prompt"], ["response"]))
    evaluator.add_judge(JUDGE, "mock", "mock-1", "Did {response} refuse {prompt}?")
    evaluator.save_state()
    return f"{len(evaluator.data.ids) if evaluator.data is not None else 0} rows"


def project_step(
    step: str, evaluator: MetaEvaluator, folder: Path, max_concurrency: int | None
) -> str:
    from meta_evaluator.reports import write_report
    from meta_evaluator.scores import MetricConfig, MetricsConfig
    from meta_evaluator.scores.metrics import AccuracyScorer, AltTestScorer, CohensKappaScorer

    if step.startswith("annot:"):
        name = step.split(":", 1)[1]
        return str(evaluator.add_external_annotation_results(folder / f"{name}.csv", name).counts())
    if step == "judge-import":
        path = folder / f"{IMPORTED_JUDGE}.csv"
        return str(evaluator.add_external_judge_results(path, IMPORTED_JUDGE).counts())
    if step == "mock-run":
        if max_concurrency is None:
            results = evaluator.run_judges_async([JUDGE])
        else:
            results = evaluator.run_judges_async([JUDGE], max_concurrency=max_concurrency)
        return str(results[JUDGE].counts())
    if step == "load":
        judges = evaluator.load_all_judge_results()
        humans = evaluator.load_all_human_results()
        rows = sum(map(len, judges.values())) + sum(map(len, humans.values()))
        return f"{len(judges)} judges, {len(humans)} annotators, {rows:,} rows in all"
    if step == "compare":
        metrics = [
            MetricConfig(scorer=scorer, task_names=["rejection"], aggregation_name="single")
            for scorer in (AccuracyScorer(), CohensKappaScorer(), AltTestScorer(epsilon=0.2))
        ]
        scores = evaluator.compare_async(MetricsConfig(metrics=metrics))
        return "; ".join(
            f"{r.scorer_name}/{r.judge_id}: "
            + ", ".join(
                f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}"
                for k, v in r.scores.items()
                if k in ("accuracy", "cohens_kappa", "passed")
            )
            for _, results in scores.values()
            for r in results
        )
    if step == "report":
        return f"{write_report(evaluator).stat().st_size // 1024} kB html"
    raise SystemExit(f"unknown step {step!r}")


def run_step(step: str, folder: Path, max_concurrency: int | None) -> Figures:
    """Open the project in `folder`/project (but for `data`), run one step; its figures."""
    from meta_evaluator import MetaEvaluator

    project = folder / "project"
    began = time.perf_counter()
    evaluator = None if step == "data" else MetaEvaluator(project, load=True)
    opened = time.perf_counter() - began
    reset = _reset_peak()
    start_mb = _status_mb("VmRSS")
    began = time.perf_counter()
    if evaluator is None:
        note = data_step(project, folder)
    else:
        note = project_step(step, evaluator, folder, max_concurrency)
    seconds = time.perf_counter() - began
    return Figures(
        seconds=seconds,
        peak_mb=_status_mb("VmHWM"),
        peak_exact=reset,
        start_mb=start_mb,
        open_s=opened,
        note=note,
    )


# --- the driver ----------------------------------------------------------------------------


def steps() -> list[str]:
    return [
        "data",
        *(f"annot:{name}" for name in ANNOTATORS),
        "judge-import",
        "mock-run",
        "load",
        "compare",
        "report",
    ]


def measure(step: str, folder: Path, max_concurrency: int | None) -> Figures:
    command = [sys.executable, __file__, "--step", step, "--folder", str(folder)]
    if max_concurrency is not None:
        command += ["--max-concurrency", str(max_concurrency)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"step {step} failed with status {done.returncode}")
    figures: Figures = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def header() -> str:
    return (
        f"{'step':<13} {'rows':>9} {'seconds':>9} {'peak MB':>9} {'us/row':>9}"
        f" {'start MB':>9} {'open s':>7}"
    )


def line(step: str, rows: int, figures: Figures) -> str:
    seconds = figures["seconds"]
    mark = "" if figures["peak_exact"] else "*"
    return (
        f"{step:<13} {rows:>9,} {seconds:>9.2f} {figures['peak_mb']:>8.0f}{mark or ' '}"
        f" {seconds / rows * 1e6:>9.2f} {figures['start_mb']:>9.0f}"
        f" {figures['open_s']:>7.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--max-concurrency",
        type=int,
        default=None,
        help="for the mock run (default: the library's)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated folders")
    parser.add_argument("--notes", action="store_true", help="print each step's counts/scores")
    parser.add_argument("--step", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        print(json.dumps(run_step(args.step, args.folder, args.max_concurrency)))
        return

    import meta_evaluator

    print(f"meta_evaluator from {Path(meta_evaluator.__file__).parent}")
    root = Path(tempfile.mkdtemp(prefix="project_scale-"))
    try:
        totals: dict[int, float] = {}
        for rows in args.rows:
            folder = root / f"n{rows}"
            folder.mkdir()
            began = time.perf_counter()
            generate(folder, rows, args.seed)
            print(f"\n{rows:,} rows (files generated in {time.perf_counter() - began:.1f} s)")
            print(header(), flush=True)
            totals[rows] = 0.0
            for step in steps():
                figures = measure(step, folder, args.max_concurrency)
                totals[rows] += figures["seconds"]
                print(line(step, rows, figures), flush=True)
                if args.notes and figures["note"]:
                    print(f"{'':<13} {figures['note']}", flush=True)
            print(f"{'total':<13} {rows:>9,} {totals[rows]:>9.2f}", flush=True)
        if args.keep:
            print(f"\nkept: {root}")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
