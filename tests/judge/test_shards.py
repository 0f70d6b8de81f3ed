"""Deterministic sharding (`--shard k/N`): a stable split, files per shard, merged results.

Everything runs the built-in refusal example (40 rows, integer ids) with its offline mock judge,
which answers from a hash of the prompt: the same row gets the same answer in every run.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from meta_evaluator import MetaEvaluator
from meta_evaluator.cli import app
from meta_evaluator.errors import JudgeConfigError
from meta_evaluator.examples import create_example_project
from meta_evaluator.judge._shards import parse_shard, shard_of
from meta_evaluator.judge.row_store import read_rows
from meta_evaluator.judge.run_files import RunFiles, RunLock, RunState

JUDGE = "mock_refusal_judge"


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("example") / "refusal"
    create_example_project("refusal", project)
    return project


@pytest.fixture(scope="module")
def unsharded(example: Path, tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    """The mock judge's rows over all 40 rows, run once without shards."""
    copy = tmp_path_factory.mktemp("unsharded") / "refusal"
    shutil.copytree(example, copy)
    result = MetaEvaluator(copy, load=True).run_judges_async(run_id="all")[JUDGE]
    return result.results_data


def fresh(example: Path, where: Path) -> MetaEvaluator:
    """A private copy of the fresh example (no runs yet)."""
    shutil.copytree(example, where)
    return MetaEvaluator(where, load=True)


def ids_of(evaluator: MetaEvaluator) -> list[Any]:
    assert evaluator.data is not None
    return evaluator.data.ids.to_list()


def answers(frame: pl.DataFrame, task_names: list[str]) -> list[dict[str, Any]]:
    """What the judge said per row, without times and run ids."""
    return frame.select("original_id", "outcome", "status", *task_names).to_dicts()


def task_names(evaluator: MetaEvaluator) -> list[str]:
    assert evaluator.eval_task is not None
    return evaluator.eval_task.task_names


# ----- the split ----------------------------------------------------------------------------


def test_shard_of_is_pinned_so_every_machine_splits_alike() -> None:
    # sha256 of "<type name>:<id>", first 8 bytes big-endian, modulo N: never Python's hash()
    assert [shard_of(i, 3) for i in (0, 1, 101, 102)] == [1, 1, 2, 1]
    assert [shard_of(i, 1000) for i in (0, 1, 101, 102)] == [515, 82, 53, 109]
    assert (shard_of("a", 3), shard_of("101", 3), shard_of("101", 1000)) == (2, 1, 244)
    assert shard_of(101, 1000) != shard_of("101", 1000)  # the type counts
    assert all(shard_of(i, 1) == 0 for i in (0, "x", 2.5))


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_shards_are_disjoint_and_cover_every_id(example: Path, count: int) -> None:
    ids = ids_of(MetaEvaluator(example, load=True))
    assert len(ids) == 40
    parts = [[i for i in ids if shard_of(i, count) == k] for k in range(count)]
    assert sorted(i for part in parts for i in part) == sorted(ids)
    assert sum(len(part) for part in parts) == len(ids)  # no id in two parts
    if count <= 4:
        assert all(parts), parts  # 40 ids: every part gets some


@pytest.mark.parametrize(
    ("text", "expected"), [("1/1", (1, 1)), ("2/4", (2, 4)), (" 3 / 3 ", (3, 3))]
)
def test_parse_shard(text: str, expected: tuple[int, int]) -> None:
    assert parse_shard(text) == expected


@pytest.mark.parametrize("text", ["0/3", "4/3", "x", "1/0", "", "1/", "-1/3", "1/3/4", "1.0/3"])
def test_parse_shard_rejects(text: str) -> None:
    with pytest.raises(JudgeConfigError) as caught:
        parse_shard(text)
    assert caught.value.field == "shard"


def test_run_rejects_a_bad_shard_or_one_without_run_id(example: Path, tmp_path: Path) -> None:
    evaluator = fresh(example, tmp_path / "p")
    for shard in [(0, 3), (4, 3), (1, 0), (True, 2), "1 of 3", 2]:
        with pytest.raises(JudgeConfigError) as caught:
            evaluator.run_judges_async(run_id="r", shard=shard)
        assert caught.value.field == "shard"
    assert evaluator.plan_run(run_id="r", shard="1/3").settings.shard == (1, 3)  # as on the CLI
    with pytest.raises(JudgeConfigError, match="needs a run_id") as caught:
        evaluator.run_judges_async(shard=(1, 3))
    assert caught.value.field == "run_id"
    assert not (tmp_path / "p" / "results").exists() or not any(
        (tmp_path / "p" / "results").iterdir()
    )


