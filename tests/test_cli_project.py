"""Projects from files and one command: init --from / --data, add-*, import-*, all, --json.

The shipped configs/project.yaml is built, run, scored and reported exactly as the docs say;
the same project made with the separate commands gets the same scores; a scheduled run (CI,
no terminal, a subprocess) prints progress lines and ends with a JSON summary.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml

from meta_evaluator import MetaEvaluator, __version__
from tests.conftest import Main

ROOT = Path(__file__).parents[1]
CONFIGS = ROOT / "configs"
PROJECT_YAML = CONFIGS / "project.yaml"


def scores_of(project: Path) -> dict[str, dict[str, Any]]:
    """Every judge's scores (and intervals) under scores/, by metric folder and judge."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted((project / "scores").glob("*/*/*_result.json")):
        result = json.loads(path.read_text())
        key = f"{path.parent.parent.name}/{path.parent.name}"
        found.setdefault(key, {})[result["judge_id"]] = (
            result["scores"],
            result.get("confidence_intervals"),
        )
    return found


def test_init_from_the_shipped_project_yaml_then_run_score_report(
    entry: Main, tmp_path: Path
) -> None:
    project = tmp_path / "support"
    done = entry("init", project, "--from", PROJECT_YAML)
    assert done.returncode == 0, done.stderr
    assert "32 rows, id column 'ticket_id' (Int64)" in done.stdout
    assert "annotators: 3" in done.stdout and "keyword_rule" in done.stdout
    for command in ("run", "score", "report"):
        done = entry(command, project)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    scores = pl.read_csv(project / "reports" / "scores.csv")
    judges = set(scores.get_column("judge").to_list())
    assert judges == {"mock_support_judge", "mock_brief_judge", "keyword_rule"}
    metrics = {m.split("/")[-1] for m in scores.get_column("metric").to_list()}
    assert metrics == {
        "resolved_accuracy",
        "resolved_kappa",
        "both_tasks_accuracy",
        "resolved_alpha",
    }
    assert scores.height >= 12 and scores.filter(pl.col("judge") == "keyword_rule").height >= 4
    html = (project / "reports" / "report.html").read_text()
    assert "resolved_accuracy" in html and "mock_support_judge" in html
    # The project's own project.yaml names files inside it, and builds the same project again.
    own = yaml.safe_load((project / "project.yaml").read_text())
    assert own["data"]["file"] == "inputs/data/support_tickets.csv"
    assert own["judges"][0]["prompt_file"] == "judges/prompts/support.md"
    assert own["judges"][1] == "judges/support-judges.yaml"
    assert [a["path"] for a in own["annotations"]] == [
        f"inputs/annotations/{name}.csv" for name in ("ana", "ben", "chen")
    ]
    assert own["drift"] == yaml.safe_load(PROJECT_YAML.read_text())["drift"]
    assert (project / "judges" / "support-judges.yaml").read_bytes() == (
        CONFIGS / "support-judges.yaml"
    ).read_bytes()  # kept byte for byte, comments and all
    again = tmp_path / "again"
    assert entry("init", again, "--from", project / "project.yaml").returncode == 0
    assert MetaEvaluator(again, load=True).data == MetaEvaluator(project, load=True).data


def _inline_judges_file(folder: Path) -> Path:
    """configs/project.yaml's inline judges as a judges YAML of their own (prompts absolute)."""
    raw = yaml.safe_load(PROJECT_YAML.read_text())
    inline = [dict(j) for j in raw["judges"] if isinstance(j, dict)]
    for judge in inline:
        judge["prompt_file"] = str(CONFIGS / judge["prompt_file"])
    path = folder / "inline-judges.yaml"
    path.write_text(yaml.safe_dump({"judges": inline}))
    return path


def _metrics_file(folder: Path) -> Path:
    raw = yaml.safe_load(PROJECT_YAML.read_text())
    path = folder / "metrics-of-project.yaml"
    path.write_text(yaml.safe_dump({"metrics": raw["metrics"]}))
    return path


