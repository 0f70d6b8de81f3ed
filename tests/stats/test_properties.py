"""Property tests over registries of metrics (STYLE.md S6): item-permutation invariance,
symmetry where claimed, values inside the documented range or None, same seed -> same
bootstrap interval. The reference is each metric's own definition (METRICS.md D, C)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.agreement import (
    cohens_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    percent_agreement,
    ratings_table,
)
from meta_evaluator.stats.alt_test import advantage_interval, alt_test
from meta_evaluator.stats.bootstrap import paired_bootstrap
from meta_evaluator.stats.classification import accuracy, precision_recall_f1
from meta_evaluator.stats.text import mean_text_similarity, text_similarity

EXAMPLES = settings(max_examples=30, deadline=None)
FEW = settings(max_examples=20, deadline=None)  # for the slower alt-test properties
TOL = 1e-12

Pairwise = Callable[[list[Any], list[Any]], Any]

# Two labellings of the same items -> a number (or None).
PAIRWISE: dict[str, Pairwise] = {
    "accuracy": accuracy,
    "percent_agreement": percent_agreement,
    "cohens_kappa": cohens_kappa,
    "cohens_kappa_linear": lambda a, b: cohens_kappa(a, b, "linear"),
    "cohens_kappa_quadratic": lambda a, b: cohens_kappa(a, b, "quadratic"),
    "macro_f1": lambda a, b: precision_recall_f1(a, b)["f1"],
    "macro_precision": lambda a, b: precision_recall_f1(a, b)["precision"],
    "weighted_recall": lambda a, b: precision_recall_f1(a, b, average="weighted")["recall"],
    "micro_f1": lambda a, b: precision_recall_f1(a, b, average="micro")["f1"],
    "alpha_nominal_2": lambda a, b: krippendorff_alpha([a, b]),
    "alpha_ordinal_2": lambda a, b: krippendorff_alpha([a, b], "ordinal"),
    "alpha_interval_2": lambda a, b: krippendorff_alpha([a, b], "interval"),
}
# Which of them claim symmetry in their two arguments.
SYMMETRIC = [
    "accuracy",
    "percent_agreement",
    "cohens_kappa",
    "cohens_kappa_linear",
    "cohens_kappa_quadratic",
    "micro_f1",
    "alpha_nominal_2",
    "alpha_ordinal_2",
    "alpha_interval_2",
]
# Documented ranges (low, high); None means unbounded on that side.
RANGES: dict[str, tuple[float | None, float]] = {
    "accuracy": (0.0, 1.0),
    "percent_agreement": (0.0, 1.0),
    "cohens_kappa": (-1.0, 1.0),
    "cohens_kappa_linear": (-1.0, 1.0),
    "cohens_kappa_quadratic": (-1.0, 1.0),
    "macro_f1": (0.0, 1.0),
    "macro_precision": (0.0, 1.0),
    "weighted_recall": (0.0, 1.0),
    "micro_f1": (0.0, 1.0),
    "alpha_nominal_2": (None, 1.0),
    "alpha_ordinal_2": (None, 1.0),
    "alpha_interval_2": (None, 1.0),
}

label = st.one_of(st.none(), st.integers(0, 3))
pairs = st.lists(st.tuples(label, label), min_size=1, max_size=25)


def outcome(function: Callable[[], Any]) -> Any:
    """The value, or the ScoringError message when the input cannot be scored."""
    try:
        return function()
    except ScoringError as error:
        return ("ScoringError", str(error))


def same(x: Any, y: Any) -> bool:
    if isinstance(x, float) and isinstance(y, float):
        return abs(x - y) <= TOL
    return bool(x == y)


def in_range(value: Any, low: float | None, high: float) -> bool:
    if value is None or isinstance(value, tuple):  # undefined, or refused with ScoringError
        return True
    return (low is None or value >= low - TOL) and value <= high + TOL


@pytest.mark.parametrize("name", list(PAIRWISE))
@EXAMPLES
@given(data=pairs, seed=st.integers(0, 2**32 - 1))
def test_pairwise_metric_properties(name: str, data: list[Any], seed: int) -> None:
    """Shuffling the items (pairs kept together) does not change the metric; swapping the
    two labellings does not either for the metrics in SYMMETRIC; the value lies in the
    documented range, or is None (undefined)."""
    metric = PAIRWISE[name]
    a, b = [x for x, _ in data], [y for _, y in data]
    value = outcome(lambda: metric(a, b))
    order = np.random.default_rng(seed).permutation(len(data))
    shuffled = outcome(lambda: metric([a[i] for i in order], [b[i] for i in order]))
    assert same(value, shuffled)
    if name in SYMMETRIC:
        assert same(value, outcome(lambda: metric(b, a)))
    low, high = RANGES[name]
    assert in_range(value, low, high)


@pytest.mark.parametrize("name", list(PAIRWISE))
@EXAMPLES
@given(labels=st.lists(st.integers(0, 3), min_size=1, max_size=20))
def test_perfect_agreement(name: str, labels: list[int]) -> None:
    """Identical labellings give the top of the range (1), or None when only one value."""
    value = PAIRWISE[name](labels, list(labels))
    if len(set(labels)) == 1 and name.startswith(("cohens", "alpha")):
        assert value is None
    else:
        assert value == pytest.approx(1.0, abs=TOL)


coders = st.integers(2, 4).flatmap(
    lambda m: st.lists(st.lists(label, min_size=m, max_size=m), min_size=1, max_size=15)
)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@EXAMPLES
@given(units=coders, seed=st.integers(0, 2**32 - 1))
def test_krippendorff_coder_and_unit_order(level: str, units: list[list[Any]], seed: int) -> None:
    """Krippendorff's alpha ignores the order of coders and of units; it is <= 1 or None."""
    rng = np.random.default_rng(seed)
    data = [list(coder) for coder in zip(*units, strict=True)]  # coders x units
    value = outcome(lambda: krippendorff_alpha(data, level))  # type: ignore[arg-type]
    coders_shuffled = [data[i] for i in rng.permutation(len(data))]
    unit_order = rng.permutation(len(units))
    units_shuffled = [[row[i] for i in unit_order] for row in data]
    assert same(value, outcome(lambda: krippendorff_alpha(coders_shuffled, level)))  # type: ignore[arg-type]
    assert same(value, outcome(lambda: krippendorff_alpha(units_shuffled, level)))  # type: ignore[arg-type]
    assert in_range(value, None, 1.0)


