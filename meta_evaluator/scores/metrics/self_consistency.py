"""SelfConsistencyScorer: asked k times (`consistency=k`), does a judge agree with itself?

A run with `consistency=k` keeps each row's k answers (`sample_labels`) beside the majority it
stores as the row's label. The scorer treats the k answers as k coders of the row (Fleiss'
kappa, Krippendorff's alpha, unanimous share, flip rate; `stats.consistency`) and, where humans
labelled the rows, puts the first answer's agreement with the humans beside the majority's:
what asking k times buys (docs/scoring.md, "Self-consistency").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.scores.base_scorer import (
    ResamplingStatistic,
    Scored,
    ScorerWithOptions,
    ScoringCall,
)
from meta_evaluator.scores.base_scoring_result import ScoringResult
from meta_evaluator.scores.metrics._arguments import refuse
from meta_evaluator.scores.metrics._items import Items
from meta_evaluator.scores.metrics._weights import unit_weights, weight_columns
from meta_evaluator.stats.agreement import kappa_from_confusion
from meta_evaluator.stats.checks import check_interval, encode_labels
from meta_evaluator.stats.classification import confusion_matrix
from meta_evaluator.stats.consistency import (
    SCORES,
    self_consistency,
    self_consistency_statistic,
)

__all__ = ["HUMAN_SCORES", "SAMPLES_COLUMN", "SelfConsistencyScorer"]

FloatArray = npt.NDArray[np.float64]

SAMPLES_COLUMN = "sample_labels"
"""The results column holding each row's k answers (`ResultRow.sample_labels`)."""

HUMAN_SCORES = (
    "first_answer_accuracy",
    "majority_accuracy",
    "first_answer_kappa",
    "majority_kappa",
)
"""The scores against the humans' majority, where humans labelled the rows."""


class SelfConsistencyScorer(ScorerWithOptions):
    """How far a judge asked k times per row agrees with itself, and what its majority buys.

    Scores: `fleiss_kappa`, `krippendorff_alpha`, `unanimous_share`, `flip_rate` over the rows'
    k answers (an answer that was not valid is missing), with percentile-bootstrap intervals
    over rows in `confidence_intervals`; `rows`, `rows_used`, `complete_rows`,
    `samples_per_row`. Where humans labelled rows (no human is needed otherwise), on the rows
    with a humans' majority label (ties to the largest label, as `majority_vote` scoring does),
    a valid first answer and a majority: `first_answer_accuracy` and `first_answer_kappa` (the
    first of the k answers, as a single call would have answered) and `majority_accuracy` and
    `majority_kappa` (the row's label: the majority of its valid answers, ties to the label
    seen first, as the run stores it), each against the humans' majority; `human_rows` counts
    those rows. A metric's `bootstrap` gives intervals to all of them (over data rows).

    Args:
        n_resamples: Of the scorer's own intervals (0: none).
        confidence_level: Of the intervals, in (0, 1).
        seed: Of the resampling.

    Raises:
        ScoringError: A bad option.
    """

    min_human_annotators = 0  # the judge against itself; humans only add what voting buys
    needs_samples = True
    result_columns = (SAMPLES_COLUMN,)

    def __init__(
        self, *, n_resamples: int = 1000, confidence_level: float = 0.95, seed: int = 0
    ) -> None:
        problems = []
        for arg, value, low, high, closed in (
            ("n_resamples", n_resamples, 0, np.inf, "left"),
            ("confidence_level", confidence_level, 0.0, 1.0, "neither"),
            ("seed", seed, 0, np.inf, "left"),
        ):
            try:
                check_interval(
                    "SelfConsistencyScorer", arg, value, low, high, closed=closed,
                    integer=arg != "confidence_level",
                )  # fmt: skip
            except ScoringError as exc:
                problems.append(str(exc).removeprefix("SelfConsistencyScorer: ").rstrip("."))
        refuse("SelfConsistencyScorer", problems)
        super().__init__(scorer_name="self_consistency")
        self.n_resamples = n_resamples
        self.confidence_level = float(confidence_level)
        self.seed = seed

    def can_score_task(self, sample_label: Any) -> bool:
        """One label per answer (a single-choice task), not a list."""
        return isinstance(sample_label, str)

    async def score(self, call: ScoringCall) -> Scored:
        """The k answers' agreement per row, and the first answer and majority against humans.

        Raises:
            ScoringError: A free-text task, or rows that hold one answer each (consistency=1).
        """
        rows = self._rows(call)
        found = self_consistency(
            rows.samples, n_resamples=self.n_resamples,
            confidence_level=self.confidence_level, seed=self.seed,
        )  # fmt: skip
        intervals = found.pop("intervals")
        scores: dict[str, Any] = dict(found)
        metadata: dict[str, Any] = {
            "rows_without_samples": rows.without_samples,
            "n_resamples": self.n_resamples,
            "confidence_level": self.confidence_level,
            "seed": self.seed,
        }
        humans = self._against_humans(call, rows)
        if humans is not None:
            scores.update(humans.scores())
            metadata["human_annotators"] = humans.annotators
        undefined = [k for k in SCORES if scores[k] is None]
        if undefined:
            metadata["undefined"] = (
                f"{', '.join(undefined)}: no row with two valid answers, or one label only"
            )
            self.logger.info("%s: undefined %s", call.where, metadata["undefined"])
        return Scored(scores, metadata, found["rows_used"], intervals or None)

    def resampling_statistic(self, call: ScoringCall, ids: pl.Series) -> ResamplingStatistic:
        """Every numeric score under row weights over `ids` (the same draws for all)."""
        rows = self._rows(call)
        columns = weight_columns(rows.ids, ids)  # rows not among ids weigh nothing
        consistency = self_consistency_statistic(rows.samples)
        humans = self._against_humans(call, rows)

        def statistic(weights: FloatArray) -> dict[str, FloatArray]:
            per_row = unit_weights(weights, columns)
            found = consistency(per_row)
            if humans is not None:
                found.update(humans.weighted(per_row))
            return found

        return statistic

    def _rows(self, call: ScoringCall) -> _Samples:
        """The rows with k answers: ids, answers (rows x k), and the run's majority label."""
        if call.task_kind == "free_text":
            raise ScoringError(
                f"self_consistency: {call.where}: a free-text task's answers are never equal "
                "twice; self-consistency needs labels (a single-choice task)."
            )
        frame = call.judge_data
        have = (
            frame.filter(pl.col(SAMPLES_COLUMN).is_not_null())
            if SAMPLES_COLUMN in frame.columns
            else frame.clear()
        )
        if have.height == 0:
            raise ScoringError(
                f"self_consistency: {call.where}: the judge's rows hold one answer each "
                "(run with consistency=1, or before answers were kept); run the judge with "
                "several answers per row: `meta-evaluator run --consistency 5` or "
                "run_judges_async(consistency=5) (at a temperature above 0)."
            )
        have = have.sort("original_id")
        task = call.task_name
        decoded = have.get_column(SAMPLES_COLUMN).str.json_decode(
            pl.List(pl.Struct({task: pl.String}))
        )
        samples = decoded.list.eval(pl.element().struct.field(task)).to_list()
        return _Samples(
            have.get_column("original_id"),
            samples,
            have.get_column("label").cast(pl.String).to_list(),
            frame.height - have.height,
        )

    def _against_humans(self, call: ScoringCall, rows: _Samples) -> _HumanAgreement | None:
        """The first answer and the majority against the humans' majority (None: no humans)."""
        humans = call.human_data
        if humans.height == 0:
            return None
        items = Items.build(rows_frame(rows), humans, rows.ids)
        reference = items.majority()
        first = [s[0] if s else None for s in rows.samples]
        both = [
            i
            for i, (r, f, m) in enumerate(zip(reference, first, rows.majority, strict=True))
            if r is not None and f is not None and m is not None
        ]
        if not both:
            return None
        (ref, one, vote), _ = encode_labels(
            [reference[i] for i in both], [first[i] for i in both], [rows.majority[i] for i in both]
        )
        return _HumanAgreement(np.array(both), ref, one, vote, len(rows.ids), items.humans)

    def aggregate_results(
        self, results: list[ScoringResult], scores_dir: str | Path, unique_name: str = ""
    ) -> None:
        """Draw `self_consistency.png`: kappa and alpha, flip rate, and what voting buys."""
        from meta_evaluator.scores.diagnostic_plots import self_consistency_chart

        folder = Path(scores_dir) / self.scorer_name / unique_name
        self_consistency_chart(
            results, folder / "self_consistency.png", title=f"self-consistency: {unique_name}"
        )


