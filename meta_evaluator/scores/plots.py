"""Plots of scores across judges: bars with interval whiskers, and the alt-test's three views.

matplotlib is imported on first use and drawn through `matplotlib.figure.Figure` (Agg), never
pyplot, so plotting changes no global state and needs no display. Files are written
atomically. Pure drawing: the numbers come from the results, nothing is computed here.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from meta_evaluator._util import finite_number
from meta_evaluator.storage import atomic_write_bytes

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from meta_evaluator.scores.base_scoring_result import ScoringResult

__all__ = [
    "advantage_chart",
    "annotator_advantage_chart",
    "score_bar_chart",
    "score_bar_figure",
    "strength_chart",
    "winning_rate_chart",
]

_BAR = "#4C72B0"
_PASS = "#C44E52"
_HUMANS = "#DD8452"
_DPI = 150


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=_DPI, layout="constrained")
    return figure


def _save(figure: Figure, path: Path) -> Path:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    atomic_write_bytes(path, buffer.getvalue())
    return path


def score_bar_chart(
    results: Sequence[ScoringResult],
    score_key: str,
    path: Path,
    *,
    title: str,
    value_range: tuple[float, float] | None = None,
    reference_key: str | None = None,
) -> Path | None:
    """Horizontal bars of `score_key` per judge, with the bootstrap interval as whiskers.

    Judges whose score is undefined or failed are listed with "n/a". `reference_key` names a
    score drawn as a dashed line (for example alpha of the humans alone). A result's human
    baseline of `score_key` (`metadata["human_baseline"]`) is drawn across its row: a band
    (its interval) and a line (its value). The axis reaches below 0 when a score, interval or
    baseline does (kappa, alpha). Returns the file written, or None when no result has the key.
    """
    figure = score_bar_figure(
        results, score_key, title=title, value_range=value_range, reference_key=reference_key
    )
    return None if figure is None else _save(figure, path)


def score_bar_figure(
    results: Sequence[ScoringResult],
    score_key: str,
    *,
    title: str,
    value_range: tuple[float, float] | None = None,
    reference_key: str | None = None,
) -> Figure | None:
    """The figure `score_bar_chart` saves (None when no result has the key)."""
    rows = [(r.judge_id, r.scores.get(score_key), r) for r in results]
    if not any(finite_number(v) for _, v, _ in rows):
        return None
    rows.sort(
        key=lambda row: (finite_number(row[1]), row[1] if finite_number(row[1]) else 0),
        reverse=True,
    )
    rows.reverse()  # best at the top of the chart
    values = [float(v) if finite_number(v) else 0.0 for _, v, _ in rows]
    labels = []
    for name, value, result in rows:
        interval = (result.confidence_intervals or {}).get(score_key)
        text = f"{value:.3f}" if finite_number(value) else ("failed" if result.error else "n/a")
        if finite_number(value) and interval and all(finite_number(x) for x in interval):
            text += f"  [{interval[0]:.3f}, {interval[1]:.3f}]"
        labels.append(f"{name}\n{text}")
    figure = _figure(7.5, 1.3 + 0.6 * len(rows))
    axes = figure.add_subplot()
    bars = axes.barh(range(len(rows)), values, color=_BAR, height=0.6)
    axes.set_yticks(range(len(rows)), labels, fontsize=9)
    for bar, (_, value, result) in zip(bars, rows, strict=True):
        interval = (result.confidence_intervals or {}).get(score_key)
        if (
            finite_number(value)
            and interval
            and finite_number(interval[0])
            and finite_number(interval[1])
        ):
            low, high, centre = float(interval[0]), float(interval[1]), float(value)
            axes.errorbar(
                centre, bar.get_y() + bar.get_height() / 2,
                xerr=[[max(centre - low, 0.0)], [max(high - centre, 0.0)]], fmt="none",
                ecolor="black", capsize=4,
            )  # fmt: skip
    drew_baseline = _draw_human_baselines(axes, [r for _, _, r in rows], score_key)
    low_lim, high_lim = value_range or _value_limits(results, score_key)
    axes.set_xlim(low_lim, high_lim)
    if low_lim < 0.0 < high_lim:
        axes.axvline(0.0, color="black", linewidth=0.8)
    references: list[float] = []
    if reference_key is not None:
        references = sorted(
            {float(v) for r in results if finite_number(v := r.scores.get(reference_key))}
        )
        for reference in references:
            axes.axvline(
                reference, color=_PASS, linestyle="--", linewidth=1.2,
                label=f"{reference_key.replace('_', ' ')}: {reference:.3f}",
            )  # fmt: skip
    if (reference_key is not None and references) or drew_baseline:
        figure.legend(loc="outside lower right", fontsize=8)
    has_ci = any((r.confidence_intervals or {}).get(score_key) for r in results)
    label = score_key.replace("_", " ")
    axes.set_xlabel(f"{label} (whiskers: bootstrap interval)" if has_ci else label)
    axes.set_title(title, fontsize=11)
    axes.grid(axis="x", alpha=0.3)
    axes.set_axisbelow(True)
    return figure


def _baseline_of(result: ScoringResult, score_key: str) -> dict[str, Any] | None:
    """The result's human baseline of `score_key` with a finite value, else None."""
    found = result.metadata.get("human_baseline")
    if not isinstance(found, dict) or found.get("score") != score_key:
        return None
    return found if finite_number(found.get("value")) else None


