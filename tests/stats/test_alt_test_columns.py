"""alt_test_table on polars columns gives what it gives on Python lists (issue 21).

Polars columns of labels take a path of codes (no Python value per label); these tests pin that
path to the list path, which the reference tests check against a hand-written alt-test.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from meta_evaluator.stats.alt_test import AltTestResult, alt_test_table


def _same(a: AltTestResult, b: AltTestResult) -> None:
    assert a.winning_rate == b.winning_rate
    assert a.advantage_probability == pytest.approx(b.advantage_probability, abs=1e-12)
    assert a.per_annotator == b.per_annotator
    assert a.skipped_annotators == b.skipped_annotators
    assert a.scoring_function == b.scoring_function
    assert np.array_equal(a.kept_instances, b.kept_instances)
    assert np.allclose(a.llm_wins, b.llm_wins, equal_nan=True)


def _labels(
    rng: np.random.Generator, n: int, options: list[str], missing: float
) -> list[str | None]:
    picked = rng.choice(options, n)
    return [None if rng.random() < missing else str(v) for v in picked]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_text_labels_as_columns_match_lists(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, options = 400, ["yes", "no", "maybe"]
    llm = _labels(rng, n, options, 0.05)
    humans = [_labels(rng, n, options, 0.2) for _ in range(4)]
    names = ["a", "b", "c", "d"]
    as_lists = alt_test_table(llm, humans, names, epsilon=0.15)
    as_columns = alt_test_table(
        pl.Series(llm, dtype=pl.String), [pl.Series(h, dtype=pl.String) for h in humans], names,
        epsilon=0.15,
    )  # fmt: skip
    assert as_columns.scoring_function == "accuracy"
    _same(as_columns, as_lists)


def test_number_columns_are_scored_by_neg_rmse_as_lists_are() -> None:
    rng = np.random.default_rng(5)
    n = 300
    llm = [float(v) for v in rng.integers(1, 6, n)]
    humans = [[None if rng.random() < 0.1 else float(v) for v in rng.integers(1, 6, n)]
              for _ in range(3)]  # fmt: skip
    as_lists = alt_test_table(llm, humans, ["a", "b", "c"])
    as_columns = alt_test_table(pl.Series(llm), [pl.Series(h) for h in humans], ["a", "b", "c"])
    assert as_columns.scoring_function == "neg_rmse"
    _same(as_columns, as_lists)


def test_a_column_without_any_label_does_not_decide_the_scoring() -> None:
    rng = np.random.default_rng(9)
    n, options = 200, ["x", "y"]
    llm = _labels(rng, n, options, 0.0)
    humans = [_labels(rng, n, options, 0.1) for _ in range(2)] + [[None] * n]
    columns = [pl.Series(h, dtype=pl.String) for h in humans[:2]] + [pl.Series([None] * n)]
    as_columns = alt_test_table(pl.Series(llm), columns, ["a", "b", "c"], min_instances_per_human=1)
    _same(as_columns, alt_test_table(llm, humans, ["a", "b", "c"], min_instances_per_human=1))


def test_categorical_columns_match_lists_and_encode_as_text_does() -> None:
    from meta_evaluator.stats.checks import encode_labels

    rng = np.random.default_rng(11)
    n, options = 300, ["b", "a", "c"]
    llm = _labels(rng, n, options, 0.05)
    humans = [_labels(rng, n, options, 0.2) for _ in range(3)]
    columns = [pl.Series(h, dtype=pl.String).cast(pl.Categorical) for h in humans]
    judged = pl.Series(llm, dtype=pl.String).cast(pl.Categorical)
    as_columns = alt_test_table(judged, columns, ["x", "y", "z"], min_instances_per_human=5)
    assert as_columns.scoring_function == "accuracy"
    _same(as_columns, alt_test_table(llm, humans, ["x", "y", "z"], min_instances_per_human=5))
    codes, categories = encode_labels(judged, *columns, pl.Series([None] * n))
    text_codes, text_categories = encode_labels(llm, *humans, [None] * n)
    assert categories == text_categories == ["a", "b", "c"]
    assert all(np.array_equal(a, b) for a, b in zip(codes, text_codes, strict=True))
    enum = pl.Series(llm, dtype=pl.Enum(["c", "b", "a"]))  # its own order: codes still sorted
    assert np.array_equal(encode_labels(enum, judged)[0][0], text_codes[0])
