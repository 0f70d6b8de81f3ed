"""`meta-evaluator score`: the pairwise example end to end through the command line.

`init`, `run`, the default `score` and the exit-2 cases go through the real entry point in a
subprocess (as in test_cli.py); the other `score` calls run the same typer app in-process, which
saves the imports of a fresh interpreter and keeps these tests fast.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from meta_evaluator import MetaEvaluator
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


def with_trait_only_judge(project: Path, tmp_path: Path) -> tuple[MetaEvaluator, Path]:
    """`project` with `trait_only` imported, a judge labelling the trait `is_more_concise` only,
    and a metrics file scoring accuracy on `preference`, which that judge fails."""
    evaluator = MetaEvaluator(project, load=True)
    ids = evaluator.data.ids.to_list()  # type: ignore[union-attr]
    labels = write(
        tmp_path / "trait_only.csv",
        "original_id,is_more_concise\n" + "".join(f"{i},text_a\n" for i in ids),
    )
    evaluator.add_external_judge_results(labels, "trait_only", tasks=["is_more_concise"])
    metrics = write(
        project.parent / "accuracy.yaml",
        "metrics:\n  - {scorer: accuracy, task_names: [preference], aggregation_name: single, "
        "display_name: overall_accuracy}\n",
    )
    return evaluator, metrics


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
    # `annotated_pairs` holds the pairs' own trait votes, none on `preference`: it is left out
    # (said, not failed) rather than given a strength of 0 or an error
    assert done.exit_code == 0, (done.output, done.exception)
    assert "preference / overall" in done.stdout
    assert (
        "  annotated_pairs: left out: votes imported with the preference pairs, none on "
        "preference (they vote on their own traits)" in done.stdout
    )
    assert "not scored" not in done.stdout
    assert "  strength on preference, judges ranked (" in done.stdout  # one trait: no "traits"
    assert "traits ranked" not in done.stdout
    written = project / "scores" / "preference" / "overall"
    assert not (written / "annotated_pairs_result.json").exists()
    assert (written / "mock_trait_judge_result.json").is_file()
    assert (written / "trait_table.csv").is_file()
    assert not (project / "scores" / "preference" / "traits").exists()  # metrics.yaml unused


def test_a_metric_that_fails_for_one_judge_exits_1(project: Path, tmp_path: Path) -> None:
    """A judge imported with labels on a trait only is a judge: it fails on `preference`.

    Only the votes that came with the pairs (`annotated_pairs`) are left out of a metric on
    tasks they hold no vote on.
    """
    _, metrics = with_trait_only_judge(project, tmp_path)
    done = score_in_process(project, "--metrics", metrics)
    assert done.exit_code == 1, (done.output, done.exception)
    assert "  trait_only: not scored:" in done.stdout
    assert "  annotated_pairs: left out: votes imported with the preference pairs" in done.stdout
    assert "mock_trait_judge: accuracy=" in done.stdout
    folder = project / "scores" / "accuracy" / "overall_accuracy"
    scored = json.loads((folder / "mock_trait_judge_result.json").read_text(encoding="utf-8"))
    failed = json.loads((folder / "trait_only_result.json").read_text(encoding="utf-8"))
    assert scored["error"] is None and scored["scores"]["accuracy"] is not None
    assert "trait_only" in failed["error"] and failed["failed_comparisons"] > 0
    assert not (folder / "annotated_pairs_result.json").exists()


def test_a_judge_not_scored_is_said_once(
    project: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, the command printed its line and the log printed the same failure as an ERROR.

    Python callers keep the log line: they have no other word of it but the warning.
    """
    from meta_evaluator.scores.compare import IncompleteScoresWarning
    from meta_evaluator.scores.yaml_config import read_metrics_yaml

    evaluator, metrics = with_trait_only_judge(project, tmp_path)
    done = cli("score", project, "--metrics", metrics)  # its own process: logging as users get it
    assert done.returncode == 1, (done.stdout, done.stderr)
    said = [x for x in (done.stdout + done.stderr).splitlines() if "not scored" in x]
    assert len(said) == 1 and said[0].startswith("  trait_only: not scored: "), said
    assert "ERROR" not in done.stderr
    with (
        caplog.at_level("ERROR", logger="meta_evaluator.scores.compare"),
        pytest.warns(IncompleteScoresWarning),
    ):
        evaluator.compare_async(read_metrics_yaml(metrics))
    logged = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(logged) == 1 and "judge 'trait_only' not scored: " in logged[0], logged


