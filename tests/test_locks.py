"""The pid-file lock (`meta_evaluator.locks`) as the project's lock and as a judge's run lock.

The race these tests pin: a lock file is empty between its creation (`O_CREAT | O_EXCL`) and
the write of its owner. An empty lock is being taken, not abandoned: it is waited for, and only
one that stays empty past `PidLock.stale_after` is taken over. Symbolic links, typed OS errors
and the take-over of a dead owner's lock are tested in tests/test_files_and_folders.py and
tests/test_cli_run.py.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from meta_evaluator.errors import ProjectError, StateError
from meta_evaluator.judge.run_files import RunFiles, RunLock
from meta_evaluator.locks import LOCK_FILE, PidLock, ProjectLock

ME = f"{socket.gethostname()} {os.getpid()}"

Make = Callable[[Path], PidLock]


def project_lock(root: Path) -> PidLock:
    return ProjectLock(root)


def run_lock(root: Path) -> PidLock:
    return RunLock(RunFiles(root / "results", "run_1", "judge_a"))


LOCKS = pytest.mark.parametrize(
    ("make", "busy"),
    [(project_lock, ProjectError), (run_lock, StateError)],
    ids=["project", "run"],
)


def empty_lock(lock: PidLock, age: float = 0.0) -> None:
    """Make `lock`'s file as a process does that has created it and not yet written it."""
    lock.path.parent.mkdir(parents=True, exist_ok=True)
    lock.path.write_bytes(b"")
    if age:
        now = time.time()
        os.utime(lock.path, (now - age, now - age))


def dead_owner() -> str:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return f"{socket.gethostname()} {gone.pid}"


@LOCKS
def test_an_empty_lock_being_written_is_waited_for_not_deleted(
    tmp_path: Path, make: Make, busy: type[Exception]
) -> None:
    lock = make(tmp_path)
    empty_lock(lock)  # just created by another process, its owner not yet written
    raised: list[BaseException] = []

    def take() -> None:
        try:
            lock.acquire()
        except BaseException as exc:  # handed to the test's thread
            raised.append(exc)

    taker = threading.Thread(target=take)
    taker.start()
    time.sleep(0.3)
    assert lock.path.exists()  # not taken over while it is being written
    lock.path.write_text(ME, encoding="utf-8")  # the other process writes its owner: alive
    taker.join(timeout=10)
    assert not taker.is_alive()
    assert len(raised) == 1 and isinstance(raised[0], busy), raised
    assert lock.path.read_text(encoding="utf-8") == ME


@LOCKS
def test_a_lock_left_empty_long_ago_is_taken_over_at_once(
    tmp_path: Path, make: Make, busy: type[Exception]
) -> None:
    lock = make(tmp_path)
    empty_lock(lock, age=60)  # its process was killed between creating and writing it
    started = time.monotonic()
    with lock:
        assert time.monotonic() - started < lock.stale_after
        assert lock.path.read_text(encoding="utf-8") == ME
    assert not lock.path.exists()
    assert not list(lock.path.parent.glob(f"{lock.path.name}*"))  # nothing left aside


@LOCKS
def test_a_lock_that_stays_empty_is_taken_over_after_the_grace_period(
    tmp_path: Path, make: Make, busy: type[Exception], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(PidLock, "stale_after", 0.5)
    lock = make(tmp_path)
    started = time.monotonic()  # before the file: its age counts from its modification time
    empty_lock(lock)
    lock.acquire()
    assert time.monotonic() - started >= 0.5 - 0.05  # mtime's granularity, not the clock's
    assert lock.path.read_text(encoding="utf-8") == ME
    lock.release()
    assert not lock.path.exists()


def test_holder_waits_for_the_owner_of_an_empty_lock(tmp_path: Path) -> None:
    lock = ProjectLock(tmp_path)
    empty_lock(lock)
    writer = threading.Timer(0.2, lambda: lock.path.write_text(ME, encoding="utf-8"))
    writer.start()
    try:
        assert lock.holder() == f"host {socket.gethostname()}, pid {os.getpid()}"
    finally:
        writer.join()


@LOCKS
def test_a_lock_not_read_back_as_ours_is_not_held(
    tmp_path: Path, make: Make, busy: type[Exception], monkeypatch: pytest.MonkeyPatch
) -> None:
    from meta_evaluator import locks

    lock = make(tmp_path)
    real_create = locks.create_lock_file
    other = "some-other-host 4242"

    def create_then_lose(path: Path, owner: str, *, root: Path) -> bool:
        # Another process judged our lock stale before we wrote it, and holds it now.
        made = real_create(path, owner, root=root)
        path.write_text(other, encoding="utf-8")
        return made

    monkeypatch.setattr(locks, "create_lock_file", create_then_lose)
    with pytest.raises(busy):
        lock.acquire()
    lock.release()  # not held: leaves the other's lock alone
    assert lock.path.read_text(encoding="utf-8") == other


RACER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from meta_evaluator.errors import ProjectError
    from meta_evaluator.judge.run_files import RunFiles, RunLock
    from meta_evaluator.locks import ProjectLock

    root, kind = Path(sys.argv[1]), sys.argv[2]
    if kind == "project":
        lock = ProjectLock(root)
    else:
        lock = RunLock(RunFiles(root / "results", "run_1", "judge_a"))
    print("ready", flush=True)
    while not (root / "go").exists():
        time.sleep(0.001)
    try:
        lock.acquire()
    except ProjectError:
        print("busy", flush=True)
    else:
        print("won", flush=True)
        while not (root / "done").exists():
            time.sleep(0.01)
        lock.release()
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="pid checks of this host")
@pytest.mark.parametrize("kind", ["project", "run"])
@pytest.mark.parametrize("before", ["free", "dead owner", "left empty"])
def test_processes_racing_for_a_lock_exactly_one_wins(
    tmp_path: Path, kind: str, before: str
) -> None:
    lock = project_lock(tmp_path) if kind == "project" else run_lock(tmp_path)
    if before == "dead owner":
        lock.path.parent.mkdir(parents=True, exist_ok=True)
        lock.path.write_text(dead_owner(), encoding="utf-8")
    elif before == "left empty":
        empty_lock(lock, age=60)
    command = [sys.executable, "-c", RACER, str(tmp_path), kind]
    pipe = subprocess.PIPE
    racers = [subprocess.Popen(command, stdout=pipe, stderr=pipe, text=True) for _ in range(4)]
    try:
        assert [racer.stdout.readline().strip() for racer in racers if racer.stdout] == [
            "ready"
        ] * 4
        (tmp_path / "go").touch()
        said = sorted(racer.stdout.readline().strip() for racer in racers if racer.stdout)
        assert said == ["busy", "busy", "busy", "won"], said
    finally:
        (tmp_path / "done").touch()
        for racer in racers:
            _, err = racer.communicate(timeout=30)
            assert racer.returncode == 0, err
    assert not lock.path.exists()
    assert not list(lock.path.parent.glob(f"{lock.path.name}*"))
    assert lock.path.name == (LOCK_FILE if kind == "project" else "judge_a.lock")
