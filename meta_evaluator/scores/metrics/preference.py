"""PreferenceScorer: how strongly do human preferences reward what a judge votes for?

A judge asked "which response shows trait T more?" votes text_a, text_b or tie on each pair;
the human preference is the reference. Strength (METRICS.md A) says how much the preferences
follow the trait: near +1 the humans pick what shows T, near -1 they avoid it, near 0 T does
not explain them. With one task per trait (multitask) the result is a table of traits ranked
by strength, written beside the JSON results.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.scores._frames import usable_rows
from meta_evaluator.scores.base_scorer import (
    ResamplingStatistic,
    Scored,
    ScorerWithOptions,
    ScoringCall,
)
from meta_evaluator.scores.base_scoring_result import ScoringResult
from meta_evaluator.scores.metrics._arguments import name_problems, refuse
from meta_evaluator.scores.metrics._items import Items
from meta_evaluator.scores.metrics._positions import debiased_votes
from meta_evaluator.stats.preference import (
    AGREE,
    DISAGREE,
    NOT_APPLICABLE,
    annotator_metrics,
    dataset_statistics,
    dedupe,
    metrics_from_counts,
    normalize_vote,
    strength_interval,
)
from meta_evaluator.storage import atomic_write_text, write_csv

__all__ = ["PreferenceScorer"]

SCORE_KEYS = ("relevance", "accuracy", "cohens_kappa", "cohens_kappa_estimated", "strength")
COMPARISON_COLUMN = "comparison_id"
"""The data column of comparison ids used when the data has it (`comparison_column`)."""
DATA_POSITION = "_data_position"
"""Where compare puts each row's place in the data (`BaseScorer.data_position_column`)."""
FloatArray = npt.NDArray[np.float64]


