"""`meta-evaluator score`: the pairwise example end to end through the command line.

`init`, `run`, the default `score` and the exit-2 cases go through the real entry point in a
subprocess (as in test_cli.py); the other `score` calls run the same typer app in-process, which
saves the imports of a fresh interpreter and keeps these tests fast.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from meta_evaluator.cli import app
from tests.conftest import snapshot


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "meta_evaluator.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def score_in_process(*args: str | Path) -> Result:
    return CliRunner().invoke(app, ["score", *map(str, args)])


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


class Built:
    """The pairwise example after `init` and `run`, with what both commands printed."""

    def __init__(self, root: Path) -> None:
        self.project = root / "pairwise"
        self.init = cli("init", self.project, "--example", "pairwise")
        self.run = cli("run", self.project)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return Built(tmp_path_factory.mktemp("built"))


@pytest.fixture
def project(built: Built, tmp_path: Path) -> Path:
    """A private copy of the built project, so each test may write scores."""
    assert built.init.returncode == 0, built.init.stderr
    assert built.run.returncode == 0, built.run.stderr
    copy = tmp_path / "pairwise"
    shutil.copytree(built.project, copy)
    return copy


CHEAP_PREFERENCE = """\
metrics:
  - scorer: preference
    args: {n_resamples: 50, reference_annotator: crowd_preference}
    task_names: [preference]
    aggregation_name: single
    display_name: overall