# ----- files and merging --------------------------------------------------------------------


def test_three_shards_write_their_own_files_and_merge_into_the_unsharded_result(
    example: Path, tmp_path: Path, unsharded: pl.DataFrame
) -> None:
    evaluator = fresh(example, tmp_path / "p")
    ids = ids_of(evaluator)
    for k in (1, 2, 3):
        result = evaluator.run_judges_async(run_id="r", shard=(k, 3))[JUDGE]
        mine = [i for i in ids if shard_of(i, 3) == k - 1]
        assert result.results_data["original_id"].to_list() == mine  # only the shard, in order
        assert result.run_id == "r" and result.complete
        state = json.loads(
            (tmp_path / "p/results/r" / f"{JUDGE}.shard-{k}-of-3_state.json").read_text()
        )
        assert state["shard"] == [k, 3] and state["judge_id"] == JUDGE and state["complete"]
    folder = tmp_path / "p" / "results" / "r"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        f"{JUDGE}.shard-{k}-of-3{ext}"
        for k in (1, 2, 3)
        for ext in (".jsonl", ".parquet", "_state.json")
    )  # no lock left behind, no unsharded file
    merged = evaluator.load_all_judge_results()
    assert list(merged) == [JUDGE]  # the judge id, not the shard's file stem
    frame = merged[JUDGE].results_data
    assert merged[JUDGE].run_id == "r"
    assert frame["original_id"].to_list() == ids  # every row once, in data order
    names = task_names(evaluator)
    assert answers(frame, names) == answers(unsharded, names)


def test_a_run_with_a_missing_or_unfinished_shard_is_not_returned(
    example: Path, tmp_path: Path
) -> None:
    evaluator = fresh(example, tmp_path / "p")
    evaluator.run_judges_async(run_id="r", shard=(1, 3))
    evaluator.run_judges_async(run_id="r", shard=(2, 3))
    assert evaluator.load_all_judge_results() == {}  # shard 3 of 3 never ran
    evaluator.run_judges_async(run_id="r", shard=(3, 3))
    # shard 3 unfinished, as a killed process leaves it
    files = RunFiles(tmp_path / "p" / "results", "r", JUDGE, shard=(3, 3))
    state = files.read_state()
    assert state is not None and state.shard == (3, 3)
    files.write_state(
        RunState(JUDGE, "r", state.fingerprint, state.created_at, None, {}, shard=(3, 3))
    )
    assert evaluator.load_all_judge_results() == {}
    # shards of another split do not complete this one
    evaluator.run_judges_async(run_id="r", shard=(1, 2))
    assert evaluator.load_all_judge_results() == {}
    evaluator.run_judges_async(run_id="r", shard=(2, 2))
    assert evaluator.load_all_judge_results()[JUDGE].results_data.height == 40


def test_an_unsharded_and_a_sharded_run_compete_by_completion_time(
    example: Path, tmp_path: Path
) -> None:
    evaluator = fresh(example, tmp_path / "p")
    evaluator.run_judges_async(run_id="early")
    evaluator.run_judges_async(run_id="sharded", shard=(1, 2))
    assert evaluator.load_all_judge_results()[JUDGE].run_id == "early"
    evaluator.run_judges_async(run_id="sharded", shard=(2, 2))
    assert evaluator.load_all_judge_results()[JUDGE].run_id == "sharded"
    evaluator.run_judges_async(run_id="late", resume=False)
    assert evaluator.load_all_judge_results()[JUDGE].run_id == "late"


def test_shards_run_in_two_project_copies_merge_once_copied_together(
    example: Path, tmp_path: Path, unsharded: pl.DataFrame
) -> None:
    first = fresh(example, tmp_path / "machine1")
    second = fresh(example, tmp_path / "machine2")
    first.run_judges_async(run_id="nightly", shard=(1, 2))
    second.run_judges_async(run_id="nightly", shard=(2, 2))
    assert first.load_all_judge_results() == {} and second.load_all_judge_results() == {}
    shutil.copytree(
        tmp_path / "machine2" / "results" / "nightly",
        tmp_path / "machine1" / "results" / "nightly",
        dirs_exist_ok=True,
    )
    merged = first.load_all_judge_results()[JUDGE]
    assert merged.results_data["original_id"].to_list() == ids_of(first)
    names = task_names(first)
    assert answers(merged.results_data, names) == answers(unsharded, names)


