"""What the scorers that evaluate the model's own answers share (fairness, stereotype, ...).

They read data columns joined onto `judge_data` by compare, see invalid rows (`outcome`) as
well as valid ones, and need no human annotations when the data carries the reference.
"""

from __future__ import annotations

import json
from typing import Any

import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.scores.base_scorer import ScoringCall

__all__ = ["answer_texts", "column", "no_answer", "valid_flags"]


def no_answer(scorer: str, call: ScoringCall) -> None:
    """Raise ScoringError when the judge gave no answer at all to score."""
    if call.judge_data.height == 0:
        raise ScoringError(f"{scorer}: {call.where}: no answer to score.")


def column(frame: pl.DataFrame, name: str) -> list[Any]:
    """A column as Python values."""
    return frame.get_column(name).to_list()


def valid_flags(frame: pl.DataFrame) -> list[bool]:
    """Per row: whether the answer was valid (rows without `outcome` count as valid)."""
    if "outcome" not in frame.columns:
        return [True] * frame.height
    return [o == "valid" for o in frame.get_column("outcome").to_list()]


def answer_texts(frame: pl.DataFrame) -> list[str | None]:
    """The model's answer per row: the label, else the raw response (invalid rows)."""
    labels = column(frame, "label")
    raw = (
        column(frame, "llm_raw_response_content")
        if "llm_raw_response_content" in frame.columns
        else [None] * frame.height
    )
    out: list[str | None] = []
    for label, text in zip(labels, raw, strict=True):
        value = label if label is not None else text
        if value is not None and not isinstance(value, str):
            value = json.dumps(value) if isinstance(value, list | dict) else str(value)
        out.append(value)
    return out
