"""Plots of a judge measured against itself: position bias and self-consistency.

As `scores.plots`: matplotlib is imported on first use and drawn through
`matplotlib.figure.Figure` (Agg), never pyplot; files are written atomically; the numbers come
from the results (one row per judge, or per judge and task of a multitask metric).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from meta_evaluator._util import finite_number
from meta_evaluator.storage import atomic_write_bytes

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from meta_evaluator.scores.base_scoring_result import ScoringResult

__all__ = ["position_bias_chart", "self_consistency_chart"]

_BAR = "#4C72B0"
_ALPHA = "#55A868"
_LINE = "#C44E52"
_SINGLE = "#8C8C8C"
_DPI = 150


@dataclass(frozen=True)
class _Row:
    """One row of a chart: a judge (and task), its scores and intervals."""

    name: str
    scores: dict[str, Any]
    intervals: dict[str, Any]


def _rows(results: Sequence[ScoringResult]) -> list[_Row]:
    """One row per judge, or per judge and task when the metric scored several tasks."""
    rows = []
    for result in results:
        if result.error is not None:
            continue
        per_task = result.metadata.get("per_task")
        if isinstance(per_task, dict) and per_task:
            for task, entry in per_task.items():
                if isinstance(entry, dict) and "scores" in entry:
                    intervals = entry.get("confidence_intervals") or {}
                    rows.append(_Row(f"{result.judge_id} · {task}", entry["scores"], intervals))
        else:
            rows.append(_Row(result.judge_id, result.scores, result.confidence_intervals or {}))
    return rows


def _interval(row: _Row, key: str) -> tuple[float, float] | None:
    found = row.intervals.get(key)
    if isinstance(found, list | tuple) and len(found) == 2 and all(map(finite_number, found)):
        return float(found[0]), float(found[1])
    return None


def _number(row: _Row, key: str) -> float | None:
    value = row.scores.get(key)
    return float(value) if finite_number(value) else None


def _point(axes: Axes, y: float, value: float | None, interval: Any, color: str, **kw: Any) -> None:
    """A dot at `value` with `interval` as whiskers (nothing when undefined)."""
    if value is None:
        return
    if interval is not None:
        low, high = interval
        axes.errorbar(
            value, y, xerr=[[max(value - low, 0.0)], [max(high - value, 0.0)]], fmt="o",
            color=color, ecolor=color, capsize=4, markersize=6, **kw,
        )  # fmt: skip
    else:
        axes.plot(value, y, "o", color=color, markersize=6, **kw)


def _figure(columns: int, rows: int) -> tuple[Figure, list[Axes]]:
    from matplotlib.figure import Figure

    size = (4.2 * columns + 1.6, 1.5 + 0.55 * rows)
    figure = Figure(figsize=size, dpi=_DPI, layout="constrained")
    axes = figure.subplots(1, columns, sharey=True, squeeze=False)[0]
    return figure, list(axes)


def _save(figure: Figure, path: Path) -> Path:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    atomic_write_bytes(path, buffer.getvalue())
    return path


def _finish(axes: Axes, title: str, low: float = 0.0, high: float = 1.0) -> None:
    axes.set_xlim(low, high)
    axes.set_title(title, fontsize=10)
    axes.grid(axis="x", alpha=0.3)
    axes.set_axisbelow(True)


def position_bias_chart(results: Sequence[ScoringResult], path: Path, *, title: str) -> Path | None:
    """Per judge: the first-position rate with its interval against 1/2, and the consistency.

    A judge led by content sits on the dashed line at 0.5 with a high consistency rate; one
    that prefers a position lies off the line and flips its verdict when the answers swap.
    Returns the file written, or None when no result has a first-position rate.
    """
    rows = [r for r in _rows(results) if _number(r, "first_position_rate") is not None]
    if not rows:
        return None
    rows.reverse()  # the first judge at the top
    figure, (left, right) = _figure(2, len(rows))
    labels = []
    for y, row in enumerate(rows):
        rate = _number(row, "first_position_rate")
        interval = _interval(row, "first_position_rate") or _interval(
            _Row(row.name, {}, {"i": row.scores.get("first_position_interval")}), "i"
        )
        _point(left, y, rate, interval, _BAR)
        p = row.scores.get("p_value")
        shown = f"p = {p:.2g}" if finite_number(p) else "p n/a"
        labels.append(f"{row.name}\n{rate:.2f}, {shown}, {row.scores.get('pairs')} pairs")
        consistency = _number(row, "consistency_rate")
        if consistency is not None:
            right.barh(y, consistency, color=_ALPHA, height=0.55)
            right.annotate(
                f"{consistency:.2f}", (consistency, y), xytext=(3, 0),
                textcoords="offset points", va="center", fontsize=8,
            )  # fmt: skip
    left.axvline(0.5, color=_LINE, linestyle="--", linewidth=1.2, label="no position preference")
    left.set_yticks(range(len(rows)), labels, fontsize=8)
    left.set_xlabel("answers picking the place shown first (whiskers: interval)")
    _finish(left, "first-position rate")
    right.set_xlabel("pairs with the same winner in both orders")
    _finish(right, "consistency rate", high=1.08)
    figure.legend(loc="outside lower left", fontsize=8)
    figure.suptitle(title, fontsize=11)
    return _save(figure, path)


def self_consistency_chart(
    results: Sequence[ScoringResult], path: Path, *, title: str
) -> Path | None:
    """Per judge: kappa and alpha of its k answers, the flip rate, and what voting buys.

    Left: Fleiss' kappa and Krippendorff's alpha with their intervals (1: it always repeats
    itself; 0: chance). Middle: the flip rate (share of its pairs of answers that disagree).
    Right, where humans labelled the rows: accuracy and kappa against the humans' majority of
    the first answer alone and of the majority of the k answers. Returns the file written, or
    None when no result has a flip rate.
    """
    rows = [r for r in _rows(results) if "flip_rate" in r.scores]
    if not rows:
        return None
    rows.reverse()
    humans = any(_number(r, "majority_accuracy") is not None for r in rows)
    figure, panels = _figure(3 if humans else 2, len(rows))
    left, middle = panels[0], panels[1]
    labels = []
    named: set[str] = set()  # each legend entry once
    for y, row in enumerate(rows):
        for key, color, offset in (
            ("fleiss_kappa", _BAR, 0.12),
            ("krippendorff_alpha", _ALPHA, -0.12),
        ):
            value = _number(row, key)
            _point(
                left, y + offset, value, _interval(row, key), color,
                label=_once(named, key.replace("_", " ")) if value is not None else None,
            )  # fmt: skip
        flips = _number(row, "flip_rate")
        if flips is not None:
            interval = _interval(row, "flip_rate")
            middle.barh(y, flips, color=_LINE, height=0.55, alpha=0.8)
            end = flips
            if interval is not None:
                middle.errorbar(
                    flips, y, xerr=[[flips - interval[0]], [interval[1] - flips]], fmt="none",
                    ecolor="black", capsize=4,
                )  # fmt: skip
                end = interval[1]
            middle.annotate(
                f"{flips:.2f}", (end, y), xytext=(4, 0), textcoords="offset points",
                va="center", fontsize=8,
            )  # fmt: skip
        kappa = _number(row, "fleiss_kappa")
        shown = "n/a" if kappa is None else f"{kappa:.2f}"
        labels.append(f"{row.name}\nkappa {shown}, k = {row.scores.get('samples_per_row')}")
    left.axvline(0.8, color="gray", linestyle=":", linewidth=1.0, label="0.8 (almost perfect)")
    left.set_yticks(range(len(rows)), labels, fontsize=8)
    left.set_xlabel("agreement of the k answers (whiskers: bootstrap interval)")
    low = min([0.0] + [v for r in rows for k in ("fleiss_kappa", "krippendorff_alpha")
                       if (v := _number(r, k)) is not None])  # fmt: skip
    _finish(left, "kappa and alpha", low=min(low - 0.05, 0.0) if low < 0 else 0.0, high=1.05)
    middle.set_xlabel("share of pairs of answers that disagree")
    highest = max([0.0] + [(_interval(r, "flip_rate") or (0.0, 0.0))[1] for r in rows])
    _finish(middle, "flip rate", high=max(0.5, highest + 0.08))
    if humans:
        _what_voting_buys(panels[2], rows, named)
    figure.legend(loc="outside lower left", fontsize=8, ncols=3)
    figure.suptitle(title, fontsize=11)
    return _save(figure, path)


def _once(named: set[str], label: str) -> str | None:
    """`label` the first time it is asked for, None after (one legend entry each)."""
    if label in named:
        return None
    named.add(label)
    return label


def _what_voting_buys(axes: Axes, rows: list[_Row], named: set[str]) -> None:
    """Accuracy of the first answer (grey) and of the majority (blue), joined by an arrow."""
    for y, row in enumerate(rows):
        single, vote = _number(row, "first_answer_accuracy"), _number(row, "majority_accuracy")
        if single is None or vote is None:
            continue
        axes.annotate(
            "", (vote, y), xytext=(single, y),
            arrowprops={"arrowstyle": "->", "color": "black", "linewidth": 1.0},
        )  # fmt: skip
        axes.plot(single, y, "o", color=_SINGLE, label=_once(named, "first answer"))
        axes.plot(vote, y, "o", color=_BAR, label=_once(named, "majority of k"))
        axes.annotate(
            f"{vote - single:+.2f}", (max(single, vote), y), xytext=(6, 0),
            textcoords="offset points", va="center", fontsize=8,
        )  # fmt: skip
    axes.set_xlabel("accuracy against the humans' majority")
    _finish(axes, "what voting buys", high=1.1)
