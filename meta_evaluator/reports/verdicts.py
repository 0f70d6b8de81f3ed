"""The report's verdicts: one line per judge, "stands in", "does not" or "undecided".

From the saved scores alone: the alt-test where it ran, else each agreement score's interval
held against the humans' baseline (`stats.verdict`, the rule; stated under the verdicts and
in docs/scoring.md). `judge_verdicts` is pure; `verdicts` is the page's section.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from meta_evaluator.reports.freshness import scored_runs
from meta_evaluator.reports.html import escape
from meta_evaluator.reports.inputs import ReportInputs
from meta_evaluator.scores.base_scoring_result import BaseScoringResult
from meta_evaluator.scores.human_baseline import HumanBaseline
from meta_evaluator.stats.verdict import Verdict, interval_verdict, overall_verdict

__all__ = ["RULE", "JudgeVerdict", "judge_verdicts", "verdicts"]

#: The rule, as the report states it under the verdicts.
RULE = (
    "Where the alt-test ran, it decides: passed, the judge stands in; failed, it does not "
    "(with several alt-tests, each must pass). Otherwise each agreement score's bootstrap "
    "interval is held against the humans' baseline interval (the same statistic between the "
    "humans, over the same resampled items): the judge does not stand in when its interval "
    "lies wholly below the humans'; it stands in when its estimate lies within or above the "
    'humans\' interval; otherwise it is undecided. Over several scores, one "does not" '
    'decides, and "stands in" needs every score that has both intervals to stand in. '
    "Without an alt-test or such a score the verdict is undecided."
)

_CLASS: dict[Verdict, str] = {"stands in": "pass", "does not": "fail", "undecided": "warn"}


@dataclass(frozen=True)
class JudgeVerdict:
    """One judge's verdict, and what it rests on (one phrase per score consulted)."""

    judge: str
    verdict: Verdict
    basis: tuple[str, ...]


def judge_verdicts(scores: Mapping[str, Sequence[BaseScoringResult]]) -> list[JudgeVerdict]:
    """Each judge's verdict from the saved results (`<scorer>/<metric>` -> one per judge).

    Only judges with an alt-test or an agreement score with a human baseline get one, in the
    order of their judge ids.
    """
    alt: dict[str, list[tuple[str, bool, str]]] = {}
    agreement: dict[str, list[tuple[str, Verdict | None, str]]] = {}
    for metric, results in sorted(scores.items()):
        for result in results:
            if result.error is not None:
                continue
            if result.scorer_name == "alt_test" and isinstance(result.scores.get("passed"), bool):
                alt.setdefault(result.judge_id, []).append(_alt_test(metric, result))
                continue
            baseline = HumanBaseline.from_metadata(result.metadata.get("human_baseline"))
            if baseline is not None:
                agreement.setdefault(result.judge_id, []).append(
                    _against_humans(metric, result, baseline)
                )
    out = []
    for judge in sorted(set(alt) | set(agreement)):
        tests = alt.get(judge, [])
        compared = agreement.get(judge, [])
        verdict = overall_verdict([t[1] for t in tests], [c[1] for c in compared])
        # the alt-tests first (they decide where they ran), then the scores against the humans
        basis = tuple(t[2] for t in tests) + tuple(c[2] for c in compared if c[1] is not None)
        if not basis:
            basis = (
                "no agreement score has intervals for both the judge and the humans; add a "
                "bootstrap to the metrics (BootstrapConfig, `bootstrap:` in metrics.yaml)",
            )
        out.append(JudgeVerdict(judge, verdict, basis))
    return out


def _alt_test(metric: str, result: BaseScoringResult) -> tuple[str, bool, str]:
    passed = bool(result.scores["passed"])
    epsilon = result.metadata.get("epsilon")
    rates = result.scores.get("winning_rate") or {}
    rate = None
    if isinstance(rates, dict) and epsilon is not None:
        rate = next((v for k, v in rates.items() if abs(float(k) - float(epsilon)) < 1e-9), None)
    shown = "n/a" if rate is None else f"{rate:.2f}"
    what = "passed" if passed else "failed"
    return metric, passed, f"{_name(metric)}: {what} (winning rate {shown} at ε = {epsilon})"


def _against_humans(
    metric: str, result: BaseScoringResult, baseline: HumanBaseline
) -> tuple[str, Verdict | None, str]:
    value = result.scores.get(baseline.score)
    number = float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None  # fmt: skip
    interval = (result.confidence_intervals or {}).get(baseline.score)
    verdict = interval_verdict(number, interval, baseline.interval)
    if verdict is None or number is None or interval is None or baseline.interval is None:
        return metric, None, f"{_name(metric)}: no intervals to compare"
    judge = f"{number:.3f} [{_bound(interval[0])}, {_bound(interval[1])}]"
    humans = f"[{_bound(baseline.interval[0])}, {_bound(baseline.interval[1])}]"
    where = {
        "does not": "wholly below",
        "stands in": "within" if number <= (baseline.interval[1] or 0.0) else "above",
        "undecided": "below but overlapping",
    }[verdict]
    return metric, verdict, f"{_name(metric)}: {judge} {where} the humans' {humans}"


def _name(metric: str) -> str:
    """The metric's own name (`accuracy/rejection_accuracy` -> `rejection_accuracy`)."""
    return metric.rsplit("/", 1)[-1]


def _bound(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def verdicts(inputs: ReportInputs) -> str:
    """The section: one line per judge, then the rule (nothing without humans or verdicts)."""
    if not inputs.humans:
        return ""
    found = judge_verdicts(inputs.scores)
    if not found:
        return ""
    runs: dict[str, list[BaseScoringResult]] = {}
    for results in inputs.scores.values():
        for result in results:
            runs.setdefault(result.judge_id, []).append(result)
    lines = []
    for v in found:
        scored = ", ".join(f"<code>{escape(r)}</code>" for r in scored_runs(runs.get(v.judge, [])))
        on = f"scored on run {scored}; " if scored else ""
        lines.append(
            f"<li><strong>{escape(v.judge)}</strong>: <span class='{_CLASS[v.verdict]}'>"
            f"{escape(v.verdict)}</span> <span class='muted'>({on}{escape('; '.join(v.basis))})"
            "</span></li>"
        )
    return (
        "<h2>Verdict: can each judge stand in for the humans?</h2>"
        f"<ul class='verdicts'>{''.join(lines)}</ul>"
        f"<p class='muted'><strong>Rule.</strong> {escape(RULE)}</p>"
    )
