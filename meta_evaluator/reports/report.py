"""Collect a project's results and scores, and write the report files atomically."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from meta_evaluator.judge.run_files import CompleteRun
from meta_evaluator.llm.prices import read_prices
from meta_evaluator.reports._tables import RESULT_COLUMNS, judge_rows, reason_rows, score_rows
from meta_evaluator.reports.html import STYLE, escape, markdown_table
from meta_evaluator.reports.inputs import ReportedProject, ReportInputs
from meta_evaluator.reports.sections import JUDGE_COLUMNS, SCORE_COLUMNS, SECTIONS
from meta_evaluator.results.pair_votes import is_pair_votes
from meta_evaluator.scores.base_scoring_result import BaseScoringResult
from meta_evaluator.storage import atomic_write_text, write_csv

if TYPE_CHECKING:
    import polars as pl

__all__ = ["ReportedProject", "load_scores", "read_report_inputs", "render_page", "write_report"]


@runtime_checkable
class _ResultFolders(Protocol):
    """Where a project keeps its results: a `MetaEvaluator`'s `paths` has both."""

    @property
    def results_dir(self) -> Path: ...
    @property
    def annotations_dir(self) -> Path: ...


def load_scores(scores_dir: Path) -> dict[str, list[BaseScoringResult]]:
    """`<scorer>/<metric>` -> results by judge, from the JSON files under `scores_dir` (sorted)."""
    table: dict[str, list[BaseScoringResult]] = {}
    if not scores_dir.is_dir():
        return table
    for path in sorted(scores_dir.glob("*/*/*_result.json")):
        key = f"{path.parent.parent.name}/{path.parent.name}"
        table.setdefault(key, []).append(BaseScoringResult.load_state(path))
    return table


def write_report(evaluator: ReportedProject, out_dir: str | Path | None = None) -> Path:
    """Write the report of the project's current results and scores; return report.html's path.

    Prices for the cost column come from `<project>/prices.yaml` when it exists: a mapping of
    model (or judge id) to `prompt` and `completion` US dollars per million tokens, and
    optionally `batch_prompt` and `batch_completion` for rows a provider batch answered (half
    the live price by default); `meta_evaluator.llm.prices` reads it.

    Raises:
        PricesError: `prices.yaml` cannot be used (a `StateError`).
        StateError: A results or scores file cannot be read.
        StorageError: A report file cannot be written.
    """
    folder = Path(out_dir) if out_dir is not None else evaluator.paths.reports_dir
    inputs = read_report_inputs(evaluator)
    write_csv(folder / "scores.csv", inputs.score_table)
    atomic_write_text(folder / "scores.md", markdown_table(inputs.score_table, SCORE_COLUMNS))
    write_csv(folder / "judges.csv", inputs.judge_table)
    atomic_write_text(folder / "judges.md", markdown_table(inputs.judge_table, JUDGE_COLUMNS))
    target = folder / "report.html"
    atomic_write_text(target, render_page(inputs))
    return target


def read_report_inputs(evaluator: ReportedProject) -> ReportInputs:
    """Read what the report shows from the project (results, scores, plots, prices)."""
    judges, humans, runs = _results(evaluator)
    votes = frozenset(j for j, frame in judges.items() if is_pair_votes(frame))
    shown = {j: frame for j, frame in judges.items() if j not in votes}  # the judges' tables
    models = {j.id: j.model for j in evaluator.judge_registry.values()}
    prices = read_prices(evaluator.project_dir / "prices.yaml")
    scores = load_scores(evaluator.paths.scores_dir)
    scores_dir = evaluator.paths.scores_dir
    price_table = prices.table if prices is not None else None
    return ReportInputs(
        project=evaluator,
        project_name=evaluator.project_dir.resolve().name,
        judges=judges,
        humans=humans,
        scores=scores,
        score_table=score_rows(scores),
        judge_table=judge_rows(shown, price_table, models, {j: r.run_id for j, r in runs.items()}),
        reasons=reason_rows(shown),
        plots=sorted(scores_dir.glob("*/*/*.png")),
        judge_runs=runs,
        vote_sets=votes,
        has_prices=prices is not None,
    )


def render_page(inputs: ReportInputs) -> str:
    """report.html: the page's sections (`sections.SECTIONS`) in one self-contained file."""
    head = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>meta-evaluator report: {escape(inputs.project_name)}</title>"
        f"<style>{STYLE}</style></head><body>"
    )
    body = [html for section in SECTIONS if (html := section(inputs))]
    return "\n".join([head, *body, "</body></html>"]) + "\n"


def _results(
    evaluator: ReportedProject,
) -> tuple[dict[str, pl.DataFrame], Mapping[str, Any], dict[str, CompleteRun]]:
    """Every judge's latest rows (the columns tables read) and run; the annotators' labels.

    A project whose `paths` names its results folders is read there, only `RESULT_COLUMNS`
    and the task's labels of each judge's table, and the outcomes and labels of each
    annotator's (a million rows' raw answers stay on disk), in the order
    `load_all_judge_results` gives (the data's ids). Any other `ReportedProject` is asked
    through its two load methods.
    """
    paths = evaluator.paths
    if not isinstance(paths, _ResultFolders):
        loaded = evaluator.load_all_judge_results()
        judges = {j: r.results_data for j, r in loaded.items()}
        runs = {j: CompleteRun(r.run_id, None) for j, r in loaded.items()}
        return judges, evaluator.load_all_human_results(), runs
    from meta_evaluator.judge.run_files import latest_complete_runs
    from meta_evaluator.results.human_results import latest_annotations
    from meta_evaluator.results.judge_results import latest_results

    data, task = evaluator.data, evaluator.eval_task
    ids = data.ids if data is not None else None
    labels = list(task.task_names) if task is not None else []  # the disagreement section's
    single = [t for t in labels if task is not None and task.task_kind(t) == "single"]
    found = latest_results(
        paths.results_dir, ids, columns=[*RESULT_COLUMNS, *labels], categories=single
    )
    columns = ("original_id", "outcome", "status", *labels)
    humans = latest_annotations(paths.annotations_dir, columns=columns, categories=single)
    completed = latest_complete_runs(paths.results_dir)  # when each run completed
    runs = {
        j: CompleteRun(r.run_id, completed[j].completed_at if j in completed
                       and completed[j].run_id == r.run_id else None)
        for j, r in found.items()
    }  # fmt: skip
    return {j: r.results_data for j, r in found.items()}, humans, runs
