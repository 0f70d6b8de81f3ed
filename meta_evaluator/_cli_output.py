"""What `meta-evaluator run` and `score` print, besides the errors `cli.main` prints.

`run`: the endpoint check (`--check`), the dry-run plan, each judge's counts and top error
reasons at the end of a run, and what was saved when a run is stopped (Ctrl-C, SIGTERM).
`score`: each metric's scores and trait tables, and why a judge was not scored with the command
that fixes it. `compare-runs`: the rows that flipped and the change in agreement. The commands,
their exit codes and signal handling stay in `meta_evaluator.cli`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from meta_evaluator.judge import RunSummary
    from meta_evaluator.project import MetaEvaluator
    from meta_evaluator.results import JudgeResults
    from meta_evaluator.results.unfinished import RowFile, Unscored
    from meta_evaluator.scores.base_scoring_result import ScoringResult
    from meta_evaluator.scores.compare import ScoreTable
    from meta_evaluator.scores.run_comparison import RunComparison
    from meta_evaluator.stats.paired import ScoreChange


def print_checks(evaluator: MetaEvaluator, judge_ids: list[str] | None) -> bool:
    """Check each endpoint of the judges once and print one line each; whether all passed."""
    print("Endpoint check (one request per endpoint, listing its models):")
    checks = evaluator.check_endpoints(judge_ids)
    for result in checks:
        print(f"  {result.line()}")
    failed = sum(not result.ok for result in checks)
    if failed:
        print(f"{failed} of {len(checks)} endpoints failed.")
    else:
        print("Every endpoint answered.")
    return not failed


def print_run_summary(
    results: dict[str, JudgeResults],
    part: tuple[int, int] | None,
    results_dir: Path,
    *,
    stopped: Collection[str] = (),
    max_cost: float | None = None,
) -> tuple[int, int]:
    """Print each judge's counts, then the top reasons of its errors; return (errors, waiting).

    A judge's line says how many of its rows were answered from the response cache.

    Printed on every run, terminal or not: a scheduler's log says why rows failed. A judge in
    `stopped` (named by the run's `JudgeRunError`) is labelled so; with a cost ceiling
    (`max_cost`) each judge's cost is shown, the run's total against the ceiling, and an
    unfinished judge has rows not asked; any other unfinished judge has batches still running,
    and counts in `waiting`.
    """
    from meta_evaluator.results.reasons import summarize_errors

    errors, waiting = 0, 0
    for judge_id, result in results.items():
        counts = result.counts()
        errors += counts["error"]
        shown = " ".join(f"{k}={v}" for k, v in counts.items() if k != "skipped")
        frame = result.results_data
        cached = int(frame["cached"].sum()) if "cached" in frame.columns else 0
        if cached:
            shown += f" ({cached} from the response cache)"
        of = f", shard {part[0]}/{part[1]}" if part is not None else ""
        if result.cost_usd is not None:
            shown += f" cost=${result.cost_usd:.4f}"
        if judge_id in stopped:
            shown += " (stopped: see the error below)"
        elif max_cost is not None and not result.complete:
            shown += " (stopped at the cost ceiling: rows not asked remain)"
        elif not result.complete:
            waiting += 1
            shown += " (batches still running: run again with --batch to collect them)"
        print(f"{judge_id}: {shown} (run {result.run_id}{of})")
    for judge_id, result in results.items():
        reasons = summarize_errors(result.results_data, sep=" — ")
        if reasons is not None:
            print(f"judge {judge_id}: {reasons}")
    if max_cost is not None:
        spent = sum(r.cost_usd or 0.0 for r in results.values())
        print(f"Spent ${spent:.4f} of --max-cost ${max_cost:.4f} (priced by prices.yaml)")
    print(f"Results are in {results_dir}")
    return errors, waiting


def print_plan(
    plan: RunSummary, lock_holder: str | None, shard: tuple[int, int] | None = None
) -> None:
    """Print what `run --dry-run` would do, judge by judge, then the totals."""
    print("Dry run: nothing is called and nothing is written.")
    if shard is not None:
        print(f"Shard {shard[0]}/{shard[1]}: only the rows of this part are counted.")
    for judge in plan.judges:
        source = f" (from {judge.base_url_from})" if judge.base_url_from else ""
        print(f"{judge.judge_id}: {judge.llm_client} {judge.model!r} at {judge.base_url}{source}")
        if judge.action == "done":
            where = f"run {judge.run_id} is complete with every row; nothing to ask"
        elif judge.action == "continue":
            where = f"continues run {judge.run_id}"
        elif judge.action == "start":
            where = f"starts run {judge.run_id}"
        elif judge.action == "restart":
            where = f"starts run {judge.run_id} over (no resume: its rows are asked again)"
        elif judge.source_run_id is not None:
            where = f"a new run, reusing rows of the complete run {judge.source_run_id}"
        else:
            where = "a new run"
        print(f"  run:              {where}")
        print(f"  rows:             {judge.rows}")
        print(f"  reused:           {judge.reused}")
        if judge.batch:
            print("  mode:             batch (the provider's batch API)")
            print(f"  in batches:       {judge.in_batches} (submitted before; collected)")
            print(
                f"  new batches:      {judge.batches} ({judge.batch_bytes / 1e6:.1f} MB of "
                "requests)"
            )
        print(f"  calls:            {judge.calls}")
        if judge.from_cache:
            print(
                f"  from the cache:   {judge.from_cache} (answers stored by earlier runs; no call)"
            )
        print(f"  estimated tokens: {judge.estimated_tokens}")
        if judge.estimated_cost is not None:
            print(f"  estimated cost:   ${judge.estimated_cost:.4f}")
    count = len(plan.judges)
    cached = f", {plan.from_cache} answers from the response cache" if plan.from_cache else ""
    print(
        f"Total: {count} judge{'s' if count != 1 else ''}, {plan.rows} rows, {plan.reused} "
        f"reused, {plan.calls} calls{cached}, {plan.estimated_tokens} estimated tokens"
    )
    print(
        f"Calls are counted before retries (each failed call may be retried {plan.max_retries} "
        "times); estimated tokens are an upper estimate per call, the prompt plus the answer "
        "allowed, as the tokens-per-minute budget counts them."
    )
    if plan.estimated_cost is not None and plan.max_cost is not None:
        print(
            f"Estimated cost ${plan.estimated_cost:.4f} against --max-cost "
            f"${plan.max_cost:.4f} (what the ceiling reserves, priced by prices.yaml, before "
            "retries: prompts at 4 characters a token, answers at max_tokens or 1,024; code or "
            "non-Latin text can cost more): "
            + (
                "the ceiling should not be in the way."
                if plan.estimated_cost <= plan.max_cost
                else "the run may stop at the ceiling, leaving rows to do."
            )
        )
    if lock_holder is not None:
        print(f"Note: another command is changing this project now ({lock_holder}).")
    others = "the others run" if plan.judges else "no judge is left to run"
    for line in plan.refused:
        print(f"Refused (makes no call; {others}): {line}")


def print_saved(
    saved: list[tuple[RowFile, pl.DataFrame]],
    judge_ids: list[str],
    rows: int | None,
    how: str,
    results_dir: Path,
) -> None:
    """Each judge's counts and top error reasons in the row files a stopped run wrote."""
    from meta_evaluator.results.reasons import summarize_errors

    print(
        f"Stopped {how} before the end. Saved so far (finished rows are kept; `run` again "
        "continues the run):"
    )
    reasons = []
    for judge_id in judge_ids:
        files = [(file, frame) for file, frame in saved if file.judge_id == judge_id]
        if not files:
            print(f"{judge_id}: no row finished")
        for file, frame in files:
            counts = dict(frame.group_by("outcome").len().iter_rows()) if frame.height else {}
            shown = " ".join(
                f"{outcome}={counts.get(outcome, 0)}" for outcome in ("valid", "invalid", "error")
            )
            of = f"{frame.height} of {rows} rows" if rows is not None else f"{frame.height} rows"
            done = "complete" if file.complete else "unfinished"
            print(f"{judge_id}: {shown} (run {file.run_id}, {of}, {done})")
            summary = summarize_errors(frame, sep=" — ")
            if summary is not None:
                reasons.append(f"judge {judge_id}: {summary}")
    for line in reasons:
        print(line)
    print(f"Results are in {results_dir}")


def print_scores(
    table: ScoreTable, scores_dir: Path, left_out: Mapping[str, Mapping[str, str]] | None = None
) -> int:
    """Print each metric's scores, judge by judge, and its trait table; return the judges failed.

    A judge the metric could not score is printed with its error and counted; the votes
    imported with preference pairs that a metric leaves out (`left_out`: metric -> judge ->
    why) are said, not counted.
    """
    failed = 0
    for name, (metric, results) in table.items():
        print(f"{metric.scorer.scorer_name} / {name}")
        for judge_id, why in (left_out or {}).get(name, {}).items():
            print(f"  {judge_id}: left out: {why}")
        for result in results:
            if result.error is not None:
                failed += 1
                print(f"  {result.judge_id}: not scored: {result.error}")
                continue
            intervals = result.confidence_intervals or {}
            aliases = getattr(metric.scorer, "score_aliases", {})  # 0.3.3's keys, in the JSON
            shown = ", ".join(
                f"{key}={_number(value)}{_interval_text(intervals.get(key))}"
                for key, value in result.scores.items()
                if not isinstance(value, dict) and aliases.get(key) not in result.scores
            )
            print(
                f"  {result.judge_id}: {shown}{_baseline_text(result.metadata)}"
                f"{_spread_text(result)}"
            )
        folder = scores_dir / metric.scorer.scorer_name / name
        trait_table = folder / "trait_table.md"
        if trait_table.is_file():
            traits = list(metric.task_names)
            ranked = (
                "traits ranked by strength"
                if len(traits) > 1
                else f"strength on {traits[0]}, judges ranked"
            )
            print(f"  {ranked} ({trait_table}):")
            print("    " + trait_table.read_text(encoding="utf-8").rstrip().replace("\n", "\n    "))
    return failed


def _spread_text(result: ScoringResult) -> str:
    """`; mean of 4 traits: strength from -0.689 (x) to 0.393 (y)`: what a mean hides."""
    from meta_evaluator.reports import main_score, task_spread

    key = main_score(result)
    spread = task_spread(result, key)
    if spread is None:
        return ""
    noun = "traits" if result.scorer_name == "preference" else "tasks"
    return (
        f"; mean of {spread.tasks} {noun}: {key} from {_number(spread.low)} ({spread.low_task}) "
        f"to {_number(spread.high)} ({spread.high_task})"
    )


def _interval_text(bounds: tuple[float | None, float | None] | None) -> str:
    """` [0.632, 0.842]`: a score's bootstrap interval, printed as the humans' is; or nothing."""
    if bounds is None or bounds[0] is None or bounds[1] is None:
        return ""
    return f" [{_number(bounds[0])}, {_number(bounds[1])}]"


def _baseline_text(metadata: dict[str, object]) -> str:
    """`; humans' own cohens_kappa=0.857 [0.718, 0.965]`: the human baseline beside a score."""
    baseline = metadata.get("human_baseline")
    if not isinstance(baseline, dict):
        return ""
    value = baseline.get("value")
    if value is None:
        return f"; humans' own: n/a ({baseline.get('reason')})"
    interval = baseline.get("interval")
    bounds = f" [{_number(interval[0])}, {_number(interval[1])}]" if interval else ""
    return f"; humans' own {baseline.get('score')}={_number(value)}{bounds}"


def unscored_line(project_dir: Path, judge: Unscored) -> str:
    """`judge 'x' not scored: its latest run … is unfinished (…); <the command that fixes it>`."""
    import shlex

    command = f"meta-evaluator run {shlex.quote(str(project_dir))} --judges {judge.judge_id}"
    if judge.run_id is None:
        fix = f"run `{command}`"
    elif judge.sharded:
        fix = f"run the shards not complete with `{command} --run-id {judge.run_id} --shard K/N`"
    elif judge.errors:
        fix = f"fix the cause, then run `{command} --retry error`"
    else:
        fix = f"run `{command}` to finish it"
    return f"judge {judge.judge_id!r} not scored: {judge.reason}; {fix}"


#: Flipped rows `compare-runs` prints; the JSON (`--json`, and the saved file) has them all.
FLIPS_SHOWN = 50


def print_run_comparison(comparison: RunComparison, saved: Path) -> None:
    """What changed from run A to run B: the flipped rows, the scores, McNemar; where it went."""
    c = comparison
    a, b = c.side_names()
    judge = f", judge {c.run_a.judge_id}" if c.run_a.judge_id == c.run_b.judge_id else ""
    same = c.run_a.fingerprint is not None and c.run_a.fingerprint == c.run_b.fingerprint
    how = "same judge configuration" if same else "the judge configuration differs"
    print(f"Runs {a} -> {b}{judge}, task {c.task} ({how})")
    print(
        f"Rows compared: {c.items} (labelled by both; {c.only_in_a} only by {a}, "
        f"{c.only_in_b} only by {b})"
    )
    flips = len(c.flipped)
    if c.toward is None:
        moved = f"no direction: {c.human_reason}"
    else:
        moved = (
            f"{c.toward} toward the humans' majority, {c.away} away, {c.neither} wrong both "
            f"times" + (f", {c.unrated} without a human label" if c.unrated else "")
        )
    print(f"Flipped: {flips} of {c.items} rows ({moved})")
    if flips:
        rows = [
            (str(f.id), _label(f.a), _label(f.b), _label(f.human), f.direction)
            for f in c.changes[:FLIPS_SHOWN]
        ]
        head = ("id", a, b, "humans", "direction")
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        for row in [head, *rows]:
            print("  " + "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
        if flips > FLIPS_SHOWN:
            print(f"  ... and {flips - FLIPS_SHOWN} more (all of them: --json, or {saved})")
    print_score_changes(c.scores, a, b, c.bootstrap.confidence_level)
    if c.mcnemar_p is not None:
        print(
            f"McNemar's exact test on the rows right in one run and wrong in the other "
            f"({c.toward} toward, {c.away} away): p = {c.mcnemar_p:.3g}"
        )
    else:
        print(f"McNemar's exact test: n/a ({c.mcnemar_reason})")
    print(f"Saved to {saved}")


def print_score_changes(
    scores: Sequence[ScoreChange], a: str, b: str, confidence_level: float
) -> None:
    """The agreement scores of runs `a` and `b`, the change and its interval; why one is n/a."""
    from meta_evaluator.scores.run_comparison import SCORE_TITLES

    head = ("score", a, b, "change", f"{confidence_level:.0%} interval")
    table = [head]
    for score in scores:
        interval = (
            f"[{score.low:+.3f}, {score.high:+.3f}]"
            if score.low is not None and score.high is not None
            else "n/a"
        )
        change = "n/a" if score.difference is None else f"{score.difference:+.3f}"
        table.append((SCORE_TITLES.get(score.name, score.name), _number(score.a),
                      _number(score.b), change, interval))  # fmt: skip
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    for row in table:
        print("  ".join(v.ljust(w) if i == 0 else v.rjust(w)
                        for i, (v, w) in enumerate(zip(row, widths, strict=True))))  # fmt: skip
    reasons = dict.fromkeys(s.reason for s in scores if s.reason)
    for reason in reasons:
        print(f"  n/a: {reason}")


def _label(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def _number(value: object) -> str:
    """A score as the command prints it: floats to 3 places, in an interval or list too."""
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_number(v) for v in value) + "]"
    return "n/a" if value is None else str(value)
