"""The commands that change a project built from files keep its `project.yaml` whole.

Imports started at once (real processes, released together) each either keep their entry or
are refused, as `add-judges` is, while another command holds the project's lock.
"""

from __future__ import annotations

import copy
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
    "another meta-evaluator command is changing this project",
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
            assert out.startswith(f"Imported the labels of 'extra{i}' for task"), out
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
    entry: Main, support: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import snapshot

    monkeypatch.setattr("meta_evaluator._cli_project.LOCK_WAIT", 0.3)
    before = snapshot(support)
    owner = "--annotator" if command == "import-annotations" else "--judge"
    labels = CONFIGS / "annotations" / "ana.csv"
    with ProjectLock(support):  # as a run (or add-judges) of the project holds it
        done = entry(command, support, labels, owner, "extra")
        assert done.returncode == 2, (done.stdout, done.stderr)
        assert LOCKED[0] in done.stderr and "(waited 0.3 s)" in done.stderr
        assert "meta-evaluator run` of this project" not in done.stderr  # not only runs hold it
        assert snapshot(support) == {**before, LOCK_FILE: (support / LOCK_FILE).read_bytes()}
    assert entry(command, support, labels, owner, "extra").returncode == 0  # once it is free
    section = "annotations" if command == "import-annotations" else "results"
    key = "annotator_id" if command == "import-annotations" else "judge_id"
    entries = own_yaml(support)[section]
    assert isinstance(entries, list) and [e[key] for e in entries] == ["extra"]


def test_an_import_waits_for_a_lock_released_meanwhile(entry: Main, support: Path) -> None:
    """Another command holding the lock a moment (an import started with this one): this one
    waits for it instead of refusing at once (review)."""
    import threading

    lock = ProjectLock(support)
    lock.acquire()
    releaser = threading.Timer(0.5, lock.release)
    releaser.start()
    try:
        done = entry("import-annotations", support, CONFIGS / "annotations" / "ana.csv",
                     "--annotator", "late")  # fmt: skip
    finally:
        releaser.join(timeout=30)
    assert done.returncode == 0, (done.stdout, done.stderr)
    entries = own_yaml(support)["annotations"]
    assert isinstance(entries, list) and [e["annotator_id"] for e in entries] == ["late"]


# ----- add-judges --overwrite ------------------------------------------------------------------


@pytest.fixture
def shipped(entry: Main, tmp_path: Path) -> Path:
    """configs/project.yaml built: the inline mock_support_judge, judges/support-judges.yaml."""
    project = tmp_path / "shipped"
    assert entry("init", project, "--from", CONFIGS / "project.yaml").returncode == 0
    return project


