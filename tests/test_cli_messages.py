"""What the command line says: commands to type rather than Python arguments, what each command
keeps when the file system refuses a write, and times in JSON as ISO 8601."""

from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path

import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.errors import ProjectError, ProjectExistsError, ProjectNotFoundError
from tests.conftest import Main


def test_a_missing_project_names_the_command_that_makes_one(entry: Main, tmp_path: Path) -> None:
    nowhere, empty = tmp_path / "nowhere", tmp_path / "empty"
    empty.mkdir()
    for folder, what in ((nowhere, "no such folder"), (empty, "holds no project")):
        done = entry("status", folder)
        assert done.returncode == 2
        assert done.stderr == (
            f"error: {folder}: {what}{' (main_state.json is missing)' if folder == empty else ''}"
            f"; check the path, or create a project there with `meta-evaluator init {folder}`.\n"
        )
    done = entry("run", nowhere, "--json")
    error = json.loads(done.stdout)["error"]
    assert f"`meta-evaluator init {nowhere}`" in error and "load=" not in error
    # Python callers keep the advice that fits them
    with pytest.raises(ProjectNotFoundError, match="pass load=False to create a project"):
        MetaEvaluator(nowhere, load=True)


def test_init_on_a_project_names_the_commands_that_work_on_it(entry: Main, project: Path) -> None:
    done = entry("init", project)
    assert done.returncode == 2
    assert "already holds a project" in done.stderr and "MetaEvaluator(" not in done.stderr
    assert f"(`meta-evaluator status {project}`)" in done.stderr
    with pytest.raises(
        ProjectExistsError, match=r"open it with MetaEvaluator\(\.\.\., load=True\)"
    ):
        MetaEvaluator(project, load=False)


@pytest.fixture
def two_runs(entry: Main, project: Path) -> tuple[Path, list[str]]:
    """The example with two complete runs of its judge."""
    for extra in ((), ("--no-resume",)):
        assert entry("run", project, "--progress", "off", *extra).returncode == 0
    runs = sorted(p.name for p in (project / "results").iterdir())
    assert len(runs) == 2
    return project, runs


@pytest.mark.parametrize(
    ("command", "kept"),
    [
        ("score", "The judges' results are untouched, and so are the scores saved before it."),
        ("report", "The judges' results and scores are untouched; the next `report` writes"),
        ("compare-runs", "The runs compared are untouched; the comparison was not saved."),
    ],
)
def test_a_read_only_project_says_what_each_command_keeps(
    entry: Main,
    two_runs: tuple[Path, list[str]],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    kept: str,
) -> None:
    """Before, each said "Rows already saved are kept.", which is what a run keeps."""
    from meta_evaluator import storage

    project, runs = two_runs

    def read_only(*args: object) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(storage.os, "fsync", read_only)
    done = entry(command, project, *(runs if command == "compare-runs" else ()))
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert "the file system is read-only" in done.stderr
    assert kept in done.stderr and "Rows already saved" not in done.stderr
    assert "Traceback" not in done.stderr


