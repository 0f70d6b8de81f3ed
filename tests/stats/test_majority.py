"""The humans' majority rule (`stats/majority.py`): hand-computed cases, meta-evaluator 0.3.3's
per-position majority of its `FALSE` vectors as an independent reference for the set rule, and
property tests that every vectorised form agrees with the plain `majority_label`.

The reference rules are written here from METRICS.md F and from 0.3.3's
`scores/metrics/classification/classification_scorer.py` (per position, `max` over
(count, label)), not from the module's code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meta_evaluator.errors import ScoringError
from meta_evaluator.eval_task import normalize_label
from meta_evaluator.eval_task.eval_task import NOT_SELECTED
from meta_evaluator.stats import majority as majority_module
from meta_evaluator.stats.checks import encode_labels
from meta_evaluator.stats.majority import (
    NOT_CHOSEN,
    encode_sets,
    holds_label_sets,
    label_set,
    majority_label,
    majority_labels,
    majority_of_codes,
    majority_of_counts,
    majority_of_sets,
    ordered_outcomes,
    set_indicators,
)

# --- the rule, by hand ---------------------------------------------------------------------------


def test_single_labels_most_frequent_then_largest() -> None:
    assert majority_label(["no", "yes", "yes"]) == "yes"
    assert majority_label(["yes", "no", "no", None]) == "no"
    assert majority_label(["no", "yes"]) == "yes"  # 1-1: the largest
    assert majority_label(["b", "c", "a", "a", "c"]) == "c"  # 2-2-1: c over a
    assert majority_label([3, 1, 1, 3, 2]) == 3
    assert majority_label(["rejection", "not rejection"]) == "rejection"
    assert majority_label([float("nan"), "x"]) == "x"  # NaN is no label


def test_no_label_is_no_majority() -> None:
    assert majority_label([]) is None
    assert majority_label([None, float("nan")]) is None
    assert majority_labels([[None, "a"], [None, None]]).to_list() == [None, "a"]
    assert majority_labels([[None, ["a"]], [None, None]]).to_list() == [None, ["a"]]


def test_the_review_demo_is_the_set_of_outcomes_two_of_three_chose() -> None:
    """[a,b], [a,c], [b,c]: a, b and c are each chosen by 2 of 3 annotators (>= half)."""
    assert majority_label([["a", "b"], ["a", "c"], ["b", "c"]]) == ["a", "b", "c"]


def test_label_sets_hand_computed() -> None:
    assert majority_label([["a"], ["a", "b"], []]) == ["a"]  # b: 1 of 3
    assert majority_label([["a"], ["b"]]) == ["a", "b"]  # 1 of 2 each: a tie keeps them
    assert majority_label([[], [], ["a"]]) == []  # empty answers are votes for nothing
    assert majority_label([["b", "a"], ("a",), {"a", "c"}, None]) == ["a"]  # any collection
    assert majority_label([["a", "a", "b"], ["c"]]) == ["a", "b", "c"]  # a counted once
    assert majority_label([["c", "a"], ["a", "c"]], order=["c", "b", "a"]) == ["c", "a"]
    assert majority_label([["x", "a"], ["x", "a"]], order=["a"]) == ["a", "x"]  # x not in order


def test_vectors_of_0_3_3_read_as_sets() -> None:
    """A slot holding `FALSE` (any case, white space around) chooses nothing."""
    vectors = [["violence", "FALSE"], ["FALSE", "FALSE"], [" false ", "fraud"]]
    assert majority_label(vectors) == []  # violence and fraud: 1 of 3 each
    assert majority_label(vectors[:1] + vectors) == ["violence"]  # 2 of 4
    assert label_set(["FALSE", "fraud", None]) == frozenset({"fraud"})
    outcomes, [(chosen, present)] = set_indicators([["False", "b", "a"], None, []])
    assert outcomes == ["a", "b"]
    assert chosen.tolist() == [[True, True], [False, False], [False, False]]
    assert present.tolist() == [True, False, True]
    assert ordered_outcomes(["b", "x", "a", "b"], ["b", "a"]) == ["b", "a", "x"]


def test_not_chosen_is_the_word_eval_task_reserves() -> None:
    assert normalize_label(NOT_SELECTED) == NOT_CHOSEN


def test_counts_and_codes_by_hand() -> None:
    votes = np.array([[0, 2, 2], [1, 0, 0], [0, 0, 0], [3, 1, 3]])
    assert majority_of_counts(votes).tolist() == [2, 0, -1, 2]
    codes = np.array([[1, 2, 2, -1], [0, -1, -1, -1], [-1, -1, -1, -1], [0, 1, 0, 1]])
    assert majority_of_codes(codes).tolist() == [2, 0, -1, 1]
    assert majority_of_codes(codes, 5).tolist() == [2, 0, -1, 1]
    assert majority_of_codes(np.empty((3, 0), dtype=np.int64), 0).tolist() == [-1, -1, -1]


def test_sets_of_indicators_by_hand() -> None:
    chosen = np.array(
        [[[1, 0, 0], [1, 1, 0]], [[0, 1, 0], [1, 0, 0]], [[1, 0, 1], [0, 0, 0]]], dtype=bool
    )  # 3 annotators x 2 items x 3 outcomes
    present = np.array([[True, True], [True, False], [False, False]])
    majority, rated = majority_of_sets(chosen, present)
    # item 0: a 1 of 2, b 1 of 2 (c only from someone absent); item 1: the first alone
    assert majority.astype(int).tolist() == [[1, 1, 0], [1, 1, 0]]
    assert rated.tolist() == [True, True]
    none, nobody = majority_of_sets(chosen[:1], np.zeros((1, 2), dtype=bool))
    assert not none.any() and nobody.tolist() == [False, False]


# --- an independent reference: 0.3.3's per-position majority of FALSE vectors --------------------


def _per_position_0_3_3(vectors: list[list[str]]) -> list[str]:
    """meta-evaluator 0.3.3's majority of equal-length lists: per position max (count, label)."""
    consensus = []
    for position in range(len(vectors[0])):
        votes = Counter(v[position] for v in vectors)
        consensus.append(max(votes.items(), key=lambda item: (item[1], item[0]))[0])
    return consensus


