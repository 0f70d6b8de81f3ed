"""The facade as meta-evaluator 0.3.3 scripts call it: imports with 0.3.3's keywords,
JudgeResults' 0.3.3 attributes, `load_state`, `launch_annotator(use_ngrok=)`,
`save_state(include_data=False, include_task=False, data_format=...)` and
`DataLoader.load_from_dataframe` frame first.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.errors import DataError, MetaEvaluatorWarning, ProjectError
from tests.conftest import chats, rejection_project

ROWS = 6
LABELS = ["rejection", "not rejection", "rejection", "maybe", "not rejection", None]


def labels_file(tmp_path: Path, name: str = "labels.csv") -> Path:
    path = tmp_path / name
    pl.DataFrame({"original_id": range(ROWS), "rejection": LABELS}).write_csv(path)
    return path


# ----- imports with 0.3.3's keywords ---------------------------------------------------------


def test_external_judge_results_with_033s_keywords(tmp_path: Path) -> None:
    evaluator = rejection_project(tmp_path / "p", chats(ROWS))
    result = evaluator.add_external_judge_results(
        file_path=str(labels_file(tmp_path)),
        judge_id="external_judge",
        llm_client="groq",
        model_used="llama-3.1-8b-instant",
        run_id="external_run_1",
        data_format="csv",
    )
    assert (result.run_id, result.llm_client, result.model_used) == (
        "external_run_1", "groq", "llama-3.1-8b-instant",
    )  # fmt: skip
    loaded = MetaEvaluator(tmp_path / "p", load=False)  # not saved: a new object, same folder
    loaded.add_data(DataLoader.load_from_dataframe("chats", chats(ROWS), "qid"))
    again = loaded.load_all_judge_results()["external_judge"]
    assert (again.llm_client, again.model_used) == ("groq", "llama-3.1-8b-instant")


def test_a_registered_judge_has_its_client_and_model(tmp_path: Path) -> None:
    evaluator = rejection_project(tmp_path / "p", chats(ROWS))
    evaluator.add_judge("j", "mock", "mock-1", "Judge {response}")
    ran = evaluator.run_judges_async()["j"]
    loaded = evaluator.load_all_judge_results()["j"]
    for result in (ran, loaded):
        assert (result.llm_client, result.model_used) == ("mock", "mock-1")


def test_given_counts_are_checked_against_the_rows(tmp_path: Path) -> None:
    evaluator = rejection_project(tmp_path / "p", chats(ROWS))
    path = labels_file(tmp_path)
    with pytest.warns(MetaEvaluatorWarning, match=r"succeeded_count=6 \(the rows give 4\)"):
        result = evaluator.add_external_judge_results(
            file_path=path, judge_id="a", succeeded_count=6, total_count=6
        )
    assert (result.succeeded_count, result.parsing_error_count) == (4, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # counts that agree say nothing
        evaluator.add_external_annotation_results(
            file_path=path, annotator_id="h", succeeded_count=4, error_count=2, run_id="human_1"
        )


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"file_path": "x.csv", "path": "y.csv"}, "give the file once"),
        ({"judge_id": "j"}, "give the file once"),
        ({"file_path": "x.csv"}, "judge_id is missing"),
        ({"file_path": "x.csv", "judge_id": "j", "sucess_count": 3},
         "unknown keyword 'sucess_count'; did you mean 'success_count'? ".replace(
             "success_count", "succeeded_count")),
        ({"file_path": "x.csv", "judge_id": "j", "data_format": "xlsx"}, "data_format must be"),
        ({"file_path": "x.csv", "judge_id": "j", "llm_error_count": -1}, "a whole number >= 0"),
    ],
)  # fmt: skip
def test_bad_import_arguments_say_what_is_wrong(
    tmp_path: Path, options: dict[str, object], says: str
) -> None:
    evaluator = rejection_project(tmp_path / "p", chats(ROWS))
    with pytest.raises(DataError) as caught:
        evaluator.add_external_judge_results(**options)  # type: ignore[arg-type]
    assert says in caught.value.message


def test_data_format_reads_a_file_whatever_its_extension(tmp_path: Path) -> None:
    evaluator = rejection_project(tmp_path / "p", chats(ROWS))
    path = labels_file(tmp_path, "labels.txt")
    with pytest.raises(Exception, match="unknown data file extension"):
        evaluator.add_external_annotation_results(path, "h")
    result = evaluator.add_external_annotation_results(file_path=path, annotator_id="h",
                                                       data_format="csv")  # fmt: skip
    assert (result.total_count, result.succeeded_count, result.error_count) == (6, 4, 2)
    assert result.get_successful_results().height == 4 and result.data.height == 6


# ----- JudgeResults' 0.3.3 attributes --------------------------------------------------------


def test_judge_results_counts_as_033_named_them(tmp_path: Path) -> None:
    evaluator = rejection_project(tmp_path / "p", chats(60))
    evaluator.add_judge("j", "mock", "m", "Judge {response}", mock={"invalid_rate": 0.2,
                                                                    "error_rate": 0.2})  # fmt: skip
    assert evaluator.eval_task is not None
    evaluator.eval_task.skip_function = lambda row: row["qid"] < 5
    result = evaluator.run_judges_async(max_retries=0, backoff_base=0.0)["j"]
    frame = result.results_data
    outcome, status = frame["outcome"], frame["status"]
    assert result.total_count == 60
    assert result.succeeded_count == (outcome == "valid").sum() > 0
    assert result.skipped_count == (outcome == "skipped").sum() == 5
    assert result.llm_error_count == (outcome == "error").sum() > 0
    assert result.parsing_error_count == ((outcome == "invalid") & (status != "partial")).sum() > 0
    assert result.partial_count == (status == "partial").sum()
    assert result.other_error_count == 0
    assert result.get_successful_results().equals(frame.filter(outcome == "valid"))
    assert result.data.equals(frame)


# ----- load_state, launch_annotator, save_state, load_from_dataframe ------------------------


def saved_project(tmp_path: Path) -> MetaEvaluator:
    evaluator = rejection_project(tmp_path / "p", chats(ROWS))
    evaluator.save_state(data_format="csv")
    return evaluator


def test_load_state_is_the_classmethod_033_had(tmp_path: Path) -> None:
    saved_project(tmp_path)
    loaded = MetaEvaluator.load_state(project_dir=str(tmp_path / "p"))
    assert loaded.data is not None and loaded.eval_task is not None
    bare = MetaEvaluator.load_state(str(tmp_path / "p"), load_data=False, load_task=False)
    assert bare.data is None and bare.eval_task is None
    bare.save_state(include_data=False, include_task=False)  # keeps what the folder holds
    again = MetaEvaluator(tmp_path / "p", load=True)
    assert again.data is not None and again.eval_task is not None
    with pytest.raises(ProjectError, match="no such folder"):
        MetaEvaluator.load_state(str(tmp_path / "nothing"))


def test_save_state_as_033_called_it(tmp_path: Path) -> None:
    evaluator = saved_project(tmp_path)
    before = {p.name: p.read_bytes() for p in evaluator.paths.data_dir.iterdir()}
    evaluator.save_state(include_data=False, include_task=False, data_format="csv")
    assert {p.name: p.read_bytes() for p in evaluator.paths.data_dir.iterdir()} == before
    loaded = MetaEvaluator(tmp_path / "p", load=True)
    assert loaded.data is not None and loaded.data.data.equals(evaluator.data.data)  # type: ignore[union-attr]


def test_launch_annotator_refuses_ngrok_and_says_what_instead(
    tmp_path: Path, occupied: int
) -> None:
    evaluator = saved_project(tmp_path)
    for call in (
        lambda: evaluator.launch_annotator(port=8000, use_ngrok=True),
        lambda: evaluator.launch_annotator(8000, True),  # type: ignore[arg-type]  # 0.3.3's order
        lambda: evaluator.launch_annotator(8000, traffic_policy_file="policy.yml"),
    ):
        with pytest.raises(ProjectError) as caught:
            call()
        assert caught.value.field == "use_ngrok"
        assert "host='0.0.0.0' and a token" in caught.value.message
    with pytest.raises(ProjectError) as caught:  # use_ngrok=False goes on to serve
        evaluator.launch_annotator(port=occupied, use_ngrok=False)
    assert caught.value.field == "port"


def test_load_from_dataframe_frame_first_as_033_took_it() -> None:
    frame = pl.DataFrame({"qid": [1, 2], "text": ["a", "b"]})
    for data in (
        DataLoader.load_from_dataframe(frame, name="bench", id_column="qid"),
        DataLoader.load_from_dataframe(frame, "bench", "qid"),
        DataLoader.load_from_dataframe(id_column="qid", name="bench", data=frame),
        DataLoader.load_from_dataframe("bench", frame, "qid"),  # ours
        DataLoader.load_from_dataframe(name="bench", df=frame, id_column="qid"),
    ):
        assert (data.name, data.id_column, data.ids.to_list()) == ("bench", "qid", [1, 2])
    with pytest.raises(DataError, match="needs a name"):
        DataLoader.load_from_dataframe(frame)
    with pytest.raises(DataError, match="the frame twice"):
        DataLoader.load_from_dataframe(frame, name="x", data=frame)
