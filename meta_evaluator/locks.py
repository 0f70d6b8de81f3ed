"""Pid-file locks: one process at a time holds a claim, and a claim left by a dead one is freed.

`PidLock` is the one pid-file lock. It is used as the project's lock (`ProjectLock`: one
`meta-evaluator run` per project at a time, so a scheduled batch that starts while the last one
still runs stops with a clear message) and as a judge's run lock (`judge.run_files.RunLock`: one
writer per judge's rows in a run).

The lock file is created with `O_CREAT | O_EXCL` and then holds its owner's `host pid`. Between
the two steps it is empty for a moment: an empty lock file counts as being taken, never as
abandoned. Another process waits for its content; only a file that stays empty for
`PidLock.stale_after` seconds (by its modification time, or watched that long) was left by a
process killed in between, and is taken over. A taker reads its own lock back after writing it,
so a lock moved aside by a process that judged it stale is never held by two. A lock whose owner
is a process gone on this host is taken over; one held on another host (which cannot be checked
from here) is respected until it is deleted.

The lock files never follow a symbolic link: the lock's folder must be inside the project
(`storage.check_inside_project`) and the file itself is opened with `O_NOFOLLOW` where the
platform has it, so a link in its place raises `OutsideProjectError` instead of a lock taken (or
waited on) somewhere else. Every `OSError` becomes the typed error of `storage.os_error` naming
the lock file (disk full, read-only, no permission: exit 4 on the command line), and a lock file
whose owner could not be written is removed, so no empty lock is left for others to wait on.

`file_lock` is the other kind: an operating-system lock (`flock`) that blocks until it is free
and is released by the system when its process dies, for short critical sections such as the
annotation page's saves (`annotate.store`), which wait rather than refuse.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Self

from meta_evaluator._util import shown
from meta_evaluator.errors import (
    MetaEvaluatorError,
    OutsideProjectError,
    ProjectError,
    StorageError,
)
from meta_evaluator.storage import check_inside_project, os_error

__all__ = [
    "LOCK_FILE",
    "PidLock",
    "ProjectLock",
    "create_lock_file",
    "describe_owner",
    "file_lock",
    "owner_alive",
    "read_lock_owner",
    "remove_lock_file",
]

logger = logging.getLogger(__name__)

#: The project's lock file, in the project folder.
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


def describe_owner(owner: str) -> str:
    """`host H, pid P` for a lock file's `host pid`; its content quoted when it is not that."""
    host, _, pid = owner.rpartition(" ")
    return f"host {host}, pid {pid}" if host else f"lock content {shown(owner)}"


def _age(path: Path) -> float | None:
    """Seconds since the lock file was last modified, or None when it is gone."""
    try:
        return time.time() - path.stat(follow_symlinks=False).st_mtime
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise os_error(path, exc, "read the lock file") from exc