"""


def test_init_and_run_the_pairwise_example(built: Built) -> None:
    assert built.init.returncode == 0, built.init.stderr
    assert "63 rows" in built.init.stdout and "mock_trait_judge" in built.init.stdout
    assert "preference (required)" in built.init.stdout
    assert built.run.returncode == 0, built.run.stderr
    assert "mock_trait_judge: valid=" in built.run.stdout
    assert (built.project / "metrics.yaml").is_file()
    assert not (built.project / "scores").exists()


def test_score_writes_and_prints_the_trait_table(project: Path) -> None:
    done = cli("score", project)
    assert done.returncode == 0, done.stderr
    folder = project / "scores" / "preference" / "traits"
    table_md = folder / "trait_table.md"
    table_csv = folder / "trait_table.csv"
    assert table_md.is_file() and table_csv.is_file()
    assert (folder / "annotated_pairs_result.json").is_file()
    assert (folder / "mock_trait_judge_result.json").is_file()

    with table_csv.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    traits = {
        "is_more_concise",
        "gives_a_concrete_example",
        "uses_a_bulleted_list",
        "is_more_polite",
    }
    assert {(r["trait"], r["judge"]) for r in rows} == {
        (t, j) for t in traits for j in ("annotated_pairs", "mock_trait_judge")
    }
    strengths = [float(r["strength"]) for r in rows]
    assert strengths == sorted(strengths, reverse=True)
    assert strengths[0] > strengths[-1]
    assert (rows[0]["trait"], rows[0]["judge"]) == ("gives_a_concrete_example", "annotated_pairs")
    assert (rows[-1]["trait"], rows[-1]["judge"]) == ("is_more_concise", "annotated_pairs")

    assert "preference / traits" in done.stdout
    assert "traits ranked by strength" in done.stdout
    for line in table_md.read_text(encoding="utf-8").splitlines():
        assert line in done.stdout, line
    assert "not scored" not in done.stdout


def test_score_with_an_unknown_task_exits_2_and_writes_nothing(project: Path) -> None:
    bad = write(
        project.parent / "bad.yaml",
        "metrics:\n  - {scorer: preference, task_names: [no_such_task], "
        "aggregation_name: single}\n",
    )
    before = snapshot(project)
    done = cli("score", project, "--metrics", bad)
    assert done.returncode == 2
    assert "unknown task(s) ['no_such_task']" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (project / "scores").exists()
    assert snapshot(project) == before


def test_score_with_a_broken_metrics_file_exits_2(project: Path) -> None:
    bad = write(project.parent / "typo.yaml", "metrics:\n  - scorer: preferense\n")
    done = cli("score", project, "--metrics", bad)
    assert done.returncode == 2
    assert "typo.yaml" in done.stderr and "did you mean 'preference'?" in done.stderr
    assert "Traceback" not in done.stderr
    missing = cli("score", project, "--metrics", project.parent / "nowhere.yaml")
    assert missing.returncode == 2 and "nowhere.yaml" in missing.stderr
    assert not (project / "scores").exists()


def test_score_with_another_metrics_file(project: Path) -> None:
    other = write(project.parent / "other.yaml", CHEAP_PREFERENCE)
    done = score_in_process(project, "--metrics", other)
    # `annotated_pairs` holds only trait votes: it never answered `preference`, so it is not
    # scored (exit 1) rather than given a strength of 0
    assert done.exit_code == 1, (done.output, done.exception)
    assert "preference / overall" in done.stdout
    assert "annotated_pairs: not scored: preference: judge 'annotated_pairs' gave no answer" in (
        done.stdout
    )
    written = project / "scores" / "preference" / "overall"
    assert (written / "annotated_pairs_result.json").is_file()
    assert (written / "mock_trait_judge_result.json").is_file()
    assert (written / "trait_table.csv").is_file()
    assert not (project / "scores" / "preference" / "traits").exists()  # metrics.yaml unused


def test_a_metric_that_fails_for_one_judge_exits_1(project: Path) -> None:
    """`annotated_pairs` holds only the traits: it has no label for the task `preference`."""
    metrics = write(
        project.parent / "accuracy.yaml",
        "metrics:\n  - {scorer: accuracy, task_names: [preference], aggregation_name: single, "
        "display_name: overall_accuracy}\n",
    )
    done = score_in_process(project, "--metrics", metrics)
    assert done.exit_code == 1, (done.output, done.exception)
    assert "annotated_pairs: not scored:" in done.stdout
    assert "mock_trait_judge: accuracy=" in done.stdout
    folder = project / "scores" / "accuracy" / "overall_accuracy"
    scored = json.loads((folder / "mock_trait_judge_result.json").read_text(encoding="utf-8"))
    failed = json.loads((folder / "annotated_pairs_result.json").read_text(encoding="utf-8"))
    assert scored["error"] is None and scored["scores"]["accuracy"] is not None
    assert "annotated_pairs" in failed["error"] and failed["failed_comparisons"] > 0


def test_score_prints_the_humans_baseline_beside_each_agreement_score(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from meta_evaluator._cli_output import print_scores
    from meta_evaluator.scores import MetricConfig
    from meta_evaluator.scores.base_scoring_result import ScoringResult
    from meta_evaluator.scores.enums import TaskAggregationMode
    from meta_evaluator.scores.metrics import CohensKappaScorer

    def result(judge: str, baseline: dict[str, object]) -> ScoringResult:
        return ScoringResult(
            scorer_name="cohens_kappa", task_name="t", judge_id=judge,
            scores={"cohens_kappa": -0.1114}, metadata={"human_baseline": baseline},
            aggregation_mode=TaskAggregationMode.SINGLE, num_comparisons=40,
        )  # fmt: skip

    metric = MetricConfig(scorer=CohensKappaScorer(), task_names=["t"], aggregation_name="single")
    defined = {"score": "cohens_kappa", "value": 0.8573, "interval": [0.7178, 0.9647]}
    undefined = {"score": "cohens_kappa", "value": None, "reason": "1 human annotator(s)"}
    table = {"k": (metric, [result("a", defined), result("b", undefined)])}
    assert print_scores(table, tmp_path) == 0
    out = capsys.readouterr().out
    assert "  a: cohens_kappa=-0.111; humans' own cohens_kappa=0.857 [0.718, 0.965]\n" in out
    assert "  b: cohens_kappa=-0.111; humans' own: n/a (1 human annotator(s))\n" in out
