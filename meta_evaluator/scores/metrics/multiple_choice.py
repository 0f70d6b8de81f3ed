"""MultipleChoiceScorer: does the model answer multiple-choice questions in format and right?"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from meta_evaluator.errors import ScoringError
from meta_evaluator.scores.base_scorer import Scored, ScorerWithOptions, ScoringCall
from meta_evaluator.scores.base_scoring_result import ScoringResult
from meta_evaluator.scores.metrics._arguments import name_problems, refuse
from meta_evaluator.scores.metrics._model_eval import answer_texts, column, no_answer

__all__ = ["MultipleChoiceScorer"]


class MultipleChoiceScorer(ScorerWithOptions):
    """Format error rate and accuracy of JSON `{"choice": ...}` answers (METRICS.md B.7).

    `options_column` holds each question's options (a list, or a JSON array as text);
    `gold_column` the correct option as its text or its 0-based index. The judge label (or,
    for an invalid row, the raw answer) is the model's answer. Overall and per language
    (`language_column`).

    Score keys: `format_error_rate`, `overall_accuracy`, `accuracy_on_valid`. Metadata:
    `counts`, `per_language[language][metric]` (with its `counts`), `language_column`, and
    `rate_intervals`: the
    Wilson interval of each rate, `overall` and `per_language[language]`
    (`stats.multiple_choice.rate_intervals`), at the level `rate_interval` names.
    """

    include_invalid = True
    min_human_annotators = 0

    def __init__(
        self,
        options_column: str = "options",
        gold_column: str = "answer",
        language_column: str | None = None,
    ) -> None:
        required = {"options_column": options_column, "gold_column": gold_column}
        problems = name_problems(required, {"language_column": language_column})
        refuse("MultipleChoiceScorer", problems)
        super().__init__(scorer_name="multiple_choice")
        self.options_column = options_column
        self.gold_column = gold_column
        self.language_column = language_column
        self.data_columns = tuple(c for c in (options_column, gold_column, language_column) if c)

    def can_score_task(self, sample_label: Any) -> bool:
        """The model's raw answer (text)."""
        return isinstance(sample_label, str)

    async def score(self, call: ScoringCall) -> Scored:
        """Grade every answer; rates overall and per language.

        Raises:
            ScoringError: No answer, options are unreadable, or a gold answer is not one of
                its options.
        """
        from meta_evaluator.stats.multiple_choice import grade, rate_intervals, rates

        judge_data = call.judge_data
        no_answer(self.scorer_name, call)
        texts = answer_texts(judge_data)
        ids = column(judge_data, "original_id")
        outcomes = []
        for row_id, text, options, gold in zip(
            ids, texts, column(judge_data, self.options_column),
            column(judge_data, self.gold_column), strict=True,
        ):  # fmt: skip
            try:
                choices = _options(options)
                outcomes.append(grade(text, choices, _gold(gold, choices)))
            except ScoringError as exc:
                raise ScoringError(f"multiple_choice: row {row_id!r}: {exc.message}") from exc
        languages = column(judge_data, self.language_column) if self.language_column else None
        found = rates(outcomes, languages)
        keys = ("format_error_rate", "overall_accuracy", "accuracy_on_valid")
        per_language = found.get("per_language")
        intervals: dict[str, Any] = {"overall": rate_intervals(found["counts"])}
        if per_language is not None:
            intervals["per_language"] = {
                language: rate_intervals(values["counts"])
                for language, values in per_language.items()
            }
        return Scored(
            {k: found[k] for k in keys},
            {
                "counts": found["counts"],
                "per_language": per_language,
                "language_column": self.language_column,
                "rate_intervals": intervals,
                "rate_interval": {"method": "wilson", "confidence_level": 0.95},
            },
            len(outcomes),
        )

    def aggregate_results(
        self, results: list[ScoringResult], scores_dir: str | Path, unique_name: str = ""
    ) -> None:
        """Draw `rates_by_language.png`: accuracies and format error rate per language, by judge."""
        from meta_evaluator.scores.model_plots import language_rate_chart

        folder = Path(scores_dir) / self.scorer_name / unique_name
        language_rate_chart(
            results, folder / "rates_by_language.png", title=f"accuracy by language: {unique_name}"
        )


def _options(value: Any) -> list[str]:
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return [str(v) for v in parsed]
        return [part.strip() for part in value.split("|")]
    raise ScoringError(f"options must be a list or a JSON array; got {value!r}")


def _gold(value: Any, options: list[str]) -> str | int:
    """The gold answer as grade() takes it: an option's text wins over an index reading."""
    if isinstance(value, bool):
        raise ScoringError(f"the gold answer must be an option or its index; got {value!r}")
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if text.lower() in {o.strip().lower() for o in options}:
        return text
    return int(text) if text.isdigit() else text