def _baseline_interval(baseline: dict[str, Any]) -> tuple[float, float] | None:
    interval = baseline.get("interval")
    if (
        isinstance(interval, list | tuple)
        and len(interval) == 2
        and all(finite_number(x) for x in interval)
    ):
        return float(interval[0]), float(interval[1])
    return None


def _draw_human_baselines(axes: Any, results: Sequence[ScoringResult], score_key: str) -> bool:
    """Across each judge's row, the humans' baseline: a band (interval), a line (value).

    Judges scored on the same items share one baseline, so their rows join into one band.
    Returns whether anything was drawn.
    """
    drawn: dict[str, bool] = {}
    found = [_baseline_of(r, score_key) for r in results]
    distinct = {(b["value"], _baseline_interval(b)) for b in found if b is not None}
    for row, baseline in enumerate(found):
        if baseline is None:
            continue
        value, interval = float(baseline["value"]), _baseline_interval(baseline)
        label = f"humans' baseline: {value:.3f}"
        if len(distinct) > 1:  # judges scored on different items: one baseline each
            label = "humans' baseline (on each judge's items)"
        elif interval is not None:
            label += f" [{interval[0]:.3f}, {interval[1]:.3f}]"
        if interval is not None:
            axes.fill_betweenx(
                [row - 0.5, row + 0.5], interval[0], interval[1], color=_HUMANS, alpha=0.22,
                linewidth=0, zorder=0.5,
                label=None if drawn.get("band") else "humans' baseline interval",
            )  # fmt: skip
            drawn["band"] = True
        axes.vlines(
            value, row - 0.5, row + 0.5, color=_HUMANS, linewidth=2.2, zorder=3,
            label=None if drawn.get("line") else f"{label}, {baseline.get('humans')} humans",
        )  # fmt: skip
        drawn["line"] = True
    return bool(drawn)


def _value_limits(results: Sequence[ScoringResult], score_key: str) -> tuple[float, float]:
    """The axis limits: 0 to 1, widened to every score, interval and human baseline."""
    points = [0.0, 1.0]
    for result in results:
        value = result.scores.get(score_key)
        if finite_number(value):
            points.append(float(value))
        interval = (result.confidence_intervals or {}).get(score_key)
        if interval:
            points += [float(x) for x in interval if finite_number(x)]
        baseline = _baseline_of(result, score_key)
        if baseline is not None:
            points.append(float(baseline["value"]))
            points += list(_baseline_interval(baseline) or ())
    low, high = min(points), max(points)
    margin = 0.04 * (high - low)
    return (low - margin if low < 0.0 else 0.0), (high + margin if high > 1.0 else 1.0)


def winning_rate_chart(results: Sequence[ScoringResult], path: Path, *, title: str) -> Path | None:
    """Alt-test winning rate against epsilon, one line per judge, with the 0.5 pass line."""
    series = [
        (r.judge_id, r.scores["winning_rate"], r.metadata.get("epsilon"))
        for r in results
        if isinstance(r.scores.get("winning_rate"), dict)
    ]
    if not series:
        return None
    figure = _figure(7.5, 4.5)
    axes = figure.add_subplot()
    markers = "osD^vP*X"
    for i, (judge, rates, _) in enumerate(series):
        points = sorted((float(k), v) for k, v in rates.items() if finite_number(v))
        axes.plot(
            [p[0] for p in points], [p[1] for p in points], marker=markers[i % len(markers)],
            label=judge, linewidth=1.6,
        )  # fmt: skip
    axes.axhline(0.5, color=_PASS, linestyle="--", linewidth=1.2, label="pass line (0.5)")
    epsilons = {float(e) for _, _, e in series if finite_number(e)}
    for e in sorted(epsilons):
        axes.axvline(e, color="gray", linestyle=":", linewidth=1.0)
        axes.annotate(
            f"configured ε = {e:g}", (e, 1.02), xycoords=("data", "axes fraction"),
            ha="center", fontsize=8, color="dimgray",
        )  # fmt: skip
    axes.set_ylim(-0.05, 1.05)
    axes.set_xlabel("ε (cost-benefit margin)")
    axes.set_ylabel("winning rate")
    axes.set_title(title, fontsize=11, pad=16)
    axes.grid(alpha=0.3)
    axes.legend(loc="upper left", fontsize=8)
    return _save(figure, path)


