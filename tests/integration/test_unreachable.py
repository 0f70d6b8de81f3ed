"""Judges whose endpoint is not there, through the real transport and the command line: a
loopback port with nothing listening, and a host name that never resolves (RFC 6761 `.invalid`).
Each is stopped after a few calls, naming the address; the offline judge beside them finishes.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import polars as pl

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.results.row_store import read_rows

ROWS = 400


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_unreachable_judges_stop_at_once_and_the_others_are_saved(tmp_path: Path) -> None:
    port = closed_port()
    evaluator = MetaEvaluator(tmp_path / "p")
    frame = pl.DataFrame(
        {
            "qid": list(range(ROWS)),
            "prompt": [f"question {i}" for i in range(ROWS)],
            "response": [f"answer {i}" for i in range(ROWS)],
        }
    )
    evaluator.add_data(DataLoader.load_from_dataframe("chats", frame, "qid"))
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"rejection": ["rejection", "not rejection"]},
            prompt_columns=["prompt"],
            response_columns=["response"],
        )
    )
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
