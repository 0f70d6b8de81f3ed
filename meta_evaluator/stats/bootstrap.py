"""Paired percentile bootstrap: resample items, recompute a statistic, read the percentiles.

An item's values in every sample stay together (a judge's and a human's label of one item).

The resample indices come from `numpy.random.default_rng(seed).integers(0, n, (R, n))`, so one
seed gives one set of resamples whichever path computes the statistic; `resample_weights`
turns the same draws into per-item multiplicities for the vectorised scorers.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.checks import check_interval, check_same_length

__all__ = [
    "index_chunks",
    "paired_bootstrap",
    "percentile_interval",
    "resample_indices",
    "resample_weights",
    "weight_chunks",
]

#: Resamples x items cells materialised at once by `weight_chunks` (32 MB of float64).
CHUNK_CELLS = 4_000_000


def resample_indices(n_items: int, n_resamples: int, seed: int) -> npt.NDArray[np.int64]:
    """(n_resamples, n_items) item indices drawn with replacement."""
    return np.random.default_rng(seed).integers(0, n_items, size=(n_resamples, n_items))


def resample_weights(n_items: int, n_resamples: int, seed: int) -> npt.NDArray[np.float64]:
    """(n_resamples, n_items) multiplicities: how often each item is in each resample."""
    idx = resample_indices(n_items, n_resamples, seed)
    offset = idx + (np.arange(n_resamples) * n_items)[:, None]
    counts = np.bincount(offset.ravel(), minlength=n_resamples * n_items)
    return counts.reshape(n_resamples, n_items).astype(np.float64)


def index_chunks(
    n_items: int, n_resamples: int, seed: int, *, max_cells: int = CHUNK_CELLS
) -> Iterator[npt.NDArray[np.int64]]:
    """`resample_indices` in consecutive blocks of resamples (same numbers, bounded memory)."""
    rng = np.random.default_rng(seed)
    step = max(1, max_cells // max(n_items, 1))
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        yield rng.integers(0, n_items, size=(rows, n_items))


def weight_chunks(
    n_items: int, n_resamples: int, seed: int, *, max_cells: int = CHUNK_CELLS
) -> Iterator[npt.NDArray[np.float64]]:
    """`resample_weights` in consecutive blocks of resamples, bounding memory for big data.

    The blocks stacked equal `resample_weights(n_items, n_resamples, seed)`: the generator
    draws the same numbers in the same order.
    """
    for idx in index_chunks(n_items, n_resamples, seed, max_cells=max_cells):
        rows = idx.shape[0]
        offset = idx + (np.arange(rows) * n_items)[:, None]
        counts = np.bincount(offset.ravel(), minlength=rows * n_items)
        yield counts.reshape(rows, n_items).astype(np.float64)


def percentile_interval(
    values: npt.NDArray[np.float64], confidence_level: float
) -> tuple[float | None, float | None]:
    """The central `confidence_level` percentile interval of the defined (non-NaN) values."""
    defined = values[~np.isnan(values)]
    if defined.size == 0:
        return None, None
    tail = (1.0 - confidence_level) / 2.0 * 100.0
    low, high = np.percentile(defined, [tail, 100.0 - tail])
    return float(low), float(high)


def paired_bootstrap(
    statistic: Callable[..., Any],
    *samples: Sequence[Any] | npt.NDArray[Any],
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
    vectorized: bool | None = None,
) -> tuple[float | None, float | None]:
    """Percentile confidence interval of `statistic(*samples)` by resampling items in pairs.

    Each resample draws n item indices with replacement and applies them to every sample, so a
    judge's and a human's labels of one item stay together.

    Args:
        statistic: Function of the samples returning a number (None or NaN when undefined). If
            it takes an `axis` keyword (or `vectorized=True`), it is called once with 2-D
            arrays (one resample per row) and `axis=-1`, as `scipy.stats.bootstrap` does.
        *samples: One or more sequences of equal length n >= 1 (item i of each belongs
            together).
        n_resamples: Number of resamples, >= 1.
        confidence_level: In (0, 1).
        seed: Seed of the resampling; the same seed gives the same interval.
        vectorized: Force the vectorised (True) or per-resample (False) call.

    Returns:
        (low, high); None for both when the statistic is undefined in every resample.
        Resamples where it is undefined are left out.

    Raises:
        ScoringError: No samples, lengths differ, no items, or an argument out of range.

    Example:
        >>> low, high = paired_bootstrap(np.mean, [1.0, 2.0, 3.0, 4.0], n_resamples=200)
        >>> 1.0 <= low <= high <= 4.0
        True
    """
    function = "paired_bootstrap"
    if not samples:
        raise ScoringError(f"{function}: give at least one sample.")
    check_interval(function, "n_resamples", n_resamples, 1, float("inf"), closed="left",
                   integer=True)  # fmt: skip
    check_interval(function, "confidence_level", confidence_level, 0.0, 1.0)
    n = check_same_length(function, **{f"samples[{i}]": s for i, s in enumerate(samples)})
    if n == 0:
        raise ScoringError(f"{function}: the samples are empty.")
    arrays = [_items(s) for s in samples]
    if vectorized is None:
        vectorized = _takes_axis(statistic)
    parts = []
    for idx in index_chunks(n, n_resamples, seed):
        if vectorized:
            values = statistic(*(a[idx] for a in arrays), axis=-1)
            parts.append(np.asarray(values, dtype=np.float64).reshape(idx.shape[0]))
        else:
            parts.append(
                np.array(
                    [_number(statistic(*(a[row] for a in arrays))) for row in idx],
                    dtype=np.float64,
                )
            )
    return percentile_interval(np.concatenate(parts), confidence_level)


def _items(sample: Sequence[Any] | npt.NDArray[Any]) -> npt.NDArray[Any]:
    """The sample as an array indexed by item; ragged items (label lists) stay objects."""
    try:
        return np.asarray(sample)
    except ValueError:  # e.g. multi-label answers of different lengths
        items = np.empty(len(sample), dtype=object)
        for i, value in enumerate(sample):
            items[i] = value
        return items


def _takes_axis(function: Callable[..., Any]) -> bool:
    try:
        return "axis" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def _number(value: Any) -> float:
    return float("nan") if value is None else float(value)