class PreferenceScorer(ScorerWithOptions):
    """Relevance, accuracy, kappa and strength of a judge's pairwise votes against humans'.

    Score keys: `relevance`, `accuracy`, `cohens_kappa` (chance agreement fixed at
    `chance_agreement`), `cohens_kappa_estimated`, `strength`. Metadata: the counts,
    `p_value`, `strength_interval` (percentiles 2.5/5/95/97.5 of the seeded multinomial
    procedure), `per_human`, `per_group` (with `group_by`), `dataset_statistics` (when the data
    has the text columns). With several humans, `individual_average` averages the metrics
    against each; `majority_vote` compares with the majority preference (a tie is no vote);
    `per_group` and `dataset_statistics` then use the majority preference either way (one
    reference per pair); `reference_annotator` picks one human instead.

    Args:
        chance_agreement: p_e of cohens_kappa and strength, in (0, 1).
        reference_task: The humans' task holding their preference, when it differs from the
            judge's task (one judge task per trait, one human preference).
        reference_annotator: Compare with this annotator only (the reference of the data,
            say the crowd's preference), whoever else annotated.
        group_by: A data column; every metric is also computed per value of it.
        text_columns: The data columns of the two texts, for the dataset statistics.
        n_resamples: Draws of `strength_interval`.
        seed: Seed of `strength_interval`.
        debias_positions: Score each pair's vote over both orders of its answers: the winner
            when the original and its swapped twin agree, else a tie (not applicable); twins
            are never compared with the humans (docs/scoring.md, "Position bias").
        link_column: With `debias_positions`, the data column naming each twin's original.
        comparison_column: The data column of comparison ids. Pairs sharing an id are one
            comparison: of the pairs with a judge row and a human preference, only the first
            in the data's order counts, in every metric (METRICS.md A.2); the others are left
            out and counted in `metadata["comparison_ids"]`. The default `comparison_id` is
            used when the data has it; another name must be a column of the data; None keeps
            every pair.
    """

    include_invalid = True  # an unusable vote is "not applicable", as in Feedback Forensics

    def __init__(
        self,
        chance_agreement: float = 0.5,
        *,
        reference_task: str | None = None,
        reference_annotator: str | None = None,
        group_by: str | None = None,
        text_columns: tuple[str, str] = ("text_a", "text_b"),
        n_resamples: int = 10000,
        seed: int = 0,
        debias_positions: bool = False,
        link_column: str = "swapped_of",
        comparison_column: str | None = COMPARISON_COLUMN,
    ) -> None:
        problems = []
        if (
            isinstance(chance_agreement, bool)
            or not isinstance(chance_agreement, int | float)
            or not 0 < chance_agreement < 1
        ):
            problems.append(f"chance_agreement must be in (0, 1); got {chance_agreement!r}")
        if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
            problems.append(f"n_resamples must be an integer >= 1; got {n_resamples!r}")
        problems += name_problems(
            optional={
                "reference_task": reference_task,
                "reference_annotator": reference_annotator,
                "group_by": group_by,
            },
            kind="name",
        )
        if (
            not isinstance(text_columns, tuple | list)
            or len(text_columns) != 2
            or not all(isinstance(c, str) for c in text_columns)
        ):
            problems.append(f"text_columns must be two column names; got {text_columns!r}")
        if not isinstance(debias_positions, bool):
            problems.append(f"debias_positions must be True or False; got {debias_positions!r}")
        problems += name_problems(
            {"link_column": link_column}, {"comparison_column": comparison_column}
        )
        refuse("PreferenceScorer", problems)
        super().__init__(scorer_name="preference")
        self.chance_agreement = float(chance_agreement)
        self.reference_task = reference_task
        self.reference_annotator = reference_annotator
        self.group_by = group_by
        self.text_columns = (str(text_columns[0]), str(text_columns[1]))
        self.n_resamples = n_resamples
        self.seed = seed
        self.data_columns = (group_by,) if group_by else ()
        self.optional_data_columns = self.text_columns
        self.debias_positions = debias_positions
        self.link_column = link_column
        if debias_positions:  # the twins come along with the pairs the humans labelled
            self.linked_rows_column = link_column
            self.needs_both_orders = True
            self.optional_data_columns = (*self.text_columns, link_column)
        self.comparison_column = comparison_column
        if comparison_column == COMPARISON_COLUMN:  # used when the data has it
            self.optional_data_columns = (*self.optional_data_columns, comparison_column)
        elif comparison_column is not None:  # named: the data must have it
            self.data_columns = (*self.data_columns, comparison_column)
        if comparison_column is not None:  # "first" is first in the data's order
            self.data_position_column = DATA_POSITION

    @property
    def required_columns(self) -> tuple[str, ...]:
        """None: without the `group_by` column there are no groups (compare checks the data)."""
        return ()

    def can_score_task(self, sample_label: Any) -> bool:
        """Pairwise votes: text labels (`text_a`, `text_b`, `a`, `b`, `tie` ...)."""
        return isinstance(sample_label, str)

    async def score(self, call: ScoringCall) -> Scored:
        """Compare the judge's votes with the human preferences on the pairs both have.

        Raises:
            ScoringError: No pair has both a judge row and a human preference.
        """
        judge_data = call.judge_data
        items, references, repeated = self._layout(call)
        if items.judge.null_count() == items.n:
            raise ScoringError(
                f"preference: judge {call.judge_id!r} gave no answer for {call.task_name!r} on "
                f"any of the {items.n} annotated pairs (was it asked this task?)."
            )
        votes = items.judge.to_list()
        per_reference = {
            name: annotator_metrics(votes, ref, chance_agreement=self.chance_agreement)
            for name, ref in references.items()
        }
        scores = {k: _mean([m[k] for m in per_reference.values()]) for k in SCORE_KEYS}
        metadata: dict[str, Any] = {
            "chance_agreement": self.chance_agreement,
            "annotator_aggregation": call.annotator_aggregation,
            "human_annotators": len(items.humans),
        }
        if self.debias_positions:
            metadata["debiased_positions"] = {"link_column": self.link_column}
        if repeated is not None:
            metadata["comparison_ids"] = repeated
        primary = next(iter(references.values())) if len(references) == 1 else None
        if primary is not None:
            counts = next(iter(per_reference.values()))
            for key in ("num_pairs", "agreed", "disagreed", "not_applicable", "p_value"):
                metadata[key] = counts[key]
            metadata["strength_interval"] = strength_interval(
                votes, primary, self.n_resamples, self.seed,
                chance_agreement=self.chance_agreement,
            )  # fmt: skip
        else:
            for name, ref in references.items():
                per_reference[name]["strength_interval"] = strength_interval(
                    votes, ref, self.n_resamples, self.seed,
                    chance_agreement=self.chance_agreement,
                )  # fmt: skip
            metadata["per_human"] = per_reference
            metadata["strength_interval"] = None
        reference = primary if primary is not None else _majority(items)
        texts = None
        if all(c in judge_data.columns for c in self.text_columns):
            on_items = _on_items(judge_data, items.ids, list(self.text_columns))
            texts = (on_items[self.text_columns[0]], on_items[self.text_columns[1]])
            metadata["dataset_statistics"] = dataset_statistics(*texts, reference)
        if self.group_by is not None and self.group_by in judge_data.columns:
            metadata["per_group"] = self._per_group(judge_data, items, votes, reference, texts)
        num_pairs = sum(m["num_pairs"] for m in per_reference.values())
        return Scored(scores, metadata, num_pairs)

    def resampling_statistic(self, call: ScoringCall, ids: pl.Series) -> ResamplingStatistic:
        """Relevance, accuracy, kappa and strength under item weights (from the counts)."""
        items, references, _ = self._layout(call, ids)
        votes = items.judge.to_list()
        tables = []
        for ref in references.values():
            x = np.array([_code(v) for v in votes])
            r = np.array([_code(v) for v in ref])
            outcome = np.where(
                r < 0, -1, np.where(x < 0, NOT_APPLICABLE, np.where(x == r, AGREE, DISAGREE))
            )
            onehot = np.zeros((outcome.size, 3))
            rows = np.nonzero(outcome >= 0)[0]
            onehot[rows, outcome[rows]] = 1.0
            tables.append(onehot)

        def statistic(weights: FloatArray) -> dict[str, FloatArray]:
            per: dict[str, list[FloatArray]] = {
                k: [] for k in SCORE_KEYS if k != "cohens_kappa_estimated"
            }
            for onehot in tables:
                counts = weights @ onehot
                values = metrics_from_counts(
                    counts[:, AGREE], counts[:, DISAGREE], counts[:, NOT_APPLICABLE],
                    chance_agreement=self.chance_agreement,
                )  # fmt: skip
                for key in per:
                    per[key].append(values[key])
            return {k: _nanmean(np.column_stack(v)) for k, v in per.items()}

        return statistic

    def _layout(
        self, call: ScoringCall, ids: pl.Series | None = None
    ) -> tuple[Items, dict[str, list[Any]], dict[str, Any] | None]:
        """The pairs, the reference votes each metric compares with, the repeats left out.

        Pairs on `ids` (default: those with a judge row and a human preference); the repeats
        of a comparison id (`_first_of_each_comparison`) are None without comparison ids.
        """
        judge_data, human_data = call.judge_data, call.human_data
        if "outcome" in judge_data.columns:
            # an invalid row is no vote, whatever it holds (a partial row's good tasks count)
            judge_data = judge_data.with_columns(
                pl.when(usable_rows(judge_data))
                .then(pl.col("label"))
                .otherwise(None)
                .alias("label")
            )
        if self.debias_positions:
            judge_data = debiased_votes(judge_data, self.link_column, call.where)
        if self.reference_annotator is not None:
            human_data = human_data.filter(pl.col("human_id") == self.reference_annotator)
            if human_data.height == 0:
                raise ScoringError(
                    f"preference: reference_annotator {self.reference_annotator!r} has no "
                    "usable preference; check the annotator id."
                )
        if ids is None:
            judge_ids = judge_data.get_column("original_id")
            human_ids = human_data.get_column("original_id")
            ids = judge_ids.filter(judge_ids.is_in(human_ids.implode())).unique().sort()
        if ids.len() == 0:
            raise ScoringError("preference: no pair has both a judge row and a human preference.")
        items, repeated = self._first_of_each_comparison(
            judge_data, Items.build(judge_data, human_data, ids), call.where
        )
        if call.annotator_aggregation == "majority_vote" or len(items.humans) == 1:
            name = items.humans[0] if len(items.humans) == 1 else "majority"
            return (
                items,
                {name: _majority(items) if len(items.humans) > 1 else items.human[0].to_list()},
                repeated,
            )
        references = {
            h: column.to_list() for h, column in zip(items.humans, items.human, strict=True)
        }
        return items, references, repeated

    def _first_of_each_comparison(
        self, judge_data: pl.DataFrame, items: Items, where: str
    ) -> tuple[Items, dict[str, Any] | None]:
        """`items` with the repeats of a comparison id left out (their labels made null).

        Of the pairs a human labelled, each comparison id keeps its first in the data's order
        (the order of `judge_data` when it has no data positions); a pair without an id is
        kept. Returns the items, and the column, order and count left out for the metadata.

        Raises:
            ScoringError: `comparison_column` was named but the data has no such column.
        """
        column = self.comparison_column
        if column is None or column not in judge_data.columns:
            if column is not None and column != COMPARISON_COLUMN:
                raise ScoringError(
                    f"preference: {where}: the data has no comparison id column {column!r} "
                    f"(comparison_column; columns: {judge_data.columns})."
                )
            return items, None
        in_data = DATA_POSITION in judge_data.columns
        order = pl.col(DATA_POSITION) if in_data else pl.int_range(pl.len())
        rows = judge_data.select("original_id", pl.col(column).alias("_id"), order.alias("_at"))
        found = _on_items(rows, items.ids, ["_id", "_at"])
        labelled = np.zeros(items.n, dtype=bool)
        for human in items.human:
            labelled |= human.is_not_null().to_numpy()
        # only the pairs a human labelled compete; the rest count nowhere anyway
        ids = [c if on else None for c, on in zip(found["_id"], labelled, strict=True)]
        places = [np.inf if at is None else at for at in found["_at"]]
        keep = dedupe(ids, items.n, order=places)
        repeated = {
            "column": column,
            "kept": "the first pair of each comparison id in the "
            + ("data's order" if in_data else "order of the judge's rows"),
            "pairs_left_out": int(np.count_nonzero(~keep)),
        }
        if keep.all():
            return items, repeated
        kept = pl.Series("keep", keep)

        def only_kept(labels: pl.Series) -> pl.Series:
            frame = pl.DataFrame({"label": labels, "keep": kept})
            return frame.select(pl.when(pl.col("keep")).then(pl.col("label"))).to_series()

        return (
            Items(items.ids, items.humans, only_kept(items.judge),
                  [only_kept(h) for h in items.human]),
            repeated,
        )  # fmt: skip

    def _per_group(
        self,
        judge_data: pl.DataFrame,
        items: Items,
        votes: list[Any],
        reference: list[Any],
        texts: tuple[list[Any], list[Any]] | None,
    ) -> dict[str, Any]:
        """Every metric (and the dataset statistics) per value of the group_by column."""
        assert self.group_by is not None
        groups = _on_items(judge_data, items.ids, [self.group_by])[self.group_by]
        out: dict[str, Any] = {}
        for value in sorted({g for g in groups if g is not None}, key=str):
            rows = [i for i, g in enumerate(groups) if g == value]
            group: dict[str, Any] = annotator_metrics(
                [votes[i] for i in rows], [reference[i] for i in rows],
                chance_agreement=self.chance_agreement,
            )  # fmt: skip
            if texts is not None:
                group["dataset_statistics"] = dataset_statistics(
                    [texts[0][i] for i in rows], [texts[1][i] for i in rows],
                    [reference[i] for i in rows],
                )  # fmt: skip
            out[str(value)] = group
        return out

    def aggregate_results(
        self, results: list[ScoringResult], scores_dir: str | Path, unique_name: str = ""
    ) -> None:
        """Write the trait table (CSV and Markdown) and a strength-by-trait chart."""
        from meta_evaluator.scores.plots import strength_chart

        folder = Path(scores_dir) / self.scorer_name / unique_name
        rows = trait_rows(results)
        if not rows:
            return
        write_csv(folder / "trait_table.csv", rows)
        atomic_write_text(folder / "trait_table.md", _markdown(rows))
        strength_chart(
            rows, folder / "strength_by_trait.png", title=f"strength by trait: {unique_name}"
        )


