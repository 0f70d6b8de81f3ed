"""The one bridge from synchronous code to our async functions, also inside a running loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(function: Callable[..., Awaitable[T]], *args: Any) -> T:
    """Run `function(*args)` to completion and return its result.

    Without a running event loop it runs with `anyio.run`. Inside one (a notebook, an async web
    app calling sync code) it runs in a worker thread with its own loop, because the running loop
    cannot be re-entered; exceptions propagate either way.
    """
    import anyio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(function, *args)
    result: list[T] = []
    error: list[BaseException] = []

    def worker() -> None:
        try:
            result.append(anyio.run(function, *args))
        except BaseException as exc:  # handed to the caller's thread below
            error.append(exc)

    thread = threading.Thread(target=worker, name="meta-evaluator-run", daemon=True)
    thread.start()
    thread.join()
    if error:
        raise error[0]
    return result[0]
