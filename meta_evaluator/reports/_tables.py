"""The report's tables, from results and scores already computed (pure: no I/O, no metrics).

Each function turns loaded objects into rows (lists of dicts) that the HTML, CSV and Markdown
writers share, so the three formats cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from meta_evaluator._util import finite_number
from meta_evaluator.llm.prices import Price
from meta_evaluator.scores.base_scoring_result import BaseScoringResult
from meta_evaluator.scores.human_baseline import HumanBaseline
from meta_evaluator.scores.metrics.kappa import interpret_kappa
from meta_evaluator.stats.verdict import interval_verdict

__all__ = [
    "MAIN_SCORES",
    "RESULT_COLUMNS",
    "TaskSpread",
    "judge_rows",
    "main_score",
    "reason_rows",
    "score_rows",
    "task_spread",
]

#: The result columns `judge_rows` and `reason_rows` read (`original_id` to merge a sharded
#: run's rows; `fingerprint` to tell the votes imported with preference pairs): the labels, raw
#: answers and time stamps of a million rows can stay on disk.
RESULT_COLUMNS = (
    "original_id", "outcome", "status", "error_message", "llm_prompt_tokens",
    "llm_completion_tokens", "llm_call_duration_seconds", "batch_id", "cached", "fingerprint",
)  # fmt: skip

#: The score shown for each scorer in the judges x metrics table.
MAIN_SCORES = {
    "accuracy": "accuracy",
    "classification_accuracy": "accuracy",
    "classification_f1": "f1",
    "classification_precision": "precision",
    "classification_recall": "recall",
    "cohens_kappa": "cohens_kappa",
    "alt_test": "advantage_probability",
    "text_similarity": "similarity",
    "semantic_similarity": "semantic_similarity",
    "krippendorff_alpha": "alpha",
    "preference": "strength",
    "fairness": "statistical_parity_difference",
    "stereotype": "icat",
    "counterfactual": "change_rate_overall",
    "multiple_choice": "overall_accuracy",
    "position_bias": "first_position_rate",
    "self_consistency": "fleiss_kappa",
}


@dataclass(frozen=True)
class TaskSpread:
    """How a score averaged over the tasks of a multitask metric spreads over them."""

    tasks: int
    """The tasks with a value, the mean's terms."""
    low: float
    low_task: str
    high: float
    high_task: str


def main_score(result: BaseScoringResult) -> str | None:
    """The score the tables show for a result: the scorer's main one, else its first number."""
    return MAIN_SCORES.get(result.scorer_name) or next(
        (k for k, v in result.scores.items() if _number(v)), None
    )


def task_spread(result: BaseScoringResult, key: str | None) -> TaskSpread | None:
    """The lowest and highest task value of score `key` when the result averages tasks.

    None for a result of one task, or with fewer than two tasks that have the score: a mean
    hides how far its terms lie apart (+0.39 and -0.69 average to about 0), so the tables show
    them beside it.
    """
    per_task = result.metadata.get("per_task")
    if key is None or not isinstance(per_task, dict):
        return None
    values = [
        (float(entry["scores"][key]), str(task))
        for task, entry in per_task.items()
        if isinstance(entry, dict)
        and isinstance(entry.get("scores"), dict)
        and _number(entry["scores"].get(key))
    ]
    if len(values) < 2:
        return None
    low, high = min(values), max(values)
    return TaskSpread(len(values), low[0], low[1], high[0], high[1])