def trait_rows(results: list[ScoringResult]) -> list[dict[str, Any]]:
    """One row per (trait, judge): the task's scores, sorted by strength, strongest first.

    With the votes behind them (`agreed`, `disagreed`, `not_applicable` of `num_pairs`; None
    when the judge was compared with several humans one by one).
    """
    rows: list[dict[str, Any]] = []
    for result in results:
        if result.error is not None:
            continue
        per_task = result.metadata.get("per_task")
        entries = (
            {
                name: (e.get("scores", {}), e.get("metadata", {}))
                for name, e in per_task.items()
                if "scores" in e
            }
            if per_task
            else {result.task_name: (result.scores, result.metadata)}
        )
        for trait, (scores, metadata) in entries.items():
            interval = metadata.get("strength_interval") or {}
            rows.append(
                {
                    "trait": trait,
                    "judge": result.judge_id,
                    "strength": scores.get("strength"),
                    "low_2.5": interval.get("2.5"),
                    "high_97.5": interval.get("97.5"),
                    "relevance": scores.get("relevance"),
                    "accuracy": scores.get("accuracy"),
                    "cohens_kappa": scores.get("cohens_kappa"),
                    "cohens_kappa_estimated": scores.get("cohens_kappa_estimated"),
                    "p_value": metadata.get("p_value"),
                    "num_pairs": metadata.get("num_pairs"),
                    "agreed": metadata.get("agreed"),
                    "disagreed": metadata.get("disagreed"),
                    "not_applicable": metadata.get("not_applicable"),
                }
            )
    rows.sort(key=_strongest_first)
    return rows


