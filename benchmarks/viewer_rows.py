"""How fast the results viewer pages through a large project (issue 18): a table of timings.

Usage: nice .venv/bin/python benchmarks/viewer_rows.py [--rows 100000] [--repeat 9] [--keep]
       nice .venv/bin/python benchmarks/viewer_rows.py --project KEPT/project --rows N

The project is the one benchmarks/project_scale.py builds (untimed, in a temporary folder):
N rows of data, three annotators' labels (ana, ben, chen: about 10% flipped from a shared
truth, 1% not a label), an imported judge and the offline mock judge run over every row.
Then `meta-evaluator view PROJECT --port P` is started as a process of its own (the server
as a user runs it) and each request below is sent with httpx over loopback, one at a time:

  rows: first page    GET /api/rows?judge=mock                          (50 rows)
  rows: flag          GET /api/rows?judge=mock&flag=disagree
  rows: deep page     GET /api/rows?judge=mock&page=<last but one>
  rows: search        GET /api/rows?judge=mock&q=<text in one row in 10,000>
  rows: cell          GET /api/rows?judge=mock&judge_label=rejection&human_label=not+rejection
  rows: sorted        GET /api/rows?judge=mock&sort=-humans_against&page=3
  confusion           GET /api/confusion?judge=mock
  row                 GET /api/rows/<an id in the middle>
  list page           GET /?judge=mock&flag=disagree                    (HTML)
  list page, 2nd judge GET /?judge=imported

`--keep` keeps the project; `--project` measures one kept before (give its `--rows`).
Each case is asked `--repeat` times: the first request (cold: the first of the server reads
the files and builds the table; the first search builds the search text; later cases find
them built) is shown apart from the median, min and max of the others. Times are wall-clock
milliseconds as the client sees them (connection reused). The target is < 300 ms a page.
On a shared machine, run it with `nice` and read the figures as upper bounds.
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

import httpx

sys.path.insert(0, str(Path(__file__).parent))

import project_scale

START_TIMEOUT = 300.0


def build(folder: Path, rows: int, seed: int) -> Path:
    """The project of `project_scale`: data, three annotators, an imported and a mock judge."""
    from meta_evaluator import MetaEvaluator

    project_scale.generate(folder, rows, seed)
    project = folder / "project"
    project_scale.data_step(project, folder)
    evaluator = MetaEvaluator(project, load=True)
    for step in [f"annot:{a}" for a in project_scale.ANNOTATORS] + ["judge-import", "mock-run"]:
        began = time.perf_counter()
        project_scale.project_step(step, evaluator, folder, None)
        print(f"  {step:<13} {time.perf_counter() - began:6.1f} s", flush=True)
    return project


def start(project: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    command = Path(sys.executable).with_name("meta-evaluator")
    argv = [str(command)] if command.is_file() else [sys.executable, "-m", "meta_evaluator.cli"]
    env = {k: v for k, v in os.environ.items() if k != "META_EVALUATOR_VIEW_TOKEN"}
    with log.open("wb") as output:
        return subprocess.Popen(
            [*argv, "view", str(project), "--port", str(port)],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=env,
        )


def wait(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if process.poll() is not None:
            raise SystemExit(f"the viewer stopped: {log.read_text(errors='replace')}")
        try:
            httpx.head(f"{base}/nothing", timeout=5)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise SystemExit("the viewer did not start") from None
            time.sleep(0.2)


def cases(rows: int) -> list[tuple[str, str, dict[str, str]]]:
    judge = {"judge": project_scale.JUDGE}
    last = -(-rows // 50)
    return [
        ("rows: first page", "/api/rows", judge),
        ("rows: flag", "/api/rows", {**judge, "flag": "disagree"}),
        ("rows: deep page", "/api/rows", {**judge, "page": str(last - 1)}),
        ("rows: search", "/api/rows", {**judge, "q": "question 4321 about"}),
        (
            "rows: cell",
            "/api/rows",
            {**judge, "judge_label": "rejection", "human_label": "not rejection"},
        ),
        ("rows: sorted", "/api/rows", {**judge, "sort": "-humans_against", "page": "3"}),
        ("confusion", "/api/confusion", judge),
        ("row", f"/api/rows/{rows // 2}", {}),
        ("list page", "/", {**judge, "flag": "disagree"}),
        ("list page, 2nd judge", "/", {"judge": project_scale.IMPORTED_JUDGE}),
    ]


def measure(base: str, rows: int, repeat: int) -> None:
    print(
        f"\n{'request':<22} {'cold ms':>9} {'median ms':>10} {'min ms':>8} {'max ms':>8}"
        f" {'matched':>9} {'bytes':>9}"
    )
    with httpx.Client(base_url=base, timeout=300) as http:
        for name, path, params in cases(rows):
            times = []
            for _ in range(repeat):
                began = time.perf_counter()
                response = http.get(path, params=params)
                times.append((time.perf_counter() - began) * 1000)
                response.raise_for_status()
            matched = response.json().get("total", "") if path.startswith("/api/rows") else ""
            if path.startswith("/api/rows/"):
                matched = 1
            warm = times[1:]
            print(
                f"{name:<22} {times[0]:>9.1f} {statistics.median(warm):>10.1f}"
                f" {min(warm):>8.1f} {max(warm):>8.1f} {matched!s:>9} {len(response.content):>9,}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=9, help="requests per case (>= 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", action="store_true", help="keep the generated project")
    parser.add_argument("--project", type=Path, help="a project this script built (--keep)")
    args = parser.parse_args()
    if args.repeat < 2:
        parser.error("--repeat must be 2 or more: the first request is reported apart")

    import meta_evaluator
    from meta_evaluator.view import free_port

    print(f"meta_evaluator from {Path(meta_evaluator.__file__).parent}")
    root = Path(tempfile.mkdtemp(prefix="viewer_rows-"))
    process = None
    try:
        if args.project is not None:
            project = args.project
        else:
            print(f"building a project of {args.rows:,} rows (untimed) in {root}", flush=True)
            project = build(root, args.rows, args.seed)
        port = free_port()
        log = root / "viewer.log"
        began = time.perf_counter()
        process = start(project, port, log)
        base = f"http://127.0.0.1:{port}"
        wait(base, process, log)
        print(f"viewer answering after {time.perf_counter() - began:.1f} s (process start,"
              " import, results read once to check the project has a run)")  # fmt: skip
        measure(base, args.rows, args.repeat)
        if args.keep:
            print(f"\nkept: {project}")
    finally:
        if process is not None and process.poll() is None:
            process.terminate()
            process.wait(timeout=10)
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