def test_merge_drops_duplicate_ids_keeping_the_first_shard(example: Path, tmp_path: Path) -> None:
    evaluator = fresh(example, tmp_path / "p")
    for k in (1, 2):
        evaluator.run_judges_async(run_id="r", shard=(k, 2))
    results = tmp_path / "p" / "results"
    first = RunFiles(results, "r", JUDGE, shard=(1, 2))
    second = RunFiles(results, "r", JUDGE, shard=(2, 2))
    stray = first.read_table().head(1).with_columns(pl.lit("copied").alias("status"))
    pl.concat([stray, second.read_table()]).write_parquet(second.table)  # a row of shard 1 in 2
    frame = evaluator.load_all_judge_results()[JUDGE].results_data
    assert frame["original_id"].to_list() == ids_of(evaluator)
    assert "copied" not in frame["status"].to_list()


# ----- resuming and locks -------------------------------------------------------------------


def test_a_killed_shard_resumes_without_asking_finished_rows(
    example: Path, tmp_path: Path, unsharded: pl.DataFrame
) -> None:
    evaluator = fresh(example, tmp_path / "p")
    evaluator.run_judges_async(run_id="r", shard=(2, 3))
    evaluator.run_judges_async(run_id="r", shard=(3, 3))
    files = RunFiles(tmp_path / "p" / "results", "r", JUDGE, shard=(2, 3))
    lines = files.rows.read_text(encoding="utf-8").splitlines(keepends=True)
    size = len(lines)
    assert size > 3
    # cut back to 3 rows, as a killed process leaves it
    files.rows.write_text("".join(lines[:3]), encoding="utf-8")
    files.table.unlink()
    state = files.read_state()
    assert state is not None
    files.write_state(
        RunState(JUDGE, "r", state.fingerprint, state.created_at, None, {}, shard=(2, 3))
    )
    other = RunFiles(tmp_path / "p" / "results", "r", JUDGE, shard=(3, 3)).rows.read_bytes()
    result = evaluator.run_judges_async(run_id="r", shard=(2, 3))[JUDGE]
    assert result.complete and result.results_data.height == size
    rows = list(read_rows(files.rows))
    assert len(rows) == size  # each row asked once: the 3 finished ones were not asked again
    assert files.rows.read_text(encoding="utf-8").startswith("".join(lines[:3]))
    assert RunFiles(tmp_path / "p" / "results", "r", JUDGE, shard=(3, 3)).rows.read_bytes() == other
    again = evaluator.run_judges_async(run_id="r", shard=(2, 3))[JUDGE]  # complete: no call
    assert len(list(read_rows(files.rows))) == size
    assert again.results_data.height == size
    evaluator.run_judges_async(run_id="r", shard=(1, 3))
    names = task_names(evaluator)
    merged = evaluator.load_all_judge_results()[JUDGE].results_data
    assert answers(merged, names) == answers(unsharded, names)


def test_each_shard_has_its_own_lock(tmp_path: Path) -> None:
    locks = [RunLock(RunFiles(tmp_path, "r", "j", shard=(k, 2))) for k in (1, 2)]
    whole = RunLock(RunFiles(tmp_path, "r", "j"))
    assert [lock.path.name for lock in [*locks, whole]] == [
        "j.shard-1-of-2.lock",
        "j.shard-2-of-2.lock",
        "j.lock",
    ]
    for lock in [*locks, whole]:
        lock.acquire()  # none blocks another
    for lock in [*locks, whole]:
        lock.release()


# ----- command line -------------------------------------------------------------------------


