"""`meta_evaluator.stats.multiple_choice` against the parsing and grading rules of METRICS.md B.4
(cleaning) and B.7 (after FAI3 `llm_language_evaluations.rs`, serde `LanguageEvaluationAnswer`),
hand-computed rates, and references written here from B.7's formulas for random inputs."""

from __future__ import annotations

import doctest
import random
from collections import Counter
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats import multiple_choice
from meta_evaluator.stats.multiple_choice import grade, parse_choice, rate_intervals, rates

SEEDS = range(10)
OPTIONS = ["Paris", "London", " Berlin ", "madrid"]

# (raw response, expected choice): METRICS.md B.7 "must parse as a whole as a JSON object with a
# string field choice", after B.4's cleaning.
PARSING_TABLE: list[tuple[str | None, str | None]] = [
    ('{"choice": "A"}', "A"),  # plain object
    ('{"choice":"b","reason":"because","confidence":0.9}', "b"),  # extra fields allowed
    ('  \n {"choice": "C"}\t\r\n ', "C"),  # surrounding whitespace trimmed
    ('{\n  "choice": "D"\n}', "D"),  # line breaks become spaces, still JSON
    ('<think>It is C.\nNo, D.</think>{"choice": "D"}', "D"),  # think block across lines
    ('<think>a</think>{"choice": "A"}<think>b</think>', "A"),  # non-greedy: JSON kept
    ('<think>x</think> <think>y</think> {"choice": "B"}', "B"),  # every block removed
    ('<think>unclosed {"choice": "B"}', None),  # unclosed block is text
    ('{"choice": "A\nB"}', "A B"),  # raw newline inside the string: cleaned first
    ('{"choice": " a "}', " a "),  # returned as given
    ('{"choice": ""}', ""),  # empty string is still a string
    ('{"choice": "\\u00e9"}', "é"),  # JSON escapes decoded
    ('```json\n{"choice": "A"}\n```', None),  # code fences
    ('```{"choice": "A"}```', None),
    ('["A"]', None),  # array (serde would accept a one-element array; B.7 says invalid)
    ('[{"choice": "A"}]', None),
    ('{"choice": 1}', None),  # number choice
    ('{"choice": null}', None),
    ('{"choice": true}', None),
    ('{"choice": ["A"]}', None),
    ('{"choice": {"choice": "A"}}', None),  # nested: choice must be a string
    ('{"answer": {"choice": "A"}}', None),  # nested: choice must be top-level
    ('{"Choice": "A"}', None),  # key is case-sensitive
    ('{"choice": "A"', None),  # invalid JSON
    ("{'choice': 'A'}", None),  # Python dict syntax is not JSON
    ('{"choice": "A",}', None),  # trailing comma
    ('The answer is {"choice": "A"}', None),  # prose before
    ('{"choice": "A"} I hope that helps', None),  # prose after
    ('{"choice": "A"}{"choice": "B"}', None),  # two objects
    ('{"choice": "A", "choice": "B"}', None),  # duplicate field (serde rejects)
    ('{"choice": "A", "p": NaN}', None),  # NaN is not JSON
    ('{"choice": "\\ud800"}', None),  # unpaired surrogate (serde rejects)
    ('"A"', None),  # bare string
    ("A", None),
    ("", None),
    ("   ", None),
    ("<think>only thinking</think>", None),
    (None, None),
]


# --------------------------------------------------------------------------- references --


def reference_rates(outcomes: list[str]) -> dict[str, Any]:
    """B.7's formulas with exact fractions: n = errors + invalid + incorrect + correct;
    format_error_rate = invalid/(n - errors), overall_accuracy = correct/(correct + incorrect +
    invalid), accuracy_on_valid = correct/(correct + incorrect); 0/0 -> None (G.11)."""
    c = Counter(outcomes)
    n = c["error"] + c["invalid"] + c["incorrect"] + c["correct"]

    def ratio(a: int, b: int) -> float | None:
        return float(Fraction(a, b)) if b else None

    return {
        "format_error_rate": ratio(c["invalid"], n - c["error"]),
        "overall_accuracy": ratio(c["correct"], c["correct"] + c["incorrect"] + c["invalid"]),
        "accuracy_on_valid": ratio(c["correct"], c["correct"] + c["incorrect"]),
        "counts": {
            "correct": c["correct"],
            "incorrect": c["incorrect"],
            "invalid": c["invalid"],
            "error": c["error"],
            "total": n,
        },
    }


