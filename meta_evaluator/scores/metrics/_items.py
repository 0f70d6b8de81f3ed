"""Judge and human labels laid out per item, the one shape every built-in scorer computes on.

Rows are the items of `ids` (the order bootstrap weights use), columns the humans. Scores are
weighted means over items, so the point estimate (all weights 1) and every bootstrap resample
(weights = how often each item was drawn) go through the same code.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.checks import encode_labels
from meta_evaluator.stats.majority import (
    encode_sets,
    holds_label_sets,
    majority_labels,
    majority_of_codes,
    majority_of_sets,
    set_indicators,
)

if TYPE_CHECKING:
    from meta_evaluator.scores.base_scorer import ScoringCall

__all__ = [
    "Items",
    "common_ids",
    "mean_over_humans",
    "pairable_ids",
    "weighted_ratio",
]

FloatArray = npt.NDArray[np.float64]


def common_ids(judge_data: pl.DataFrame, human_data: pl.DataFrame) -> pl.Series:
    """Ids with a judge label and at least one human label, sorted (the items scored)."""
    judge = judge_data.filter(pl.col("label").is_not_null()).get_column("original_id")
    human = human_data.filter(pl.col("label").is_not_null()).get_column("original_id")
    return judge.filter(judge.is_in(human.implode())).unique().sort()


def pairable_ids(judge_data: pl.DataFrame, human_data: pl.DataFrame) -> pl.Series:
    """Ids labelled by two coders or more, the judge counted as one, sorted.

    The units of a reliability matrix of the judge and the humans that can be paired
    (Krippendorff's alpha); one label per coder and id, as results hold.

    Raises:
        ScoringError: The two frames' ids are of different types.
    """
    judge = judge_data.filter(pl.col("label").is_not_null()).get_column("original_id")
    human = human_data.filter(pl.col("label").is_not_null()).get_column("original_id")
    parts = [ids for ids in (judge, human) if ids.len()]
    if len(parts) == 2 and judge.dtype != human.dtype:
        raise ScoringError(
            f"judge ids are {judge.dtype}, human ids are {human.dtype}; import both against "
            "the same project data so ids keep one type."
        )
    if not parts:
        return judge
    counts = pl.concat(parts).to_frame("original_id").group_by("original_id").len()
    return counts.filter(pl.col("len") >= 2).get_column("original_id").sort()


@dataclass(frozen=True)
class Items:
    """Labels per item: `judge[i]` and `human[h][i]` (null where absent)."""

    ids: pl.Series
    humans: list[str]
    judge: pl.Series
    human: list[pl.Series]
    encoded: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], list[Any]] | None = field(
        default=None, compare=False, repr=False
    )
    """Codes given with the layout (`leave_one_out`), as `codes()` returns them; None: encoded
    from the labels on first use."""

    @classmethod
    def of_call(cls, call: ScoringCall) -> Items | None:
        """The items both of `call`'s frames label (None when there is none).

        Laid out once for every scorer given the same frames (`ScoringCall.shared`).
        """
        if "items" not in call.shared:
            ids = common_ids(call.judge_data, call.human_data)
            laid_out = cls.build(call.judge_data, call.human_data, ids) if ids.len() else None
            call.shared["items"] = laid_out
        found: Items | None = call.shared["items"]
        return found

    @classmethod
    def build(cls, judge_data: pl.DataFrame, human_data: pl.DataFrame, ids: pl.Series) -> Items:
        """Lay out `judge_data` and `human_data` on the items `ids` (sorted, unique).

        Each frame holds at most one label per id (one judge, or one annotator), as results
        do; ids not among `ids` are left out.
        """
        n = ids.len()

        def on_items(frame: pl.DataFrame) -> pl.Series:
            found = frame.get_column("original_id")
            if found.len() == n and found.equals(ids, check_names=False):
                return frame.get_column("label")  # already one label per item, in item order
            # Sorted ids let positions come from a binary search instead of a hash join.
            position = ids.search_sorted(found)
            labels = frame.get_column("label")
            # ids not among `ids` fall past the end or on another id; most frames have none,
            # and are then not copied (a million rows: a filter costs 10 MB a column)
            match = position < n
            if match.all():
                match = ids.gather(position) == found
            else:
                match = match & (ids.gather(position.clip(upper_bound=n - 1)) == found)
            if not match.all():
                position, labels = position.filter(match), labels.filter(match)
            if isinstance(labels.dtype, pl.List | pl.Array | pl.Struct | pl.Object):
                # scatter takes flat dtypes only: place nested labels through a join
                placed = pl.DataFrame({"position": position, "label": labels})
                slots = pl.DataFrame({"position": pl.Series(range(n), dtype=position.dtype)})
                return slots.join(placed, on="position", how="left", maintain_order="left")["label"]
            out = pl.Series("label", [], dtype=labels.dtype).extend_constant(None, n)
            return out.scatter(position, labels)

        names = human_data.get_column("human_id")
        humans = sorted(names.unique().to_list())
        labels = human_data.select("original_id", "label")
        human = [on_items(part) for part in _by_human(labels, names, humans)]
        return cls(ids, humans, on_items(judge_data), human)

    @property
    def n(self) -> int:
        """Number of items."""
        return self.judge.len()

    def codes(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], list[Any]]:
        """Judge codes (n,), human codes (n, H) on one category list; -1 where absent.

        Computed once (every scorer of the items asks); the arrays are shared, so read-only.
        """
        return self._codes

    @functools.cached_property
    def _codes(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], list[Any]]:
        if self.encoded is not None:
            return self.encoded
        codes, categories = encode_labels(self.judge, *self.human)
        human = np.column_stack(codes[1:]) if self.human else np.empty((self.n, 0), np.int64)
        judge = codes[0]
        judge.flags.writeable = human.flags.writeable = False
        return judge, human, categories

    def human_counts(self) -> npt.NDArray[np.int64]:
        """How many humans labelled each item the judge labelled (0 where the judge did not)."""
        counts = np.zeros(self.n, dtype=np.int64)
        for column in self.human:
            counts += column.is_not_null().to_numpy()
        return np.where(self.judge.is_not_null().to_numpy(), counts, 0)

    def leave_one_out(self) -> list[Items]:
        """Per human h, the layout with h in the judge's place and the other humans in theirs.

        What a human baseline scores: the same items (those the judge labelled; the humans'
        labels of other items are left out) in the same order, so one weight vector resamples
        judge and humans alike, and the same codes and category list as the judge's score.
        The other humans come in turn after h (h+1, ..., h-1): every layout's codes are then
        a view of one array of the humans' codes, side by side twice, not a copy per human.
        """
        judge, human, categories = self.codes()
        on_judge = judge >= 0
        twice = np.tile(np.where(on_judge[:, None], human, -1), 2)
        twice.flags.writeable = False
        columns = self.human
        if not on_judge.all():
            keep = pl.Series("keep", on_judge)
            columns = [
                pl.DataFrame({"label": c, "keep": keep})
                .select(pl.when(pl.col("keep")).then(pl.col("label")))
                .to_series()
                for c in columns
            ]
        count = len(self.humans)
        layouts = []
        for h in range(count):
            others = [(h + step) % count for step in range(1, count)]
            layouts.append(
                Items(
                    self.ids,
                    [self.humans[g] for g in others],
                    columns[h].alias("label"),
                    [columns[g] for g in others],
                    encoded=(twice[:, h], twice[:, h + 1 : h + count], categories),
                )
            )
        return layouts

    def rows(self) -> list[list[Any]]:
        """The humans' labels of each item, as Python values."""
        columns = [h.to_list() for h in self.human]
        return [list(row) for row in zip(*columns, strict=True)] if columns else [[]] * self.n

    def majority(self) -> list[Any]:
        """The humans' majority label per item (`stats.majority`; None where nobody labelled).

        Label sets come as the sorted list of the outcomes in the majority.
        """
        if not self.human:
            return [None] * self.n
        return majority_labels(self.human).to_list()

    def majority_codes(
        self,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], list[Any]]:
        """Judge codes and the humans' majority codes per item (-1: none), and their labels.

        Single labels: the same as `encode_labels(judge, majority())`, the labels those the
        judge or the majority hold, sorted; the votes are counted on the codes. Label sets are
        compared as sets: one code per distinct set the judge or the majority holds, each
        listed as its outcomes, sorted (a 0.3.3 vector as the outcomes it names), in the
        order of those lists.
        """
        if holds_label_sets(self.judge, *self.human, caller="majority_vote"):
            return self._set_codes()
        judge, human, categories = self.codes()
        majority = majority_of_codes(human, len(categories))
        # only the labels the judge or the majority hold, as encode_labels would list them
        used = np.unique(np.concatenate([judge[judge >= 0], majority[majority >= 0]]))
        renumber = np.full(len(categories), -1, dtype=np.int64)
        renumber[used] = np.arange(used.size)
        return (
            np.where(judge >= 0, renumber[judge], -1),
            np.where(majority >= 0, renumber[majority], -1),
            [categories[i] for i in used],
        )

    def _set_codes(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], list[Any]]:
        """`majority_codes` of label sets: the judge's and the majority's sets, coded as sets."""
        outcomes, (judge, *humans) = set_indicators(self.judge, *self.human)
        if humans:
            voted = majority_of_sets([c for c, _ in humans], [p for _, p in humans])
        else:
            voted = (np.zeros_like(judge[0]), np.zeros(self.n, dtype=np.bool_))
        (judge_codes, majority), categories = encode_sets(judge, voted, outcomes=outcomes)
        return judge_codes, majority, categories


