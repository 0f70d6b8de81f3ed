"""`counterfactual_variants`: originals plus one variant per row with the attribute swapped."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from meta_evaluator.data import DataLoader, EvalData, counterfactual_variants
from meta_evaluator.errors import ColumnError, DataError

PRONOUNS = {"he": "she", "she": "he", "his": "her", "her": "his"}


def load(columns: dict[str, list[Any]], id_column: str = "id") -> EvalData:
    return DataLoader.load_from_dataframe("people", pl.DataFrame(columns), id_column)


def people(ids: list[Any]) -> EvalData:
    n = len(ids)
    genders = ["m", "f", "x"]
    return load(
        {
            "id": ids,
            "gender": [genders[i % 3] for i in range(n)],
            "text": [f"Person {i}: he said she knows." for i in range(n)],
        }
    )


# ----- ids -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ids", "offset"),
    [
        ([3, 7, 42], 100),  # largest 42 -> next power of ten 100
        ([1, 2, 9], 10),
        ([5, 100, 17], 1000),  # 100 itself is not above 100
        ([999, 4, 12], 1000),
        ([0, 1, 2], 10),
    ],
)
def test_integer_ids_shift_by_the_next_power_of_ten(ids: list[int], offset: int) -> None:
    data = load({"id": ids, "g": [1] * len(ids)})
    both = counterfactual_variants(data, "g", {1: 0})
    frame = both.data
    assert frame.schema["id"] == pl.Int64
    assert frame["id"].to_list() == ids + [i + offset for i in ids]
    assert frame["counterfactual_of"].to_list() == [None] * len(ids) + ids
    assert frame["g"].to_list() == [1] * len(ids) + [0] * len(ids)


def test_string_ids_get_the_cf_suffix() -> None:
    data = load({"key": ["a", "b-2", "c"], "g": ["m", "f", "m"]}, id_column="key")
    both = counterfactual_variants(data, "g", {"m": "f"})
    assert both.id_column == "key"
    frame = both.data
    assert frame["key"].to_list() == ["a", "b-2", "c", "a_cf", "c_cf"]
    assert frame["counterfactual_of"].to_list() == [None, None, None, "a", "c"]
    assert frame.schema["counterfactual_of"] == pl.String
    assert frame["g"].to_list() == ["m", "f", "m", "f", "f"]


def test_link_column_has_the_id_dtype_and_custom_name() -> None:
    data = load({"id": [10, 20], "g": [1, 0]})
    both = counterfactual_variants(data, "g", {1: 0, 0: 1}, link_column="twin_of", name="cf")
    assert both.name == "cf"
    assert both.data.columns == ["id", "g", "twin_of"]
    assert both.data.schema["twin_of"] == pl.Int64
    assert both.data["twin_of"].to_list() == [None, None, 10, 20]
    assert both.data["g"].to_list() == [1, 0, 0, 1]
    assert both.data.schema["g"] == pl.Int64


def test_result_is_loaded_eval_data_with_default_name() -> None:
    both = counterfactual_variants(people([1, 2]), "gender", {"m": "f", "f": "m"})
    assert isinstance(both, EvalData)
    assert both.name == "people_counterfactual"
    assert both.ids.to_list() == [1, 2, 11, 12]
    assert len(both) == 4


# ----- text swaps ------------------------------------------------------------------------------


def test_whole_word_swaps_keep_case() -> None:
    data = load(
        {
            "id": [1],
            "g": ["m"],
            "text": ["He said HIS book is hers; the theme: she, SHE, She. Hello his."],
        }
    )
    both = counterfactual_variants(data, "g", {"m": "f"}, text_columns=["text"],
                                   text_swaps=PRONOUNS)  # fmt: skip
    variant = both.data["text"].to_list()[1]
    # "hers", "the", "theme", "Hello" are not whole-word matches; HIS -> HER, She -> He
    assert variant == "She said HER book is hers; the theme: he, HE, He. Hello her."
    assert both.data["text"].to_list()[0] == data.data["text"][0]  # original untouched


def test_swaps_happen_at_once_not_one_after_another() -> None:
    """he -> she and she -> he at once: a sentence with both swaps both (no double swap)."""
    data = load({"id": [1, 2], "g": ["m", "f"], "text": ["he and she", "she and he"]})
    both = counterfactual_variants(data, "g", {"m": "f", "f": "m"}, text_columns=["text"],
                                   text_swaps={"he": "she", "she": "he"})  # fmt: skip
    assert both.data["text"].to_list() == ["he and she", "she and he", "she and he", "he and she"]


def test_default_text_swaps_are_the_string_swaps() -> None:
    data = load(
        {"id": [1, 2], "g": ["male", "female"], "text": ["A male nurse.", "Female pilots, male."]}
    )
    both = counterfactual_variants(data, "g", {"male": "female", "female": "male"},
                                   text_columns=["text"])  # fmt: skip
    assert both.data["text"].to_list()[2:] == ["A female nurse.", "Male pilots, female."]


def test_integer_swaps_leave_text_alone_without_text_swaps() -> None:
    data = load({"id": [1], "g": [1], "text": ["he is 1 of 0"]})
    both = counterfactual_variants(data, "g", {1: 0}, text_columns=["text"])
    assert both.data["text"].to_list() == ["he is 1 of 0", "he is 1 of 0"]


def test_several_text_columns_and_null_text() -> None:
    data = load({"id": [1, 2], "g": ["m", "m"], "a": ["he", None], "b": ["his", "she"]})
    both = counterfactual_variants(data, "g", {"m": "f"}, text_columns=["a", "b"],
                                   text_swaps=PRONOUNS)  # fmt: skip
    assert both.data["a"].to_list() == ["he", None, "she", None]
    assert both.data["b"].to_list() == ["his", "she", "her", "he"]


# ----- which rows get a variant -----------------------------------------------------------------


def test_rows_whose_attribute_is_not_swapped_get_no_variant() -> None:
    data = load({"id": [1, 2, 3, 4], "g": ["m", "x", None, "f"]})
    both = counterfactual_variants(data, "g", {"m": "f", "f": "m"})
    assert both.data["id"].to_list() == [1, 2, 3, 4, 11, 14]
    assert both.data["g"].to_list() == ["m", "x", None, "f", "f", "m"]
    assert both.data["counterfactual_of"].to_list() == [None, None, None, None, 1, 4]


def test_no_row_matches_gives_the_originals_only() -> None:
    data = load({"id": [1, 2], "g": ["x", "y"]})
    both = counterfactual_variants(data, "g", {"m": "f"})
    assert both.data["id"].to_list() == [1, 2]
    assert both.data["counterfactual_of"].to_list() == [None, None]


# ----- errors ----------------------------------------------------------------------------------


def test_missing_attribute_column() -> None:
    with pytest.raises(ColumnError) as info:
        counterfactual_variants(people([1, 2]), "sex", {"m": "f"})
    assert type(info.value) is ColumnError
    assert info.value.column == "sex" and "'sex'" in str(info.value)


def test_missing_text_column() -> None:
    with pytest.raises(ColumnError) as info:
        counterfactual_variants(people([1, 2]), "gender", {"m": "f"}, text_columns=["bio"])
    assert info.value.column == "bio" and "'bio'" in str(info.value)


def test_existing_link_column() -> None:
    data = load({"id": [1], "g": ["m"], "counterfactual_of": [None]})
    with pytest.raises(ColumnError) as info:
        counterfactual_variants(data, "g", {"m": "f"})
    assert info.value.column == "counterfactual_of"
    assert "link_column" in str(info.value)


def test_empty_swaps() -> None:
    with pytest.raises(DataError) as info:
        counterfactual_variants(people([1, 2]), "gender", {})
    assert type(info.value) is DataError
    assert "swaps" in str(info.value)


def test_variant_id_colliding_with_an_existing_id() -> None:
    data = load({"id": ["x", "x_cf"], "g": ["m", "other"]})
    with pytest.raises(DataError) as info:
        counterfactual_variants(data, "g", {"m": "f"})
    assert type(info.value) is DataError
    assert "collides" in str(info.value) and info.value.column == "id"


def test_input_is_not_modified() -> None:
    data = people([1, 2, 3])
    before = data.data.clone()
    counterfactual_variants(data, "gender", {"m": "f"}, text_columns=["text"], text_swaps=PRONOUNS)
    assert data.data.equals(before)
