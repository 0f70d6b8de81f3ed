"""Starting the viewer: `view.serve`, `MetaEvaluator.launch_viewer` and `meta-evaluator view`.

Failures before serving (no results, a public host without a token, a bad port or URL) are
`ProjectError`s, and the command exits 2 with the message and no traceback. A real server is
started as a subprocess on loopback and stopped by the test.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from meta_evaluator import MetaEvaluator
from meta_evaluator.errors import ProjectError
from meta_evaluator.examples import create_example_project
from meta_evaluator.view import ViewerApp, free_port, serve
from tests.conftest import Served, stop

TOKEN = "s3cret"
COMMAND_TIMEOUT = 60
ANNOUNCED = re.compile(r"Results viewer: http://(\S+?):(\d+)/")


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "META_EVALUATOR_VIEW_TOKEN"}


def view(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`meta-evaluator view PROJECT ARGS` through `main`, expected to fail at once."""
    return subprocess.run(
        [sys.executable, "-m", "meta_evaluator.cli", "view", str(project), *args],
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        env=_env(),
    )


@pytest.fixture
def fresh(tmp_path: Path) -> Path:
    """The refusal example before any run: data, task, annotations, no judge results."""
    folder = tmp_path / "fresh"
    create_example_project("refusal", folder)
    return folder


def test_a_project_without_results_is_refused_before_binding(
    fresh: Path, no_server: list[Served]
) -> None:
    evaluator = MetaEvaluator(fresh, load=True)
    with pytest.raises(ProjectError, match="no judge has a complete run to view") as caught:
        serve(evaluator)
    assert "meta-evaluator run" in caught.value.message
    with pytest.raises(ProjectError, match="no judge has a complete run"):
        evaluator.launch_viewer()
    assert no_server == []


def test_the_view_command_says_so_without_a_traceback(fresh: Path) -> None:
    done = view(fresh)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "no judge has a complete run to view" in done.stderr
    assert f"meta-evaluator run {fresh}" in done.stderr


def test_the_view_command_on_a_folder_without_a_project(tmp_path: Path) -> None:
    done = view(tmp_path / "nothing")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "meta-evaluator init" in done.stderr


@pytest.mark.parametrize("args", [["--port", "70000"], ["--port", "-1"]])
def test_a_port_out_of_range_exits_2(refusal: Path, args: list[str]) -> None:
    done = view(refusal, *args)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "Invalid value for '--port'" in done.stderr


def test_a_bad_annotate_url_exits_2_naming_it(refusal: Path) -> None:
    done = view(refusal, "--annotate-url", "localhost:8000")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--annotate-url 'localhost:8000' is no http(s) address" in done.stderr
    assert "launch_viewer" not in done.stderr  # the command's words, not the Python call's


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "example.org"])
def test_a_public_host_needs_a_token(refusal: Path, no_server: list[Served], host: str) -> None:
    evaluator = MetaEvaluator(refusal, load=True)
    with pytest.raises(ProjectError, match=r"launch_viewer: host .* give a token") as caught:
        serve(evaluator, host=host)
    assert caught.value.field == "token"
    assert no_server == []


def test_serve_binds_announces_and_hands_its_options_to_the_app(
    refusal: Path, no_server: list[Served], capsys: pytest.CaptureFixture[str]
) -> None:
    evaluator = MetaEvaluator(refusal, load=True)
    port = free_port()
    serve(evaluator, port=port)
    evaluator.launch_viewer(host="127.0.0.1", annotate_url="http://127.0.0.1:9000/")
    serve(evaluator, host="0.0.0.0", port=free_port("0.0.0.0"), token=TOKEN)
    err = capsys.readouterr().err
    shown = ANNOUNCED.findall(err)
    # bound to every interface, the address to share names this machine, not 0.0.0.0
    assert [h for h, _ in shown] == ["127.0.0.1", "127.0.0.1", socket.gethostname()]
    assert shown[0][1] == str(port) and f"?token={TOKEN}" in err
    apps = [served.config.app for served in no_server]
    assert all(isinstance(a, ViewerApp) for a in apps)
    assert [a.port for a in apps] == [int(p) for _, p in shown]
    assert apps[1].annotate_url == "http://127.0.0.1:9000" and apps[2].token == TOKEN


def test_serve_names_a_port_in_use(refusal: Path, no_server: list[Served], occupied: int) -> None:
    with pytest.raises(
        ProjectError, match=f"launch_viewer: port {occupied} on 127.0.0.1 is in use"
    ):
        serve(MetaEvaluator(refusal, load=True), port=occupied)
    assert no_server == []


def test_the_view_command_reads_its_options_and_token_variable(
    refusal: Path, no_server: list[Served]
) -> None:
    from meta_evaluator.cli import app

    runner = CliRunner()
    refused = runner.invoke(
        app, ["view", str(refusal), "--host", "0.0.0.0"], env={"META_EVALUATOR_VIEW_TOKEN": None}
    )
    assert isinstance(refused.exception, ProjectError) and no_server == []
    port = free_port("0.0.0.0")
    done = runner.invoke(
        app,
        [
            "view",
            str(refusal),
            "--host",
            "0.0.0.0",
            "--port",
            str(port),
            "--annotate-url",
            "http://lab.example:8001",
        ],
        env={"META_EVALUATOR_VIEW_TOKEN": TOKEN},
    )
    assert done.exit_code == 0, done.output
    (served,) = no_server
    config = served.config
    assert (config.host, config.port, config.app.token) == ("0.0.0.0", port, TOKEN)
    assert config.app.annotate_url == "http://lab.example:8001"


def test_a_real_server_serves_reads_only_and_refuses_other_names(
    refusal: Path, tmp_path: Path
) -> None:
    command = Path(sys.executable).with_name("meta-evaluator")
    if not command.is_file():
        pytest.skip(f"{command} is missing (pip install -e . installs the console script)")
    port = free_port()
    log = tmp_path / "viewer.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [str(command), "view", str(refusal), "--port", str(port)],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=_env(),
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + COMMAND_TIMEOUT
        while True:
            assert process.poll() is None, log.read_text(errors="replace")
            try:
                summary = httpx.get(f"{base}/api/summary", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the viewer did not answer"
                time.sleep(0.1)
        assert summary.status_code == 200 and summary.json()["rows"] == 40
        with httpx.Client(base_url=base, timeout=20) as http:
            assert http.get("/").status_code == 200
            assert http.get("/", headers={"host": f"rebound.example:{port}"}).status_code == 421
            assert http.post("/api/rows").status_code == 405
            head = http.head("/api/rows")
            assert head.status_code == 200 and head.content == b""
        assert f"Results viewer: {base}/" in log.read_text(errors="replace")
    finally:
        stop(process)
