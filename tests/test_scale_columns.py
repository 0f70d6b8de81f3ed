"""A million rows, end to end (issue 21): `report` and `status` read only the columns they use.

The report's tables come out the same whether the project is read column by column from its
folders or through `load_all_judge_results`; a sharded run's rows are put in data order by a
join, with the order the former Python sort gave.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator._cli_status import _outcome_counts
from meta_evaluator.examples import create_example_project
from meta_evaluator.judge.run_files import _merge_shards
from meta_evaluator.reports import write_report
from meta_evaluator.reports._tables import RESULT_COLUMNS
from meta_evaluator.results import judge_results


def _sorted_in_python(tables: list[pl.DataFrame], ids: pl.Series | None) -> pl.DataFrame:
    """`_merge_shards` as it was: positions in a dict, rows ordered by `sorted`."""
    merged = pl.concat(tables, how="diagonal_relaxed").unique(
        subset="original_id", keep="first", maintain_order=True
    )
    if ids is None:
        return merged
    position = {value: index for index, value in enumerate(ids.to_list())}
    last = len(position)
    found = merged["original_id"].to_list()
    order = sorted(range(merged.height), key=lambda row: (position.get(found[row], last), row))
    return merged[order]


def _shards(ids: list[Any]) -> list[pl.DataFrame]:
    """Three shards: the second repeats two ids of the first (the first's rows win) and adds a
    column; the third holds ids the data lacks."""
    a, b, c, d, e, f, g, h = ids
    return [
        pl.DataFrame({"original_id": [c, a, f], "outcome": ["valid", "error", "valid"]}),
        pl.DataFrame(
            {
                "original_id": [a, e, c, b],
                "outcome": ["invalid", "valid", "invalid", "valid"],
                "batch_id": ["x", None, "y", "z"],
            }
        ),
        pl.DataFrame({"original_id": [h, d, g], "outcome": ["valid", "invalid", "error"]}),
    ]


@pytest.mark.parametrize(
    "values",
    [
        [5, 3, 10, 1, 7, 2, 100, 42],
        ["q5", "q3", "q10", "q1", "q7", "q2", "extra", "also"],
    ],
    ids=["integer ids", "string ids"],
)
@pytest.mark.parametrize(
    "data",
    [None, [1, 0, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [4, 1]],
    ids=["no data order", "data order", "reversed", "data of two rows"],
)
def test_merged_shards_come_in_the_order_the_python_sort_gave(
    values: list[Any], data: list[int] | None
) -> None:
    tables = _shards(values)
    ids = None if data is None else pl.Series("qid", [values[i] for i in data])
    merged = _merge_shards(tables, ids)
    assert merged.equals(_sorted_in_python(tables, ids))
    assert merged["original_id"].n_unique() == merged.height == 8


def test_merged_shards_match_data_ids_of_another_integer_width() -> None:
    tables = _shards([5, 3, 10, 1, 7, 2, 100, 42])
    ids = pl.Series("qid", [2, 7, 1, 10, 3, 5], dtype=pl.Int32)
    merged = _merge_shards(tables, ids)
    assert merged.equals(_sorted_in_python(tables, ids))
    assert merged["original_id"].to_list()[:6] == [2, 7, 1, 10, 3, 5]


def test_text_data_ids_never_match_integer_result_ids() -> None:
    """As a dict lookup: "5" is not 5, so every row keeps its shard order."""
    tables = _shards([5, 3, 10, 1, 7, 2, 100, 42])
    ids = pl.Series("qid", ["2", "7", "1", "10", "3", "5"])
    merged = _merge_shards(tables, ids)
    assert merged.equals(_sorted_in_python(tables, ids))
    assert merged.equals(_merge_shards(tables, None))


def test_categorical_result_ids_match_text_data_ids() -> None:
    tables = [
        t.with_columns(pl.col("original_id").cast(pl.Categorical))
        for t in _shards(["q5", "q3", "q10", "q1", "q7", "q2", "extra", "also"])
    ]
    ids = pl.Series("qid", ["q2", "q7", "q1", "q10", "q3", "q5"])
    merged = _merge_shards(tables, ids)
    assert merged.equals(_sorted_in_python(tables, ids))
    assert merged["original_id"].dtype == pl.Categorical
    assert merged["original_id"].to_list()[:6] == ids.to_list()


def test_a_place_column_name_taken_by_a_task_is_not_clobbered() -> None:
    tables = [
        pl.DataFrame({"original_id": [2, 1], "__place": ["b", "a"]}),
        pl.DataFrame({"original_id": [3], "__place": ["c"]}),
    ]
    merged = _merge_shards(tables, pl.Series([1, 2, 3]))
    assert merged.columns == ["original_id", "__place"]
    assert merged["__place"].to_list() == ["a", "b", "c"]


def test_an_unfinished_runs_counts_take_the_last_line_of_each_id() -> None:
    records: list[dict[str, Any]] = [
        {"original_id": 1, "outcome": "error"},
        {"original_id": 2, "outcome": "valid"},
        {"original_id": 1, "outcome": "valid"},
        {"original_id": 3},
        {"original_id": 4, "outcome": "invalid"},
        {"original_id": 2, "outcome": "invalid"},
    ]
    assert _outcome_counts(records) == {"valid": 1, "invalid": 2, "None": 1}
    assert _outcome_counts([]) == {}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> MetaEvaluator:
    """The pairwise example, run with its mock judge."""
    folder = tmp_path_factory.mktemp("scale") / "pairwise"
    evaluator = create_example_project("pairwise", folder)
    evaluator.run_judges_async()
    return evaluator


class _Folders:
    def __init__(self, evaluator: MetaEvaluator) -> None:
        self.reports_dir = evaluator.paths.reports_dir
        self.scores_dir = evaluator.paths.scores_dir


class _OnlyTheProtocol:
    """A `ReportedProject` whose `paths` has no results folders: read through its methods."""

    def __init__(self, evaluator: MetaEvaluator) -> None:
        self._evaluator = evaluator
        self.project_dir = evaluator.project_dir
        self.paths = _Folders(evaluator)
        self.data = evaluator.data
        self.eval_task = evaluator.eval_task
        self.judge_registry = evaluator.judge_registry
        self.asked = 0

    def load_all_judge_results(self) -> Mapping[str, judge_results.JudgeResults]:
        self.asked += 1
        return self._evaluator.load_all_judge_results()

    def load_all_human_results(self) -> Mapping[str, Any]:
        return self._evaluator.load_all_human_results()


def _without_time(text: str) -> str:
    return re.sub(r"Generated \d{4}-\d\d-\d\d \d\d:\d\d UTC", "Generated", text)


def test_the_report_is_the_same_read_by_columns_or_through_the_methods(
    project: MetaEvaluator, tmp_path: Path
) -> None:
    other = _OnlyTheProtocol(project)
    by_columns = write_report(project, tmp_path / "columns")
    by_methods = write_report(other, tmp_path / "methods")
    assert other.asked == 1
    for name in ("judges.csv", "judges.md", "scores.csv", "scores.md"):
        assert (by_columns.parent / name).read_bytes() == (by_methods.parent / name).read_bytes()
    assert _without_time(by_columns.read_text(encoding="utf-8")) == _without_time(
        by_methods.read_text(encoding="utf-8")
    )


def test_the_report_reads_only_the_columns_its_tables_use(
    project: MetaEvaluator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[tuple[pl.Series | None, pl.DataFrame]] = []
    latest = judge_results.latest_results

    def spy(*args: Any, **kwargs: Any) -> dict[str, judge_results.JudgeResults]:
        found = latest(*args, **kwargs)
        read.extend((kwargs.get("only"), r.results_data) for r in found.values())
        return found

    monkeypatch.setattr(judge_results, "latest_results", spy)
    write_report(project, tmp_path)
    assert read, "the example has judge results"
    assert project.eval_task is not None
    labels = set(project.eval_task.task_names)  # the disagreement section's confusion matrices
    answers = 0
    for only, frame in read:
        if only is None:
            assert set(frame.columns) <= set(RESULT_COLUMNS) | labels
            assert "llm_raw_response_content" not in frame.columns
        else:  # the raw answers of the rows the disagreement section lists, those rows alone
            answers += 1
            assert set(frame.columns) == {"original_id", "llm_raw_response_content"}
            assert set(frame["original_id"].to_list()) <= set(only.to_list())
    assert answers, "the section shows the raw answers of the rows it lists"
