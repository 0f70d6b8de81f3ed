"""Unit tests of EvalData and SampleEvalData: validation, immutability, equality, sampling."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
import pytest

from meta_evaluator.data import EvalData, SampleEvalData
from meta_evaluator.errors import ColumnError, DataError, IdError, SamplingError


def frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "qid": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
            "label": ["a", "a", "a", "a", "b", "b", "b", "b", "b", "b"],
            "lang": ["en", "fr", "en", "fr", "en", "fr", "en", "fr", "en", "fr"],
            "score": [0.1, None, 0.3, 0.4, 0.5, 0.6, None, 0.8, 0.9, 1.0],
        }
    )


@pytest.fixture
def data() -> EvalData:
    return EvalData("demo", frame(), "qid")


# --- construction ------------------------------------------------------------------------


def test_integer_ids_keep_their_type(data: EvalData) -> None:
    assert data.ids.dtype == pl.Int64
    assert data.ids.to_list() == list(range(1, 11))
    assert data.id_column == "qid"
    assert data.name == "demo"
    assert data.source is None
    assert len(data) == 10
    assert data.columns == ["qid", "label", "lang", "score"]


@pytest.mark.parametrize("dtype", [pl.Int8, pl.Int32, pl.UInt16, pl.UInt64])
def test_other_integer_widths_are_accepted_unchanged(dtype: type[pl.DataType]) -> None:
    data = EvalData("demo", pl.DataFrame({"k": pl.Series([3, 1, 2], dtype=dtype)}), "k")
    assert data.ids.dtype == dtype
    assert data.ids.to_list() == [3, 1, 2]


def test_string_ids_keep_their_type() -> None:
    data = EvalData("demo", pl.DataFrame({"k": ["007", "x", " y"]}), "k")
    assert data.ids.dtype == pl.String
    assert data.ids.to_list() == ["007", "x", " y"]


def test_auto_ids_are_a_new_first_column() -> None:
    data = EvalData("demo", pl.DataFrame({"text": ["a", "b", "c"], "n": [3, 2, 1]}))
    assert data.id_column == "id"
    assert data.columns == ["id", "text", "n"]
    assert data.ids.to_list() == ["id-1", "id-2", "id-3"]


def test_auto_ids_refuse_an_existing_id_column() -> None:
    with pytest.raises(ColumnError, match="id_column='id'"):
        EvalData("demo", pl.DataFrame({"id": [1, 2]}))


def test_source_is_named_in_errors() -> None:
    with pytest.raises(IdError, match=r"^data\.csv: ") as info:
        EvalData("demo", pl.DataFrame({"k": [1, 1]}), "k", source="data.csv")
    assert str(info.value.path) == "data.csv"


@pytest.mark.parametrize("name", ["", "   ", None, 3])
def test_name_must_be_a_non_empty_string(name: object) -> None:
    with pytest.raises(DataError, match="name") as info:
        EvalData(name, frame(), "qid")  # type: ignore[arg-type]
    assert info.value.field == "name"


def test_data_must_be_a_polars_dataframe() -> None:
    with pytest.raises(DataError, match="polars DataFrame"):
        EvalData("demo", frame().to_dicts(), "qid")  # type: ignore[arg-type]
    with pytest.raises(DataError, match="polars DataFrame"):
        EvalData("demo", frame().lazy(), "qid")  # type: ignore[arg-type]


def test_data_needs_rows() -> None:
    with pytest.raises(DataError, match="no rows"):
        EvalData("demo", frame().clear(), "qid")


def test_id_column_must_exist() -> None:
    with pytest.raises(ColumnError, match="Did you mean 'qid'") as info:
        EvalData("demo", frame(), "quid")
    assert info.value.column == "quid"


def test_id_column_must_be_a_string() -> None:
    with pytest.raises(DataError, match="id_column"):
        EvalData("demo", frame(), 0)  # type: ignore[arg-type]


def test_empty_column_name_is_refused() -> None:
    with pytest.raises(ColumnError, match="column 2"):
        EvalData("demo", pl.DataFrame({"k": [1], " ": [2]}), "k")


def test_null_ids_are_refused() -> None:
    with pytest.raises(IdError, match=r"row index \[1, 3\]") as info:
        EvalData("demo", pl.DataFrame({"k": [1, None, 2, None]}), "k")
    assert info.value.row_id == 1


def test_empty_string_ids_are_refused() -> None:
    with pytest.raises(IdError, match=r"row index \[2\]") as info:
        EvalData("demo", pl.DataFrame({"k": ["a", "b", "  "]}), "k")
    assert info.value.row_id == 2


def test_duplicate_ids_are_refused() -> None:
    with pytest.raises(IdError, match=r"repeats 1 id\(s\) \['x'\]") as info:
        EvalData("demo", pl.DataFrame({"k": ["x", "y", "x"]}), "k")
    assert info.value.row_id == "x"


def test_float_ids_are_refused_with_a_cast_hint() -> None:
    with pytest.raises(IdError, match=r"cast\(pl.Int64\)"):
        EvalData("demo", pl.DataFrame({"k": [1.0, 2.0]}), "k")
    with pytest.raises(IdError, match=r"pl\.String"):
        EvalData("demo", pl.DataFrame({"k": [1.5, 2.0]}), "k")


def test_boolean_ids_are_refused() -> None:
    with pytest.raises(IdError):
        EvalData("demo", pl.DataFrame({"k": [True, False]}), "k")


def test_later_changes_to_the_callers_frame_do_not_leak_in() -> None:
    source = frame()
    data = EvalData("demo", source, "qid")
    source[0, "label"] = "changed"
    source.drop_in_place("score")
    assert data.data.get_column("label")[0] == "a"
    assert "score" in data.columns


# --- immutability ------------------------------------------------------------------------


@pytest.mark.parametrize("attribute", ["name", "id_column", "data", "_data", "_name", "other"])
def test_setting_an_attribute_raises(data: EvalData, attribute: str) -> None:
    with pytest.raises(AttributeError):
        setattr(data, attribute, "x")
    assert data.name == "demo"
    assert data.id_column == "qid"


def test_mutating_the_returned_frame_does_not_change_eval_data(data: EvalData) -> None:
    copy = data.data
    copy[0, "label"] = "changed"
    copy.drop_in_place("score")
    copy.insert_column(0, pl.Series("new", range(10)))
    assert data.data.equals(frame())
    assert data.columns == ["qid", "label", "lang", "score"]


def test_mutating_ids_and_columns_does_not_change_eval_data(data: EvalData) -> None:
    ids = data.ids
    ids[0] = 99
    columns = data.columns
    columns.append("extra")
    assert data.ids.to_list() == list(range(1, 11))
    assert data.columns == ["qid", "label", "lang", "score"]


def test_eval_data_is_not_hashable(data: EvalData) -> None:
    with pytest.raises(TypeError):
        hash(data)


# --- equality and repr -------------------------------------------------------------------


def test_equal_when_name_id_column_and_frame_equal(data: EvalData) -> None:
    same = EvalData("demo", frame(), "qid")
    assert data == same
    assert (data != same) is False


def test_nulls_compare_equal(data: EvalData) -> None:
    assert data.data.get_column("score").null_count() == 2
    assert data == EvalData("demo", frame(), "qid")


@pytest.mark.parametrize(
    "other",
    [
        lambda: EvalData("other", frame(), "qid"),
        lambda: EvalData("demo", frame().with_columns(pl.col("qid").cast(pl.String)), "qid"),
        lambda: EvalData("demo", frame().with_columns(pl.col("qid").cast(pl.Int32)), "qid"),
        lambda: EvalData("demo", frame().with_row_index("rid"), "qid"),
        lambda: EvalData("demo", frame().with_row_index("rid"), "rid"),
        lambda: EvalData("demo", frame().with_columns(pl.lit(0.25).alias("score")), "qid"),
        lambda: EvalData("demo", frame().reverse(), "qid"),
        lambda: EvalData("demo", frame().select("label", "qid", "lang", "score"), "qid"),
    ],
    ids=[
        "name",
        "id-dtype-str",
        "id-dtype-int32",
        "extra-column",
        "id-column",
        "values",
        "row-order",
        "column-order",
    ],
)
def test_not_equal_when_anything_differs(data: EvalData, other: Callable[[], EvalData]) -> None:
    assert data != other()


def test_int_and_float_columns_with_same_values_are_not_equal() -> None:
    ints = EvalData("demo", pl.DataFrame({"k": [1, 2], "v": [1, 2]}), "k")
    floats = EvalData("demo", pl.DataFrame({"k": [1, 2], "v": [1.0, 2.0]}), "k")
    assert ints.data.get_column("v").to_list() == floats.data.get_column("v").to_list()
    assert ints != floats


def test_not_equal_to_other_types(data: EvalData) -> None:
    assert data != "demo"
    assert data != 1
    assert data.__eq__(frame()) is NotImplemented


def test_eval_data_and_sample_with_same_rows_are_not_equal(data: EvalData) -> None:
    sample = data.stratified_sample_by_columns(["label"], 1.0)
    assert sample.data.equals(data.data)
    assert sample != data
    assert data != sample


def test_repr(data: EvalData) -> None:
    assert repr(data) == (
        "EvalData(name='demo', rows=10, id_column='qid', columns=['qid', 'label', 'lang', 'score'])"
    )


def test_repr_of_sample(data: EvalData) -> None:
    sample = data.stratified_sample_by_columns(["label"], 0.5, sample_name="half")
    assert repr(sample) == (
        "SampleEvalData(name='half', rows=5, id_column='qid', "
        "columns=['qid', 'label', 'lang', 'score'])"
    )


# --- sampling ----------------------------------------------------------------------------


def test_stratified_sample_sizes_and_info(data: EvalData) -> None:
    sample = data.stratified_sample_by_columns(["label"], 0.5, seed=7)
    assert isinstance(sample, SampleEvalData)
    labels = sample.data.get_column("label").to_list()
    assert labels.count("a") == 2  # 4 * 0.5
    assert labels.count("b") == 3  # 6 * 0.5
    assert sample.sampling_info == {
        "sample_name": "demo_sample_50pct_by_label",
        "stratification_columns": ["label"],
        "sample_percentage": 0.5,
        "seed": 7,
        "original_size": 10,
        "sampled_size": 5,
    }
    assert sample.name == sample.sample_name == "demo_sample_50pct_by_label"
    assert sample.seed == 7
    assert sample.original_size == 10
    assert sample.sample_percentage == 0.5
    assert sample.stratification_columns == ["label"]
    assert sample.id_column == "qid"
    assert sample.data.schema == data.data.schema


def test_sampling_info_is_a_copy(data: EvalData) -> None:
    sample = data.stratified_sample_by_columns(["label"], 0.5)
    sample.sampling_info["stratification_columns"].append("x")
    sample.stratification_columns.append("y")
    assert sample.stratification_columns == ["label"]
    assert sample.sampling_info["stratification_columns"] == ["label"]


def test_sample_rounds_half_up_and_keeps_at_least_one(data: EvalData) -> None:
    # strata by label and lang: (a,en)=2, (a,fr)=2, (b,en)=3, (b,fr)=3
    sample = data.stratified_sample_by_columns(["label", "lang"], 0.25, seed=1)
    counts = dict(
        sample.data.group_by("label", "lang")
        .len()
        .select(pl.concat_str("label", "lang"), "len")
        .iter_rows()
    )
    # 2 * 0.25 = 0.5 -> 1; 3 * 0.25 = 0.75 -> 1
    assert counts == {"aen": 1, "afr": 1, "ben": 1, "bfr": 1}
    sample = data.stratified_sample_by_columns(["label"], 0.1, seed=1)
    # 4 * 0.1 = 0.4 -> at least 1; 6 * 0.1 = 0.6 -> 1
    assert sorted(sample.data.get_column("label").to_list()) == ["a", "b"]


def test_sample_keeps_row_order(data: EvalData) -> None:
    sample = data.stratified_sample_by_columns(["lang"], 0.6, seed=3)
    ids = sample.ids.to_list()
    assert ids == sorted(ids)
    assert len(ids) == 6


def test_sample_is_reproducible(data: EvalData) -> None:
    first = data.stratified_sample_by_columns(["label"], 0.5, seed=11)
    second = data.stratified_sample_by_columns(["label"], 0.5, seed=11)
    assert first == second
    assert first.ids.to_list() == second.ids.to_list()


def test_different_seeds_can_give_different_samples() -> None:
    big = EvalData("big", pl.DataFrame({"k": range(200), "g": ["x"] * 200}), "k")
    samples = {tuple(big.stratified_sample_by_columns(["g"], 0.5, seed=s).ids) for s in range(5)}
    assert len(samples) > 1


def test_sample_with_fraction_one_keeps_everything(data: EvalData) -> None:
    sample = data.stratified_sample_by_columns("label", 1)
    assert sample.data.equals(data.data)
    assert sample.sample_percentage == 1.0
    assert isinstance(sample.sample_percentage, float)
    assert sample.name == "demo_sample_100pct_by_label"


def test_sample_name_can_be_given(data: EvalData) -> None:
    sample = data.stratified_sample_by_columns(["label"], 0.5, sample_name="pilot")
    assert sample.name == "pilot"
    assert sample.sample_name == "pilot"


@pytest.mark.parametrize(
    ("fraction", "part"),
    [(0.1, "10pct"), (0.125, "12_5pct"), (0.333, "33_3pct"), (0.07, "7pct")],
)
def test_default_sample_name(data: EvalData, fraction: float, part: str) -> None:
    sample = data.stratified_sample_by_columns(["label", "lang"], fraction)
    assert sample.name == f"demo_sample_{part}_by_label_lang"


def test_null_is_a_stratum_of_its_own() -> None:
    source = EvalData(
        "n", pl.DataFrame({"k": range(8), "g": ["x", None, "x", None, "x", "x", "x", "x"]}), "k"
    )
    sample = source.stratified_sample_by_columns(["g"], 0.5, seed=0)
    values = sample.data.get_column("g").to_list()
    assert values.count(None) == 1
    assert values.count("x") == 3


def test_sample_with_helper_column_names_in_the_data() -> None:
    source = EvalData(
        "h",
        pl.DataFrame({"k": range(6), "__key": list("aabbcc"), "__size": [9] * 6}),
        "k",
    )
    sample = source.stratified_sample_by_columns(["__key"], 0.5, seed=2)
    assert sample.columns == ["k", "__key", "__size"]
    assert sorted(sample.data.get_column("__key").to_list()) == ["a", "b", "c"]
    assert sample.data.get_column("__size").to_list() == [9, 9, 9]


def test_sample_of_a_sample(data: EvalData) -> None:
    first = data.stratified_sample_by_columns(["lang"], 0.6, seed=5)
    second = first.stratified_sample_by_columns(["label"], 0.5, seed=6)
    assert isinstance(second, SampleEvalData)
    assert second.original_size == len(first) == 6
    assert set(second.ids.to_list()) <= set(first.ids.to_list())
    assert second.name == f"{first.name}_sample_50pct_by_label"
    assert second.stratification_columns == ["label"]
    assert second.seed == 6
    positions = [first.ids.to_list().index(i) for i in second.ids.to_list()]
    assert positions == sorted(positions)
    assert set(second.data.get_column("label")) == set(first.data.get_column("label"))


def test_sample_is_immutable(data: EvalData) -> None:
    sample = data.stratified_sample_by_columns(["label"], 0.5)
    with pytest.raises(AttributeError):
        sample.seed = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        sample._seed = 3
    assert sample.seed == 42


@pytest.mark.parametrize("fraction", [0, -0.1, 1.01, 10, float("nan"), True, "0.1", None])
def test_sample_refuses_bad_fraction(data: EvalData, fraction: object) -> None:
    with pytest.raises(SamplingError) as info:
        data.stratified_sample_by_columns(["label"], fraction)  # type: ignore[arg-type]
    assert info.value.field == "sample_percentage"


@pytest.mark.parametrize("seed", [-1, 1.5, True, "42", None])
def test_sample_refuses_bad_seed(data: EvalData, seed: object) -> None:
    with pytest.raises(SamplingError) as info:
        data.stratified_sample_by_columns(["label"], 0.5, seed=seed)  # type: ignore[arg-type]
    assert info.value.field == "seed"


def test_sample_refuses_bad_columns(data: EvalData) -> None:
    with pytest.raises(SamplingError, match="at least one"):
        data.stratified_sample_by_columns([], 0.5)
    with pytest.raises(SamplingError, match="'label'"):
        data.stratified_sample_by_columns(["label", "label"], 0.5)
    with pytest.raises(ColumnError, match="Did you mean 'label'") as info:
        data.stratified_sample_by_columns(["labels"], 0.5)
    assert info.value.column == "labels"


def test_sampling_rounds_half_up_despite_float_error() -> None:
    """10 x 0.35 is 3.4999999999999996 in floating point; the user meant 3.5, so 4 rows."""
    data = EvalData("d", pl.DataFrame({"g": ["a"] * 10 + ["b"] * 10}))
    sample = data.stratified_sample_by_columns(["g"], 0.35, seed=1)
    assert sample.data["g"].to_list().count("a") == 4
    assert sample.data["g"].to_list().count("b") == 4