def test_cli_run_and_dry_run_count_the_shards_rows(example: Path, tmp_path: Path) -> None:
    project = tmp_path / "p"
    shutil.copytree(example, project)
    expected = sum(shard_of(i, 4) == 1 for i in ids_of(MetaEvaluator(project, load=True)))
    runner = CliRunner()
    dry = runner.invoke(app, ["run", str(project), "--shard", "2/4", "--run-id", "r", "--dry-run"])
    assert dry.exit_code == 0, (dry.output, dry.exception)
    assert "Shard 2/4" in dry.output
    assert re.search(rf"^  rows: +{expected}$", dry.output, re.M), dry.output
    assert re.search(rf"^  calls: +{expected}$", dry.output, re.M), dry.output
    assert not (project / "results" / "r").exists()
    done = runner.invoke(app, ["run", str(project), "--shard", "2/4", "--run-id", "r"])
    assert done.exit_code == 0, (done.output, done.exception)
    match = re.search(
        rf"^{JUDGE}: valid=(\d+) invalid=(\d+) error=(\d+) \(run r, shard 2/4\)$", done.output, re.M
    )
    assert match, done.output
    assert sum(map(int, match.groups())) == expected
    assert (project / "results" / "r" / f"{JUDGE}.shard-2-of-4.parquet").is_file()
    again = runner.invoke(
        app, ["run", str(project), "--shard", "2/4", "--run-id", "r", "--dry-run"]
    )
    assert re.search(rf"^  reused: +{expected}$", again.output, re.M), again.output
    assert re.search(r"^  calls: +0$", again.output, re.M), again.output
    status = runner.invoke(app, ["status", str(project)])
    assert "shard-2-of-4" not in status.output  # not shown as a judge of its own
    assert f"latest run r (sharded): 1 of 4 shard(s) complete, {expected} rows in them" in (
        status.output
    ), status.output


def test_a_judge_id_cannot_end_like_a_shards_files() -> None:
    from meta_evaluator.errors import JudgeConfigError
    from meta_evaluator.judge import Judge, Prompt

    with pytest.raises(JudgeConfigError, match="shard"):
        Judge(id="j.shard-1-of-2", llm_client="mock", model="m", prompt=Prompt(id="p", prompt="x"))
    Judge(id="j.shard", llm_client="mock", model="m", prompt=Prompt(id="p", prompt="x"))


@pytest.mark.parametrize("args", [["--shard", "0/4", "--run-id", "r"], ["--shard", "2/4"]])
def test_cli_rejects_a_bad_shard(example: Path, tmp_path: Path, args: list[str]) -> None:
    project = tmp_path / "p"
    shutil.copytree(example, project)
    for extra in ([], ["--dry-run"]):
        done = CliRunner().invoke(app, ["run", str(project), *args, *extra])
        assert isinstance(done.exception, JudgeConfigError), done.output


def test_an_unsharded_run_after_complete_shards_reuses_their_rows(
    example: Path, tmp_path: Path, unsharded: pl.DataFrame
) -> None:
    evaluator = fresh(example, tmp_path / "p")
    for k in (1, 2):
        evaluator.run_judges_async(run_id="sharded", shard=(k, 2))
    results = tmp_path / "p" / "results"
    before = sorted(p.relative_to(results) for p in results.rglob("*"))
    # Nothing is left to ask: the merged shards are returned as they are, nothing is written.
    again = evaluator.run_judges_async()[JUDGE]
    assert again.run_id == "sharded" and again.complete
    assert sorted(p.relative_to(results) for p in results.rglob("*")) == before
    names = task_names(evaluator)
    assert answers(again.results_data, names) == answers(unsharded, names)
    # The dry run says the same.
    out = CliRunner().invoke(app, ["run", str(tmp_path / "p"), "--dry-run"])
    assert out.exit_code == 0, out.output
    assert "run sharded is complete with every row" in out.output


def test_rows_of_complete_shards_seed_a_run_over_more_rows(example: Path, tmp_path: Path) -> None:
    evaluator = fresh(example, tmp_path / "p")
    for k in (1, 2):
        evaluator.run_judges_async(run_id="sharded", shard=(k, 2))
    sharded = evaluator.load_all_judge_results()[JUDGE].results_data
    assert evaluator.data is not None
    frame = evaluator.data.data
    extra = frame.head(3).with_columns(pl.col(evaluator.data.id_column) + 10_000)
    from meta_evaluator.data import DataLoader

    grown = pl.concat([frame, extra])
    evaluator.add_data(
        DataLoader.load_from_dataframe("grown", grown, evaluator.data.id_column), overwrite=True
    )
    result = evaluator.run_judges_async()[JUDGE]
    assert result.run_id != "sharded" and result.complete
    rows = read_rows(tmp_path / "p" / "results" / result.run_id / f"{JUDGE}.jsonl")
    asked = [r for r in rows if r["run_id"] == result.run_id]
    assert sorted(r["original_id"] for r in asked) == sorted(extra[evaluator.data.id_column])
    kept = result.results_data.filter(pl.col("run_id") == "sharded")
    assert kept.height == 40
    names = task_names(evaluator)
    old = sharded.sort("original_id")
    assert answers(kept.sort("original_id"), names) == answers(old, names)