def reference_grade(choice: str | None, options: list[str], correct_index: int) -> str:
    """B.7: trimmed, lower-cased choice against trimmed, lower-cased options."""
    if choice is None:
        return "invalid"
    picked = choice.strip().lower()
    if picked == options[correct_index].strip().lower():
        return "correct"
    if any(picked == o.strip().lower() for o in options):
        return "incorrect"
    return "invalid"


# --------------------------------------------------------------------------- parsing --


@pytest.mark.parametrize(("text", "expected"), PARSING_TABLE)
def test_parsing_table(text: str | None, expected: str | None) -> None:
    """Reference: METRICS.md B.4 cleaning and B.7 parsing, case by case."""
    assert parse_choice(text) == expected


def test_parse_rejects_non_text() -> None:
    """Reference: STYLE.md S1, the error names function and argument."""
    with pytest.raises(ScoringError, match="parse_choice: text"):
        parse_choice(42)  # type: ignore[arg-type]


def test_trim_is_rusts_not_pythons() -> None:
    """Reference: B.4 "trim" is Rust's str::trim (Unicode White_Space): U+3000 is trimmed,
    U+001F (which Python's str.strip also removes) is kept, so the JSON does not parse."""
    assert parse_choice('\u3000{"choice": "A"}\u00a0') == "A"
    assert parse_choice('\x1f{"choice": "A"}') is None


# --------------------------------------------------------------------------- grading --


@pytest.mark.parametrize(
    ("text", "correct", "expected"),
    [
        ('{"choice": "Paris"}', "Paris", "correct"),
        ('{"choice": "Paris"}', 0, "correct"),
        ('{"choice": "London"}', "Paris", "incorrect"),
        ('{"choice": "London"}', 0, "incorrect"),
        ('{"choice": "Rome"}', 0, "invalid"),  # not an option
        ('{"choice": "A"}', 0, "invalid"),  # a letter is not an option's text
        ('{"choice": 1}', 0, "invalid"),
        ("Paris", 0, "invalid"),  # not JSON
        (None, 0, "invalid"),
        ('{"choice": "  PARIS\\t"}', 0, "correct"),  # case and whitespace of the choice
        ('{"choice": "berlin"}', 2, "correct"),  # whitespace of the option
        ('{"choice": "BERLIN"}', " berlin", "correct"),  # correct given as text, normalised
        ('{"choice": "Madrid "}', "Paris", "incorrect"),
        ('{"choice": "Pa ris"}', 0, "invalid"),  # inner whitespace matters
    ],
)
def test_grade_by_text_and_index(text: str | None, correct: str | int, expected: str) -> None:
    """Reference: METRICS.md B.7 grading rule, case by case."""
    assert grade(text, OPTIONS, correct) == expected


def test_grade_accepts_numpy_index() -> None:
    """Reference: B.7; an index read from a data frame may be a numpy integer."""
    assert grade('{"choice": "london"}', OPTIONS, np.int64(1)) == "correct"  # type: ignore[arg-type]


def test_grade_duplicate_options_correct_wins() -> None:
    """Reference: B.7 checks "equal to the correct option" before "equal to another option"."""
    assert grade('{"choice": "yes"}', ["Yes", "yes "], 1) == "correct"


@pytest.mark.parametrize(
    ("options", "correct", "message"),
    [
        (OPTIONS, 4, r"grade: correct must be an index in \[0, 3\]"),
        (OPTIONS, -1, r"grade: correct must be an index"),
        (OPTIONS, "Rome", r"grade: correct 'Rome' is not one of the options"),
        (OPTIONS, True, r"grade: correct must be an option's text or its 0-based index"),
        (OPTIONS, 1.0, r"grade: correct must be an option's text or its 0-based index"),
        ("Paris", 0, r"grade: options must be a sequence of strings"),
        (["Paris", 3], 0, r"grade: options\[1\] must be a string"),
        ([], 0, r"grade: options must hold at least one option"),
    ],
)
def test_grade_rejects_bad_arguments(options: Any, correct: Any, message: str) -> None:
    """Reference: the brief's contract; STYLE.md S1 wording (function, argument, value)."""
    with pytest.raises(ScoringError, match=message):
        grade('{"choice": "Paris"}', options, correct)


