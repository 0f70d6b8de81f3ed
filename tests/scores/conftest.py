"""Helpers shared by the scorer tests: random judge/human frames and a sync runner."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
import numpy as np
import polars as pl
import pytest

from meta_evaluator.scores.base_scorer import BaseScorer
from meta_evaluator.scores.base_scoring_result import BaseScoringResult
from meta_evaluator.scores.enums import TaskAggregationMode


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def run_scorer(
    scorer: BaseScorer,
    judge: pl.DataFrame,
    human: pl.DataFrame,
    mode: TaskAggregationMode = TaskAggregationMode.SINGLE,
    **kwargs: Any,
) -> BaseScoringResult:
    """`compute_score_async` of `scorer`, run to completion from sync code."""

    async def go() -> BaseScoringResult:
        return await scorer.compute_score_async(judge, human, "task", "judge_x", mode, **kwargs)

    return anyio.run(go)


def ids_of(kind: str, n: int) -> list[Any]:
    """n distinct ids, integers (unsorted, with gaps) or strings."""
    if kind == "int":
        return [int(v) for v in (np.arange(n) * 7 + 1000)[::-1]]
    return [f"item-{i:03d}" for i in range(n)]


def label_dtype(values: Sequence[Any]) -> pl.DataType:
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, list) for v in present):
        return pl.List(pl.String)
    if present and all(isinstance(v, int) for v in present):
        return pl.Int64()
    if present and all(isinstance(v, float | int) for v in present):
        return pl.Float64()
    return pl.String()


def frames(
    judge: dict[Any, Any], humans: dict[str, dict[Any, Any]], id_kind: str
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Judge frame (original_id, label) and human frame (original_id, human_id, label)."""
    id_type = pl.Int64() if id_kind == "int" else pl.String()
    all_labels = list(judge.values()) + [v for h in humans.values() for v in h.values()]
    dtype = label_dtype(all_labels)
    judge_frame = pl.DataFrame(
        {"original_id": list(judge), "label": list(judge.values())},
        schema={"original_id": id_type, "label": dtype},
    )
    rows = [(i, h, v) for h, labels in humans.items() for i, v in labels.items()]
    human_frame = pl.DataFrame(
        {
            "original_id": [r[0] for r in rows],
            "human_id": [r[1] for r in rows],
            "label": [r[2] for r in rows],
        },
        schema={"original_id": id_type, "human_id": pl.String(), "label": dtype},
    )
    return judge_frame, human_frame


def random_annotations(
    seed: int,
    *,
    labels: Sequence[Any],
    n_items: int = 40,
    n_humans: int = 3,
    id_kind: str = "int",
    coverage: float = 0.8,
    judge_coverage: float = 0.9,
    agreement: float = 0.7,
    null_rate: float = 0.0,
) -> tuple[dict[Any, Any], dict[str, dict[Any, Any]]]:
    """Judge labels {id: label} and human labels {human: {id: label}} around a hidden truth.

    Each annotator (and the judge) labels an item with probability `coverage`; the label is the
    truth with probability `agreement`, else a random label. `null_rate` of the labels given are
    None (present in the frame, but null).
    """
    rng = np.random.default_rng(seed)
    ids = ids_of(id_kind, n_items)
    choices = list(labels)

    def draw() -> Any:
        return choices[int(rng.integers(len(choices)))]

    truth = {i: draw() for i in ids}

    def annotate(p_cover: float) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for i in ids:
            if rng.random() < p_cover:
                value = truth[i] if rng.random() < agreement else draw()
                out[i] = None if rng.random() < null_rate else value
        return out

    judge = annotate(judge_coverage)
    names = ["alice", "bob", "carol", "dave"][:n_humans]
    return judge, {h: annotate(coverage) for h in names}