class PidLock:
    """An exclusive claim on `path` by this process, as the module docstring describes.

    Use it as a context manager (the lock is released however the block ends), or call
    `acquire` and `release`. Subclasses word the errors: `_busy` (a live process holds it) and
    `_not_taken` (it changed hands too often to be taken).
    """

    #: Seconds a lock file may stay empty (its owner not yet written) before it counts as left
    #: by a process killed between creating and writing it.
    stale_after: float = 2.0
    #: Seconds between two reads of a lock file that is being written.
    poll_interval: float = 0.02

    def __init__(self, path: Path, *, root: Path) -> None:
        """A lock on the file `path`, which must be inside the project folder `root`."""
        self.path = path
        self.root = root
        self._me = f"{socket.gethostname()} {os.getpid()}"
        self._held = False

    def holder(self) -> str | None:
        """Who holds the lock now (`host H, pid P`), or None when nobody live does."""
        owner = self._owner()
        if owner is None or not owner_alive(owner):
            return None
        return describe_owner(owner)

    def acquire(self) -> None:
        """Take the lock, or raise the error of `_busy` naming the process that holds it.

        Raises:
            ProjectError: A live process holds the lock (a subclass of it, as `_busy` says).
            OutsideProjectError: The lock file is a symbolic link.
            DiskFullError, PermissionDeniedError, StorageError: The file system refused it.
        """
        for _ in range(3):
            if create_lock_file(self.path, self._me, root=self.root):
                if read_lock_owner(self.path) == self._me:
                    self._held = True
                    return
                continue  # moved aside by a process that found it empty too long: try again
            owner = self._owner()
            if owner is None:  # released meanwhile
                continue
            if owner_alive(owner):
                raise self._busy(owner)
            self._take_over(owner)
        raise self._not_taken()

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

    def _busy(self, owner: str) -> MetaEvaluatorError:
        """The error of a lock held by the live process `owner`."""
        return ProjectError(
            f"{self.path}: locked by {describe_owner(owner)}; wait for it to finish. If that "
            "process is gone (for instance on another machine), delete the lock file.",
            path=self.path,
        )

    def _not_taken(self) -> MetaEvaluatorError:
        """The error of a lock that changed hands each time it was tried."""
        return ProjectError(f"{self.path}: could not take the lock; try again.", path=self.path)

    def _owner(self) -> str | None:
        """The lock file's `host pid`; None without a lock file; "" for one left empty.

        An empty file is being written by a process that has just created it: wait for its
        content. It counts as left empty (by a process killed in between) only once it has not
        changed for `stale_after` seconds, by its modification time or by watching it here.
        """
        watched = time.monotonic()
        while True:
            owner = read_lock_owner(self.path)
            if owner != "":
                return owner
            age = _age(self.path)
            if age is None:  # released meanwhile
                continue
            if max(age, time.monotonic() - watched) >= self.stale_after:
                return ""
            time.sleep(self.poll_interval)

    def _take_over(self, owner: str) -> None:
        """Remove the lock file of a dead `owner`, and only that one.

        The file is first moved aside atomically, so of several processes taking over at once
        only one moves it; should a live process's new lock have been moved instead, it is put
        back (`os.link` does not overwrite).
        """
        aside = self.path.with_name(f"{self.path.name}.{os.getpid()}.stale")
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

    def __enter__(self) -> Self:
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
            # process is taken over by the next lock.
            logger.warning("%s", error)


class ProjectLock(PidLock):
    """One command changing a project at a time: `<project>/.meta-evaluator.lock`.

    Held by `run` (and `all`), the imports, `add-data`/`add-task`/`add-judges` and `migrate`.
    A short command may `wait` a few seconds for another one to finish instead of refusing at
    once: imports started together in a script then all land, one after the other.
    """

    def __init__(self, project_dir: Path, *, wait: float = 0.0) -> None:
        """The lock of the project folder `project_dir`; `wait`: seconds to wait for it."""
        super().__init__(project_dir / LOCK_FILE, root=project_dir)
        self.wait = wait

    def acquire(self) -> None:
        """Take the lock, waiting up to `wait` seconds while a live process holds it.

        Raises:
            ProjectError: Still held after `wait` seconds (naming the process that holds it).
            OutsideProjectError: The lock file is a symbolic link.
            DiskFullError, PermissionDeniedError, StorageError: The file system refused it.
        """
        deadline = time.monotonic() + self.wait
        while True:
            try:
                super().acquire()
                return
            except ProjectError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(min(0.1, max(deadline - time.monotonic(), 0.0)))

    def _busy(self, owner: str) -> MetaEvaluatorError:
        waited = f" (waited {self.wait:g} s)" if self.wait else ""
        return ProjectError(
            f"{self.path}: another meta-evaluator command is changing this project (a run, an "
            f"import, add-data, add-task, add-judges or migrate; {describe_owner(owner)})"
            f"{waited}; wait for it to finish. If that process is gone (for instance on "
            "another machine), delete the lock file.",
            path=self.path,
        )

    def _not_taken(self) -> MetaEvaluatorError:
        return ProjectError(
            f"{self.path}: could not take the project's lock; try again.", path=self.path
        )


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file `path` (created if missing) across processes.

    Blocks until the lock is free. POSIX: `fcntl.flock` on a descriptor opened for writing
    (which NFS needs); the system releases it when the process dies, so a killed server leaves
    no stale lock, only the empty file, which is reused. Windows: `msvcrt.locking`, whose
    `LK_LOCK` gives up after about 10 s with `OSError` (EDEADLOCK); it is called again until
    it succeeds (the Windows branch is not run by the test suite).

    Raises:
        DiskFullError, PermissionDeniedError, StorageError: The lock file cannot be opened
            or locked.
    """
    try:
        handle = path.open("a+b")
    except OSError as exc:
        raise os_error(path, exc) from exc
    with handle:
        if sys.platform == "win32":
            import msvcrt

            handle.seek(0)
            while True:
                try:
                    msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
                    break
                except OSError as exc:
                    if exc.errno != errno.EDEADLOCK:
                        raise os_error(path, exc) from exc
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            except OSError as exc:
                raise os_error(path, exc) from exc
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
