"""Failures of polars (or the OS) reading a file, turned into our errors naming the file (X3).

Every reader of a data file (`DataLoader`, the project's saved data, annotators' tables) wraps
its polars call in `read_errors`, so each failure reads the same way: the file, what could not
be done, the cause's first line, what to do.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import polars as pl

from meta_evaluator.errors import DataFileError, MetaEvaluatorError

__all__ = ["first_line", "read_errors"]


def first_line(exc: BaseException) -> str:
    """The first line of `exc`'s message (polars adds plans and hints below), or its class."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextmanager
def read_errors(
    path: str | Path,
    problem: str,
    advice: str = "",
    *,
    error: type[MetaEvaluatorError] = DataFileError,
    catch: tuple[type[BaseException], ...] = (pl.exceptions.PolarsError, OSError),
) -> Iterator[None]:
    """Raise `error` for any `catch` exception inside: `path: problem (cause); advice`.

    Without `advice` the message ends after the cause. The cause is chained with `from`.
    """
    try:
        yield
    except catch as exc:
        ending = f"; {advice}" if advice else "."
        raise error(f"{path}: {problem} ({first_line(exc)}){ending}", path=path) from exc
