"""The one bridge from synchronous code to our async functions, also inside a running loop."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

from meta_evaluator.errors import MetaEvaluatorError

__all__ = ["our_error_first", "run_sync"]

T = TypeVar("T")


def run_sync(function: Callable[..., Awaitable[T]], *args: Any) -> T:
    """Run `function(*args)` to completion and return its result.

    Without a running event loop it runs with `anyio.run`. Inside one (a notebook, an async web
    app calling sync code) it runs in a worker thread with its own loop, because the running
    loop cannot be re-entered. Ctrl-C (or any exception) in the calling thread cancels the work
    in the worker and waits for its clean-up before re-raising, so no call goes on unseen.
    """
    import anyio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(function, *args)
    loop = asyncio.new_event_loop()
    result: list[T] = []
    error: list[BaseException] = []
    task: list[asyncio.Task[T]] = []

    async def main() -> T:
        return await function(*args)

    def worker() -> None:
        try:
            task.append(loop.create_task(main()))
            result.append(loop.run_until_complete(task[0]))
        except BaseException as exc:  # handed to the caller's thread below
            error.append(exc)
        finally:
            loop.close()

    thread = threading.Thread(target=worker, name="meta-evaluator-run", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.1)  # a short join, so Ctrl-C reaches this thread at once
    except BaseException:
        if task:
            # RuntimeError: the loop closed meanwhile, so the work has already ended.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(task[0].cancel)
        thread.join()
        raise
    if error:
        raise error[0]
    return result[0]


@contextlib.contextmanager
def our_error_first() -> Iterator[None]:
    """Around a task group: when every error it raised is ours, raise the first one alone.

    A task group wraps what its tasks raise in an `ExceptionGroup`, even a single error; when
    the disk fills, every row in flight fails with the same `DiskFullError`. The user should see
    that one typed error (the command line prints it and exits with its code), not a group
    traceback. A group holding anything else (a bug) is re-raised whole.
    """
    try:
        yield
    except BaseExceptionGroup as group:
        leaves = _leaves(group)
        if leaves and all(isinstance(leaf, MetaEvaluatorError) for leaf in leaves):
            raise leaves[0] from leaves[0].__cause__
        raise


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    found: list[BaseException] = []
    for exc in group.exceptions:
        found.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return found
