"""The reasons of a judge's error rows, counted for the run summary and `score`."""

from __future__ import annotations

import polars as pl

from meta_evaluator.results.reasons import error_reasons, summarize_errors


def rows(*messages: str | None) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "outcome": ["valid", *["error"] * len(messages)],
            "status": ["success", *["connection_error"] * len(messages)],
            "error_message": [None, *messages],
        },
        schema={"outcome": pl.String, "status": pl.String, "error_message": pl.String},
    )


def test_reasons_are_counted_most_frequent_first_ties_by_text() -> None:
    frame = rows("b", "a", "b", None, "c", "a", "b")
    assert error_reasons(frame) == [("b", 3), ("a", 2), ("c", 1), ("connection_error", 1)]


def test_the_top_three_and_the_rest_summed() -> None:
    frame = rows("b", "a", "b", None, "c", "a", "b", "d")
    assert summarize_errors(frame) == ("8 errors: 3× b; 2× a; 1× c; 2× for 2 other reasons")
    assert summarize_errors(rows("x"), sep=" — ") == "1 error — 1× x"


def test_no_errors_no_description() -> None:
    assert summarize_errors(rows()) is None
    assert error_reasons(pl.DataFrame()) == []
