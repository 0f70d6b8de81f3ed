"""MetaEvaluator: create/load semantics, save_state, reload equality (also in a new process)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader, SampleEvalData
from meta_evaluator.errors import (
    AlreadySetError,
    ColumnError,
    DataFileError,
    JudgeConfigError,
    ProjectExistsError,
    StateError,
    TaskError,
)
from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from tests.conftest import snapshot


def build(project: Path, frame: pl.DataFrame, task: EvalTask) -> MetaEvaluator:
    evaluator = MetaEvaluator(project, load=False)
    evaluator.add_data(DataLoader.load_from_dataframe("chats", frame, id_column="qid"))
    evaluator.add_eval_task(task)
    evaluator.add_judge(
        "judge_a", "openai", "gpt-4o-mini", "Did {response} refuse {prompt}?",
        base_url="http://127.0.0.1:9/v1", api_key_env="TEST_JUDGE_KEY", temperature=0.0,
        max_concurrency=8,
    )  # fmt: skip
    evaluator.add_judge("judge_b", "mock", "mock-1", "Judge {response}", answering_method="xml")
    return evaluator


def test_nothing_is_written_until_save_state(tmp_path: Path) -> None:
    """A script that fails before saving can be run again (as in meta-evaluator 0.3)."""
    MetaEvaluator(tmp_path / "p", load=False)
    MetaEvaluator(tmp_path / "p", load=False)  # no ProjectExistsError: nothing was saved
    assert not (tmp_path / "p" / "main_state.json").exists()
    MetaEvaluator(tmp_path / "p", load=False).save_state()
    state = json.loads((tmp_path / "p" / "main_state.json").read_text())
    assert state["schema_version"] == 1
    assert state["data"] is None and state["eval_task"] is None and state["judges"] == {}
    reloaded = MetaEvaluator(tmp_path / "p", load=True)
    assert reloaded.data is None and reloaded.eval_task is None and reloaded.judge_registry == {}
    with pytest.raises(ProjectExistsError):
        MetaEvaluator(tmp_path / "p", load=False)


def test_existing_folder_without_project_can_be_initialised(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("keep me")
    MetaEvaluator(tmp_path, load=False).save_state()
    assert (tmp_path / "notes.txt").read_text() == "keep me"
    assert (tmp_path / "main_state.json").is_file()


@pytest.mark.parametrize("data_format", ["parquet", "csv", "json"])
def test_round_trip_in_process(
    tmp_path: Path, frame: pl.DataFrame, task: EvalTask, data_format: str
) -> None:
    evaluator = build(tmp_path / "p", frame, task)
    evaluator.save_state(data_format=data_format)  # type: ignore[arg-type]
    reloaded = MetaEvaluator(tmp_path / "p", load=True)
    assert reloaded.data == evaluator.data
    assert reloaded.data is not None
    assert reloaded.data.data.schema == frame.schema
    assert reloaded.eval_task == task
    assert reloaded.judge_registry == evaluator.judge_registry
    assert sorted(reloaded.judge_registry) == ["judge_a", "judge_b"]
    assert (tmp_path / "p" / "data" / f"main_data.{data_format}").is_file()


@pytest.mark.parametrize("data_format", ["parquet", "csv"])
def test_an_opened_project_reads_its_rows_again_only_when_a_step_needs_them(
    tmp_path: Path, frame: pl.DataFrame, task: EvalTask, data_format: str
) -> None:
    """Scoring a million rows never reads the data's text: it is let go once checked."""
    build(tmp_path / "p", frame, task).save_state(data_format=data_format)  # type: ignore[arg-type]
    opened = MetaEvaluator(tmp_path / "p", load=True)
    data = opened.data
    assert data is not None and data._frame is None  # released after the open's checks
    assert data.ids.to_list() == frame["qid"].to_list() and len(data) == frame.height
    assert data.columns == frame.columns and data._frame is None  # no read for these
    assert data.data.equals(frame) and data._frame is not None  # read back, then kept
    other = MetaEvaluator(tmp_path / "p", load=True)
    assert other.data == opened.data


def test_data_replaced_by_another_process_is_not_read_as_the_opened_data(
    tmp_path: Path, frame: pl.DataFrame, task: EvalTask
) -> None:
    build(tmp_path / "p", frame, task).save_state()
    opened = MetaEvaluator(tmp_path / "p", load=True)
    elsewhere = MetaEvaluator(tmp_path / "p", load=True)
    changed = frame.with_columns(pl.col("response").str.to_uppercase())
    elsewhere.add_data(DataLoader.load_from_dataframe("chats", changed, "qid"), overwrite=True)
    elsewhere.save_state()
    assert opened.data is not None and len(opened.data) == frame.height  # ids: still at hand
    with pytest.raises(StateError, match="changed since the project was opened"):
        opened.data.data  # noqa: B018 - reading the rows is the point
    assert MetaEvaluator(tmp_path / "p", load=True).data.data.equals(changed)  # type: ignore[union-attr]


