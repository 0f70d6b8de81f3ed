"""How long one commit of the response cache holds the event loop: while it evicts, and when
another process holds the write lock.

    python benchmarks/cache_stall.py [ENTRIES]

Builds a cache file of ENTRIES answers of ~1.5 kB (100,000: about 210 MB), lowers its bound
just below its size, then commits 20 batches of 100 answers, as a run does, and prints the
time of each commit (median, max): the first one starts the eviction. Then one commit while
another connection holds the write lock, and the `close` (which finishes the eviction steps
due and returns the free pages to the disk).
"""

from __future__ import annotations

import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from meta_evaluator.llm.cache import CACHE_FILE, ResponseCache
from meta_evaluator.llm.types import ChatResponse

ENTRIES = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
ANSWER = ChatResponse("x" * 1500, None, "stop", None, 1, 1)


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    try:
        cache = ResponseCache.open(folder)
        assert cache is not None
        for i in range(ENTRIES):
            cache.put(i.to_bytes(32, "big"), ANSWER)
        cache.close()
        size = (folder / CACHE_FILE).stat().st_size
        cache = ResponseCache.open(folder, max_mb=size / 1e6 * 0.99)
        assert cache is not None
        times = []
        for step in range(20):
            for j in range(99):  # the 100th, by `put`, would commit before the clock
                cache.put(b"new %d %d" % (step, j), ANSWER)
            started = time.perf_counter()
            cache.flush()
            times.append((time.perf_counter() - started) * 1e3)
        ordered = sorted(times)
        print(f"file {size / 1e6:.0f} MB, {ENTRIES} entries, bound 0.99 of it")
        print(
            f"  commit of 100 answers while evicting: first {times[0]:.1f} ms, "
            f"median {ordered[10]:.1f} ms, max {ordered[-1]:.1f} ms"
        )
        holder = sqlite3.connect(folder / CACHE_FILE, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        cache.put(b"locked", ANSWER)
        started = time.perf_counter()
        cache.flush()
        print(f"  commit finding the file locked: {(time.perf_counter() - started) * 1e3:.0f} ms")
        holder.execute("ROLLBACK")
        holder.close()
        started = time.perf_counter()
        cache.close()
        print(f"  close: {(time.perf_counter() - started) * 1e3:.0f} ms")
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
