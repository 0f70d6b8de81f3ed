"""Plots of the scorers that evaluate the model's own answers: rates per group, bucket, language.

Fairness (selection rate, TPR, FPR per group), stereotype (LMS, SS, iCAT per bucket),
counterfactual (change rate per group) and multiple choice (rates per language) each draw one
chart of horizontal bars beside their result JSON, with the Wilson intervals their metadata
holds as whiskers and each value written at its bar. Pure drawing, as in `scores.plots`: the
numbers come from the results; nothing is computed here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from meta_evaluator._util import finite_number
from meta_evaluator.scores.plots import _figure, _save

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from meta_evaluator.scores.base_scoring_result import ScoringResult

__all__ = [
    "bucket_score_chart",
    "change_rate_chart",
    "group_rate_chart",
    "language_rate_chart",
]

_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#8172B3", "#937860", "#C44E52")
_BUCKET_NAMES = {"overall": "general"}


@dataclass(frozen=True)
class _Series:
    """One kind of bar in a panel: its name, a value per row, and an interval per row."""

    name: str
    values: list[Any]
    intervals: list[Any]


def _panel(
    axes: Axes,
    rows: Sequence[str],
    series: Sequence[_Series],
    *,
    limit: float,
    digits: int,
) -> None:
    """Grouped horizontal bars, first row on top, with whiskers and each value as text."""
    height = 0.8 / len(series)
    for s, one in enumerate(series):
        colour = _COLOURS[s % len(_COLOURS)]
        named = False  # the legend names each series once
        for r, (value, interval) in enumerate(zip(one.values, one.intervals, strict=True)):
            y = r - 0.4 + height * (s + 0.5)
            if not finite_number(value):
                axes.text(limit * 0.01, y, "n/a", va="center", fontsize=7, color="dimgray")
                continue
            value = float(value)
            axes.barh(y, value, height=height * 0.88, color=colour,
                      label=None if named else one.name)  # fmt: skip
            named = True
            end = value
            if interval and all(finite_number(x) for x in interval):
                low, high = float(interval[0]), float(interval[1])
                axes.errorbar(
                    value, y, xerr=[[max(value - low, 0.0)], [max(high - value, 0.0)]],
                    fmt="none", ecolor="black", capsize=2.5, linewidth=0.9,
                )  # fmt: skip
                end = max(end, high)
            axes.text(end + limit * 0.012, y, f"{value:.{digits}f}", va="center", fontsize=7)
    axes.set_yticks(range(len(rows)), list(rows), fontsize=8)
    axes.set_ylim(len(rows) - 0.5, -0.5)  # first row on top
    axes.set_xlim(0.0, limit * 1.12)  # room for the value written past the longest whisker
    axes.grid(axis="x", alpha=0.3)
    axes.set_axisbelow(True)


def _legend(figure: Any, axes: Axes) -> None:
    handles, names = axes.get_legend_handles_labels()
    unique = dict(zip(names, handles, strict=True))
    figure.legend(list(unique.values()), list(unique), loc="outside lower center",
                  ncols=min(len(unique), 4), fontsize=8)  # fmt: skip


def group_rate_chart(results: Sequence[ScoringResult], path: Path, *, title: str) -> Path | None:
    """Fairness: selection rate, TPR and FPR per group of each sensitive column, per judge.

    One panel per judge and column, from `metadata["group_rates"]`, with the Wilson intervals
    as whiskers. Returns the file written, or None when no result has group rates.
    """
    panels = []
    for result in results:
        thresholds = result.metadata.get("thresholds_used") or {}
        for column, groups in (result.metadata.get("group_rates") or {}).items():
            if groups:
                panels.append((result.judge_id, column, groups, thresholds.get(column)))
    if not panels:
        return None
    several = len({judge for judge, *_ in panels}) > 1
    rows_total = sum(len(groups) for _, _, groups, _ in panels)
    figure = _figure(8.0, 1.3 + 0.95 * rows_total + 0.55 * len(panels))
    axes_list = figure.subplots(
        len(panels), 1, squeeze=False, height_ratios=[len(p[2]) + 0.6 for p in panels]
    )[:, 0]
    for axes, (judge, column, groups, rule) in zip(axes_list, panels, strict=True):
        names = list(groups)
        labels = [_group_label(column, name, rule, groups[name]["size"]) for name in names]
        series = [
            _Series(label, [groups[n][key] for n in names],
                    [groups[n][f"{key}_interval"] for n in names])
            for key, label in (("selection_rate", "selection rate"),
                               ("tpr", "true positive rate"), ("fpr", "false positive rate"))
        ]  # fmt: skip
        _panel(axes, labels, series, limit=1.0, digits=2)
        axes.set_title(f"{judge}: {column}" if several else column, fontsize=9, loc="left")
    axes_list[-1].set_xlabel("rate (whiskers: 95% Wilson interval)")
    _legend(figure, axes_list[0])
    figure.suptitle(title, fontsize=11)
    return _save(figure, path)


def _group_label(column: str, group: str, rule: Any, size: int) -> str:
    """`privileged: male > 0.5` (the split's rule) or the group's value, with its rows."""
    if group in ("privileged", "unprivileged") and rule and finite_number(rule[0]):
        threshold, greater = float(rule[0]), bool(rule[1])
        sign = (">" if greater else "<") if group == "privileged" else ("≤" if greater else "≥")
        return f"{group}\n{column} {sign} {threshold:g} (n = {size})"
    return f"{group} (n = {size})"


def bucket_score_chart(results: Sequence[ScoringResult], path: Path, *, title: str) -> Path | None:
    """Stereotype: LMS, SS and iCAT (0-100) per bucket, one panel per judge.

    The dashed line marks SS = 50 (no preference for the stereotype). Buckets without an
    answer are listed with "n/a". Returns the file written, or None without buckets.
    """
    panels = [(r.judge_id, r.metadata["buckets"]) for r in results
              if isinstance(r.metadata.get("buckets"), dict)]  # fmt: skip
    if not panels:
        return None
    rows = max(len(buckets) for _, buckets in panels)
    figure = _figure(8.0, 1.3 + (0.6 * rows + 0.5) * len(panels))
    axes_list = figure.subplots(len(panels), 1, squeeze=False)[:, 0]
    for axes, (judge, buckets) in zip(axes_list, panels, strict=True):
        names = list(buckets)
        labels = [f"{_BUCKET_NAMES.get(b, b)} ({_answers(buckets[b])} answers)" for b in names]
        series = [
            _Series(label, [buckets[b].get(key) for b in names], [None] * len(names))
            for key, label in (("lms", "LMS"), ("ss", "SS"), ("icat", "iCAT"))
        ]
        _panel(axes, labels, series, limit=100.0, digits=1)
        axes.axvline(50.0, color="#C44E52", linestyle="--", linewidth=1.0,
                     label="SS 50: no preference")  # fmt: skip
        if len(panels) > 1:
            axes.set_title(judge, fontsize=9, loc="left")
    axes_list[-1].set_xlabel("score (0-100; LMS and iCAT: higher is better, SS: 50 is unbiased)")
    _legend(figure, axes_list[0])
    figure.suptitle(title, fontsize=11)
    return _save(figure, path)


def _answers(bucket: dict[str, Any]) -> int:
    return sum(
        int(bucket.get(k) or 0) for k in ("stereotype", "anti_stereotype", "neutral", "other")
    )


def change_rate_chart(results: Sequence[ScoringResult], path: Path, *, title: str) -> Path | None:
    """Counterfactual: the change rate overall and per group, a bar per judge.

    Whiskers are the Wilson intervals of `metadata["change_rate_intervals"]`. Returns the
    file written, or None when no result has change rates.
    """
    found = [r for r in results if finite_number(r.scores.get("change_rate_overall"))]
    if not found:
        return None
    column = next(
        (r.metadata.get("group_column") for r in found if r.metadata.get("group_column")), None
    )
    groups = list(
        dict.fromkeys(g for r in found for g in r.scores.get("change_rate_by_group") or {})
    )
    rows = [
        _pairs("all pairs", [r.metadata.get("used") for r in found]),
        *[
            _pairs(f"{column} = {g}" if column else g,
                   [((r.metadata.get("by_group") or {}).get(g) or {}).get("used") for r in found])
            for g in groups
        ],
    ]  # fmt: skip
    series = []
    for result in found:
        by_group = result.scores.get("change_rate_by_group") or {}
        intervals = result.metadata.get("change_rate_intervals") or {}
        interval_by_group = intervals.get("by_group") or {}
        series.append(
            _Series(
                result.judge_id,
                [result.scores["change_rate_overall"], *[by_group.get(g) for g in groups]],
                [intervals.get("overall"), *[interval_by_group.get(g) for g in groups]],
            )
        )
    figure = _figure(8.0, 1.5 + 0.45 * len(rows) * max(1, len(series)) ** 0.6)
    axes = figure.add_subplot()
    _panel(axes, rows, series, limit=1.0, digits=2)
    axes.set_xlabel("change rate: share of pairs whose answer changed (whiskers: 95% Wilson)")
    _legend(figure, axes)
    axes.set_title(title, fontsize=11)
    return _save(figure, path)


def _pairs(label: str, used: list[Any]) -> str:
    """`label (n = 25)`: the pairs a rate rests on, when every judge's count is the same."""
    counts = set(used)
    return f"{label} (n = {used[0]})" if len(counts) == 1 and None not in counts else label


def language_rate_chart(results: Sequence[ScoringResult], path: Path, *, title: str) -> Path | None:
    """Multiple choice: accuracy, accuracy on valid answers, format error rate, per language.

    For all questions and per language, one panel per judge, the Wilson intervals of
    `metadata["rate_intervals"]` as whiskers. Returns the file written, or None when no
    result has rates.
    """
    keys = (("overall_accuracy", "overall accuracy"), ("accuracy_on_valid", "accuracy on valid"),
            ("format_error_rate", "format error rate"))  # fmt: skip
    panels = [r for r in results if any(finite_number(r.scores.get(k)) for k, _ in keys)]
    if not panels:
        return None
    sizes = [1 + len(r.metadata.get("per_language") or {}) for r in panels]
    figure = _figure(8.0, 1.3 + sum(0.8 * n + 0.5 for n in sizes))
    axes_list = figure.subplots(
        len(panels), 1, squeeze=False, height_ratios=[n + 0.6 for n in sizes]
    )[:, 0]
    for axes, result in zip(axes_list, panels, strict=True):
        per_language = result.metadata.get("per_language") or {}
        intervals = result.metadata.get("rate_intervals") or {}
        entries = [("all languages", result.scores, result.metadata.get("counts") or {},
                    intervals.get("overall") or {})]  # fmt: skip
        per_interval = intervals.get("per_language") or {}
        entries += [(language, values, values.get("counts") or {}, per_interval.get(language) or {})
                    for language, values in per_language.items()]  # fmt: skip
        labels = [f"{name} (n = {counts.get('total', '?')})" for name, _, counts, _ in entries]
        series = [
            _Series(label, [e[1].get(key) for e in entries], [e[3].get(key) for e in entries])
            for key, label in keys
        ]
        _panel(axes, labels, series, limit=1.0, digits=2)
        if len(panels) > 1:
            axes.set_title(result.judge_id, fontsize=9, loc="left")
    axes_list[-1].set_xlabel("rate (whiskers: 95% Wilson interval)")
    _legend(figure, axes_list[0])
    figure.suptitle(title, fontsize=11)
    return _save(figure, path)
