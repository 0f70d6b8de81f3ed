"""`meta-evaluator plan-labels` and `drift`: the text, `--json`, the files, the exit statuses.

Through the console script's `main()` in this process (`entry`), on synthetic projects
(tests/scores/monitor_projects.py).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Main
from tests.scores.monitor_projects import (
    add_labels,
    add_run,
    flipped,
    make_project,
    noisy,
    random_labels,
    shifted,
)
from tests.test_cli_compare_runs import _fails

# ----- plan-labels ---------------------------------------------------------------------------


def test_plan_labels_prints_the_grid_and_the_design(tmp_path: Path, entry: Main) -> None:
    evaluator, truth = make_project(tmp_path, rows=120)
    add_run(evaluator, tmp_path, "perfect", "r1", truth)
    done = entry("plan-labels", evaluator.project_dir, "--simulations", "40")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "Label plan: judge perfect (run r1), task verdict; alt-test epsilon 0.2 (default), "
        "target power 0.8, 40 simulated studies per design"
    )
    assert lines[1].startswith("Pilot: 120 rows the judge labelled, 3 annotators (ana, ben, cy)")
    assert lines[2] == "Power (kappa 95% range width) by items x annotators:"
    assert lines[3].split() == ["items", "2", "annotators", "3", "annotators"]
    assert [line.split()[0] for line in lines[4:9]] == ["30", "50", "100", "120", "150"]
    assert lines[4].split()[1] == "1.00" and lines[4].rstrip().endswith(")")
    assert "*" in lines[4]  # the chosen design is marked
    width = json.loads(_saved(evaluator))["chosen"]["kappa_width"]
    assert lines[-2] == (
        "Smallest design reaching power 0.8 (*): 30 items x 2 annotators = 60 human labels "
        f"(power 1.00, kappa 95% range width {width:.2f})"
    )
    assert lines[-1] == (
        f"Saved to {evaluator.project_dir / 'reports' / 'label_plan.json'} (plot: label_plan.png)"
    )


def _saved(evaluator: object) -> str:
    return (evaluator.project_dir / "reports" / "label_plan.json").read_text()  # type: ignore[attr-defined]


def test_plan_labels_json_and_options(tmp_path: Path, entry: Main) -> None:
    evaluator, _ = make_project(tmp_path, rows=80)
    add_run(evaluator, tmp_path, "coin", "r1", random_labels(80, seed=2))
    done = entry("plan-labels", evaluator.project_dir, "--judge", "coin", "--task", "verdict",
                 "--epsilon", "0.15", "--power", "0.9", "--simulations", "20", "--seed", "7",
                 "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed == json.loads(_saved(evaluator))
    assert printed["chosen"] is None and printed["reason"].startswith("the judge is far below")
    assert printed["alt_test"]["epsilon"] == 0.15 and printed["alt_test"]["source"] == "epsilon"
    assert (printed["target_power"], printed["simulations"], printed["seed"]) == (0.9, 20, 7)
    text = entry("plan-labels", evaluator.project_dir, "--simulations", "20").stdout
    assert "No design reaches power 0.8: the judge is far below the humans" in text


def test_plan_labels_errors(tmp_path: Path, entry: Main) -> None:
    evaluator, truth = make_project(tmp_path, rows=40, annotators=("ana",))
    root = evaluator.project_dir
    _fails(entry("plan-labels", root), 2, "no judge has a complete run")
    add_run(evaluator, tmp_path, "j", "r1", truth)
    _fails(entry("plan-labels", root), 2, "at least two annotators", "has only ['ana']",
           "meta-evaluator import-annotations")  # fmt: skip
    add_labels(evaluator, tmp_path, "ben", list(range(1, 41)), truth)
    _fails(entry("plan-labels", root, "--judge", "gpt"), 2, "judge 'gpt' has no complete run")
    _fails(entry("plan-labels", root, "--power", "1"), 2, "power must be in (0, 1)")
    _fails(entry("plan-labels", root, "--task", "nope"), 2, "no task 'nope'")
    done = entry("plan-labels", root, "--simulations", "3", "--json")
    assert done.returncode == 2
    assert json.loads(done.stdout) == {
        "command": "plan-labels", "exit_status": 2,
        "error": "plan_labels: simulations must be in [10, inf); got 3.",
    }  # fmt: skip
    _fails(entry("plan-labels", tmp_path / "none"), 2, "create a project")


# ----- drift ---------------------------------------------------------------------------------


def _two_runs(tmp_path: Path, *, drifting: bool) -> object:
    evaluator, truth = make_project(tmp_path, rows=200)
    before = noisy(truth, 0.9, seed=3)
    after = shifted(before, 0.5, seed=4) if drifting else flipped(before, 4, seed=1)
    add_run(evaluator, tmp_path, "j", "mon", before)
    add_run(evaluator, tmp_path, "j", "tue", after)
    return evaluator


def test_a_drifting_judge_exits_with_5(tmp_path: Path, entry: Main) -> None:
    evaluator = _two_runs(tmp_path, drifting=True)
    root = evaluator.project_dir  # type: ignore[attr-defined]
    done = entry("drift", root, "--judge", "j")
    assert done.returncode == 5, done.stderr
    lines = done.stdout.splitlines()
    assert (
        lines[0]
        == "Drift of judge j, task verdict: baseline mon -> tue (the judge configuration differs)"
    )
    assert lines[1] == "Rows compared: 200 (0 only in mon, 0 only in tue)"
    assert lines[2].startswith(
        "Label shift: 100 of 200 rows changed their label (share 0.500); PSI "
    )
    assert float(lines[2].rsplit(" ", 1)[1]) > 0.25
    assert "  max_psi 0.1: " in done.stdout and "EXCEEDED" in done.stdout
    assert lines[-2] == (
        "Drifted: 3 threshold(s) exceeded (max_psi, max_changed_share, max_agreement_drop); "
        "exit status 5."
    )
    assert lines[-1].startswith("Appended to ") and lines[-1].endswith("(plot: drift_history.png)")
    printed = json.loads(entry("drift", root, "--judge", "j", "--json").stdout)
    assert printed["exit_status"] == 5 and printed["shift"]["psi"] > 0.25
    assert printed["exceeded"] == ["max_psi", "max_changed_share", "max_agreement_drop"]
    history = (root / "reports" / "drift_history.jsonl").read_text().splitlines()
    assert len(history) == 2
    assert printed["checked"] is True
    assert {k: v for k, v in printed.items() if k not in ("exit_status", "checked")} == json.loads(
        history[1]
    )


def test_its_steady_twin_exits_with_0(tmp_path: Path, entry: Main) -> None:
    evaluator = _two_runs(tmp_path, drifting=False)
    root = evaluator.project_dir  # type: ignore[attr-defined]
    done = entry("drift", root, "--judge", "j", "--baseline", "first", "--against", "latest")
    assert done.returncode == 0, done.stderr
    assert "No threshold exceeded." in done.stdout and "EXCEEDED" not in done.stdout
    assert json.loads(entry("drift", root, "--judge", "j", "--json").stdout)["exit_status"] == 0


def test_a_damaged_history_line_is_a_warning(tmp_path: Path, entry: Main) -> None:
    evaluator = _two_runs(tmp_path, drifting=False)
    root = evaluator.project_dir  # type: ignore[attr-defined]
    assert entry("drift", root, "--judge", "j").returncode == 0
    with (root / "reports" / "drift_history.jsonl").open("a") as history:
        history.write("oops\n")
    done = entry("drift", root, "--judge", "j")
    assert done.returncode == 0
    assert "warning: " in done.stderr and "line 2: not JSON" in done.stderr


def test_drift_errors(tmp_path: Path, entry: Main) -> None:
    evaluator, truth = make_project(tmp_path, rows=30)
    root = evaluator.project_dir
    _fails(entry("drift", root, "--judge", "j"), 2, "judge 'j' has no complete run")
    add_run(evaluator, tmp_path, "j", "mon", truth)
    add_run(evaluator, tmp_path, "j", "tue", truth)
    _fails(entry("drift", root, "--judge", "j", "--baseline", "sun"), 2,
           "baseline: no run 'sun'", "runs there: ['mon', 'tue']")  # fmt: skip
    _fails(entry("drift", root, "--judge", "j", "--baseline", "tue"), 2, "both 'tue'")
    (root / "project.yaml").write_text("drift: {max_psi: -1}\n")
    _fails(entry("drift", root, "--judge", "j"), 2, "drift.max_psi")
    done = entry("drift", root, "--judge", "j", "--json")
    assert done.returncode == 2
    error = json.loads(done.stdout)
    assert error["command"] == "drift" and error["exit_status"] == 2 and "max_psi" in error["error"]
    _fails(entry("drift", root), 2, "Missing option '--judge'")


def test_the_first_night_has_nothing_to_compare_and_exits_0(
    tmp_path: Path, entry: Main, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One complete run is a scheduler's first night, not a broken configuration (exit 2)."""
    evaluator, truth = make_project(tmp_path, rows=30)
    add_run(evaluator, tmp_path, "j", "mon", truth)
    monkeypatch.chdir(evaluator.project_dir.parent)  # type: ignore[attr-defined]
    folder = evaluator.project_dir.name  # type: ignore[attr-defined]
    done = entry("drift", folder, "--judge", "j")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "Nothing to compare yet: one complete run ('mon') of judge 'j'; drift compares two."
    )
    assert lines[1].startswith(
        f"Next: make a new run with `meta-evaluator run {folder} --judges j "
    )
    assert "--run-id " in lines[1] and "--no-cache`" in lines[1] and "PROJECT" not in lines[1]
    assert done.stderr == ""
    assert not (evaluator.project_dir / "reports" / "drift_history.jsonl").exists()  # type: ignore[attr-defined]
    printed = json.loads(entry("drift", folder, "--judge", "j", "--json").stdout)
    assert printed["exit_status"] == 0 and printed["checked"] is False
    assert printed["reason"] == "one complete run ('mon') of judge 'j'; drift compares two"
    assert printed["run_id"] == "mon" and printed["judge_id"] == "j"
    add_run(evaluator, tmp_path, "j", "tue", truth)
    checked = json.loads(entry("drift", folder, "--judge", "j", "--json").stdout)
    assert checked["checked"] is True and checked["against"]["run_id"] == "tue"