@pytest.mark.parametrize("seed", SEEDS)
def test_grade_matches_reference_on_random_answers(seed: int) -> None:
    """Reference: `reference_grade` above, from B.7, on random choices and spellings."""
    rng = random.Random(seed)
    pool = [*OPTIONS, "paris", " LONDON", "berlin", "Rome", "", "A"]
    for _ in range(200):
        choice = rng.choice(pool)
        correct = rng.randrange(len(OPTIONS))
        text = rng.choice(
            [
                f'{{"choice": "{choice}"}}',
                f'<think>hm</think>\n{{"choice": "{choice}", "x": 1}}',
                f"```{choice}```",
            ]
        )
        expected = reference_grade(parse_choice(text), OPTIONS, correct)
        assert grade(text, OPTIONS, correct) == expected
        assert grade(text, OPTIONS, OPTIONS[correct]) == expected


# --------------------------------------------------------------------------- rates --


def test_rates_hand_computed_overall_and_per_language() -> None:
    """Reference: hand computation from B.7 and G.11 (all-invalid language -> format error
    rate 1.0, accuracy_on_valid None; all-error language -> every rate None)."""
    outcomes = [
        "correct", "correct", "incorrect", "invalid", "error",  # en
        "invalid", "invalid",  # fr: all invalid
        "error", "error",  # de: all errors
        "correct",  # language unknown
    ]  # fmt: skip
    languages = ["en", "en", "en", "en", "en", "fr", "fr", "de", "de", None]
    r = rates(outcomes, languages)
    # overall: correct 3, incorrect 1, invalid 3, error 3, n 10
    assert r["counts"] == {"correct": 3, "incorrect": 1, "invalid": 3, "error": 3, "total": 10}
    assert r["format_error_rate"] == 3 / 7
    assert r["overall_accuracy"] == 3 / 7
    assert r["accuracy_on_valid"] == 0.75
    per = r["per_language"]
    assert list(per) == ["de", "en", "fr", "unknown"]
    assert per["en"]["format_error_rate"] == 0.25
    assert per["en"]["overall_accuracy"] == 0.5
    assert per["en"]["accuracy_on_valid"] == 2 / 3
    assert per["en"]["counts"] == {
        "correct": 2, "incorrect": 1, "invalid": 1, "error": 1, "total": 5,
    }  # fmt: skip
    assert per["fr"]["format_error_rate"] == 1.0
    assert per["fr"]["overall_accuracy"] == 0.0
    assert per["fr"]["accuracy_on_valid"] is None
    assert per["de"]["format_error_rate"] is None
    assert per["de"]["overall_accuracy"] is None
    assert per["de"]["accuracy_on_valid"] is None
    assert per["de"]["counts"]["error"] == 2
    assert per["unknown"]["accuracy_on_valid"] == 1.0


def test_rates_empty_input_is_all_none() -> None:
    """Reference: B.7 "nothing is set unless n > 0"; undefined -> None."""
    r = rates([])
    assert (r["format_error_rate"], r["overall_accuracy"], r["accuracy_on_valid"]) == (
        None,
        None,
        None,
    )
    assert r["counts"]["total"] == 0
    assert "per_language" not in r
    assert rates([], [])["per_language"] == {}


def test_rates_nan_language_is_unknown() -> None:
    """Reference: the brief, a missing language is keyed "unknown"."""
    languages: list[Any] = [float("nan"), None]
    r = rates(["correct", "incorrect"], languages)
    assert list(r["per_language"]) == ["unknown"]
    assert r["per_language"]["unknown"]["accuracy_on_valid"] == 0.5


