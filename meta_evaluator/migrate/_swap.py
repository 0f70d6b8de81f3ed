"""Putting a built project in place of a 0.3.3 one, so that a kill at any moment loses nothing.

The new project is built in `<folder>/.meta-evaluator-migrating/new/`, and the backup folder
(the report, a copy of 0.3.3's `main_state.json`) in `.meta-evaluator-migrating/backup/`, each
file written whole and fsynced. Then a journal listing every rename to come is written (and
fsynced, with its folder) before the first one: the backup folder moves to
`<folder>/migrated-from-0.3.3/`, 0.3.3's folders into it, the new ones into their place (each
rename atomic on one file system). The new `main_state.json` replaces the old one last, in one
`os.replace`: until that moment the folder is a 0.3.3 project, after it one of ours.

A migration stopped before its commit (a failed rename, a kill, a power cut) is undone from the
journal by what exists, so that undoing twice, or undoing a rename that never happened, is
harmless: a rename is reversed only when its target exists and its source does not. The backup
folder is never removed whole: the files the migration put there are removed (the state copy
only while it equals the `main_state.json` in place), then the folder only once empty. The
journal is deleted before the rest of the working folder, so that no undo runs once
`new/` starts to go (an undo then could take 0.3.3's `data/` for the new one).
"""

from __future__ import annotations

import contextlib
import filecmp
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from meta_evaluator.errors import StateError, StorageError
from meta_evaluator.storage import atomic_write_bytes, atomic_write_text, fsync_folder, os_error

__all__ = ["BACKUP", "STAGING", "has_journal", "put_in_place", "recover"]

STAGING = ".meta-evaluator-migrating"
"""The folder, inside the project, where the new project is built and the journal kept."""
BACKUP = "migrated-from-0.3.3"
"""The folder, inside the project, that keeps 0.3.3's files."""
MOVED = ("data", "results", "annotations", "scores")
"""The folders of 0.3.3's project that go aside (anything else in the folder stays)."""
ADDED = ("metrics.yaml",)
"""Files the new project may bring that 0.3.3's has not: moved in only where none is."""
STATE_FILE = "main_state.json"
JOURNAL = "journal.json"
PREPARED = f"{STAGING}/backup"
"""Where the backup folder is filled before it moves into place (relative to the project)."""


@dataclass(frozen=True)
class Journal:
    """The renames of a migration, written before the first of them."""

    moves: tuple[tuple[str, str], ...]
    """(source, target), POSIX paths relative to the project folder, in the order made."""
    prepared: tuple[str, ...]
    """The files the migration put in the backup folder (the report, 0.3.3's state copy)."""

    def to_json(self) -> str:
        """The journal as written to `JOURNAL`."""
        entry = {"moves": [list(move) for move in self.moves], "prepared": list(self.prepared)}
        return json.dumps(entry, indent=1)


def has_journal(folder: Path) -> bool:
    """Whether a migration of `folder` stopped after writing its journal (it may have renamed)."""
    return (folder / STAGING / JOURNAL).is_file()


def put_in_place(folder: Path, extra: dict[str, str]) -> Path:
    """Move 0.3.3's files aside and the new project (built in `STAGING/new`) into `folder`.

    `extra` names files (name -> text) put in the backup folder besides 0.3.3's (the report).

    Returns:
        The backup folder.

    Raises:
        StorageError: A write or a rename failed; every rename done is undone first (if the
            undo fails too, the journal stays for the next `migrate` to finish it).
    """
    staging, new = folder / STAGING, folder / STAGING / "new"
    prepared = folder / PREPARED
    try:  # nothing of 0.3.3's is touched yet: a failure or a kill here leaves no journal
        prepared.mkdir()
        for name, text in extra.items():
            atomic_write_text(prepared / name, text)
        atomic_write_bytes(prepared / STATE_FILE, (folder / STATE_FILE).read_bytes())
    except OSError as exc:
        raise os_error(folder, exc, "migrate") from exc
    journal = _plan(folder, extra)
    atomic_write_text(staging / JOURNAL, journal.to_json())  # fsynced, with its folder
    try:
        for source, target in journal.moves:
            os.rename(folder / source, folder / target)
        for touched in (folder, folder / BACKUP, new):
            fsync_folder(touched)  # every rename on disk before the commit can be
        os.replace(new / STATE_FILE, folder / STATE_FILE)  # the commit: one of ours from now
    except BaseException as exc:
        if _ours(folder / STATE_FILE):  # stopped after the commit: nothing to undo
            raise
        try:
            _undo(folder, journal)
            _remove_staging(staging)  # undone: the folder is as it was
        except OSError as undo_exc:  # the journal stays: the next `migrate` undoes the rest
            raise _undo_failed(folder, undo_exc) from exc
        if isinstance(exc, OSError):
            raise os_error(folder, exc, "migrate") from exc
        raise
    fsync_folder(folder)
    with contextlib.suppress(OSError):  # migrated; the next `migrate` removes what stays
        _remove_staging(staging)
    return folder / BACKUP


