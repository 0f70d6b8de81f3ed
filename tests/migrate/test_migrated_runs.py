"""A migrated judge whose configuration is unchanged reuses its 0.3.3 rows: `status` says so,
`run` (and a 0.3.3 script's `skip_duplicates=True`) asks nothing, and a row whose prompt 0.3.3
filled in otherwise than we do is asked again, the migration report saying why.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.errors import MetaEvaluatorDeprecationWarning
from meta_evaluator.judge import fingerprint, prompt_hashes
from meta_evaluator.judge.run_files import RunFiles
from meta_evaluator.migrate import migrate_project
from tests.conftest import Main
from tests.judge.test_runner import completion

FIXTURE = Path(__file__).parent / "v033_project"
JUDGES = ["broken_judge", "gpt_judge", "mini_judge"]
RUNS = {"broken_judge": "run_one_broken_judge", "gpt_judge": "run_one_gpt_judge",
        "mini_judge": "run_two_mini_judge"}  # fmt: skip


@pytest.fixture
def old(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the 0.3.3 project folder; its judges' key variable is set (never sent)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-sent")
    folder = tmp_path / "project"
    shutil.copytree(FIXTURE, folder)
    return folder


class Calls:
    """A transport that answers every call (as the fake server does) and counts them."""

    def __init__(self) -> None:
        self.seen: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        return completion(request)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)


def edit_033_judge(folder: Path, judge_id: str, **fields: object) -> None:
    """Change a judge of 0.3.3's main_state.json, as 0.3.3 would have saved it."""
    path = folder / "main_state.json"
    state = json.loads(path.read_text())
    judge = state["judge_registry"][judge_id]
    for name, value in fields.items():
        if name == "prompt":
            judge["prompt"]["prompt"] = value
        else:
            judge[name] = value
    path.write_text(json.dumps(state, indent=2))


def run_time(run: str, *, iso: bool = False) -> str:
    """The time 0.3.3 recorded for a run, as status shows it (UTC; ISO 8601 in JSON)."""
    (path,) = FIXTURE.glob(f"results/{run}_*_state.json")
    local = dt.datetime.fromisoformat(json.loads(path.read_text())["timestamp_local"])
    shown = "%Y-%m-%dT%H:%M:%SZ" if iso else "%Y-%m-%d %H:%M:%S UTC"
    return local.astimezone().astimezone(dt.UTC).strftime(shown)


def test_migrated_runs_carry_the_keys_our_run_computes(old: Path) -> None:
    migrate_project(old)
    evaluator = MetaEvaluator(old, load=True)
    task, data = evaluator.eval_task, evaluator.data
    assert task is not None and data is not None
    rows = {r[data.id_column]: r for r in data.data.to_dicts()}
    for judge_id in JUDGES:
        judge = evaluator.judge_registry[judge_id]
        files = RunFiles(evaluator.paths.results_dir, RUNS[judge_id], judge_id)
        state = files.read_state()
        assert state is not None and state.fingerprint == fingerprint(judge, task)
        table = files.read_table()
        assert (table["fingerprint"] == state.fingerprint).all()
        ids = table["original_id"].to_list()
        assert table["prompt_hash"].to_list() == prompt_hashes(judge, task, [rows[i] for i in ids])
    external = RunFiles(evaluator.paths.results_dir, "external_run_1", "external_judge")
    external_state = external.read_state()
    assert external_state is not None and external_state.fingerprint.startswith("migrated-0.3.3:")


def test_run_asks_nothing_of_an_unchanged_migrated_judge(old: Path) -> None:
    report = migrate_project(old)
    lines = "\n".join(report.lines())
    for judge_id in JUDGES:
        assert f"run {RUNS[judge_id]!r}" in lines
    assert lines.count("`run` reuses its 6 rows (the judge is unchanged)") == 3
    assert "kept for scoring only: the 0.3.3 project has no judge 'external_judge'" in lines
    evaluator = MetaEvaluator(old, load=True)
    calls = Calls()
    plan = evaluator.plan_run()
    assert [(p.judge_id, p.action, len(p.todo)) for p in plan.judges] == [
        (j, "done", 0) for j in JUDGES
    ]
    results = evaluator.run_judges_async(transport=calls.transport(), cache=False)
    assert calls.seen == []
    assert {j: r.run_id for j, r in results.items()} == RUNS
    gpt = results["gpt_judge"].results_data
    assert gpt["outcome"].to_list().count("valid") == 3  # the rows as migrated, not asked again
    with pytest.warns(MetaEvaluatorDeprecationWarning, match="skip_duplicates"):
        again = evaluator.run_judges_async(
            skip_duplicates=True, transport=calls.transport(), cache=False
        )
    assert calls.seen == [] and {j: r.run_id for j, r in again.items()} == RUNS


