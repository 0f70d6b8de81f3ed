"""The console script: Ctrl-C while the command line is still being imported says "stopped"
and exits 130 without a traceback (trial #6).

Run as pip runs it: a script importing the function `[project.scripts]` of pyproject.toml
names, in a real subprocess sent SIGINT early, while the imports (about a second) are under way.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]


def _console_script() -> str:
    """The code of the `meta-evaluator` script pip writes for pyproject.toml's entry point."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, function = scripts["meta-evaluator"].split(":")
    return f"import sys\nfrom {module} import {function}\nsys.exit({function}())\n"


def _interrupted(*args: str, after: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-c", _console_script(), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
    )  # fmt: skip
    time.sleep(after)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_ctrl_c_during_the_imports_says_stopped_without_a_traceback(tmp_path: Path) -> None:
    done = _interrupted("status", str(tmp_path), after=0.2)
    assert done.returncode == 130, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    assert done.stderr.strip().endswith("stopped by Ctrl-C")
    assert done.stdout == ""


def test_with_json_it_still_ends_stdout_with_one_json_object(tmp_path: Path) -> None:
    done = _interrupted("run", str(tmp_path), "--json", after=0.2)
    assert done.returncode == 130, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert json.loads(done.stdout) == {"command": "run", "exit_status": 130, "error": "stopped"}
