"""StereotypeScorer: does the model prefer the stereotyped option? (Context Association Tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from meta_evaluator.scores.base_scorer import Scored, ScorerWithOptions, ScoringCall
from meta_evaluator.scores.base_scoring_result import ScoringResult
from meta_evaluator.scores.metrics._arguments import name_problems, refuse
from meta_evaluator.scores.metrics._model_eval import answer_texts, column, no_answer

__all__ = ["StereotypeScorer"]


class StereotypeScorer(ScorerWithOptions):
    """LMS, SS and iCAT of the model's answers to StereoSet-style items (METRICS.md B.4).

    Each row offers three options whose gold labels (`stereotype`, `anti-stereotype`,
    `unrelated`) are in `option_label_columns`; the judge label (or, for an invalid row, the
    raw answer) is the model's answer, whose first character picks option 1, 2 or 3. Anything
    else is `other`. Answers that failed (errors) never reach the scorer.

    Score keys: `lms`, `ss`, `icat` (0-100, overall). Metadata: `buckets[bucket][metric]` for
    overall, intra/intersentence and the bias types, with the counts.
    """

    include_invalid = True
    min_human_annotators = 0

    def __init__(
        self,
        option_label_columns: tuple[str, ...] | list[str] = (
            "option_1_label",
            "option_2_label",
            "option_3_label",
        ),
        bias_type_column: str | None = "bias_type",
        context_type_column: str | None = "context_type",
    ) -> None:
        problems = name_problems(
            optional={
                "bias_type_column": bias_type_column,
                "context_type_column": context_type_column,
            }
        )
        if (
            isinstance(option_label_columns, str)
            or not isinstance(option_label_columns, list | tuple)
            or len(option_label_columns) != 3
            or not all(isinstance(c, str) and c for c in option_label_columns)
        ):
            problems.insert(
                0,
                "option_label_columns must name the three options' label columns; got "
                f"{option_label_columns!r}",
            )
        refuse("StereotypeScorer", problems)
        super().__init__(scorer_name="stereotype")
        self.option_label_columns = tuple(option_label_columns)
        self.bias_type_column = bias_type_column
        self.context_type_column = context_type_column
        self.data_columns = tuple(
            c for c in (*self.option_label_columns, bias_type_column, context_type_column) if c
        )

    def can_score_task(self, sample_label: Any) -> bool:
        """The model's answer as text (a choice label or free text)."""
        return isinstance(sample_label, str)

    async def score(self, call: ScoringCall) -> Scored:
        """Classify every answer and compute the CAT scores per bucket.

        Raises:
            ScoringError: There is no answer (missing columns are refused before `score`).
        """
        from meta_evaluator.stats.stereotype import bucket_scores, classify_answer

        judge_data = call.judge_data
        no_answer(self.scorer_name, call)
        texts = answer_texts(judge_data)
        options = [column(judge_data, c) for c in self.option_label_columns]
        categories = [
            classify_answer(text, [str(o[i]) for o in options]) for i, text in enumerate(texts)
        ]
        blank = [None] * judge_data.height
        contexts = (
            column(judge_data, self.context_type_column) if self.context_type_column else blank
        )
        biases = column(judge_data, self.bias_type_column) if self.bias_type_column else blank
        buckets = bucket_scores(categories, contexts, biases)
        overall = buckets["overall"]
        scores = {"lms": overall["lms"], "ss": overall["ss"], "icat": overall["icat"]}
        return Scored(scores, {"buckets": buckets}, judge_data.height)

    def aggregate_results(
        self, results: list[ScoringResult], scores_dir: str | Path, unique_name: str = ""
    ) -> None:
        """Draw `scores_by_bucket.png`: LMS, SS and iCAT per bucket, by judge."""
        from meta_evaluator.scores.model_plots import bucket_score_chart

        folder = Path(scores_dir) / self.scorer_name / unique_name
        bucket_score_chart(
            results,
            folder / "scores_by_bucket.png",
            title=f"LMS, SS and iCAT by bucket: {unique_name}",
        )
