"""Load 1,000,000 rows with DataLoader next to the bare polars reader (run by hand).

Usage: .venv/bin/python benchmarks/data_loading.py [--rows N]
DataLoader does more than polars: it checks every CSV row's width, keeps JSON id types, and
validates ids; the ratio is the price of those checks.
"""

import argparse
import os
import tempfile
import time

import numpy as np
import polars as pl

from meta_evaluator.data import DataLoader

parser = argparse.ArgumentParser()
parser.add_argument("--rows", type=int, default=1_000_000)
n = parser.parse_args().rows
rng = np.random.default_rng(0)
df = pl.DataFrame(
    {
        "id": np.arange(n),
        "prompt": [f"question number {i} about things" for i in range(n)],
        "response": ["a reasonably long answer, with a comma"] * n,
        "score": rng.random(n),
    }
)
d = tempfile.mkdtemp()
for fmt in ["csv", "parquet", "jsonl"]:
    p = os.path.join(d, "x." + fmt)
    {"csv": df.write_csv, "parquet": df.write_parquet, "jsonl": df.write_ndjson}[fmt](p)
    t = time.perf_counter()
    {"csv": pl.read_csv, "parquet": pl.read_parquet, "jsonl": pl.read_ndjson}[fmt](p)
    base = time.perf_counter() - t
    t = time.perf_counter()
    DataLoader.load("x", p, "id")
    ours = time.perf_counter() - t
    print(
        f"{n:,} rows {fmt:8} polars {base:6.2f}s  DataLoader {ours:6.2f}s  ratio {ours / base:5.1f}"
    )
