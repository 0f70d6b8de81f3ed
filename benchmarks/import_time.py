"""Import cost of meta-evaluator next to polars, from `python -X importtime` (run by hand).

Usage: .venv/bin/python benchmarks/import_time.py [--runs 7]
Prints the median cumulative import time of each statement's top module over fresh interpreters.
Target (issue 2): `import meta_evaluator` costs no more than 1.5x `import polars`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

CASES = [
    "import polars",
    "import meta_evaluator",
    "from meta_evaluator import MetaEvaluator",
    "import meta_evaluator.data",
]


def import_us(statement: str) -> int:
    """Microseconds of imports `statement` causes: the sum of the top-level cumulative times
    in `-X importtime` (modules the interpreter imports at start-up are excluded)."""
    baseline = _top_level(["pass"])
    return sum(t for m, t in _top_level([statement]).items() if m not in baseline)


def _top_level(statements: list[str]) -> dict[str, int]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "; ".join(statements)],
        capture_output=True,
        text=True,
        check=True,
    )
    times = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        _, cumulative, name = line.removeprefix("import time:").split("|")
        if cumulative.strip().isdigit() and not name.startswith("  "):
            times[name.strip()] = int(cumulative)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    times: dict[str, list[int]] = {statement: [] for statement in CASES}
    for _ in range(runs):  # interleaved, so drifts in machine load hit every statement alike
        for statement in CASES:
            times[statement].append(import_us(statement))
    rows = [(s, statistics.median(t) / 1000) for s, t in times.items()]
    polars_ms = rows[0][1]
    print(f"{'statement':<45} {'median ms':>10} {'x polars':>9}")
    for statement, ms in rows:
        print(f"{statement:<45} {ms:>10.1f} {ms / polars_ms:>9.2f}")


if __name__ == "__main__":
    main()
