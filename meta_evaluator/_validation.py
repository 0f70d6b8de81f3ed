"""Turn a pydantic ValidationError into one readable message, one problem per line (P1)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

__all__ = ["describe_errors", "location"]


def location(loc: Iterable[str | int], *, root: str = "") -> str:
    """`judges[1].max_concurrency` from pydantic's `("judges", 1, "max_concurrency")`."""
    text = root
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "(top level)"


def describe_errors(
    exc: ValidationError, *, root: str = "", known_fields: Iterable[str] = ()
) -> tuple[str, list[dict[str, Any]]]:
    """Return one line per problem (`where: what; got X`) and the problems as dicts.

    Unknown keys name the closest known field, when one is close (`did you mean 'x'?`).
    """
    known = list(known_fields)
    lines: list[str] = []
    problems: list[dict[str, Any]] = []
    for error in exc.errors(include_url=False):
        loc = tuple(p for p in error["loc"] if not (isinstance(p, str) and "[" in p))
        where = location(loc, root=root)
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "extra_forbidden" and loc:
            key = str(loc[-1])
            message = f"unknown key {key!r}"
            match = difflib.get_close_matches(key, known, n=1)
            if match:
                message += f"; did you mean {match[0]!r}?"
            elif known:
                message += f"; known keys: {', '.join(sorted(known))}"
        elif error["type"] not in ("missing", "value_error") and "input" in error:
            message += f", got {_short(error['input'])}"
        lines.append(f"{where}: {message}")
        problems.append({"loc": where, "msg": message, "type": error["type"]})
    return "\n".join(lines), problems


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