def _strongest_first(row: dict[str, Any]) -> tuple[bool, float, str, str]:
    strength = row["strength"]
    return (strength is None, -float(strength or 0.0), str(row["trait"]), str(row["judge"]))


def _markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| trait | judge | strength | 95% interval | relevance | accuracy | kappa (est.) | p "
        "| pairs |",
        "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        interval = (
            f"[{r['low_2.5']:.3f}, {r['high_97.5']:.3f}]"
            if r["low_2.5"] is not None and r["high_97.5"] is not None
            else "n/a"
        )
        lines.append(
            f"| {r['trait']} | {r['judge']} | {_fmt(r['strength'])} | {interval} | "
            f"{_fmt(r['relevance'])} | {_fmt(r['accuracy'])} | "
            f"{_fmt(r['cohens_kappa_estimated'])} | {_fmt(r['p_value'], 4)} | "
            f"{r['num_pairs'] if r['num_pairs'] is not None else 'n/a'} |"
        )
    return "\n".join(lines) + "\n"


def _fmt(value: Any, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _code(vote: Any) -> int:
    return {"text_a": 0, "text_b": 1}.get(normalize_vote(vote) or "", -1)


def _majority(items: Items) -> list[Any]:
    """Per pair, the humans' majority preference; a tie between text_a and text_b is no vote."""
    out: list[Any] = []
    for row in items.rows():
        counts = Counter(v for v in (normalize_vote(x) for x in row) if v is not None)
        if not counts or (len(counts) == 2 and counts["text_a"] == counts["text_b"]):
            out.append(None)
        else:
            out.append(counts.most_common(1)[0][0])
    return out


def _on_items(frame: pl.DataFrame, ids: pl.Series, columns: list[str]) -> dict[str, list[Any]]:
    base = pl.DataFrame({"original_id": ids})
    joined = base.join(
        frame.select("original_id", *columns).unique("original_id", keep="first"),
        on="original_id", how="left", maintain_order="left",
    )  # fmt: skip
    return {c: joined.get_column(c).to_list() for c in columns}


def _mean(values: list[Any]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _nanmean(values: FloatArray) -> FloatArray:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(np.nanmean(values, axis=1), dtype=np.float64)