def test_round_trip_in_a_new_process(tmp_path: Path, frame: pl.DataFrame, task: EvalTask) -> None:
    """Save here, reload in a fresh interpreter, and compare there with what we send."""
    project = tmp_path / "p"
    evaluator = build(project, frame, task)
    evaluator.save_state()
    expected = tmp_path / "expected.parquet"
    frame.write_parquet(expected)
    script = textwrap.dedent(
        f"""
        import json, sys
        import polars as pl
        from meta_evaluator import MetaEvaluator
        from meta_evaluator.data import EvalData
        ev = MetaEvaluator({str(project)!r}, load=True)
        want = EvalData("chats", pl.read_parquet({str(expected)!r}), "qid")
        print(json.dumps({{
            "data_equal": ev.data == want,
            "id_dtype": str(ev.data.data.schema["qid"]),
            "ids": ev.data.ids.to_list(),
            "task": ev.eval_task.model_dump(mode="json"),
            "judges": {{k: j.model_dump(mode="json") for k, j in ev.judge_registry.items()}},
        }}))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    seen = json.loads(out.stdout)
    assert seen["data_equal"] is True
    assert seen["id_dtype"] == str(frame.schema["qid"])
    assert seen["ids"] == frame["qid"].to_list()
    assert seen["task"] == task.model_dump(mode="json")
    assert seen["judges"] == {
        k: j.model_dump(mode="json") for k, j in evaluator.judge_registry.items()
    }


def test_sample_round_trip_keeps_sampling_parameters(
    tmp_path: Path, frame: pl.DataFrame, task: EvalTask
) -> None:
    evaluator = MetaEvaluator(tmp_path / "p")
    data = DataLoader.load_from_dataframe("chats", frame, "qid")
    sample = data.stratified_sample_by_columns(["topic"], 0.5, seed=3)
    evaluator.add_data(sample)
    evaluator.add_eval_task(task)
    evaluator.save_state()
    reloaded = MetaEvaluator(tmp_path / "p", load=True).data
    assert isinstance(reloaded, SampleEvalData)
    assert reloaded == sample
    assert reloaded.sampling_info == sample.sampling_info
    assert reloaded.original_size == 4 and reloaded.seed == 3


def test_multilabel_and_options_survive_reload(tmp_path: Path, frame: pl.DataFrame) -> None:
    task = EvalTask(
        task_schemas={
            "rejection": ["rejection", "not rejection"],
            "harms": MultiLabelSchema(outcomes=["crime", "fraud", "hate"]),
            "note": None,
        },
        prompt_columns=None,
        response_columns=["response"],
        answering_method="instructor",
        structured_outputs_fallback=True,
        required_tasks=["rejection", "harms"],
        annotation_prompt="Label it.",
    )
    evaluator = MetaEvaluator(tmp_path / "p")
    evaluator.add_data(DataLoader.load_from_dataframe("chats", frame, "qid"))
    evaluator.add_eval_task(task)
    evaluator.save_state(data_format="json")
    reloaded = MetaEvaluator(tmp_path / "p", load=True).eval_task
    assert reloaded == task
    assert reloaded is not None
    assert reloaded.answering_method == "structured"
    assert reloaded.task_kind("harms") == "multilabel"


def test_saving_twice_writes_identical_bytes(
    tmp_path: Path, frame: pl.DataFrame, task: EvalTask
) -> None:
    """A project under version control must not change when nothing changed."""
    evaluator = build(tmp_path / "p", frame, task)
    evaluator.save_state()
    first = snapshot(tmp_path / "p")
    MetaEvaluator(tmp_path / "p", load=True).save_state()
    assert snapshot(tmp_path / "p") == first


def test_changing_format_removes_the_old_data_file(
    tmp_path: Path, frame: pl.DataFrame, task: EvalTask
) -> None:
    evaluator = build(tmp_path / "p", frame, task)
    evaluator.save_state(data_format="csv")
    evaluator.save_state(data_format="parquet")
    assert sorted(p.name for p in (tmp_path / "p" / "data").iterdir()) == ["main_data.parquet"]


def test_custom_data_filename(tmp_path: Path, frame: pl.DataFrame, task: EvalTask) -> None:
    evaluator = build(tmp_path / "p", frame, task)
    evaluator.save_state(data_format="csv", data_filename="chats.csv")
    assert (tmp_path / "p" / "data" / "chats.csv").is_file()
    assert MetaEvaluator(tmp_path / "p", load=True).data == evaluator.data


def test_no_secret_is_written(
    tmp_path: Path, frame: pl.DataFrame, task: EvalTask, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-0123456789abcdef-SECRET"
    monkeypatch.setenv("TEST_JUDGE_KEY", secret)
    evaluator = build(tmp_path / "p", frame, task)
    evaluator.save_state()
    for data_format in ("csv", "json"):
        evaluator.save_state(data_format=data_format)  # type: ignore[arg-type]
    files = snapshot(tmp_path / "p")
    assert files, "the project wrote no files"
    assert all(secret.encode() not in content for content in files.values())
    state = json.loads(files["main_state.json"])
    assert state["judges"]["judge_a"]["api_key_env"] == "TEST_JUDGE_KEY"


def test_add_data_and_task_refuse_to_overwrite_silently(
    tmp_path: Path, frame: pl.DataFrame, task: EvalTask
) -> None:
    evaluator = build(tmp_path / "p", frame, task)
    other = DataLoader.load_from_dataframe("other", frame, "qid")
    with pytest.raises(AlreadySetError, match="overwrite=True"):
        evaluator.add_data(other)
    with pytest.raises(AlreadySetError, match="overwrite=True"):
        evaluator.add_eval_task(task)
    evaluator.add_data(other, overwrite=True)
    assert evaluator.data is not None and evaluator.data.name == "other"


def test_task_is_checked_against_data_whichever_comes_first(
    tmp_path: Path, frame: pl.DataFrame
) -> None:
    wrong = EvalTask(task_schemas={"ok": ["yes", "no"]}, response_columns=["answer"])
    first_data = MetaEvaluator(tmp_path / "a")
    first_data.add_data(DataLoader.load_from_dataframe("chats", frame, "qid"))
    with pytest.raises(TaskError, match="'answer'") as caught:
        first_data.add_eval_task(wrong)
    assert caught.value.column == "answer"
    assert first_data.eval_task is None
    first_task = MetaEvaluator(tmp_path / "b")
    first_task.add_eval_task(wrong)
    with pytest.raises(TaskError, match="'answer'"):
        first_task.add_data(DataLoader.load_from_dataframe("chats", frame, "qid"))
    assert first_task.data is None


def test_add_judge_duplicates(tmp_path: Path, frame: pl.DataFrame, task: EvalTask) -> None:
    evaluator = build(tmp_path / "p", frame, task)
    kept = evaluator.judge_registry["judge_b"]
    with pytest.raises(JudgeConfigError, match="judge_b") as caught:
        evaluator.add_judge("judge_b", "mock", "mock-2", "Judge {response}")
    assert caught.value.judge_id == "judge_b"
    assert evaluator.add_judge("judge_b", "mock", "mock-2", "x", on_duplicate="skip") == kept
    replaced = evaluator.add_judge(
        "judge_b", "mock", "mock-2", "Judge {response}", on_duplicate="overwrite"
    )
    assert evaluator.judge_registry["judge_b"] == replaced
    assert replaced.model == "mock-2"


def test_add_judge_reads_prompt_file(tmp_path: Path, frame: pl.DataFrame, task: EvalTask) -> None:
    prompt = tmp_path / "refusal_v2.md"
    prompt.write_text('Request: {prompt}\nAnswer: {response}\nJSON like {{"a": 1}}\n')
    evaluator = build(tmp_path / "p", frame, task)
    judge = evaluator.add_judge("from_file", "anthropic", "claude-x", prompt_file=prompt)
    assert judge.prompt.id == "refusal_v2"
    assert judge.prompt.placeholders == ["prompt", "response"]


def test_judge_registry_is_a_copy(tmp_path: Path, frame: pl.DataFrame, task: EvalTask) -> None:
    evaluator = build(tmp_path / "p", frame, task)
    evaluator.judge_registry.clear()
    assert sorted(evaluator.judge_registry) == ["judge_a", "judge_b"]


def test_repr_names_the_parts(tmp_path: Path, frame: pl.DataFrame, task: EvalTask) -> None:
    text = repr(build(tmp_path / "p", frame, task))
    assert "chats" in text and "rejection" in text and "judge_a" in text


def test_include_false_keeps_what_was_saved(
    tmp_path: Path, frame: pl.DataFrame, task: EvalTask
) -> None:
    """include_data=False means: do not rewrite the data; never: delete it."""
    evaluator = build(tmp_path / "p", frame, task)
    evaluator.save_state()
    saved = snapshot(tmp_path / "p" / "data")
    evaluator.add_judge("judge_c", "mock", "m", "Judge {response}")
    evaluator.save_state(include_data=False, include_task=False)
    assert snapshot(tmp_path / "p" / "data") == saved
    reloaded = MetaEvaluator(tmp_path / "p", load=True)
    assert reloaded.data == evaluator.data and reloaded.eval_task == task
    assert "judge_c" in reloaded.judge_registry


def test_a_hand_edited_state_never_makes_save_delete_outside_files(
    tmp_path: Path, frame: pl.DataFrame, task: EvalTask
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    evaluator = build(tmp_path / "p", frame, task)
    evaluator.save_state()
    state_file = tmp_path / "p" / "main_state.json"
    state = json.loads(state_file.read_text())
    state["data"]["file"] = "../../victim.txt"
    state_file.write_text(json.dumps(state))
    evaluator.save_state(data_format="csv")
    assert victim.read_text() == "precious"
    assert sorted(p.name for p in (tmp_path / "p" / "data").iterdir()) == ["main_data.csv"]


def test_placeholders_are_rechecked_when_data_or_task_change(
    tmp_path: Path, frame: pl.DataFrame, task: EvalTask
) -> None:
    evaluator = build(tmp_path / "p", frame, task)
    evaluator.add_judge("by_topic", "mock", "m", "Topic {topic}: {response}")
    narrower = DataLoader.load_from_dataframe("n", frame.drop("topic"), "qid")
    with pytest.raises(JudgeConfigError, match=r"'by_topic'.*\{topic\}") as caught:
        evaluator.add_data(narrower, overwrite=True)
    assert caught.value.judge_id == "by_topic"
    assert evaluator.data is not None and "topic" in evaluator.data.columns
    fresh = MetaEvaluator(tmp_path / "q")
    fresh.add_judge("j", "mock", "m", "See {answer}")  # nothing to check against yet
    with pytest.raises(JudgeConfigError, match=r"\{answer\}"):
        fresh.add_eval_task(task)
    assert fresh.eval_task is None


@pytest.mark.parametrize(
    ("frame_in", "data_format", "fragment"),
    [
        (pl.DataFrame({"id": [1, 2], 'say "hi"': ["a", "b"]}), "csv", "quote or line break"),
        (pl.DataFrame({"id": [1, 2], "t": [float("nan"), 1.0]}), "json", "NaN or infinity"),
        (pl.DataFrame({"id": [1, 2], "t": [float("inf"), 1.0]}), "json", "NaN or infinity"),
    ],
)
def test_text_formats_refuse_what_they_would_change(
    tmp_path: Path, frame_in: pl.DataFrame, data_format: str, fragment: str
) -> None:
    evaluator = MetaEvaluator(tmp_path / "p")
    evaluator.add_data(DataLoader.load_from_dataframe("d", frame_in, "id"))
    with pytest.raises(ColumnError, match=fragment):
        evaluator.save_state(data_format=data_format)  # type: ignore[arg-type]
    assert not (tmp_path / "p" / "main_state.json").exists()
    assert [p.name for p in (tmp_path / "p" / "data").glob("*")] == []
    evaluator.save_state()  # parquet keeps everything
    assert MetaEvaluator(tmp_path / "p", load=True).data == evaluator.data


def test_state_that_names_the_wrong_format(
    tmp_path: Path, frame: pl.DataFrame, task: EvalTask
) -> None:
    evaluator = build(tmp_path / "p", frame, task)
    evaluator.save_state()
    state_file = tmp_path / "p" / "main_state.json"
    state = json.loads(state_file.read_text())
    state["data"]["format"] = "csv"
    state_file.write_text(json.dumps(state))
    with pytest.raises(DataFileError, match="is a Parquet file, but the project state says csv"):
        MetaEvaluator(tmp_path / "p", load=True)


def test_add_judges_registers_judges_already_built_all_or_none(tmp_path: Path) -> None:
    from meta_evaluator.examples import create_example_project
    from meta_evaluator.judge import Judge, Prompt

    evaluator = create_example_project("refusal", tmp_path / "p")
    fine = Judge(id="fine", llm_client="mock", model="m", prompt=Prompt(id="p", prompt="{prompt}"))
    typo = Judge(id="typo", llm_client="mock", model="m", prompt=Prompt(id="p", prompt="{promt}"))
    with pytest.raises(JudgeConfigError, match=r"'typo'.*\{promt\}"):
        evaluator.add_judges([fine, typo])
    assert "fine" not in evaluator.judge_registry
    with pytest.raises(JudgeConfigError, match="expects Judge objects"):
        evaluator.add_judges([{"id": "x"}])  # type: ignore[list-item]
    assert [j.id for j in evaluator.add_judges([fine])] == ["fine"]
    with pytest.raises(JudgeConfigError, match="already registered"):
        evaluator.add_judges([fine])
    assert evaluator.add_judges([fine], on_duplicate="skip") == [fine]
