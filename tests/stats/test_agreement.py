"""`meta_evaluator.stats.agreement` against scikit-learn, statsmodels, krippendorff and
published tables (METRICS.md D)."""

from __future__ import annotations

import warnings
from typing import Any

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.agreement import (
    alpha_from_coincidences,
    cohens_kappa,
    coincidences,
    distance_function,
    fleiss_kappa,
    kappa_from_confusion,
    krippendorff_alpha,
    percent_agreement,
    ratings_table,
)

SEEDS = range(10)
WEIGHTS = (None, "linear", "quadratic")
LEVELS = ("nominal", "ordinal", "interval", "ratio")

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers
# (rows) x 12 units, values 1-5, NaN where an observer did not code the unit.
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
]
K2011_PUBLISHED = {"nominal": 0.743, "interval": 0.849, "ordinal": 0.815, "ratio": 0.797}


def _sk_kappa(a: Any, b: Any, **kwargs: Any) -> float | None:
    value = cohen_kappa_score(a, b, **kwargs)
    return None if np.isnan(value) else float(value)


def _kd_alpha(data: Any, level: str, **kwargs: Any) -> float:
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level, **kwargs))


def _random_raters(seed: int, kind: str) -> tuple[list[Any], list[Any], int]:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    n = int(rng.integers(5, 60))
    a = rng.integers(0, k, n)
    b = np.where(rng.random(n) < 0.6, a, rng.integers(0, k, n))
    if kind == "str":
        return [f"c{v}" for v in a], [f"c{v}" for v in b], k
    return [int(v) for v in a], [int(v) for v in b], k


# --- Cohen's kappa -------------------------------------------------------------------------


@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("kind", ["str", "int"])
@pytest.mark.parametrize("seed", SEEDS)
def test_cohens_kappa_matches_sklearn(seed: int, kind: str, weights: str | None) -> None:
    """cohens_kappa == sklearn.metrics.cohen_kappa_score (weights None/linear/quadratic)."""
    a, b, _ = _random_raters(seed, kind)
    ours = cohens_kappa(a, b, weights)  # type: ignore[arg-type]
    assert ours == pytest.approx(_sk_kappa(a, b, weights=weights), abs=1e-12)


@pytest.mark.parametrize("weights", WEIGHTS)
def test_cohens_kappa_labels_order(weights: str | None) -> None:
    """`labels=` fixes the category order of weighted kappa, as sklearn's `labels=`."""
    rng = np.random.default_rng(7)
    order = ["low", "medium", "high", "extreme"]
    a = [order[i] for i in rng.integers(0, 4, 80)]
    b = [order[min(3, max(0, order.index(x) + int(rng.integers(-1, 2))))] for x in a]
    ours = cohens_kappa(a, b, weights, labels=order)  # type: ignore[arg-type]
    assert ours == pytest.approx(_sk_kappa(a, b, weights=weights, labels=order), abs=1e-12)
    if weights is not None:  # the sorted (alphabetical) order gives another weighted kappa
        alphabetical = cohens_kappa(a, b, weights)  # type: ignore[arg-type]
        assert alphabetical == pytest.approx(_sk_kappa(a, b, weights=weights), abs=1e-12)
        assert alphabetical != pytest.approx(ours, abs=1e-6)


def test_cohens_kappa_label_outside_labels_raises() -> None:
    """A label missing from `labels` raises ScoringError (sklearn silently drops the item)."""
    with pytest.raises(ScoringError, match="'c'"):
        cohens_kappa(["a", "b", "c"], ["a", "b", "b"], labels=["a", "b"])


