"""Starting the annotation page: a bad port or host, a port in use, port 0 (`annotate.serve`).

Every failure to listen is a `ProjectError` naming `port` or `host`, and `meta-evaluator
annotate` exits 2 with its message and no traceback; the address printed is the one the server
listens on. Commands run as subprocesses (bounded), servers are stopped at the end.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.annotate import AnnotationApp, serve
from meta_evaluator.errors import ProjectError
from tests.annotate.conftest import server_env
from tests.conftest import Served, stop

TOKEN = "s3cret"
COMMAND_TIMEOUT = 60
ANNOUNCED = re.compile(r"Annotation page: http://(\S+?):(\d+)/")


def annotate(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`meta-evaluator annotate PROJECT ARGS` through `main` (exit codes as a user sees them).

    Expected to fail at once; a server that starts instead is killed at the timeout.
    """
    return subprocess.run(
        [sys.executable, "-m", "meta_evaluator.cli", "annotate", str(project), *args],
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        env=server_env(),
    )


# --- the port --------------------------------------------------------------------------------


@pytest.mark.parametrize("port", ["99999", "65536", "-5"])
def test_a_port_out_of_range_exits_2_naming_the_option(refusal: Path, port: str) -> None:
    done = annotate(refusal, "--port", port)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "Invalid value for '--port'" in done.stderr


@pytest.mark.parametrize("port", [99999, 65536, -5, True, "8080", 80.0])
def test_serve_refuses_a_port_out_of_range_before_binding(
    refusal: Path, no_server: list[Served], port: Any
) -> None:
    evaluator = MetaEvaluator(refusal, load=True)
    with pytest.raises(ProjectError, match="port must be a whole number from 0 to 65535") as caught:
        serve(evaluator, port=port)
    assert caught.value.field == "port" and repr(port) in caught.value.message
    with pytest.raises(ProjectError) as caught:
        evaluator.launch_annotator(port=port)
    assert caught.value.field == "port"
    assert no_server == []


def test_a_port_in_use_exits_2_saying_so(refusal: Path, occupied: int) -> None:
    done = annotate(refusal, "--port", str(occupied))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"port {occupied} on 127.0.0.1 is in use; choose another with --port" in done.stderr
    assert "omit --port to pick a free one" in done.stderr
    assert "port=" not in done.stderr and "launch_annotator" not in done.stderr  # no Python


def test_serve_names_a_port_in_use(refusal: Path, no_server: list[Served], occupied: int) -> None:
    evaluator = MetaEvaluator(refusal, load=True)
    with pytest.raises(ProjectError, match=f"port {occupied} on localhost is in use") as caught:
        serve(evaluator, host="localhost", port=occupied)
    assert caught.value.field == "port"
    assert "choose another with port=..., or omit it" in caught.value.message  # Python's words
    assert "--port" not in caught.value.message
    assert no_server == []


# --- the host --------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["evil.invalid", "999.1.1.1"])
def test_a_host_that_does_not_resolve_exits_2_naming_it(refusal: Path, host: str) -> None:
    done = annotate(refusal, "--host", host, "--token", TOKEN)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"host {host!r}" in done.stderr and "--host" in done.stderr
    assert "host=" not in done.stderr


@pytest.mark.parametrize("port", [None, 8080])
@pytest.mark.parametrize(
    "host", ["evil.invalid", "999.1.1.1", "", "bad host", "a\x00b", "x" * 64 + ".org"]
)
def test_serve_refuses_a_host_it_cannot_resolve(
    refusal: Path, no_server: list[Served], host: str, port: int | None
) -> None:
    evaluator = MetaEvaluator(refusal, load=True)
    with pytest.raises(ProjectError, match="host") as caught:
        serve(evaluator, host=host, port=port, token=TOKEN)
    assert caught.value.field == "host" and repr(host) in caught.value.message
    assert no_server == []


def test_a_host_of_another_machine_exits_2_naming_it(refusal: Path) -> None:
    done = annotate(refusal, "--host", "192.0.2.1", "--token", TOKEN)  # TEST-NET-1, not ours
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "host '192.0.2.1'" in done.stderr and "not an address of this machine" in done.stderr


# --- the address printed -----------------------------------------------------------------------


def test_serve_prints_and_serves_the_port_it_listens_on(
    refusal: Path, no_server: list[Served], capsys: pytest.CaptureFixture[str]
) -> None:
    evaluator = MetaEvaluator(refusal, load=True)
    serve(evaluator, port=0)
    serve(evaluator)
    serve(evaluator, host="::1", token=TOKEN)
    shown = ANNOUNCED.findall(capsys.readouterr().err)
    assert [host for host, _ in shown] == ["127.0.0.1", "127.0.0.1", "[::1]"]
    for served, (_, port) in zip(no_server, shown, strict=True):
        assert int(port) != 0
        assert [address[1] for address in served.sockets] == [int(port)]
        config = served.config
        assert config.port == int(port) and isinstance(config.app, AnnotationApp)
        assert config.app.port == int(port)


@pytest.mark.parametrize("port_args", [["--port", "0"], []], ids=["port-0", "no-port"])
def test_the_address_printed_is_the_one_that_answers(
    refusal: Path, tmp_path: Path, port_args: list[str]
) -> None:
    log = tmp_path / "server.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "meta_evaluator.cli", "annotate", str(refusal), *port_args],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=server_env(),
        )
    try:
        deadline = time.monotonic() + COMMAND_TIMEOUT
        while not (found := ANNOUNCED.search(log.read_text(errors="replace"))):
            assert process.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, "no address was printed"
            time.sleep(0.1)
        host, port = found.groups()
        assert host == "127.0.0.1" and port != "0"
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/api/progress", timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None, log.read_text(errors="replace")
                assert time.monotonic() < deadline, f"nothing answers on the port printed, {port}"
                time.sleep(0.1)
        assert response.status_code == 200
    finally:
        stop(process)
