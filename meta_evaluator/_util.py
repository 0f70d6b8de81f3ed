"""Small helpers with no dependencies, shared by modules that must stay light to import."""

from __future__ import annotations

import datetime as dt
import math
import reprlib
from collections.abc import Hashable, Iterable
from typing import Any, TypeGuard, TypeVar, overload

from meta_evaluator.api_keys import redact_keys

__all__ = ["LISTED_LIMIT", "finite_number", "json_time", "listed", "repeated", "shown"]

T = TypeVar("T", bound=Hashable)

SHOWN_LIMIT = 80
_SHORT = reprlib.Repr()  # keyword arguments need Python 3.12
_SHORT.maxlevel = 3
_SHORT.maxdict = _SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxset = 6
_SHORT.maxstring = SHOWN_LIMIT
_SHORT.maxother = 40


def shown(value: object, *, limit: int = SHOWN_LIMIT) -> str:
    """`repr(value)` cut to at most `limit` characters (ending in `...`), for error messages.

    A message quoting a user-supplied value (a label, an id, a YAML entry) must stay readable
    and cheap however large the value is: nested containers are abbreviated by `reprlib` before
    anything is built, then the text is cut. What starts like a provider's key is hidden
    (`meta_evaluator.api_keys.redact_keys`): a key pasted in the wrong place is not repeated.
    """
    text = redact_keys(_SHORT.repr(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


LISTED_LIMIT = 20
"""The most names `listed` shows; a longer list shows its first and last halves of that."""

LISTED_CHARACTERS = 800
"""The longest list `listed` writes: fewer names when long ones would pass it, so that the
line stays under an error's line limit (`errors.MESSAGE_LINE_LIMIT`) with its advice after."""


def listed(names: Iterable[object], *, most: int = LISTED_LIMIT) -> str:
    """The project's own names (runs, judges, tasks, columns) as an error message lists them.

    Unlike `shown`, which bounds a value the user gave, the list is not cut at a number of
    characters: what exists is the answer to the mistake, so every name is shown, each quoted
    and bounded as `shown` does. Past `most` names, the first and last `most // 2` are shown
    with the number left out between them; long names show fewer, so that the list stays within
    `LISTED_CHARACTERS` (at least the first and the last name).

    >>> listed(["r1", "r2"])
    "['r1', 'r2']"
    >>> listed([f"r{i}" for i in range(30)], most=4)
    "['r0', 'r1', ... 26 more ..., 'r28', 'r29']"
    """
    items = [shown(name) for name in names]
    whole = f"[{', '.join(items)}]"
    if len(items) <= most and len(whole) <= LISTED_CHARACTERS:
        return whole
    half = max(min(most, len(items) - 1) // 2, 1)
    while True:
        hidden = len(items) - 2 * half
        text = f"[{', '.join(items[:half])}, ... {hidden} more ..., {', '.join(items[-half:])}]"
        if len(text) <= LISTED_CHARACTERS or half == 1:
            return text
        half -= 1


def repeated(items: Iterable[T]) -> list[T]:
    """The items that occur more than once, each once, in order of first repeat."""
    seen: set[T] = set()
    twice: dict[T, None] = {}
    for item in items:
        if item in seen:
            twice[item] = None
        seen.add(item)
    return list(twice)


@overload
def json_time(moment: dt.datetime | str) -> str: ...
@overload
def json_time(moment: None) -> None: ...
def json_time(moment: dt.datetime | str | None) -> str | None:
    """A moment as every JSON output and file of the commands gives it: `2026-11-28T14:35:42Z`.

    ISO 8601 in UTC with a `Z`, to the whole second (cut, not rounded), so a scheduler's parser
    and a person read the same text. `moment` is a datetime or an ISO 8601 text (a state
    file's `completed_at`); one without a zone is taken as UTC. None stays None.

    Raises:
        ValueError: `moment` is a text that is not ISO 8601.

    >>> json_time("2026-11-28T15:35:42.809315+01:00")
    '2026-11-28T14:35:42Z'
    """
    if moment is None:
        return None
    if isinstance(moment, str):
        moment = dt.datetime.fromisoformat(moment)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def finite_number(value: Any) -> TypeGuard[float]:
    """Whether `value` is a finite int or float (not a bool, NaN or infinity)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
