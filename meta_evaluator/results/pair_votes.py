"""The votes that come with preference pairs: a set of labels saved like a judge's, not a judge.

`add_preference_pairs` keeps the trait annotators of a pairs file (AnnotatedPairs `principle`
annotators, each voting for the text that shows one trait more) as the results of one
pseudo-judge, `annotated_pairs` by default: their votes on the original pairs, one task per
trait. Its rows carry the fingerprint `pairs:<file name>` (`pair_votes_source`), which tells the
set apart from a judge someone ran or imported (`is_pair_votes`). Such a set is scored only by
metrics on the tasks it holds votes for, never by a scorer that needs both orders of a pair (its
votes were cast on the original order only), and a report does not count it as a judge.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from meta_evaluator.results.fingerprints import all_fingerprints_start_with

__all__ = [
    "PAIR_VOTES_PREFIX",
    "is_pair_votes",
    "is_pair_votes_source",
    "pair_votes_source",
    "voted_tasks",
]

PAIR_VOTES_PREFIX = "pairs:"
"""How the fingerprint (the source) of everything imported with preference pairs starts."""


def pair_votes_source(path: str | Path) -> str:
    """The source recorded for what a pairs file brought: `pairs:<file name>`."""
    return f"{PAIR_VOTES_PREFIX}{Path(path).name}"


def is_pair_votes_source(fingerprint: str | None) -> bool:
    """Whether a run's fingerprint (its state's) names a pairs file: the votes of a pairs file."""
    return fingerprint is not None and fingerprint.startswith(PAIR_VOTES_PREFIX)


def is_pair_votes(frame: pl.DataFrame) -> bool:
    """Whether a judge's rows are the votes imported with preference pairs (by fingerprint).

    True when the rows have a `fingerprint` column and every fingerprint in it names a pairs
    file; rows without the column (labels handed over as a bare frame) are a judge's.
    """
    return all_fingerprints_start_with(frame, PAIR_VOTES_PREFIX)


def voted_tasks(frame: pl.DataFrame, tasks: list[str]) -> list[str]:
    """The tasks of `tasks` on which the rows hold at least one label."""
    present = [t for t in tasks if t in frame.columns]
    if not present:
        return []
    counts = frame.select(pl.col(present).is_not_null().sum()).row(0)
    return [t for t, n in zip(present, counts, strict=True) if n > 0]
