"""The one rule by which answers and allowed labels are compared (both sides, always)."""

from __future__ import annotations

import unicodedata

__all__ = ["normalize_label"]


def normalize_label(text: str) -> str:
    r"""Compose accents (NFC), collapse white space and fold case, so equal-looking labels match.

    Example:
        >>> normalize_label(" Not  Rejection\n")
        'not rejection'
        >>> normalize_label("cafe\u0301") == normalize_label("CAFÉ")
        True
    """
    return " ".join(unicodedata.normalize("NFC", text).split()).casefold()
