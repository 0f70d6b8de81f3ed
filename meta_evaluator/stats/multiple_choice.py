"""Multiple-choice answers given as JSON: parsing, grading, and accuracy and format-error rates.

The model answers with a JSON object holding a string field `choice`. After cleaning (every
`<think>...</think>` block removed, line breaks turned into spaces, surrounding whitespace
trimmed) the whole response must parse as such an object; anything else is an **invalid**
answer. A parsed choice is **correct** when, trimmed and lower-cased, it equals the correct
option (trimmed and lower-cased), **incorrect** when it equals another option, and **invalid**
otherwise. A failed call is an **error**: it is counted, never scored.

With n = errors + invalid + incorrect + correct:
format_error_rate = invalid / (n - errors), overall_accuracy = correct / (correct + incorrect +
invalid), accuracy_on_valid = correct / (correct + incorrect); overall and per language.

References: Salazar et al., "Kaleidoscope: In-language Exams for Massively Multilingual Vision
Evaluation" (2025), arXiv:2504.07072; FAI3 `llm_language_evaluations.rs` and `types.rs
LanguageEvaluationMetrics` (https://github.com/FAI3network/ICP_MVP); METRICS.md B.4 (cleaning),
B.7 and G.11.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from collections.abc import Mapping, Sequence
from typing import Any

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.checks import check_interval, check_same_length, is_missing
from meta_evaluator.stats.proportions import wilson_intervals

__all__ = ["OUTCOMES", "grade", "parse_choice", "rate_intervals", "rates"]

#: The outcome of one question, as `rates` counts them.
OUTCOMES = ("correct", "incorrect", "invalid", "error")

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
# Rust's `str::trim` (Unicode White_Space), which FAI3 uses; Python's `str.strip` also removes
# U+001C..U+001F.
_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_UNKNOWN_LANGUAGE = "unknown"


def _clean(text: str) -> str:
    """A model response as graded: `<think>` blocks removed, line breaks as spaces, trimmed."""
    text = _THINK.sub("", text)
    return text.replace("\n", " ").replace("\r", " ").strip(_WHITESPACE)


def _no_constant(name: str) -> Any:
    """`json.loads` hook: NaN and Infinity are not JSON."""
    raise ValueError(f"{name} is not JSON")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`json.loads` hook: a `choice` key given twice makes the answer ambiguous."""
    if sum(key == "choice" for key, _ in pairs) > 1:
        raise ValueError("duplicate field choice")
    return dict(pairs)


def parse_choice(text: str | None) -> str | None:
    r"""The `choice` a model's JSON answer names, or None when the answer is not such JSON.

    Formula: clean the text (remove every `<think>...</think>` block, non-greedy and across
    lines; replace `\n` and `\r` by spaces; trim), then parse the whole of it as JSON; the
    answer is the value of the top-level `choice` key when the JSON is an object and that
    value is a string.

    Args:
        text: The model's raw response; None (no text) is allowed.

    Returns:
        The choice exactly as given (not trimmed or lower-cased), or None.

    Undefined: None for no text, text that is not JSON as a whole (code fences, prose around
    the object, NaN/Infinity), JSON that is not an object (arrays included), an object without
    `choice`, a `choice` that is not a string (number, null, object), a `choice` key given
    twice, or a choice holding an unpaired surrogate escape.

    Raises:
        ScoringError: `text` is neither a string nor None.

    References:
        FAI3 `llm_language_evaluations.rs` (serde `LanguageEvaluationAnswer`), `utils.rs
        clean_llm_response`; METRICS.md B.4, B.7.

    Example:
        >>> parse_choice('<think>B or C?\nC.</think> {"choice": "C", "why": "..."}')
        'C'
        >>> parse_choice('```json\n{"choice": "C"}\n```') is None
        True
    """
    if text is None or is_missing(text):
        return None
    if not isinstance(text, str):
        raise ScoringError(f"parse_choice: text must be a string or None; got {text!r}.")
    try:
        value = json.loads(_clean(text), object_pairs_hook=_object, parse_constant=_no_constant)
    except ValueError:  # json.JSONDecodeError and the hooks' errors
        return None
    if not isinstance(value, dict):
        return None
    choice = value.get("choice")
    if not isinstance(choice, str):
        return None
    try:
        choice.encode("utf-8")
    except UnicodeEncodeError:  # "\ud800": valid for Python's json, not for serde
        return None
    return choice


