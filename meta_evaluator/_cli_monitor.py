"""What `meta-evaluator plan-labels` and `drift` do and print, and `drift`'s exit status.

`plan-labels`: the grid of power (and kappa width) by items x annotators, the smallest design
that reaches the power or why none does, where the plan went. `drift`: the label shift, the
change in agreement with the humans, each threshold and whether it was exceeded (exit 5), where
the history went. With `--json` either prints one JSON object instead (an error too).
"""

from __future__ import annotations

import json
import shlex
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from meta_evaluator._cli_output import print_score_changes
from meta_evaluator._cli_run import EXIT_DRIFT, json_errors, print_json
from meta_evaluator.errors import NothingToCompareError

if TYPE_CHECKING:
    from meta_evaluator.scores.drift import DriftCheck
    from meta_evaluator.scores.label_plan import LabelPlanReport

__all__ = ["drift_command", "plan_labels_command", "print_drift", "print_label_plan"]


def plan_labels_command(
    project_dir: Path,
    *,
    judge: str | None,
    task: str | None,
    epsilon: float | None,
    power: float,
    simulations: int,
    seed: int,
    json_output: bool,
) -> int:
    """Plan the labels, print the plan (or its JSON); the exit status (0)."""
    from meta_evaluator.project import MetaEvaluator
    from meta_evaluator.scores.label_plan import LABEL_PLAN_FILE, LABEL_PLAN_PLOT

    with json_errors("plan-labels", json_output):
        evaluator = MetaEvaluator(project_dir, load=True)
        report = evaluator.plan_labels(
            judge_id=judge, task=task, epsilon=epsilon, power=power, simulations=simulations,
            seed=seed,
        )  # fmt: skip
    if json_output:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        reports = evaluator.paths.reports_dir
        print_label_plan(report, reports / LABEL_PLAN_FILE, reports / LABEL_PLAN_PLOT)
    return 0


def print_label_plan(report: LabelPlanReport, saved: Path, plot: Path) -> None:
    """The plan: its settings and pilot, the grid, the design chosen or why none."""
    from meta_evaluator.scores.label_plan import label_plan_rows

    r = report
    settings = r.alt_test
    kind = "multiplicative " if settings.multiplicative_epsilon else ""
    print(
        f"Label plan: judge {r.judge_id}" + (f" (run {r.run_id})" if r.run_id else "")
        + f", task {r.task}; alt-test {kind}epsilon {settings.epsilon:g} ({settings.source}), "
        f"target power {r.target_power:g}, {r.simulations} simulated studies per design"
    )  # fmt: skip
    advantages = (
        f"; advantage probability: judge {r.judge_advantage:.2f}, humans {r.human_advantage:.2f}"
        if r.judge_advantage is not None and r.human_advantage is not None
        else ""
    )
    print(
        f"Pilot: {r.pilot_items} rows the judge labelled, {r.pilot_annotators} annotators "
        f"({', '.join(r.annotators)}){advantages}"
    )
    by_annotators = label_plan_rows(r)
    counts = list(by_annotators)
    items = sorted({d.items for d in r.designs})
    cell = {(d.items, d.annotators): d for d in r.designs}
    print("Power (kappa 95% range width) by items x annotators:")
    head = ["items", *[f"{m} annotators" for m in counts]]
    rows = [head]
    for n in items:
        row = [f"{n:,}"]
        for m in counts:
            d = cell.get((n, m))
            width = "n/a" if d is None or d.kappa_width is None else f"{d.kappa_width:.2f}"
            mark = "*" if r.chosen is not None and d == r.chosen else " "
            row.append("" if d is None else f"{d.power:.2f} ({width}){mark}")
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    for row in rows:
        print(("  " + "  ".join(v.rjust(w) for v, w in zip(row, widths, strict=True))).rstrip())
    if r.chosen is not None:
        c = r.chosen
        width = "" if c.kappa_width is None else f", kappa 95% range width {c.kappa_width:.2f}"
        print(
            f"Smallest design reaching power {r.target_power:g} (*): {c.items:,} items x "
            f"{c.annotators} annotators = {c.labels:,} human labels (power {c.power:.2f}{width})"
        )
    else:
        print(f"No design reaches power {r.target_power:g}: {r.reason}")
    print(f"Saved to {saved} (plot: {plot.name})")


