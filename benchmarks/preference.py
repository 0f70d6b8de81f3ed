"""Strength intervals of pairwise preference votes: ours vs scipy.stats.bootstrap (run by hand).

Usage: .venv/bin/python benchmarks/preference.py [--repeats 3] [--pairs 10000]
       [--resamples 10000] [--reference-resamples 200] [--batch 500] [--seed 0]

Workload: --pairs pairs; the human (reference) votes text_a or text_b on every pair; the trait
annotator agrees with it on ~55% of the pairs, disagrees on ~20% and says "tie" on the rest
(METRICS.md A). One markdown table, one row per tool:
1. `stats.preference.strength_bootstrap_interval`: paired percentile bootstrap of strength,
   --resamples resamples (METRICS.md A.4.1 resampling, our statistic). Target: 10,000 resamples
   over 10,000 pairs < 0.5 s.
2. `stats.preference.strength_interval`: Feedback Forensics 0.5.0's multinomial procedure on the
   three counts with a prior of 1 each (METRICS.md A.4.2), --resamples draws, seeded. Not a
   bootstrap of pairs: its interval is the same procedure FF's app shows.
3. `scipy.stats.bootstrap` of our strength statistic (vote codes, vectorised along the resample
   axis, paired, percentile, --resamples resamples in batches of --batch): the like-for-like
   reference for row 1.
4. `scipy.stats.bootstrap` of the statistic in Feedback Forensics' interval tutorial
   (METRICS.md A.4.1): scikit-learn `cohen_kappa_score` with estimated chance agreement on the
   pairs where the trait annotator voted, times relevance; paired, vectorized=False, percentile.
   One Python call and one scikit-learn call per resample, so it runs --reference-resamples
   resamples only; its interval is of a different statistic (estimated p_e, not 0.5), so only
   its time per resample compares.

seconds: median of --repeats runs; inputs are built before the clock starts and one untimed
warm-up on 200 pairs pays the lazy imports. ratio: seconds per resample / ours (row 1) per
resample; > 1 means slower than ours. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy
import sklearn
from scipy import stats as scipy_stats
from sklearn.metrics import cohen_kappa_score

from meta_evaluator.stats.preference import (
    annotator_metrics,
    strength_bootstrap_interval,
    strength_interval,
)

VOTES = np.array(["text_a", "text_b"])


# ------------------------------------------------------------------------------------ data --


def votes(n: int, seed: int) -> tuple[list[str], list[str]]:
    """Human votes (all valid) and trait votes: agree ~55%, disagree ~20%, tie ~25%."""
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 2, n)
    u = rng.random(n)
    trait = np.where(u < 0.55, VOTES[human], np.where(u < 0.75, VOTES[1 - human], "tie"))
    return VOTES[human].tolist(), trait.tolist()


def codes(values: list[str]) -> np.ndarray[Any, Any]:
    """text_a -> 0, text_b -> 1, anything else -> -1."""
    array = np.asarray(values)
    return np.where(array == "text_a", 0, np.where(array == "text_b", 1, -1)).astype(np.int8)


# ------------------------------------------------------------------------------ statistics --


def strength_of_codes(trait: Any, human: Any, axis: int = -1) -> Any:
    """Strength = (Agree - Disagree) / N along `axis` (2 (acc - 0.5) x relevance, p_e 0.5)."""
    voted = trait >= 0
    agree = np.sum(voted & (trait == human), axis=axis)
    disagree = np.sum(voted & (trait != human), axis=axis)
    return (agree - disagree) / trait.shape[axis]


def tutorial_strength(human: Any, trait: Any) -> float:
    """FF tutorial statistic: Cohen's kappa (estimated p_e, scikit-learn) on the pairs where the
    trait annotator voted text_a or text_b, times the share of such pairs."""
    human, trait = np.asarray(human), np.asarray(trait)
    relevant = np.isin(trait, VOTES)
    relevance = relevant.sum() / trait.size
    return float(cohen_kappa_score(human[relevant], trait[relevant])) * float(relevance)


# -------------------------------------------------------------------------------- timing --


def timed(function: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Median wall seconds of `repeats` calls, and the last call's result."""
    seconds = []
    result = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), result