def advantage_chart(results: Sequence[ScoringResult], path: Path, *, title: str) -> Path | None:
    """Alt-test advantage probability per judge (bars, interval whiskers when present)."""
    return score_bar_chart(
        results, "advantage_probability", path, title=title, value_range=(0.0, 1.0)
    )


def annotator_advantage_chart(
    results: Sequence[ScoringResult], path: Path, *, title: str
) -> Path | None:
    """Per annotator, the judge's advantage probability beside the annotator's, per judge."""
    panels = [
        (r.judge_id, r.metadata.get("per_annotator") or {})
        for r in results
        if r.metadata.get("per_annotator")
    ]
    if not panels:
        return None
    columns = min(len(panels), 2)
    rows = math.ceil(len(panels) / columns)
    width_per = max(len(p[1]) for p in panels)
    figure = _figure(max(6.0, 3.0 + 1.0 * width_per) * columns / 1.4, 3.6 * rows)
    for index, (judge, per_annotator) in enumerate(panels):
        axes = figure.add_subplot(rows, columns, index + 1)
        names = list(per_annotator)
        llm = [per_annotator[n]["llm_advantage_probability"] for n in names]
        human = [per_annotator[n]["human_advantage_probability"] for n in names]
        x = range(len(names))
        axes.bar([i - 0.2 for i in x], llm, width=0.4, label="judge", color=_BAR)
        axes.bar(
            [i + 0.2 for i in x], human, width=0.4, label="left-out annotator", color="#DD8452"
        )
        axes.set_xticks(list(x), names, rotation=30 if len(names) > 4 else 0, ha="right"
                        if len(names) > 4 else "center", fontsize=8)  # fmt: skip
        axes.set_ylim(0, 1.1)
        axes.set_ylabel("advantage probability")
        axes.set_title(judge, fontsize=10)
        axes.grid(axis="y", alpha=0.3)
    handles, names = figure.axes[0].get_legend_handles_labels()
    figure.legend(handles, names, loc="outside lower center", ncols=2, fontsize=8)
    figure.suptitle(title, fontsize=11)
    return _save(figure, path)


def strength_chart(rows: Sequence[dict[str, Any]], path: Path, *, title: str) -> Path | None:
    """Strength per trait (rows) and judge (bars), strongest trait on top, interval whiskers.

    `rows` are trait-table rows: `trait`, `judge`, `strength`, `low_2.5`, `high_97.5`.
    """
    defined = [r for r in rows if finite_number(r.get("strength"))]
    if not defined:
        return None
    judges = list(dict.fromkeys(r["judge"] for r in defined))
    best: dict[str, float] = {}
    for r in defined:
        best[r["trait"]] = max(best.get(r["trait"], -2.0), float(r["strength"]))
    traits = sorted(best, key=lambda t: best[t])  # strongest ends on top
    height = 0.8 / len(judges)
    figure = _figure(8.0, 1.4 + 0.5 * len(traits) * max(1, len(judges)) ** 0.5)
    axes = figure.add_subplot()
    colours = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860"]
    for j, judge in enumerate(judges):
        for t, trait in enumerate(traits):
            row = next((r for r in defined if r["judge"] == judge and r["trait"] == trait), None)
            if row is None:
                continue
            y = t - 0.4 + height * (j + 0.5)
            value = float(row["strength"])
            axes.barh(
                y, value, height=height * 0.9, color=colours[j % len(colours)],
                label=judge if t == 0 or trait == traits[0] else None,
            )  # fmt: skip
            low, high = row.get("low_2.5"), row.get("high_97.5")
            if finite_number(low) and finite_number(high):
                axes.errorbar(
                    value, y, xerr=[[max(value - low, 0.0)], [max(high - value, 0.0)]],
                    fmt="none", ecolor="black", capsize=3, linewidth=1,
                )  # fmt: skip
    axes.set_yticks(range(len(traits)), [t.replace("_", " ") for t in traits], fontsize=9)
    axes.axvline(0.0, color="black", linewidth=0.8)
    axes.set_xlim(-1.0, 1.0)
    axes.set_xlabel("strength (whiskers: 2.5-97.5 percentile interval)")
    axes.set_title(title, fontsize=11)
    axes.grid(axis="x", alpha=0.3)
    axes.set_axisbelow(True)
    handles, names = axes.get_legend_handles_labels()
    unique = dict(zip(names, handles, strict=True))
    figure.legend(list(unique.values()), list(unique), loc="outside lower center",
                  ncols=min(len(unique), 4), fontsize=8)  # fmt: skip
    return _save(figure, path)