OUTCOMES = ["hate", "fraud", "violence", "self-harm"]  # lower case: FALSE sorts before each


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=4, max_size=4), min_size=1, max_size=7))
def test_the_set_rule_is_0_3_3s_rule_on_its_vectors(choices: list[list[bool]]) -> None:
    vectors = [[o if c else "FALSE" for o, c in zip(OUTCOMES, row, strict=True)] for row in choices]
    reference = [v for v in _per_position_0_3_3(vectors) if v != "FALSE"]
    assert majority_label(vectors, order=OUTCOMES) == reference


# --- the vectorised forms agree with the plain rule ---------------------------------------------

SINGLE = st.sampled_from(["a", "b", "c", "not rejection", "rejection", "Z", "é"])
NUMBER = st.integers(-2, 3)
OUTCOME = st.sampled_from(["a", "b", "c", "FALSE", "false "])


def _columns(rows: list[list[Any]]) -> list[list[Any]]:
    """Items x annotators as one column per annotator."""
    return [list(column) for column in zip(*rows, strict=True)]


@contextmanager
def counting(pairwise: bool) -> Iterator[None]:
    """Either way `majority_of_codes` counts: an items x labels table, or annotator pairs."""
    with pytest.MonkeyPatch.context() as patch:
        if pairwise:
            patch.setattr(majority_module, "_MOST_COUNTS", 0)
        yield


BOTH_WAYS = pytest.mark.parametrize("pairwise", [False, True], ids=["counted", "pairwise"])


def _grids(labels: st.SearchStrategy[Any], most: int) -> st.SearchStrategy[list[list[Any]]]:
    """Items x annotators (1 to `most` of them), None where one did not label the item."""
    return st.integers(1, most).flatmap(
        lambda h: st.lists(
            st.lists(st.one_of(st.none(), labels), min_size=h, max_size=h), min_size=1, max_size=20
        )
    )


@BOTH_WAYS
@settings(max_examples=100, deadline=None)
@given(rows=st.one_of(_grids(SINGLE, 5), _grids(NUMBER, 4)))
def test_single_labels_vectorised_equal_plain(pairwise: bool, rows: list[list[Any]]) -> None:
    columns = _columns(rows)
    expected = [majority_label(row) for row in rows]
    texts = any(isinstance(v, str) for row in rows for v in row)
    with counting(pairwise):
        assert majority_labels(columns).to_list() == expected
        if texts:  # as the row table reads them: categories
            series = [pl.Series(c, dtype=pl.String).cast(pl.Categorical) for c in columns]
            assert majority_labels(series).to_list() == expected
        codes, categories = encode_labels(*columns)
        found = majority_of_codes(np.column_stack(codes), len(categories))
    assert [None if c < 0 else categories[c] for c in found] == expected


@settings(max_examples=100, deadline=None)
@given(
    rows=_grids(st.lists(OUTCOME, max_size=4), 5),
    order=st.one_of(st.none(), st.permutations(["a", "b", "c"]), st.just(["c"])),
)
def test_label_sets_vectorised_equal_plain(rows: list[list[Any]], order: list[str] | None) -> None:
    columns = _columns(rows)
    expected = [majority_label(row, order=order) for row in rows]
    assert majority_labels(columns, order=order).to_list() == expected
    series = [pl.Series(c, dtype=pl.List(pl.String)) for c in columns]
    assert majority_labels(series, order=order).to_list() == expected
    # the indicators' rule, coded as sets
    outcomes, indicators = set_indicators(*columns)
    voted = majority_of_sets([c for c, _ in indicators], [p for _, p in indicators])
    (codes,), categories = encode_sets(voted, outcomes=outcomes)
    assert [None if c < 0 else categories[c] for c in codes] == [
        None if m is None else sorted(m) for m in expected
    ]


