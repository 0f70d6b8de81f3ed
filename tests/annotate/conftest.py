"""The annotation page's tests' shared pieces: copies of the refusal example, and real
`meta-evaluator annotate` server processes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.annotate import free_port
from meta_evaluator.examples import create_example_project
from tests.conftest import stop

#: The console script installed next to the interpreter running the tests.
COMMAND = Path(sys.executable).with_name("meta-evaluator")
START_TIMEOUT = 30.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def refusal_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The refusal example (40 rows, int ids, ana/ben/chen imported), built once per module."""
    folder = tmp_path_factory.mktemp("template") / "refusal"
    create_example_project("refusal", folder)
    return folder


@pytest.fixture
def refusal(refusal_template: Path, tmp_path: Path) -> Path:
    """A fresh copy of the refusal example for one test (40 rows; ana, ben and chen imported
    with 40 labels each)."""
    folder = tmp_path / "refusal"
    shutil.copytree(refusal_template, folder)
    return folder


def data_ids(project: Path) -> list[Any]:
    """The ids of the project's data, as saved."""
    data = MetaEvaluator(project, load=True).data
    assert data is not None
    return data.ids.to_list()


def server_env() -> dict[str, str]:
    """This environment without an annotation token (servers started take none from it)."""
    return {k: v for k, v in os.environ.items() if k != "META_EVALUATOR_ANNOTATION_TOKEN"}


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
        env = server_env()
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
            stop(process)
