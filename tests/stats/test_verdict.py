"""The verdict rule (stats/verdict.py), case by case from its statement in docs/scoring.md."""

from __future__ import annotations

import pytest

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.verdict import interval_verdict, overall_verdict

HUMANS = (0.55, 0.80)


@pytest.mark.parametrize(
    ("value", "interval", "expected"),
    [
        (0.30, (0.20, 0.40), "does not"),  # wholly below
        (0.30, (0.20, 0.5499), "does not"),  # just below h_low
        (0.50, (0.40, 0.55), "undecided"),  # touches h_low: overlapping, estimate below
        (0.50, (0.40, 0.60), "undecided"),  # overlapping, estimate below
        (0.55, (0.40, 0.60), "stands in"),  # estimate at h_low
        (0.60, (0.45, 0.72), "stands in"),  # estimate within
        (0.85, (0.70, 0.95), "stands in"),  # estimate above, overlapping
        (0.95, (0.90, 0.99), "stands in"),  # wholly above: agrees better than the humans do
        (-0.20, (-0.40, 0.00), "does not"),  # kappa below zero
    ],
)
def test_interval_verdict(value: float, interval: tuple[float, float], expected: str) -> None:
    assert interval_verdict(value, interval, HUMANS) == expected


@pytest.mark.parametrize(
    ("value", "interval", "humans"),
    [
        (None, (0.2, 0.4), HUMANS),
        (0.3, None, HUMANS),
        (0.3, (0.2, 0.4), None),
        (0.3, (None, None), HUMANS),
        (0.3, (0.2, 0.4), (None, 0.8)),
        (float("nan"), (0.2, 0.4), HUMANS),
        (0.3, (0.2, float("inf")), HUMANS),
    ],
)
def test_no_verdict_without_both_intervals(value: object, interval: object, humans: object) -> None:
    assert interval_verdict(value, interval, humans) is None  # type: ignore[arg-type]


def test_a_reversed_interval_is_refused() -> None:
    with pytest.raises(ScoringError, match="interval must have low <= high"):
        interval_verdict(0.5, (0.6, 0.4), HUMANS)
    with pytest.raises(ScoringError, match="human_interval must have low <= high"):
        interval_verdict(0.5, (0.4, 0.6), (0.8, 0.5))


@pytest.mark.parametrize(
    ("alt_tests", "scores", "expected"),
    [
        ([True], ["does not"], "stands in"),  # the alt-test decides where it ran
        ([False], ["stands in", "stands in"], "does not"),
        ([True, False], [], "does not"),  # every alt-test must pass
        ([True, True], [None], "stands in"),
        ([], ["stands in", "does not"], "does not"),  # one score below the humans: does not
        ([], ["stands in", None, "stands in"], "stands in"),  # scores without intervals: no say
        ([], ["stands in", "undecided"], "undecided"),
        ([], ["undecided"], "undecided"),
        ([], [None, None], "undecided"),  # nothing to compare
        ([], [], "undecided"),
    ],
)
def test_overall_verdict(alt_tests: list[bool], scores: list[str | None], expected: str) -> None:
    assert overall_verdict(alt_tests, scores) == expected  # type: ignore[arg-type]


def test_an_unknown_score_verdict_is_refused() -> None:
    with pytest.raises(ScoringError, match="scores must be among"):
        overall_verdict([], ["maybe"])  # type: ignore[list-item]


def test_a_bound_that_is_no_number_is_named() -> None:
    from meta_evaluator.errors import ScoringError
    from meta_evaluator.stats.verdict import interval_verdict

    with pytest.raises(ScoringError, match=r"must be numbers .* got '0\.5'"):
        interval_verdict("0.5", (0.4, 0.6), (0.5, 0.7))  # type: ignore[arg-type]
