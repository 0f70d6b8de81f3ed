"""Judges whose endpoint is not there, through the real transport and the command line: a
loopback port with nothing listening, and a host name that never resolves (RFC 6761 `.invalid`).
Each is stopped after a few calls, naming the address; the offline judge beside them finishes.
"""

from __future__ import annotations

import http.server
import json
import shutil
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.errors import JudgeRunError
from meta_evaluator.judge.row_store import read_rows
from tests.conftest import chats, rejection_project, unused_port

ROWS = 400


def test_unreachable_judges_stop_at_once_and_the_others_are_saved(tmp_path: Path) -> None:
    port = unused_port()
    evaluator = rejection_project(tmp_path / "p", chats(ROWS))
    prompt = "Did {response} refuse {prompt}?"
    evaluator.add_judge("refused", "openai", "m", prompt, base_url=f"http://127.0.0.1:{port}/v1")
    evaluator.add_judge(
        "nodns", "openai", "m", prompt, base_url="http://nonexistent.invalid:8000/v1"
    )
    evaluator.add_judge("offline", "mock", "m", prompt)
    evaluator.save_state()

    done = subprocess.run(
        [sys.executable, "-m", "meta_evaluator.cli", "run", str(evaluator.project_dir)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert f"connection refused at 127.0.0.1:{port}" in done.stderr
    assert "host not found (DNS lookup failed) at nonexistent.invalid:8000" in done.stderr
    assert "Traceback" not in done.stderr
    # the summary, printed though nothing is a terminal
    assert "judge refused: " in done.stdout
    assert f"× connection refused at 127.0.0.1:{port}" in done.stdout
    assert "× host not found (DNS lookup failed) at nonexistent.invalid:8000" in done.stdout
    assert "offline: valid=" in done.stdout

    saved = MetaEvaluator(evaluator.project_dir, load=True).load_all_judge_results()
    assert set(saved) == {"offline"}
    assert sum(saved["offline"].counts().values()) == ROWS
    for judge_id in ("refused", "nodns"):
        (rows_file,) = (evaluator.project_dir / "results").glob(f"*/{judge_id}.jsonl")
        rows = list(read_rows(rows_file))
        attempts = sum(row["attempts"] for row in rows)
        # a handful of rows, a handful of calls: not 400 rows x 4 attempts
        assert 0 < len(rows) <= 2 * 16 and attempts <= 4 * 16, (judge_id, len(rows), attempts)
        assert {row["status"] for row in rows} == {"connection_error"}
        state = json.loads(rows_file.with_name(f"{judge_id}_state.json").read_text())
        assert state["completed_at"] is None  # unfinished: a later run asks the rest


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[int]:
    """An HTTPS server on loopback with a self-signed certificate no trust store accepts."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a self-signed certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def test_an_untrusted_certificate_stops_the_judge_with_tls_advice(
    tmp_path: Path, tls_server: int
) -> None:
    """Through the production transport: the handshake fails, which no retry cures."""
    frame = pl.DataFrame({"qid": [1, 2, 3], "prompt": ["q"] * 3, "response": ["a"] * 3})
    evaluator = rejection_project(tmp_path / "p", frame)
    evaluator.add_judge("selfsigned", "openai", "m", "Did {response} refuse?",
                        base_url=f"https://127.0.0.1:{tls_server}/v1")  # fmt: skip
    with pytest.raises(JudgeRunError) as caught:
        evaluator.run_judges_async(max_concurrency=1, backoff_base=0.001)
    message = str(caught.value)
    assert f"TLS handshake failed at 127.0.0.1:{tls_server} (certificate verify failed" in message
    assert "SSL_CERT_FILE" in message
    assert "start the server" not in message