def _by_human(labels: pl.DataFrame, names: pl.Series, humans: list[str]) -> list[pl.DataFrame]:
    """Each human's rows of `labels`, in the order of `humans`.

    Rows of one human side by side (as compare's frames are) are sliced, not copied.
    """
    runs = names.rle()
    if runs.len() != len(humans):  # interleaved: a filter per human
        return [labels.filter(names == h) for h in humans]
    lengths = runs.struct.field("len").to_list()
    starts = [sum(lengths[:i]) for i in range(len(lengths))]
    place = dict(zip(runs.struct.field("value").to_list(), zip(starts, lengths, strict=True),
                     strict=True))  # fmt: skip
    return [labels.slice(*place[h]) for h in humans]


def weighted_ratio(
    weights: FloatArray, top: npt.NDArray[Any], bottom: npt.NDArray[Any]
) -> FloatArray:
    """(weights @ top) / (weights @ bottom), NaN where the bottom is 0.

    `top` and `bottom` may be booleans (counted as 0 and 1, a byte each until multiplied).
    """
    num, den = weights @ top, weights @ bottom
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def mean_over_humans(values: FloatArray) -> FloatArray:
    """Mean over the last axis of the defined (non-NaN) values; NaN when none is defined."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows stay NaN
        return (
            np.nanmean(values, axis=-1) if values.shape[-1] else np.full(values.shape[:-1], np.nan)
        )
