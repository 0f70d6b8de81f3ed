"""The frames each scorer of `compare` gets, built once per compare and judge.

`HumanLabels` holds the humans' frames (one per way of reading the tasks), built before the
first judge is scored so that the annotators' results can go; `JudgeFrames` holds one judge's
frames for its metrics. Scorers of the 0.3 contract get text, in frames of their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.scores._frames import (
    human_frame,
    judge_frame,
    labels_as_text,
    restrict_to_common_ids,
)
from meta_evaluator.scores.enums import TaskAggregationMode

if TYPE_CHECKING:
    from meta_evaluator.data import EvalData
    from meta_evaluator.scores.base_scorer import BaseScorer

__all__ = ["HumanLabels", "JudgeFrames"]


class HumanLabels:
    """The humans' label frames, built once per `compare` for every judge and metric.

    Every judge and metric that reads the same tasks the same way shares one frame: with a
    million rows, built once rather than once per judge and metric. Built for every metric
    before the first judge is scored, they no longer need the annotators' results.
    """

    def __init__(self, humans: Mapping[str, pl.DataFrame]) -> None:
        self.humans = humans
        self._built: dict[tuple[Any, ...], tuple[pl.DataFrame, pl.Series] | ScoringError] = {}

    def prepare(
        self, scorer: BaseScorer, tasks: list[str], mode: TaskAggregationMode
    ) -> tuple[pl.DataFrame, pl.Series]:
        """The humans' frame `scorer` compares a judge's `tasks` with, and its distinct ids.

        The reference task replaces `tasks` for a scorer that has one; a scorer needing no
        humans gets the annotators that have the tasks only.

        Raises:
            ScoringError: An annotator lacks a task (raised again for each scorer that asks).
        """
        reference = scorer.reference_task
        tasks = [reference] if reference else tasks
        only_fitting = scorer.min_human_annotators == 0
        key = (tuple(tasks), mode, only_fitting)
        if key not in self._built:
            humans = self.humans
            if only_fitting:
                humans = {h: f for h, f in humans.items() if all(t in f.columns for t in tasks)}
            try:
                frame = human_frame(humans, tasks, mode)
                self._built[key] = (frame, frame.get_column("original_id").unique())
            except ScoringError as exc:
                self._built[key] = exc
        built = self._built[key]
        if isinstance(built, ScoringError):
            raise built
        return built


class JudgeFrames:
    """One judge's frames for its scorers, each built once.

    Metrics that read the same tasks the same way share them: with a million rows, one filter
    and one id alignment per judge rather than one per metric.
    """

    def __init__(
        self, judge_id: str, frame: pl.DataFrame, humans: HumanLabels, data: EvalData | None
    ) -> None:
        self.judge_id, self.frame, self.humans, self.data = judge_id, frame, humans, data
        self._built: dict[tuple[Any, ...], tuple[pl.DataFrame, pl.DataFrame, dict[str, Any]]] = {}

    def prepare(
        self, scorer: BaseScorer, tasks: list[str], mode: TaskAggregationMode
    ) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, Any]]:
        """The frames `scorer` gets for `tasks` (`_scorer_frames`), and their `ScoringCall.shared`.

        Raises:
            ScoringError: As `_scorer_frames` does, naming `scorer` (failures are not kept).
        """
        key = (
            tuple(tasks), mode, scorer.include_invalid, scorer.reference_task,
            scorer.min_human_annotators, tuple(scorer.data_columns),
            tuple(scorer.optional_data_columns), scorer.aligns_items,
            tuple(scorer.result_columns), scorer.linked_rows_column,
            scorer.data_position_column,
        )  # fmt: skip
        if key not in self._built:
            judge_data, human_data = _scorer_frames(
                scorer, self.frame, self.humans, tasks, mode, self.judge_id, self.data
            )
            self._built[key] = (judge_data, human_data, {})
        judge_data, human_data, shared = self._built[key]
        if not scorer.label_categories:  # a scorer of the 0.3 contract: text, frames of its own
            return labels_as_text(judge_data), labels_as_text(human_data), {}
        return judge_data, human_data, shared


def _scorer_frames(
    scorer: BaseScorer,
    frame: pl.DataFrame,
    humans: HumanLabels,
    tasks: list[str],
    mode: TaskAggregationMode,
    judge_id: str,
    data: EvalData | None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    judge_data = judge_frame(
        frame, tasks, mode, judge_id=judge_id, include_invalid=scorer.include_invalid,
        result_columns=scorer.result_columns,
    )  # fmt: skip
    human_data, human_ids = humans.prepare(scorer, tasks, mode)
    columns = list(scorer.data_columns)
    if data is not None:
        columns += [c for c in scorer.optional_data_columns if c in data.columns]
    position = scorer.data_position_column if data is not None else None
    if columns or position:
        judge_data = _join_data(
            judge_data, data, list(dict.fromkeys(columns)), scorer, position=position
        )
    needed = scorer.min_human_annotators
    if needed > 0:
        have = human_data.get_column("human_id").n_unique()
        if have < needed:
            raise ScoringError(
                f"{scorer.scorer_name}: judge {judge_id!r}, task {'+'.join(tasks)!r}: needs "
                f"labels from at least {needed} human annotator(s), found {have}."
            )
        judge_data, variants = _variant_rows(judge_data, scorer.linked_rows_column)
        judge_data, human_data = restrict_to_common_ids(
            judge_data, human_data, judge_id=judge_id, task="+".join(tasks), human_ids=human_ids,
            humans_whole=scorer.aligns_items,
        )  # fmt: skip
        if variants is not None:  # the variants of the originals kept, never compared
            kept = judge_data.get_column("original_id").implode()
            link = pl.col(str(scorer.linked_rows_column))
            judge_data = pl.concat([judge_data, variants.filter(link.is_in(kept))])
    return judge_data, human_data


def _variant_rows(
    judge_data: pl.DataFrame, link_column: str | None
) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """The judge's original rows, and its variant rows (`BaseScorer.linked_rows_column`)."""
    if link_column is None or link_column not in judge_data.columns:
        return judge_data, None
    is_variant = pl.col(link_column).is_not_null()
    return judge_data.filter(~is_variant), judge_data.filter(is_variant)


def _join_data(
    judge_data: pl.DataFrame,
    data: EvalData | None,
    columns: list[str],
    scorer: BaseScorer,
    *,
    position: str | None = None,
) -> pl.DataFrame:
    """`judge_data` with the data's `columns` (and each row's place as `position`) joined."""
    if data is None:
        raise ScoringError(
            f"{scorer.scorer_name}: needs the data columns {columns}; the project has no data."
        )
    frame: pl.DataFrame = data.data
    clashing = [c for c in columns if c in judge_data.columns]
    if clashing:
        raise ScoringError(
            f"{scorer.scorer_name}: data column(s) {clashing} have the name of a column of the "
            f"judge's rows ({judge_data.columns}); rename them in the data (for example "
            f"{clashing[0] + '_gold'!r}) and name the new column in the scorer."
        )
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ScoringError(
            f"{scorer.scorer_name}: the data has no column(s) {missing} (columns: {frame.columns})."
        )
    places = [pl.int_range(pl.len(), dtype=pl.Int64).alias(position)] if position else []
    extra = frame.select(pl.col(data.id_column).alias("original_id"), *columns, *places)
    return judge_data.join(extra, on="original_id", how="left", maintain_order="left")
