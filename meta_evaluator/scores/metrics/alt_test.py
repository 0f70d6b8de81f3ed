"""AltTestScorer: may the judge replace one of the human annotators? (the alt-test)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.scores.base_scorer import (
    ResamplingStatistic,
    Scored,
    ScorerWithOptions,
    ScoringCall,
)
from meta_evaluator.scores.base_scoring_result import ScoringResult
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.metrics._arguments import refuse
from meta_evaluator.scores.metrics._items import Items
from meta_evaluator.stats.alt_test import (
    SCORING_FUNCTIONS,
    AltTestResult,
    Labels,
    advantage_under_weights,
    alt_test_table,
)

__all__ = ["AltTestScorer"]


class AltTestScorer(ScorerWithOptions):
    """The alternative annotator test of the judge against the human panel (METRICS.md C).

    Score keys: `winning_rate` (by epsilon, "0.00" to "0.30" plus the configured one),
    `advantage_probability`, `passed`. Metadata: `per_annotator` (advantage probabilities,
    p-values and decisions per human), `human_advantage_probabilities` (per human: the judge's
    and the human's advantage, as meta-evaluator 0.3 reported them), `skipped_annotators`,
    the settings, and the scoring function used. Free-text tasks are scored with difflib
    similarity, combined tasks (multilabel) and multi-label answers with set Jaccard.
    """

    label_categories = True  # labels become codes in `Items`, categories or text alike
    aligns_items = True  # `Items.of_call` keeps the ids both frames have

    def __init__(
        self,
        epsilon: float = 0.2,
        multiplicative_epsilon: bool = False,
        q_fdr: float = 0.05,
        min_instances_per_human: int = 30,
        min_humans_per_instance: int = 2,
        scoring_function: str | None = None,
    ) -> None:
        problems = []
        if isinstance(epsilon, bool) or not isinstance(epsilon, int | float):
            problems.append(f"epsilon must be a number in [0, 1); got {epsilon!r}")
        elif not 0.0 <= epsilon < 1.0:
            problems.append(f"epsilon must be in [0, 1); got {epsilon!r}")
        if isinstance(q_fdr, bool) or not isinstance(q_fdr, int | float) or not 0 < q_fdr < 1:
            problems.append(f"q_fdr must be in (0, 1); got {q_fdr!r}")
        for name, value, low in (
            ("min_instances_per_human", min_instances_per_human, 1),
            ("min_humans_per_instance", min_humans_per_instance, 2),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                problems.append(f"{name} must be an integer >= {low}; got {value!r}")
        if scoring_function is not None and scoring_function not in SCORING_FUNCTIONS:
            problems.append(
                f"scoring_function must be None or one of {', '.join(SCORING_FUNCTIONS)}; "
                f"got {scoring_function!r}"
            )
        refuse("AltTestScorer", problems)
        super().__init__(scorer_name="alt_test")
        self.epsilon = float(epsilon)
        self.multiplicative_epsilon = multiplicative_epsilon
        self.q_fdr = float(q_fdr)
        self.min_instances_per_human = min_instances_per_human
        self.min_humans_per_instance = min_humans_per_instance
        self.scoring_function = scoring_function

    @property
    def min_human_annotators(self) -> int:  # type: ignore[override]
        """The test leaves one human out, so each instance needs `min_humans_per_instance`."""
        return self.min_humans_per_instance

    def can_score_task(self, sample_label: Any) -> bool:
        """Labels, numbers, label lists and free text all have an alignment score."""
        return sample_label is not None

    async def score(self, call: ScoringCall) -> Scored:
        """Run the alt-test of the judge against every human.

        Raises:
            ScoringError: No item has labels from the judge and a human, or no annotator has
                enough instances to be tested.
        """
        if call.annotator_aggregation == "majority_vote":
            self.logger.warning(
                "alt_test compares the judge with each annotator in turn; majority_vote does "
                "not apply and is ignored."
            )
        result, items = self._run(call)
        per_annotator = {
            name: {
                "n_instances": o.n_instances,
                "llm_advantage_probability": o.llm_advantage,
                "human_advantage_probability": o.human_advantage,
                "p_values": o.p_values,
                "rejected": o.rejected,
            }
            for name, o in result.per_annotator.items()
        }
        return Scored(
            scores={
                "winning_rate": result.winning_rate,
                "advantage_probability": result.advantage_probability,
                "passed": result.passed,
            },
            metadata={
                "per_annotator": per_annotator,
                "human_advantage_probabilities": {
                    name: [o.llm_advantage, o.human_advantage]
                    for name, o in result.per_annotator.items()
                },
                "skipped_annotators": result.skipped_annotators,
                "scoring_function": result.scoring_function,
                "epsilon": self.epsilon,
                "multiplicative_epsilon": self.multiplicative_epsilon,
                "q_fdr": self.q_fdr,
                "min_instances_per_human": self.min_instances_per_human,
                "min_humans_per_instance": self.min_humans_per_instance,
                "num_instances": result.n_instances,
                "human_annotators": len(items.humans),
            },
            num_comparisons=sum(o.n_instances for o in result.per_annotator.values()),
        )

    def aggregate_results(
        self, results: list[ScoringResult], scores_dir: str | Path, unique_name: str = ""
    ) -> None:
        """Draw the three alt-test views over all judges (failed judges are left out).

        The winning rate against epsilon, the advantage probabilities, and the judge's against
        each left-out annotator's advantage.
        """
        from meta_evaluator.scores.plots import (
            advantage_chart,
            annotator_advantage_chart,
            winning_rate_chart,
        )

        folder = Path(scores_dir) / self.scorer_name / unique_name
        scored = [r for r in results if r.error is None]
        winning_rate_chart(
            scored, folder / "aggregate_winning_rates.png", title=f"alt-test: {unique_name}"
        )
        advantage_chart(
            scored,
            folder / "aggregate_advantage_probabilities.png",
            title=f"advantage probability by judge: {unique_name}",
        )
        annotator_advantage_chart(
            scored,
            folder / "aggregate_human_vs_llm_advantage.png",
            title=f"judge vs left-out annotator: {unique_name}",
        )

    def resampling_statistic(self, call: ScoringCall, ids: pl.Series) -> ResamplingStatistic:
        """The advantage probability under item weights (the test itself is not resampled)."""
        result, items = self._run(call)
        positions = _positions(ids, items.ids.gather(result.kept_instances.tolist()))

        def advantage(weights: Any) -> dict[str, Any]:
            return {"advantage_probability": advantage_under_weights(result, weights[:, positions])}

        return advantage

    def _run(self, call: ScoringCall) -> tuple[AltTestResult, Items]:
        items = Items.of_call(call)
        if items is None:
            raise ScoringError(
                f"alt_test: {call.where}: no item has both a judge label and a human label."
            )
        llm: Labels = items.judge
        humans: list[Labels] = list(items.human)
        scoring = self.scoring_function
        if call.aggregation_mode is TaskAggregationMode.MULTILABEL:
            llm = _positional_sets(items.judge.to_list())
            humans = [_positional_sets(h.to_list()) for h in items.human]
            scoring = scoring or "jaccard"
        elif scoring is None and call.task_kind == "free_text":
            scoring = "text_similarity"
        result = alt_test_table(
            llm,
            humans,
            items.humans,
            epsilon=self.epsilon,
            multiplicative_epsilon=self.multiplicative_epsilon,
            q_fdr=self.q_fdr,
            min_instances_per_human=self.min_instances_per_human,
            min_humans_per_instance=self.min_humans_per_instance,
            scoring_function=scoring,  # type: ignore[arg-type]
        )
        return result, items


def _positional_sets(labels: list[Any]) -> list[Any]:
    """Combined labels (one value per task) as sets of (task position, value) pairs."""
    return [None if v is None else frozenset(enumerate(v)) for v in labels]


def _positions(universe: pl.Series, wanted: pl.Series) -> list[int]:
    """Position in `universe` of each id of `wanted`."""
    index = pl.DataFrame({"original_id": universe}).with_row_index("position")
    found = pl.DataFrame({"original_id": wanted}).join(
        index, on="original_id", how="left", maintain_order="left"
    )
    return [int(p) for p in found.get_column("position").to_list()]
