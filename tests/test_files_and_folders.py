"""Files and folders the user does not expect: YAML alias bombs, symlinks out of the project,
a full or read-only disk, and git-lfs pointers where data should be.

Each failure must raise a typed error that names the path; a run stopped by the file system
exits with its own code (4) and resumes on the next run.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.errors import (
    DiskFullError,
    JudgeConfigError,
    LfsPointerError,
    MetricConfigError,
    OutsideProjectError,
    PermissionDeniedError,
    StateError,
    StorageError,
)
from meta_evaluator.storage import read_yaml
from tests.conftest import Main

JUDGE = "mock_refusal_judge"

# ----- YAML alias bombs -----------------------------------------------------------------------

# The classic "billion laughs": under 1 KB, 9**9 strings once every alias is expanded.
BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [
        f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]"
        for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
    ]
)


def test_read_yaml_refuses_aliases(tmp_path: Path) -> None:
    assert len(BOMB.encode()) < 1024  # the case: a file under 1 KB
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB, encoding="utf-8")
    with pytest.raises(StateError, match="alias") as caught:
        read_yaml(path)
    assert caught.value.path == path
    assert "line 2" in str(caught.value)


def test_read_yaml_refuses_a_single_alias(tmp_path: Path) -> None:
    path = tmp_path / "small.yaml"
    path.write_text("a: &x 1\nb: *x\n", encoding="utf-8")
    with pytest.raises(StateError, match="alias"):
        read_yaml(path)


def test_read_yaml_accepts_an_anchor_no_alias_uses(tmp_path: Path) -> None:
    """An anchor alone expands nothing, so it is read as if it were not there."""
    path = tmp_path / "small.yaml"
    path.write_text("a: &x 1\nb: 2\n", encoding="utf-8")
    assert read_yaml(path) == {"a": 1, "b": 2}


def test_judges_yaml_bomb_fails_fast(tmp_path: Path) -> None:
    path = tmp_path / "judges.yaml"
    path.write_text(BOMB + "\njudges: *i\n", encoding="utf-8")
    evaluator = MetaEvaluator(tmp_path / "project")
    with pytest.raises(JudgeConfigError, match="alias") as caught:
        evaluator.load_judges_from_yaml(path)
    assert caught.value.path == path
    assert len(str(caught.value)) < 1000


def test_metrics_yaml_bomb_fails_fast(tmp_path: Path) -> None:
    from meta_evaluator.scores.yaml_config import read_metrics_yaml

    path = tmp_path / "metrics.yaml"
    path.write_text(BOMB + "\nmetrics: *i\n", encoding="utf-8")
    with pytest.raises(MetricConfigError, match="alias") as caught:
        read_metrics_yaml(path)
    assert caught.value.path == path
    assert len(str(caught.value)) < 1000


def test_cli_score_with_a_metrics_bomb_exits_2(project: Path, entry: Main) -> None:
    bomb = project / "bomb.yaml"
    bomb.write_text(BOMB + "\nmetrics: *i\n", encoding="utf-8")
    done = entry("score", project, "--metrics", bomb)
    assert done.returncode == 2
    assert "alias" in done.stderr and str(bomb) in done.stderr
    assert "Traceback" not in done.stderr


# ----- environment faults: disk full, read-only, no permission ------------------------------


class FaultyOs:
    """The `os` module as one module sees it, with `write` failing after `good` calls."""

    def __init__(self, code: int, good: int = 0, partial: bool = False) -> None:
        self.code = code
        self.good = good
        self.partial = partial
        self.calls = 0

    def write(self, fd: int, data: bytes) -> int:
        self.calls += 1
        if self.calls <= self.good:
            return os.write(fd, data)
        if self.partial and self.calls == self.good + 1:
            return os.write(fd, bytes(data)[: len(data) // 2])  # half a line, then the disk fills
        raise OSError(self.code, os.strerror(self.code))

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)


def faulty_row_store(monkeypatch: pytest.MonkeyPatch, fault: FaultyOs) -> None:
    from meta_evaluator.judge import row_store

    monkeypatch.setattr(row_store, "os", fault)


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (errno.ENOSPC, DiskFullError),
        (errno.EFBIG, DiskFullError),
        (errno.EROFS, PermissionDeniedError),
        (errno.EACCES, PermissionDeniedError),
    ],
    ids=["ENOSPC", "EFBIG", "EROFS", "EACCES"],
)
def test_row_store_fault_is_typed_and_keeps_earlier_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, error: type[StorageError]
) -> None:
    from meta_evaluator.judge.row_store import RowStore, read_rows

    path = tmp_path / "rows.jsonl"
    fault = FaultyOs(code, good=2, partial=code == errno.ENOSPC)
    faulty_row_store(monkeypatch, fault)
    with pytest.raises(error) as caught, RowStore(path) as store:
        for number in range(5):
            store.append({"original_id": number, "outcome": "valid"})
    assert caught.value.path == path
    assert str(path) in str(caught.value)
    assert caught.value.errno == code
    assert [r["original_id"] for r in read_rows(path)] == [0, 1]
    assert path.read_bytes().endswith(b"\n")  # no torn line left for the next run to trip on
    monkeypatch.undo()
    with RowStore(path) as store:
        store.append({"original_id": 2, "outcome": "valid"})
    assert [r["original_id"] for r in read_rows(path)] == [0, 1, 2]


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (errno.ENOSPC, DiskFullError),
        (errno.EDQUOT, DiskFullError),
        (errno.EPERM, PermissionDeniedError),
    ],
    ids=["ENOSPC", "EDQUOT", "EPERM"],
)
def test_atomic_write_fault_is_typed_and_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, error: type[StorageError]
) -> None:
    from meta_evaluator import storage

    target = tmp_path / "state.json"
    target.write_text("old", encoding="utf-8")

    def refuse(*args: object) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(storage.os, "fsync", refuse)
    with pytest.raises(error) as caught:
        storage.write_json(target, {"new": 1})
    assert caught.value.path == target and str(target) in str(caught.value)
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def run_rows(project: Path) -> list[dict[str, object]]:
    from meta_evaluator.judge.row_store import read_rows

    return [row for path in (project / "results").glob("*/*.jsonl") for row in read_rows(path)]


@pytest.mark.parametrize(
    ("code", "words"),
    [(errno.ENOSPC, "disk"), (errno.EROFS, "read-only"), (errno.EACCES, "permission")],
    ids=["ENOSPC", "EROFS", "EACCES"],
)
def test_a_run_stopped_by_the_file_system_exits_4_and_resumes(
    project: Path, entry: Main, monkeypatch: pytest.MonkeyPatch, code: int, words: str
) -> None:
    faulty_row_store(monkeypatch, FaultyOs(code, good=5))
    done = entry("run", project, "--max-concurrency", "1")
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "ExceptionGroup" not in done.stderr
    rows_file = next((project / "results").glob(f"*/{JUDGE}*.jsonl"))
    assert str(rows_file) in done.stderr
    assert words in done.stderr.lower()
    kept = run_rows(project)
    assert len(kept) == 5
    assert not (project / ".meta-evaluator.lock").exists()  # the project lock is released
    monkeypatch.undo()
    done = entry("run", project)
    assert done.returncode == 0, (done.stdout, done.stderr)
    rows = run_rows(project)
    assert len({json.dumps(r["original_id"]) for r in rows}) == 40
    assert rows[:5] == kept  # the rows written before the fault are reused, not asked again


def test_a_run_with_many_rows_in_flight_shows_one_typed_error(
    project: Path, entry: Main, monkeypatch: pytest.MonkeyPatch
) -> None:
    faulty_row_store(monkeypatch, FaultyOs(errno.ENOSPC, good=3))
    done = entry("run", project, "--max-concurrency", "16", "--progress", "off")
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert done.stderr.startswith("error: ") and "ExceptionGroup" not in done.stderr


def test_the_facade_raises_the_typed_error_not_a_group(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    faulty_row_store(monkeypatch, FaultyOs(errno.ENOSPC, good=3))
    with pytest.raises(DiskFullError):
        MetaEvaluator(project, load=True).run_judges_async(max_concurrency=16)


@pytest.mark.skipif(
    os.geteuid() == 0, reason="root writes through chmod; see the EROFS/EACCES cases"
)
def test_a_read_only_results_folder_exits_4(project: Path, entry: Main) -> None:
    results = project / "results"
    results.mkdir()
    results.chmod(0o555)
    try:
        done = entry("run", project)
    finally:
        results.chmod(0o755)
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert str(results) in done.stderr


# ----- writes never follow a symlink out of the project ---------------------------------------


def link_outside(project: Path, name: str, tmp_path: Path) -> Path:
    """Replace the project's folder `name` with a symlink to an empty folder outside it."""
    outside = tmp_path / f"outside_{name}"
    outside.mkdir()
    if (project / name).exists():
        shutil.rmtree(project / name)
    (project / name).symlink_to(outside, target_is_directory=True)
    return outside


