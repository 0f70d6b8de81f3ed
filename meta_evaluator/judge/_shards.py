"""Deterministic sharding: which of N parts a row belongs to, the same on every machine.

`shard_of` hashes the id's type name and text with SHA-256 (not Python's `hash`, which is salted
per process), so N processes on N machines split the rows the same way, with no coordination.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from meta_evaluator.errors import JudgeConfigError

__all__ = ["check_shard", "parse_shard", "shard_of"]

_SHARD = re.compile(r" *([0-9]+) */ *([0-9]+) *")


def shard_of(row_id: Any, count: int) -> int:
    """The 0-based part (of `count`) that the row with id `row_id` belongs to."""
    digest = hashlib.sha256(f"{type(row_id).__name__}:{row_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


def check_shard(shard: object) -> tuple[int, int]:
    """`shard` as `(k, N)` with 1 <= k <= N, or raise `JudgeConfigError` (field `shard`)."""
    if (
        isinstance(shard, tuple)
        and len(shard) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in shard)
        and 1 <= shard[0] <= shard[1]
    ):
        return shard[0], shard[1]
    raise JudgeConfigError(
        f"shard must be (k, N) with 1 <= k <= N (part k of N, counted from 1), got {shard!r}.",
        field="shard",
    )


def parse_shard(text: str) -> tuple[int, int]:
    """`"k/N"` as `(k, N)`, or raise `JudgeConfigError` (field `shard`)."""
    match = _SHARD.fullmatch(text)
    if match is None:
        raise JudgeConfigError(
            f"shard must be written k/N (part k of N, counted from 1, e.g. 2/4), got {text!r}.",
            field="shard",
        )
    return check_shard((int(match[1]), int(match[2])))