def test_the_same_project_from_separate_commands_gets_the_same_scores(
    entry: Main, tmp_path: Path
) -> None:
    whole = tmp_path / "whole"
    assert entry("init", whole, "--from", PROJECT_YAML).returncode == 0
    assert entry("all", whole).returncode == 0
    parts = tmp_path / "parts"
    commands: list[tuple[Any, ...]] = [
        ("init", parts, "--data", CONFIGS / "data/support_tickets.csv", "--id-column", "ticket_id"),
        ("add-task", parts, PROJECT_YAML),
        ("add-judges", parts, _inline_judges_file(tmp_path)),
        ("add-judges", parts, CONFIGS / "support-judges.yaml"),
        ("import-annotations", parts, CONFIGS / "annotations/ana.csv", "--annotator", "ana"),
        ("import-annotations", parts, CONFIGS / "annotations/ben.csv", "--annotator", "ben"),
        ("import-annotations", parts, CONFIGS / "annotations/chen.csv", "--annotator", "chen",
         "--tasks", "resolved,tone"),
        ("import-results", parts, CONFIGS / "results/keyword_rule.csv", "--judge", "keyword_rule",
         "--id-column", "ticket_id"),
        ("run", parts),
        ("score", parts, "--metrics", _metrics_file(tmp_path)),
    ]  # fmt: skip
    for command in commands:
        done = entry(*command)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    assert scores_of(parts) == scores_of(whole)
    assert not (parts / ".meta-evaluator.lock").exists()  # each command let the lock go
    assert len(scores_of(whole)) == 4 and all(len(j) == 3 for j in scores_of(whole).values())
    # the commands kept the project's own project.yaml up to date: it builds the same again
    own = yaml.safe_load((parts / "project.yaml").read_text())
    assert [a["annotator_id"] for a in own["annotations"]] == ["ana", "ben", "chen"]
    assert own["results"] == [
        {"path": "inputs/results/keyword_rule.csv", "judge_id": "keyword_rule",
         "id_column": "ticket_id"},
    ]  # fmt: skip
    assert own["judges"] == ["judges/inline-judges.yaml", "judges/support-judges.yaml"]


