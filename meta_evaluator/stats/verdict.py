"""May a judge stand in for the human annotators? The report's one-line verdict, as a rule.

Three answers: "stands in", "does not", "undecided". The alt-test decides where it ran (it is
the test built for the question); otherwise each agreement score's bootstrap interval is held
against the humans' own (the human baseline, computed over the same resamples):

- does not: the judge's interval lies wholly below the humans' (j_high < h_low);
- stands in: the judge's estimate lies within or above the humans' interval (j >= h_low);
  its interval then reaches theirs, or lies above it;
- undecided: otherwise (the estimate below the humans' interval while the intervals
  overlap); a score without both intervals gives no verdict (None).

Over several scores: "does not" if any score says so, "stands in" if every score with both
intervals does, else "undecided" (also when no score has both intervals).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

from meta_evaluator.errors import ScoringError

__all__ = ["VERDICTS", "Verdict", "interval_verdict", "overall_verdict"]

Verdict = Literal["stands in", "does not", "undecided"]
VERDICTS: tuple[Verdict, ...] = ("stands in", "does not", "undecided")


def interval_verdict(
    value: float | None,
    interval: tuple[float | None, float | None] | None,
    human_interval: tuple[float | None, float | None] | None,
) -> Verdict | None:
    """Whether one agreement score of a judge stands in for the humans' agreement.

    Formula: with j the judge's estimate, [j_low, j_high] its percentile interval and
    [h_low, h_high] the humans' interval over the same resamples: "does not" if
    j_high < h_low; "stands in" if j >= h_low; "undecided" otherwise.

    Args:
        value: The judge's score j (higher is better agreement).
        interval: (j_low, j_high), or None without a bootstrap.
        human_interval: (h_low, h_high), the human baseline's interval, or None.

    Returns:
        "stands in", "does not" or "undecided".

    Undefined: None when the value or any bound is missing or not finite (no bootstrap, an
    undefined baseline): no evidence either way.

    Raises:
        ScoringError: A value or bound that is not a number, or an interval whose low bound
            exceeds its high bound.

    References:
        Non-overlapping percentile intervals as a conservative test of a difference:
        Schenker & Gentleman (2001), doi:10.1198/000313001317097960. docs/scoring.md,
        "The verdict".

    Example:
        >>> interval_verdict(0.30, (0.20, 0.40), (0.55, 0.80))
        'does not'
        >>> interval_verdict(0.60, (0.45, 0.72), (0.55, 0.80))
        'stands in'
        >>> interval_verdict(0.50, (0.40, 0.60), (0.55, 0.80))
        'undecided'
        >>> print(interval_verdict(0.50, None, (0.55, 0.80)))
        None
    """
    bounds = [value, *(interval or (None, None)), *(human_interval or (None, None))]
    for bound in bounds:
        if bound is not None and (
            isinstance(bound, bool) or not isinstance(bound, int | float | np.integer | np.floating)
        ):
            raise ScoringError(
                f"interval_verdict: the value and the bounds must be numbers (or None); got "
                f"{bound!r}."
            )
    if any(b is None or not math.isfinite(b) for b in bounds):
        return None
    j, j_low, j_high, h_low, h_high = (float(b) for b in bounds)  # type: ignore[arg-type]
    for name, low, high in (("interval", j_low, j_high), ("human_interval", h_low, h_high)):
        if low > high:
            raise ScoringError(f"interval_verdict: {name} must have low <= high; got {low, high}.")
    if j_high < h_low:
        return "does not"
    if j >= h_low:
        return "stands in"
    return "undecided"


def overall_verdict(alt_tests: Sequence[bool], scores: Sequence[Verdict | None]) -> Verdict:
    """One judge's verdict from its alt-tests (passed or not) and its scores' verdicts.

    Formula: the alt-tests decide when there is one: "stands in" if every one passed, else
    "does not". Without an alt-test: "does not" if any score's verdict is "does not";
    "stands in" if every score that could be compared (verdict not None) stands in and at
    least one could; else "undecided".

    Args:
        alt_tests: Whether each alt-test of the judge passed (empty where none ran).
        scores: `interval_verdict` of each agreement score of the judge (None: no intervals).

    Returns:
        "stands in", "does not" or "undecided".

    Undefined: "undecided" when there is no alt-test and no score could be compared.

    Raises:
        ScoringError: A score verdict that is neither one of `VERDICTS` nor None.

    References:
        Calderon, Reichart & Dror (2025), the alternative annotator test, arXiv:2501.10970;
        docs/scoring.md, "The verdict".

    Example:
        >>> overall_verdict([], ["stands in", None, "stands in"])
        'stands in'
        >>> overall_verdict([], ["stands in", "undecided"])
        'undecided'
        >>> overall_verdict([False], ["stands in"])
        'does not'
    """
    unknown = [v for v in scores if v is not None and v not in VERDICTS]
    if unknown:
        raise ScoringError(
            f"overall_verdict: scores must be among {VERDICTS} or None; got {unknown[0]!r}."
        )
    if alt_tests:
        return "stands in" if all(alt_tests) else "does not"
    compared = [v for v in scores if v is not None]
    if "does not" in compared:
        return "does not"
    if compared and all(v == "stands in" for v in compared):
        return "stands in"
    return "undecided"
