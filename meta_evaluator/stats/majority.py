"""The humans' majority label of an item: the one rule every score, table and page uses.

Single labels: the most frequent, a tie going to the largest (METRICS.md F). Label sets
(multi-label answers): each outcome chosen by at least half of the annotators who labelled the
item. `majority_label` states the rule for one item in plain Python; `majority_labels`,
`majority_of_codes`, `majority_of_counts` and `majority_of_sets` compute it over many items
at once, and tests hold them to `majority_label`. A judge's own majority over k answers
(`judge/_judge_run.py`) is another rule, for another purpose: see there.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.checks import check_same_length, encode_labels, is_missing

__all__ = [
    "NOT_CHOSEN",
    "encode_sets",
    "holds_label_sets",
    "is_label_set",
    "label_set",
    "majority_label",
    "majority_labels",
    "majority_of_codes",
    "majority_of_counts",
    "majority_of_sets",
    "ordered_outcomes",
    "set_indicators",
]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

NOT_CHOSEN = "false"
"""A slot of a label set that is no outcome, as meta-evaluator 0.3.3 wrote it (`FALSE`, any
case, white space around), compared stripped and lower-cased; `eval_task.NOT_SELECTED` is the
same word, which no multi-label outcome may be named."""

_MOST_COUNTS = 1 << 25
"""Most cells of the items x labels vote table (128 MB of int32); more labels are counted pair by
pair of annotators instead."""


def is_label_set(value: Any) -> bool:
    """Whether `value` is a multi-label answer (a list, tuple, set or array of outcomes)."""
    return isinstance(value, list | tuple | set | frozenset | np.ndarray)


def _not_chosen(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() == NOT_CHOSEN


def label_set(answer: Any) -> frozenset[Hashable] | None:
    """The outcomes a multi-label answer chooses: its values but missing ones and `FALSE` slots.

    A meta-evaluator 0.3.3 vector (one slot per outcome, the outcome or `FALSE`) reads as the
    outcomes it names; a list of outcomes as itself, each once. None stays None.

    Raises:
        ScoringError: `answer` is neither missing nor a label set.

    Example:
        >>> sorted(label_set(["FALSE", "fraud", "hate", "fraud"]))
        ['fraud', 'hate']
    """
    if is_missing(answer):
        return None
    if not is_label_set(answer):
        raise ScoringError(
            f"label_set: a multi-label answer is a list or set of outcomes; got {answer!r}."
        )
    return frozenset(v for v in answer if not is_missing(v) and not _not_chosen(v))


def ordered_outcomes(outcomes: Iterable[Any], order: Sequence[Any] | None = None) -> list[Any]:
    """`outcomes`, each once, in `order` (those it lacks after it), else sorted.

    Outcomes of several types that cannot be compared sort by type name, then text.

    Example:
        >>> ordered_outcomes(["a", "x", "c"], ["c", "b", "a"])
        ['c', 'a', 'x']
    """
    found = list(dict.fromkeys(outcomes))
    first: list[Any] = []
    if order is not None:
        held = set(found)
        first = [o for o in dict.fromkeys(order) if o in held]
        placed = set(first)
        found = [o for o in found if o not in placed]
    try:
        rest = sorted(found)
    except TypeError:
        rest = sorted(found, key=lambda v: (type(v).__name__, str(v)))
    return first + rest


def majority_label(labels: Iterable[Any], *, order: Sequence[Any] | None = None) -> Any:
    """The humans' majority of one item: the label most of them gave, or the outcomes half chose.

    Formula: over the labels present (None and NaN are left out), single labels: the label l
    with the most votes n_l = #{annotators who gave l}; among labels with the most votes, the
    largest (Python's order). Label sets (lists, tuples, sets; a 0.3.3 vector read by
    `label_set`): with m annotators who gave a set and n_o of them choosing outcome o, the
    majority set is {o : 2 * n_o >= m}. A tie between chosen and not chosen keeps o, as a
    tie of single labels keeps the largest (True over False); an empty set is a vote for no
    outcome, and the majority may be empty.

    Args:
        labels: One item's labels, one per annotator who labelled it: all single labels (text,
            numbers) or all label sets.
        order: For label sets, the order of the outcomes in the result (those it lacks follow,
            sorted); default sorted.

    Returns:
        The majority label, or for label sets the majority's outcomes as a list.

    Undefined: None when no label is present (nobody labelled the item).

    Raises:
        ScoringError: The labels mix label sets and single labels, or tied labels cannot be
            ordered.

    References:
        METRICS.md F (ties to the largest label). The set rule is meta-evaluator 0.3.3's
        per-position majority of its `FALSE` vectors (`scores/metrics/classification/
        classification_scorer.py`), whose `FALSE` sorts before the outcomes, stated on sets.

    Example:
        >>> majority_label(["no", "yes", "yes", None])
        'yes'
        >>> majority_label(["no", "yes"])  # a tie: the largest
        'yes'
        >>> majority_label([["a", "b"], ["a", "c"], ["b", "c"]])  # each chosen by 2 of 3
        ['a', 'b', 'c']
        >>> majority_label([["a", "FALSE"], ["FALSE", "FALSE"], ["a", "b"]])
        ['a']
    """
    present = [v for v in labels if not is_missing(v)]
    if not present:
        return None
    kinds = {is_label_set(v) for v in present}
    if kinds == {True}:
        sets = [label_set(v) or frozenset() for v in present]
        votes = Counter(o for s in sets for o in s)
        return ordered_outcomes((o for o, n in votes.items() if 2 * n >= len(sets)), order)
    if len(kinds) > 1:
        raise ScoringError(
            f"majority_label: an item's labels mix label sets and single labels: {present!r}."
        )
    counts = Counter(present)
    try:
        return max(counts.items(), key=lambda item: (item[1], item[0]))[0]
    except TypeError:
        raise ScoringError(
            f"majority_label: the labels {sorted(counts, key=str)!r} cannot be ordered to break "
            "a tie; give labels of one type."
        ) from None


def majority_of_counts(votes: npt.ArrayLike) -> IntArray:
    """Per item, the code with the most votes (ties to the largest code); -1 with no vote.

    Formula: m_i = max{c : v_ic = max_d v_id} when max_d v_id > 0, else -1, with v_ic the votes
    item i has for code c (codes on one sorted category list, so the largest code is the
    largest label, as METRICS.md F breaks ties).

    Args:
        votes: Counts of shape (n, k): items x codes, whole numbers >= 0.

    Returns:
        Codes of shape (n,), in [0, k) or -1.

    Undefined: -1 for an item without votes.

    Raises:
        ScoringError: `votes` is not two-dimensional, or holds a negative count.

    References:
        METRICS.md F.

    Example:
        >>> majority_of_counts([[2, 1, 0], [1, 1, 0], [0, 0, 0]]).tolist()
        [0, 1, -1]
    """
    counts = np.asarray(votes)
    if counts.ndim != 2:
        raise ScoringError(f"majority_of_counts: votes must be items x codes; got {counts.shape}.")
    n, k = counts.shape
    if k == 0:
        return np.full(n, -1, dtype=np.int64)
    if counts.size and counts.min() < 0:
        raise ScoringError("majority_of_counts: votes must be counts >= 0.")
    best = k - 1 - np.argmax(counts[:, ::-1], axis=1)  # the last (largest) of the most voted
    return np.where(counts.max(axis=1) > 0, best, -1).astype(np.int64)


def majority_of_codes(codes: npt.ArrayLike, k: int | None = None) -> IntArray:
    """Per item, the majority of the annotators' label codes (ties to the largest code).

    Formula: as `majority_of_counts` on v_ic = #{annotators h : codes[i, h] = c}. With few
    codes the votes are counted in an items x codes table; with many (more than `_MOST_COUNTS`
    cells), per annotator h as n_ih = #{g : codes[i, g] = codes[i, h]}, and the item's majority
    is the code of the largest (n_ih, codes[i, h]).

    Args:
        codes: Integer codes of shape (n, H): items x annotators, in [0, k) or -1 where the
            annotator did not label the item (as `stats.checks.encode_labels` gives them,
            codes in the order of the sorted labels).
        k: Number of codes (default: the largest code + 1).

    Returns:
        Codes of shape (n,), in [0, k) or -1.

    Undefined: -1 for an item no annotator labelled.

    Raises:
        ScoringError: `codes` is not two-dimensional, or a code is outside [-1, k).

    References:
        METRICS.md F.

    Example:
        >>> majority_of_codes([[0, 1, 1], [0, 1, -1], [-1, -1, -1]]).tolist()
        [1, 1, -1]
    """
    table = np.asarray(codes, dtype=np.int64)
    if table.ndim != 2:
        raise ScoringError(
            f"majority_of_codes: codes must be items x annotators; got {table.shape}."
        )
    n, humans = table.shape
    top = int(table.max(initial=-1)) + 1
    k = top if k is None else k
    if table.size and (table.min() < -1 or top > k):
        raise ScoringError(f"majority_of_codes: codes must lie in [-1, {k}).")
    if n * k <= _MOST_COUNTS:
        cells = (np.arange(n, dtype=np.int64)[:, None] * k + table)[table >= 0]
        return majority_of_counts(np.bincount(cells, minlength=n * k).reshape(n, k))
    best = np.full(n, -1, dtype=np.int64)
    for h in range(humans):
        code = table[:, h]
        agree = sum((table[:, g] == code).astype(np.int64) for g in range(humans))
        best = np.maximum(best, np.where(code >= 0, agree * k + code, -1))
    return np.where(best >= 0, best % max(k, 1), -1)


def majority_of_sets(
    chosen: Sequence[npt.ArrayLike], present: Sequence[npt.ArrayLike]
) -> tuple[BoolArray, BoolArray]:
    """Per item, the outcomes at least half of the annotators who labelled it chose.

    Formula: with p_hi = annotator h labelled item i and x_hio = h chose outcome o for i,
    m_i = sum_h p_hi and n_io = sum_h p_hi x_hio; o is in item i's majority set when
    2 n_io >= m_i and m_i > 0 (the rule of `majority_label` on label sets).

    Args:
        chosen: One (n, k) Boolean array per annotator: items x outcomes chosen (as
            `stats.classification.label_indicators` gives them), or one (H, n, k) array.
        present: One (n,) Boolean array per annotator: whether h labelled the item.

    Returns:
        (majority, rated): Booleans of shape (n, k), the majority set of each item, and (n,),
        whether anyone labelled the item.

    Undefined: an item nobody labelled has no majority (`rated` False, an empty row).

    Raises:
        ScoringError: Not one `present` per `chosen`, or the shapes do not match.

    References:
        METRICS.md F (a tie keeps the outcome, as a tie keeps the largest label).

    Example:
        >>> chosen = np.array([[[1, 1, 0]], [[1, 0, 1]], [[0, 1, 1]]], dtype=bool)
        >>> present = np.array([[True], [True], [True]])
        >>> majority, rated = majority_of_sets(chosen, present)
        >>> majority.astype(int).tolist(), rated.tolist()
        ([[1, 1, 1]], [True])
    """
    if len(chosen) != len(present):
        raise ScoringError(
            f"majority_of_sets: {len(chosen)} annotators chose, {len(present)} are present."
        )
    if not len(chosen):
        raise ScoringError("majority_of_sets: no annotator; give at least one.")
    arrays = [np.asarray(c, dtype=np.bool_) for c in chosen]
    shape = arrays[0].shape
    if len(shape) != 2:
        raise ScoringError(f"majority_of_sets: chosen must be items x outcomes; got {shape}.")
    votes = np.zeros(shape, dtype=np.int64)
    voters = np.zeros(shape[0], dtype=np.int64)
    for h, (c, p) in enumerate(zip(arrays, present, strict=True)):
        here = np.asarray(p, dtype=np.bool_)
        if c.shape != shape or here.shape != shape[:1]:
            raise ScoringError(
                f"majority_of_sets: annotator {h} has shapes {c.shape} and {here.shape}; "
                f"expected {shape} and {shape[:1]}."
            )
        votes += c & here[:, None]
        voters += here
    rated = voters > 0
    return (2 * votes >= voters[:, None]) & rated[:, None], rated


def holds_label_sets(*columns: Sequence[Any] | pl.Series, caller: str = "holds_label_sets") -> bool:
    """Whether columns of labels hold label sets (a list dtype, or lists among their values).

    A column without any label counts as either kind; one kind for all the others.

    Raises:
        ScoringError: The columns, or one of them, mix label sets and single labels (the
            message starts with `caller`).

    Example:
        >>> holds_label_sets([["a"], None], [None, None]), holds_label_sets(["a", None])
        (True, False)
    """
    kinds = [_kind(caller, c) for c in columns]
    if True in kinds and False in kinds:
        raise ScoringError(
            f"{caller}: columns {[h for h, k in enumerate(kinds) if k]} hold label sets and "
            f"columns {[h for h, k in enumerate(kinds) if k is False]} single labels; give one "
            "kind."
        )
    return True in kinds


def _kind(caller: str, column: Sequence[Any] | pl.Series) -> bool | None:
    """True: the column holds label sets; False: single labels; None: no label at all."""
    if isinstance(column, pl.Series):
        if isinstance(column.dtype, pl.List | pl.Array):
            return True
        if column.null_count() == column.len():
            return None
        if column.dtype != pl.Object:
            return False
        column = column.to_list()
    kinds = {is_label_set(v) for v in column if not is_missing(v)}
    if len(kinds) > 1:
        raise ScoringError(f"{caller}: a column mixes label sets and single labels; give one kind.")
    return next(iter(kinds), None)


def set_indicators(
    *columns: Sequence[Any] | pl.Series,
) -> tuple[list[Any], list[tuple[BoolArray, BoolArray]]]:
    """Label sets as indicator matrices: the outcomes chosen, and each column's (chosen, present).

    Every answer reads as `label_set` reads it: a 0.3.3 vector's `FALSE` slots and missing
    values choose nothing, an outcome named twice is chosen once. Vectorised for polars Series
    of lists.

    Args:
        columns: Label sets, one per item (sequences or polars Series of lists), None where
            there is no answer.

    Returns:
        (outcomes, indicators): every outcome any answer chooses, sorted; per column, Booleans
        of shape (n, k), item i chose outcomes[j], and (n,), item i has an answer.

    Raises:
        ScoringError: A value is neither missing nor a label set, or the outcomes are of
            several types.

    Example:
        >>> outcomes, [(chosen, present)] = set_indicators([["hate", "FALSE"], [], None])
        >>> outcomes, chosen.astype(int).tolist(), present.tolist()
        (['hate'], [[1], [0], [0]], [True, True, False])
    """
    from meta_evaluator.stats.classification import label_indicators

    series = [_without_not_chosen(_as_list_series(c)) for c in columns]
    kinds = {s.dtype for s in series if s.dtype != pl.List(pl.Null)}
    if len({k == pl.List(pl.String) for k in kinds}) > 1:
        raise ScoringError(_SEVERAL_TYPES)
    outcomes = ordered_outcomes(v for c in series for v in c.explode().drop_nulls().unique())
    return outcomes, [label_indicators(c, outcomes) for c in series]


def encode_sets(
    *sets: tuple[npt.ArrayLike, npt.ArrayLike], outcomes: Sequence[Any]
) -> tuple[list[IntArray], list[list[Any]]]:
    """Integer codes for label sets given as indicators: one code per distinct set, -1 absent.

    Like `stats.checks.encode_labels` for single labels: sets equal as sets get one code, and
    codes follow the sets' lists of outcomes in `outcomes` order, compared as lists.

    Args:
        sets: Per labelling, (chosen, present) as `set_indicators` or `majority_of_sets` give
            them: Booleans (n, k) and (n,), the same k for all.
        outcomes: The k outcomes, sorted (the columns of `chosen`).

    Returns:
        (codes, categories): per labelling, codes (n,) in [0, m) or -1 where absent; the m
        distinct sets, each the list of its outcomes.

    Raises:
        ScoringError: An indicator matrix does not have k columns, or its rows and `present`
            differ in number.

    Example:
        >>> chosen = np.array([[True, False], [True, True], [False, False]])
        >>> codes, categories = encode_sets((chosen, [True, True, True]), outcomes=["a", "b"])
        >>> codes[0].tolist(), categories
        ([1, 2, 0], [[], ['a'], ['a', 'b']])
    """
    k = len(outcomes)
    parts = [(np.asarray(c, dtype=np.bool_), np.asarray(p, dtype=np.bool_)) for c, p in sets]
    for index, (chosen, present) in enumerate(parts):
        if chosen.ndim != 2 or chosen.shape[1] != k or present.shape != chosen.shape[:1]:
            raise ScoringError(
                f"encode_sets: labelling {index} has shapes {chosen.shape} and {present.shape}; "
                f"expected (n, {k}) and (n,)."
            )
    chosen = np.concatenate([c for c, _ in parts]) if parts else np.zeros((0, k), np.bool_)
    present = np.concatenate([p for _, p in parts]) if parts else np.zeros(0, np.bool_)
    codes = np.full(present.size, -1, dtype=np.int64)
    if k < 63:  # each set as the bits of one integer: a one-dimensional unique
        bits = chosen[present].astype(np.int64) @ (np.int64(1) << np.arange(k, dtype=np.int64))
        keys, codes[present] = np.unique(bits, return_inverse=True)
        distinct = (keys[:, None] >> np.arange(k, dtype=np.int64)) & 1 == 1
    else:
        distinct, codes[present] = np.unique(chosen[present], axis=0, return_inverse=True)
    columns = [np.flatnonzero(row).tolist() for row in distinct]
    order = sorted(range(len(columns)), key=columns.__getitem__)
    renumber = np.full(max(len(order), 1), -1, dtype=np.int64)
    renumber[order] = np.arange(len(order))
    codes = np.where(codes >= 0, renumber[np.maximum(codes, 0)], -1)
    bounds = np.cumsum([0, *(p.size for _, p in parts)]).tolist()
    categories = [[outcomes[j] for j in columns[i]] for i in order]
    return [codes[start:end] for start, end in itertools.pairwise(bounds)], categories


_SEVERAL_TYPES = (
    "the outcomes of the answers are of several types; give outcomes of one type (text or numbers)."
)


def _without_not_chosen(series: pl.Series) -> pl.Series:
    """Lists of text without their `FALSE` slots (a 0.3.3 vector's); other lists as they are."""
    inner = series.dtype.inner if isinstance(series.dtype, pl.List) else None
    if isinstance(inner, pl.Categorical | pl.Enum):
        series, inner = series.cast(pl.List(pl.String)), pl.String()
    if inner != pl.String:
        return series
    text = series.explode().str.strip_chars().str.to_lowercase()
    if not (text == NOT_CHOSEN).any():
        return series
    element = pl.element()
    return series.list.eval(
        element.filter(element.str.strip_chars().str.to_lowercase() != NOT_CHOSEN)
    )


def _as_list_series(column: Sequence[Any] | pl.Series) -> pl.Series:
    """`column` as a polars Series of lists (an Array as lists; sets and tuples as lists)."""
    if isinstance(column, pl.Series):
        if isinstance(column.dtype, pl.Array):
            return column.cast(pl.List(column.dtype.inner))
        if isinstance(column.dtype, pl.List) or column.dtype == pl.Null:
            return column if column.dtype != pl.Null else column.cast(pl.List(pl.String))
        column = column.to_list()
    values: list[list[Any] | None] = []
    for value in column:
        if is_missing(value):
            values.append(None)
        elif is_label_set(value):
            values.append(list(value))
        else:
            raise ScoringError(f"a multi-label answer is a list or set of outcomes; got {value!r}.")
    texts = {isinstance(o, str) for v in values if v for o in v if not is_missing(o)}
    try:
        if len(texts) > 1:  # polars would turn the numbers into text
            raise TypeError("text and numbers")
        series = pl.Series("label", values, strict=True)
    except (TypeError, ValueError, pl.exceptions.PolarsError):
        raise ScoringError(_SEVERAL_TYPES) from None
    return series if series.dtype != pl.Null else series.cast(pl.List(pl.String))


def majority_labels(
    columns: Sequence[Sequence[Any] | pl.Series], *, order: Sequence[Any] | None = None
) -> pl.Series:
    """Per item, the majority of the annotators' labels (`majority_label`'s rule), vectorised.

    Formula: `majority_label` of each item's labels across `columns`. Single labels are
    encoded on one sorted category list (`encode_labels`) and counted as codes
    (`majority_of_codes`); label sets as indicator matrices (`majority_of_sets`).

    Args:
        columns: One column per annotator (sequences or polars Series of the same length), an
            item per position, None (or NaN) where that annotator did not label it: all single
            labels, or all label sets.
        order: For label sets, the order of the outcomes in each majority list (those it
            lacks follow, sorted); default sorted.

    Returns:
        A polars Series `majority`, one value per item: the label (the labels' type; text for
        categorical columns) or the list of outcomes.

    Undefined: null for an item no annotator labelled.

    Raises:
        ScoringError: No column, lengths differ, or the columns mix label sets and single
            labels.

    References:
        METRICS.md F.

    Example:
        >>> majority_labels([["y", "n", None], ["n", "n", None], ["y", "y", None]]).to_list()
        ['y', 'n', None]
        >>> majority_labels([[["a", "b"]], [["a", "c"]], [["b", "c"]]]).to_list()
        [['a', 'b', 'c']]
    """
    function = "majority_labels"
    if not columns:
        raise ScoringError(f"{function}: no annotator's labels; give at least one column.")
    n = check_same_length(function, **{f"columns[{h}]": c for h, c in enumerate(columns)})
    if holds_label_sets(*columns, caller=function):
        return _majority_sets(columns, n, order)
    codes, categories = encode_labels(*columns)
    majority = majority_of_codes(np.column_stack(codes), len(categories))
    labels = pl.Series("majority", categories, strict=False)
    found = (
        labels.gather(np.maximum(majority, 0))
        if len(categories)
        else labels.extend_constant(None, n)
    )
    return (
        pl.select(pl.when(pl.lit(pl.Series(majority >= 0))).then(found))
        .to_series()
        .alias("majority")
    )


def _majority_sets(
    columns: Sequence[Sequence[Any] | pl.Series], n: int, order: Sequence[Any] | None
) -> pl.Series:
    """`majority_labels` of label sets: indicators, their majority, back to lists in `order`."""
    outcomes, indicators = set_indicators(*columns)
    majority, rated = majority_of_sets([c for c, _ in indicators], [p for _, p in indicators])
    shown = ordered_outcomes(outcomes, order)
    majority = majority[:, [outcomes.index(o) for o in shown]]
    names = pl.Series("majority", shown, dtype=None if shown else pl.String(), strict=False)
    rows, at = np.nonzero(majority)  # row-major: each item's outcomes in `shown` order
    lists = pl.DataFrame({"item": rows, "majority": names.gather(at)})
    lists = lists.group_by("item").agg("majority")
    return (
        pl.DataFrame({"item": np.arange(n, dtype=rows.dtype), "rated": rated})
        .join(lists, on="item", how="left", maintain_order="left")
        .select(
            pl.when("rated")
            .then(pl.coalesce("majority", pl.lit([], dtype=pl.List(names.dtype))))
            .alias("majority")
        )
        .to_series()
    )