def _plan(folder: Path, extra: dict[str, str]) -> Journal:
    """Every rename, in order: the backup folder in place, 0.3.3's aside, the new ones in."""
    new = PurePosixPath(STAGING, "new")
    moves = [(PREPARED, BACKUP)]
    moves += [(n, f"{BACKUP}/{n}") for n in MOVED if os.path.lexists(folder / n)]
    moves += [(str(new / n), n) for n in MOVED if os.path.lexists(folder / new / n)]
    moves += [
        (str(new / n), n)
        for n in ADDED
        if os.path.lexists(folder / new / n) and not os.path.lexists(folder / n)
    ]
    return Journal(tuple(moves), (*extra, STATE_FILE))


def recover(folder: Path) -> str | None:
    """Finish or undo a migration of `folder` that was stopped; say which, or None if none.

    Raises:
        StateError: The journal does not read as a journal (it is kept; it names what to do).
        StorageError: A rename back failed (the journal stays, to try again).
    """
    staging = folder / STAGING
    if not staging.exists():
        return None
    if _ours(folder / STATE_FILE):  # stopped after the commit
        with contextlib.suppress(OSError):  # nothing left to undo: what stays is harmless
            _remove_staging(staging)
        return "an earlier migration had finished; its working folder is removed"
    journal = _read_journal(staging / JOURNAL)
    try:
        if journal is None:  # stopped while building: nothing of 0.3.3's was moved
            _remove_staging(staging)
            return (
                "an earlier migration was stopped before it moved anything; its working folder "
                "is removed"
            )
        _undo(folder, journal)
        _remove_staging(staging)
    except OSError as exc:
        raise _undo_failed(folder, exc) from exc
    return "an earlier migration was stopped half-way; it is undone, and the migration starts again"


def _undo_failed(folder: Path, exc: OSError) -> StorageError:
    """The error for an undo that stopped on `exc`; its journal stays, to finish it later."""
    error = os_error(folder, exc, "undo the migration in")
    told = StorageError(
        f"{error.message} Nothing is lost: the journal {folder / STAGING / JOURNAL} lists the "
        f"renames made; once the cause is fixed, run `meta-evaluator migrate {folder}` again, "
        "which finishes undoing them, then migrates.",
        path=folder,
    )
    told.errno = error.errno
    return told


def _read_journal(path: Path) -> Journal | None:
    """The journal at `path`, or None if there is none."""
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        moves = tuple(
            (str(source), str(target))
            for source, target in entry["moves"]
            if source  # an earlier version recorded the backup folder it made as ("", path)
        )
        prepared = tuple(str(name) for name in entry.get("prepared", ()))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise StateError(
            f"{path}: cannot be read as the journal of a stopped migration ({exc}); 0.3.3's "
            f"folders are in {path.parent.parent / BACKUP} or still in place: move them back "
            f"into {path.parent.parent}, then remove {path.parent} and migrate again.",
            path=path,
        ) from exc
    return Journal(moves, prepared)


def _ours(state_file: Path) -> bool:
    """Whether `state_file` is a state of ours (the migration's commit happened)."""
    try:
        return "schema_version" in json.loads(state_file.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return False


def _undo(folder: Path, journal: Journal) -> None:
    """Reverse, last first, the journal's renames that happened; empty the backup folder."""
    for source, target in reversed(journal.moves):
        if not os.path.lexists(folder / target) or os.path.lexists(folder / source):
            continue  # not made (or already undone)
        if source == PREPARED:
            _empty_backup(folder, journal.prepared)
        else:
            os.rename(folder / target, folder / source)


def _empty_backup(folder: Path, prepared: tuple[str, ...]) -> None:
    """Remove the files the migration put in the backup folder, then the folder if empty.

    The copy of 0.3.3's state goes only while it equals the state in place; anything else in
    the folder stays, and so does the folder (the next `migrate` says it is in the way).
    """
    backup = folder / BACKUP
    for name in prepared:
        path = backup / name
        if name == STATE_FILE and not _same_file(path, folder / STATE_FILE):
            continue
        path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        backup.rmdir()


def _same_file(one: Path, other: Path) -> bool:
    try:
        return filecmp.cmp(one, other, shallow=False)
    except OSError:
        return False


def _remove_staging(staging: Path) -> None:
    """Remove the working folder, its journal first: no undo may run once `new/` goes.

    Raises:
        OSError: The journal could not be removed (the folder is left whole).
    """
    (staging / JOURNAL).unlink(missing_ok=True)
    fsync_folder(staging)
    shutil.rmtree(staging, ignore_errors=True)
