"""Small helpers with no dependencies, shared by modules that must stay light to import."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from typing import Any, TypeGuard, TypeVar

__all__ = ["finite_number", "repeated"]

T = TypeVar("T", bound=Hashable)


def repeated(items: Iterable[T]) -> list[T]:
    """The items that occur more than once, each once, in order of first repeat."""
    seen: set[T] = set()
    twice: dict[T, None] = {}
    for item in items:
        if item in seen:
            twice[item] = None
        seen.add(item)
    return list(twice)


def finite_number(value: Any) -> TypeGuard[float]:
    """Whether `value` is a finite int or float (not a bool, NaN or infinity)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
