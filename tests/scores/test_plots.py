"""The score bar chart: the humans' baseline as a band and a line, and axes below zero."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.collections import LineCollection, PolyCollection

from meta_evaluator.scores.base_scoring_result import ScoringResult
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.human_baseline import HumanBaseline
from meta_evaluator.scores.plots import score_bar_chart, score_bar_figure


def result(judge: str, kappa: float, interval: tuple[float, float], baseline: Any) -> ScoringResult:
    metadata = {} if baseline is None else {"human_baseline": baseline.as_metadata()}
    return ScoringResult(
        scorer_name="cohens_kappa", task_name="t", judge_id=judge, scores={"cohens_kappa": kappa},
        metadata=metadata, aggregation_mode=TaskAggregationMode.SINGLE, num_comparisons=10,
        confidence_intervals={"cohens_kappa": interval},
    )  # fmt: skip


def humans(value: float, interval: tuple[float, float] | None) -> HumanBaseline:
    return HumanBaseline(
        score="cohens_kappa", value=value, interval=interval, per_human={}, humans=3, items=40,
        method="leave-one-out",
    )  # fmt: skip


def bands(figure: Any) -> list[tuple[float, float, float, float]]:
    """(x_low, x_high, y_low, y_high) of each filled band on the axes."""
    out = []
    for collection in figure.axes[0].collections:
        if isinstance(collection, PolyCollection):
            vertices = collection.get_paths()[0].vertices
            out.append((vertices[:, 0].min(), vertices[:, 0].max(),
                        vertices[:, 1].min(), vertices[:, 1].max()))  # fmt: skip
    return out


def lines(figure: Any) -> list[float]:
    """x of each vertical segment of a line collection (the baseline's line; whiskers are
    horizontal)."""
    return [
        float(segment[0][0])
        for collection in figure.axes[0].collections
        if isinstance(collection, LineCollection)
        for segment in collection.get_segments()
        if np.isclose(segment[0][0], segment[1][0])
    ]


def test_baseline_band_and_line_per_judge_and_negative_axis() -> None:
    shared = humans(0.62, (0.5, 0.74))
    figure = score_bar_figure(
        [
            result("good", 0.7, (0.6, 0.8), shared),
            result("bad", -0.3, (-0.45, -0.1), shared),
        ],
        "cohens_kappa",
        title="kappa",
    )
    assert figure is not None
    low, high = figure.axes[0].get_xlim()
    assert low < -0.45 and high == pytest.approx(1.0)  # the whisker below -0.4 is not clipped
    found = bands(figure)
    assert len(found) == 2 and all(b[:2] == pytest.approx((0.5, 0.74)) for b in found)
    # the rows' bands touch: one continuous band across the chart
    rows = sorted(found, key=lambda b: b[2])
    assert rows[0][3] == pytest.approx(rows[1][2])
    assert 0.62 in [pytest.approx(x) for x in lines(figure)]
    legend = [t.get_text() for t in figure.legends[0].get_texts()]
    assert "humans' baseline interval" in legend
    assert any("0.620 [0.500, 0.740]" in t for t in legend)


def test_without_baseline_or_interval() -> None:
    figure = score_bar_figure(
        [result("a", 0.4, (0.3, 0.5), None), result("b", 0.5, (0.4, 0.6), humans(0.8, None))],
        "cohens_kappa",
        title="kappa",
    )
    assert figure is not None
    assert bands(figure) == []  # no interval, no band
    assert 0.8 in [pytest.approx(x) for x in lines(figure)]
    assert figure.axes[0].get_xlim() == pytest.approx((0.0, 1.0))


def test_chart_is_written(tmp_path: Path) -> None:
    path = score_bar_chart(
        [result("a", 0.4, (0.3, 0.5), humans(0.6, (0.5, 0.7)))], "cohens_kappa",
        tmp_path / "k.png", title="kappa",
    )  # fmt: skip
    assert path is not None and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
