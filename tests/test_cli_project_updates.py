"""The commands that change a project built from files keep its `project.yaml` whole.

Imports started at once (real processes, released together) each either keep their entry or
are refused, as `add-judges` is, while another command holds the project's lock.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from meta_evaluator.locks import LOCK_FILE, ProjectLock
from tests.conftest import Main

ROOT = Path(__file__).parents[1]
CONFIGS = ROOT / "configs"
LOCKED = (
    "another `meta-evaluator run` of this project is going on",
    "could not take the project's lock; try again",
)
"""What a command refused by the project's lock says (the lock's own two messages)."""

RACER = """
import sys, time
from pathlib import Path
from meta_evaluator.cli import main

go = Path(sys.argv[1])
print("ready", flush=True)
while not go.exists():
    time.sleep(0.005)
sys.argv = ["meta-evaluator", *sys.argv[2:]]
main()
"""
"""One command in its own process, started once `go` exists: imports done, all at once."""


@pytest.fixture
def support(entry: Main, tmp_path: Path) -> Path:
    """A project made by `init --data` and `add-task`: it has its own project.yaml."""
    project = tmp_path / "support"
    data = CONFIGS / "data" / "support_tickets.csv"
    assert entry("init", project, "--data", data, "--id-column", "ticket_id").returncode == 0
    assert entry("add-task", project, CONFIGS / "project.yaml").returncode == 0
    return project


def own_yaml(project: Path) -> dict[str, object]:
    raw = yaml.safe_load((project / "project.yaml").read_text(encoding="utf-8"))
    assert isinstance(raw, dict)
    return raw


@pytest.mark.skipif(sys.platform == "win32", reason="pid checks of this host")
def test_imports_at_once_each_keep_their_entry_or_are_refused(
    support: Path, tmp_path: Path
) -> None:
    """Before, each said "Imported" and project.yaml lost some of them (six at once kept four)."""
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    labels = CONFIGS / "annotations" / "ana.csv"
    command = [
        sys.executable,
        "-c",
        RACER,
        str(go),
        "import-annotations",
        str(support),
        str(labels),
    ]
    pipe = subprocess.PIPE
    racers = [
        subprocess.Popen(
            [*command, "--annotator", f"extra{i}"], stdout=pipe, stderr=pipe, text=True, env=env
        )
        for i in range(4)
    ]
    try:
        assert [r.stdout.readline().strip() for r in racers if r.stdout] == ["ready"] * 4
        go.touch()
        done = [(r.wait(timeout=120), *r.communicate(timeout=30)) for r in racers]
    finally:
        for racer in racers:
            if racer.poll() is None:
                racer.kill()
                racer.wait(timeout=30)
    imported = {f"extra{i}" for i, (code, out, _) in enumerate(done) if code == 0}
    for i, (code, out, err) in enumerate(done):
        if code == 0:
            assert out.startswith(f"Imported the labels of 'extra{i}': 32 valid"), out
        else:
            assert code == 2 and any(said in err for said in LOCKED), (code, out, err)
            assert "Traceback" not in err
    assert imported  # one of them at least holds the lock first
    entries = own_yaml(support).get("annotations", [])
    assert isinstance(entries, list)
    assert sorted(e["annotator_id"] for e in entries) == sorted(imported)
    copies = support / "inputs" / "annotations"
    assert sorted(p.stem for p in copies.iterdir()) == sorted(imported)
    saved = {p.stem for p in (support / "annotations").glob("*/*.parquet")}
    assert saved == imported  # a refused import saved nothing
    assert not (support / LOCK_FILE).exists()


@pytest.mark.parametrize("command", ["import-annotations", "import-results"])
def test_an_import_while_the_project_is_locked_is_refused_and_changes_nothing(
    entry: Main, support: Path, command: str
) -> None:
    from tests.conftest import snapshot

    before = snapshot(support)
    owner = "--annotator" if command == "import-annotations" else "--judge"
    labels = CONFIGS / "annotations" / "ana.csv"
    with ProjectLock(support):  # as a run (or add-judges) of the project holds it
        done = entry(command, support, labels, owner, "extra")
        assert done.returncode == 2, (done.stdout, done.stderr)
        assert LOCKED[0] in done.stderr
        assert snapshot(support) == {**before, LOCK_FILE: (support / LOCK_FILE).read_bytes()}
    assert entry(command, support, labels, owner, "extra").returncode == 0  # once it is free
    section = "annotations" if command == "import-annotations" else "results"
    key = "annotator_id" if command == "import-annotations" else "judge_id"
    entries = own_yaml(support)[section]
    assert isinstance(entries, list) and [e[key] for e in entries] == ["extra"]
