"""The viewer's "Runs" tab: two runs of a judge side by side (`scores.run_comparison`).

The comparisons `meta-evaluator compare-runs` saved are listed; any two finished runs can be
compared on the page, computed when asked and never written (the viewer only reads).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from meta_evaluator.errors import QueryError
from meta_evaluator.judge.run_files import run_ids, run_judges
from meta_evaluator.scores.run_comparison import (
    COMPARISONS_FOLDER,
    RunComparison,
    compare_runs,
    read_comparisons,
)

__all__ = [
    "RunChoice",
    "compared",
    "judges_of_runs",
    "parse_run_choice",
    "run_choices",
    "saved_comparisons",
]

#: The parameters of a comparison on the Runs tab and `/api/compare`.
RUN_PARAMETERS = ("a", "b", "judge", "task")


@dataclass(frozen=True)
class RunChoice:
    """Two runs to compare (each `RUN` or `RUN:JUDGE`), and the judge and task when given."""

    a: str
    b: str
    judge: str | None = None
    task: str | None = None

    def params(self) -> list[tuple[str, str]]:
        """The choice as query parameters."""
        given = [("a", self.a), ("b", self.b), ("judge", self.judge), ("task", self.task)]
        return [(k, v) for k, v in given if v]


def parse_run_choice(params: Mapping[str, Sequence[str]]) -> RunChoice | None:
    """The runs a request asks to compare; None when it names neither.

    Raises:
        QueryError: One run is named and not the other.
    """
    given = {k: (params.get(k) or [""])[0].strip() or None for k in RUN_PARAMETERS}
    if given["a"] is None and given["b"] is None:
        return None
    for side in ("a", "b"):
        if given[side] is None:
            raise QueryError(
                f"{side}: name both runs to compare (a=RUN&b=RUN, each RUN or RUN:JUDGE).",
                field=side,
            )
    return RunChoice(str(given["a"]), str(given["b"]), given["judge"], given["task"])


def run_choices(results_dir: Path) -> list[str]:
    """The runs of the project, by name."""
    return run_ids(results_dir)


def judges_of_runs(results_dir: Path, choice: RunChoice) -> list[str]:
    """The judges either chosen run holds, sorted (for a 400 that names what exists)."""
    judges: set[str] = set()
    runs = run_ids(results_dir)
    for ref in (choice.a, choice.b):
        run_id = ref.split(":", 1)[0]
        if run_id in runs:
            judges.update(run_judges(results_dir, run_id))
    return sorted(judges)


def saved_comparisons(reports_dir: Path) -> list[RunComparison]:
    """The comparisons `compare-runs` saved under `reports/compare-runs/`.

    Raises:
        StateError: A saved file is not a comparison (it names the file).
    """
    return read_comparisons(reports_dir / COMPARISONS_FOLDER)


def compared(
    results_dir: Path, annotations_dir: Path, eval_task: Any, choice: RunChoice
) -> RunComparison:
    """The comparison of the chosen runs, computed now and saved nowhere.

    Raises:
        ProjectError, TaskError, ScoringError, UnsafeNameError: As `compare_runs` (an unknown
            run or judge, no shared row ...), each naming what exists.
    """
    return compare_runs(
        results_dir, annotations_dir, eval_task, choice.a, choice.b,
        judge_id=choice.judge, task=choice.task,
    )  # fmt: skip