def judges_copy(folder: Path, name: str, *, model: str) -> Path:
    """support-judges.yaml (mock_brief_judge) as `folder/name`, its model set to `model`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "prompts").mkdir(exist_ok=True)
    prompt = CONFIGS / "prompts" / "support_brief.md"
    (folder / "prompts" / prompt.name).write_bytes(prompt.read_bytes())
    text = (CONFIGS / "support-judges.yaml").read_text(encoding="utf-8")
    path = folder / name
    path.write_text(text.replace("mock-brief-1", model), encoding="utf-8")
    return path


def registered_model(project: Path, judge_id: str) -> str:
    from meta_evaluator import MetaEvaluator

    return MetaEvaluator(project, load=True).judge_registry[judge_id].model


def test_an_edited_judges_file_replaces_its_copy_and_run_works(
    entry: Main, shipped: Path, tmp_path: Path
) -> None:
    """Before, the edited file was copied as judges/support-judges-2.yaml beside the first one,
    project.yaml listed both, and `run` refused the judge given twice."""
    edited = judges_copy(tmp_path / "mine", "support-judges.yaml", model="mock-brief-2")
    done = entry("add-judges", shipped, edited, "--overwrite")
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert sorted(p.name for p in (shipped / "judges").glob("*.yaml")) == ["support-judges.yaml"]
    assert (shipped / "judges" / "support-judges.yaml").read_bytes() == edited.read_bytes()
    judges = own_yaml(shipped)["judges"]
    assert isinstance(judges, list)
    assert [j if isinstance(j, str) else j["id"] for j in judges] == [
        "mock_support_judge",
        "judges/support-judges.yaml",
    ]
    done = entry("run", shipped, "--progress", "off", "--judges", "mock_brief_judge")
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert registered_model(shipped, "mock_brief_judge") == "mock-brief-2"


def test_a_judges_file_of_another_name_replaces_the_file_and_inline_entry_it_overwrites(
    entry: Main, shipped: Path, tmp_path: Path
) -> None:
    """The earlier copy goes, with its entry; so does an inline judge of project.yaml."""
    import yaml as pyyaml

    renamed = judges_copy(tmp_path / "mine", "brief.yaml", model="mock-brief-3")
    raw = pyyaml.safe_load(renamed.read_text(encoding="utf-8"))
    support = {"id": "mock_support_judge", "llm_client": "mock", "model": "mock-support-9",
               "prompt_file": "prompts/support_brief.md"}  # fmt: skip
    renamed.write_text(pyyaml.safe_dump({"judges": [*raw["judges"], support]}), encoding="utf-8")
    done = entry("add-judges", shipped, renamed, "--overwrite")
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert sorted(p.name for p in (shipped / "judges").glob("*.yaml")) == ["brief.yaml"]
    assert own_yaml(shipped)["judges"] == ["judges/brief.yaml"]
    assert entry("run", shipped, "--progress", "off").returncode == 0
    assert registered_model(shipped, "mock_brief_judge") == "mock-brief-3"
    assert registered_model(shipped, "mock_support_judge") == "mock-support-9"


def test_without_overwrite_an_edited_judges_file_is_refused_and_changes_nothing(
    entry: Main, shipped: Path, tmp_path: Path
) -> None:
    from tests.conftest import snapshot

    before = snapshot(shipped)
    edited = judges_copy(tmp_path / "mine", "support-judges.yaml", model="mock-brief-2")
    done = entry("add-judges", shipped, edited)
    assert done.returncode == 2
    assert (
        "judge 'mock_brief_judge' is already registered; pass --overwrite to replace it"
        in done.stderr
    )
    assert snapshot(shipped) == before


def test_overwrite_refuses_a_file_that_would_drop_judges_of_an_earlier_copy(
    entry: Main, shipped: Path, tmp_path: Path
) -> None:
    """judges/support-judges.yaml also gives a judge the new file does not: it cannot go whole."""
    import yaml as pyyaml

    from tests.conftest import snapshot

    two = judges_copy(tmp_path / "two", "pair.yaml", model="mock-brief-1")
    raw = pyyaml.safe_load(two.read_text(encoding="utf-8"))
    other = {**copy.deepcopy(raw["judges"][0]), "id": "mock_other_judge"}
    two.write_text(pyyaml.safe_dump({"judges": [*raw["judges"], other]}), encoding="utf-8")
    assert entry("add-judges", shipped, two, "--overwrite").returncode == 0
    before = snapshot(shipped)
    one = judges_copy(tmp_path / "one", "brief.yaml", model="mock-brief-2")
    done = entry("add-judges", shipped, one, "--overwrite")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "judges/pair.yaml" in done.stderr and "'mock_other_judge'" in done.stderr
    assert snapshot(shipped) == before


def test_overwrite_never_removes_a_judges_file_outside_the_project(
    entry: Main, shipped: Path, tmp_path: Path
) -> None:
    """project.yaml naming a shared file outside the project (edited by hand): --overwrite of
    a file giving its judge is refused, and the shared file stays (it was deleted, review)."""
    from tests.conftest import snapshot

    shared = judges_copy(tmp_path / "shared", "team.yaml", model="mock-brief-1")
    (shipped / "judges" / "support-judges.yaml").unlink()
    text = (shipped / "project.yaml").read_text(encoding="utf-8")
    relative = os.path.relpath(shared, shipped)
    (shipped / "project.yaml").write_text(
        text.replace("- judges/support-judges.yaml", f"- {relative}"), encoding="utf-8"
    )
    before, shared_before = snapshot(shipped), shared.read_bytes()
    edited = judges_copy(tmp_path / "mine", "brief.yaml", model="mock-brief-2")
    done = entry("add-judges", shipped, edited, "--overwrite")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "lies outside the project" in done.stderr and "team.yaml" in done.stderr
    assert shared.read_bytes() == shared_before
    assert snapshot(shipped) == before


def test_overwrite_drops_the_entry_of_a_replaced_file_however_it_is_spelt(
    entry: Main, shipped: Path, tmp_path: Path
) -> None:
    """`./judges/support-judges.yaml` in project.yaml: the file went and its entry stayed, so
    `run` failed on a missing file (review)."""
    text = (shipped / "project.yaml").read_text(encoding="utf-8")
    (shipped / "project.yaml").write_text(
        text.replace("- judges/support-judges.yaml", "- ./judges/support-judges.yaml"),
        encoding="utf-8",
    )
    renamed = judges_copy(tmp_path / "mine", "brief.yaml", model="mock-brief-3")
    done = entry("add-judges", shipped, renamed, "--overwrite")
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert sorted(p.name for p in (shipped / "judges").glob("*.yaml")) == ["brief.yaml"]
    judges = own_yaml(shipped)["judges"]
    assert isinstance(judges, list)
    assert [j for j in judges if isinstance(j, str)] == ["judges/brief.yaml"]
    done = entry("run", shipped, "--progress", "off", "--dry-run")
    assert done.returncode == 0, (done.stdout, done.stderr)