POSITION_RECIPE = """\
metrics:
  - scorer: position_bias
    task_names: [preference]
    aggregation_name: single
    display_name: order
  - scorer: preference
    args: {reference_task: preference, reference_annotator: crowd_preference, n_resamples: 50}
    task_names: [preference]
    aggregation_name: single
    display_name: as_voted
  - scorer: preference
    args: {reference_task: preference, reference_annotator: crowd_preference, n_resamples: 50,
           debias_positions: true}
    task_names: [preference]
    aggregation_name: single
    display_name: debiased
  - scorer: position_bias
    task_names: [is_more_concise]
    aggregation_name: single
    display_name: concise_order
"""


def test_the_position_bias_recipe_exits_0(tmp_path: Path) -> None:
    """docs/scoring.md "Position bias" with an AnnotatedPairs file, whose trait votes come along.

    The pairs' own votes (`annotated_pairs`) were cast on the original order only: no scorer
    that needs both orders sees them, nor a metric on `preference`, which they do not vote on;
    an earlier scoring's failed results of theirs are removed, and the report neither counts
    them as a judge nor lists empty blocks for them.
    """
    import meta_evaluator.examples
    from meta_evaluator.reports import write_report

    pairs = Path(meta_evaluator.examples.__file__).parent / "pairwise" / "pairs.json"
    project = tmp_path / "pb"
    evaluator = MetaEvaluator(project)
    assert evaluator.add_preference_pairs(pairs, swap_positions=True)["swapped_rows"] == 63
    prompt = "Q: {prompt}\nA: {text_a}\nB: {text_b}\npreference: text_a, text_b or tie."
    evaluator.add_judge("mock_pref", "mock", "mock-pref-1", prompt=prompt)
    evaluator.save_state()
    write(project / "metrics.yaml", POSITION_RECIPE)
    stale = project / "scores" / "position_bias" / "order" / "annotated_pairs_result.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}", encoding="utf-8")  # what the old version wrote: a failed result
    assert CliRunner().invoke(app, ["run", str(project)]).exit_code == 0
    done = score_in_process(project)
    assert done.exit_code == 0, (done.output, done.exception)
    assert "not scored" not in done.stdout
    out = done.stdout
    assert out.count("  annotated_pairs: left out: ") == 4, out
    assert out.count("this metric needs a judge that answered both orders") == 3
    assert "none on preference (they vote on their own traits)" in out
    assert "mock_pref: consistency_rate=" in out and "mock_pref: relevance=" in out
    # an interval is rounded like every other score
    assert re.search(r"first_position_interval=\[0\.\d{3}, 0\.\d{3}\], p_value=", out), out
    written = sorted(p.relative_to(project / "scores") for p in project.glob("scores/*/*/*.json"))
    assert [p.name for p in written] == ["mock_pref_result.json"] * 4, written
    page = write_report(MetaEvaluator(project, load=True)).read_text(encoding="utf-8")
    assert "; 1 judge; the trait votes imported with the pairs: annotated_pairs;" in page
    assert "No row has both" not in page and "annotated_pairs on" not in page
    assert "<h3>mock_pref on preference" in page
    assert "out of date" not in page
    judges = (project / "reports" / "judges.csv").read_text(encoding="utf-8")
    assert "mock_pref" in judges and "annotated_pairs" not in judges


def test_score_prints_what_a_mean_over_tasks_hides(project: Path) -> None:
    """A multitask mean is printed with its lowest and highest task, which the saved per-task
    scores give."""
    done = score_in_process(project)
    assert done.exit_code == 0, (done.output, done.exception)
    folder = project / "scores" / "preference" / "traits"
    for judge in ("annotated_pairs", "mock_trait_judge"):
        saved = json.loads((folder / f"{judge}_result.json").read_text(encoding="utf-8"))
        per_task = sorted(
            (e["scores"]["strength"], t) for t, e in saved["metadata"]["per_task"].items()
        )
        (low, low_task), (high, high_task) = per_task[0], per_task[-1]
        line = next(x for x in done.stdout.splitlines() if x.startswith(f"  {judge}: "))
        low_ci, high_ci = (saved.get("confidence_intervals") or {}).get("strength", (None, None))
        bounds = f" [{low_ci:.3f}, {high_ci:.3f}]" if low_ci is not None else ""
        assert line.endswith(
            f"strength={saved['scores']['strength']:.3f}{bounds}; mean of 4 traits: strength from "
            f"{low:.3f} ({low_task}) to {high:.3f} ({high_task})"
        ), line


