"""`meta-evaluator migrate`: the project folder meta-evaluator 0.3.3 itself wrote
(`v033_project/`, made by `make_v033_project.py` in 0.3.3's venv) made one of ours, atomically.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import polars as pl
import pytest
import yaml

from meta_evaluator import MetaEvaluator
from meta_evaluator.errors import (
    JudgeConfigError,
    ProjectError,
    StateError,
    StorageError,
)
from meta_evaluator.judge import read_judges_yaml
from meta_evaluator.migrate import BACKUP, _swap, migrate_project
from meta_evaluator.scores import MetricConfig, MetricsConfig
from meta_evaluator.scores.metrics import ClassificationScorer, CohensKappaScorer
from tests.conftest import Main, snapshot

FIXTURE = Path(__file__).parent / "v033_project"
HARMS = ["violence", "fraud", "hate"]


@pytest.fixture
def old(tmp_path: Path) -> Path:
    """A copy of the 0.3.3 project folder."""
    folder = tmp_path / "project"
    shutil.copytree(FIXTURE, folder)
    return folder


def old_rows(name: str) -> list[dict[str, object]]:
    """The rows 0.3.3 saved for a run, by the start of its file name."""
    (path,) = (FIXTURE / "results").glob(f"{name}_*_results.json")
    rows: list[dict[str, object]] = json.loads(path.read_text())
    return rows


def test_a_033_folder_is_not_loaded_but_says_to_migrate(old: Path) -> None:
    before = snapshot(old)
    with pytest.raises(StateError, match=f"run `meta-evaluator migrate {old}`"):
        MetaEvaluator(old, load=True)
    assert snapshot(old) == before


def test_the_project_is_converted_and_033s_files_kept_aside(old: Path) -> None:
    before = snapshot(old)
    report = migrate_project(old)
    backup = old / BACKUP
    assert report.backup == backup
    # 0.3.3's files, byte for byte, are in the backup folder
    for name, content in before.items():
        assert (backup / name).read_bytes() == content, name
    assert sorted(p.name for p in old.iterdir()) == [
        "annotations", "data", "main_state.json", "metrics.yaml", BACKUP, "results",
    ]  # fmt: skip
    evaluator = MetaEvaluator(old, load=True)
    assert evaluator.data is not None and evaluator.eval_task is not None
    data = pl.read_csv(FIXTURE / "data" / "main_state_data.csv")
    assert evaluator.data.data.equals(data) and evaluator.data.id_column == "qid"
    task = evaluator.eval_task
    assert task.task_names == ["rejection", "harm types", "explanation"]
    assert task.allowed_labels("harm types") == HARMS
    assert task.structured_outputs_fallback and task.get_required_tasks() == [
        "rejection", "harm types",
    ]  # fmt: skip
    judges = evaluator.judge_registry
    assert sorted(judges) == ["broken_judge", "gpt_judge", "mini_judge"]
    assert judges["gpt_judge"].temperature == 0.0 and judges["gpt_judge"].model == "gpt-4o-mini"
    assert judges["mini_judge"].extra_headers == {"X-Team": "safety"}
    assert "{llm_response}" in judges["gpt_judge"].prompt.prompt
    record = json.loads((backup / "migration.json").read_text())
    assert record["report"] == report.lines()


def test_every_label_is_checked_again_and_the_answers_kept(old: Path) -> None:
    report = migrate_project(old)
    evaluator = MetaEvaluator(old, load=True)
    results = evaluator.load_all_judge_results()
    rows = {r["original_id"]: r for r in old_rows("run_one_gpt_judge")}
    frame = results["gpt_judge"].results_data
    for row in frame.iter_rows(named=True):
        theirs = rows[row["original_id"]]
        vector = theirs["harm types"]
        assert row["llm_raw_response_content"] == theirs["llm_raw_response_content"]
        assert row["llm_prompt_tokens"] == theirs["llm_prompt_tokens"]
        slots = list(vector)  # type: ignore[call-overload]
        in_order = len(slots) == 3 and all(
            s in (h, "FALSE") for s, h in zip(slots, HARMS, strict=True)
        )
        aligned = in_order or "FALSE" not in slots
        if aligned:  # 0.3.3's vector, or a plain list: the labels chosen
            assert row["outcome"] == "valid"
            assert row["harm types"] == [h for h in HARMS if h in slots]
        else:  # 0.3.3 kept it as "success"; the label rule does not
            assert row["outcome"] == "invalid" and row["status"] == "partial"  # rejection is fine
            assert "one slot per outcome in this order" in row["error_message"]
    (run,) = [r for r in report.built.runs if r.judge_id == "gpt_judge"]
    assert run.changed == (frame["outcome"] == "invalid").sum() > 0
    broken = results["broken_judge"].results_data
    assert (broken["outcome"] == "error").all() and (broken["status"] == "llm_error").all()
    assert (broken["error_message"] == "Connection error.").all()
    external = results["external_judge"]
    assert (external.llm_client, external.model_used) == ("groq", "llama-3.1-8b-instant")
    assert external.results_data["harm types"].to_list() == [
        ["violence"], [], ["fraud"], [], ["hate"], [],
    ]  # fmt: skip
    humans = evaluator.load_all_human_results()
    assert sorted(humans) == ["annotator_1", "annotator_2"]
    assert humans["annotator_2"].results_data["rejection"].to_list()[:3] == [
        "rejection", "not rejection", "not rejection",
    ]  # fmt: skip


def test_scores_after_migration_agree_with_033s_own(old: Path) -> None:
    """On the judge whose rows all stay valid, accuracy and kappa are those 0.3.3 computed
    (its score_report.csv, in the backup folder)."""
    migrate_project(old)
    evaluator = MetaEvaluator(old, load=True)
    evaluator.add_metrics_config(
        MetricsConfig(
            metrics=[
                MetricConfig(
                    scorer=ClassificationScorer("accuracy"),
                    task_names=["rejection"],
                    task_strategy="single",
                ),
                MetricConfig(
                    scorer=CohensKappaScorer(), task_names=["rejection"], task_strategy="single"
                ),
            ]
        )
    )
    with pytest.warns(Warning, match="broken_judge"):  # no valid rows: said, not scored
        evaluator.compare_async()
    ours = evaluator.score_report.generate().filter(pl.col("judge_id") == "external_judge")
    theirs = pl.read_csv(old / BACKUP / "scores" / "score_report.csv")
    theirs = theirs.filter(pl.col("judge_id") == "external_judge")
    for column in theirs.columns[1:]:
        assert ours[column][0] == pytest.approx(theirs[column][0], abs=1e-12)


def test_judges_that_cannot_be_carried_over_are_written_to_fix(old: Path) -> None:
    report = migrate_project(old)
    assert list(report.built.judges_not_kept) == ["bedrock_judge"]
    path = old / BACKUP / "judges-not-migrated.yaml"
    text = path.read_text()
    assert text.startswith("# Judges of the meta-evaluator 0.3.3 project")
    assert "SigV4" in text
    with pytest.raises(JudgeConfigError, match=r"judges\[0\]\.llm_client: 'bedrock'"):
        read_judges_yaml(path)
    entries = yaml.safe_load(text)
    entries["judges"][0].update(llm_client="openai", base_url="http://127.0.0.1:4000/v1")
    path.write_text(yaml.safe_dump(entries))
    evaluator = MetaEvaluator(old, load=True)
    (judge,) = evaluator.load_judges_from_yaml(path)
    assert judge.id == "bedrock_judge" and judge.model.startswith("anthropic.claude")


def test_a_dry_run_changes_nothing(old: Path) -> None:
    before = snapshot(old)
    report = migrate_project(old, dry_run=True)
    assert report.lines()[0].startswith("Would migrate")
    assert snapshot(old) == before


def test_a_migrated_folder_is_not_migrated_again(old: Path) -> None:
    migrate_project(old)
    before = snapshot(old)
    with pytest.raises(ProjectError, match="is a project of this version already"):
        migrate_project(old)
    assert snapshot(old) == before


def test_a_failure_while_moving_leaves_the_033_project_as_it_was(
    old: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(old)
    renames = []
    real_rename = os.rename

    def rename(source: str | Path, target: str | Path) -> None:
        renames.append((source, target))
        if len(renames) == 5:  # the fifth rename fails, once (the undo's renames succeed)
            raise OSError(28, "No space left on device")
        real_rename(source, target)

    monkeypatch.setattr(_swap.os, "rename", rename)
    with pytest.raises(StorageError):
        migrate_project(old)
    assert snapshot(old) == before  # every rename undone; nothing of ours left behind


def test_an_undo_that_fails_keeps_its_journal_for_the_next_migrate(
    old: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fifth rename fails, and so does the first rename back: the error says to migrate
    again, the journal stays, and the next `migrate` finishes the undo, then migrates."""
    before = snapshot(old)
    renames = []
    real_rename = os.rename

    def rename(source: str | Path, target: str | Path) -> None:
        renames.append((source, target))
        if len(renames) in (5, 6):  # the fifth, then the undo's first
            raise OSError(5, "Input/output error")
        real_rename(source, target)

    monkeypatch.setattr(_swap.os, "rename", rename)
    with pytest.raises(StorageError, match=r"run `meta-evaluator migrate .*` again") as raised:
        migrate_project(old)
    assert raised.value.errno == 5 and "Input/output error" in raised.value.message
    monkeypatch.undo()
    assert (old / _swap.STAGING / "journal.json").is_file()
    report = migrate_project(old)
    assert report.recovered is not None and "undone" in report.recovered
    for name, content in before.items():
        assert (old / BACKUP / name).read_bytes() == content, name


def test_a_file_033_cannot_have_written_is_named(old: Path) -> None:
    (path,) = (old / "results").glob("run_one_gpt_judge_*_results.json")
    path.write_text("[{")
    before = snapshot(old)
    with pytest.raises(StateError, match=path.name):
        migrate_project(old)
    assert snapshot(old) == before


def test_the_command(old: Path, entry: Main) -> None:
    dry = entry("migrate", old, "--dry-run")
    assert dry.returncode == 0 and dry.stdout.startswith("Would migrate")
    done = entry("migrate", old)
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stdout.splitlines() if "NOT carried over" in x]
    assert line.startswith(
        "  judge 'bedrock_judge' NOT carried over: llm_client: 'bedrock' is not served"
    )  # named once, then the gateway (always works) before Bedrock's own endpoint
    assert line.count("bedrock_judge") == 1
    assert line.index("OpenAI-compatible gateway") < line.index("Bedrock's own")
    assert "row(s) changed outcome under the label rule" in done.stdout
    again = entry("migrate", old)
    assert again.returncode == 2 and "is a project of this version already" in again.stderr
    assert "Traceback" not in again.stderr
    status = entry("status", old)
    assert status.returncode == 0 and "external_judge" in status.stdout