def test_atomic_write_refuses_a_folder_linked_outside(tmp_path: Path) -> None:
    from meta_evaluator.storage import write_json

    project = tmp_path / "project"
    project.mkdir()
    (project / "main_state.json").write_text("{}", encoding="utf-8")
    outside = link_outside(project, "scores", tmp_path)
    target = project / "scores" / "accuracy" / "result.json"
    with pytest.raises(OutsideProjectError) as caught:
        write_json(target, {"a": 1})
    assert caught.value.path == target
    assert str(project / "scores") in str(caught.value) and "symbolic link" in str(caught.value)
    assert list(outside.iterdir()) == []  # not even the accuracy/ folder


def test_a_link_that_stays_inside_the_project_is_followed(tmp_path: Path) -> None:
    from meta_evaluator.storage import write_json

    project = tmp_path / "project"
    (project / "elsewhere").mkdir(parents=True)
    (project / "main_state.json").write_text("{}", encoding="utf-8")
    (project / "scores").symlink_to(project / "elsewhere", target_is_directory=True)
    write_json(project / "scores" / "x.json", {"a": 1})
    assert json.loads((project / "elsewhere" / "x.json").read_text(encoding="utf-8")) == {"a": 1}


def test_a_project_reached_through_a_link_is_written(tmp_path: Path) -> None:
    from meta_evaluator.storage import write_json

    real = tmp_path / "real"
    real.mkdir()
    (real / "main_state.json").write_text("{}", encoding="utf-8")
    (tmp_path / "linked").symlink_to(real, target_is_directory=True)
    write_json(tmp_path / "linked" / "results" / "x.json", {"a": 1})
    assert (real / "results" / "x.json").is_file()


