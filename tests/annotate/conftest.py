"""Real `meta-evaluator annotate` server processes for the annotation page's tests."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from meta_evaluator.annotate import free_port

#: The console script installed next to the interpreter running the tests.
COMMAND = Path(sys.executable).with_name("meta-evaluator")
START_TIMEOUT = 30.0


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture
def annotate_server(tmp_path: Path) -> Iterator[Callable[[Path], str]]:
    """Start `meta-evaluator annotate PROJECT --host 127.0.0.1 --port P`; gives its base URL.

    Each server is a process of its own, waited for until it answers (bounded), and stopped
    (terminate, then kill) at teardown.
    """
    if not COMMAND.is_file():
        pytest.skip(f"{COMMAND} is missing (pip install -e . installs the console script)")
    started: list[subprocess.Popen[bytes]] = []

    def start(project: Path) -> str:
        port = free_port()
        log = tmp_path / f"server-{port}.log"
        env = {k: v for k, v in os.environ.items() if k != "META_EVALUATOR_ANNOTATION_TOKEN"}
        with log.open("wb") as output:  # the server writes to its own copy of the descriptor
            process = subprocess.Popen(
                [
                    str(COMMAND),
                    "annotate",
                    str(project),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                ],
                stdout=output,
                stderr=subprocess.STDOUT,
                env=env,
            )
        started.append(process)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if process.poll() is not None:
                shown = log.read_text(errors="replace")
                pytest.fail(f"the annotate server stopped (exit {process.returncode}): {shown}")
            try:
                if httpx.get(f"{base}/api/progress", timeout=2).status_code == 200:
                    return base
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the annotate server did not answer on {base} in {START_TIMEOUT}s")
            time.sleep(0.1)

    try:
        yield start
    finally:
        for process in started:
            _stop(process)