def run(
    n: int, resamples: int, reference_resamples: int, batch: int, repeats: int, seed: int
) -> None:
    human, trait = votes(n, seed)
    human_codes, trait_codes = codes(human), codes(trait)
    human_array, trait_array = np.asarray(human), np.asarray(trait)
    point = annotator_metrics(trait, human)
    tutorial_point = tutorial_strength(human, trait)

    def ours_bootstrap() -> tuple[float | None, float | None]:
        return strength_bootstrap_interval(trait, human, n_resamples=resamples, seed=seed)

    def ours_multinomial() -> dict[str, float]:
        return strength_interval(trait, human, resamples, seed)

    def scipy_ours() -> Any:
        return scipy_stats.bootstrap(
            (trait_codes, human_codes),
            strength_of_codes,
            paired=True,
            vectorized=True,
            n_resamples=resamples,
            batch=batch,
            method="percentile",
            rng=np.random.default_rng(seed),
        ).confidence_interval

    def scipy_tutorial() -> Any:
        return scipy_stats.bootstrap(
            (human_array, trait_array),
            tutorial_strength,
            paired=True,
            vectorized=False,
            n_resamples=reference_resamples,
            method="percentile",
            rng=np.random.default_rng(seed),
        ).confidence_interval

    rows: list[tuple[str, float, int, str]] = []
    seconds, (low, high) = timed(ours_bootstrap, repeats)
    rows.append(
        (
            f"ours: strength_bootstrap_interval ({resamples:,} resamples)",
            seconds,
            resamples,
            f"[{low:.4f}, {high:.4f}]",
        )
    )
    ours_seconds = seconds
    seconds, interval = timed(ours_multinomial, repeats)
    rows.append(
        (
            f"ours: strength_interval, FF 0.5.0 multinomial ({resamples:,} draws)",
            seconds,
            resamples,
            f"[{interval['2.5']:.4f}, {interval['97.5']:.4f}] (90%: [{interval['5']:.4f}, "
            f"{interval['95']:.4f}])",
        )
    )
    seconds, ci = timed(scipy_ours, repeats)
    diff = max(abs(low - float(ci.low)), abs(high - float(ci.high)))
    rows.append(
        (
            f"scipy.stats.bootstrap, our strength, vectorized, batch {batch} "
            f"({resamples:,} resamples)",
            seconds,
            resamples,
            f"[{float(ci.low):.4f}, {float(ci.high):.4f}] (max abs diff to row 1 {diff:.4f})",
        )
    )
    seconds, ci = timed(scipy_tutorial, repeats)
    rows.append(
        (
            f"scipy.stats.bootstrap, FF tutorial statistic (sklearn kappa x relevance), "
            f"not vectorized ({reference_resamples:,} resamples)",
            seconds,
            reference_resamples,
            f"[{float(ci.low):.4f}, {float(ci.high):.4f}]",
        )
    )

    base = ours_seconds / resamples
    print(f"\n### Strength intervals, {n:,} pairs\n")
    print(
        f"Point estimates: strength (p_e = 0.5) {point['strength']:.4f} (agree {point['agreed']:,},"
        f" disagree {point['disagreed']:,}, not applicable {point['not_applicable']:,}); FF "
        f"tutorial statistic (estimated p_e) {tutorial_point:.4f}.\n"
    )
    print("| tool | seconds | ms per resample | ratio per resample to ours | 95% interval |")
    print("|---|---:|---:|---:|---|")
    for tool, secs, count, value in rows:
        per = secs / count
        print(f"| {tool} | {secs:.3f} | {per * 1000:.4f} | {per / base:.1f} | {value} |")
    met = "met" if ours_seconds < 0.5 else "MISSED"
    print(
        f"\nTarget: {resamples:,} resamples of strength over {n:,} pairs < 0.5 s: "
        f"{ours_seconds:.3f} s, {met}"
        + ("" if (n, resamples) == (10_000, 10_000) else " (other sizes than the target's)")
        + "."
    )
    print(
        "Rows 1 and 3 estimate the same bootstrap distribution (resampling pairs), drawn "
        "differently: row 1 draws the counts of agree / disagree / not applicable from a "
        "multinomial, scipy draws pair indices, so they agree up to Monte-Carlo error. Row 2 is "
        "FF's app procedure (prior of 1 per count), not a pair bootstrap. Row 4's statistic uses "
        "the estimated chance agreement: close to strength when both annotators split their "
        "votes about evenly between text_a and text_b (as here), different otherwise (0 for an "
        "annotator that always votes text_a); compare its time per resample."
    )
    sys.stdout.flush()


def warm_up(seed: int) -> None:
    """Every tool once on 200 pairs, unprinted: no timing pays a one-time (lazy) import."""
    with contextlib.redirect_stdout(io.StringIO()):
        run(200, 50, 20, 50, 1, seed)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs per timing (median)")
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument(
        "--reference-resamples",
        type=int,
        default=200,
        help="resamples of the slow scipy bootstrap of FF's tutorial statistic",
    )
    parser.add_argument(
        "--batch", type=int, default=500, help="resamples per batch of the vectorised scipy run"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(
        f"Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"scikit-learn {sklearn.__version__}, {os.cpu_count()} CPUs; median of {args.repeats} "
        "run(s)"
    )
    warm_up(args.seed)
    run(args.pairs, args.resamples, args.reference_resamples, args.batch, args.repeats, args.seed)


if __name__ == "__main__":
    main()
