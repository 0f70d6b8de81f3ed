"""BaseScorer: the contract every scorer follows, built-in or written by a user.

A scorer written for the original meta-evaluator docs runs unchanged: it calls
`super().__init__(scorer_name=...)`, implements `can_score_task` and
`compute_score_async(judge_data, human_data, task_name, judge_id, aggregation_mode)`, and may
override `aggregate_results` and `min_human_annotators`.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from meta_evaluator.scores.base_scoring_result import BaseScoringResult
from meta_evaluator.scores.enums import TaskAggregationMode

__all__ = ["BaseScorer", "ResamplingStatistic"]

#: Scores per resample from item weights (resamples x items, in the order of the ids given).
ResamplingStatistic = Callable[[npt.NDArray[np.float64]], dict[str, npt.NDArray[np.float64]]]


class BaseScorer(ABC):
    """Computes agreement scores between one judge's labels and the humans' labels.

    `judge_data` has columns `original_id`, `label`; `human_data` has `original_id`,
    `human_id`, `label` (joining them yields `label_right`). Only valid labels reach a scorer,
    unless it sets `include_invalid`.
    """

    min_human_annotators: int = 1
    """Fewest human annotators the scorer needs; compare reports a judge with fewer as failed."""

    data_columns: Sequence[str] = ()
    """Evaluation-data columns that compare joins onto `judge_data` for this scorer."""

    optional_data_columns: Sequence[str] = ()
    """Evaluation-data columns joined onto `judge_data` when the data has them."""

    include_invalid: bool = False
    """Whether `judge_data` also holds invalid rows (with `outcome` and the raw response)."""

    reference_task: str | None = None
    """The humans' task every judge task is compared with (None: the same task)."""

    def __init__(self, scorer_name: str) -> None:
        self.scorer_name = scorer_name
        self.logger = logging.getLogger(f"{__name__}.{type(self).__name__}")

    @abstractmethod
    def can_score_task(self, sample_label: Any) -> bool:
        """Whether this scorer can score labels like `sample_label` (a value, list or text)."""

    @abstractmethod
    async def compute_score_async(
        self,
        judge_data: pl.DataFrame,
        human_data: pl.DataFrame,
        task_name: str,
        judge_id: str,
        aggregation_mode: TaskAggregationMode,
    ) -> BaseScoringResult:
        """Score one judge against all humans for one task (or combination of tasks)."""

    def resampling_statistic(
        self,
        judge_data: pl.DataFrame,
        human_data: pl.DataFrame,
        ids: pl.Series,
        *,
        annotator_aggregation: str = "individual_average",
    ) -> ResamplingStatistic | None:
        """The scores as a function of item weights, for fast bootstrap intervals.

        `ids` fixes the item order of the weight columns. Return None (the default) and the
        bootstrap recomputes `compute_score_async` on each resample instead: slower, but it
        works for any scorer.
        """
        return None

    def aggregate_results(
        self, results: list[BaseScoringResult], scores_dir: str | Path, unique_name: str = ""
    ) -> None:
        """Make plots or summaries over all judges' results (optional; does nothing here).

        Args:
            results: One result per judge for this metric.
            scores_dir: The project's `scores/` folder; write under
                `scores_dir/<scorer_name>/<unique_name>/`.
            unique_name: The metric's folder name.
        """
        return None  # a hook: subclasses override it

    def save_results(
        self, results: list[BaseScoringResult], scores_dir: str | Path, unique_name: str = ""
    ) -> None:
        """Write each result to `scores_dir/<scorer_name>/<unique_name>/<judge_id>_result.json`."""
        folder = Path(scores_dir) / self.scorer_name / unique_name
        for result in results:
            result.save_state(folder / f"{result.judge_id}_result.json")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(scorer_name={self.scorer_name!r})"