def test_cohens_kappa_artstein_poesio_tables() -> None:
    """Artstein & Poesio (2008), Tables 1 and 4, as rebuilt in scikit-learn's own tests
    (sklearn/metrics/tests/test_classification.py::test_cohen_kappa)."""
    y1 = [0] * 40 + [1] * 60
    y2 = [0] * 20 + [1] * 20 + [0] * 10 + [1] * 50
    assert cohens_kappa(y1, y2) == pytest.approx(0.348, abs=5e-4)
    assert cohens_kappa(y1, y2) == cohens_kappa(y2, y1)
    assert cohens_kappa(y1, y1) == 1.0

    y1 = [0] * 46 + [1] * 44 + [2] * 10
    y2 = [0] * 52 + [1] * 32 + [2] * 16
    assert cohens_kappa(y1, y2) == pytest.approx(0.8013, abs=5e-5)

    y1 = [0] * 46 + [1] * 44 + [2] * 10
    y2 = [0] * 50 + [1] * 40 + [2] * 10
    assert cohens_kappa(y1, y2) == pytest.approx(0.9315, abs=5e-5)
    assert cohens_kappa(y1, y2, "linear") == pytest.approx(0.9412, abs=5e-5)
    assert cohens_kappa(y1, y2, "quadratic") == pytest.approx(0.9541, abs=5e-5)


def test_cohens_kappa_drops_missing_items() -> None:
    """Items missing on either side drop (sklearn on the pairwise-complete items)."""
    a = ["y", None, "n", "n", "y", float("nan"), "y", "n"]
    b = ["y", "n", None, "n", "n", "y", "y", "y"]
    kept = [(x, y) for x, y in zip(a, b, strict=True) if isinstance(x, str) and y is not None]
    ka, kb = [x for x, _ in kept], [y for _, y in kept]
    assert len(ka) == 5
    assert cohens_kappa(a, b) == pytest.approx(_sk_kappa(ka, kb), abs=1e-12)


@pytest.mark.parametrize("weights", WEIGHTS)
def test_cohens_kappa_single_category_is_none(weights: str | None) -> None:
    """Both raters use one and the same category: p_e = 1, sklearn NaN, ours None."""
    with warnings.catch_warnings():  # sklearn warns about the one-label confusion matrix
        warnings.filterwarnings("ignore", "A single label was found", UserWarning)
        warnings.filterwarnings("ignore", ".*have only one label in common", UserWarning)
        assert np.isnan(cohen_kappa_score([3] * 10, [3] * 10, weights=weights))
    assert cohens_kappa([3] * 10, [3] * 10, weights) is None  # type: ignore[arg-type]
    assert cohens_kappa(["a", None, "a"], ["a", "a", None], weights) is None  # type: ignore[arg-type]


def test_cohens_kappa_identical_raters_is_one() -> None:
    """Identical raters with two or more categories give exactly 1.0 (sklearn too)."""
    a, _, _ = _random_raters(3, "str")
    for weights in WEIGHTS:
        assert cohens_kappa(a, a, weights) == 1.0  # type: ignore[arg-type]
        assert _sk_kappa(a, a, weights=weights) == pytest.approx(1.0)


def test_cohens_kappa_total_disagreement() -> None:
    """Two raters who always swap two balanced labels: p_o = 0, p_e = 0.5, kappa = -1."""
    assert cohens_kappa(["a", "b"] * 5, ["b", "a"] * 5) == -1.0


def test_cohens_kappa_no_overlap_raises() -> None:
    """No item labelled by both raters is an error, not a value (METRICS.md D)."""
    with pytest.raises(ScoringError, match="no item is labelled by both"):
        cohens_kappa(["a", None, "b"], [None, "a", None])
    with pytest.raises(ScoringError, match="no item is labelled by both"):
        cohens_kappa([], [])


def test_cohens_kappa_errors_come_first() -> None:
    """Unknown weights and length mismatches raise before the data is looked at."""
    with pytest.raises(ScoringError, match=r"cohens_kappa: weights must be one of .*'cubic'"):
        cohens_kappa([None], [None], "cubic")  # type: ignore[arg-type]
    with pytest.raises(ScoringError, match=r"cohens_kappa: the inputs must have the same length"):
        cohens_kappa(["a", "b"], ["a"])


