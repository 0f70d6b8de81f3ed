"""How fast a run gives up on endpoints that cannot be reached, and whether it says why (by hand).

Usage: .venv/bin/python benchmarks/dead_endpoints.py [--rows 400] [--runs 3] [--against DIR]

Builds a project of `--rows` rows with three judges: one at a loopback port where nothing
listens (connection refused), one at a host that does not resolve (`.invalid`), and the offline
mock. Each run is `meta-evaluator run` in a fresh copy of the project, not on a terminal, as a
scheduler runs it. Prints the median wall time, the exit code, per judge the rows written and
the attempts made, and whether the output names each dead endpoint's host:port.
`--against DIR` times another checkout of meta-evaluator (for example `git worktree add
/tmp/base 52fec9f`) in the same sitting, through the same interpreter.
Target (issue 15): 400 rows to an unreachable endpoint end in under 5 s, with the address said.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

BUILD = """
import sys
import polars as pl
from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask

root, port, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
frame = pl.DataFrame({"qid": list(range(rows)), "prompt": [f"q{i}" for i in range(rows)],
                      "response": [f"a{i}" for i in range(rows)]})
evaluator = MetaEvaluator(root)
evaluator.add_data(DataLoader.load_from_dataframe("d", frame, "qid"))
evaluator.add_eval_task(EvalTask(task_schemas={"rejection": ["rejection", "not rejection"]},
                                 prompt_columns=["prompt"], response_columns=["response"]))
prompt = "Judge {prompt} {response}"
evaluator.add_judge("refused", "openai", "m", prompt, base_url=f"http://127.0.0.1:{port}/v1")
evaluator.add_judge("no_dns", "openai", "m", prompt, base_url="http://nowhere.invalid:8000/v1")
evaluator.add_judge("offline", "mock", "m", prompt)
evaluator.save_state()
"""


def closed_port() -> int:
    """A loopback port with nothing listening (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_once(template: Path, env: dict[str, str]) -> tuple[float, int, str, dict[str, tuple]]:
    """One `meta-evaluator run` in a fresh copy: seconds, exit code, output, per-judge counts."""
    with tempfile.TemporaryDirectory() as scratch:
        project = Path(scratch) / "p"
        shutil.copytree(template, project)
        command = [sys.executable, "-m", "meta_evaluator.cli", "run", str(project)]
        begun = time.perf_counter()
        # cwd outside any checkout: `python -m` puts the working folder first on sys.path
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600,
                              cwd=scratch)  # fmt: skip
        seconds = time.perf_counter() - begun
        counts = {}
        for judge in ("refused", "no_dns", "offline"):
            files = list((project / "results").glob(f"*/{judge}.jsonl"))
            if files:
                frame = pl.read_ndjson(files[0])
                counts[judge] = (frame.height, int(frame["attempts"].sum()))
            else:
                counts[judge] = (0, 0)
        return seconds, done.returncode, done.stdout + done.stderr, counts


def measure(label: str, checkout: Path | None, rows: int, runs: int) -> list[str]:
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)
    port = closed_port()
    with tempfile.TemporaryDirectory() as scratch:
        template = Path(scratch) / "template"
        subprocess.run([sys.executable, "-c", BUILD, str(template), str(port), str(rows)],
                       env=env, check=True, capture_output=True, cwd=scratch)  # fmt: skip
        results = [run_once(template, env) for _ in range(runs)]
    seconds = statistics.median(r[0] for r in results)
    _, code, output, counts = results[-1]
    named = all(a in output for a in (f"127.0.0.1:{port}", "nowhere.invalid:8000"))
    version = subprocess.run(
        [sys.executable, "-c", "import meta_evaluator; print(meta_evaluator.__file__)"],
        env=env, capture_output=True, text=True, cwd=tempfile.gettempdir(),
    ).stdout.strip()  # fmt: skip
    lines = [f"{label}: {version}"]
    for judge, (written, attempts) in counts.items():
        lines.append(
            f"{label:<12} {seconds:>9.2f} {code:>5} {judge:<9} {written:>7} {attempts:>9} "
            f"{'yes' if named else 'no':>6}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--against", type=Path, default=None)
    args = parser.parse_args()
    print(f"{args.rows} rows, median of {args.runs} runs, not on a terminal")
    print(f"{'checkout':<12} {'median s':>9} {'exit':>5} {'judge':<9} {'rows':>7} "
          f"{'attempts':>9} {'named':>6}")  # fmt: skip
    for line in measure("this", None, args.rows, args.runs):
        print(line)
    if args.against is not None:
        for line in measure(args.against.name, args.against, args.rows, args.runs):
            print(line)


if __name__ == "__main__":
    main()
