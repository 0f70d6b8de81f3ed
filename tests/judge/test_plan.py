"""The two stages of a run: `plan_run` finds every problem, and the run reports the same ones.

A dry run is the plan printed; the run executes that same plan. So for one project, the dry
run and the real run must name the same judges with the same problems, whether a problem
stops the whole run (before any call) or only its own judge (a key that cannot be read).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.errors import JudgeConfigError, JudgeRunError, StateError, UnsafeNameError
from meta_evaluator.judge import RunPlan, RunSettings
from tests.conftest import Main, rejection_project

UNSET = "META_EVALUATOR_TEST_UNSET_KEY"


@pytest.fixture
def evaluator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MetaEvaluator:
    monkeypatch.delenv(UNSET, raising=False)
    frame = pl.DataFrame(
        {"qid": [1, 2, 3], "prompt": ["p1", "p2", "p3"], "response": ["r1", "r2", "r3"]}
    )
    evaluator = rejection_project(tmp_path / "project", frame)
    evaluator.add_judge("offline", "mock", "mock-1", "Judge {response}")
    evaluator.add_judge(
        "keyless", "openai", "gpt-x", "Judge {response}", api_key_env=UNSET
    )  # its key variable is not set: it alone makes no call
    evaluator.save_state()
    return evaluator


def _messages(errors: list[dict[str, object]]) -> set[tuple[object, str]]:
    """(judge id, message) of each problem an error lists."""
    return {(next(iter(e["loc"])), str(e["msg"])) for e in errors}  # type: ignore[call-overload]


def test_a_key_problem_is_refused_in_the_plan_and_stops_only_its_judge_in_the_run(
    evaluator: MetaEvaluator,
) -> None:
    plan = evaluator.plan_run()
    assert isinstance(plan, RunPlan)
    assert [p.judge_id for p in plan.judges] == ["offline"]
    assert [exc.judge_id for exc in plan.refused] == ["keyless"]
    planned = {(exc.judge_id, exc.message) for exc in plan.refused}

    with pytest.raises(JudgeRunError) as stopped:
        evaluator.run_judges_async()
    reported = {(judge, msg) for judge, msg in _messages(stopped.value.errors)}
    assert reported == planned
    assert stopped.value.results["offline"].counts()["valid"] == 3  # the other judge ran


def test_problems_that_stop_the_run_are_the_same_in_plan_and_run(
    evaluator: MetaEvaluator,
) -> None:
    evaluator.add_judge(
        "azure_half", "azure_openai", "gpt-x", "Judge {response}", api_version="2024-06-01"
    )  # azure without base_url: the whole run stops, before any call
    with pytest.raises(JudgeConfigError) as planned:
        evaluator.plan_run()
    with pytest.raises(JudgeConfigError) as ran:
        evaluator.run_judges_async()
    assert _messages(ran.value.errors) == _messages(planned.value.errors)
    assert {judge for judge, _ in _messages(ran.value.errors)} == {"keyless", "azure_half"}
    assert not (evaluator.paths.results_dir).exists() or not any(
        evaluator.paths.results_dir.rglob("*.jsonl")
    )  # the offline judge was not run either


def test_the_dry_run_and_the_run_print_the_same_problems(
    evaluator: MetaEvaluator, entry: Main
) -> None:
    project = evaluator.project_dir
    dry = entry("run", project, "--dry-run")
    real = entry("run", project)
    assert dry.returncode == real.returncode == 2
    problem = f"judge 'keyless': api_key_env: variable {UNSET} is not set"
    assert problem in dry.stdout + dry.stderr and problem in real.stderr


def test_the_plan_is_what_the_run_does(evaluator: MetaEvaluator) -> None:
    evaluator.run_judges_async(["offline"], run_id="first")
    again = evaluator.plan_run(["offline"], run_id="first")
    (judge,) = again.judges
    # complete with every row: nothing is asked and nothing written (no lock, no new state)
    assert judge.action == "done" and len(judge.kept) == 3 and judge.todo == ()
    assert not judge.writes and again.summary().calls == 0
    state = judge.files.state.read_bytes()
    assert evaluator.run_judges_async(plan=again)["offline"].counts()["valid"] == 3
    assert judge.files.state.read_bytes() == state
    fresh = evaluator.plan_run(["offline"], run_id="first", resume=False)
    assert fresh.judges[0].action == "restart" and len(fresh.judges[0].todo) == 3


def test_run_options_are_one_settings_object(evaluator: MetaEvaluator) -> None:
    with pytest.raises(JudgeConfigError, match="did you mean 'max_concurrency'") as caught:
        evaluator.plan_run(max_concurency=4)
    assert caught.value.field == "max_concurency"
    with pytest.raises(JudgeConfigError) as many:
        evaluator.run_judges_async(max_concurrency=0, max_retries=-1, timeout=float("nan"))
    assert {e["loc"] for e in many.value.errors} == {"max_concurrency", "max_retries", "timeout"}
    settings = RunSettings(max_concurrency=2, consistency=1)
    plan = evaluator.plan_run(["offline"], settings=settings, max_retries=0)
    assert plan.settings.max_concurrency == 2 and plan.settings.max_retries == 0


def test_a_plan_is_not_executed_once_its_run_changed(evaluator: MetaEvaluator) -> None:
    """Executed late, a plan would ask again the rows another run answered meanwhile."""
    plan = evaluator.plan_run(["offline"], run_id="late")
    evaluator.run_judges_async(["offline"], run_id="late")
    rows = (evaluator.paths.results_dir / "late" / "offline.jsonl").read_bytes()
    with pytest.raises(StateError, match="changed since it was planned"):
        evaluator.run_judges_async(plan=plan)
    assert (evaluator.paths.results_dir / "late" / "offline.jsonl").read_bytes() == rows
    with pytest.raises(JudgeConfigError, match="plan= alone"):
        evaluator.run_judges_async(["offline"], plan=plan)


def test_a_damaged_row_file_names_the_file_and_row(evaluator: MetaEvaluator) -> None:
    evaluator.run_judges_async(["offline"], run_id="r")
    path = evaluator.paths.results_dir / "r" / "offline.jsonl"
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace('"outcome"', '"outcome_was"')
    path.write_text("\n".join(lines) + "\n")
    # A complete run's rows come from its table: while it is there, the damage is not read.
    assert evaluator.plan_run(["offline"], run_id="r").judges[0].action == "done"
    path.with_suffix(".parquet").unlink()  # without it, the row store is read
    with pytest.raises(StateError, match=r"offline.jsonl: row 2 has no 'outcome'") as caught:
        evaluator.plan_run(["offline"], run_id="r")
    assert caught.value.path == path


def test_every_problem_of_the_call_at_once(evaluator: MetaEvaluator) -> None:
    with pytest.raises(JudgeConfigError) as caught:
        evaluator.plan_run(["nope"], "../x", max_concurrency=0, timeout="inf")  # type: ignore[typeddict-item]
    where = {e["loc"] for e in caught.value.errors}
    assert {"judge_ids", "run_id", "max_concurrency", "timeout"} <= where


def test_a_single_problem_is_listed_in_errors_too(evaluator: MetaEvaluator) -> None:
    evaluator.add_judge("azure_half", "azure_openai", "gpt-x", "J {response}", api_version="v")
    with pytest.raises(JudgeConfigError) as caught:
        evaluator.plan_run(["azure_half"])
    assert [e["loc"] for e in caught.value.errors] == [("azure_half", "base_url")]


def test_the_typed_options_name_every_setting() -> None:
    """`RunOptions` (for type checkers) and `RunSettings` (which validates) list the same."""
    from meta_evaluator.judge import RunOptions

    assert list(RunOptions.__annotations__) == list(RunSettings.model_fields)


def test_a_string_judge_id_is_one_judge(evaluator: MetaEvaluator) -> None:
    """As the original docs wrote it: run_judges_async("judge") runs that judge."""
    plan = evaluator.plan_run("offline")
    assert [p.judge_id for p in plan.judges] == ["offline"]


def test_a_lone_problem_of_the_call_is_listed_in_errors(evaluator: MetaEvaluator) -> None:
    with pytest.raises(JudgeConfigError) as unknown:
        evaluator.plan_run(["nope"])
    assert [e["loc"] for e in unknown.value.errors] == ["judge_ids"]
    with pytest.raises(UnsafeNameError) as unsafe:
        evaluator.plan_run(run_id="../x")
    assert [e["loc"] for e in unsafe.value.errors] == ["run_id"]


def test_a_plan_can_be_pickled(evaluator: MetaEvaluator) -> None:
    import pickle

    evaluator.run_judges_async(["offline"], run_id="p")
    plan = evaluator.plan_run(["offline"], run_id="p", retry=["invalid"])
    again = pickle.loads(pickle.dumps(plan))
    assert again.judges[0].kept == plan.judges[0].kept and again.settings == plan.settings


def test_a_write_while_planning_is_seen_at_execution(
    evaluator: MetaEvaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The snapshot is taken before the run's rows are read, so a write in between counts."""
    from meta_evaluator.judge import _reuse

    evaluator.run_judges_async(["offline"], run_id="w", resume=False)
    rows = evaluator.paths.results_dir / "w" / "offline.jsonl"
    lines = rows.read_text().splitlines(keepends=True)
    rows.write_text("".join(lines[:1]))  # an unfinished run: two rows still to ask
    rows.with_suffix(".parquet").unlink()  # (a complete run's rows would come from its table)
    real = _reuse.sort_rows

    def sort_while_another_process_writes(*args: object, **kwargs: object) -> object:
        with rows.open("a") as other:
            other.write("".join(lines[1:]))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("meta_evaluator.judge.plan.sort_rows", sort_while_another_process_writes)
    plan = evaluator.plan_run(["offline"], run_id="w")
    with pytest.raises(StateError, match="changed since it was planned"):
        evaluator.run_judges_async(plan=plan)


def test_an_unset_key_with_a_dotenv_file_here_says_it_is_not_read(
    evaluator: MetaEvaluator, entry: Main, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0.3.3's tutorial kept keys in .env and loaded it with python-dotenv; we read no file."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    without = entry("run", evaluator.project_dir, "--dry-run")
    assert without.returncode == 2 and ".env" not in without.stdout + without.stderr
    (work / ".env").write_text(f"{UNSET}=sk-in-a-file\n")
    told = entry("run", evaluator.project_dir, "--dry-run")
    assert told.returncode == 2 and "sk-in-a-file" not in told.stdout + told.stderr
    assert f"variable {UNSET} is not set" in told.stderr
    assert "a .env file is in the working folder, but meta-evaluator does not read it" in (
        told.stderr
    )
    assert "set -a; . ./.env; set +a" in told.stderr and "dotenv.load_dotenv()" in told.stderr