def test_status_json_gives_times_in_iso_8601(entry: Main, project: Path) -> None:
    assert entry("run", project, "--progress", "off").returncode == 0
    summary = json.loads(entry("status", project, "--json").stdout)
    changed = summary["judges"]["mock_refusal_judge"]["latest_run"]["last_changed"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", changed), changed
    text = entry("status", project).stdout  # people read the same moment as before
    assert changed.replace("T", " ").replace("Z", " UTC") in text


@pytest.fixture
def bare(entry: Main, tmp_path: Path) -> dict[str, Path]:
    """Projects lacking a step: nothing at all, data without a task, labels without humans."""
    configs = Path(__file__).parents[1] / "configs"
    empty, data, unlabelled = tmp_path / "empty", tmp_path / "data", tmp_path / "unlabelled"
    assert entry("init", empty).returncode == 0
    tickets = configs / "data" / "support_tickets.csv"
    for folder in (data, unlabelled):
        assert entry("init", folder, "--data", tickets, "--id-column", "ticket_id").returncode == 0
    assert entry("add-task", unlabelled, configs / "project.yaml").returncode == 0
    imported = entry(
        "import-results", unlabelled, configs / "results" / "keyword_rule.csv", "--judge", "kw",
        "--id-column", "ticket_id",
    )  # fmt: skip
    assert imported.returncode == 0
    metrics = tmp_path / "accuracy.yaml"
    metrics.write_text(
        "metrics:\n  - {scorer: accuracy, task_names: [resolved], aggregation_name: single}\n",
        encoding="utf-8",
    )
    return {"empty": empty, "data": data, "unlabelled": unlabelled, "metrics": metrics}


@pytest.mark.parametrize(
    ("folder", "args", "said", "python"),
    [
        ("empty", ("compare-runs", "{p}", "run_a", "run_b"),
         "the project has no task yet; add one with `meta-evaluator add-task {p} task.yaml`.",
         ("compare_runs", ("run_a", "run_b"), "add one with add_eval_task")),
        ("data", ("plan-labels", "{p}"),
         "the project has no task yet; add one with `meta-evaluator add-task {p} task.yaml`.",
         ("plan_labels", (), "add one with add_eval_task")),
        ("empty", ("plan-labels", "{p}"),
         "the project has no data yet; add it with `meta-evaluator add-data {p} FILE "
         "--id-column COLUMN`.",
         ("plan_labels", (), "add it with add_data")),
        ("unlabelled", ("score", "{p}", "--metrics", "{metrics}"),
         "there are no human annotations to score the judges against; import them with "
         "`meta-evaluator import-annotations {p} FILE --annotator NAME`, or label rows with "
         "`meta-evaluator annotate {p}`.",
         ("compare_async", ("{metrics}",), "import them with add_external_annotation_results")),
    ],
)  # fmt: skip
def test_a_project_lacking_a_step_names_the_command_that_adds_it(
    entry: Main,
    bare: dict[str, Path],
    folder: str,
    args: tuple[str, ...],
    said: str,
    python: tuple[str, tuple[str, ...], str],
) -> None:
    """Before, `compare-runs` on a project without a task said "add one with add_eval_task"."""
    from meta_evaluator.errors import MetaEvaluatorError
    from meta_evaluator.scores.yaml_config import read_metrics_yaml

    project = bare[folder]
    filled = [a.format(p=project, metrics=bare["metrics"]) for a in args]
    done = entry(*filled)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr == f"error: {said.format(p=project)}\n"
    if args[0] == "plan-labels":  # the JSON's error says the same
        summary = json.loads(entry(*filled, "--json").stdout)
        assert summary["error"] == said.format(p=project)
    method, arguments, advice = python  # Python callers keep the call that fits them
    given = [read_metrics_yaml(bare["metrics"]) if a == "{metrics}" else a for a in arguments]
    with pytest.raises(MetaEvaluatorError, match=advice) as raised:
        getattr(MetaEvaluator(project, load=True), method)(*given)
    assert raised.value.project_dir == project


def test_the_viewer_of_a_project_without_runs_names_the_commands(
    entry: Main, project: Path
) -> None:
    done = entry("view", project, "--port", "0")
    assert done.returncode == 2
    assert done.stderr.endswith(
        f"; run the judges first (`meta-evaluator run {project}`), or import a judge's labels "
        f"(`meta-evaluator import-results {project} FILE --judge NAME`).\n"
    ), done.stderr
    assert "add_external_judge_results" not in done.stderr
    with pytest.raises(ProjectError, match=r"import results \(add_external_judge_results\)"):
        MetaEvaluator(project, load=True).launch_viewer(port=0)


ISO_Z = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def times_in(value: object) -> list[str]:
    """Every string of a JSON value that starts like a time (`2026-11-28T...`)."""
    if isinstance(value, dict):
        return [t for v in value.values() for t in times_in(v)]
    if isinstance(value, list):
        return [t for v in value for t in times_in(v)]
    return [value] if isinstance(value, str) and re.match(r"\d{4}-\d\d-\d\dT", value) else []


def test_every_json_the_commands_write_gives_times_in_iso_8601_utc_seconds(
    entry: Main, two_runs: tuple[Path, list[str]]
) -> None:
    """Before, drift and compare-runs wrote `2026-11-28T14:35:42.123456+00:00`."""
    project, (run_a, run_b) = two_runs
    reports = project / "reports"
    judge = "mock_refusal_judge"
    outputs: dict[str, tuple[object, int]] = {}  # what -> (its JSON, the times it holds)
    drift = entry("drift", project, "--judge", judge, "--json")
    assert drift.returncode == 0, drift.stderr
    outputs["drift --json"] = (json.loads(drift.stdout), 3)  # the check, and each run's end
    lines = (reports / "drift_history.jsonl").read_text(encoding="utf-8").splitlines()
    outputs["drift history"] = (json.loads(lines[-1]), 3)
    compared = entry("compare-runs", project, run_a, run_b, "--json")
    assert compared.returncode == 0, compared.stderr
    outputs["compare-runs --json"] = (json.loads(compared.stdout), 2)  # each run's end
    (saved,) = (reports / "compare-runs").glob("*.json")
    outputs["compare-runs file"] = (json.loads(saved.read_text(encoding="utf-8")), 2)
    planned = entry("plan-labels", project, "--json", "--simulations", "10")
    assert planned.returncode == 0, planned.stderr
    outputs["plan-labels --json"] = (json.loads(planned.stdout), 0)  # no time in it (yet)
    plan_file = (reports / "label_plan.json").read_text(encoding="utf-8")
    outputs["plan-labels file"] = (json.loads(plan_file), 0)
    ran = entry("run", project, "--progress", "off", "--json")
    outputs["run --json"] = (json.loads(ran.stdout), 0)
    status = entry("status", project, "--json")
    outputs["status --json"] = (json.loads(status.stdout), 1)
    for what, (found, count) in outputs.items():
        times = times_in(found)
        assert len(times) == count, (what, times)
        assert all(ISO_Z.fullmatch(t) for t in times), (what, times)


def test_the_one_json_time_helper() -> None:
    import datetime as dt
    import doctest

    from meta_evaluator import _util
    from meta_evaluator._util import json_time

    assert doctest.testmod(_util).failed == 0
    paris = dt.timezone(dt.timedelta(hours=1))
    assert (
        json_time(dt.datetime(2026, 11, 28, 15, 35, 42, 999_999, paris)) == "2026-11-28T14:35:42Z"
    )
    assert json_time("2026-11-28T14:35:42.5") == "2026-11-28T14:35:42Z"  # no zone: UTC
    assert json_time("2026-11-28T14:35:42Z") == "2026-11-28T14:35:42Z"
    assert json_time(None) is None
    with pytest.raises(ValueError):
        json_time("yesterday")


def test_the_projects_own_names_are_listed_whole_and_a_long_list_says_how_many_more() -> None:
    from meta_evaluator._util import listed, shown

    names = [f"run_{i:02d}_with_a_rather_long_name" for i in range(20)]
    assert listed(names) == repr(names)  # 20 names: every one, past shown's 80 characters
    assert shown(names).endswith("...") and names[-1] not in shown(names)
    many = [*names, "the_last_run"]
    text = listed(many)
    assert text.startswith(repr(names[:10])[:-1] + ", ... 1 more ..., ")
    assert text.endswith(f"{repr(names[11:])[1:-1]}, 'the_last_run']")
    assert listed([]) == "[]"
    long = "x" * 500  # a name is still bounded as a value is
    assert listed([long]) == f"[{shown(long)}]" and len(listed([long])) < 100


def test_the_command_line_names_flags_and_python_callers_arguments(
    entry: Main, tmp_path: Path
) -> None:
    """`choose one with --task T (task=...)` spoke both languages at once (trial #9)."""
    from meta_evaluator.errors import TaskError
    from tests.scores.test_run_comparison import IDS, _write, make_project

    evaluator = make_project(
        tmp_path, extra_task={"tone": ["calm", "rude"]}, required=["verdict", "tone"]
    )
    root = evaluator.project_dir
    done = entry("compare-runs", root, "mon", "tue")
    assert done.returncode == 2
    assert done.stderr == (
        "error: the project has several labelled tasks ['verdict', 'tone'] and no single "
        "required one among them; choose one with --task T.\n"
    )
    with pytest.raises(TaskError, match=r"; choose one with task=\.\.\.$") as raised:
        evaluator.compare_runs("mon", "tue")
    assert "--task" not in str(raised.value)
    source = _write(tmp_path / "k.csv", IDS, "verdict", ["no"] * 6)
    evaluator.add_external_judge_results(source, "k", run_id="tue", tasks=["verdict"])
    done = entry("compare-runs", root, "mon", "tue", "--task", "verdict")
    assert done.stderr == (
        "error: run_b: run 'tue' holds the judges ['j', 'k']; name one with --judge J or as "
        "tue:JUDGE.\n"
    )
    with pytest.raises(ProjectError, match=r"name one with judge_id=\.\.\. or as tue:JUDGE"):
        evaluator.compare_runs("mon", "tue", task="verdict")
    done = entry("plan-labels", root, "--task", "verdict", "--json")
    error = json.loads(done.stdout)["error"]
    assert error == (
        "several judges have labels of task 'verdict' (['j', 'k']); name one with --judge J."
    )


def test_a_list_of_long_names_stays_under_an_errors_line_limit() -> None:
    """30 names of 48 characters passed the 1,000-character line limit: the message's end and
    its advice were cut (review). Fewer names are shown instead, and how many are not."""
    from meta_evaluator._util import LISTED_CHARACTERS, listed
    from meta_evaluator.errors import ProjectError

    names = [f"a_rather_long_column_name_variant_{i:02d}_with_suffix" for i in range(30)]
    text = listed(names)
    assert len(text) <= LISTED_CHARACTERS
    assert repr(names[0]) in text and repr(names[-1]) in text and " more ..., " in text
    message = ProjectError(f"no column 'x' (columns: {text}); fix the prompt or the data.").message
    assert message.endswith("fix the prompt or the data.")