def test_a_results_folder_linked_into_another_project_is_refused(tmp_path: Path) -> None:
    from meta_evaluator.storage import write_json

    project, other = tmp_path / "project", tmp_path / "other"
    for folder in (project, other):
        folder.mkdir()
        (folder / "main_state.json").write_text("{}", encoding="utf-8")
    (project / "results").symlink_to(other, target_is_directory=True)
    with pytest.raises(OutsideProjectError):
        write_json(project / "results" / "x.json", {"a": 1})
    assert sorted(p.name for p in other.iterdir()) == ["main_state.json"]


def test_run_with_results_linked_outside_exits_4(
    project: Path, entry: Main, tmp_path: Path
) -> None:
    outside = link_outside(project, "results", tmp_path)
    done = entry("run", project)
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert str(project / "results") in done.stderr and "Traceback" not in done.stderr
    assert list(outside.iterdir()) == []


def test_score_with_scores_linked_outside_exits_4(
    project: Path, entry: Main, tmp_path: Path
) -> None:
    assert entry("run", project).returncode == 0
    outside = link_outside(project, "scores", tmp_path)
    done = entry("score", project)
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert str(project / "scores") in done.stderr
    assert list(outside.iterdir()) == []


def test_report_with_reports_linked_outside_exits_4(
    project: Path, entry: Main, tmp_path: Path
) -> None:
    outside = link_outside(project, "reports", tmp_path)
    done = entry("report", project)
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert str(project / "reports") in done.stderr
    assert list(outside.iterdir()) == []


def test_annotations_linked_outside_are_refused(project: Path, tmp_path: Path) -> None:
    from importlib.resources import files

    outside = link_outside(project, "annotations", tmp_path)
    source = tmp_path / "dan.csv"
    source.write_bytes(
        files("meta_evaluator.examples").joinpath("refusal/annotations/ana.csv").read_bytes()
    )
    evaluator = MetaEvaluator(project, load=True)
    with pytest.raises(OutsideProjectError) as caught:
        evaluator.add_external_annotation_results(source, "dan")
    assert str(project / "annotations") in str(caught.value)
    assert list(outside.iterdir()) == []


def test_a_row_file_linked_outside_is_refused(project: Path, entry: Main, tmp_path: Path) -> None:
    assert entry("run", project).returncode == 0
    rows = next((project / "results").glob(f"*/{JUDGE}*.jsonl"))
    outside = tmp_path / "outside_rows.jsonl"
    lines = rows.read_bytes().splitlines(keepends=True)
    outside.write_bytes(b"".join(lines[:5]))
    rows.unlink()
    rows.symlink_to(outside)
    for name in (f"{JUDGE}.parquet",):
        for table in rows.parent.glob(name):
            table.unlink()  # an unfinished run: the next run appends to its rows
    state_file = next(rows.parent.glob("*_state.json"))
    state = json.loads(state_file.read_text(encoding="utf-8"))
    state["completed_at"] = None
    state["counts"] = {}
    state_file.write_text(json.dumps(state), encoding="utf-8")
    before = outside.read_bytes()
    done = entry("run", project)
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert str(rows) in done.stderr and "symbolic link" in done.stderr
    assert outside.read_bytes() == before


def test_row_store_refuses_a_symlinked_row_file(tmp_path: Path) -> None:
    from meta_evaluator.judge.row_store import RowStore

    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b'{"original_id": 1}\n')
    rows = tmp_path / "rows.jsonl"
    rows.symlink_to(outside)
    with pytest.raises(OutsideProjectError) as caught, RowStore(rows) as store:
        store.append({"original_id": 2})
    assert caught.value.path == rows
    assert outside.read_bytes() == b'{"original_id": 1}\n'


def test_a_dotdot_path_through_a_link_outside_is_refused(tmp_path: Path) -> None:
    """`results/link/..` is where the OS goes: the link's target's parent, not `results/`."""
    from meta_evaluator.storage import atomic_write_text

    project = tmp_path / "project"
    (project / "results").mkdir(parents=True)
    (project / "main_state.json").write_text("{}", encoding="utf-8")
    outside = tmp_path / "outside"
    (outside / "inner").mkdir(parents=True)
    (project / "results" / "link").symlink_to(outside / "inner", target_is_directory=True)
    target = project / "results" / "link" / ".." / "escaped.txt"
    with pytest.raises(OutsideProjectError) as caught:
        atomic_write_text(target, "x")
    assert str(project / "results" / "link") in str(caught.value)
    assert sorted(p.name for p in outside.iterdir()) == ["inner"]


def test_a_dotdot_path_that_stays_inside_is_written(tmp_path: Path) -> None:
    from meta_evaluator.storage import atomic_write_text

    project = tmp_path / "project"
    (project / "results" / "sub").mkdir(parents=True)
    (project / "main_state.json").write_text("{}", encoding="utf-8")
    atomic_write_text(project / "results" / "sub" / ".." / "x.txt", "x")
    assert (project / "results" / "x.txt").read_text(encoding="utf-8") == "x"


