"""The drift history's plot: what its legend says, how the baseline is drawn, its time labels."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.figure import Figure

from meta_evaluator.scores import BootstrapConfig, monitor_plots
from meta_evaluator.scores.drift import DriftCheck
from meta_evaluator.scores.monitor_plots import drift_chart
from tests.scores.monitor_projects import add_run, flipped, make_project

FAST = BootstrapConfig(n_resamples=100)


def _same_minute_checks(tmp_path: Path) -> list[DriftCheck]:
    """Three checks of one baseline seconds apart, the last one drifted."""
    evaluator, truth = make_project(tmp_path, rows=40)
    add_run(evaluator, tmp_path, "j", "mon", truth)
    add_run(evaluator, tmp_path, "j", "tue", flipped(truth, 2))
    check = evaluator.drift("j", bootstrap=FAST)
    assert not check.drifted
    times = ("2026-11-28T17:09:35Z", "2026-11-28T17:09:40Z", "2026-11-28T17:09:45Z")
    checks = [check.model_copy(update={"time": t}) for t in times]
    checks[-1] = checks[-1].model_copy(update={"exceeded": ("max_psi",)})
    return checks


def _drawn(checks: list[DriftCheck], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Figure:
    """The figure `drift_chart` saves, as it saves it."""
    saved: list[Figure] = []
    save = monitor_plots._save

    def keep(figure: Figure, path: Path) -> Path:
        saved.append(figure)
        return save(figure, path)

    monkeypatch.setattr(monitor_plots, "_save", keep)
    assert drift_chart(checks, tmp_path / "drift.png") is not None
    return saved[0]


def test_the_legend_says_exceeded_and_the_baseline_is_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    figure = _drawn(_same_minute_checks(tmp_path), tmp_path, monkeypatch)
    top, bottom = figure.axes
    legend = [t.get_text() for axes in (top, bottom) for t in axes.get_legend().get_texts()]
    assert "a threshold exceeded" in legend and "a threshold passed" not in legend
    assert "j: baseline run, on the rows both runs labelled" in legend
    baseline = next(line for line in top.get_lines() if "baseline" in str(line.get_label()))
    assert baseline.get_linestyle() == "None"  # points: each is its own check's rows
    checked = next(line for line in top.get_lines() if line.get_label() == "j: run checked")
    assert checked.get_linestyle() == "-"


def test_same_minute_checks_show_full_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    figure = _drawn(_same_minute_checks(tmp_path), tmp_path, monkeypatch)  # ticks laid out
    bottom = figure.axes[1]
    labels = [t.get_text() for t in bottom.get_xticklabels() if t.get_text()]
    assert labels and all(label.startswith("17:09:") for label in labels), labels
    assert "17:09:40" in labels
    offset = bottom.xaxis.get_major_formatter().get_offset()
    assert offset == "2026-Nov-28", offset


def test_drift_chart_writes_the_png(tmp_path: Path) -> None:
    path = drift_chart(_same_minute_checks(tmp_path), tmp_path / "drift.png")
    assert path is not None and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert drift_chart([], tmp_path / "none.png") is None
