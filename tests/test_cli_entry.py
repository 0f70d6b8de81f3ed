"""The console script: Ctrl-C while the command line is still being imported says "stopped"
and exits 130 without a traceback (trial #6).

Run as pip runs it: a script importing the function `[project.scripts]` of pyproject.toml
names, in a real subprocess that gets SIGINT while the imports are under way: at the moment the
command line imports typer (an import hook sends it), not after a guessed delay, so a fast
machine cannot finish the imports first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]


INTERRUPT_ON_IMPORT = """\
import os, signal, sys
class InterruptOnImport:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, InterruptOnImport())
"""
"""Ctrl-C (SIGINT) sent to itself when the process starts importing `module`."""


def _console_script() -> str:
    """The code of the `meta-evaluator` script pip writes for pyproject.toml's entry point."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, function = scripts["meta-evaluator"].split(":")
    return f"import sys\nfrom {module} import {function}\nsys.exit({function}())\n"


def _interrupted(*args: str | Path, at: str = "typer") -> subprocess.CompletedProcess[str]:
    """The console script run with `args`, interrupted by Ctrl-C when it imports `at` (typer:
    in the middle of the command line's imports)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    hook = INTERRUPT_ON_IMPORT.format(module=at)
    return subprocess.run(
        [sys.executable, "-c", hook + _console_script(), *map(str, args)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=60, check=False,
    )  # fmt: skip


def test_ctrl_c_during_the_imports_says_stopped_without_a_traceback(tmp_path: Path) -> None:
    done = _interrupted("status", str(tmp_path))
    assert done.returncode == 130, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    assert done.stderr.strip().endswith("stopped by Ctrl-C")
    assert done.stdout == ""


def test_with_json_it_still_ends_stdout_with_one_json_object(tmp_path: Path) -> None:
    done = _interrupted("run", str(tmp_path), "--json")
    assert done.returncode == 130, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert json.loads(done.stdout) == {"command": "run", "exit_status": 130, "error": "stopped"}


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "p"
    made = subprocess.run(
        [sys.executable, "-m", "meta_evaluator.cli", "init", str(project), "--from",
         str(ROOT / "configs" / "project.yaml")],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    return project


def test_ctrl_c_during_a_command_says_stopped(tmp_path: Path) -> None:
    """Once the command runs, typer made Ctrl-C a silent exit 130: nothing said, and under
    --json no JSON object (review). Interrupted as plan-labels starts its work."""
    project = _project(tmp_path)
    done = _interrupted("plan-labels", project, at="meta_evaluator._cli_monitor")
    assert done.returncode == 130, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().endswith("stopped by Ctrl-C")
    done = _interrupted("plan-labels", project, "--json", at="meta_evaluator._cli_monitor")
    assert done.returncode == 130, (done.stdout, done.stderr)
    assert json.loads(done.stdout) == {
        "command": "plan-labels", "exit_status": 130, "error": "stopped"
    }  # fmt: skip


def test_a_run_stopped_says_so_once(tmp_path: Path) -> None:
    """`run` says what it saved when stopped; the command line adds no second "stopped"."""
    project = _project(tmp_path)
    done = _interrupted("run", project, "--progress", "off", at="meta_evaluator.judge.runner")
    assert done.returncode == 130, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    said = (done.stdout + done.stderr).lower().count("stopped by ctrl-c")
    assert said == 1, (done.stdout, done.stderr)


INTERRUPT_AT_TEARDOWN = """\
import builtins, os, signal
class InterruptAtTeardown:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
builtins._interrupt_at_teardown = InterruptAtTeardown()
"""
"""Ctrl-C (SIGINT) sent to itself as the interpreter tears its modules down, after the command
returned: where Python has already put back the signal's default action (kill, silently)."""


def test_ctrl_c_after_the_command_returned_keeps_its_exit_status(tmp_path: Path) -> None:
    """A Ctrl-C landing just after a command finished exited 130 without a word although the
    JSON object said `"exit_status": 0` (trial 2 #10): the status printed is the one returned."""
    project = _project(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPT_AT_TEARDOWN + _console_script(), "status",
         str(project), "--json"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=60, check=False,
    )  # fmt: skip
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert said["exit_status"] == 0, done.stdout
    assert done.returncode == 0, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
