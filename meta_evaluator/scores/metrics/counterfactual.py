"""CounterfactualScorer: does the model's answer change when only a sensitive attribute does?"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from meta_evaluator.errors import ScoringError
from meta_evaluator.scores.base_scorer import Scored, ScorerWithOptions, ScoringCall
from meta_evaluator.scores.base_scoring_result import ScoringResult
from meta_evaluator.scores.metrics._arguments import name_problems, refuse
from meta_evaluator.scores.metrics._model_eval import column, valid_flags
from meta_evaluator.stats.checks import is_missing

__all__ = ["CounterfactualScorer"]


class CounterfactualScorer(ScorerWithOptions):
    """Change rate between rows and their counterfactual variants (METRICS.md B.6).

    A variant row names its original in `counterfactual_of_column` (see
    `meta_evaluator.data.counterfactual_variants`). A pair is used when both answers came
    back (errors never reach the scorer); it changed when one answer is valid and the other
    not, or both are valid with different labels. Groups come from the original row's
    `group_column` (one group "all" without it).

    Score keys: `change_rate_overall`, `change_rate_by_group` (keyed by the group value as a
    string; every group among the answered originals, None for one without a used pair, as
    when all its counterfactuals failed). Metadata: the counts overall and per group
    (`changed`, `used`, `by_group`), pairs left out (`variants_without_original`),
    `group_column`, and `change_rate_intervals`: Wilson intervals of the rates (`overall`,
    and `by_group` keyed as the rates; None for a group without a used pair) at the level
    `rate_interval` names.
    """

    include_invalid = True
    min_human_annotators = 0

    def __init__(
        self, counterfactual_of_column: str = "counterfactual_of", group_column: str | None = None
    ) -> None:
        problems = name_problems(
            {"counterfactual_of_column": counterfactual_of_column}, {"group_column": group_column}
        )
        refuse("CounterfactualScorer", problems)
        super().__init__(scorer_name="counterfactual")
        self.counterfactual_of_column = counterfactual_of_column
        self.group_column = group_column
        self.data_columns = tuple(c for c in (counterfactual_of_column, group_column) if c)

    def can_score_task(self, sample_label: Any) -> bool:
        """Any label: only equality matters."""
        return sample_label is not None

    async def score(self, call: ScoringCall) -> Scored:
        """Pair each variant with its original and count the changed answers.

        Raises:
            ScoringError: No variant's original was answered.
        """
        from meta_evaluator.stats.counterfactual import change_rates
        from meta_evaluator.stats.proportions import wilson_interval

        judge_data = call.judge_data
        ids = column(judge_data, "original_id")
        labels = column(judge_data, "label")
        valid = valid_flags(judge_data)
        links = column(judge_data, self.counterfactual_of_column)
        groups = column(judge_data, self.group_column) if self.group_column else None
        by_id = {row_id: i for i, row_id in enumerate(ids)}
        pairs = []
        orphans = 0
        for i, link in enumerate(links):
            if is_missing(link):
                continue
            original = by_id.get(link)
            if original is None:
                orphans += 1  # the original was not answered (an error) or is not in the data
                continue
            pairs.append((original, i))
        if not pairs:
            raise ScoringError(
                f"counterfactual: {call.where}: no variant row whose "
                f"original was answered ({orphans} variant(s) without one); build variants "
                "with meta_evaluator.data.counterfactual_variants."
            )
        # every group among the originals is reported: one without a usable pair as None
        originals = (
            [] if groups is None
            else [g for g, link in zip(groups, links, strict=True) if is_missing(link)]
        )  # fmt: skip
        found = change_rates(
            [valid[o] for o, _ in pairs],
            [labels[o] for o, _ in pairs],
            [valid[c] for _, c in pairs],
            [labels[c] for _, c in pairs],
            [groups[o] if groups is not None else "all" for o, _ in pairs],
            all_groups=originals,
        )
        return Scored(
            {k: found[k] for k in ("change_rate_overall", "change_rate_by_group")},
            {
                "changed": found["changed"],
                "used": found["used"],
                "by_group": found["by_group"],
                "variants_without_original": orphans,
                "group_column": self.group_column,
                "change_rate_intervals": {
                    "overall": _interval(wilson_interval(found["changed"], found["used"])),
                    "by_group": {
                        group: _interval(wilson_interval(counts["changed"], counts["used"]))
                        for group, counts in found["by_group"].items()
                    },
                },
                "rate_interval": {"method": "wilson", "confidence_level": 0.95},
            },
            len(pairs),
        )

    def aggregate_results(
        self, results: list[ScoringResult], scores_dir: str | Path, unique_name: str = ""
    ) -> None:
        """Draw `change_rate_by_group.png`: the change rate overall and per group, by judge."""
        from meta_evaluator.scores.model_plots import change_rate_chart

        folder = Path(scores_dir) / self.scorer_name / unique_name
        change_rate_chart(
            results,
            folder / "change_rate_by_group.png",
            title=f"change rate by group: {unique_name}",
        )


def _interval(found: tuple[float, float] | None) -> list[float] | None:
    """An interval as JSON keeps it: a list, or None when undefined."""
    return None if found is None else [found[0], found[1]]
