"""`meta_evaluator.stats.text` against Python's difflib (METRICS.md F and C.2)."""

from __future__ import annotations

import difflib

import numpy as np
import pytest

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.text import mean_text_similarity, text_similarity

PIECES = ["The", "answer", " is ", "REFUSED", ".", "  ", "yes", "no", "é", "\n", "ab", "ba"]


def difflib_ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a.lower().strip(), b.lower().strip()).ratio()


def _random_text(rng: np.random.Generator) -> str:
    return "".join(str(p) for p in rng.choice(PIECES, int(rng.integers(0, 6))))


@pytest.mark.parametrize("seed", range(10))
def test_text_similarity_matches_difflib(seed: int) -> None:
    """text_similarity == difflib.SequenceMatcher(None, a.lower().strip(),
    b.lower().strip()).ratio() on random texts."""
    rng = np.random.default_rng(seed)
    for _ in range(30):
        a, b = _random_text(rng), _random_text(rng)
        assert text_similarity(a, b) == difflib_ratio(a, b), (a, b)


def test_text_similarity_long_texts() -> None:
    """Texts over 200 characters (difflib's autojunk heuristic applies) == difflib."""
    rng = np.random.default_rng(1)
    a = " ".join(str(w) for w in rng.choice(["alpha", "beta", "gamma", "e", " "], 120))
    b = " ".join(str(w) for w in rng.choice(["alpha", "beta", "delta", "e", " "], 150))
    assert len(a) > 200
    assert text_similarity(a, b) == difflib_ratio(a, b)


def test_text_similarity_hand_values() -> None:
    """Hand-checked values: normalisation, two empty strings, nothing in common, 2M/T."""
    assert text_similarity("Refused.", " refused. ") == 1.0
    assert text_similarity("", "   ") == 1.0
    assert text_similarity("abc", "xyz") == 0.0
    assert text_similarity("abcd", "abxy") == 0.5  # M = 2, T = 8
    assert text_similarity("abc", "") == 0.0


def test_mean_text_similarity_skips_missing() -> None:
    """Mean over items where both texts are present (difflib per pair); None when none."""
    a = ["Yes", None, "no way", "maybe", float("nan")]
    b = ["yes ", "x", None, "May be", "y"]
    expected = (difflib_ratio("Yes", "yes ") + difflib_ratio("maybe", "May be")) / 2
    assert mean_text_similarity(a, b) == pytest.approx(expected, abs=1e-15)  # type: ignore[arg-type]
    assert mean_text_similarity([None, "a"], ["a", None]) is None
    assert mean_text_similarity([], []) is None


def test_mean_text_similarity_length_mismatch_raises() -> None:
    """Sequences of different length raise ScoringError naming the function."""
    with pytest.raises(ScoringError, match=r"mean_text_similarity: the inputs must have"):
        mean_text_similarity(["a"], ["a", "b"])
