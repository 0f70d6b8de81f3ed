"""BaseScorer: the contract every scorer follows, built-in or written by a user.

A scorer written for the original meta-evaluator docs runs unchanged: it calls
`super().__init__(scorer_name=...)`, implements `can_score_task` and
`compute_score_async(judge_data, human_data, task_name, judge_id, aggregation_mode)`, and may
override `aggregate_results` and `min_human_annotators`.

`compare` calls every scorer through `call_scorer`: with the six arguments, plus those of the
metric's options (`annotator_aggregation`, `task_kind`) that the scorer's `compute_score_async`
declares (`accepted_options`, worked out once when the class is defined, never per call). Every
built-in scorer (a `ScorerWithOptions`) takes both; a scorer written for 0.3 takes none, or the
`annotator_aggregation=` keyword its docs offered.
"""

from __future__ import annotations

import inspect
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

import numpy as np
import numpy.typing as npt
import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.scores._frames import require_columns
from meta_evaluator.scores.base_scoring_result import ScoringResult
from meta_evaluator.scores.enums import TaskAggregationMode

if TYPE_CHECKING:
    from meta_evaluator.eval_task import EvalTask
    from meta_evaluator.eval_task.eval_task import TaskKind
    from meta_evaluator.scores.human_baseline import BaselineStatistic

__all__ = [
    "ANNOTATOR_AGGREGATIONS",
    "AnnotatorAggregation",
    "BaseScorer",
    "ResamplingStatistic",
    "Scored",
    "ScorerWithOptions",
    "ScoringCall",
    "call_scorer",
]

OPTION_NAMES = frozenset({"annotator_aggregation", "task_kind"})
"""The metric options a scorer may take as keyword arguments (`ScoringCall.options`)."""

#: Scores per resample from item weights (resamples x items, in the order of the ids given).
ResamplingStatistic = Callable[[npt.NDArray[np.float64]], dict[str, npt.NDArray[np.float64]]]

#: How the humans' labels of an item are combined (MetricConfig.annotator_aggregation).
AnnotatorAggregation = Literal["individual_average", "majority_vote"]
ANNOTATOR_AGGREGATIONS: tuple[AnnotatorAggregation, ...] = ("individual_average", "majority_vote")


@dataclass(frozen=True)
class ScoringCall:
    """One call of a scorer: the six arguments of the 0.3 contract, and the options compare adds.

    `judge_data` has `original_id`, `label`; `human_data` has `original_id`, `human_id` (the
    stored results' `annotator_id`), `label`.
    """

    judge_data: pl.DataFrame
    human_data: pl.DataFrame
    task_name: str
    judge_id: str
    aggregation_mode: TaskAggregationMode
    annotator_aggregation: AnnotatorAggregation = "individual_average"
    """The metric's `annotator_aggregation` (MetricConfig)."""
    task_kind: TaskKind | None = None
    """The kind of the one task scored (`single`, `multilabel`, `free_text`); None for several."""
    shared: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """What scorers compute alike from these frames (the built-ins' items layout): compare
    passes one dict to its calls on the same frames of one judge; other frames, another."""

    @property
    def where(self) -> str:
        """`judge 'gpt4', task 'rejection'`: where a scoring error happened."""
        return f"judge {self.judge_id!r}, task {self.task_name!r}"

    def options(self) -> dict[str, Any]:
        """The keyword-only options of `ScorerWithOptions.compute_score_async`."""
        return {"annotator_aggregation": self.annotator_aggregation, "task_kind": self.task_kind}