def test_a_scheduled_run_logs_progress_and_ends_with_a_json_summary(tmp_path: Path) -> None:
    """As cron or CI runs it: CI=true, no terminal on stdin or stdout, its own process."""
    project = tmp_path / "nightly"
    env = {**os.environ, "CI": "true", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "meta_evaluator.cli"]
    made = subprocess.run(
        [*command, "init", str(project), "--from", str(PROJECT_YAML)],
        env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    done = subprocess.run(
        [*command, "run", str(project), "--json"],
        env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)  # standard output is the JSON object alone
    assert summary["exit_status"] == 0 and summary["error"] is None
    assert set(summary["judges"]) == {"mock_support_judge", "mock_brief_judge"}
    judge = summary["judges"]["mock_support_judge"]
    assert judge["rows"] == 32 and judge["valid"] + judge["invalid"] + judge["error"] == 32
    assert judge["reused"] == 0 and judge["cached"] == 0 and judge["complete"] is True
    assert judge["run_id"] == summary["run_ids"][0] and judge["cost_usd"] is None
    assert summary["totals"]["rows"] == 64
    lines = [line for line in done.stderr.splitlines() if " progress judge=" in line]
    for judge_id in ("mock_support_judge", "mock_brief_judge"):
        own = [line for line in lines if f"judge={judge_id} " in line]
        # every 10% of 32 rows (3.2 rows), but at most a line a second: their times differ
        assert 1 <= len(own) <= 10, own
        assert len({line.split()[0] for line in own}) == len(own), own
        assert f"judge={judge_id} done=32/32 (100%)" in own[-1]
        assert re.search(r"retries=\d+ rate=[\d.]+ rows/s eta=0s$", own[-1])
    assert "mock_support_judge: valid=" in done.stderr  # the text summary, out of the JSON's way
    again = subprocess.run(
        [*command, "run", str(project), "--json"],
        env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    reused = json.loads(again.stdout)["judges"]["mock_support_judge"]
    assert reused["reused"] == 32 and reused["run_id"] == judge["run_id"]


def test_version(entry: Main) -> None:
    done = entry("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"meta-evaluator {__version__}"


def test_a_bad_project_yaml_makes_nothing_and_lists_every_problem(
    entry: Main, tmp_path: Path
) -> None:
    configs = tmp_path / "configs"
    shutil.copytree(CONFIGS, configs)
    text = (configs / "project.yaml").read_text()
    text = text.replace("id_column: ticket_id                   #", "id_colum: ticket_id #")
    text = text.replace("temperature: 0.0", "temperature: 7.0")
    text = text.replace("annotator_id: ben", "annotator_id: ../ben")
    (configs / "project.yaml").write_text(text)
    done = entry("init", tmp_path / "p", "--from", configs / "project.yaml")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: ")
    for fragment in (
        "data.id_colum: unknown key 'id_colum'; did you mean 'id_column'?",
        "judges[0].temperature: Input should be less than or equal to 2, got 7.0",
    ):
        assert fragment in done.stderr
    assert not (tmp_path / "p").exists()


def test_init_in_place_keeps_the_users_project_yaml(entry: Main, tmp_path: Path) -> None:
    folder = tmp_path / "configs"
    shutil.copytree(CONFIGS, folder)
    before = (folder / "project.yaml").read_bytes()
    done = entry("init", folder, "--from", folder / "project.yaml")
    assert done.returncode == 0, done.stderr
    assert (folder / "project.yaml").read_bytes() == before  # comments and all
    assert not (folder / "inputs").exists()
    assert entry("all", folder).returncode == 0
    outside = tmp_path / "elsewhere"
    shutil.copytree(CONFIGS, outside)
    text = (outside / "project.yaml").read_text()
    (outside / "project.yaml").write_text(text.replace("file: data/", f"file: {CONFIGS}/data/"))
    done = entry("init", outside, "--from", outside / "project.yaml")
    assert done.returncode == 2 and "must name files inside it" in done.stderr
    assert not (outside / "main_state.json").exists()


def test_run_reads_the_judges_yaml_files_of_the_project(entry: Main, project: Path) -> None:
    """A judges YAML dropped in judges/ is run; editing a judge there replaces it."""
    judges = project / "judges"
    judges.mkdir()
    (judges / "extra.yaml").write_text(
        "judges:\n  - {id: extra, llm_client: mock, model: m1, prompt: 'Did {llm_response} "
        "refuse?'}\n"
    )
    done = entry("run", project, "--progress", "off")
    assert done.returncode == 0, done.stderr
    assert "extra: valid=" in done.stdout and "mock_refusal_judge: valid=" in done.stdout
    assert "extra" in MetaEvaluator(project, load=True).judge_registry
    (judges / "extra.yaml").write_text((judges / "extra.yaml").read_text().replace("m1", "m2"))
    done = entry("run", project, "--json", "--judges", "extra")
    summary = json.loads(done.stdout)
    assert summary["judges"]["extra"]["reused"] == 0  # a new fingerprint: asked again
    assert MetaEvaluator(project, load=True).judge_registry["extra"].model == "m2"
    (judges / "twice.yaml").write_text((judges / "extra.yaml").read_text())
    done = entry("run", project)
    assert done.returncode == 2 and "judge 'extra' is given twice" in done.stderr


def test_add_judges_lists_every_problem_in_the_commands_words(entry: Main, project: Path) -> None:
    path = project.parent / "j.yaml"
    path.write_text(
        "judges:\n"
        "  - {id: mock_refusal_judge, llm_client: mock, model: m, prompt: 'See {prompt}'}\n"
        "  - {id: typo, llm_client: mock, model: m, prompt: 'See {respons}'}\n"
    )
    done = entry("add-judges", project, path)
    assert done.returncode == 2
    assert "judges[0].id: judge 'mock_refusal_judge' is already registered; pass --overwrite" in (
        done.stderr
    )
    assert "judges[1].prompt: judge 'typo': prompt placeholder(s) ['{respons}']" in done.stderr
    assert not (project / "judges").exists()


def test_a_misspelt_list_key_gets_a_did_you_mean(entry: Main, project: Path) -> None:
    path = project.parent / "j.yaml"
    path.write_text("judge:\n  - {id: extra, llm_client: mock, model: m, prompt: 'See {prompt}'}\n")
    done = entry("add-judges", project, path)
    assert done.returncode == 2
    assert "under 'judges:' (one entry per judge). It has 'judge:'; did you mean 'judges:'?" in (
        done.stderr
    )
    metrics = project.parent / "m.yaml"
    metrics.write_text("metric:\n  - {scorer: accuracy, task_names: [rejection]}\n")
    done = entry("score", project, "--metrics", metrics)
    assert done.returncode == 2 and "did you mean 'metrics:'?" in done.stderr
    path.write_text("{}\n")
    assert "did you mean" not in entry("add-judges", project, path).stderr


def test_labels_into_a_project_without_project_yaml(entry: Main, project: Path) -> None:
    labels = project.parent / "dana.csv"
    pl.DataFrame({"original_id": [101, 102], "rejection": ["rejection", "maybe"]}).write_csv(labels)
    done = entry("import-annotations", project, labels, "--annotator", "dana")
    assert done.returncode == 0, done.stderr
    assert "Imported the labels of 'dana' for task rejection: 1 valid, 1 invalid." in done.stdout
    assert not (project / "project.yaml").exists() and not (project / "inputs").exists()
    pl.DataFrame({"original_id": [103, 104], "rejection": ["Rejection", "rejection"]}).write_csv(
        labels
    )
    done = entry("import-annotations", project, labels, "--annotator", "erin")
    assert done.stdout == (
        "Imported the labels of 'erin' for task rejection: 2 valid, 0 invalid; 1 label normalised "
        "('Rejection' → "
        "'rejection') to the allowed labels (case, white space and accent encoding ignored).\n"
    )
    done = entry("import-results", project, labels, "--judge", "../x")
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_imports_name_the_tasks_they_take_with_and_without_tasks(
    entry: Main, project: Path
) -> None:
    """Every task column of the file is imported unless --tasks names some; both are said."""
    labels = project.parent / "both.csv"
    pl.DataFrame(
        {"original_id": [101, 102], "rejection": ["rejection"] * 2, "explanation": ["x", "y"]}
    ).write_csv(labels)
    done = entry("import-annotations", project, labels, "--annotator", "every")
    assert done.stdout.startswith(
        "Imported the labels of 'every' for tasks rejection, explanation: 2 valid"
    ), done.stdout
    done = entry(
        "import-annotations", project, labels, "--annotator", "one", "--tasks", "rejection"
    )
    assert done.stdout.startswith("Imported the labels of 'one' for task rejection: 2 valid")
    done = entry("import-results", project, labels, "--judge", "rule", "--tasks", "rejection")
    assert done.stdout.startswith("Imported the results of judge 'rule' for task rejection:")
    saved = MetaEvaluator(project, load=True).load_all_human_results()
    assert saved["every"].results_data["explanation"].to_list() == ["x", "y"]
    assert saved["one"].results_data["explanation"].to_list() == [None, None]
    judged = MetaEvaluator(project, load=True).load_all_judge_results()["rule"].results_data
    assert judged["explanation"].to_list() == [None, None]
    status = entry("status", project).stdout
    assert "run " in status and ", labels of rejection, explanation\n" in status
    assert re.search(r"one: 2 valid labels .*, labels of rejection\n", status), status
    annotators = json.loads(entry("status", project, "--json").stdout)["annotators"]
    assert annotators["every"]["tasks"] == ["rejection", "explanation"]
    assert annotators["one"]["tasks"] == ["rejection"]


def test_all_without_metrics_names_the_three_ways_to_give_them(entry: Main, tmp_path: Path) -> None:
    project = tmp_path / "p2"
    made = entry("init", project, "--data", CONFIGS / "data/support_tickets.csv",
                 "--id-column", "ticket_id")  # fmt: skip
    assert made.returncode == 0, made.stderr
    done = entry("all", project)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "the project has no metrics" in done.stderr
    for way in ("--metrics FILE", f"`metrics:` section in {project / 'project.yaml'}",
                f"a file {project / 'metrics.yaml'}"):  # fmt: skip
        assert way in done.stderr, done.stderr


def test_metrics_of_a_project_yaml_are_read_as_add_task_reads_its_task(
    entry: Main, project: Path, tmp_path: Path
) -> None:
    """--metrics project.yaml reads its metrics: (inline, or the file it names), no other key."""
    assert entry("run", project, "--progress", "off").returncode == 0
    other = tmp_path / "other"
    other.mkdir()
    inline = other / "project.yaml"
    inline.write_text(
        "data: {file: nowhere.csv}\n"  # other sections are not read, nor their files
        "task: {task_schemas: {x: [a, b]}}\n"
        "metrics:\n"
        "  - {scorer: accuracy, task_names: [rejection], aggregation_name: single,"
        " display_name: from_project_yaml}\n"
    )
    done = entry("score", project, "--metrics", inline)
    assert done.returncode == 0, done.stderr
    assert "from_project_yaml" in done.stdout
    (other / "m.yaml").write_text(
        inline.read_text()
        .split("\nmetrics:", 1)[1]
        .join(["metrics:", ""])
        .replace("from_project_yaml", "from_its_file")
    )
    named = other / "named.yaml"
    named.write_text("task: {}\nmetrics: m.yaml\n")
    done = entry("score", project, "--metrics", named)
    assert done.returncode == 0, done.stderr
    assert "from_its_file" in done.stdout
    typo = other / "typo.yaml"
    typo.write_text("task: {}\nmetric: []\n")
    done = entry("score", project, "--metrics", typo)
    assert done.returncode == 2
    assert "metric: unknown key 'metric'; did you mean 'metrics'?" in done.stderr
    assert "metrics: missing" in done.stderr and "2 problem(s)" in done.stderr


def test_run_score_without_metrics_stops_before_any_call(entry: Main, project: Path) -> None:
    (project / "metrics.yaml").unlink()
    done = entry("run", project, "--score", "--json")
    assert done.returncode == 2
    summary = json.loads(done.stdout)
    assert summary["exit_status"] == 2 and "metrics.yaml" in summary["error"]
    assert not (project / "results").exists()


def test_status_json(entry: Main, project: Path) -> None:
    assert entry("run", project, "--progress", "off").returncode == 0
    done = entry("status", project, "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["exit_status"] == 0 and summary["data"]["rows"] == 40
    assert summary["data"]["id_dtype"] == "Int64"
    assert summary["task"]["tasks"]["rejection"]["required"] is True
    run = summary["judges"]["mock_refusal_judge"]["latest_run"]
    assert run["complete"] is True and run["rows_done"] == 40
    assert run["valid"] + run["invalid"] + run["error"] == 40 and run["cached"] == 0
    assert set(summary["annotators"]) == {"ana", "ben", "chen"}
    missing = entry("status", project.parent / "nowhere", "--json")
    assert missing.returncode == 2
    assert json.loads(missing.stdout)["exit_status"] == 2 and "nowhere" in missing.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("--from", "x.yaml", "--example", "refusal"),
        ("--data", "x.csv", "--from", "x.yaml"),
        ("--id-column", "id"),
    ],
)
def test_init_options_that_do_not_go_together(
    entry: Main, tmp_path: Path, args: tuple[str, ...]
) -> None:
    done = entry("init", tmp_path / "p", *args)
    assert done.returncode == 2 and not (tmp_path / "p").exists()


def test_init_data_with_a_bad_id_column(entry: Main, tmp_path: Path) -> None:
    done = entry(
        "init", tmp_path / "p", "--data", CONFIGS / "data/support_tickets.csv", "--id-column",
        "product",
    )  # fmt: skip
    assert done.returncode == 2 and "data.id_column" in done.stderr and "product" in done.stderr
    assert not (tmp_path / "p").exists()


def test_every_exit_status_is_in_the_one_table() -> None:
    """The codes the command line uses (its EXIT_ constants and literal exits) are the table's."""
    docs = (ROOT / "docs" / "cli.md").read_text()
    section = docs.split("## Exit codes", 1)[1]
    rows = [line for line in section.split("\n\n| status")[1].splitlines() if line][2:]
    rows = rows[: next((i for i, r in enumerate(rows) if not r.startswith("|")), len(rows))]
    listed = {int(code) for row in rows for code in re.findall(r"\d+", row.split("|")[1])}
    assert listed == {0, 1, 2, 3, 4, 5, 130, 143}
    used = set()
    for module in ("cli.py", "_cli_run.py", "_cli_status.py", "_cli_project.py"):
        text = (ROOT / "meta_evaluator" / module).read_text()
        used |= {int(c) for c in re.findall(r"^EXIT_\w+ = (\d+)$", text, flags=re.MULTILINE)}
        used |= {int(c) for c in re.findall(r"typer\.Exit\((\d+)\)", text)}
    assert used and used <= listed


def test_every_key_of_the_schema_is_in_the_guide() -> None:
    from pydantic import BaseModel

    from meta_evaluator.eval_task import EvalTask
    from meta_evaluator.project_yaml import (
        AnnotationsEntry,
        DataSection,
        ProjectFile,
        ResultsEntry,
        SampleSection,
    )
    from meta_evaluator.scores.drift import DriftThresholds

    guide = (ROOT / "docs" / "project-yaml.md").read_text()
    models: list[type[BaseModel]] = [
        ProjectFile, DataSection, SampleSection, AnnotationsEntry, ResultsEntry, EvalTask,
        DriftThresholds,
    ]  # fmt: skip
    missing = [
        f"{model.__name__}.{name}"
        for model in models
        for name in model.model_fields
        if f"`{name}`" not in guide
    ]
    assert not missing


def test_a_judges_yaml_whose_prompts_lie_elsewhere_is_copied_with_them(
    entry: Main, tmp_path: Path
) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "support.md").write_text("Resolved? {agent_reply}")
    (tmp_path / "yaml").mkdir()
    judges = tmp_path / "yaml" / "more.yaml"
    judges.write_text(
        "# a comment that the rewritten copy loses\njudges:\n"
        "  - {id: far, llm_client: mock, model: m, prompt_file: ../prompts/support.md}\n"
    )
    project_yaml = tmp_path / "project.yaml"
    project_yaml.write_text(
        f"data: {{file: {CONFIGS / 'data/support_tickets.csv'}, id_column: ticket_id}}\n"
        "task: {task_schemas: {resolved: [resolved, not resolved]}, "
        "response_columns: [agent_reply]}\n"
        "judges: [yaml/more.yaml]\n"
    )
    project = tmp_path / "p"
    assert entry("init", project, "--from", project_yaml).returncode == 0
    copy = yaml.safe_load((project / "judges" / "more.yaml").read_text())
    assert copy["judges"][0]["prompt_file"] == "prompts/support.md"
    assert (project / "judges" / "prompts" / "support.md").read_text() == "Resolved? {agent_reply}"
    done = entry("run", project, "--json")
    assert json.loads(done.stdout)["judges"]["far"]["rows"] == 32


def test_run_json_when_a_judge_is_stopped(
    entry: Main, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VARIABLE", raising=False)
    (project / "judges").mkdir()
    (project / "judges" / "keyed.yaml").write_text(
        "judges:\n  - {id: keyed, llm_client: openai, model: gpt-4o-mini, "
        "api_key_env: NO_SUCH_KEY_VARIABLE, prompt: 'Did {llm_response} refuse?'}\n"
    )
    done = entry("run", project, "--json", "--progress", "off")
    assert done.returncode == 2
    summary = json.loads(done.stdout)
    assert summary["exit_status"] == 2 and "NO_SUCH_KEY_VARIABLE" in summary["error"]
    assert summary["judges"]["mock_refusal_judge"]["complete"] is True  # the other judge ran
    assert "error: " in done.stderr and "Traceback" not in done.stderr


def test_add_data_to_an_empty_project(entry: Main, tmp_path: Path) -> None:
    project = tmp_path / "p"
    done = entry("init", project)
    assert "add-data DIR FILE" in done.stdout and "add-task DIR task.yaml" in done.stdout
    data = CONFIGS / "data/support_tickets.csv"
    done = entry("add-data", project, data, "--id-column", "ticket_id")
    assert done.returncode == 0, done.stderr
    assert MetaEvaluator(project, load=True).data is not None
    again = entry("add-data", project, data)
    assert again.returncode == 2 and "pass --overwrite to replace it" in again.stderr
    assert entry("add-task", project, PROJECT_YAML).returncode == 0
    other = tmp_path / "other.csv"
    pl.DataFrame({"ticket_id": [1, 2], "agent_reply": ["a", "b"]}).write_csv(other)
    done = entry("add-data", project, other, "--id-column", "ticket_id", "--overwrite")
    assert done.returncode == 2 and "customer_message" in done.stderr  # the task's column
    done = entry("add-data", project, other, "--id-column", "id")
    assert done.returncode == 2 and "add-data: data.id_column" in done.stderr
