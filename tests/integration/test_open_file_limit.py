"""Runs with more calls in flight than the process's open-file limit allows at first.

Each call in flight holds a socket. Many systems set a soft limit of 1,024 descriptors; a run at
1,024 in flight then failed with EMFILE (its state file could not even be written). The runner
raises the soft limit toward the hard one, and where the hard limit is too low it runs fewer
calls at once and says so. Each case runs in its own process: a lowered hard limit cannot be
raised again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fake_llm.server import run_server

ROOT = Path(__file__).parents[2]

RUN = textwrap.dedent(
    """
    import json, logging, resource, sys
    from pathlib import Path
    from tests.integration.test_loopback_runs import make_project

    soft, hard = int(sys.argv[3]), int(sys.argv[4])
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    evaluator = make_project(Path(sys.argv[1]), 240, sys.argv[2])
    counts = evaluator.run_judges_async(max_concurrency=240, cache=False)["j"].counts()
    print(json.dumps({"counts": counts, "soft": resource.getrlimit(resource.RLIMIT_NOFILE)[0]}))
    """
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no open-file limit")


def run_limited(tmp_path: Path, soft: int, hard: int) -> tuple[dict, str, dict]:
    with run_server(latency=0.3) as server:
        done = subprocess.run(
            [sys.executable, "-c", RUN, str(tmp_path / "p"), server.base_url, str(soft),
             str(hard)],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
            text=True, timeout=120,
        )  # fmt: skip
        stats = server.stats()
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr, stats


def test_the_soft_limit_is_raised_to_fit_every_call(tmp_path: Path) -> None:
    import resource

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 1024:
        pytest.skip(f"the hard open-file limit ({hard}) leaves no room to raise the soft one")
    found, log, stats = run_limited(tmp_path, 128, hard)
    assert found["counts"]["valid"] == 240
    assert found["soft"] > 240  # raised: 240 sockets and the run's files fit
    assert stats["max_in_flight"] == 240
    assert "open-file limit" not in log


def test_a_hard_limit_too_low_runs_fewer_calls_at_once_and_says_so(tmp_path: Path) -> None:
    found, log, stats = run_limited(tmp_path, 128, 200)
    assert found["counts"] == {"valid": 240, "invalid": 0, "error": 0, "skipped": 0}
    assert found["soft"] == 200
    assert 1 <= stats["max_in_flight"] < 200  # every call had a socket; none failed (EMFILE)
    assert "240 calls in flight were asked for" in log and "ulimit" in log