@pytest.mark.parametrize("seed", SEEDS)
def test_rates_match_reference_on_random_outcomes(seed: int) -> None:
    """Reference: `reference_rates` above (B.7 formulas, exact fractions), overall and per
    language; compared exactly."""
    rng = random.Random(seed)
    n = rng.randrange(0, 120)
    weights = [rng.random() for _ in multiple_choice.OUTCOMES]
    outcomes = rng.choices(list(multiple_choice.OUTCOMES), weights=weights, k=n)
    languages = [rng.choice(["en", "hr", "uk", None]) for _ in range(n)]
    r = rates(outcomes, languages)
    per = r.pop("per_language")
    assert r == reference_rates(outcomes)
    keys = sorted({"unknown" if lang is None else lang for lang in languages})
    assert list(per) == keys
    for key in keys:
        mine = [
            o for o, lang in zip(outcomes, languages, strict=True) if (lang or "unknown") == key
        ]
        assert per[key] == reference_rates(mine)


@pytest.mark.parametrize(
    ("bad", "shown"), [("Correct", "'Correct'"), ("valid", "'valid'"), (None, "None"), (1, "1")]
)
def test_unknown_outcome_raises_naming_value_and_position(bad: Any, shown: str) -> None:
    """Reference: the brief's contract; STYLE.md S1 wording."""
    with pytest.raises(ScoringError, match=rf"rates: outcomes\[2\] must be one of .*; got {shown}"):
        rates(["correct", "error", bad])


def test_rates_length_mismatch_and_string_outcomes_raise() -> None:
    """Reference: STYLE.md S1, `check_same_length` wording; a bare string is no sequence."""
    with pytest.raises(ScoringError, match=r"rates: .*languages has 1"):
        rates(["correct", "invalid"], ["en"])
    with pytest.raises(ScoringError, match="rates: outcomes must be a sequence"):
        rates("correct")


@pytest.mark.parametrize("seed", SEEDS)
def test_rate_intervals_are_statsmodels_wilson_of_each_rate(seed: int) -> None:
    """Each interval is statsmodels' `proportion_confint(method="wilson")` of the rate's own
    numerator and denominator (B.7), and holds the rate `rates` reports."""
    rng = random.Random(seed)
    outcomes = [rng.choice(["correct", "incorrect", "invalid", "error"]) for _ in range(60)]
    found = rates(outcomes)
    counts = Counter(outcomes)
    intervals = rate_intervals(found["counts"])
    answered = counts["correct"] + counts["incorrect"] + counts["invalid"]
    for name, k, n in (
        ("format_error_rate", counts["invalid"], answered),
        ("overall_accuracy", counts["correct"], answered),
        ("accuracy_on_valid", counts["correct"], counts["correct"] + counts["incorrect"]),
    ):
        want = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert intervals[name] == pytest.approx(list(want), abs=1e-12), name
        assert intervals[name][0] <= found[name] <= intervals[name][1]


def test_rate_intervals_undefined_and_bad_counts() -> None:
    """No answered question: every interval None; all invalid: accuracy_on_valid's only."""
    none = rate_intervals({"correct": 0, "incorrect": 0, "invalid": 0, "error": 3})
    assert none == dict.fromkeys(("format_error_rate", "overall_accuracy", "accuracy_on_valid"))
    invalid = rate_intervals({"correct": 0, "incorrect": 0, "invalid": 4})
    assert invalid["accuracy_on_valid"] is None and invalid["format_error_rate"][1] == 1.0
    with pytest.raises(ScoringError, match=r"rate_intervals: counts\['invalid'\] must be an"):
        rate_intervals({"correct": 1, "incorrect": 0})
    with pytest.raises(ScoringError, match=r"counts\['correct'\] must be in \[0, inf\)"):
        rate_intervals({"correct": -1, "incorrect": 0, "invalid": 0})
    with pytest.raises(ScoringError, match=r"rate_intervals: counts must be a mapping"):
        rate_intervals([1, 2, 3])  # type: ignore[arg-type]


def test_docstring_examples() -> None:
    """Reference: the module's own doctests (STYLE.md rule 16)."""
    result = doctest.testmod(multiple_choice)
    assert result.failed == 0
    assert result.attempted > 0