def test_two_labelled_tasks_default_to_the_one_required(tmp_path: Path, entry: Main) -> None:
    """drift, plan-labels and compare-runs work without --task on a project like the shipped
    configs/project.yaml (two labelled tasks, one required), naming the task used (trial #8)."""
    from tests.scores.test_run_comparison import make_project as two_runs_project

    root = two_runs_project(tmp_path, extra_task={"tone": ["calm", "rude"]}).project_dir
    compared = entry("compare-runs", root, "mon", "tue")
    assert compared.returncode == 0, compared.stderr
    assert compared.stdout.startswith("Runs mon -> tue, judge j, task verdict")
    drifted = entry("drift", root, "--judge", "j")
    assert drifted.returncode in (0, 5), drifted.stderr
    assert drifted.stdout.startswith("Drift of judge j, task verdict: baseline mon -> tue")
    planned = entry("plan-labels", root, "--simulations", "10", "--json")
    assert planned.returncode == 0, planned.stderr
    assert json.loads(planned.stdout)["task"] == "verdict"


def test_drift_help_is_wrapped_by_paragraph(entry: Main, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    done = entry("drift", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "the label shift (chi-square, Stuart-Maxwell, PSI, share of rows changed)" in text
    lines = [line.strip() for line in done.stdout.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("Compares two complete"))
    paragraph = lines[start : lines.index("", start)]
    assert all(len(line) > 30 for line in paragraph[:-1]), paragraph  # no stub lines


def test_the_advice_of_the_first_night_makes_a_run_that_drift_then_compares(
    tmp_path: Path,
) -> None:
    """Typed as printed in a shell (as cron runs it), the advice makes a second run.

    `run --no-cache` alone resumes the judge's complete run, so a nightly loop following it
    would never get two runs.
    """
    root = Path(__file__).resolve().parents[1]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "meta-evaluator"
    script.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m meta_evaluator.cli "$@"\n')
    script.chmod(0o755)
    env = {**os.environ, "CI": "true", "PYTHONPATH": str(root),
           "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "META_EVALUATOR_CACHE_DIR": str(tmp_path / "cache")}  # fmt: skip

    def shell(line: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip

    made = shell(f"meta-evaluator init s2 --from {shlex.quote(str(root / 'configs/project.yaml'))}")
    assert made.returncode == 0, made.stderr
    first = shell("meta-evaluator run s2 --judges mock_support_judge --progress off")
    assert first.returncode == 0, first.stderr
    night = shell("meta-evaluator drift s2 --judge mock_support_judge")
    assert night.returncode == 0, night.stderr
    advice = re.fullmatch(r"Next: make a new run with `([^`]+)`, then check again \(`([^`]+)`\)\.",
                          night.stdout.splitlines()[1])  # fmt: skip
    assert advice is not None, night.stdout
    again = shell(advice[1])
    assert again.returncode == 0, again.stderr
    checked = shell(advice[2] + " --json")
    assert checked.returncode in (0, 5), checked.stderr
    result = json.loads(checked.stdout)
    assert result["checked"] is True and result["rows"] > 0
    assert result["baseline"]["run_id"] != result["against"]["run_id"]
