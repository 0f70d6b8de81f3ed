"""Importing human annotations: ids keep the data's dtype, labels are checked like a judge's."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.errors import (
    ColumnError,
    IdError,
    MetaEvaluatorError,
    ProjectError,
    TaskError,
    UnsafeNameError,
)
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.results.human_results import HumanAnnotationResults

INT_IDS = [42, 7, 1000, 3]
STR_IDS = ["q-42", "q-7", "q-1000", "q-3"]
COLUMNS = {
    "original_id",
    "annotator_id",
    "run_id",
    "outcome",
    "status",
    "error_message",
    "timestamp",
    "rejection",
    "harm",
    "note",
}


def task() -> EvalTask:
    return EvalTask(
        task_schemas={
            "rejection": ["rejection", "not rejection"],
            "harm": ["low", "high"],
            "note": None,
        },
        prompt_columns=None,
        response_columns=["response"],
    )


def project(root: Path, ids: list[Any]) -> MetaEvaluator:
    evaluator = MetaEvaluator(root)
    frame = pl.DataFrame({"qid": ids, "response": [f"r{i}" for i in range(len(ids))]})
    evaluator.add_data(DataLoader.load_from_dataframe("d", frame, "qid"))
    evaluator.add_eval_task(task())
    return evaluator


def rows(ids: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "original_id": i,
            "rejection": ["rejection", "not rejection"][k % 2],
            "harm": ["low", "high"][k // 2 % 2],
            "note": f"note {k}",
        }
        for k, i in enumerate(ids)
    ]


def write(path: Path, records: list[dict[str, Any]], id_dtype: Any = None) -> Path:
    frame = pl.DataFrame(records)
    if id_dtype is not None:
        frame = frame.with_columns(pl.col("original_id").cast(id_dtype))
    suffix = path.suffix
    if suffix == ".csv":
        frame.write_csv(path)
    elif suffix == ".json":
        path.write_text(json.dumps(records))
    elif suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    else:
        frame.write_parquet(path)
    return path


@pytest.mark.parametrize("suffix", [".csv", ".json", ".jsonl", ".parquet"])
@pytest.mark.parametrize("id_kind", ["int", "str"])
def test_import_keeps_the_data_id_dtype(tmp_path: Path, suffix: str, id_kind: str) -> None:
    ids = INT_IDS if id_kind == "int" else STR_IDS
    evaluator = project(tmp_path / "p", ids)
    records = rows(ids[:3])
    path = write(tmp_path / f"alice{suffix}", records)
    result = evaluator.add_external_annotation_results(path, "alice")
    assert isinstance(result, HumanAnnotationResults)
    assert result.annotator_id == "alice"
    data = result.results_data
    assert set(data.columns) == COLUMNS
    assert data.schema["original_id"] == (pl.Int64 if id_kind == "int" else pl.String)
    assert data["original_id"].to_list() == ids[:3]
    assert data["annotator_id"].to_list() == ["alice"] * 3
    assert data["outcome"].to_list() == ["valid"] * 3
    assert data["status"].to_list() == ["success"] * 3
    assert data["rejection"].to_list() == [r["rejection"] for r in records]
    assert data["note"].to_list() == [r["note"] for r in records]
    assert result.counts() == {"valid": 3, "invalid": 0}
    # on disk and back, ids unchanged in value and dtype
    stored = evaluator.project_dir / "annotations" / result.run_id / "alice.parquet"
    assert pl.read_parquet(stored).schema["original_id"] == data.schema["original_id"]
    again = evaluator.load_all_human_results()["alice"]
    assert again.run_id == result.run_id
    assert again.results_data.equals(data)


def test_parquet_with_int32_ids_takes_the_data_dtype(tmp_path: Path) -> None:
    evaluator = project(tmp_path / "p", INT_IDS)
    path = write(tmp_path / "a.parquet", rows(INT_IDS), id_dtype=pl.Int32)
    data = evaluator.add_external_annotation_results(path, "alice").results_data
    assert data.schema["original_id"] == pl.Int64
    assert data["original_id"].to_list() == INT_IDS


def test_text_ids_that_look_like_integers(tmp_path: Path) -> None:
    evaluator = project(tmp_path / "p", INT_IDS)
    path = write(
        tmp_path / "a.json",
        [{**r, "original_id": str(r["original_id"])} for r in rows(INT_IDS[:2])],
    )
    data = evaluator.add_external_annotation_results(path, "alice").results_data
    assert data["original_id"].to_list() == INT_IDS[:2]
    assert data.schema["original_id"] == pl.Int64
    bad = write(tmp_path / "b.json", [{**rows(INT_IDS[:1])[0], "original_id": "0042"}])
    with pytest.raises(ColumnError, match="original_id"):
        evaluator.add_external_annotation_results(bad, "bob")


def test_another_id_column(tmp_path: Path) -> None:
    evaluator = project(tmp_path / "p", STR_IDS)
    records = [{"item": r.pop("original_id"), **r} for r in rows(STR_IDS[:2])]
    path = write(tmp_path / "a.csv", records)
    data = evaluator.add_external_annotation_results(path, "alice", id_column="item").results_data
    assert data["original_id"].to_list() == STR_IDS[:2]


@pytest.mark.parametrize(("id_kind", "stray"), [("int", 99), ("str", "q-99")])
def test_ids_not_in_the_data(tmp_path: Path, id_kind: str, stray: Any) -> None:
    ids = INT_IDS if id_kind == "int" else STR_IDS
    evaluator = project(tmp_path / "p", ids)
    path = write(tmp_path / "a.csv", rows([ids[0], stray, ids[1]]))
    with pytest.raises(IdError) as info:
        evaluator.add_external_annotation_results(path, "alice")
    assert type(info.value) is IdError
    assert repr(stray) in str(info.value) or str(stray) in str(info.value)
    assert info.value.row_id == stray
    assert "a.csv" in str(info.value)
    assert evaluator.load_all_human_results() == {}


def test_missing_required_task_column(tmp_path: Path) -> None:
    evaluator = project(tmp_path / "p", INT_IDS)
    path = write(
        tmp_path / "a.csv", [{k: v for k, v in r.items() if k != "harm"} for r in rows(INT_IDS)]
    )
    with pytest.raises(TaskError, match="harm") as info:
        evaluator.add_external_annotation_results(path, "alice")
    assert type(info.value) is TaskError
    assert info.value.column == "harm"
    assert evaluator.load_all_human_results() == {}


def test_free_text_task_column_may_be_absent(tmp_path: Path) -> None:
    evaluator = project(tmp_path / "p", INT_IDS)
    path = write(
        tmp_path / "a.csv", [{k: v for k, v in r.items() if k != "note"} for r in rows(INT_IDS)]
    )
    data = evaluator.add_external_annotation_results(path, "alice").results_data
    assert data["outcome"].to_list() == ["valid"] * 4
    assert data["note"].to_list() == [None] * 4


@pytest.mark.parametrize("annotator_id", ["../alice", "a/b", "", ".hidden", "CON", "al ice"])
def test_unsafe_annotator_id(tmp_path: Path, annotator_id: str) -> None:
    evaluator = project(tmp_path / "p", INT_IDS)
    path = write(tmp_path / "a.csv", rows(INT_IDS))
    with pytest.raises(UnsafeNameError) as info:
        evaluator.add_external_annotation_results(path, annotator_id)
    assert type(info.value) is UnsafeNameError
    assert info.value.field == "annotator_id"
    assert not (evaluator.project_dir / "annotations").exists() or not any(
        (evaluator.project_dir / "annotations").rglob("*")
    )


def test_unsafe_run_id(tmp_path: Path) -> None:
    evaluator = project(tmp_path / "p", INT_IDS)
    path = write(tmp_path / "a.csv", rows(INT_IDS))
    with pytest.raises(UnsafeNameError) as info:
        evaluator.add_external_annotation_results(path, "alice", run_id="../run")
    assert info.value.field == "run_id"


def test_invalid_labels_are_kept_as_invalid(tmp_path: Path) -> None:
    evaluator = project(tmp_path / "p", INT_IDS)
    records = rows(INT_IDS)
    records[1]["harm"] = "extreme"  # not allowed
    records[2]["rejection"] = None  # required task missing
    records[3]["rejection"] = "REJECTION"  # allowed after normalising
    path = write(tmp_path / "a.json", records)
    result = evaluator.add_external_annotation_results(path, "alice")
    data = result.results_data
    assert data["outcome"].to_list() == ["valid", "invalid", "invalid", "valid"]
    assert data["status"][1] == "label_not_allowed"
    assert data["status"][2] != "success"
    assert "harm" in data["error_message"][1]
    assert data["harm"][1] is None
    assert data["rejection"][3] == "rejection"
    assert result.counts() == {"valid": 2, "invalid": 2}
    assert result.valid_rows()["original_id"].to_list() == [INT_IDS[0], INT_IDS[3]]
    assert len(result) == 4
    assert "alice" in repr(result)


def test_latest_import_wins(tmp_path: Path) -> None:
    evaluator = project(tmp_path / "p", INT_IDS)
    first = write(tmp_path / "first.csv", rows(INT_IDS[:2]))
    second = write(tmp_path / "second.csv", rows(INT_IDS[1:]))
    # run ids that sort the other way round than time: the time decides, not the name
    evaluator.add_external_annotation_results(first, "alice", run_id="run_zzz")
    evaluator.add_external_annotation_results(write(tmp_path / "bob.csv", rows(INT_IDS)), "bob")
    time.sleep(0.01)
    latest = evaluator.add_external_annotation_results(second, "alice", run_id="run_aaa")
    found = evaluator.load_all_human_results()
    assert list(found) == ["alice", "bob"]
    assert found["alice"].run_id == "run_aaa" == latest.run_id
    assert found["alice"].results_data["original_id"].to_list() == INT_IDS[1:]
    evaluator.save_state()
    reloaded = MetaEvaluator(evaluator.project_dir, load=True)
    assert reloaded.load_all_human_results()["alice"].run_id == "run_aaa"


def test_annotations_survive_reloading_the_project(tmp_path: Path) -> None:
    evaluator = project(tmp_path / "p", INT_IDS)
    evaluator.add_external_annotation_results(write(tmp_path / "a.parquet", rows(INT_IDS)), "alice")
    evaluator.save_state()
    loaded = MetaEvaluator(tmp_path / "p", load=True)
    found = loaded.load_all_human_results()
    assert list(found) == ["alice"]
    assert found["alice"].results_data.schema["original_id"] == pl.Int64


def test_no_annotations_yet(tmp_path: Path) -> None:
    assert project(tmp_path / "p", INT_IDS).load_all_human_results() == {}


@pytest.mark.parametrize("missing", ["data", "task", "both"])
def test_importing_before_data_and_task(tmp_path: Path, missing: str) -> None:
    evaluator = MetaEvaluator(tmp_path / "p")
    if missing == "task":
        frame = pl.DataFrame({"qid": INT_IDS, "response": ["r"] * 4})
        evaluator.add_data(DataLoader.load_from_dataframe("d", frame, "qid"))
    if missing == "data":
        evaluator.add_eval_task(task())
    path = write(tmp_path / "a.csv", rows(INT_IDS))
    with pytest.raises(ProjectError) as info:
        evaluator.add_external_annotation_results(path, "alice")
    assert type(info.value) is ProjectError
    assert isinstance(info.value, MetaEvaluatorError)
    assert "annotations" in str(info.value)
    assert not (tmp_path / "p" / "annotations").exists() or not any(
        (tmp_path / "p" / "annotations").rglob("*")
    )


def test_repeated_and_null_ids(tmp_path: Path) -> None:
    evaluator = project(tmp_path / "p", INT_IDS)
    twice = write(tmp_path / "twice.csv", rows([INT_IDS[0], INT_IDS[0], INT_IDS[1]]))
    with pytest.raises(IdError, match="repeats") as info:
        evaluator.add_external_annotation_results(twice, "alice")
    assert "42" in str(info.value)
    null = tmp_path / "null.csv"
    null.write_text("original_id,rejection,harm\n42,rejection,low\n,rejection,low\n")
    with pytest.raises(IdError, match="null"):
        evaluator.add_external_annotation_results(null, "alice")
    assert evaluator.load_all_human_results() == {}


def test_labels_are_normalised_like_a_judges(tmp_path: Path) -> None:
    evaluator = project(tmp_path / "p", INT_IDS)
    path = tmp_path / "a.csv"
    path.write_text("original_id,rejection,harm,note\n42,Rejection ,  HIGH,  kept as text \n")
    data = evaluator.add_external_annotation_results(path, "alice").results_data
    assert data["outcome"].to_list() == ["valid"]
    assert data["rejection"].to_list() == ["rejection"]
    assert data["harm"].to_list() == ["high"]
    assert data["note"][0].strip() == "kept as text"


@pytest.mark.parametrize("id_dtype", [pl.Int64, pl.String])
def test_page_labels_merge_into_the_imported_set_row_by_row(id_dtype: Any) -> None:
    """For each id the later label counts (ties to the page); imported order, then page-only."""
    from meta_evaluator.results.human_results import merge_web_labels

    def table(rows: list[tuple[Any, str | None, str]], run: str) -> pl.DataFrame:
        return pl.DataFrame(
            {
                "original_id": [r[0] for r in rows],
                "run_id": [run] * len(rows),
                "timestamp": [r[1] for r in rows],
                "label": [r[2] for r in rows],
            },
            schema={"original_id": id_dtype, "run_id": pl.String, "timestamp": pl.String,
                    "label": pl.String},
        )  # fmt: skip

    cast = int if id_dtype == pl.Int64 else str
    imported = table(
        [(cast(3), "2026-01-02", "i3"), (cast(1), "2026-01-02", "i1"),
         (cast(2), "2026-01-02", "i2"), (cast(4), None, "i4")],
        "import_1",
    )  # fmt: skip
    web = table(
        [(cast(9), "2026-01-01", "w9"), (cast(2), "2026-01-03", "w2"),
         (cast(1), "2026-01-01", "w1"), (cast(3), "2026-01-02", "w3"),
         (cast(4), "2026-01-01", "w4")],
        "web",
    )  # fmt: skip
    merged = merge_web_labels(imported, web)
    assert merged.schema == imported.schema
    # 3: same time, the page wins; 1: the import is newer; 2: the page is newer; 4: an import
    # without a time is older than any page label; 9: only the page has it, last.
    assert merged.rows() == [
        (cast(3), "web", "2026-01-02", "w3"),
        (cast(1), "import_1", "2026-01-02", "i1"),
        (cast(2), "web", "2026-01-03", "w2"),
        (cast(4), "web", "2026-01-01", "w4"),
        (cast(9), "web", "2026-01-01", "w9"),
    ]
    assert merge_web_labels(imported, web.clear()).equals(imported)


def _annotator_table(ids: list[Any], run: str, labels: dict[str, list[Any]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "original_id": ids,
            "run_id": [run] * len(ids),
            "timestamp": ["2026-01-02"] * len(ids),
            **labels,
        }
    )


def test_a_task_added_after_the_import_is_null_in_the_imported_rows() -> None:
    """The import predates task `harm`: its rows hold no `harm` label; the page's rows do."""
    from meta_evaluator.results.human_results import merge_web_labels

    imported = _annotator_table([1, 2], "import_1", {"rejection": ["rejection", "rejection"]})
    web = _annotator_table(
        [2, 3], "web", {"rejection": ["not rejection", "rejection"], "harm": ["low", "high"]}
    )
    merged = merge_web_labels(imported, web)
    assert merged.columns == ["original_id", "run_id", "timestamp", "rejection", "harm"]
    assert merged.rows() == [
        (1, "import_1", "2026-01-02", "rejection", None),
        (2, "web", "2026-01-02", "not rejection", "low"),
        (3, "web", "2026-01-02", "rejection", "high"),
    ]
    # and the other way round: page labels saved before the task gained `harm`
    merged = merge_web_labels(web, imported)
    assert merged.filter(pl.col("original_id") == 1)["harm"].to_list() == [None]
    assert merged.filter(pl.col("original_id") == 3)["harm"].to_list() == ["high"]


