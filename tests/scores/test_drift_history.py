"""`reports/drift_history.jsonl`: appended once per check, by two processes at once, read back
line by line; a damaged line is reported, never fatal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from meta_evaluator.errors import OutsideProjectError
from meta_evaluator.scores import BootstrapConfig
from meta_evaluator.scores.drift import DriftCheck
from meta_evaluator.scores.drift_history import (
    DamagedHistoryWarning,
    append_check,
    read_history,
)
from tests.scores.monitor_projects import add_run, flipped, make_project

FAST = BootstrapConfig(n_resamples=100)
ROOT = Path(__file__).parents[2]


@pytest.fixture
def project(tmp_path: Path):  # type: ignore[no-untyped-def]
    evaluator, truth = make_project(tmp_path, rows=40)
    add_run(evaluator, tmp_path, "j", "mon", truth)
    add_run(evaluator, tmp_path, "j", "tue", flipped(truth, 2))
    return evaluator


def test_each_check_appends_one_line(project) -> None:  # type: ignore[no-untyped-def]
    first = project.drift("j", bootstrap=FAST)
    second = project.drift("j", bootstrap=FAST)
    path = project.project_dir / "reports" / "drift_history.jsonl"
    lines = path.read_text().splitlines()
    assert len(lines) == 2
    assert [json.loads(line) for line in lines] == [first.to_json(), second.to_json()]
    keys = json.loads(lines[0])
    assert {"time", "judge_id", "baseline", "against", "shift", "agreement", "exceeded"} <= set(
        keys
    )
    assert keys["baseline"]["run_id"] == "mon" and keys["against"]["run_id"] == "tue"
    assert read_history(path).checks == (first, second)
    assert (project.project_dir / "reports" / "drift_history.png").read_bytes()[:4] == b"\x89PNG"


def test_a_damaged_line_is_reported_not_fatal(project) -> None:  # type: ignore[no-untyped-def]
    first = project.drift("j", bootstrap=FAST)
    path = project.project_dir / "reports" / "drift_history.jsonl"
    with path.open("ab") as file:
        file.write(b'{"not": "a check"}\n\xff\xfe garbage\n')
        file.write(b'{"schema_version": 1, "time": "2026-')  # a writer killed mid-line
    with pytest.warns(DamagedHistoryWarning) as caught:
        second = project.drift("j", bootstrap=FAST)
    message = str(caught[0].message)
    assert "3 line(s) are not drift checks" in message
    assert "line 2: not a drift check" in message and "line 3: not JSON" in message
    assert "line 4: not JSON" in message
    history = read_history(path)
    assert history.checks == (first, second)  # the cut line did not swallow the new one
    assert [d.line for d in history.damaged] == [2, 3, 4]
    assert path.read_bytes().count(b"\n") == 5


def test_a_missing_history_is_empty(tmp_path: Path) -> None:
    history = read_history(tmp_path / "none.jsonl")
    assert history.checks == () and history.damaged == ()
    assert history.damage_report(tmp_path / "none.jsonl") is None


_WRITER = """
import sys
from pathlib import Path
from meta_evaluator.scores.drift import DriftCheck
from meta_evaluator.scores.drift_history import append_check
check = DriftCheck.model_validate_json(Path(sys.argv[1]).read_text())
root, tag = Path(sys.argv[2]), sys.argv[3]
for i in range(int(sys.argv[4])):
    append_check(root / "reports" / "drift_history.jsonl",
                 check.model_copy(update={"judge_id": f"{tag}{i}"}), root=root)
"""


def test_two_processes_append_without_losing_a_line(project, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    check = project.drift("j", bootstrap=FAST)
    source = tmp_path / "check.json"
    source.write_text(check.model_dump_json())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(source), str(project.project_dir), tag, "60"],
            env=env,
        )
        for tag in ("a", "b")
    ]
    assert [w.wait(timeout=60) for w in writers] == [0, 0]
    history = read_history(project.project_dir / "reports" / "drift_history.jsonl")
    assert history.damaged == ()
    judges = [c.judge_id for c in history.checks]
    assert len(judges) == 121
    assert sorted(judges[1:]) == sorted([f"a{i}" for i in range(60)] + [f"b{i}" for i in range(60)])
    # each writer's lines are in its own order
    for tag in ("a", "b"):
        own = [int(j[1:]) for j in judges if j.startswith(tag)]
        assert own == sorted(own)


def test_a_history_linked_out_of_the_project_is_refused(project, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text("")
    reports = project.project_dir / "reports"
    reports.mkdir(exist_ok=True)
    (reports / "drift_history.jsonl").symlink_to(outside)
    with pytest.raises(OutsideProjectError):
        project.drift("j", bootstrap=FAST)
    assert outside.read_text() == ""


def test_append_check_runs_then_under_the_lock(project, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    check: DriftCheck = project.drift("j", bootstrap=FAST)
    seen = []
    path = project.project_dir / "reports" / "drift_history.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history = append_check(path, check, root=project.project_dir,
                               then=lambda h: seen.append(len(h.checks)))  # fmt: skip
    assert seen == [2] and len(history.checks) == 2


def test_a_line_whose_time_is_not_a_time_is_damaged(project) -> None:  # type: ignore[no-untyped-def]
    """The plot and the report sort checks by their time: a line without one is left out."""
    first = project.drift("j", bootstrap=FAST)
    path = project.project_dir / "reports" / "drift_history.jsonl"
    edited = {**first.to_json(), "time": "last tuesday"}
    with path.open("a", encoding="utf-8") as file:
        file.write(json.dumps(edited) + "\n")
    with pytest.warns(DamagedHistoryWarning, match="line 2: not a drift check"):
        second = project.drift("j", bootstrap=FAST)
    assert read_history(path).checks == (first, second)
    assert second.time.endswith("Z") and second.checked_at.tzinfo is not None
