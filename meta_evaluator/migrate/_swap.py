"""Putting a built project in place of a 0.3.3 one, so that nothing is left half-written.

The new project is built in `<folder>/.meta-evaluator-migrating/new/` first. Then, one rename at
a time (each atomic on one file system), the 0.3.3 folders go into `<folder>/migrated-from-0.3.3/`
and the new ones take their place; 0.3.3's `main_state.json` is copied there, and the new one
replaces it last, in one `os.replace`: until that moment the folder is a 0.3.3 project, after
it one of ours. A journal beside the new project lists the renames done; a migration that was
stopped (killed, power cut) is undone from it by the next `migrate`, which then starts again.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from meta_evaluator.storage import atomic_write_text, os_error

__all__ = ["BACKUP", "STAGING", "put_in_place", "recover"]

STAGING = ".meta-evaluator-migrating"
"""The folder, inside the project, where the new project is built and the journal kept."""
BACKUP = "migrated-from-0.3.3"
"""The folder, inside the project, that keeps 0.3.3's files."""
MOVED = ("data", "results", "annotations", "scores")
"""The folders of 0.3.3's project that go aside (anything else in the folder stays)."""
STATE_FILE = "main_state.json"


def _journal(staging: Path) -> Path:
    return staging / "journal.json"


def _write_journal(staging: Path, done: list[tuple[str, str]], committed: bool) -> None:
    entry = {"moves": done, "committed": committed}
    atomic_write_text(_journal(staging), json.dumps(entry, indent=1))


def put_in_place(folder: Path, extra: dict[str, str]) -> Path:
    """Move 0.3.3's files aside and the new project (built in `STAGING/new`) into `folder`.

    `extra` names files (name -> text) written into the backup folder first (the report).

    Returns:
        The backup folder.

    Raises:
        StorageError: A rename failed; every rename done is undone first.
    """
    staging, new, backup = folder / STAGING, folder / STAGING / "new", folder / BACKUP
    done: list[tuple[str, str]] = []
    _write_journal(staging, done, committed=False)
    try:
        backup.mkdir()
        done.append(("", str(backup)))  # made: undone by removing it
        _write_journal(staging, done, committed=False)
        for name, text in extra.items():
            atomic_write_text(backup / name, text)
        moves = [(folder / n, backup / n) for n in MOVED if (folder / n).exists()]
        moves += [(new / n, folder / n) for n in MOVED if (new / n).exists()]
        for source, target in moves:
            os.rename(source, target)
            done.append((str(source), str(target)))
            _write_journal(staging, done, committed=False)
        shutil.copy2(folder / STATE_FILE, backup / STATE_FILE)
        os.replace(new / STATE_FILE, folder / STATE_FILE)  # the commit: one of ours from now
    except BaseException as exc:
        _undo(done)
        shutil.rmtree(staging, ignore_errors=True)  # undone: the folder is as it was
        if isinstance(exc, OSError):
            raise os_error(folder, exc, "migrate") from exc
        raise
    _write_journal(staging, done, committed=True)
    shutil.rmtree(staging, ignore_errors=True)
    return backup


def recover(folder: Path) -> str | None:
    """Finish or undo a migration of `folder` that was stopped; say which, or None if none.

    Raises:
        StorageError: A rename back failed (the journal stays, to try again).
    """
    staging = folder / STAGING
    if not staging.exists():
        return None
    journal = _journal(staging)
    entry: dict[str, Any] = {"moves": [], "committed": False}
    if journal.is_file():
        entry = json.loads(journal.read_text(encoding="utf-8"))
    if entry.get("committed") or _ours(folder / STATE_FILE):  # stopped after the commit
        shutil.rmtree(staging, ignore_errors=True)
        return "an earlier migration had finished; its working folder is removed"
    try:
        _undo([(str(move[0]), str(move[1])) for move in entry.get("moves", [])])
    except OSError as exc:
        raise os_error(folder, exc, "undo the stopped migration in") from exc
    shutil.rmtree(staging, ignore_errors=True)
    return "an earlier migration was stopped half-way; it is undone, and the migration starts again"


def _ours(state_file: Path) -> bool:
    """Whether `state_file` is a state of ours (the migration's commit happened)."""
    try:
        return "schema_version" in json.loads(state_file.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return False


def _undo(done: list[tuple[str, str]]) -> None:
    """Rename back, in reverse order, what `done` lists; remove the folders it made."""
    for source, target in reversed(done):
        if not source:  # a folder made: removed once its contents went back
            shutil.rmtree(target, ignore_errors=True)
        elif Path(target).exists() and not Path(source).exists():
            os.rename(target, source)
