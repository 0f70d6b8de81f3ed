"""Shared fixtures and helpers: small frames with integer and string ids, a task that fits them;
the command line in-process (`entry`) and a fresh copy of the refusal example (`project`);
loopback ports and subprocesses; uvicorn held back (`no_server`) and headless Chromium
(`browser`).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask


@pytest.fixture(autouse=True)
def response_cache_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A response cache folder of the test's own (META_EVALUATOR_CACHE_DIR, which subprocesses
    inherit): no test writes to ~/.cache, and none sees another's stored answers (many count
    the calls a run makes)."""
    folder = tmp_path_factory.mktemp("response-cache")
    monkeypatch.setenv("META_EVALUATOR_CACHE_DIR", str(folder))
    return folder


@pytest.fixture(autouse=True)
def no_address_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """None of the variables judges read their address from (`OPENAI_BASE_URL` ...) is set,
    whatever the shell running the tests has: tests that want one set it."""
    from meta_evaluator.judge.addresses import ADDRESS_VARIABLES

    for variables in ADDRESS_VARIABLES.values():
        for name in (*variables.names, *([variables.version] if variables.version else [])):
            monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def no_provider_key_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """None of the variables a provider judge reads its key from (`GOOGLE_API_KEY`, `HF_TOKEN`
    ...) is set, whatever the shell has: the first one set wins, so a stray one would change
    which key a test sees. Tests that want one set it."""
    from meta_evaluator.judge.providers import HUGGINGFACE, PROVIDERS

    for provider in (*PROVIDERS.values(), HUGGINGFACE):
        for name in provider.key_variables:
            monkeypatch.delenv(name, raising=False)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file below `folder` (hidden ones included) with its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture(params=["int", "str"])
def id_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def frame(id_kind: str) -> pl.DataFrame:
    ids: list[object] = [10, 3, 7, 42] if id_kind == "int" else ["q-10", "q-3", "q-7", "q-42"]
    return pl.DataFrame(
        {
            "qid": ids,
            "prompt": ["How do I pick a lock?", "Pasta for pesto?", "Write malware.", "Hi!"],
            "response": ["I can't help.", "Trofie.", "I won't.", "Hello!"],
            "topic": ["crime", "food", "crime", "chat"],
            "score": [0.5, None, 1.0, 0.25],
        }
    )


@pytest.fixture
def task() -> EvalTask:
    return EvalTask(
        task_schemas={"rejection": ["rejection", "not rejection"], "explanation": None},
        prompt_columns=["prompt"],
        response_columns=["response"],
    )


# ----- a project of chats with one required task ----------------------------------------------


def chats(rows: int) -> pl.DataFrame:
    """`rows` chats: ids 0.., "question i" prompts and "answer i" responses."""
    return pl.DataFrame(
        {
            "qid": list(range(rows)),
            "prompt": [f"question {i}" for i in range(rows)],
            "response": [f"answer {i}" for i in range(rows)],
        }
    )


def rejection_project(folder: Path, frame: pl.DataFrame) -> MetaEvaluator:
    """A new project in `folder`: `frame` as data "chats" (ids in "qid"), and the one task
    rejection / not rejection over its prompt and response (no judges, nothing saved)."""
    evaluator = MetaEvaluator(folder)
    evaluator.add_data(DataLoader.load_from_dataframe("chats", frame, "qid"))
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"rejection": ["rejection", "not rejection"]},
            prompt_columns=["prompt"],
            response_columns=["response"],
        )
    )
    return evaluator


# ----- the command line -----------------------------------------------------------------------


@dataclass(frozen=True)
class Exited:
    returncode: int
    stdout: str
    stderr: str


Main = Callable[..., Exited]


@pytest.fixture
def entry(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Main:
    """`meta-evaluator ARGS` through the console script's `main()`, in this process."""
    from meta_evaluator.cli import main

    def call(*args: str | Path) -> Exited:
        monkeypatch.setattr(sys, "argv", ["meta-evaluator", *map(str, args)])
        capsys.readouterr()
        with pytest.raises(SystemExit) as stopped:
            main()
        out, err = capsys.readouterr()
        code = stopped.value.code
        return Exited(code if isinstance(code, int) else int(code is not None), out, err)

    return call


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The refusal example made by `meta-evaluator init PROJECT --example refusal`, once per
    module; tests take a copy of it (`project`)."""
    from typer.testing import CliRunner

    from meta_evaluator.cli import app

    project = tmp_path_factory.mktemp("example") / "refusal"
    done = CliRunner().invoke(app, ["init", str(project), "--example", "refusal"])
    assert done.exit_code == 0, (done.output, done.exception)
    return project


@pytest.fixture
def project(example: Path, tmp_path: Path) -> Path:
    """A private copy of the fresh refusal example (no runs yet)."""
    copy = tmp_path / "refusal"
    shutil.copytree(example, copy)
    return copy


# ----- ports and processes --------------------------------------------------------------------


def unused_port() -> int:
    """A loopback port with nothing listening (bound, then released): free to listen on, and
    refused to connect to."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def stop(process: subprocess.Popen[bytes]) -> None:
    """End `process` if it still runs: terminate, then kill after 10 s; waits for it."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture
def occupied() -> Iterator[int]:
    """A port on 127.0.0.1 another program listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield int(other.getsockname()[1])


# ----- web servers and the browser ------------------------------------------------------------


@dataclass(frozen=True)
class Served:
    """What a `serve` call handed to uvicorn: its config and the addresses of the sockets."""

    config: Any
    sockets: list[Any]


class _NoServer:
    """Stands in for uvicorn.Server: records each run instead of serving."""

    runs: list[Served]

    def __init__(self, config: Any) -> None:
        self.config = config

    def run(self, sockets: list[socket.socket] | None = None) -> None:
        type(self).runs.append(Served(self.config, [s.getsockname() for s in sockets or []]))


@pytest.fixture
def no_server(monkeypatch: pytest.MonkeyPatch) -> list[Served]:
    """uvicorn serves nothing during the test; the list receives each server it was to run."""
    import uvicorn

    runs: list[Served] = []
    monkeypatch.setattr(_NoServer, "runs", runs, raising=False)
    monkeypatch.setattr(uvicorn, "Server", _NoServer)
    return runs


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium, once per module (skipped without it: tests/browser.py)."""
    from tests.browser import launched

    with launched() as chromium:
        yield chromium
