"""One `meta-evaluator run` per project at a time: the project's lock file.

Scheduled batches may start while the previous one still runs; the lock makes the second stop
with a clear message instead of both writing the same rows.

The lock-file primitives here (`create_lock_file`, `read_lock_owner`, `remove_lock_file`) are
also those of a judge's run lock (`results.runs.RunLock`). They never follow a symbolic link:
the lock's folder must be inside the project (`storage.check_inside_project`) and the lock file
itself is opened with `O_NOFOLLOW` where the platform has it, so a link in its place raises
`OutsideProjectError` instead of a lock taken (or waited on) somewhere else. Every `OSError`
becomes the typed error of `storage.os_error` naming the lock file (disk full, read-only, no
permission: exit 4 on the command line), and a lock file whose owner could not be written is
removed, so no empty lock is left for others to wait on.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import socket
import time
from pathlib import Path
from types import TracebackType

from meta_evaluator._util import shown
from meta_evaluator.errors import OutsideProjectError, ProjectError, StorageError
from meta_evaluator.storage import check_inside_project, os_error

__all__ = [
    "LOCK_FILE",
    "ProjectLock",
    "create_lock_file",
    "owner_alive",
    "read_lock_owner",
    "remove_lock_file",
]

logger = logging.getLogger(__name__)

LOCK_FILE = ".meta-evaluator.lock"


def _no_follow() -> int:
    # Read at each call, not at import: only POSIX has O_NOFOLLOW.
    return getattr(os, "O_NOFOLLOW", 0)


def _link_error(path: Path) -> OutsideProjectError:
    return OutsideProjectError(
        f"{path}: the lock file is a symbolic link; locks are never taken through one. Delete "
        "the link (no run is using it) and run again.",
        path=path,
    )


def create_lock_file(path: Path, owner: str, *, root: Path) -> bool:
    """Create the lock file `path` holding `owner`; False when it exists already.

    Args:
        path: The lock file.
        owner: What to write in it (`host pid`).
        root: The project folder the lock must be inside.

    Raises:
        OutsideProjectError: The lock, or a folder on its way, is a symbolic link (out of the
            project, or the lock file itself).
        DiskFullError, PermissionDeniedError, StorageError: The file system refused it; no
            lock file is left behind.
    """
    if path.is_symlink():  # dangling or not, out of the project or not: never followed
        raise _link_error(path)
    check_inside_project(path, root=root)  # the folders on its way
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | _no_follow(), 0o644)
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _link_error(path) from exc
        raise os_error(path, exc, "create the lock file") from exc
    try:
        data = owner.encode("utf-8")
        while data:
            data = data[os.write(fd, data) :]
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(path)  # an empty lock would make the next run wait for nobody
        raise os_error(path, exc, "write the lock file") from exc
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    return True


def read_lock_owner(path: Path) -> str | None:
    """The lock file's content (`host pid`, stripped), or None when there is no lock file.

    Raises:
        OutsideProjectError: The lock file is a symbolic link.
        PermissionDeniedError, StorageError: It cannot be read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | _no_follow())
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _link_error(path) from exc
        raise os_error(path, exc, "read the lock file") from exc
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 12):
            chunks.append(chunk)
    except OSError as exc:
        raise os_error(path, exc, "read the lock file") from exc
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    return b"".join(chunks).decode("utf-8", errors="replace").strip()


def remove_lock_file(path: Path) -> None:
    """Delete the lock file (if there).

    Raises:
        PermissionDeniedError, StorageError: The file system refused it.
    """
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise os_error(path, exc, "remove the lock file") from exc


def owner_alive(owner: str) -> bool:
    """Whether `host pid` names a live process: on another host, assume it is."""
    host, _, pid = owner.rpartition(" ")
    if host != socket.gethostname():
        return bool(owner)
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


class ProjectLock:
    """One `meta-evaluator run` per project at a time: `<project>/.meta-evaluator.lock`.

    The file is created with O_CREAT | O_EXCL and holds the owner's host and process id. A lock
    left by a process that is gone (on this host) is taken over; one held by a live process, or
    by a process on another host (which cannot be checked from here), raises `ProjectError`.
    Use it as a context manager: the lock is released however the block ends.
    """

    def __init__(self, project_dir: Path) -> None:
        self.root = project_dir
        self.path = project_dir / LOCK_FILE
        self._me = f"{socket.gethostname()} {os.getpid()}"
        self._held = False

    def holder(self) -> str | None:
        """Who holds the lock now (`host H, pid P`), or None when nobody live does."""
        owner = self._owner()
        if owner is None or not owner_alive(owner):
            return None
        return _describe(owner)

    def _owner(self) -> str | None:
        """The lock file's `host pid`, or None without a lock file.

        An empty file is being written by a process that has just created it: wait a moment
        for its content. One still empty after that was left by a process killed in between.
        """
        for _ in range(20):
            owner = read_lock_owner(self.path)
            if owner is None or owner:
                return owner
            time.sleep(0.05)
        return ""

    def acquire(self) -> None:
        """Take the lock, or raise ProjectError naming the process that holds it.

        Raises:
            ProjectError: A live process holds the lock.
            OutsideProjectError: The lock file is a symbolic link.
            DiskFullError, PermissionDeniedError, StorageError: The file system refused it.
        """
        for _ in range(3):
            if create_lock_file(self.path, self._me, root=self.root):
                self._held = True
                return
            owner = self._owner()
            if owner is None:  # released meanwhile
                continue
            if owner_alive(owner):
                raise ProjectError(
                    f"{self.path}: another `meta-evaluator run` of this project is going on "
                    f"({_describe(owner)}); wait for it to finish. If that process is gone "
                    "(for instance on another machine), delete the lock file.",
                    path=self.path,
                )
            self._take_over(owner)
        raise ProjectError(
            f"{self.path}: could not take the project's lock; try again.", path=self.path
        )

    def _take_over(self, owner: str) -> None:
        """Remove the lock file of a dead `owner`, and only that one.

        The file is first moved aside atomically, so of several processes taking over at once
        only one moves it; should a live process's new lock have been moved instead, it is put
        back (`os.link` does not overwrite).
        """
        aside = self.path.with_name(f"{LOCK_FILE}.{os.getpid()}.stale")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise os_error(self.path, exc, "take over the lock file") from exc
        try:
            if read_lock_owner(aside) != owner:
                with contextlib.suppress(FileExistsError):
                    os.link(aside, self.path)
        except OSError as exc:
            if isinstance(exc, StorageError):
                raise
            raise os_error(self.path, exc, "put back the lock file") from exc
        finally:
            with contextlib.suppress(OSError):
                os.unlink(aside)

    def release(self) -> None:
        """Give the lock back (if held, and still ours).

        Raises:
            PermissionDeniedError, StorageError: The file system refused it.
        """
        if not self._held:
            return
        self._held = False
        if read_lock_owner(self.path) == self._me:
            remove_lock_file(self.path)

    def __enter__(self) -> ProjectLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            self.release()
        except StorageError as error:
            if exc is None:
                raise
            # The block's own error says what went wrong; a lock left by this (then dead)
            # process is taken over by the next run.
            logger.warning("%s", error)


def _describe(owner: str) -> str:
    host, _, pid = owner.rpartition(" ")
    return f"host {host}, pid {pid}" if host else f"lock content {shown(owner)}"