def test_an_explicit_root_is_checked_without_a_marker(tmp_path: Path) -> None:
    from meta_evaluator.storage import check_inside_project, write_json

    project = tmp_path / "project"
    project.mkdir()
    outside = link_outside(project, "data", tmp_path)
    check_inside_project(project / "data" / "x.json")  # no main_state.json: nothing to guess
    with pytest.raises(OutsideProjectError):
        check_inside_project(project / "data" / "x.json", root=project)
    with pytest.raises(OutsideProjectError):
        write_json(project / "data" / "x.json", {"a": 1}, root=project)
    assert list(outside.iterdir()) == []


def refusal_unsaved(project_dir: Path) -> MetaEvaluator:
    """The refusal example's data, task and mock judge in a new project, nothing saved yet."""
    from importlib.resources import as_file, files

    from meta_evaluator.data import DataLoader
    from meta_evaluator.eval_task import EvalTask

    evaluator = MetaEvaluator(project_dir, load=False)
    with as_file(files("meta_evaluator.examples").joinpath("refusal")) as source:
        evaluator.add_data(DataLoader.load_csv("refusal", source / "data.csv", "sample_id"))
        evaluator.add_judge("mock_judge", "mock", "mock-1", prompt_file=source / "prompt.md")
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"rejection": ["rejection", "not rejection"]},
            prompt_columns=["prompt"],
            response_columns=["llm_response"],
            annotation_prompt="Did the assistant refuse?",
        )
    )
    return evaluator


def test_a_project_named_with_dotdot_after_a_link_is_saved(tmp_path: Path) -> None:
    """`link/../project` is the project beside the link's target; its files are inside it."""
    (tmp_path / "elsewhere" / "inner").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere" / "inner", target_is_directory=True)
    refusal_unsaved(tmp_path / "link" / ".." / "project").save_state()
    assert (tmp_path / "elsewhere" / "project" / "main_state.json").is_file()


def test_the_first_save_refuses_data_linked_outside(tmp_path: Path) -> None:
    """Before the first save there is no main_state.json to find the project by."""
    project = tmp_path / "project"
    project.mkdir()
    outside = link_outside(project, "data", tmp_path)
    evaluator = refusal_unsaved(project)
    with pytest.raises(OutsideProjectError) as caught:
        evaluator.save_state()
    assert str(project / "data") in str(caught.value)
    assert list(outside.iterdir()) == []
    assert not (project / "main_state.json").exists()