@pytest.mark.parametrize(("imported_ids", "web_ids"), [([1, 2], ["1", "2"]), (["q1"], [1])])
def test_an_id_dtype_change_between_import_and_page_is_a_column_error(
    tmp_path: Path, imported_ids: list[Any], web_ids: list[Any]
) -> None:
    from meta_evaluator.results.human_results import merge_web_labels

    imported = _annotator_table(imported_ids, "import_1", {})
    web = _annotator_table(web_ids, "web", {})
    first, second = tmp_path / "import_1" / "ana.parquet", tmp_path / "web" / "ana.parquet"
    with pytest.raises(ColumnError) as caught:
        merge_web_labels(imported, web, imported_file=first, web_file=second)
    error = caught.value
    assert error.column == "original_id" and error.path == second
    assert str(first) in error.message and str(second) in error.message
    assert str(web.schema["original_id"]) in error.message
    assert str(imported.schema["original_id"]) in error.message


def test_a_page_label_and_an_import_whose_ids_changed_dtype_in_a_project(tmp_path: Path) -> None:
    """Through the project: the data's ids became strings between the page and the import."""
    from meta_evaluator.results.human_results import latest_annotations, save_annotations

    annotations = tmp_path / "annotations"
    valid = {"outcome": ["valid"]}
    save_annotations(
        annotations, "web", "ana", _annotator_table([1], "web", valid), source="annotation page"
    )
    save_annotations(annotations, "import_1", "ana", _annotator_table(["1"], "import_1", valid),
                     source="external")  # fmt: skip
    with pytest.raises(ColumnError, match="the ids are"):
        latest_annotations(annotations)


