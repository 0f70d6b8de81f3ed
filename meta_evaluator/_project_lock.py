"""One `meta-evaluator run` per project at a time: the project's lock file.

Scheduled batches may start while the previous one still runs; the lock makes the second stop
with a clear message instead of both writing the same rows.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from pathlib import Path
from types import TracebackType

from meta_evaluator._util import shown
from meta_evaluator.errors import ProjectError

__all__ = ["LOCK_FILE", "ProjectLock"]

LOCK_FILE = ".meta-evaluator.lock"


class ProjectLock:
    """One `meta-evaluator run` per project at a time: `<project>/.meta-evaluator.lock`.

    The file is created with O_CREAT | O_EXCL and holds the owner's host and process id. A lock
    left by a process that is gone (on this host) is taken over; one held by a live process, or
    by a process on another host (which cannot be checked from here), raises `ProjectError`.
    Use it as a context manager: the lock is released however the block ends.
    """

    def __init__(self, project_dir: Path) -> None:
        self.path = project_dir / LOCK_FILE
        self._me = f"{socket.gethostname()} {os.getpid()}"
        self._held = False

    def holder(self) -> str | None:
        """Who holds the lock now (`host H, pid P`), or None when nobody live does."""
        from meta_evaluator.results.runs import _alive

        owner = self._owner()
        if owner is None or not _alive(owner):
            return None
        return _describe(owner)

    def _owner(self) -> str | None:
        """The lock file's `host pid`, or None without a lock file.

        An empty file is being written by a process that has just created it: wait a moment
        for its content. One still empty after that was left by a process killed in between.
        """
        for _ in range(20):
            try:
                owner = self.path.read_text(encoding="utf-8", errors="replace").strip()
            except FileNotFoundError:
                return None
            if owner:
                return owner
            time.sleep(0.05)
        return ""

    def acquire(self) -> None:
        """Take the lock, or raise ProjectError naming the process that holds it."""
        from meta_evaluator.results.runs import _alive

        for _ in range(3):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                owner = self._owner()
                if owner is None:  # released meanwhile
                    continue
                if _alive(owner):
                    raise ProjectError(
                        f"{self.path}: another `meta-evaluator run` of this project is going on "
                        f"({_describe(owner)}); wait for it to finish. If that process is gone "
                        "(for instance on another machine), delete the lock file.",
                        path=self.path,
                    ) from None
                self._take_over(owner)
                continue
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(self._me)
            self._held = True
            return
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
        try:
            if aside.read_text(encoding="utf-8", errors="replace").strip() != owner:
                with contextlib.suppress(FileExistsError):
                    os.link(aside, self.path)
        finally:
            aside.unlink(missing_ok=True)

    def release(self) -> None:
        """Give the lock back (if held, and still ours)."""
        if not self._held:
            return
        self._held = False
        with contextlib.suppress(FileNotFoundError):
            if self.path.read_text(encoding="utf-8", errors="replace").strip() == self._me:
                self.path.unlink()

    def __enter__(self) -> ProjectLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def _describe(owner: str) -> str:
    host, _, pid = owner.rpartition(" ")
    return f"host {host}, pid {pid}" if host else f"lock content {shown(owner)}"