def judge_rows(
    results: Mapping[str, pl.DataFrame],
    prices: Mapping[str, Price] | None = None,
    models: Mapping[str, str] | None = None,
    runs: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Per judge: its run, rows per outcome, tokens, latency (mean, p50, p95), cost.

    `runs` names each judge's run (the one whose rows `results` holds); None where not given.

    `prices` maps a model (or judge id, which wins) to its `Price` (`prices.yaml`: rows a
    provider batch answered at its batch price); without a price the cost is None. Rows answered
    from the response cache (`cached`) cost nothing: their tokens are counted, not priced.
    """
    rows = []
    for judge_id, frame in results.items():
        valid, invalid, error = frame.select(
            (pl.col("outcome") == o).sum().alias(o) for o in ("valid", "invalid", "error")
        ).row(0)
        prompt = _sum(frame, "llm_prompt_tokens")
        completion = _sum(frame, "llm_completion_tokens")
        paid = frame.filter(~pl.col("cached")) if "cached" in frame.columns else frame
        batched = (
            paid.filter(pl.col("batch_id").is_not_null())
            if "batch_id" in paid.columns
            else paid.clear()
        )
        answered = pl.col("outcome").is_in(["valid", "invalid"])
        latency = (
            frame.select(
                pl.col("llm_call_duration_seconds").filter(answered).drop_nulls()
            ).to_series()
            if "llm_call_duration_seconds" in frame.columns
            else pl.Series([], dtype=pl.Float64)
        )
        model = (models or {}).get(judge_id)
        price = (prices or {}).get(judge_id) or ((prices or {}).get(model) if model else None)
        cost = None
        if price is not None and (prompt is not None or completion is not None):
            cost = _cost(
                _sum(paid, "llm_prompt_tokens"), _sum(paid, "llm_completion_tokens"), price, batched
            )
        rows.append(
            {
                "judge": judge_id,
                "run_id": (runs or {}).get(judge_id),
                "rows": frame.height,
                "valid": int(valid),
                "invalid": int(invalid),
                "error": int(error),
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "latency_mean_ms": _ms(_stat(latency, "mean")),
                "latency_p50_ms": _ms(_stat(latency, 0.5)),
                "latency_p95_ms": _ms(_stat(latency, 0.95)),
                "cost_usd": cost,
            }
        )
    return rows


def reason_rows(results: Mapping[str, pl.DataFrame]) -> list[dict[str, Any]]:
    """Per judge and non-valid status: how many rows, and one example message."""
    rows = []
    for judge_id, frame in results.items():
        bad = frame.filter(pl.col("outcome") != "valid")
        if bad.height == 0:
            continue
        grouped = (
            bad.group_by("outcome", "status")
            .agg(
                pl.len().alias("rows"),
                pl.col("error_message").drop_nulls().first().alias("example"),
            )
            .sort("rows", "status", descending=[True, False])
        )
        for outcome, status, count, example in grouped.iter_rows():
            rows.append(
                {
                    "judge": judge_id,
                    "outcome": outcome,
                    "status": status,
                    "rows": int(count),
                    "example": example,
                }
            )
    return rows


def _against_humans(result: BaseScoringResult, baseline: HumanBaseline) -> str | None:
    """The score held against the humans' interval: stands in, does not, or undecided.

    The rule of `stats.verdict.interval_verdict`; None without intervals on both sides.
    """
    value = result.scores.get(baseline.score)
    number = float(value) if finite_number(value) else None
    interval = (result.confidence_intervals or {}).get(baseline.score)
    return interval_verdict(number, interval, baseline.interval)


def score_rows(table: Mapping[str, Sequence[BaseScoringResult]]) -> list[dict[str, Any]]:
    """Per metric and judge: the main score with its interval, the verdict, or the error.

    `run_id` names the judge's run the score was computed from (None when not recorded). A
    score averaged over the tasks of a multitask metric comes with the spread of its terms
    (`tasks_averaged`, `task_low` and `task_high` with their task names; `task_spread`).

    Beside the score: its Landis-Koch band (kappa) and the humans' baseline with its interval
    (`human_baseline`, `human_low`, `human_high`; empty where the scorer has none).
    """
    rows = []
    for metric, results in table.items():
        for result in results:
            key = main_score(result)
            spread = task_spread(result, key)
            value = result.scores.get(key) if key else None
            interval = (result.confidence_intervals or {}).get(key or "") or (None, None)
            verdict = None
            if result.scorer_name == "alt_test" and "passed" in result.scores:
                epsilon = result.metadata.get("epsilon")
                rates = result.scores.get("winning_rate") or {}
                rate = next(
                    (
                        v
                        for k, v in rates.items()
                        if epsilon is not None and abs(float(k) - float(epsilon)) < 1e-9
                    ),
                    None,
                )
                verdict = (
                    f"{'passed' if result.scores['passed'] else 'failed'} "
                    f"(winning rate {rate if rate is None else f'{rate:.2f}'} at ε = {epsilon})"
                )
            baseline = HumanBaseline.from_metadata(result.metadata.get("human_baseline"))
            if verdict is None and baseline is not None and result.error is None:
                verdict = _against_humans(result, baseline)
            human = (baseline.interval if baseline else None) or (None, None)
            number = value if _number(value) else None
            rows.append(
                {
                    "metric": metric,
                    "scorer": result.scorer_name,
                    "task": result.task_name,
                    "judge": result.judge_id,
                    "run_id": result.run_id,
                    "score_name": key,
                    "score": number,
                    "band": interpret_kappa(number) if key == "cohens_kappa" else None,
                    "low": interval[0],
                    "high": interval[1],
                    "human_baseline": baseline.value if baseline else None,
                    "human_low": human[0],
                    "human_high": human[1],
                    "verdict": verdict,
                    "error": result.error,
                    "comparisons": result.num_comparisons,
                    "tasks_averaged": spread.tasks if spread else None,
                    "task_low": spread.low if spread else None,
                    "task_low_name": spread.low_task if spread else None,
                    "task_high": spread.high if spread else None,
                    "task_high_name": spread.high_task if spread else None,
                }
            )
    return rows


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _cost(
    prompt: int | None,
    completion: int | None,
    price: Price,
    batched: pl.DataFrame,
) -> float:
    """US dollars for the tokens; rows a provider batch answered at the batch price.

    The batch price is `batch_prompt` / `batch_completion` when given, else half the live
    price (OpenAI's and Anthropic's batch discount): `Price.batch`.
    """
    in_batch_prompt = _sum(batched, "llm_prompt_tokens") or 0
    in_batch_completion = _sum(batched, "llm_completion_tokens") or 0
    live = price.cost((prompt or 0) - in_batch_prompt, (completion or 0) - in_batch_completion)
    return live + price.batch().cost(in_batch_prompt, in_batch_completion)


def _sum(frame: pl.DataFrame, column: str) -> int | None:
    if column not in frame.columns or frame.get_column(column).null_count() == frame.height:
        return None
    return int(frame.get_column(column).sum())


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000.0, 3)


def _stat(values: pl.Series, which: str | float) -> float | None:
    if values.len() == 0:
        return None
    found = values.mean() if which == "mean" else values.quantile(float(which), "linear")
    return float(found) if found is not None else None  # type: ignore[arg-type]
