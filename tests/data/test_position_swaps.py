"""`position_swapped_variants`: every pair again with its two answers (and sides) swapped."""

from __future__ import annotations

import doctest
from typing import Any

import polars as pl
import pytest

from meta_evaluator.data import (
    DataLoader,
    EvalData,
    counterfactual_variants,
    position_swapped_variants,
    position_swaps,
    variants,
)
from meta_evaluator.errors import ColumnError, DataError


def load(columns: dict[str, list[Any]], id_column: str = "id") -> EvalData:
    return DataLoader.load_from_dataframe("pairs", pl.DataFrame(columns), id_column)


def pairs(ids: list[Any]) -> EvalData:
    n = len(ids)
    return load(
        {
            "id": ids,
            "prompt": [f"question {i}" for i in range(n)],
            "text_a": [f"answer A{i}" for i in range(n)],
            "text_b": [f"answer B{i}" for i in range(n)],
            "model_a": ["gpt"] * n,
            "model_b": ["claude"] * n,
            "topic": ["x", "y", "z"][:n],
        }
    )


def test_text_ids_get_a_twin_with_the_answers_swapped_and_the_rest_kept() -> None:
    both = position_swapped_variants(pairs(["q1", "q2", "q3"]))
    frame = both.data
    assert both.id_column == "id" and both.name == "pairs_swapped"
    assert frame["id"].to_list() == ["q1", "q2", "q3", "q1_swapped", "q2_swapped", "q3_swapped"]
    assert frame["swapped_of"].to_list() == [None, None, None, "q1", "q2", "q3"]
    originals, twins = frame.head(3), frame.tail(3)
    assert twins["text_a"].to_list() == originals["text_b"].to_list()
    assert twins["text_b"].to_list() == originals["text_a"].to_list()
    for kept in ("prompt", "topic", "model_a", "model_b"):  # no side_columns given: kept
        assert twins[kept].to_list() == originals[kept].to_list()
    assert frame.columns == [*pairs(["q1"]).data.columns, "swapped_of"]


@pytest.mark.parametrize(("ids", "offset"), [([3, 7, 42], 100), ([0, 1, 9], 10), ([5, 100], 1000)])
def test_integer_ids_keep_their_type_shifted_as_counterfactuals_are(
    ids: list[int], offset: int
) -> None:
    frame = position_swapped_variants(pairs(ids)).data
    assert frame.schema["id"] == pl.Int64 and frame.schema["swapped_of"] == pl.Int64
    assert frame["id"].to_list() == ids + [i + offset for i in ids]
    assert frame["swapped_of"].to_list() == [None] * len(ids) + ids


def test_side_columns_are_swapped_too_and_names_are_chosen() -> None:
    both = position_swapped_variants(
        pairs([1, 2]), "text_a", "text_b", side_columns=[("model_a", "model_b")],
        link_column="twin_of", name="both_orders",
    )  # fmt: skip
    frame = both.data
    assert both.name == "both_orders"
    assert frame["model_a"].to_list() == ["gpt", "gpt", "claude", "claude"]
    assert frame["model_b"].to_list() == ["claude", "claude", "gpt", "gpt"]
    assert frame["twin_of"].to_list() == [None, None, 1, 2]


def test_swapping_twice_is_refused() -> None:
    both = position_swapped_variants(pairs(["a", "b"]))
    with pytest.raises(ColumnError, match="has a column 'swapped_of' already"):
        position_swapped_variants(both)
    with pytest.raises(DataError, match="collides with an existing id"):  # a_swapped exists
        position_swapped_variants(both, link_column="again_of")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"first_column": "answer_a"}, ColumnError, r"no column 'answer_a' in the data \(columns"),
        ({"second_column": "text_a"}, ColumnError, "'text_a' is named twice"),
        ({"second_column": "id"}, ColumnError, "'id' is named twice .or is the id column"),
        ({"side_columns": [("model_a",)]}, ColumnError, "side_columns must be pairs"),
        ({"side_columns": [("model_a", "nope")]}, ColumnError, "no column 'nope'"),
        ({"side_columns": [("topic", "n")]}, ColumnError, r"'topic' \(String\) and 'n' \(Int64\)"),
        ({"link_column": "topic"}, ColumnError, "has a column 'topic' already"),
    ],
)
def test_misuse_is_named(kwargs: dict[str, Any], error: type[Exception], message: str) -> None:
    data = load({**pairs(["q1", "q2"]).data.to_dict(as_series=False), "n": [1, 2]})
    with pytest.raises(error, match=message):
        position_swapped_variants(data, **kwargs)


def test_a_twin_id_that_exists_already_is_refused() -> None:
    data = load({"id": ["q1", "q1_swapped"], "text_a": ["a", "b"], "text_b": ["c", "d"]})
    with pytest.raises(DataError, match="rename the ids ending in '_swapped'"):
        position_swapped_variants(data)


def test_the_docstring_examples_run() -> None:
    for module in (position_swaps, variants):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0


@pytest.mark.parametrize(
    ("ids", "groups", "hint"),
    [
        (["x", "x_cf"], ["m", "o"], "rename the ids ending in '_cf'"),
        ([5, -5], ["o", "m"], "integer ids of variants are the id plus a power of ten; negative "
         "ids can meet positive ones, so use ids >= 0"),
    ],
)  # fmt: skip
def test_a_counterfactual_collision_is_worded_for_counterfactuals(
    ids: list[Any], groups: list[str], hint: str
) -> None:
    """Both makers of variants join them by one rule (`variants.joined_variants`), each in its
    own words."""
    with pytest.raises(DataError) as info:
        counterfactual_variants(load({"id": ids, "g": groups}), "g", {"m": "f"})
    assert str(info.value) == (
        f"counterfactual_variants: a variant id collides with an existing id; {hint}."
    )
    assert info.value.column == "id"


@pytest.mark.parametrize(
    ("ids", "hint"),
    [
        (["a", "a_swapped"], "rename the ids ending in '_swapped'"),
        ([5, -5], "integer ids of twins are the id plus a power of ten; negative ids can meet "
         "positive ones, so use ids >= 0"),
    ],
)  # fmt: skip
def test_a_twin_collision_is_worded_for_twins(ids: list[Any], hint: str) -> None:
    with pytest.raises(DataError) as info:
        position_swapped_variants(pairs(ids))
    assert str(info.value) == (
        f"position_swapped_variants: a swapped row's id collides with an existing id; {hint}."
    )
    assert info.value.column == "id"
