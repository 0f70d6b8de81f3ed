"""`--json`: whatever the exit status, the last thing on standard output is one JSON object.

Every command that takes `--json`, for its own errors (a run or project that does not exist)
and for a usage error the parser catches (an unknown option, a file given as the project
folder), through the console script's `main()` in this process (`entry`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Main
from tests.scores.test_run_comparison import make_project

JSON_COMMANDS = {
    "status": [],
    "run": [],
    "all": [],
    "compare-runs": ["mon", "tue"],
    "plan-labels": [],
    "drift": ["--judge", "j"],
}
"""Each command taking --json, with the arguments it needs besides the project folder."""


def _last_json(stdout: str) -> dict[str, object]:
    last = stdout.strip().splitlines()[-1]
    found = json.loads(last)
    assert isinstance(found, dict)
    return found


@pytest.mark.parametrize("command", sorted(JSON_COMMANDS))
def test_a_commands_own_error_ends_stdout_with_json(
    command: str, entry: Main, tmp_path: Path
) -> None:
    done = entry(command, tmp_path / "nowhere", *JSON_COMMANDS[command], "--json")
    assert done.returncode == 2, done.stderr
    printed = _last_json(done.stdout)
    assert printed["command"] == command and printed["exit_status"] == 2
    assert "no such folder" in str(printed["error"])
    assert "Traceback" not in done.stderr


def test_compare_runs_names_the_unknown_run_in_json(entry: Main, tmp_path: Path) -> None:
    root = make_project(tmp_path).project_dir
    done = entry("compare-runs", root, "mon", "nope", "--json")
    assert done.returncode == 2
    printed = _last_json(done.stdout)
    assert printed["command"] == "compare-runs" and printed["exit_status"] == 2
    assert "no run 'nope'" in str(printed["error"]) and "['mon', 'tue']" in str(printed["error"])


@pytest.mark.parametrize("command", sorted(JSON_COMMANDS))
@pytest.mark.parametrize("mistake", ["unknown option", "file as folder"])
def test_a_usage_error_ends_stdout_with_json(
    command: str, mistake: str, entry: Main, tmp_path: Path
) -> None:
    folder = tmp_path / "a_file.txt"
    folder.write_text("not a folder")
    extra = ["--bogus-opt"] if mistake == "unknown option" else []
    done = entry(command, folder, *JSON_COMMANDS[command], *extra, "--json")
    assert done.returncode == 2
    printed = _last_json(done.stdout)
    assert printed["command"] == command and printed["exit_status"] == 2
    expected = "No such option: --bogus-opt" if mistake == "unknown option" else "is a file"
    assert expected in str(printed["error"]), printed
    assert expected in done.stderr  # the usage box is still shown, on standard error
    assert "Traceback" not in done.stderr
    if mistake == "file as folder":  # the argument as --help names it, not Python's name
        assert "'PROJECT_DIR'" in str(printed["error"]) and "project_dir" not in done.stderr


def test_without_json_a_usage_error_prints_nothing_on_stdout(entry: Main, tmp_path: Path) -> None:
    done = entry("run", tmp_path, "--bogus-opt")
    assert (done.returncode, done.stdout) == (2, "")
    assert "No such option: --bogus-opt" in done.stderr
    assert entry("--version").returncode == 0


def test_all_names_itself_in_its_summary(entry: Main, project: Path) -> None:
    done = entry("all", project, "--progress", "off", "--json")
    printed = _last_json(done.stdout)
    assert printed["command"] == "all"
    assert printed["exit_status"] == done.returncode
