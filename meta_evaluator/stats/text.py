"""Text similarity of free-text labels: difflib's ratio on lower-cased, trimmed strings."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from functools import lru_cache

from meta_evaluator.stats.checks import check_same_length, is_missing

__all__ = ["mean_text_similarity", "text_similarity"]


def text_similarity(a: str, b: str) -> float:
    """How alike two texts are, from 0 (nothing in common) to 1 (equal after normalising).

    Formula: 2 M / (len(a) + len(b)) on `lower().strip()` strings, M the characters of the
    matching blocks Ratcliff-Obershelp finds (`difflib.SequenceMatcher(None, a, b).ratio()`);
    two empty strings are 1.

    References:
        Python's difflib; METRICS.md F (TextSimilarityScorer) and C.2.

    Example:
        >>> text_similarity("Refused.", " refused. ")
        1.0
    """
    return _ratio(str(a).lower().strip(), str(b).lower().strip())


@lru_cache(maxsize=65536)
def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


def mean_text_similarity(a: Sequence[str | None], b: Sequence[str | None]) -> float | None:
    """Mean `text_similarity` over the items where both texts are present (None if none)."""
    check_same_length("mean_text_similarity", a=a, b=b)
    values = [
        text_similarity(str(x), str(y)) for x, y in zip(a, b, strict=True)
        if not (is_missing(x) or is_missing(y))
    ]  # fmt: skip
    return sum(values) / len(values) if values else None
