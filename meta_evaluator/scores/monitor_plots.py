"""Plots of a label plan (power against items) and of a judge's drift history over time.

Drawn as `scores.plots` draws (a `matplotlib.figure.Figure`, Agg, imported on first use, the
file written atomically); the numbers come from the records, nothing is computed here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from meta_evaluator.scores.plots import _figure, _save

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from meta_evaluator.scores.drift import DriftCheck
    from meta_evaluator.scores.label_plan import LabelPlanReport

__all__ = ["drift_chart", "label_plan_chart"]

_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3")
_TARGET = "#C44E52"
_MAJOR_PSI = 0.25


def label_plan_chart(report: LabelPlanReport, path: Path) -> Path:
    """Power against items (log scale), a line per annotator count, the target power dashed.

    The chosen design is circled.
    """
    from meta_evaluator.scores.label_plan import label_plan_rows

    figure = _figure(7.5, 4.2)
    axes = figure.add_subplot()
    for index, (annotators, designs) in enumerate(label_plan_rows(report).items()):
        axes.plot(
            [d.items for d in designs], [d.power for d in designs], marker="o", markersize=3.5,
            color=_COLOURS[index % len(_COLOURS)], label=f"{annotators} annotators",
        )  # fmt: skip
    axes.axhline(
        report.target_power, color=_TARGET, linestyle="--", linewidth=1.1,
        label=f"target power {report.target_power:g}",
    )  # fmt: skip
    if report.chosen is not None:
        chosen = report.chosen
        axes.plot(
            [chosen.items], [chosen.power], marker="o", markersize=13, markerfacecolor="none",
            markeredgecolor="black", linestyle="none",
            label=f"chosen: {chosen.items} items x {chosen.annotators} ({chosen.labels} labels)",
        )  # fmt: skip
    axes.set_xscale("log")
    items = sorted({d.items for d in report.designs})
    axes.set_xticks(items, [f"{n:,}" for n in items], fontsize=8)
    axes.minorticks_off()
    axes.set_ylim(-0.02, 1.02)
    axes.set_xlabel("items labelled by every annotator")
    axes.set_ylabel("power (share of simulated studies passing)")
    eps = report.alt_test.epsilon
    axes.set_title(
        f"Alt-test power, judge {report.judge_id}, task {report.task} (epsilon {eps:g})",
        fontsize=11,
    )
    axes.grid(alpha=0.3)
    axes.set_axisbelow(True)
    figure.legend(loc="outside right center", fontsize=8)
    return _save(figure, path)


def drift_chart(checks: Sequence[DriftCheck], path: Path) -> Path | None:
    """Agreement with the humans (top) and PSI (bottom) of each check over time, per judge.

    A check that exceeded a threshold is marked with a red cross. None without checks.
    """
    if not checks:
        return None
    return _save(_drift_figure(checks), path)


def _drift_figure(checks: Sequence[DriftCheck]) -> Figure:
    """The figure `drift_chart` saves (at least one check).

    The baseline's agreement is drawn as points, not a line: each is measured on the rows both
    runs of its check labelled, so it may differ between checks of one baseline run.
    """
    figure = _figure(7.5, 5.2)
    top = figure.add_subplot(2, 1, 1)
    bottom = figure.add_subplot(2, 1, 2, sharex=top)
    judges = sorted({c.judge_id for c in checks})
    marked = False  # the legend names the cross once
    for index, judge in enumerate(judges):
        own = sorted((c for c in checks if c.judge_id == judge), key=lambda c: c.checked_at)
        times = np.array(
            [c.checked_at.replace(tzinfo=None) for c in own], dtype="datetime64[us]"
        )  # numpy's datetime64 takes naive times: these are UTC
        colour = _COLOURS[index % len(_COLOURS)]
        now = np.array([_nan(_agreement(c, "b")) for c in own])
        then = np.array([_nan(_agreement(c, "a")) for c in own])
        psi = np.array([_nan(c.shift.psi) for c in own])
        top.plot(
            times, now, marker="o", markersize=3.5, color=colour, label=f"{judge}: run checked"
        )
        top.plot(times, then, marker="o", markersize=5, color=colour, linestyle="none",
                 markerfacecolor="none",
                 label=f"{judge}: baseline run, on the rows both runs labelled")  # fmt: skip
        bottom.plot(times, psi, marker="o", markersize=3.5, color=colour, label=judge)
        drifted = np.array([c.drifted for c in own])
        if drifted.any():
            for axes, values in ((top, now), (bottom, psi)):
                axes.plot(times[drifted], values[drifted], marker="x", markersize=9,
                          color=_TARGET, linestyle="none",
                          label=None if marked else "a threshold exceeded")  # fmt: skip
                marked = True
    limit = checks[-1].thresholds.max_psi
    if limit is not None:
        bottom.axhline(limit, color=_TARGET, linestyle="--", linewidth=1.0,
                       label=f"max_psi {limit:g}")  # fmt: skip
    bottom.axhline(_MAJOR_PSI, color="dimgray", linestyle=":", linewidth=1.0,
                   label=f"major shift ({_MAJOR_PSI:g})")  # fmt: skip
    score = checks[-1].thresholds.agreement.replace("_", " ")
    top.set_ylabel(score, fontsize=9)
    top.set_title("Drift: agreement with the humans and label shift (PSI) per check", fontsize=11)
    bottom.set_ylabel("PSI vs. baseline", fontsize=9)
    bottom.set_xlabel("time of the check (UTC)")
    for axes in (top, bottom):
        axes.grid(alpha=0.3)
        axes.set_axisbelow(True)
    bottom.set_ylim(bottom=0.0)
    _time_axis(bottom)
    top.tick_params(labelbottom=False)  # the times are read off the panel below
    top.legend(fontsize=8, loc="best")
    bottom.legend(fontsize=8, loc="best")
    return figure


def _time_axis(axes: Axes) -> None:
    """Dates shown as briefly as their spread allows, a time always in full (`17:09:35`).

    matplotlib's concise labels show seconds alone (`35 40 45`) for checks of one minute.
    """
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    locator = AutoDateLocator()  # type: ignore[no-untyped-call]
    # levels: years, months, days, hours, minutes, seconds
    formats = ["%Y", "%b", "%d", "%H:%M", "%H:%M", "%H:%M:%S"]
    offsets = ["", "%Y", "%Y-%b", "%Y-%b-%d", "%Y-%b-%d", "%Y-%b-%d"]
    formatter = ConciseDateFormatter(  # type: ignore[no-untyped-call]
        locator, formats=formats, zero_formats=["", "%Y", "%b", "%b-%d", "%H:%M", "%H:%M:%S"],
        offset_formats=offsets,
    )  # fmt: skip
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(formatter)


def _agreement(check: DriftCheck, side: str) -> float | None:
    """The watched agreement score of the run checked (`b`) or of the baseline (`a`)."""
    watched = check.watched()
    return None if watched is None else getattr(watched, side)


def _nan(value: float | None) -> float:
    return float("nan") if value is None else float(value)