@dataclass(frozen=True)
class Scored:
    """What a built-in scorer's `score` found: the scores, their context, the pairs compared."""

    scores: dict[str, Any]
    metadata: dict[str, Any] = field(default_factory=dict)
    num_comparisons: int = 0
    confidence_intervals: dict[str, tuple[float | None, float | None]] | None = None
    """Intervals the scorer computes itself (a Wilson interval, its own bootstrap); a metric's
    `bootstrap` replaces those of the scores it resamples."""


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

    data_position_column: str | None = None
    """A column name under which compare joins each row's 0-based place in the evaluation
    data onto `judge_data`, for a rule that follows the data's order (`PreferenceScorer`
    keeps the first row of a repeated comparison id); None (the default): not joined."""

    include_invalid: bool = False
    """Whether `judge_data` also holds invalid rows (with `outcome` and the raw response)."""

    result_columns: Sequence[str] = ()
    """Columns of the judge's results table that compare passes on in `judge_data`, when the
    results have them (`sample_labels`, each answer's labels of a `consistency` run)."""

    linked_rows_column: str | None = None
    """A data column naming, on a variant row (a position-swapped twin), the id of its
    original: compare then keeps the judge's variant rows of every original it keeps when it
    limits the judge's rows to those the humans labelled. Variants are never compared with
    the humans; the scorer merges each with its original (`PreferenceScorer`'s debiasing)."""

    reference_task: str | None = None
    """The humans' task every judge task is compared with (None: the same task)."""

    needs_both_orders: bool = False
    """Whether the scorer reads each pair in both orders (the original row and its swapped
    twin): the votes imported with preference pairs, cast on the original order only
    (`results.pair_votes`), are then left out of it rather than failed."""

    needs_samples: bool = False
    """Whether the scorer reads each row's several answers (`consistency=k`): labels imported
    from a file, one per row, are then left out of it rather than failed."""

    aligns_items: bool = False
    """Whether the scorer lays labels out on the items both frames have by itself (the
    built-ins, through their items): compare then gives it the humans' frame whole, rather
    than a copy without the ids the judge lacks (at a million rows, a copy of three)."""

    label_categories: bool = False
    """Whether `label` and `human_id` may come as polars Categoricals: single-choice labels of
    results read for scoring are held that way (4 bytes a row, not 16). Other scorers get
    text."""

    accepted_options: ClassVar[frozenset[str]] = frozenset()
    """The metric options (`OPTION_NAMES`) this class's `compute_score_async` declares, by name
    or through `**kwargs`; set when the class is defined (`__init_subclass__`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "accepted_options" in cls.__dict__:  # the class says it itself
            return
        parameters = inspect.signature(cls.compute_score_async).parameters.values()
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
            cls.accepted_options = OPTION_NAMES
        else:
            cls.accepted_options = OPTION_NAMES & {p.name for p in parameters}

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
    ) -> ScoringResult:
        """Score one judge against all humans for one task (or combination of tasks)."""

    def task_problems(self, task: EvalTask, task_names: Sequence[str]) -> list[str]:
        """Why the scorer, as configured, cannot score these tasks of `task` (default: never).

        `compare` asks before any score is computed or written, and raises every problem
        found in one `MetricConfigError` (for example a positive label the task lacks).
        """
        return []

    def resampled_ids(self, call: ScoringCall) -> pl.Series:
        """The ids of the items a bootstrap of `call` resamples (default: the judge's).

        `compare` draws its resamples, for the judge's intervals and the human baseline's
        alike, over these ids of every task scored; a scorer whose score also rests on items
        the judge did not label (Krippendorff's alpha) names them too.
        """
        return call.judge_data.get_column("original_id")

    def resampling_statistic(self, call: ScoringCall, ids: pl.Series) -> ResamplingStatistic | None:
        """The scores of `call` as a function of item weights, for fast bootstrap intervals.

        `ids` fixes the item order of the weight columns. Return None (the default) and the
        bootstrap recomputes `compute_score_async` on each resample instead: slower, but it
        works for any scorer.
        """
        return None

    async def human_baseline_statistic(
        self, call: ScoringCall, ids: pl.Series
    ) -> BaselineStatistic | None:
        """The same statistic between the humans, as a function of item weights over `ids`.

        `compare` saves it beside the judge's score as `metadata["human_baseline"]`
        (`scores.human_baseline`). Return None (the default) for a scorer without one.
        """
        return None

    def aggregate_results(
        self, results: list[ScoringResult], scores_dir: str | Path, unique_name: str = ""
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
        self, results: list[ScoringResult], scores_dir: str | Path, unique_name: str = ""
    ) -> None:
        """Write each result to `scores_dir/<scorer_name>/<unique_name>/<judge_id>_result.json`."""
        folder = Path(scores_dir) / self.scorer_name / unique_name
        for result in results:
            result.save_state(folder / f"{result.judge_id}_result.json")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(scorer_name={self.scorer_name!r})"


class ScorerWithOptions(BaseScorer):
    """The one call signature of scorers that take the metric's options (every built-in one).

    `compute_score_async` takes the six arguments and the keyword-only options; it refuses an
    unknown annotator aggregation and a frame without `required_columns`, hands a `ScoringCall`
    to `score`, and makes the `Scored` it returns the `ScoringResult`. A subclass implements
    `score` (and `can_score_task`).
    """

    @property
    def required_columns(self) -> Sequence[str]:
        """Columns `judge_data` must hold, or the call is refused (default: `data_columns`)."""
        return self.data_columns

    async def compute_score_async(
        self,
        judge_data: pl.DataFrame,
        human_data: pl.DataFrame,
        task_name: str,
        judge_id: str,
        aggregation_mode: TaskAggregationMode,
        *,
        annotator_aggregation: AnnotatorAggregation = "individual_average",
        task_kind: TaskKind | None = None,
    ) -> ScoringResult:
        """Score one judge against the humans (or the data's reference) for one task.

        Args:
            judge_data: `original_id`, `label` (and the data columns the scorer names; with
                `include_invalid`, `outcome` and the raw response).
            human_data: `original_id`, `human_id`, `label`.
            task_name: The task scored (tasks joined by '+').
            judge_id: The judge scored.
            aggregation_mode: How the tasks were combined.
            annotator_aggregation: `individual_average` or `majority_vote` (MetricConfig).
            task_kind: The kind of the one task scored, when compare knows it.

        Raises:
            ScoringError: An unknown annotator aggregation, a data column missing, or input
                the scorer cannot score (its message says which judge and task).
        """
        call = ScoringCall(
            judge_data, human_data, task_name, judge_id, aggregation_mode,
            annotator_aggregation, task_kind,
        )  # fmt: skip
        return await self.score_call(call)

    async def score_call(self, call: ScoringCall) -> ScoringResult:
        """`compute_score_async` of the call's fields (compare calls this, `shared` and all).

        Raises:
            ScoringError: As `compute_score_async`.
        """
        if call.annotator_aggregation not in ANNOTATOR_AGGREGATIONS:
            raise ScoringError(
                f"{self.scorer_name}: annotator_aggregation must be one of "
                f"{', '.join(ANNOTATOR_AGGREGATIONS)}; got {call.annotator_aggregation!r}."
            )
        require_columns(
            call.judge_data,
            self.required_columns,
            f"{self.scorer_name}: the data",
            "name existing columns in the scorer's arguments",
        )
        scored = await self.score(call)
        return ScoringResult(
            scorer_name=self.scorer_name,
            task_name=call.task_name,
            judge_id=call.judge_id,
            scores=scored.scores,
            metadata=scored.metadata,
            aggregation_mode=call.aggregation_mode,
            num_comparisons=scored.num_comparisons,
            failed_comparisons=0,
            confidence_intervals=scored.confidence_intervals,
        )

    @abstractmethod
    async def score(self, call: ScoringCall) -> Scored:
        """The scores of one judge for one task (raise ScoringError when it cannot be scored)."""


async def call_scorer(scorer: BaseScorer, call: ScoringCall) -> ScoringResult:
    """Run `scorer` on `call`: with its options when the scorer takes them, else six arguments.

    Raises:
        ScoringError: The scorer cannot score this judge (from the scorer).
        TypeError: The scorer returned something else than a ScoringResult.
    """
    scores_calls = isinstance(scorer, ScorerWithOptions) and (
        type(scorer).compute_score_async is ScorerWithOptions.compute_score_async
    )
    args = (call.judge_data, call.human_data, call.task_name, call.judge_id, call.aggregation_mode)
    options = {k: v for k, v in call.options().items() if k in scorer.accepted_options}
    if scores_calls:  # the call whole: what it shares with its siblings too
        result = await cast(ScorerWithOptions, scorer).score_call(call)
    elif options:
        with_options = cast(ScorerWithOptions, scorer)  # declares (some of) the options
        result = await with_options.compute_score_async(*args, **options)
    else:
        result = await scorer.compute_score_async(*args)
    if not isinstance(result, ScoringResult):
        raise TypeError(
            f"{type(scorer).__name__}.compute_score_async returned {type(result).__name__}, "
            "not a ScoringResult (BaseScoringResult)"
        )
    return result