def test_a_changed_prompt_is_asked_again(old: Path) -> None:
    """The keys are the judge's: a prompt changed after the migration asks every row."""
    migrate_project(old)
    evaluator = MetaEvaluator(old, load=True)
    judge = evaluator.judge_registry["gpt_judge"]
    evaluator.add_judge(
        "gpt_judge", "openai", judge.model, judge.prompt.prompt + " Answer briefly.",
        temperature=judge.temperature, overwrite=True,
    )  # fmt: skip
    calls = Calls()
    evaluator.run_judges_async(judge_ids=["gpt_judge"], transport=calls.transport(), cache=False)
    assert len(calls.seen) == 6


def test_status_and_the_dry_run_after_migrate(old: Path, entry: Main) -> None:
    assert entry("migrate", old).returncode == 0
    status = entry("status", old)
    assert status.returncode == 0, status.stderr
    assert "configuration has changed" not in status.stdout
    for judge_id in JUDGES:
        (line,) = [s for s in status.stdout.splitlines() if f"latest run {RUNS[judge_id]}:" in s]
        assert line.endswith(f"complete, last changed {run_time(RUNS[judge_id])}")
    data = json.loads(entry("status", old, "--json").stdout)
    gpt = data["judges"]["gpt_judge"]["latest_run"]
    assert gpt["configuration_changed"] is False
    assert gpt["last_changed"] == run_time("run_one_gpt_judge", iso=True)
    dry = entry("run", old, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "Total: 3 judges, 18 rows, 18 reused, 0 calls" in dry.stdout


Edit = Callable[[Path], None]
WITH_LENGTH = "Prompt: {prompt}\nResponse: {llm_response}\nLength: {length}"


@pytest.mark.parametrize(
    ("edit", "reused", "says"),
    [
        pytest.param(
            lambda folder: edit_033_judge(folder, "gpt_judge", prompt=WITH_LENGTH),
            0,
            "`run` reuses 0 of its 6 rows and asks 6 again, whose prompts 0.3.3 filled in "
            "differently: 0.3.3 sent {length} as written: not a prompt or response column",
            id="a placeholder 0.3.3 did not fill",
        ),
        pytest.param(
            lambda folder: edit_033_judge(
                folder, "gpt_judge", prompt='{{"rejection": ...}}\n{prompt}\n{llm_response}'
            ),
            0,
            "0.3.3 sent the doubled braces {{ }} as written",
            id="doubled braces",
        ),
        pytest.param(
            lambda folder: (folder / "data" / "main_state_data.csv").write_text(
                (FIXTURE / "data" / "main_state_data.csv")
                .read_text()
                .replace("What is 2+2?", "Repeat {llm_response}")
            ),
            5,
            "`run` reuses 5 of its 6 rows and asks 1 again, whose prompts 0.3.3 filled in "
            "differently: a value holding {llm_response}, which 0.3.3 filled in too",
            id="a value 0.3.3 filled in again",
        ),
        pytest.param(
            lambda folder: edit_033_judge(folder, "gpt_judge", model="gpt-4o"),
            0,
            "`run` reuses none of its rows: they were made by openai 'gpt-4o-mini', the judge "
            "is now openai 'gpt-4o'",
            id="the judge changed after the run",
        ),
        pytest.param(
            lambda folder: edit_033_judge(folder, "gpt_judge", llm_client="bedrock"),
            0,
            "`run` reuses none of its rows: its judge was not carried over",
            id="a judge not migrated",
        ),
    ],
)
def test_rows_our_run_would_not_send_are_asked_again_and_said(
    old: Path, edit: Edit, reused: int, says: str
) -> None:
    edit(old)
    report = migrate_project(old)
    (run,) = [r for r in report.built.runs if r.judge_id == "gpt_judge"]
    assert run.reused == reused
    assert run.not_reused is not None and says in run.not_reused
    assert f"    {run.not_reused}" in report.lines()
    record = json.loads((old / "migrated-from-0.3.3" / "migration.json").read_text())
    assert f"    {run.not_reused}" in record["report"]
    evaluator = MetaEvaluator(old, load=True)
    if "gpt_judge" not in evaluator.judge_registry:
        return  # not carried over: nothing to run
    calls = Calls()
    results = evaluator.run_judges_async(
        judge_ids=["gpt_judge"], transport=calls.transport(), cache=False
    )
    assert len(calls.seen) == 6 - reused  # each row asked once: the others reused
    asked = {json.loads(r.content)["messages"][0]["content"] for r in calls.seen}
    assert len(asked) == 6 - reused
    assert results["gpt_judge"].results_data.height == 6


def test_judges_with_nothing_to_ask_need_no_key(
    old: Path, entry: Main, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every migrated row reused: no call, so no key (a nightly job without the secret)."""
    migrate_project(old)
    monkeypatch.delenv("OPENAI_API_KEY")
    dry = entry("run", old, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "Total: 3 judges, 18 rows, 18 reused, 0 calls" in dry.stdout
    done = entry("run", old, "--json", "--judges", "gpt_judge,mini_judge")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["totals"]["reused"] == 12
    every = entry("run", old)  # exit 1: the broken judge's 0.3.3 rows are errors, not the key
    assert every.returncode == 1 and "OPENAI_API_KEY" not in every.stdout + every.stderr
    # Rows to ask (the broken judge's errors, asked again): that judge alone is refused, with
    # how many rows it would ask; the others need nothing and run.
    retry = entry("run", old, "--dry-run", "--retry", "error")
    assert retry.returncode == 2
    refused = "judge 'broken_judge': api_key_env: variable OPENAI_API_KEY is not set"
    assert f"Refused (makes no call; the others run): {refused}" in retry.stdout
    assert "it needs OPENAI_API_KEY to ask 6 row(s)" in retry.stdout
    assert "gpt_judge: openai" in retry.stdout and "mini_judge: openai" in retry.stdout
    alone = entry("run", old, "--judges", "broken_judge", "--retry", "error")
    assert alone.returncode == 2 and refused in alone.stderr and "6 row(s)" in alone.stderr


def test_migrate_writes_the_metrics_033_scored_and_score_computes_them_again(
    old: Path, entry: Main
) -> None:
    """0.3.3 kept its metrics in the script; its scores/ folders say which they were."""
    report = migrate_project(old)
    note = next(line for line in report.lines() if "metrics.yaml" in line)
    assert f"`meta-evaluator score {old}` scores them again" in note
    scored = entry("score", old)  # exit 1: broken_judge has no valid rows, as in 0.3.3
    assert scored.returncode == 1 and "no metrics" not in scored.stderr, scored.stderr
    assert "broken_judge: not scored" in scored.stdout
    for scorer, metric in (
        ("classification_accuracy", "accuracy"),
        ("cohens_kappa", "kappa"),
    ):
        (folder,) = (FIXTURE / "scores" / scorer).iterdir()
        theirs = json.loads((folder / "gpt_judge_result.json").read_text())["scores"][metric]
        ours = json.loads(
            (old / "scores" / scorer / folder.name / "gpt_judge_result.json").read_text()
        )
        assert ours["scores"][metric] == pytest.approx(theirs)  # 0.3.3's own number, same folder
    # A metrics.yaml of the user's stays as it is, and is the one `score` reads.
    again = old.parent / "again"
    shutil.copytree(FIXTURE, again)
    (again / "metrics.yaml").write_text(
        "metrics:\n  - scorer: accuracy\n    task_names: [rejection]\n"
        "    aggregation_name: single\n"
    )
    assert "own metrics.yaml" in "\n".join(migrate_project(again).lines())
    assert "scorer: accuracy\n" in (again / "metrics.yaml").read_text()