class _Samples:
    """A judge's rows that hold k answers, sorted by id."""

    def __init__(
        self, ids: pl.Series, samples: list[list[Any]], majority: list[Any], without: int
    ) -> None:
        self.ids = ids
        self.samples = samples
        """Rows x k labels (None: an answer that was not valid, or left this task empty)."""
        self.majority = majority
        """The row's label as the run stored it: the majority of its valid answers."""
        self.without_samples = without
        """The judge's rows without k answers (scored rows of another run, say)."""


def rows_frame(rows: _Samples) -> pl.DataFrame:
    """The rows as a judge frame (`original_id`, `label`) for `Items.build`."""
    return pl.DataFrame({"original_id": rows.ids, "label": rows.majority})


class _HumanAgreement:
    """The first answer and the majority against the humans' majority, on the rows all have."""

    def __init__(
        self,
        rows: npt.NDArray[np.int64],
        reference: npt.NDArray[np.int64],
        first: npt.NDArray[np.int64],
        majority: npt.NDArray[np.int64],
        n_rows: int,
        annotators: list[str],
    ) -> None:
        self.rows, self.n_rows = rows, n_rows
        self.reference, self.first, self.majority = reference, first, majority
        self.annotators = list(annotators)
        self.k = int(max(reference.max(), first.max(), majority.max())) + 1

    def scores(self) -> dict[str, Any]:
        """The four `HUMAN_SCORES` and `human_rows`."""
        found = self.weighted(np.ones((1, self.n_rows)))
        out: dict[str, Any] = {k: _number(found[k][0]) for k in HUMAN_SCORES}
        out["human_rows"] = int(self.rows.size)
        return out

    def weighted(self, per_row: FloatArray) -> dict[str, FloatArray]:
        """Each of `HUMAN_SCORES` for every row of `per_row` (resamples x the judge's rows)."""
        weights = per_row[:, self.rows]
        total = weights.sum(axis=1)
        out = {}
        for name, codes in (("first_answer", self.first), ("majority", self.majority)):
            right = weights @ (codes == self.reference).astype(np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[f"{name}_accuracy"] = np.where(total > 0, right / total, np.nan)
            confusion = confusion_matrix(self.reference, codes, self.k, weights=weights)
            out[f"{name}_kappa"] = kappa_from_confusion(confusion)
        return out


def _number(value: Any) -> float | None:
    return None if value is None or np.isnan(value) else float(value)