@settings(max_examples=100, deadline=None)
@given(rows=_grids(st.one_of(st.lists(OUTCOME, max_size=4), st.sets(OUTCOME, max_size=3)), 4))
def test_sets_are_coded_as_encode_labels_codes_their_sorted_outcomes(
    rows: list[list[Any]],
) -> None:
    """The reference: each answer as the sorted tuple of `label_set`, by `encode_labels`."""
    columns = _columns(rows)
    outcomes, indicators = set_indicators(*columns)
    codes, categories = encode_sets(*indicators, outcomes=outcomes)
    plain = [[None if v is None else tuple(sorted(label_set(v) or ())) for v in c] for c in columns]
    want, want_categories = encode_labels(*plain)
    assert [list(c) for c in want_categories] == categories
    assert all(np.array_equal(a, b) for a, b in zip(codes, want, strict=True))


def test_many_outcomes_are_coded_alike() -> None:
    """Past 62 outcomes a set is no longer the bits of one integer: rows are compared."""
    names = [f"o{i:03d}" for i in range(70)]
    column = [names[:3], names[65:], names[:3], None, [names[69], names[0]]]
    outcomes, indicators = set_indicators(column)
    (codes,), categories = encode_sets(*indicators, outcomes=outcomes)
    assert codes.tolist() == [0, 2, 0, -1, 1]
    assert categories == [names[:3], [names[0], names[69]], names[65:]]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(0, 5), max_size=6), min_size=1, max_size=12))
def test_counts_equal_plain(table: list[list[int]]) -> None:
    width = max(len(r) for r in table)
    votes = np.array([r + [0] * (width - len(r)) for r in table], dtype=np.int64)
    labels = [[c for c, n in enumerate(row) for _ in range(n)] for row in votes.tolist()]
    expected = [-1 if m is None else m for m in (majority_label(r) for r in labels)]
    assert majority_of_counts(votes).tolist() == expected


# --- what is refused -----------------------------------------------------------------------------


def test_mixed_kinds_are_refused() -> None:
    with pytest.raises(ScoringError, match="majority_label: an item's labels mix label sets"):
        majority_label([["a"], "a"])
    with pytest.raises(ScoringError, match=r"majority_labels: columns \[1\] hold label sets and "
                                           r"columns \[0\] single labels"):  # fmt: skip
        majority_labels([["a", None], [["a"], None], [None, None]])
    with pytest.raises(ScoringError, match="a column mixes label sets and single labels"):
        majority_labels([["a", ["a"]]])
    with pytest.raises(ScoringError, match="label_set: a multi-label answer is a list or set"):
        label_set("a")
    with pytest.raises(ScoringError, match="the outcomes of the answers are of several types"):
        set_indicators([["a"], [1]])
    with pytest.raises(ScoringError, match="the outcomes of the answers are of several types"):
        set_indicators([["a"]], pl.Series([[1]]))
    with pytest.raises(ScoringError, match="a multi-label answer is a list or set of outcomes"):
        set_indicators([["a"], "a"])
    with pytest.raises(ScoringError, match=r"encode_sets: labelling 0 has shapes \(2, 1\)"):
        encode_sets((np.zeros((2, 1)), np.ones(2)), outcomes=["a", "b"])


def test_bad_shapes_and_codes_are_refused() -> None:
    with pytest.raises(ScoringError, match="majority_labels: no annotator's labels"):
        majority_labels([])
    with pytest.raises(ScoringError, match="the same length; columns\\[0\\] has 2"):
        majority_labels([["a", "b"], ["a"]])
    with pytest.raises(ScoringError, match="majority_of_codes: codes must be items x annotators"):
        majority_of_codes([1, 2])
    with pytest.raises(ScoringError, match=r"codes must lie in \[-1, 2\)"):
        majority_of_codes([[0, 2]], 2)
    with pytest.raises(ScoringError, match=r"codes must lie in \[-1, 3\)"):
        majority_of_codes([[-2, 0]], 3)
    with pytest.raises(ScoringError, match="majority_of_counts: votes must be counts >= 0"):
        majority_of_counts([[1, -1]])
    with pytest.raises(ScoringError, match="majority_of_sets: 2 annotators chose, 1 are present"):
        majority_of_sets(np.zeros((2, 3, 2), dtype=bool), np.zeros((1, 3), dtype=bool))
    with pytest.raises(ScoringError, match="annotator 1 has shapes"):
        majority_of_sets([np.zeros((3, 2)), np.zeros((2, 2))], [np.ones(3), np.ones(2)])
    with pytest.raises(ScoringError, match="cannot be ordered to break a tie"):
        majority_label(["a", 1])


def test_holds_label_sets_ignores_empty_columns() -> None:
    assert holds_label_sets(pl.Series([None, None], dtype=pl.String), [["a"], None])
    assert not holds_label_sets(pl.Series(["a", None]), [None, None])
    assert not holds_label_sets([None])
