"""Runs as meta-evaluator 0.3.3 scripts ask for them: `judge_ids="one"`, `skip_duplicates`,
`save_results`, `results_format`, the synchronous `run_judges`, and `EvalTask(skip_function=)`.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.errors import (
    JudgeConfigError,
    MetaEvaluatorDeprecationWarning,
    MetaEvaluatorWarning,
    TaskError,
)
from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from tests.conftest import chats, rejection_project
from tests.judge.test_runner import BASE, Server

ROWS = 6
PROMPT = "Did {response} refuse {prompt}?"


def project(tmp_path: Path) -> tuple[MetaEvaluator, Server]:
    evaluator = rejection_project(tmp_path / "p", chats(ROWS))
    evaluator.add_judge("j", "openai", "m", PROMPT, base_url=BASE)
    return evaluator, Server(lambda request, n: None)


def test_one_judge_id_as_text_is_one_judge(tmp_path: Path) -> None:
    evaluator = rejection_project(tmp_path / "p", chats(ROWS))
    for judge_id in ("gpt", "g", "p", "t"):
        evaluator.add_judge(judge_id, "mock", "m", PROMPT)
    assert list(evaluator.run_judges_async(judge_ids="gpt")) == ["gpt"]


def test_skip_duplicates_true_returns_a_finished_judge_without_a_call(tmp_path: Path) -> None:
    evaluator, server = project(tmp_path)
    first = evaluator.run_judges_async(transport=httpx.MockTransport(server), cache=False)
    assert server.total == ROWS
    said = (
        r"skip_duplicates=\.\.\.\) is an argument of meta-evaluator 0\.3\.3, kept for "
        r"compatibility and to be removed in meta-evaluator 1\.0; use resume="
    )
    with pytest.warns(MetaEvaluatorDeprecationWarning, match=said):
        again = evaluator.run_judges_async(
            skip_duplicates=True, transport=httpx.MockTransport(server), cache=False
        )
    assert server.total == ROWS  # no call
    assert again["j"].run_id == first["j"].run_id
    assert again["j"].results_data.equals(first["j"].results_data)


def test_skip_duplicates_false_asks_every_row_again(tmp_path: Path) -> None:
    evaluator, server = project(tmp_path)
    first = evaluator.run_judges_async(transport=httpx.MockTransport(server), cache=False)
    with pytest.warns(MetaEvaluatorDeprecationWarning):
        again = evaluator.run_judges_async(
            skip_duplicates=False, transport=httpx.MockTransport(server), cache=False
        )
    assert server.total == 2 * ROWS
    assert again["j"].run_id != first["j"].run_id


def test_skip_duplicates_and_resume_must_agree(tmp_path: Path) -> None:
    evaluator, _ = project(tmp_path)
    with pytest.raises(JudgeConfigError, match="skip_duplicates=True and resume=False disagree"):
        evaluator.run_judges_async(skip_duplicates=True, resume=False)
    with pytest.raises(JudgeConfigError) as caught:
        evaluator.run_judges_async(save_results="no", results_format="xlsx")  # type: ignore[call-arg]
    assert [e["msg"].split(" must")[0] for e in caught.value.errors] == [
        "save_results", "results_format",
    ]  # fmt: skip


def test_save_results_false_keeps_nothing_in_the_project(tmp_path: Path) -> None:
    evaluator, server = project(tmp_path)
    results = evaluator.run_judges_async(
        save_results=False, transport=httpx.MockTransport(server), cache=False
    )
    assert results["j"].counts()["valid"] == ROWS
    assert not evaluator.paths.results_dir.exists()
    assert [p.name for p in evaluator.project_dir.iterdir()] == []  # no scratch folder left
    assert evaluator.load_all_judge_results() == {}


@pytest.mark.parametrize("fmt", ["json", "csv", "parquet"])
def test_results_format_writes_a_copy_with_033s_vectors(tmp_path: Path, fmt: str) -> None:
    evaluator = MetaEvaluator(tmp_path / "p")
    evaluator.add_data(DataLoader.load_from_dataframe("chats", chats(ROWS), "qid"))
    harms = ["violence", "fraud", "hate"]
    evaluator.add_eval_task(
        EvalTask(
            {
                "rejection": ["rejection", "not rejection"],
                "harms": MultiLabelSchema(outcomes=harms),
            },
            ["prompt"],
            ["response"],
        )
    )
    evaluator.add_judge("j", "mock", "m", PROMPT)
    (result,) = evaluator.run_judges_async(results_format=fmt).values()
    path = evaluator.paths.results_dir / result.run_id / f"j.results.{fmt}"
    if fmt == "json":
        rows = json.loads(path.read_text())
        vectors = [r["harms"] for r in rows]
        ids = [r["original_id"] for r in rows]
    elif fmt == "csv":
        written = pl.read_csv(path)
        vectors = [json.loads(v) for v in written["harms"]]
        ids = written["original_id"].to_list()
    else:
        written = pl.read_parquet(path)
        vectors, ids = written["harms"].to_list(), written["original_id"].to_list()
    chosen = result.results_data["harms"].to_list()
    assert ids == result.results_data["original_id"].to_list()
    assert vectors == [[h if h in c else "FALSE" for h in harms] for c in chosen]
    assert any("FALSE" in v for v in vectors)


def test_a_plan_runs_as_made_so_033s_file_options_go_without_one(tmp_path: Path) -> None:
    evaluator = rejection_project(tmp_path / "p", chats(ROWS))
    evaluator.add_judge("j", "mock", "m", PROMPT)
    plan = evaluator.plan_run()
    for options in ({"save_results": False}, {"results_format": "csv"}):
        with pytest.raises(JudgeConfigError, match="a plan is executed as it was made"):
            evaluator.run_judges_async(plan=plan, **options)  # type: ignore[arg-type]
    assert not evaluator.paths.results_dir.exists()


def test_run_judges_is_the_synchronous_run(tmp_path: Path) -> None:
    evaluator = rejection_project(tmp_path / "p", chats(ROWS))
    evaluator.add_judge("j", "mock", "m", PROMPT)
    results = evaluator.run_judges(judge_ids="j", run_id="sync")
    assert results["j"].run_id == "sync" and results["j"].counts()["valid"] == ROWS


# ----- EvalTask(skip_function=...) -----------------------------------------------------------


def skip_even(row: dict[str, object]) -> bool:
    return int(row["qid"]) % 2 == 0  # type: ignore[call-overload]


def test_skip_function_skips_rows_without_a_call(tmp_path: Path) -> None:
    evaluator = MetaEvaluator(tmp_path / "p")
    evaluator.add_data(DataLoader.load_from_dataframe("chats", chats(ROWS), "qid"))
    task = EvalTask({"rejection": ["rejection", "not rejection"]}, ["prompt"], ["response"],
                    skip_function=skip_even)  # fmt: skip
    evaluator.add_eval_task(task)
    evaluator.add_judge("j", "openai", "m", PROMPT, base_url=BASE)
    server = Server(lambda request, n: None)
    frame = evaluator.run_judges_async(transport=httpx.MockTransport(server))["j"].results_data
    assert server.total == ROWS // 2  # the odd rows only
    skipped = frame.filter(pl.col("outcome") == "skipped")
    assert skipped["original_id"].to_list() == [0, 2, 4]
    assert (skipped["status"] == "skipped").all() and (skipped["attempts"] == 0).all()
    assert skipped["rejection"].is_null().all()
    # not saved, and said so; set again after loading
    with pytest.warns(MetaEvaluatorWarning, match="skip_function is not saved"):
        evaluator.save_state()
    loaded = MetaEvaluator(tmp_path / "p", load=True)
    assert loaded.eval_task is not None and loaded.eval_task.skip_function is None
    assert loaded.eval_task == task  # the function is no part of what the task is
    # a run without it asks the rows it skipped (and reuses the others)
    again = loaded.run_judges_async(transport=httpx.MockTransport(server))["j"].results_data
    assert server.total == ROWS and (again["outcome"] == "valid").all()
    loaded.eval_task.skip_function = lambda row: True
    assert loaded.eval_task.skip_function({}) is True


def test_a_failing_skip_function_names_the_row(tmp_path: Path) -> None:
    evaluator = rejection_project(tmp_path / "p", chats(ROWS))
    evaluator.add_judge("j", "mock", "m", PROMPT)
    assert evaluator.eval_task is not None
    evaluator.eval_task.skip_function = lambda row: row["missing"]
    with pytest.raises(TaskError, match=r"raised KeyError \('missing'\) on the row with id 0"):
        evaluator.run_judges_async()