def test_a_table_that_is_not_parquet_is_a_storage_error(tmp_path: Path) -> None:
    from meta_evaluator.errors import StorageError
    from meta_evaluator.results.human_results import read_table

    broken = tmp_path / "ana.parquet"
    broken.write_bytes(b"PAR1 half a file")
    with pytest.raises(StorageError, match="not a readable Parquet table") as caught:
        read_table(broken)
    assert caught.value.path == broken


def test_save_annotations_checks_its_writes_against_the_project_folder(tmp_path: Path) -> None:
    """The project is the folder holding `annotations/`, not a guess from `main_state.json`.

    Before the project's first save no `main_state.json` marks it; a run folder linked out of
    the project is refused all the same, and nothing is written at the link's target.
    """
    from meta_evaluator.errors import OutsideProjectError
    from meta_evaluator.results.human_results import save_annotations

    project, outside = tmp_path / "project", tmp_path / "outside"
    outside.mkdir()
    (project / "annotations").mkdir(parents=True)
    (project / "annotations" / "import_1").symlink_to(outside, target_is_directory=True)
    table = _annotator_table([1], "import_1", {"outcome": ["valid"]})
    with pytest.raises(OutsideProjectError, match="outside the project") as caught:
        save_annotations(project / "annotations", "import_1", "ana", table, source="external")
    assert caught.value.path == project / "annotations" / "import_1" / "ana.parquet"
    assert list(outside.iterdir()) == []
