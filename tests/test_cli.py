"""The command line: init from the built-in example, status, report, and exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from meta_evaluator import MetaEvaluator
from meta_evaluator.cli import app


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "meta_evaluator.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_init_example_then_status(tmp_path: Path) -> None:
    project = tmp_path / "demo"
    done = cli("init", str(project), "--example", "refusal")
    assert done.returncode == 0, done.stderr
    assert "40 rows" in done.stdout and "mock_refusal_judge" in done.stdout
    assert "            no runs yet" in done.stdout
    status = cli("status", str(project))
    assert status.returncode == 0
    assert "id column 'sample_id' (Int64)" in status.stdout
    assert "rejection (required)" in status.stdout
    evaluator = MetaEvaluator(project, load=True)
    assert evaluator.data is not None and len(evaluator.data) == 40


def test_init_empty_project(tmp_path: Path) -> None:
    done = cli("init", str(tmp_path / "empty"))
    assert done.returncode == 0
    assert "data:   none" in done.stdout


def test_bad_input_exits_2_with_a_message_and_no_traceback(tmp_path: Path) -> None:
    done = cli("status", str(tmp_path / "nowhere"))
    assert done.returncode == 2
    assert "nowhere" in done.stderr and "Traceback" not in done.stderr
    cli("init", str(tmp_path / "p"))
    again = cli("init", str(tmp_path / "p"))
    assert again.returncode == 2 and "already holds a project" in again.stderr
    unknown = cli("init", str(tmp_path / "q"), "--example", "nope")
    assert unknown.returncode == 2 and "refusal" in unknown.stderr


def test_usage_error_exits_2() -> None:
    assert cli("no-such-command").returncode == 2


def test_report_prints_the_path_of_report_html(tmp_path: Path) -> None:
    project = tmp_path / "demo"
    runner = CliRunner()
    for args in (["init", str(project), "--example", "refusal"], ["run", str(project)]):
        assert runner.invoke(app, args).exit_code == 0
    done = runner.invoke(app, ["report", str(project)])
    assert done.exit_code == 0, (done.output, done.exception)
    path = project / "reports" / "report.html"
    assert done.output.strip() == f"Report written to {path}" and path.is_file()
    elsewhere = tmp_path / "out"
    done = runner.invoke(app, ["report", str(project), "--output", str(elsewhere)])
    assert done.exit_code == 0, (done.output, done.exception)
    assert done.output.strip() == f"Report written to {elsewhere / 'report.html'}"
    assert (elsewhere / "report.html").is_file()


def test_init_help_lists_the_examples() -> None:
    """`init --help` names every built-in example, not only 'refusal' (trial 2 #12)."""
    from meta_evaluator.cli import EXAMPLE_NAMES
    from meta_evaluator.examples import example_names

    assert list(EXAMPLE_NAMES) == example_names()
    done = CliRunner().invoke(app, ["init", "--help"], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.replace("│", " ").split())
    assert "built-in example: fairness, pairwise, refusal, stereotype." in said
