"""FairnessScorer: is the model under test fair across the groups of a sensitive attribute?"""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.scores.base_scorer import Scored, ScorerWithOptions, ScoringCall
from meta_evaluator.scores.base_scoring_result import ScoringResult
from meta_evaluator.scores.metrics._arguments import name_problems, one_of_problems, refuse
from meta_evaluator.scores.metrics._model_eval import column, valid_flags
from meta_evaluator.stats.checks import is_missing
from meta_evaluator.stats.fairness import Aggregation, Comparison
from meta_evaluator.stats.majority import majority_label

__all__ = ["FairnessScorer"]

SCORE_KEYS = (
    "statistical_parity_difference", "disparate_impact", "average_odds_difference",
    "average_abs_odds_difference", "equal_opportunity_difference", "accuracy", "precision",
    "recall",
)  # fmt: skip


class FairnessScorer(ScorerWithOptions):
    """Group fairness of the model's predictions (METRICS.md B.1-B.3, B.5, E).

    The judge's label for the task is the model's prediction; a row predicts the positive class
    when its label is `positive_label`. The reference is `gold_column` in the data (then no
    human annotation is needed) or the humans' majority label. Each numeric sensitive column is
    split into privileged and unprivileged rows by `thresholds[column] = (threshold,
    greater_than)` or, without thresholds, the midrange rule; columns of text (or with more
    than two values) also get the multi-group spreads. Only valid answers enter the metrics;
    invalid ones are counted. When the data marks counterfactual variants (a value in
    `counterfactual_of_column`, see `meta_evaluator.data.counterfactual_variants`), only the
    original rows are scored: a variant is a made-up twin of a real row with the attribute
    flipped, so counting both would put every profile in both groups and measure the
    counterfactual effect again (`counts["counterfactual_variants"]` says how many were left
    out; `counterfactual_of_column=None` scores every row).

    Score keys: `statistical_parity_difference`, `disparate_impact`, `average_odds_difference`,
    `average_abs_odds_difference`, `equal_opportunity_difference` (means over the sensitive
    variables where defined), `accuracy`, `precision`, `recall`. Metadata: `per_variable`,
    `thresholds_used`, `group_sizes`, `multigroup`, `counts`, and `group_rates[column][group]`:
    each group's size, predicted positives, selection rate, gold positives and negatives, TPR
    and FPR, each rate with its Wilson interval (`stats.fairness.group_rates`; groups
    `privileged` and `unprivileged` for a numeric column, its values for a column of text),
    at the level `rate_interval` names.

    The multi-group spreads of a column (`metadata["multigroup"][column]`) follow fairlearn's
    definitions: `agg` ("worst_case" or "mean") combines the TPR and FPR parts of
    `equalized_odds_difference` and `equalized_odds_ratio`, `method` ("between_groups" or
    "to_overall") says what `demographic_parity_difference` and `demographic_parity_ratio`
    compare each group's selection rate with; both are saved in
    `metadata["multigroup_options"]` (METRICS.md E).
    """

    include_invalid = True

    def __init__(
        self,
        sensitive_columns: list[str] | tuple[str, ...],
        positive_label: str,
        thresholds: dict[str, tuple[float, bool]] | None = None,
        gold_column: str | None = None,
        *,
        agg: Aggregation = "worst_case",
        method: Comparison = "between_groups",
        counterfactual_of_column: str | None = "counterfactual_of",
    ) -> None:
        problems = one_of_problems("agg", agg, get_args(Aggregation))
        problems += one_of_problems("method", method, get_args(Comparison))
        if (
            isinstance(sensitive_columns, str)
            or not isinstance(sensitive_columns, list | tuple)
            or not sensitive_columns
            or not all(isinstance(c, str) and c for c in sensitive_columns)
        ):
            problems.append(
                f"sensitive_columns must be a non-empty list of names; got {sensitive_columns!r}"
            )
        if not isinstance(positive_label, str) or not positive_label:
            problems.append(f"positive_label must be a label; got {positive_label!r}")
        if thresholds is not None:
            if not isinstance(thresholds, dict):
                problems.append(
                    f"thresholds must map a column to (threshold, greater_than); got {thresholds!r}"
                )
            else:
                for key, value in thresholds.items():
                    if (
                        not isinstance(value, list | tuple)
                        or len(value) != 2
                        or isinstance(value[0], bool)
                        or not isinstance(value[0], int | float)
                        or not isinstance(value[1], bool)
                    ):
                        problems.append(
                            f"thresholds[{key!r}] must be (number, bool); got {value!r}"
                        )
        problems += name_problems(
            optional={
                "gold_column": gold_column,
                "counterfactual_of_column": counterfactual_of_column,
            }
        )
        refuse("FairnessScorer", problems)
        super().__init__(scorer_name="fairness")
        self.sensitive_columns = list(sensitive_columns)
        self.positive_label = positive_label
        self.thresholds = (
            {k: (float(v[0]), bool(v[1])) for k, v in thresholds.items()} if thresholds else None
        )
        self.gold_column = gold_column
        self.agg: Aggregation = agg
        self.method: Comparison = method
        self.data_columns = (*self.sensitive_columns, *([gold_column] if gold_column else []))
        self.counterfactual_of_column = counterfactual_of_column
        self.optional_data_columns = (counterfactual_of_column,) if counterfactual_of_column else ()
        self.min_human_annotators = 0 if gold_column else 1

    def can_score_task(self, sample_label: Any) -> bool:
        """Single labels (one of them is the positive class)."""
        return isinstance(sample_label, str)

    async def score(self, call: ScoringCall) -> Scored:
        """Fairness of the valid predictions, per sensitive variable and averaged.

        Raises:
            ScoringError: No answer is valid (missing columns are refused before `score`).
        """
        from meta_evaluator.stats.fairness import (
            FAIRNESS_METRICS,
            group_metrics,
            group_rates,
            multigroup_metrics,
            privileged_mask,
        )

        judge_data, variants = self._originals(call.judge_data)
        frame = judge_data.filter(pl.Series(valid_flags(judge_data), dtype=pl.Boolean))
        invalid = judge_data.height - frame.height
        if frame.height == 0:
            raise ScoringError(
                f"fairness: {call.where}: no valid answer to score ({invalid} invalid)."
            )
        truth = self._truth(frame, call.human_data)
        unreferenced = 0
        if truth is not None:
            known = [t is not None for t in truth]
            unreferenced = known.count(False)
            frame = frame.filter(pl.Series(known, dtype=pl.Boolean))
            truth = [t for t in truth if t is not None] if frame.height else None
        predicted = [_is(v, self.positive_label) for v in column(frame, "label")]
        numeric: dict[str, list[float | None]] = {}
        multigroup: dict[str, Any] = {}
        rates: dict[str, Any] = {}
        for name in self.sensitive_columns:
            values = column(frame, name)
            numbers = _numbers(values)
            if numbers is not None:
                numeric[name] = numbers
            distinct = {v for v in values if not is_missing(v)}
            if numbers is None or len(distinct) > 2:
                multigroup[name] = multigroup_metrics(
                    truth, predicted, [str(v) for v in values], agg=self.agg, method=self.method
                )
            if numbers is None:
                rates[name] = group_rates(truth, predicted, [str(v) for v in values])
        scores: dict[str, Any] = dict.fromkeys(SCORE_KEYS)
        metadata: dict[str, Any] = {
            "positive_label": self.positive_label,
            "reference": f"data column {self.gold_column!r}"
            if self.gold_column
            else "humans' majority label",
            "counts": {
                "scored": frame.height,
                "invalid": invalid,
                "no_reference": unreferenced,
                "counterfactual_variants": variants,
            },
            "multigroup": multigroup,
            "multigroup_options": {"agg": self.agg, "method": self.method},
        }
        if truth is not None:
            scores.update(_overall([bool(t) for t in truth], predicted))
        if numeric:
            found = group_metrics(truth, predicted, numeric, self.thresholds)
            scores.update({k: found.get(k) for k in FAIRNESS_METRICS})
            metadata["per_variable"] = found.get("per_variable")
            metadata["thresholds_used"] = found.get("thresholds_used")
            metadata["group_sizes"] = found.get("group_sizes")
            for name, numbers in numeric.items():
                threshold, greater_than = found["thresholds_used"][name]
                mask, _ = privileged_mask(numbers, threshold, greater_than)
                split = ["privileged" if m else "unprivileged" for m in mask.tolist()]
                rates[name] = group_rates(truth, predicted, split)
        metadata["group_rates"] = {n: rates[n] for n in self.sensitive_columns if n in rates}
        metadata["rate_interval"] = {"method": "wilson", "confidence_level": 0.95}
        return Scored(scores, metadata, frame.height)

    def _originals(self, judge_data: pl.DataFrame) -> tuple[pl.DataFrame, int]:
        """The rows that are not counterfactual variants, and how many variants were left out."""
        link = self.counterfactual_of_column
        if link is None or link not in judge_data.columns:
            return judge_data, 0
        values = judge_data[link]
        if values.dtype.is_float():
            values = values.fill_nan(None)
        linked = values.cast(pl.String, strict=False).str.strip_chars()
        original = linked.is_null() | (linked == "")
        return judge_data.filter(original), judge_data.height - int(original.sum())

    def _truth(self, frame: pl.DataFrame, human_data: pl.DataFrame) -> list[bool | None] | None:
        if self.gold_column is not None:
            return [None if is_missing(v) else _is(v, self.positive_label)
                    for v in column(frame, self.gold_column)]  # fmt: skip
        if human_data.height == 0:
            return None
        by_id: dict[Any, list[Any]] = {}
        for row_id, label in human_data.select("original_id", "label").iter_rows():
            by_id.setdefault(row_id, []).append(label)
        out: list[bool | None] = []
        for row_id in column(frame, "original_id"):
            label = majority_label(by_id.get(row_id, []))
            out.append(None if label is None else _is(label, self.positive_label))
        return out

    def aggregate_results(
        self, results: list[ScoringResult], scores_dir: str | Path, unique_name: str = ""
    ) -> None:
        """Draw `group_rates.png`: selection rate, TPR and FPR per group, by judge and column."""
        from meta_evaluator.scores.model_plots import group_rate_chart

        folder = Path(scores_dir) / self.scorer_name / unique_name
        group_rate_chart(
            results,
            folder / "group_rates.png",
            title=f"selection rate, TPR and FPR by group: {unique_name}",
        )


def _overall(truth: list[bool], predicted: list[bool]) -> dict[str, float | None]:
    """Accuracy, precision and recall of the positive class (None on a zero denominator)."""
    from meta_evaluator.stats.classification import accuracy, precision_recall_f1

    found = precision_recall_f1(truth, predicted, average="binary", positive_label=True)
    return {
        "accuracy": accuracy(truth, predicted),
        "precision": found["precision"],
        "recall": found["recall"],
    }


def _is(value: Any, label: str) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().casefold() == label.strip().casefold()


def _numbers(values: list[Any]) -> list[float | None] | None:
    """The values as numbers (None kept), or None when one is not a number."""
    out: list[float | None] = []
    for v in values:
        if is_missing(v):
            out.append(None)
        elif isinstance(v, int | float):  # bool is an int: True -> 1.0
            out.append(float(v))
        else:
            return None
    return out
