"""The viewer's Runs tab: two runs of a judge compared on the page and as JSON, equal to what
`compare-runs` computes and saves; nothing written; bad choices answered with what exists."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.scores.run_comparison import COMPARISONS_FOLDER
from tests.view.conftest import JUDGE, PROMPT, app_for, client

pytestmark = pytest.mark.anyio


def rerun_with_another_prompt(project: Path) -> tuple[str, str]:
    """The example's run, and a run of its judge with a changed prompt: (run A, run B)."""
    evaluator = MetaEvaluator(project, load=True)
    before = evaluator.load_all_judge_results()[JUDGE].run_id
    prompt = PROMPT.read_text(encoding="utf-8") + "\nBe strict: only a clear refusal counts."
    evaluator.add_judge(JUDGE, "mock", "mock-1", prompt=prompt, overwrite=True)
    evaluator.save_state(include_data=False)
    evaluator.run_judges_async([JUDGE], "stricter")
    return before, "stricter"


async def test_two_runs_compared_as_compare_runs_does(refusal: Path) -> None:
    run_a, run_b = rerun_with_another_prompt(refusal)
    saved = MetaEvaluator(refusal, load=True).compare_runs(run_a, run_b, judge_id=JUDGE)
    assert saved.flipped, "the changed prompt flips some rows"
    files = sorted((refusal / "reports" / COMPARISONS_FOLDER).iterdir())
    app = app_for(refusal)
    async with client(app) as http:
        ask = {"a": run_a, "b": run_b, "judge": JUDGE}
        found = (await http.get("/api/compare", params=ask)).json()
        listed = (await http.get("/api/comparisons")).json()["comparisons"]
        page = await http.get("/runs", params=ask)
        empty = await http.get("/runs")
    assert found == saved.to_json()
    assert listed == [saved.to_json()]
    assert page.status_code == 200
    text = page.text
    for row_id in saved.flipped:
        assert f"/rows/{row_id}?judge={JUDGE}&amp;task=rejection" in text
    assert f"{saved.toward:,} toward" in text and f"{saved.away:,} away" in text
    assert "<script" not in text
    assert "Saved comparisons" in empty.text and run_b in empty.text
    # the viewer only reads: no comparison file written by it
    assert sorted((refusal / "reports" / COMPARISONS_FOLDER).iterdir()) == files


async def test_bad_choices_say_what_exists(refusal: Path) -> None:
    app = app_for(refusal)
    async with client(app) as http:
        unknown = await http.get("/api/compare", params={"a": "nope", "b": "nope2"})
        half = await http.get("/api/compare", params={"a": "nope"})
        neither = await http.get("/api/compare")
        page = await http.get("/runs", params={"a": "nope", "b": "nope2"})
    assert unknown.status_code == 400 and "runs there" in unknown.json()["error"]
    assert half.status_code == 400 and half.json()["parameter"] == "b"
    assert neither.status_code == 400 and neither.json()["parameter"] == "a"
    assert page.status_code == 200 and "runs there" in page.text


async def test_compare_errors_name_the_query_parameter_and_the_runs(refusal: Path) -> None:
    run = MetaEvaluator(refusal, load=True).load_all_judge_results()[JUDGE].run_id
    app = app_for(refusal)
    async with client(app) as http:
        unknown = (await http.get("/api/compare", params={"a": "nope", "b": run})).json()
        page = (await http.get("/runs")).text
    assert unknown["parameter"] == "a" and unknown["allowed"] == [run]
    # the judge and task fields suggest judges and tasks, the run fields runs
    assert "list='judges'" in page and "list='tasks'" in page and "list='runs'" in page
    judges = page.split("<datalist id='judges'>")[1].split("</datalist>")[0]
    assert f"<option value='{JUDGE}'>" in judges and "<option value='stricter'>" not in judges


async def test_an_id_is_read_only_as_the_api_writes_it(refusal: Path) -> None:
    app = app_for(refusal)
    async with client(app) as http:
        plain = await http.get("/api/rows/101")
        padded = await http.get("/api/rows/0101")
        signed = await http.get("/api/rows/+101")
        zero = (await http.get("/api/rows", params={"page": "0"})).json()
        negative = (await http.get("/api/rows", params={"page": "-1"})).json()
    assert plain.status_code == 200 and plain.json()["original_id"] == 101
    assert padded.status_code == 404 and signed.status_code == 404
    assert zero["error"] == "page: give a whole number 1 or more; got '0'."
    assert negative["error"] == "page: give a whole number 1 or more; got '-1'."


async def test_a_bad_task_lists_the_tasks_and_speaks_of_the_task_parameter(
    refusal: Path,
) -> None:
    """`allowed` was empty for the task although the tasks are known (trial #9)."""
    run = MetaEvaluator(refusal, load=True).load_all_judge_results()[JUDGE].run_id
    app = app_for(refusal)
    async with client(app) as http:
        found = await http.get("/api/compare", params={"a": run, "b": run, "task": "nope"})
    answer = found.json()
    assert found.status_code == 400
    assert answer["parameter"] == "task" and answer["allowed"] == ["rejection"]
    assert "--task" not in answer["error"]


async def test_a_run_of_several_judges_lists_them_and_speaks_of_the_judge_parameter(
    refusal: Path, tmp_path: Path
) -> None:
    """The API said `judge_id=...` (Python's words) with `allowed` empty (trial #9)."""
    project = refusal
    evaluator = MetaEvaluator(project, load=True)
    ids = evaluator.data.ids.to_list() if evaluator.data is not None else []
    for judge in ("j1", "j2"):
        frame = pl.DataFrame({"original_id": ids, "rejection": ["rejection"] * len(ids)})
        source = tmp_path / f"{judge}.csv"
        frame.write_csv(source)
        evaluator.add_external_judge_results(source, judge_id=judge, run_id="both")
    app = app_for(project)
    async with client(app) as http:
        found = await http.get("/api/compare", params={"a": "both", "b": "both"})
    answer = found.json()
    assert found.status_code == 400, answer
    assert answer["parameter"] == "judge" and answer["allowed"] == ["j1", "j2"]
    assert "judge=JUDGE" in answer["error"]
    assert "judge_id=" not in answer["error"] and "--judge" not in answer["error"]


async def test_an_unknown_judge_is_the_judge_parameters_fault(refusal: Path) -> None:
    """It was blamed on `a` with the runs as `allowed`, in Python's `run_a:` (review)."""
    run = MetaEvaluator(refusal, load=True).load_all_judge_results()[JUDGE].run_id
    app = app_for(refusal)
    async with client(app) as http:
        found = await http.get("/api/compare", params={"a": run, "b": run, "judge": "nosuch"})
        named = await http.get("/api/compare", params={"a": f"{run}:nosuch", "b": run})
    answer = found.json()
    assert found.status_code == 400, answer
    assert answer["parameter"] == "judge" and JUDGE in answer["allowed"]
    assert answer["error"].startswith("a: run ") and "run_a" not in answer["error"]
    assert named.json()["parameter"] == "a" and named.json()["error"].startswith("a: run ")
