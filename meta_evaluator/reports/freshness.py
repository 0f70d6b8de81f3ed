"""Are the saved scores those of each judge's latest run and of the current human labels?

Each score records the judge's run and the annotators' label sets it was computed from
(`ScoringResult.run_id`, `human_run_ids`). A judge run again, or labels imported again, since
the last `meta-evaluator score` leaves scores of the old run beside the rows of the new one:
`stale_scores` finds each such judge, and `freshness` puts the warning at the top of the
report. Scores saved before the runs were recorded are held against the time the judge's
latest run completed. `meta-evaluator status` prints the same findings.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from meta_evaluator.judge.run_files import CompleteRun
from meta_evaluator.reports.html import escape
from meta_evaluator.reports.inputs import ReportInputs
from meta_evaluator.scores.base_scoring_result import ScoringResult

__all__ = ["StaleScores", "fix_commands", "freshness", "scored_runs", "stale_scores"]


@dataclass(frozen=True)
class StaleScores:
    """One judge whose saved scores are not those of its latest run and current labels."""

    judge_id: str
    latest_run: str
    """The judge's latest complete run (what the report's rows and tables show)."""
    scored_runs: tuple[str, ...]
    """The runs its saved scores come from (empty when they do not say, or there are none)."""
    reasons: tuple[str, ...]
    """What changed, one phrase each (plain text; run ids in `backquotes`)."""


def scored_runs(results: Sequence[ScoringResult]) -> tuple[str, ...]:
    """The distinct runs `results` were computed from, in order of first mention."""
    return tuple(dict.fromkeys(r.run_id for r in results if r.run_id is not None))


def stale_scores(
    scores: Mapping[str, Sequence[ScoringResult]],
    latest_runs: Mapping[str, CompleteRun],
    human_runs: Mapping[str, str] | None,
    *,
    unscored_ok: Collection[str] = (),
) -> list[StaleScores]:
    """Each judge whose scores come from another run than its latest, or from other labels.

    Args:
        scores: `<scorer>/<metric>` -> the saved results (`load_scores`).
        latest_runs: Judge id -> its latest complete run (`latest_complete_runs`).
        human_runs: Annotator id -> the run of their current labels; None: not checked.
        unscored_ok: Judges that need no score (the votes imported with preference pairs):
            they are not named for having none.

    Returns:
        One entry per judge with a reason, in judge id order; none when no score is saved.
    """
    by_judge: dict[str, list[ScoringResult]] = {}
    for results in scores.values():
        for result in results:
            by_judge.setdefault(result.judge_id, []).append(result)
    if not by_judge:
        return []
    found = []
    for judge_id, latest in sorted(latest_runs.items()):
        results = by_judge.get(judge_id, [])
        reasons = []
        if not results:
            if judge_id in unscored_ok:
                continue
            reasons.append(f"its latest run `{latest.run_id}` has no scores yet")
        older = [r.run_id for r in results if r.run_id is not None and r.run_id != latest.run_id]
        if older:
            runs = ", ".join(f"`{run}`" for run in dict.fromkeys(older))
            reasons.append(f"scored on run {runs}; its latest run is `{latest.run_id}`")
        if any(_scored_before(r, latest) for r in results):
            reasons.append(
                f"scored before its latest run `{latest.run_id}` completed "
                f"({_when(latest.completed_at)}; these scores do not record their run)"
            )
        if human_runs is not None:
            changed = _labels_changed(results, human_runs)
            if changed:
                reasons.append(f"the human labels changed since it was scored ({changed})")
        if reasons:
            found.append(StaleScores(judge_id, latest.run_id, scored_runs(results), tuple(reasons)))
    return found


def _scored_before(result: ScoringResult, latest: CompleteRun) -> bool:
    """A result without a run, computed before the latest run completed."""
    if result.run_id is not None or latest.completed_at is None:
        return False
    try:
        completed = dt.datetime.fromisoformat(latest.completed_at)
    except ValueError:
        return False
    if completed.tzinfo is None:
        completed = completed.replace(tzinfo=dt.UTC)
    stamp = result.timestamp
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.UTC)
    return stamp < completed


def _when(iso: str | None) -> str:
    try:
        return f"{dt.datetime.fromisoformat(iso or ''):%Y-%m-%d %H:%M} UTC"
    except ValueError:
        return str(iso)


def _labels_changed(results: Sequence[ScoringResult], now: Mapping[str, str]) -> str:
    """`ana: run_a -> run_b; dan added`: how the labels differ from those scored ("" if not)."""
    changes: dict[str, None] = {}
    for result in results:
        before = result.human_run_ids
        if before is None:
            continue
        for annotator in sorted({*before, *now}):
            old, new = before.get(annotator), now.get(annotator)
            if old == new:
                continue
            if old is None:
                changes[f"{annotator} added"] = None
            elif new is None:
                changes[f"{annotator} removed"] = None
            else:
                changes[f"{annotator}: `{old}` -> `{new}`"] = None
    return "; ".join(changes)


def fix_commands(project: str) -> str:
    """What to run to bring the scores up to date (plain text)."""
    return (
        f"run `meta-evaluator score {project}` to score each judge's latest run (or "
        f"`meta-evaluator all {project}` to run, score and report in one go), then "
        f"`meta-evaluator report {project}`"
    )


def freshness(inputs: ReportInputs) -> str:
    """The warning at the top of the page when scores are out of date ("" when they are not)."""
    humans = {h: str(r.run_id) for h, r in inputs.humans.items() if hasattr(r, "run_id")}
    stale = stale_scores(
        inputs.scores, inputs.judge_runs, humans if inputs.humans else None,
        unscored_ok=inputs.vote_sets,
    )  # fmt: skip
    if not stale:
        return ""
    items = "".join(
        f"<li><strong>{escape(s.judge_id)}</strong>: {_with_code('; '.join(s.reasons))}.</li>"
        for s in stale
    )
    fix = fix_commands(inputs.project_name)
    return (
        "<div class='stale'><h2>These scores are out of date</h2>"
        "<p>Some judges' scores were not computed from their latest run and the current "
        "human labels. The verdict, the Scores table and the sections built on scores show "
        "what was scored then; the disagreements and the Judges table show the latest run.</p>"
        f"<ul>{items}</ul><p><strong>To fix:</strong> {_with_code(fix)}.</p></div>"
    )


def _with_code(text: str) -> str:
    """Plain text with its `backquoted` parts as <code>, escaped."""
    parts = text.split("`")
    return "".join(
        f"<code>{escape(part)}</code>" if i % 2 else escape(part) for i, part in enumerate(parts)
    )