def drift_command(
    project_dir: Path,
    judge: str,
    *,
    baseline: str | None,
    against: str | None,
    task: str | None,
    json_output: bool,
) -> int:
    """Check the judge for drift, print the check (or its JSON); 5 when a threshold was exceeded."""
    from meta_evaluator.project import MetaEvaluator
    from meta_evaluator.scores.drift_history import (
        DRIFT_HISTORY_FILE,
        DRIFT_HISTORY_PLOT,
        DamagedHistoryWarning,
    )

    with json_errors("drift", json_output):
        evaluator = MetaEvaluator(project_dir, load=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DamagedHistoryWarning)
            try:
                check = evaluator.drift(judge, baseline=baseline, against=against, task=task)
            except NothingToCompareError as exc:
                return _nothing_to_compare(project_dir, judge, exc.run_id, json_output)
    for warning in caught:
        if issubclass(warning.category, DamagedHistoryWarning):
            print(f"warning: {warning.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename,
                                   warning.lineno)  # fmt: skip
    code = EXIT_DRIFT if check.drifted else 0
    if json_output:
        print_json(sys.stdout, {**check.to_json(), "checked": True, "exit_status": code})
    else:
        reports = evaluator.paths.reports_dir
        print_drift(check, reports / DRIFT_HISTORY_FILE, reports / DRIFT_HISTORY_PLOT)
    return code


def next_run_command(project_dir: Path, judge: str) -> str:
    """The command that makes a new run of the judge, every row asked: what drift then checks.

    A new run id is needed: `run` resumes (and returns as it is) the judge's complete run of
    the same configuration, `--no-cache` alone asks nothing again.
    """
    folder, judge_arg = shlex.quote(str(project_dir)), shlex.quote(judge)
    return f"meta-evaluator run {folder} --judges {judge_arg} {NEXT_RUN_ID} --no-cache"


NEXT_RUN_ID = '--run-id "nightly-$(date +%Y%m%d-%H%M%S)"'
"""A new run id each time, as a shell says it (a scheduler's line runs in a shell)."""


def _nothing_to_compare(project_dir: Path, judge: str, run_id: str, json_output: bool) -> int:
    """The first night: one complete run, nothing to compare yet; exit 0, not an error."""
    reason = f"one complete run ({run_id!r}) of judge {judge!r}; drift compares two"
    then = (
        f"make a new run with `{next_run_command(project_dir, judge)}`, then check again "
        f"(`meta-evaluator drift {shlex.quote(str(project_dir))} --judge {shlex.quote(judge)}`)"
    )
    if json_output:
        print_json(sys.stdout, {"command": "drift", "exit_status": 0, "checked": False,
                                "reason": reason, "next": then, "judge_id": judge,
                                "run_id": run_id})  # fmt: skip
    else:
        print(f"Nothing to compare yet: {reason}.")
        print(f"Next: {then}.")
    return 0


def print_drift(check: DriftCheck, history: Path, plot: Path) -> None:
    """The check: the runs, the label shift, the agreement, each threshold, the verdict."""
    c = check
    a, b = c.baseline.run_id, c.against.run_id
    same = c.baseline.fingerprint is not None and c.baseline.fingerprint == c.against.fingerprint
    how = "same judge configuration" if same else "the judge configuration differs"
    print(f"Drift of judge {c.judge_id}, task {c.task}: baseline {a} -> {b} ({how})")
    print(f"Rows compared: {c.rows} ({c.only_in_baseline} only in {a}, {c.only_in_against} "
          f"only in {b})")  # fmt: skip
    s = c.shift
    share = "n/a" if s.changed_share is None else f"{s.changed_share:.3f}"
    print(f"Label shift: {s.changed} of {s.rows} rows changed their label (share {share}); "
          f"PSI {_figure(s.psi)}")  # fmt: skip
    for name, value, df, p in (
        ("chi-square (homogeneity)", s.chi_square, s.chi_square_df, s.chi_square_p_value),
        ("Stuart-Maxwell (paired)", s.stuart_maxwell, s.stuart_maxwell_df,
         s.stuart_maxwell_p_value),
    ):  # fmt: skip
        shown = "n/a" if value is None else f"{value:.3f} (df {df}, p = {_figure(p, '.3g')})"
        print(f"  {name}: {shown}")
    labels = [str(label) for label in s.labels]
    table = [["", *labels], [a, *map(str, s.counts_before)], [b, *map(str, s.counts_after)]]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        cells = [
            v.rjust(w) if i else v.ljust(w)
            for i, (v, w) in enumerate(zip(row, widths, strict=True))
        ]
        print("  " + "  ".join(cells))
    humans = f" ({', '.join(c.humans)})" if c.humans else ""
    print(f"Agreement with the humans{humans}:")
    print_score_changes(c.agreement, a, b, c.bootstrap.confidence_level)
    print("Thresholds (project.yaml's drift: section, or the defaults):")
    for t in c.checks:
        limit = "not set" if t.limit is None else f"{t.limit:g}"
        if t.limit is None:
            verdict = "not checked"
        elif t.value is None:
            verdict = f"not checked: {t.reason}"
        else:
            verdict = "EXCEEDED" if t.exceeded else "ok"
        print(f"  {t.name} {limit}: {_figure(t.value)}  {verdict}")
    if c.drifted:
        print(f"Drifted: {len(c.exceeded)} threshold(s) exceeded ({', '.join(c.exceeded)}); "
              f"exit status {EXIT_DRIFT}.")  # fmt: skip
    else:
        print("No threshold exceeded.")
    print(f"Appended to {history} (plot: {plot.name})")


def _figure(value: float | None, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)
