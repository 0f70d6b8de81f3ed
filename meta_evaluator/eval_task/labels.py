"""The one rule by which answers and allowed labels are compared (both sides, always)."""

from __future__ import annotations

__all__ = ["normalize_label"]


def normalize_label(text: str) -> str:
    r"""Fold case and collapse white space, so `" Not  Rejection\\n"` matches `"not rejection"`.

    Example:
        >>> normalize_label(" Not  Rejection\\n")
        'not rejection'
    """
    return " ".join(text.split()).casefold()