def grade(text: str | None, options: Sequence[str], correct: str | int) -> str:
    """Whether a model's JSON answer picks the correct option, another option, or none.

    Formula: c = `parse_choice(text)`; with norm(s) = s.strip().lower():
    "correct" if norm(c) == norm(correct option); else "incorrect" if norm(c) equals
    norm(o) for another option o; else "invalid" (also when c is None).

    Args:
        text: The model's raw response (a JSON object with a string field `choice`), or None.
        options: The answer options' texts, in order (a sequence of strings, not one string).
        correct: The correct option, as its text (matched like the choice, trimmed and
            case-insensitive) or its 0-based index into `options`.

    Returns:
        "correct", "incorrect" or "invalid". Never "error": a failed call has no text to
        grade, and the caller records it as "error".

    Raises:
        ScoringError: `options` is empty, a string or holds a non-string, `correct` is an index
            outside `options` or a text that is none of the options, or `text` is not a
            string or None.

    References:
        FAI3 `llm_language_evaluations.rs`; METRICS.md B.7.

    Example:
        >>> grade('{"choice": " paris "}', ["London", "Paris"], 1)
        'correct'
        >>> grade('{"choice": "LONDON"}', ["London", "Paris"], "Paris")
        'incorrect'
    """
    function = "grade"
    if isinstance(options, str):
        raise ScoringError(f"{function}: options must be a sequence of strings; got {options!r}.")
    normalized = []
    for i, option in enumerate(options):
        if not isinstance(option, str):
            raise ScoringError(f"{function}: options[{i}] must be a string; got {option!r}.")
        normalized.append(option.strip().lower())
    if not normalized:
        raise ScoringError(f"{function}: options must hold at least one option; got none.")
    if isinstance(correct, str):
        target = correct.strip().lower()
        if target not in normalized:
            raise ScoringError(
                f"{function}: correct {correct!r} is not one of the options {list(options)!r}."
            )
    elif isinstance(correct, numbers.Integral) and not isinstance(correct, bool):
        if not 0 <= int(correct) < len(normalized):
            raise ScoringError(
                f"{function}: correct must be an index in [0, {len(normalized) - 1}] "
                f"or an option's text; got {correct!r}."
            )
        target = normalized[int(correct)]
    else:
        raise ScoringError(
            f"{function}: correct must be an option's text or its 0-based index; got {correct!r}."
        )
    choice = parse_choice(text)
    if choice is None:
        return "invalid"
    picked = choice.strip().lower()
    if picked == target:
        return "correct"
    return "incorrect" if picked in normalized else "invalid"


def rates(outcomes: Sequence[str], languages: Sequence[str | None] | None = None) -> dict[str, Any]:
    """Format-error rate and accuracies of multiple-choice outcomes, overall and per language.

    Formula: with the counts of each outcome and n = error + invalid + incorrect + correct:
    format_error_rate = invalid / (n - error);
    overall_accuracy = correct / (correct + incorrect + invalid) (errors excluded);
    accuracy_on_valid = correct / (correct + incorrect).

    Args:
        outcomes: One per question: "correct", "incorrect", "invalid" or "error".
        languages: Optional, one per question: its language (None or NaN -> "unknown"; other
            non-strings are keyed by `str(value)`).

    Returns:
        {"format_error_rate", "overall_accuracy", "accuracy_on_valid", "counts"} with counts
        {"correct", "incorrect", "invalid", "error", "total"} (total = n), and, when
        `languages` is given, "per_language": {language: the same four keys}, languages
        sorted. Each rate lies in [0, 1]: format_error_rate 0 = every answered question had a
        usable answer, 1 = none had; the accuracies 1 = all correct.

    Undefined: format_error_rate and overall_accuracy are None when n - error = 0 (no
    question, or every call failed); accuracy_on_valid is None when correct + incorrect = 0
    (so an all-invalid language has format_error_rate 1.0, overall_accuracy 0.0 and
    accuracy_on_valid None; METRICS.md G.11).

    Raises:
        ScoringError: An outcome is none of the four (the message names value and position),
            or `languages` differs in length from `outcomes`.

    References:
        Salazar et al., arXiv:2504.07072; FAI3 `types.rs LanguageEvaluationMetrics`;
        METRICS.md B.7, G.11.

    Example:
        >>> r = rates(["correct", "correct", "correct", "incorrect", "invalid", "error"])
        >>> r["format_error_rate"], r["overall_accuracy"], r["accuracy_on_valid"]
        (0.2, 0.6, 0.75)
    """
    function = "rates"
    if isinstance(outcomes, str):
        raise ScoringError(f"{function}: outcomes must be a sequence of strings; got {outcomes!r}.")
    for i, outcome in enumerate(outcomes):
        if not (isinstance(outcome, str) and outcome in OUTCOMES):
            allowed = ", ".join(repr(o) for o in OUTCOMES)
            raise ScoringError(
                f"{function}: outcomes[{i}] must be one of {allowed}; got {outcome!r}."
            )
    result = _rates(outcomes)
    if languages is not None:
        check_same_length(function, outcomes=outcomes, languages=languages)
        split: dict[str, list[str]] = {}
        for outcome, language in zip(outcomes, languages, strict=True):
            key = _UNKNOWN_LANGUAGE if is_missing(language) else str(language)
            split.setdefault(key, []).append(outcome)
        result["per_language"] = {key: _rates(split[key]) for key in sorted(split)}
    return result