@pytest.mark.parametrize("folder", ["results", "scores", "annotations", "reports"])
def test_a_new_project_refuses_folders_linked_outside(tmp_path: Path, folder: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    outside = link_outside(project, folder, tmp_path)
    evaluator = refusal_unsaved(project)
    with pytest.raises(OutsideProjectError) as caught:
        evaluator.run_judges_async()
    assert str(project / folder) in str(caught.value)
    with pytest.raises(OutsideProjectError):
        evaluator.save_state()
    assert list(outside.iterdir()) == []
    assert not (project / "main_state.json").exists()


@pytest.mark.parametrize("name", ["data", "annotations", "metrics.yaml"])
def test_init_example_refuses_links_outside(tmp_path: Path, entry: Main, name: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    if name == "metrics.yaml":
        outside = tmp_path / "outside.yaml"
        outside.write_text("mine\n", encoding="utf-8")
        (project / name).symlink_to(outside)
    else:
        outside = link_outside(project, name, tmp_path)
    done = entry("init", project, "--example", "refusal")
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert str(project / name) in done.stderr and "Traceback" not in done.stderr
    if name == "metrics.yaml":
        assert outside.read_text(encoding="utf-8") == "mine\n"
    else:
        assert list(outside.iterdir()) == []
    assert not (project / "main_state.json").exists()


# ----- the row file on Windows ----------------------------------------------------------------


def test_row_store_drops_a_torn_line_without_pread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows has no os.pread; the torn tail is found with lseek and read instead."""
    from meta_evaluator.judge.row_store import RowStore, read_rows

    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"original_id": 1}\n{"original_id": 2}\n{"original_id"')
    monkeypatch.delattr(os, "pread")
    with RowStore(path) as store:
        store.append({"original_id": 3})
    assert [r["original_id"] for r in read_rows(path)] == [1, 2, 3]


def test_row_store_opens_the_file_in_binary_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On Windows a file opened without O_BINARY turns each \\n into \\r\\n."""
    from meta_evaluator.judge.row_store import RowStore

    binary = 1 << 29  # stands in for Windows' O_BINARY; removed before the real call
    flags: list[int] = []
    real_open = os.open

    def spy(path: object, flag: int, *args: object, **kwargs: object) -> int:
        flags.append(flag)
        return real_open(path, flag & ~binary, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "O_BINARY", binary, raising=False)
    monkeypatch.setattr(os, "open", spy)
    with RowStore(tmp_path / "rows.jsonl") as store:
        store.append({"original_id": 1})
    assert flags and all(flag & binary for flag in flags)


# ----- git-lfs pointers where data should be -------------------------------------------------

POINTER = (
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    "size 12345\n"
)


def check_pointer_error(error: BaseException, path: Path) -> None:
    assert isinstance(error, LfsPointerError), repr(error)
    assert error.path == path
    assert str(path) in str(error) and "git lfs pull" in str(error)


@pytest.mark.parametrize(
    ("loader", "suffix"),
    [
        ("load_csv", ".csv"),
        ("load_parquet", ".parquet"),
        ("load_json", ".json"),
        ("load_jsonl", ".jsonl"),
        ("load", ".parquet"),
        ("load", ".csv"),
    ],
)
def test_data_loader_names_a_pointer(tmp_path: Path, loader: str, suffix: str) -> None:
    from meta_evaluator.data import DataLoader

    path = tmp_path / f"data{suffix}"
    path.write_text(POINTER, encoding="utf-8")
    with pytest.raises(LfsPointerError) as caught:
        getattr(DataLoader, loader)("d", path, "id")
    check_pointer_error(caught.value, path)


@pytest.mark.parametrize("data_format", ["parquet", "csv", "json"])
def test_the_project_data_file_as_a_pointer(
    project: Path, tmp_path: Path, data_format: str
) -> None:
    evaluator = MetaEvaluator(project, load=True)
    evaluator.save_state(data_format=data_format)
    data_file = next((project / "data").glob(f"*.{data_format}"))
    data_file.write_text(POINTER, encoding="utf-8")
    with pytest.raises(LfsPointerError) as caught:
        MetaEvaluator(project, load=True)
    check_pointer_error(caught.value, data_file)


def test_a_results_table_as_a_pointer(project: Path, entry: Main) -> None:
    assert entry("run", project).returncode == 0
    table = next((project / "results").glob(f"*/{JUDGE}*.parquet"))
    table.write_text(POINTER, encoding="utf-8")
    with pytest.raises(LfsPointerError) as caught:
        MetaEvaluator(project, load=True).load_all_judge_results()
    check_pointer_error(caught.value, table)


def test_a_row_file_as_a_pointer(project: Path, entry: Main) -> None:
    from meta_evaluator.judge.row_store import read_rows

    assert entry("run", project).returncode == 0
    rows = next((project / "results").glob(f"*/{JUDGE}*.jsonl"))
    rows.write_text(POINTER, encoding="utf-8")
    with pytest.raises(LfsPointerError) as caught:
        read_rows(rows)
    check_pointer_error(caught.value, rows)


def test_annotations_as_a_pointer(project: Path, entry: Main) -> None:
    table = next((project / "annotations").glob("*/*.parquet"))
    table.write_text(POINTER, encoding="utf-8")
    with pytest.raises(LfsPointerError) as caught:
        MetaEvaluator(project, load=True).load_all_human_results()
    check_pointer_error(caught.value, table)
    done = entry("status", project)
    assert done.returncode == 2 and "git lfs pull" in done.stderr


@pytest.mark.parametrize("kind", ["judge", "annotation"])
def test_an_external_import_of_a_pointer(project: Path, tmp_path: Path, kind: str) -> None:
    source = tmp_path / "labels.csv"
    source.write_text(POINTER, encoding="utf-8")
    evaluator = MetaEvaluator(project, load=True)
    add = (
        evaluator.add_external_judge_results
        if kind == "judge"
        else evaluator.add_external_annotation_results
    )
    with pytest.raises(LfsPointerError) as caught:
        add(source, "someone")
    check_pointer_error(caught.value, source)


def test_a_yaml_file_as_a_pointer(tmp_path: Path) -> None:
    path = tmp_path / "judges.yaml"
    path.write_text(POINTER, encoding="utf-8")
    with pytest.raises(JudgeConfigError, match="git lfs pull"):
        MetaEvaluator(tmp_path / "p").load_judges_from_yaml(path)


# ----- messages quote at most 80 characters of a value ---------------------------------------

HUGE = "x" * 100_000


def assert_capped(message: str) -> None:
    assert len(message) < 2_000, f"{len(message)} characters: {message[:200]}..."
    assert "..." in message  # the value was quoted, cut short


def test_shown_caps_any_value() -> None:
    from meta_evaluator._util import shown

    assert shown("abc") == "'abc'"
    assert len(shown(HUGE)) <= 80 and "..." in shown(HUGE)
    assert len(shown([[HUGE] * 1000] * 1000)) <= 80
    assert len(shown({HUGE: HUGE})) <= 80


@pytest.mark.parametrize(
    "content",
    [
        f"judges:\n  - {HUGE}\n",  # an entry that is not a mapping
        f"judges:\n  - id: a\n    prompt: p\n    ? {HUGE}\n    : 1\n",  # an unknown key
        f"judges:\n  - id: a\n    prompt: p\n    model: m\n    max_concurrency: {HUGE}\n",
        f"judges:\n  - id: {HUGE}\n    prompt: p\n",  # an unsafe id
    ],
    ids=["entry", "key", "value", "id"],
)
def test_judges_yaml_messages_are_capped(tmp_path: Path, content: str) -> None:
    path = tmp_path / "judges.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(JudgeConfigError) as caught:
        MetaEvaluator(tmp_path / "p").load_judges_from_yaml(path)
    assert_capped(str(caught.value))


@pytest.mark.parametrize(
    "content",
    [f"metrics:\n  - scorer: {HUGE}\n", f"metrics:\n  - scorer: accuracy\n    ? {HUGE}\n    : 1\n"],
    ids=["scorer", "key"],
)
def test_metrics_yaml_messages_are_capped(tmp_path: Path, content: str) -> None:
    from meta_evaluator.scores.yaml_config import read_metrics_yaml

    path = tmp_path / "metrics.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(MetricConfigError) as caught:
        read_metrics_yaml(path)
    assert_capped(str(caught.value))


def test_an_unsafe_name_message_is_capped() -> None:
    from meta_evaluator.errors import UnsafeNameError
    from meta_evaluator.storage import check_safe_name

    with pytest.raises(UnsafeNameError) as caught:
        check_safe_name(HUGE, field="judge_id")
    assert_capped(str(caught.value))


def test_an_id_message_is_capped(tmp_path: Path) -> None:
    from meta_evaluator.data import DataLoader
    from meta_evaluator.errors import IdError

    path = tmp_path / "data.json"
    path.write_text(json.dumps([{"id": 1}, {"id": HUGE}]), encoding="utf-8")
    with pytest.raises(IdError) as caught:
        DataLoader.load_json("d", path, "id")
    assert_capped(str(caught.value))


def test_a_label_message_is_capped() -> None:
    from meta_evaluator.errors import TaskError
    from meta_evaluator.eval_task import EvalTask

    with pytest.raises(TaskError) as caught:
        EvalTask(task_schemas={"t": [HUGE, HUGE.upper()]}, response_columns=["r"])
    assert_capped(str(caught.value))


def test_an_answers_invalid_reason_is_capped() -> None:
    from meta_evaluator.eval_task import EvalTask
    from meta_evaluator.eval_task.labels import check_label

    single = EvalTask(task_schemas={"t": ["yes", "no"]}, response_columns=["r"])
    multi = EvalTask(task_schemas={"t": None}, response_columns=["r"])
    for task, value in ((single, [HUGE]), (single, {"a": HUGE})):
        label, reason = check_label(task, "t", value)
        assert label is None and reason is not None
        assert_capped(reason)
    assert multi.allowed_labels("t") is None


def test_a_state_file_message_is_capped(project: Path) -> None:
    state_file = project / "main_state.json"
    state = json.loads(state_file.read_text(encoding="utf-8"))
    state["schema_version"] = HUGE
    state_file.write_text(json.dumps(state), encoding="utf-8")
    with pytest.raises(StateError) as caught:
        MetaEvaluator(project, load=True)
    assert_capped(str(caught.value))


# ----- faults at the locks, in polars' writers, in init; files nested too deep -------------------

FAULTS = [
    (errno.ENOSPC, DiskFullError, "disk"),
    (errno.EROFS, PermissionDeniedError, "read-only"),
    (errno.EACCES, PermissionDeniedError, "permission"),
]
FAULT_IDS = ["ENOSPC", "EROFS", "EACCES"]


class RefusingOpen(FaultyOs):
    """The `os` module with `open` refusing `name` (the lock file) with `code`."""

    def __init__(self, code: int, name: str) -> None:
        super().__init__(code)
        self.name = name

    def open(self, path: object, *args: object) -> int:
        if Path(str(path)).name == self.name:
            raise OSError(self.code, os.strerror(self.code), str(path))
        return os.open(path, *args)  # type: ignore[call-overload, no-any-return]

    def write(self, fd: int, data: bytes) -> int:
        return os.write(fd, data)


@pytest.mark.parametrize(("code", "error", "words"), FAULTS, ids=FAULT_IDS)
def test_the_project_lock_refused_exits_4(
    project: Path,
    entry: Main,
    monkeypatch: pytest.MonkeyPatch,
    code: int,
    error: type[StorageError],
    words: str,
) -> None:
    from meta_evaluator import locks
    from meta_evaluator.locks import ProjectLock

    monkeypatch.setattr(locks, "os", RefusingOpen(code, ".meta-evaluator.lock"))
    with pytest.raises(error) as caught:
        ProjectLock(project).acquire()
    assert caught.value.path == project / ".meta-evaluator.lock"
    done = entry("run", project)
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and words in done.stderr.lower()
    assert str(project / ".meta-evaluator.lock") in done.stderr


@pytest.mark.parametrize(("code", "error", "words"), FAULTS, ids=FAULT_IDS)
def test_a_project_lock_that_cannot_be_written_is_not_left(
    project: Path, monkeypatch: pytest.MonkeyPatch, code: int, error: type[StorageError], words: str
) -> None:
    from meta_evaluator import locks
    from meta_evaluator.locks import ProjectLock

    monkeypatch.setattr(locks, "os", FaultyOs(code))
    with pytest.raises(error):
        ProjectLock(project).acquire()
    assert not (project / ".meta-evaluator.lock").exists()  # no empty lock for others to wait on


@pytest.mark.parametrize(("code", "error", "words"), FAULTS, ids=FAULT_IDS)
def test_a_run_lock_refused_exits_4_and_resumes(
    project: Path,
    entry: Main,
    monkeypatch: pytest.MonkeyPatch,
    code: int,
    error: type[StorageError],
    words: str,
) -> None:
    from meta_evaluator import locks  # where RunLock's file is opened

    monkeypatch.setattr(locks, "os", RefusingOpen(code, f"{JUDGE}.lock"))
    done = entry("run", project)
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and words in done.stderr.lower()
    assert f"{JUDGE}.lock" in done.stderr
    assert not (project / ".meta-evaluator.lock").exists()
    monkeypatch.undo()
    assert entry("run", project).returncode == 0


def test_a_run_lock_that_cannot_be_written_is_not_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from meta_evaluator import locks
    from meta_evaluator.judge import run_files as runs

    files = runs.RunFiles(tmp_path / "results", "run_1", JUDGE)
    monkeypatch.setattr(locks, "os", FaultyOs(errno.ENOSPC))
    with pytest.raises(DiskFullError) as caught:
        runs.RunLock(files).acquire()
    assert caught.value.path == tmp_path / "results" / "run_1" / f"{JUDGE}.lock"
    assert list((tmp_path / "results" / "run_1").iterdir()) == []


def test_a_dangling_project_lock_link_is_outside_the_project(
    project: Path, entry: Main, tmp_path: Path
) -> None:
    lock = project / ".meta-evaluator.lock"
    lock.symlink_to(tmp_path / "nowhere" / "lock")
    done = entry("run", project)
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert str(lock) in done.stderr and "symbolic link" in done.stderr
    assert "try again" not in done.stderr
    assert not (tmp_path / "nowhere").exists()


def test_a_project_lock_linked_inside_is_refused_not_followed(project: Path) -> None:
    from meta_evaluator.locks import ProjectLock

    (project / "decoy").write_text("", encoding="utf-8")
    (project / ".meta-evaluator.lock").symlink_to(project / "decoy")
    with pytest.raises(StorageError) as caught:
        ProjectLock(project).acquire()
    assert "symbolic link" in str(caught.value)
    assert (project / "decoy").read_text(encoding="utf-8") == ""


def polars_refusing(monkeypatch: pytest.MonkeyPatch, code: int, writer: str) -> None:
    """polars' `writer` failing as it does: errno lost, kept only in the message."""
    import polars as pl

    def refuse(*args: object, **kwargs: object) -> None:
        text = f"{os.strerror(code)} (os error {code})"
        if writer == "write_parquet":
            raise pl.exceptions.ComputeError(f"parquet: underlying IO error: {text}")
        raise OSError(f"[Errno {code}] {os.strerror(code)}")  # as polars' write_csv does

    monkeypatch.setattr(pl.DataFrame, writer, refuse)


@pytest.mark.parametrize("writer", ["write_parquet", "write_csv"])
@pytest.mark.parametrize(("code", "error", "words"), FAULTS, ids=FAULT_IDS)
def test_a_polars_write_fault_is_typed(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    code: int,
    error: type[StorageError],
    words: str,
    writer: str,
) -> None:
    import polars as pl

    from meta_evaluator.data.persist import write_frame

    target = tmp_path / "table"
    polars_refusing(monkeypatch, code, writer)
    frame = pl.DataFrame({"a": [1, 2]})
    with pytest.raises(error) as caught:
        write_frame(frame, target, "parquet" if writer == "write_parquet" else "csv")
    assert caught.value.path == target and caught.value.errno == code
    assert words in str(caught.value).lower()
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_a_polars_error_without_an_errno_is_not_wrapped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import polars as pl

    from meta_evaluator.storage import write_parquet

    def bug(*args: object, **kwargs: object) -> None:
        raise pl.exceptions.ComputeError("some polars bug")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", bug)
    with pytest.raises(pl.exceptions.ComputeError):
        write_parquet(tmp_path / "x.parquet", pl.DataFrame({"a": [1]}))


@pytest.mark.parametrize(("code", "error", "words"), FAULTS, ids=FAULT_IDS)
def test_a_results_table_fault_exits_4_and_resumes(
    project: Path,
    entry: Main,
    monkeypatch: pytest.MonkeyPatch,
    code: int,
    error: type[StorageError],
    words: str,
) -> None:
    polars_refusing(monkeypatch, code, "write_parquet")
    done = entry("run", project)
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and words in done.stderr.lower()
    assert f"{JUDGE}.parquet" in done.stderr
    kept = run_rows(project)
    assert len(kept) == 40
    monkeypatch.undo()
    assert entry("run", project).returncode == 0
    assert run_rows(project) == kept  # not asked again
    assert len(list((project / "results").glob(f"*/{JUDGE}.parquet"))) == 1


@pytest.mark.parametrize("existed", [False, True], ids=["new", "existing"])
def test_init_on_a_full_disk_exits_4_and_leaves_nothing(
    tmp_path: Path, entry: Main, monkeypatch: pytest.MonkeyPatch, existed: bool
) -> None:
    project = tmp_path / "small" / "newp"
    if existed:
        project.mkdir(parents=True)
        (project / "notes.txt").write_text("mine", encoding="utf-8")
    polars_refusing(monkeypatch, errno.ENOSPC, "write_csv")
    done = entry("init", project, "--example", "refusal")
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "disk" in done.stderr.lower()
    if existed:
        assert sorted(p.name for p in project.iterdir()) == ["notes.txt"]
    else:
        assert list(tmp_path.iterdir()) == []


class NoFsync(FaultyOs):
    """The `os` module with `fsync` failing: the disk is full."""

    def fsync(self, fd: int) -> None:
        raise OSError(self.code, os.strerror(self.code))


def test_init_of_an_empty_project_on_a_full_disk_leaves_nothing(
    tmp_path: Path, entry: Main, monkeypatch: pytest.MonkeyPatch
) -> None:
    from meta_evaluator import storage

    monkeypatch.setattr(storage, "os", NoFsync(errno.ENOSPC))
    done = entry("init", tmp_path / "newp")
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert "main_state.json" in done.stderr and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


DEEP = 5000


@pytest.mark.parametrize("depth", [DEEP, 101])
def test_a_yaml_file_nested_too_deep_is_refused(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("metrics: " + "[" * depth + "]" * depth + "\n", encoding="utf-8")
    with pytest.raises(StateError) as caught:
        read_yaml(path)
    assert caught.value.path == path and "100" in str(caught.value)


def test_a_yaml_file_nested_deep_but_not_too_deep_is_read(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("[" * 99 + "]" * 99 + "\n", encoding="utf-8")
    value = read_yaml(path)
    for _ in range(98):
        value = value[0]
    assert value == []


@pytest.mark.parametrize("depth", [100000, 101])
def test_a_json_file_nested_too_deep_is_refused(tmp_path: Path, depth: int) -> None:
    from meta_evaluator.storage import read_json

    path = tmp_path / "deep.json"
    path.write_text('{"a": ' + "[" * depth + "]" * depth + "}", encoding="utf-8")
    with pytest.raises(StateError) as caught:
        read_json(path)
    assert caught.value.path == path and "100" in str(caught.value)


def test_cli_with_deeply_nested_files_exits_2(project: Path, entry: Main) -> None:
    metrics = project / "deep.yaml"
    metrics.write_text("metrics: " + "[" * DEEP + "]" * DEEP + "\n", encoding="utf-8")
    done = entry("score", project, "--metrics", metrics)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert str(metrics) in done.stderr and "Traceback" not in done.stderr
    (project / "main_state.json").write_text("[" * 100000 + "]" * 100000, encoding="utf-8")
    done = entry("status", project)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "main_state.json" in done.stderr and "Traceback" not in done.stderr


def test_judges_yaml_nested_too_deep_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "judges.yaml"
    path.write_text("judges: " + "[" * DEEP + "]" * DEEP + "\n", encoding="utf-8")
    evaluator = MetaEvaluator(tmp_path / "project")
    with pytest.raises(JudgeConfigError) as caught:
        evaluator.load_judges_from_yaml(path)
    assert caught.value.path == path and "100" in str(caught.value)


def test_a_new_project_refuses_a_run_folder_linked_outside(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "results").mkdir(parents=True)
    outside = tmp_path / "outside_run"
    outside.mkdir()
    (project / "results" / "run_x").symlink_to(outside, target_is_directory=True)
    evaluator = refusal_unsaved(project)  # no main_state.json yet to find the project by
    with pytest.raises(OutsideProjectError) as caught:
        evaluator.run_judges_async(run_id="run_x")
    assert str(project / "results" / "run_x") in str(caught.value)
    assert list(outside.iterdir()) == []


def test_polars_never_writes_the_parquet_file_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a real full disk, polars writing the footer to the file itself reports only "Invalid
    thrift: transport error", without errno; so it writes to memory and we write the file."""
    import io

    import polars as pl

    from meta_evaluator.storage import write_parquet

    targets: list[object] = []
    real = pl.DataFrame.write_parquet

    def spy(self: pl.DataFrame, file: object, **kwargs: object) -> None:
        targets.append(file)
        real(self, file, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pl.DataFrame, "write_parquet", spy)
    write_parquet(tmp_path / "x.parquet", pl.DataFrame({"a": [1, 2]}))
    assert [type(t) for t in targets] == [io.BytesIO]
    assert pl.read_parquet(tmp_path / "x.parquet")["a"].to_list() == [1, 2]


def test_a_results_table_cut_short_is_named(project: Path, entry: Main) -> None:
    assert entry("run", project).returncode == 0
    table = next((project / "results").glob(f"*/{JUDGE}.parquet"))
    table.write_bytes(table.read_bytes()[:100])
    done = entry("score", project)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert str(table) in done.stderr and "Traceback" not in done.stderr


def test_a_row_line_nested_past_any_row_is_a_typed_error(tmp_path: Path) -> None:
    """A hand-edited row file with a line nested 100,000 deep: StorageError, not RecursionError."""
    from meta_evaluator.errors import StorageError
    from meta_evaluator.judge.row_store import read_rows

    rows = tmp_path / "j.jsonl"
    rows.write_text('{"original_id": 1}\n{"original_id":' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(StorageError, match="line 2 is not a JSON row") as caught:
        read_rows(rows)
    assert caught.value.row_id == 2
