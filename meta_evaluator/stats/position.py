"""Position bias of a pairwise judge: each pair judged twice, the answers' order swapped.

A judge without position bias picks the same answer whichever order it sees them in; a biased
one favours whichever answer comes first (or second). Per row the caller gives the position the
judge picked in the original order and in the swapped order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.checks import check_interval, check_same_length, is_missing
from meta_evaluator.stats.proportions import binomial_p_value, wilson_interval

__all__ = ["Position", "debiased_labels", "position_bias"]

#: The position a judge picked: the answer shown first or second; None: no usable answer.
Position = Literal["first", "second"] | None
_POSITIONS = ("first", "second")


def position_bias(
    picked: Sequence[Position],
    picked_swapped: Sequence[Position],
    *,
    confidence_level: float = 0.95,
) -> dict[str, Any]:
    """Consistency and first-position preference of a judge over rows judged in both orders.

    Formula: over the n rows with a usable answer in both orders, a row is consistent when the
    same answer wins both ways (first then second, or second then first);
    consistency_rate = consistent / n. The m = n - consistent inconsistent rows picked the
    same position both times: `first_both` the first, `second_both` the second.
    first_position_rate = answers picking the first position / 2n = (consistent +
    2 first_both) / 2n (1/2 without position bias). The test and the interval rest on rows,
    not answers (a row's two answers are not independent): without position preference an
    inconsistent row is as likely to favour the first position as the second, so p_value is
    the two-sided exact binomial (sign, McNemar) test of first_both among the m inconsistent
    rows against 1/2, and `inconsistent_first_interval` Wilson's interval of their share q =
    first_both / m. Given m, first_position_rate = 1/2 + m (2q - 1) / 2n, which maps q's
    interval onto `first_position_interval` (an interval conditional on m).

    Args:
        picked: Per row, "first", "second" or None (no usable answer) in the original order.
        picked_swapped: The same rows with the two answers swapped.
        confidence_level: Of the intervals, in (0, 1).

    Returns:
        `consistency_rate`, `first_position_rate` in [0, 1], `first_position_interval` (low,
        high), `p_value`, `inconsistent_first_share` (q) with `inconsistent_first_interval`,
        and the counts `rows`, `pairs` (rows usable both ways), `consistent`, `first_both`,
        `second_both`, `answers` (2 x pairs), `first_answers`.

    Undefined: rates, intervals and p-value are None when no row has a usable answer both
    ways; the share, its interval and the p-value also when every such row is consistent
    (nothing depends on the order: first_position_rate is then exactly 1/2, its interval
    [1/2, 1/2]).

    Raises:
        ScoringError: Inputs of different lengths, a value other than "first", "second" or
            None, or a level outside (0, 1).

    References:
        Zheng et al. (2023), "Judging LLM-as-a-judge with MT-Bench and Chatbot Arena",
        arXiv:2306.05685 (swapping positions; consistency); McNemar (1947),
        doi:10.1007/BF02295996; Wilson (1927).

    Example:
        >>> found = position_bias(["first", "first", "second"], ["second", "first", "first"])
        >>> found["consistency_rate"], found["first_position_rate"]
        (0.6666666666666666, 0.6666666666666666)
    """
    function = "position_bias"
    rows = check_same_length(function, picked=picked, picked_swapped=picked_swapped)
    check_interval(function, "confidence_level", confidence_level, 0.0, 1.0)
    original, swapped = (
        _positions(function, "picked", picked),
        _positions(function, "picked_swapped", picked_swapped),
    )
    pairs = consistent = first_both = second_both = 0
    for a, b in zip(original, swapped, strict=True):
        if a is None or b is None:
            continue
        pairs += 1
        if a != b:
            consistent += 1
        elif a == "first":
            first_both += 1
        else:
            second_both += 1
    answers = 2 * pairs
    first_answers = consistent + 2 * first_both  # a consistent row picks first exactly once
    inconsistent = first_both + second_both
    share = wilson_interval(first_both, inconsistent, confidence_level=confidence_level)
    low: float | None = None
    high: float | None = None
    if pairs and share is None:
        low = high = 0.5  # every row consistent: the order decided nothing
    elif share is not None:
        low, high = (0.5 + inconsistent * (2.0 * q - 1.0) / answers for q in share)
    return {
        "consistency_rate": consistent / pairs if pairs else None,
        "first_position_rate": first_answers / answers if answers else None,
        "first_position_interval": (low, high),
        "p_value": binomial_p_value(first_both, inconsistent),
        "inconsistent_first_share": first_both / inconsistent if inconsistent else None,
        "inconsistent_first_interval": share if share is not None else (None, None),
        "rows": rows,
        "pairs": pairs,
        "consistent": consistent,
        "first_both": first_both,
        "second_both": second_both,
        "answers": answers,
        "first_answers": first_answers,
    }


def debiased_labels(
    picked: Sequence[Position], picked_swapped: Sequence[Position]
) -> list[Literal["first", "second", "tie"] | None]:
    """Per row, the winner when both orders agree, in the original order's terms; else a tie.

    "first" (or "second"): the answer shown first (second) in the original order won both
    ways; "tie": the two orders disagree; None: no usable answer in one of them.

    Raises:
        ScoringError: Inputs of different lengths or a value other than "first", "second", None.

    Example:
        >>> debiased_labels(["first", "first", None], ["second", "first", "first"])
        ['first', 'tie', None]
    """
    function = "debiased_labels"
    check_same_length(function, picked=picked, picked_swapped=picked_swapped)
    out: list[Literal["first", "second", "tie"] | None] = []
    for a, b in zip(
        _positions(function, "picked", picked),
        _positions(function, "picked_swapped", picked_swapped),
        strict=True,
    ):
        if a is None or b is None:
            out.append(None)
        elif a == b:
            out.append("tie")
        else:
            out.append(a)
    return out


def _positions(function: str, name: str, values: Sequence[Any]) -> list[Position]:
    out: list[Position] = []
    for i, value in enumerate(values):
        if is_missing(value):
            out.append(None)
        elif value in _POSITIONS:
            out.append(value)
        else:
            raise ScoringError(
                f"{function}: {name}[{i}] must be 'first', 'second' or None; got {value!r}."
            )
    return out