@pytest.mark.parametrize("weights", WEIGHTS)
def test_kappa_from_confusion_batches(weights: str | None) -> None:
    """kappa_from_confusion on a stack of confusion matrices == sklearn kappa of each."""
    rng = np.random.default_rng(11)
    stack = rng.integers(0, 9, size=(2, 5, 3, 3)).astype(np.float64)
    got = kappa_from_confusion(stack, weights)  # type: ignore[arg-type]
    assert got.shape == (2, 5)
    for index in np.ndindex(2, 5):
        matrix = stack[index].astype(int)
        rows, cols = np.indices(matrix.shape)
        a = np.repeat(rows.ravel(), matrix.ravel())
        b = np.repeat(cols.ravel(), matrix.ravel())
        expected = _sk_kappa(a, b, weights=weights, labels=[0, 1, 2])
        assert got[index] == pytest.approx(expected, abs=1e-12)


# --- percent agreement ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_percent_agreement_matches_sklearn_accuracy(seed: int) -> None:
    """percent_agreement == sklearn accuracy_score on pairwise-complete items, symmetric."""
    a, b, _ = _random_raters(seed, "str")
    rng = np.random.default_rng(seed + 100)
    a = [None if rng.random() < 0.2 else x for x in a]
    kept = [(x, y) for x, y in zip(a, b, strict=True) if x is not None]
    expected = accuracy_score([x for x, _ in kept], [y for _, y in kept])
    assert percent_agreement(a, b) == pytest.approx(expected, abs=1e-15)
    assert percent_agreement(b, a) == percent_agreement(a, b)


def test_percent_agreement_edges() -> None:
    """Hand-checked: 2 of 3 complete items agree; nothing complete -> None; lengths differ."""
    assert percent_agreement(["a", "b", None, "c"], ["a", "b", "a", "a"]) == pytest.approx(2 / 3)
    assert percent_agreement([None, "a"], ["a", None]) is None
    with pytest.raises(ScoringError, match="percent_agreement"):
        percent_agreement(["a"], ["a", "b"])


# --- ratings table and Fleiss' kappa -------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_ratings_table_matches_aggregate_raters(seed: int) -> None:
    """ratings_table == statsmodels.stats.inter_rater.aggregate_raters (counts, categories)."""
    rng = np.random.default_rng(seed)
    data = rng.integers(0, int(rng.integers(2, 6)), size=(int(rng.integers(3, 30)), 4))
    table, categories = ratings_table(data.tolist())
    sm_table, sm_categories = aggregate_raters(data)
    np.testing.assert_array_equal(table, sm_table)
    assert categories == sm_categories.tolist()


def test_ratings_table_missing_and_given_categories() -> None:
    """None is not counted; `categories=` fixes the columns (hand-counted)."""
    table, categories = ratings_table(
        [["b", "a", None], ["a", "a", "a"], [None, None, "c"]], categories=["c", "b", "a"]
    )
    assert categories == ["c", "b", "a"]
    np.testing.assert_array_equal(table, [[0, 1, 1], [0, 0, 3], [1, 0, 0]])
    with pytest.raises(ScoringError, match="one entry per rater"):
        ratings_table([["a", "b"], ["a"]])


