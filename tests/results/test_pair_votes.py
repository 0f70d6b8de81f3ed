"""The votes imported with preference pairs: told apart from a judge's rows by fingerprint."""

from __future__ import annotations

import polars as pl
import pytest

from meta_evaluator.results.pair_votes import (
    is_pair_votes,
    is_pair_votes_source,
    pair_votes_source,
    voted_tasks,
)
from meta_evaluator.scores import BaseScorer, MetricConfig
from meta_evaluator.scores.compare import left_out_reason
from meta_evaluator.scores.metrics import AccuracyScorer, PositionBiasScorer, PreferenceScorer


def rows(fingerprints: list[str | None], **tasks: list[str | None]) -> pl.DataFrame:
    return pl.DataFrame({"original_id": list(range(len(fingerprints))),
                         "fingerprint": fingerprints, **tasks})  # fmt: skip


def test_the_source_names_the_file_and_is_recognised() -> None:
    source = pair_votes_source("/data/x/pairs.json")
    assert source == "pairs:pairs.json"
    assert is_pair_votes_source(source)
    assert not is_pair_votes_source("external:0123abcd") and not is_pair_votes_source(None)


@pytest.mark.parametrize(
    ("fingerprints", "expected"),
    [
        (["pairs:p.json", "pairs:p.json"], True),
        (["pairs:p.json", None], True),
        (["pairs:p.json", "d1cde3ad2581091f"], False),  # a judge's run
        (["external:0123", "external:0123"], False),  # labels imported for a judge
        ([None, None], False),
    ],
)
def test_pair_votes_by_fingerprint(fingerprints: list[str | None], expected: bool) -> None:
    frame = rows(fingerprints)
    assert is_pair_votes(frame) is expected
    as_category = frame.with_columns(pl.col("fingerprint").cast(pl.Categorical))
    assert is_pair_votes(as_category) is expected  # as scoring reads it
    assert not is_pair_votes(frame.drop("fingerprint"))


def test_voted_tasks_are_those_with_a_label() -> None:
    frame = rows(["pairs:p"] * 2, concise=["text_a", None], preference=[None, None])
    assert voted_tasks(frame, ["preference", "concise", "absent"]) == ["concise"]


def metric(scorer: BaseScorer, tasks: list[str]) -> MetricConfig:
    return MetricConfig(scorer=scorer, task_names=tasks, aggregation_name="single")


def test_only_the_pairs_votes_are_left_out() -> None:
    votes = rows(["pairs:p"] * 2, concise=["text_a", "tie"], preference=[None, None])
    judge = votes.with_columns(pl.lit("d1cde3ad2581091f").alias("fingerprint"))
    for m in (
        metric(PositionBiasScorer(), ["concise"]),
        metric(PreferenceScorer(debias_positions=True), ["concise"]),
        metric(AccuracyScorer(), ["preference"]),
    ):
        assert left_out_reason(m, votes) is not None
        assert left_out_reason(m, judge) is None  # a judge is scored, and told if it fails
    assert left_out_reason(metric(PreferenceScorer(), ["concise"]), votes) is None
    both = left_out_reason(metric(PositionBiasScorer(), ["concise"]), votes)
    assert both is not None and "both orders" in both
