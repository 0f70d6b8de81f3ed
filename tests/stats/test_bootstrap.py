"""`meta_evaluator.stats.bootstrap` against a plain loop over the documented draws and,
loosely, `scipy.stats.bootstrap`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import stats as scipy_stats

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.bootstrap import (
    paired_bootstrap,
    percentile_interval,
    resample_indices,
    resample_weights,
    weight_chunks,
)
from meta_evaluator.stats.classification import accuracy


def loop_bootstrap(
    statistic: Any, *samples: Any, n_resamples: int, confidence_level: float, seed: int
) -> tuple[float | None, float | None]:
    """The documented procedure, one resample at a time: draws from
    default_rng(seed).integers(0, n, (R, n)), undefined values left out, np.percentile."""
    arrays = [np.asarray(s) for s in samples]
    n = len(arrays[0])
    draws = np.random.default_rng(seed).integers(0, n, (n_resamples, n))
    values = []
    for rows in draws:
        value = statistic(*(a[rows] for a in arrays))
        if value is not None and not math.isnan(value):
            values.append(float(value))
    if not values:
        return None, None
    alpha = (1 - confidence_level) / 2
    low, high = np.percentile(values, [alpha * 100, 100 - alpha * 100])
    return float(low), float(high)


def _data(seed: int, n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, n).astype(np.float64)
    y = np.where(rng.random(n) < 0.7, x, rng.integers(0, 5, n))
    return x, y


def _agreement(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean(a == b))


@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
@pytest.mark.parametrize("seed", range(5))
def test_paired_bootstrap_equals_loop(seed: int, level: float) -> None:
    """paired_bootstrap of a two-sample statistic == the plain loop, exactly."""
    x, y = _data(seed)
    ours = paired_bootstrap(_agreement, x, y, n_resamples=300, confidence_level=level, seed=seed)
    expected = loop_bootstrap(_agreement, x, y, n_resamples=300, confidence_level=level, seed=seed)
    assert ours == expected


@pytest.mark.parametrize("seed", range(5))
def test_vectorised_path_equals_loop(seed: int) -> None:
    """A statistic taking `axis` runs once on the (R, n) resamples; same interval as the
    per-resample path and the loop (integer-valued data keep the sums exact)."""
    x, _ = _data(seed)

    def mean(values: np.ndarray, axis: int = -1) -> Any:
        return np.mean(values, axis=axis)

    vectorised = paired_bootstrap(mean, x, n_resamples=250, seed=seed)
    assert vectorised == paired_bootstrap(mean, x, n_resamples=250, seed=seed, vectorized=False)
    assert vectorised == loop_bootstrap(
        np.mean, x, n_resamples=250, confidence_level=0.95, seed=seed
    )
    assert vectorised == paired_bootstrap(np.mean, x, n_resamples=250, seed=seed)


def test_vectorised_two_samples() -> None:
    """vectorized=True on a two-sample statistic == the loop path."""
    x, y = _data(9)

    def diff(a: np.ndarray, b: np.ndarray, axis: int = -1) -> Any:
        return np.mean(a - b, axis=axis)

    assert paired_bootstrap(diff, x, y, n_resamples=200, vectorized=True) == loop_bootstrap(
        lambda a, b: np.mean(a - b), x, y, n_resamples=200, confidence_level=0.95, seed=0
    )


def test_undefined_resamples_are_left_out() -> None:
    """Resamples where the statistic is None (or NaN) are dropped, as in the loop."""
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=15), rng.normal(size=15)

    def picky(a: np.ndarray, b: np.ndarray) -> float | None:
        if a[0] > 0.5:
            return None
        if a[0] < -0.5:
            return math.nan
        return float(np.mean(a * b))

    ours = paired_bootstrap(picky, x, y, n_resamples=400, seed=5)
    assert ours == loop_bootstrap(picky, x, y, n_resamples=400, confidence_level=0.95, seed=5)
    everything = paired_bootstrap(lambda a, b: float(np.mean(a * b)), x, y, n_resamples=400, seed=5)
    assert ours != everything
    assert paired_bootstrap(lambda a: None, x, n_resamples=20) == (None, None)


def test_labels_and_lists_are_resampled_in_pairs() -> None:
    """String labels in plain lists: pairs stay together (identical raters -> always 1)."""
    labels = ["yes", "no", "maybe", "no", "yes"] * 4
    assert paired_bootstrap(_agreement, labels, list(labels), n_resamples=100) == (1.0, 1.0)


def test_multilabel_samples_of_different_lengths() -> None:
    """Items that are label lists of different lengths are resampled whole (the loop over
    Python lists with the same draws); numpy cannot stack them into one array."""
    a = [["x"], ["x", "y"], [], ["z"], ["x", "z"], ["y"]] * 3
    b = [["x"], ["y"], [], ["z"], ["x", "z"], ["x", "y"]] * 3
    draws = np.random.default_rng(2).integers(0, len(a), (300, len(a)))
    values = [accuracy([a[i] for i in rows], [b[i] for i in rows]) for rows in draws]
    expected = tuple(float(v) for v in np.percentile(values, [2.5, 97.5]))
    ours = paired_bootstrap(accuracy, a, b, n_resamples=300, seed=2)
    assert ours == pytest.approx(expected, abs=1e-12)


def test_same_seed_same_interval() -> None:
    """The seed fixes the draws: same seed, same interval; another seed, another one."""
    x = np.random.default_rng(4).normal(size=30)
    first = paired_bootstrap(np.median, x, seed=11)
    assert first == paired_bootstrap(np.median, x, seed=11)
    assert first != paired_bootstrap(np.median, x, seed=12)


def test_close_to_scipy_bootstrap_for_a_mean() -> None:
    """scipy.stats.bootstrap(method="percentile", paired=True) uses other draws, so the
    intervals agree only loosely: within 10 % of their width for a mean on n = 2000."""
    rng = np.random.default_rng(0)
    x = rng.normal(1.0, 2.0, 2000)
    y = x + rng.normal(0.0, 1.0, 2000)
    ours = paired_bootstrap(lambda a, b: np.mean(a - b), x, y, n_resamples=2000, seed=1)
    ref = scipy_stats.bootstrap(
        (x, y),
        lambda a, b, axis=-1: np.mean(a - b, axis=axis),
        paired=True,
        method="percentile",
        n_resamples=2000,
        confidence_level=0.95,
        rng=np.random.default_rng(2),
    ).confidence_interval
    width = ref.high - ref.low
    assert ours[0] == pytest.approx(ref.low, abs=0.1 * width)
    assert ours[1] == pytest.approx(ref.high, abs=0.1 * width)


@pytest.mark.parametrize(
    ("n", "rows", "cells"), [(7, 33, 15), (5, 10, 7), (11, 17, 1), (3, 9, 100)]
)
def test_weight_chunks_stack_to_resample_weights(n: int, rows: int, cells: int) -> None:
    """weight_chunks stacked == resample_weights (same draws in the same order), and each
    row of weights counts the items of the matching resample_indices row."""
    chunks = list(weight_chunks(n, rows, 3, max_cells=cells))
    assert all(chunk.shape[0] * n <= max(cells, n) for chunk in chunks)
    weights = resample_weights(n, rows, 3)
    np.testing.assert_array_equal(np.vstack(chunks), weights)
    indices = resample_indices(n, rows, 3)
    expected = np.stack([np.bincount(row, minlength=n) for row in indices])
    np.testing.assert_array_equal(weights, expected)
    assert (weights.sum(axis=1) == n).all()


def test_percentile_interval() -> None:
    """percentile_interval ignores NaN; all-NaN gives (None, None) (np.percentile by hand)."""
    values = np.array([np.nan, *range(101), np.nan], dtype=np.float64)
    assert percentile_interval(values, 0.9) == pytest.approx((5.0, 95.0), abs=1e-9)
    assert percentile_interval(np.array([np.nan, np.nan]), 0.9) == (None, None)


@pytest.mark.parametrize(
    ("options", "argument", "shown"),
    [
        ({"confidence_level": 1.5}, "confidence_level", "1.5"),
        ({"confidence_level": 0.0}, "confidence_level", "0.0"),
        ({"confidence_level": 1}, "confidence_level", "1"),
        ({"n_resamples": 0}, "n_resamples", "0"),
        ({"n_resamples": 10.0}, "n_resamples", "10.0"),
    ],
)
def test_argument_errors(options: dict[str, Any], argument: str, shown: str) -> None:
    """Out-of-range arguments raise ScoringError: "paired_bootstrap: <argument> must be
    ...; got <value>." (STYLE.md S1)."""
    with pytest.raises(ScoringError) as caught:
        paired_bootstrap(np.mean, [1.0, 2.0], **options)
    message = str(caught.value)
    assert message.startswith(f"paired_bootstrap: {argument} must be ")
    assert message.endswith(f"; got {shown}.")


def test_confidence_level_message() -> None:
    """The exact message of the STYLE.md S1 example case."""
    with pytest.raises(ScoringError) as caught:
        paired_bootstrap(np.mean, [1.0, 2.0], confidence_level=1.5)
    assert str(caught.value) == (
        "paired_bootstrap: confidence_level must be in (0.0, 1.0); got 1.5."
    )


@pytest.mark.parametrize(
    ("samples", "message"),
    [
        ((), "give at least one sample"),
        (([],), "the samples are empty"),
        (([1.0, 2.0], [1.0]), r"same length; samples\[0\] has 2, samples\[1\] has 1"),
    ],
)
def test_sample_errors(samples: tuple[Any, ...], message: str) -> None:
    """No sample, empty samples or samples of different length raise ScoringError."""
    with pytest.raises(ScoringError, match=message):
        paired_bootstrap(np.mean, *samples)