complete = st.integers(2, 5).flatmap(
    lambda m: st.lists(st.lists(st.integers(0, 3), min_size=m, max_size=m), min_size=1, max_size=15)
)


@pytest.mark.parametrize("method", ["fleiss", "randolph"])
@EXAMPLES
@given(items=complete, seed=st.integers(0, 2**32 - 1))
def test_fleiss_order_invariance_and_range(method: str, items: list[list[int]], seed: int) -> None:
    """Fleiss' kappa ignores the order of items and of raters; it is <= 1 or None, and at
    least -1 / (n - 1) for n raters per item (every item split as evenly as possible)."""
    rng = np.random.default_rng(seed)
    table, _ = ratings_table(items)
    value = fleiss_kappa(table, method)  # type: ignore[arg-type]
    shuffled = [items[i] for i in rng.permutation(len(items))]
    rater_order = rng.permutation(len(items[0]))
    by_rater = [[row[r] for r in rater_order] for row in items]
    for other in (shuffled, by_rater):
        assert same(value, fleiss_kappa(ratings_table(other)[0], method))  # type: ignore[arg-type]
    n = len(items[0])
    assert in_range(value, -1.0 / (n - 1) if method == "fleiss" else -1.0, 1.0)


texts = st.text(alphabet="abAB .", max_size=8)


@EXAMPLES
@given(a=texts, b=texts)
def test_text_similarity_bounded(a: str, b: str) -> None:
    """text_similarity lies in [0, 1], is 1 for texts equal after lower().strip(), and the
    mean over one item equals the pair's value."""
    value = text_similarity(a, b)
    assert 0.0 <= value <= 1.0
    if a.lower().strip() == b.lower().strip():
        assert value == 1.0
    assert mean_text_similarity([a], [b]) == value


panel = st.lists(
    st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2), st.integers(0, 2)),
    min_size=4,
    max_size=20,
)


def _alt(rows: list[tuple[int, ...]], order: list[int]) -> Any:
    humans = {f"h{j}": {k: rows[i][j] for k, i in enumerate(order)} for j in range(3)}
    llm = {k: rows[i][3] for k, i in enumerate(order)}
    return outcome(
        lambda: alt_test(humans, llm, min_instances_per_human=3, scoring_function="accuracy")
    )


@FEW
@given(rows=panel, seed=st.integers(0, 2**32 - 1))
def test_alt_test_instance_order(rows: list[tuple[int, ...]], seed: int) -> None:
    """alt-test winning rates and advantage probability ignore the order of instances and
    lie in [0, 1]; `passed` is the winning rate at epsilon >= 0.5."""
    base = _alt(rows, list(range(len(rows))))
    other = _alt(rows, np.random.default_rng(seed).permutation(len(rows)).tolist())
    assert base.winning_rate == pytest.approx(other.winning_rate, abs=TOL)
    assert base.advantage_probability == pytest.approx(other.advantage_probability, abs=TOL)
    assert all(0.0 <= w <= 1.0 for w in base.winning_rate.values())
    assert 0.0 <= base.advantage_probability <= 1.0
    assert base.passed is (base.winning_rate["0.20"] >= 0.5)
    for o in base.per_annotator.values():
        assert o.llm_advantage + o.human_advantage >= 1.0  # ties count for both


@EXAMPLES
@given(
    values=st.lists(st.floats(-100, 100), min_size=1, max_size=30),
    seed=st.integers(0, 2**32 - 1),
    level=st.floats(0.5, 0.99),
)
def test_bootstrap_same_seed_same_interval(values: list[float], seed: int, level: float) -> None:
    """The same seed gives the same interval, low <= high, inside [min, max] for a mean."""
    first = paired_bootstrap(np.mean, values, n_resamples=50, confidence_level=level, seed=seed)
    assert first == paired_bootstrap(
        np.mean, values, n_resamples=50, confidence_level=level, seed=seed
    )
    low, high = first
    assert low is not None and high is not None
    assert min(values) - 1e-9 <= low <= high <= max(values) + 1e-9


@FEW
@given(rows=panel, seed=st.integers(0, 1000))
def test_advantage_interval_same_seed(rows: list[tuple[int, ...]], seed: int) -> None:
    """advantage_interval: same seed, same interval; inside [0, 1]."""
    result = _alt(rows, list(range(len(rows))))
    first = advantage_interval(result, n_resamples=40, seed=seed)
    assert first == advantage_interval(result, n_resamples=40, seed=seed)
    low, high = first
    assert low is not None and high is not None
    assert 0.0 <= low <= high <= 1.0
