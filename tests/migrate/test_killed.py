"""A migration killed at any rename loses none of 0.3.3's files: the next `migrate` (or its
undo, itself killed at any rename) leaves either the intact 0.3.3 project or a migrated one,
with every 0.3.3 file, byte for byte, in `migrated-from-0.3.3/`.

The kills are real: a process doing the swap (or the undo) ends with `os._exit` right after
its n-th rename or replace, for every n in turn, with no `finally` or `except` running.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.errors import ProjectError, StateError
from meta_evaluator.migrate import BACKUP, _swap, migrate_project
from meta_evaluator.migrate._build import build_project
from tests.conftest import Main, snapshot

FIXTURE = Path(__file__).parent / "v033_project"
EXTRA = {"migration.json": "{}\n", "judges-not-migrated.yaml": "judges: []\n"}

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="kills by os.fork/os._exit")

# Imports the package once, then for n = 1, 2 ... forks a process that runs the swap (or the
# undo) on a fresh copy of the template and exits with 9 right after its n-th rename or
# replace; a copy whose process ends by itself (fewer renames than n) is the last.
KILLER = textwrap.dedent(
    """
    import json, os, shutil, sys
    from pathlib import Path
    from meta_evaluator.migrate import _swap

    template, out, phase, extra = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    only = int(sys.argv[5]) if len(sys.argv) > 5 else None

    def kill_after(n):
        done = 0
        def wrap(real):
            def move(source, target, **kwargs):
                nonlocal done
                real(source, target, **kwargs)
                done += 1
                if done == n:
                    os._exit(9)
            return move
        os.rename, os.replace = wrap(os.rename), wrap(os.replace)

    n = only or 1
    while True:
        folder = out / str(n)
        shutil.copytree(template, folder, symlinks=True)
        pid = os.fork()
        if pid == 0:
            kill_after(n)
            if phase == "swap":
                _swap.put_in_place(folder, json.loads(extra))
            else:
                _swap.recover(folder)
            os._exit(0)
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        print(n, code, flush=True)
        if code != 9 or only:
            break
        n += 1
    """
)


def kill(template: Path, out: Path, phase: str, only: int | None = None) -> dict[int, Path]:
    """The copies of `template` left by `phase` ("swap" or "undo") killed after each rename
    (or after rename `only`), by position; the last one ran to its end."""
    out.mkdir()
    args = [str(template), str(out), phase, json.dumps(EXTRA), *([str(only)] if only else [])]
    done = subprocess.run(
        [sys.executable, "-c", KILLER, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and not done.stderr, done.stderr
    codes = dict(line.split() for line in done.stdout.splitlines())
    assert all(code == "9" for code in list(codes.values())[:-1]), codes
    return {int(n): out / n for n in codes}


def digests(folder: Path) -> dict[str, str]:
    return {name: hashlib.sha256(data).hexdigest() for name, data in snapshot(folder).items()}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 0.3.3 project whose new one is built (in the working folder), as the swap finds it."""
    folder = tmp_path_factory.mktemp("built") / "project"
    shutil.copytree(FIXTURE, folder)
    build_project(folder, folder / _swap.STAGING / "new")
    return folder


def assert_033_or_migrated(folder: Path) -> str:
    """After `migrate` again: migrated, with every 0.3.3 file intact in the backup folder (or,
    for a swap that had committed, said to be migrated already). Returns which."""
    try:
        migrate_project(folder)
        outcome = "migrated again"
    except ProjectError as exc:
        assert "is a project of this version already" in exc.message, exc.message
        outcome = "had committed"
    assert not (folder / _swap.STAGING).exists()
    kept = digests(folder / BACKUP)
    for name, digest in digests(FIXTURE).items():
        assert kept.get(name) == digest, f"{folder}: 0.3.3's {name} is lost or changed"
    assert MetaEvaluator(folder, load=True).load_all_judge_results()
    return outcome


def test_a_swap_killed_after_any_rename_loses_nothing(template: Path, tmp_path: Path) -> None:
    killed = kill(template, tmp_path / "swap", "swap")
    assert len(killed) >= 12  # prepared files, journal, 8 renames, the commit, and the end
    outcomes = []
    for n, folder in killed.items():
        recovered = _swap.recover(folder)
        if not _swap._ours(folder / "main_state.json"):  # before the commit: undone exactly
            assert recovered is not None, n
            assert snapshot(folder) == snapshot(FIXTURE), f"not undone after rename {n}"
        outcomes.append(assert_033_or_migrated(folder))
    assert outcomes[-2:] == ["had committed"] * 2  # killed after the commit, and not killed
    assert outcomes[0] == "migrated again"


def test_an_undo_killed_after_any_rename_loses_nothing(template: Path, tmp_path: Path) -> None:
    """The worst case to undo: every folder renamed, the commit not made; the undo is killed
    after each of its renames, then `migrate` runs again."""
    swapped = kill(template, tmp_path / "swap", "swap")
    committed = [n for n, f in swapped.items() if _swap._ours(f / "main_state.json")]
    last = swapped[min(committed) - 1]  # killed after its last rename before the commit
    assert (last / BACKUP / "data").is_dir()  # 0.3.3's aside, the new ones in place
    assert not (last / _swap.STAGING / "new" / "data").exists()
    undone = kill(last, tmp_path / "undo", "undo")
    assert len(undone) >= 8
    for n, folder in undone.items():
        assert _swap.recover(folder) is not None or n == max(undone)
        assert snapshot(folder) == snapshot(FIXTURE), f"not undone after undo's rename {n}"
        assert assert_033_or_migrated(folder) == "migrated again"


def test_a_dry_run_keeps_a_stopped_migration_to_undo(
    template: Path, tmp_path: Path, entry: Main
) -> None:
    """`--dry-run` after a killed migration removes nothing (the journal least of all) and says
    to run `migrate` without it; that one undoes the stopped migration and migrates."""
    (folder,) = kill(template, tmp_path / "swap", "swap", only=6).values()
    before = snapshot(folder)
    assert (folder / _swap.STAGING / "journal.json").is_file()
    with pytest.raises(StateError, match="meta-evaluator migrate"):  # not loaded half-moved
        MetaEvaluator(folder, load=True)
    with pytest.raises(ProjectError, match="without --dry-run") as raised:
        migrate_project(folder, dry_run=True)
    assert "stopped half-way" in raised.value.message
    dry = entry("migrate", folder, "--dry-run")
    assert dry.returncode == 2 and "without --dry-run" in dry.stderr
    assert "Traceback" not in dry.stderr
    assert snapshot(folder) == before
    done = entry("migrate", folder)
    assert done.returncode == 0, done.stderr
    assert "it is undone, and the migration starts again" in done.stdout
    assert assert_033_or_migrated(folder) == "had committed"