@pytest.mark.parametrize("method", ["fleiss", "randolph"])
@pytest.mark.parametrize("seed", SEEDS)
def test_fleiss_kappa_matches_statsmodels(seed: int, method: str) -> None:
    """fleiss_kappa == statsmodels fleiss_kappa(aggregate_raters(items x raters)[0], method)."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    n_items, n_raters = int(rng.integers(3, 40)), int(rng.integers(2, 7))
    truth = rng.integers(0, k, n_items)
    data = np.where(rng.random((n_raters, n_items)) < 0.6, truth, rng.integers(0, k, n_items)).T
    labels = [[f"v{x}" for x in row] for row in data]
    table, _ = ratings_table(labels)
    expected = sm_fleiss_kappa(aggregate_raters(data)[0], method=method)
    assert fleiss_kappa(table, method) == pytest.approx(expected, abs=1e-12)  # type: ignore[arg-type]


def test_fleiss_kappa_published_example() -> None:
    """Fleiss (1971) table as reproduced on Wikipedia ("Fleiss' kappa", worked example):
    10 items, 14 raters, 5 categories, kappa = 0.210 (statsmodels gives the same)."""
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert fleiss_kappa(table) == pytest.approx(0.2099, abs=5e-5)
    assert fleiss_kappa(table) == pytest.approx(sm_fleiss_kappa(np.array(table)), abs=1e-12)


@pytest.mark.parametrize("method", ["fleiss", "randolph"])
def test_fleiss_kappa_identical_raters_is_one(method: str) -> None:
    """Every rater gives each item the same label (two categories in use): kappa = 1."""
    table, _ = ratings_table([["a"] * 3, ["b"] * 3, ["a"] * 3])
    assert fleiss_kappa(table, method) == 1.0  # type: ignore[arg-type]


def test_fleiss_kappa_single_category_is_none() -> None:
    """One category in use: P_e = 1 -> None (statsmodels NaN); randolph with k = 1 too."""
    table = [[3], [3], [3]]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "invalid value", RuntimeWarning)  # statsmodels' 0/0
        assert np.isnan(sm_fleiss_kappa(np.array(table), method="fleiss"))
    assert fleiss_kappa(table) is None
    assert fleiss_kappa(table, "randolph") is None
    # a second, unused category: fleiss still undefined, randolph defined (P_e = 1/2)
    assert fleiss_kappa([[3, 0], [3, 0]]) is None
    assert fleiss_kappa([[3, 0], [3, 0]], "randolph") == 1.0


def test_fleiss_kappa_unequal_ratings_raise() -> None:
    """Items with different numbers of ratings raise (statsmodels asserts; use alpha)."""
    table, _ = ratings_table([["a", "a", "b"], ["a", None, "b"]])
    with pytest.raises(ScoringError, match=r"same number of ratings.*krippendorff_alpha"):
        fleiss_kappa(table)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ([[1, 0], [0, 1]], "at least two ratings"),
        ([], "non-empty"),
        ([[2, -1, 1]], "negative"),
        ([[1, np.nan]], "negative or missing"),
    ],
)
def test_fleiss_kappa_bad_tables_raise(table: Any, message: str) -> None:
    """Fewer than two raters, empty, negative or NaN tables raise ScoringError."""
    with pytest.raises(ScoringError, match=message):
        fleiss_kappa(table)


def test_fleiss_kappa_unknown_method_raises_first() -> None:
    """An unknown method raises before the (here unusable) table is read."""
    with pytest.raises(ScoringError, match=r"fleiss_kappa: method must be one of .*'cohen'"):
        fleiss_kappa([], "cohen")  # type: ignore[arg-type]


# --- Krippendorff's alpha ------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_2011_example(level: str) -> None:
    """Krippendorff (2011) 4 x 12 example: equal to krippendorff.alpha, and to the published
    rounded values (nominal .743, ordinal .815, interval .849, ratio .797)."""
    expected = _kd_alpha(K2011, level)
    ours = krippendorff_alpha(K2011, level)  # type: ignore[arg-type]
    assert ours == pytest.approx(expected, abs=1e-12)
    assert round(ours, 3) == K2011_PUBLISHED[level]
    with_none = [[None if np.isnan(v) else int(v) for v in row] for row in K2011]
    assert krippendorff_alpha(with_none, level) == pytest.approx(expected, abs=1e-12)  # type: ignore[arg-type]
    assert krippendorff_alpha(np.array(K2011), level) == pytest.approx(expected, abs=1e-12)  # type: ignore[arg-type]


def test_krippendorff_2011_example_as_labels() -> None:
    """The same example as strings: nominal and ordinal with an ordered value_domain equal
    krippendorff.alpha on the string data (its docstring example)."""
    names = ["very low", "low", "mid", "high", "very high"]
    as_text = [[names[int(v) - 1] if not np.isnan(v) else None for v in row] for row in K2011]
    for_library = [[np.nan if v is None else v for v in row] for row in as_text]
    nominal = krippendorff_alpha(as_text)
    assert nominal == pytest.approx(_kd_alpha(for_library, "nominal"), abs=1e-12)
    assert nominal == pytest.approx(_kd_alpha(K2011, "nominal"), abs=1e-12)
    ordinal = krippendorff_alpha(as_text, "ordinal", value_domain=names)
    expected = _kd_alpha(for_library, "ordinal", value_domain=names)
    assert ordinal == pytest.approx(expected, abs=1e-12)
    assert ordinal == pytest.approx(_kd_alpha(K2011, "ordinal"), abs=1e-12)


def _random_reliability(seed: int, missing: float = 0.3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    coders, units, k = int(rng.integers(2, 6)), int(rng.integers(4, 40)), int(rng.integers(2, 6))
    truth = rng.integers(1, k + 1, units)
    data = np.where(rng.random((coders, units)) < 0.6, truth, rng.integers(1, k + 1, units))
    data = data.astype(np.float64)
    data[rng.random(data.shape) < missing] = np.nan
    data[:2, 0] = [1.0, 2.0]  # at least one pairable unit with two values
    return data


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("seed", SEEDS)
def test_krippendorff_alpha_matches_library(seed: int, level: str) -> None:
    """krippendorff_alpha == krippendorff.alpha on random data with NaN (list with None too)."""
    data = _random_reliability(seed)
    expected = _kd_alpha(data, level)
    assert krippendorff_alpha(data, level) == pytest.approx(expected, abs=1e-10)  # type: ignore[arg-type]
    as_lists = [[None if np.isnan(v) else int(v) for v in row] for row in data]
    assert krippendorff_alpha(as_lists, level) == pytest.approx(expected, abs=1e-10)  # type: ignore[arg-type]


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_krippendorff_alpha_real_values(level: str) -> None:
    """Interval and ratio alpha on non-integer values == krippendorff.alpha."""
    rng = np.random.default_rng(5)
    truth = rng.normal(5, 2, 30)
    data = truth + rng.normal(0, 1, (3, 30))
    data[rng.random(data.shape) < 0.2] = np.nan
    expected = _kd_alpha(data, level)
    assert krippendorff_alpha(data, level) == pytest.approx(expected, abs=1e-10)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", SEEDS)
def test_krippendorff_alpha_string_labels_nominal(seed: int) -> None:
    """Nominal alpha of string labels == krippendorff.alpha of the same strings."""
    data = _random_reliability(seed)
    labels = [[None if np.isnan(v) else f"label-{int(v)}" for v in row] for row in data]
    for_library = [[np.nan if v is None else v for v in row] for row in labels]
    expected = _kd_alpha(for_library, "nominal")
    assert krippendorff_alpha(labels) == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("seed", SEEDS)
def test_krippendorff_alpha_ordinal_value_domain(seed: int) -> None:
    """Ordinal labels in a non-alphabetical order (value_domain) == krippendorff.alpha with
    the same value_domain; a wider numeric domain with unused values gives the same alpha."""
    order = ["none", "some", "many", "all", "beyond"]
    data = _random_reliability(seed)
    labels = [[None if np.isnan(v) else order[int(v) - 1] for v in row] for row in data]
    for_library = [[np.nan if v is None else v for v in row] for row in labels]
    expected = _kd_alpha(for_library, "ordinal", value_domain=order)
    ours = krippendorff_alpha(labels, "ordinal", value_domain=order)
    assert ours == pytest.approx(expected, abs=1e-10)
    assert ours == pytest.approx(_kd_alpha(data, "ordinal"), abs=1e-10)
    wide = list(range(0, 9))
    for level in ("ordinal", "interval"):
        expected = _kd_alpha(data, level, value_domain=wide)
        ours = krippendorff_alpha(data, level, value_domain=wide)  # type: ignore[arg-type]
        assert ours == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_alpha_identical_coders_is_one(level: str) -> None:
    """Coders who agree on every unit (two or more values in use) give alpha = 1."""
    row = [1, 2, 3, None, 2, 4]
    assert krippendorff_alpha([row, row, row], level) == pytest.approx(1.0, abs=1e-15)  # type: ignore[arg-type]


@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_alpha_one_value_is_none(level: str) -> None:
    """One value in the whole domain: the library raises ValueError, we return None (D)."""
    data = [[2, 2, None, 2], [2, 2, 2, None]]
    with pytest.raises(ValueError, match="more than one value"):
        _kd_alpha([[np.nan if v is None else v for v in row] for row in data], level)
    assert krippendorff_alpha(data, level) is None  # type: ignore[arg-type]
    # a second value only in a unit that cannot be paired: still no expected disagreement
    assert krippendorff_alpha([[2, 2, 5], [2, 2, None]], level) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([[1, 2, 3]], "at least two coders; got 1"),
        ([], "at least two coders; got 0"),
        ([[1, None, 3], [None, 2, None]], "no unit has values from two coders"),
        ([[1, 2], [1]], "one entry per unit"),
    ],
)
def test_krippendorff_alpha_unusable_data_raises(data: Any, message: str) -> None:
    """A single coder, no pairable unit or ragged rows raise ScoringError (METRICS.md D)."""
    with pytest.raises(ScoringError, match=message):
        krippendorff_alpha(data)


@pytest.mark.parametrize("level", ["interval", "ratio", "ordinal"])
def test_krippendorff_alpha_non_numbers_raise(level: str) -> None:
    """Labels at a numeric level (ordinal without value_domain) raise ScoringError."""
    with pytest.raises(ScoringError, match=rf"level '{level}' needs numbers; got 'b'"):
        krippendorff_alpha([[1, "b"], [1, 2]], level)  # type: ignore[arg-type]


def test_krippendorff_alpha_unknown_level_raises_first() -> None:
    """An unknown level raises before the (here unusable, single-coder) data is read."""
    with pytest.raises(ScoringError, match=r"level_of_measurement must be one of .*'cubic'"):
        krippendorff_alpha([[1]], "cubic")  # type: ignore[arg-type]


def test_krippendorff_alpha_value_outside_domain_raises() -> None:
    """A value missing from value_domain raises (the library raises ValueError too)."""
    with pytest.raises(ScoringError, match="'x'"):
        krippendorff_alpha([["a", "x"], ["a", "b"]], "ordinal", value_domain=["a", "b"])


@pytest.mark.parametrize("level", LEVELS)
def test_alpha_from_coincidences_batches(level: str) -> None:
    """coincidences + distance_function + alpha_from_coincidences on a stack of coincidence
    matrices == krippendorff.alpha of each dataset (value domain 1..5 for all)."""
    domain = np.arange(1.0, 6.0)
    datasets = [_random_reliability(seed) for seed in range(4)]
    matrices = []
    for data in datasets:
        counts = np.stack([(data == v).sum(axis=0) for v in domain], axis=1).astype(np.float64)
        matrices.append(coincidences(counts[counts.sum(axis=1) >= 2]))
    got = alpha_from_coincidences(np.stack(matrices), distance_function(level, domain))
    expected = [_kd_alpha(data, level, value_domain=domain) for data in datasets]
    assert got.tolist() == pytest.approx(expected, abs=1e-10)