def test_score_prints_the_humans_baseline_beside_each_agreement_score(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from meta_evaluator._cli_output import print_scores
    from meta_evaluator.scores import MetricConfig
    from meta_evaluator.scores.base_scoring_result import ScoringResult
    from meta_evaluator.scores.enums import TaskAggregationMode
    from meta_evaluator.scores.metrics import CohensKappaScorer

    def result(
        judge: str, baseline: dict[str, object], interval: tuple[float, float] | None = None
    ) -> ScoringResult:
        return ScoringResult(
            scorer_name="cohens_kappa", task_name="t", judge_id=judge,
            scores={"cohens_kappa": -0.1114}, metadata={"human_baseline": baseline},
            aggregation_mode=TaskAggregationMode.SINGLE, num_comparisons=40,
            confidence_intervals={"cohens_kappa": interval} if interval else None,
        )  # fmt: skip

    metric = MetricConfig(scorer=CohensKappaScorer(), task_names=["t"], aggregation_name="single")
    defined = {"score": "cohens_kappa", "value": 0.8573, "interval": [0.7178, 0.9647]}
    undefined = {"score": "cohens_kappa", "value": None, "reason": "1 human annotator(s)"}
    with_interval = result("c", defined, (-0.4021, 0.1873))  # the judge's, as the humans'
    table = {"k": (metric, [result("a", defined), result("b", undefined), with_interval])}
    assert print_scores(table, tmp_path) == 0
    out = capsys.readouterr().out
    assert (
        "  c: cohens_kappa=-0.111 [-0.402, 0.187]; humans' own cohens_kappa=0.857 [0.718, 0.965]"
        in out
    )
    assert "  a: cohens_kappa=-0.111; humans' own cohens_kappa=0.857 [0.718, 0.965]\n" in out
    assert "  b: cohens_kappa=-0.111; humans' own: n/a (1 human annotator(s))\n" in out


def test_score_prints_each_score_once_not_its_0_3_3_alias(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The result JSON keeps 0.3.3's `kappa` beside `cohens_kappa`; the line says it once."""
    from meta_evaluator._cli_output import print_scores
    from meta_evaluator.scores import MetricConfig
    from meta_evaluator.scores.base_scoring_result import ScoringResult
    from meta_evaluator.scores.enums import TaskAggregationMode
    from meta_evaluator.scores.metrics import CohensKappaScorer

    result = ScoringResult(
        scorer_name="cohens_kappa", task_name="t", judge_id="j",
        scores={"cohens_kappa": 0.25, "kappa": 0.25},
        aggregation_mode=TaskAggregationMode.SINGLE, num_comparisons=40,
    )  # fmt: skip
    metric = MetricConfig(scorer=CohensKappaScorer(), task_names=["t"], aggregation_name="single")
    assert print_scores({"k": (metric, [result])}, tmp_path) == 0
    out = capsys.readouterr().out
    assert "  j: cohens_kappa=0.250\n" in out and "kappa=0.250," not in out


def test_self_consistency_leaves_an_imported_judge_out(tmp_path: Path) -> None:
    """An imported judge holds one label per row: a self-consistency metric leaves it out
    (said, not failed), so a nightly `score` of a project with one exits 0 (trial #10)."""
    project = tmp_path / "p"
    config = Path(__file__).parents[1] / "configs" / "project.yaml"
    assert cli("init", project, "--from", config).returncode == 0
    ran = cli("run", project, "--consistency", "3", "--progress", "off", "--no-cache")
    assert ran.returncode == 0, ran.stderr
    metrics = write(
        tmp_path / "sc.yaml",
        "metrics:\n  - scorer: self_consistency\n    args: {n_resamples: 50}\n"
        "    task_names: [resolved]\n    aggregation_name: single\n",
    )
    done = cli("score", project, "--metrics", metrics)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert (
        "  keyword_rule: left out: labels imported from a file, one answer per row; this "
        "metric needs a judge run with several answers per row (consistency)" in done.stdout
    )
    assert "not scored" not in done.stdout + done.stderr
    assert re.search(r"  mock_support_judge: fleiss_kappa=", done.stdout), done.stdout
    written = project / "scores" / "self_consistency"
    assert not list(written.rglob("keyword_rule_result.json"))