def rate_intervals(
    counts: Mapping[str, int], *, confidence_level: float = 0.95
) -> dict[str, list[float] | None]:
    """Wilson intervals of the three rates of one set of counts (`rates`' `counts`).

    Formula: each rate is a share k / n of questions; its interval is the Wilson score
    interval of k in n (`stats.proportions.wilson_intervals`): format_error_rate k = invalid,
    n = correct + incorrect + invalid; overall_accuracy k = correct, the same n;
    accuracy_on_valid k = correct, n = correct + incorrect.

    Args:
        counts: `{"correct", "incorrect", "invalid"}` (non-negative integers; other keys such
            as "error" and "total" are ignored), as `rates` returns them overall and per
            language.
        confidence_level: In (0, 1).

    Returns:
        `{"format_error_rate", "overall_accuracy", "accuracy_on_valid"}`, each `[low, high]`
        in [0, 1].

    Undefined: an interval is None where its rate is (n = 0).

    Raises:
        ScoringError: counts is not a mapping, a count is missing or not a non-negative
            integer, or confidence_level is outside (0, 1).

    References:
        Wilson (1927), doi:10.1080/01621459.1927.10502953; METRICS.md B.7.

    Example:
        >>> found = rate_intervals({"correct": 3, "incorrect": 1, "invalid": 1})
        >>> [round(x, 4) for x in found["overall_accuracy"]]
        [0.2307, 0.8824]
    """
    function = "rate_intervals"
    if not isinstance(counts, Mapping):
        raise ScoringError(
            f"{function}: counts must be a mapping of outcome to count; got {counts!r}."
        )
    for key in ("correct", "incorrect", "invalid"):
        check_interval(function, f"counts[{key!r}]", counts.get(key), 0, math.inf,
                       closed="left", integer=True)  # fmt: skip
    correct, incorrect, invalid = counts["correct"], counts["incorrect"], counts["invalid"]
    names = ("format_error_rate", "overall_accuracy", "accuracy_on_valid")
    tops = [invalid, correct, correct]
    bottoms = [correct + incorrect + invalid] * 2 + [correct + incorrect]
    low, high = wilson_intervals(tops, bottoms, confidence_level=confidence_level)
    return {
        name: None if bottom == 0 else [float(lo), float(hi)]
        for name, bottom, lo, hi in zip(names, bottoms, low, high, strict=True)
    }


def _rates(outcomes: Sequence[str]) -> dict[str, Any]:
    """The three rates and the counts of checked outcomes."""
    counts = {name: 0 for name in OUTCOMES}
    for outcome in outcomes:
        counts[outcome] += 1
    correct, incorrect, invalid = counts["correct"], counts["incorrect"], counts["invalid"]
    answered = correct + incorrect + invalid  # = n - errors
    valid = correct + incorrect
    return {
        "format_error_rate": invalid / answered if answered else None,
        "overall_accuracy": correct / answered if answered else None,
        "accuracy_on_valid": correct / valid if valid else None,
        "counts": {**counts, "total": answered + counts["error"]},
    }
