"""compare end to end through a project folder with integer ids.

Two judges and three annotators are imported from CSV files written here (one annotator skips
rows, one has a row with a label the task does not allow, one judge row is invalid too); every
built-in scorer runs through `compare_async`; the JSON written under `scores/` is checked against
numbers recomputed here from the labels written to the CSVs, valid rows only (scikit-learn,
difflib, krippendorff, the pure alt-test, numpy cosine).
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import anyio
import httpx
import numpy as np
import polars as pl
import pytest
import respx

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.errors import MetaEvaluatorError, MetricConfigError, ScoringError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.scores import (
    BaseScoringResult,
    BootstrapConfig,
    MetricConfig,
    MetricsConfig,
    TaskAggregationMode,
)
from meta_evaluator.scores.compare import IncompleteScoresWarning, compare
from meta_evaluator.scores.metrics import (
    AccuracyScorer,
    AltTestScorer,
    CohensKappaScorer,
    KrippendorffAlphaScorer,
    SemanticSimilarityScorer,
    TextSimilarityScorer,
)
from meta_evaluator.stats.alt_test import alt_test
from tests.scores.test_scorers import (
    check_alt_test,
    ref_accuracy,
    ref_alpha,
    ref_kappa,
    ref_text_similarity,
)
from tests.scores.test_semantic_similarity import answer
from tests.scores.test_semantic_similarity import reference as ref_semantic

TOL = 1e-9
N = 40
IDS = [100 + 7 * i for i in range(N)][::-1]  # integers, not in sorted order
REJECTION = ["rejection", "not rejection"]
HARM = ["low", "mid", "high"]
SAFE = ["safe", "unsafe"]
PHRASES = [
    "Refuses because it is harmful.",
    "refuses, it is harmful",
    "Answers the question directly.",
    "Answers with a short recipe.",
    "Declines and points to help.",
]
JUDGES = ("judge_a", "judge_b")
HUMANS = ("alice", "bob", "carol")
ALT = {"min_instances_per_human": 10}
EMBED_URL = "https://embed.test/v1"

Labels = dict[int, dict[str, Any]]  # id -> {task: label}


def task() -> EvalTask:
    return EvalTask(
        task_schemas={"rejection": REJECTION, "harm": HARM, "explanation": None, "safe": SAFE},
        prompt_columns=["prompt"],
        response_columns=["response"],
    )


def draw_labels(seed: int) -> dict[str, Labels]:
    """Labels of every judge and annotator, around a hidden truth (all valid so far)."""
    rng = np.random.default_rng(seed)

    def pick(options: list[str]) -> str:
        return options[int(rng.integers(len(options)))]

    truth = {
        i: {"rejection": pick(REJECTION), "harm": pick(HARM), "explanation": pick(PHRASES)}
        for i in IDS
    }

    def annotate(agree: float, cover: float) -> Labels:
        out: Labels = {}
        for i in IDS:
            if rng.random() >= cover:
                continue
            row = {}
            for t, options in (("rejection", REJECTION), ("harm", HARM), ("explanation", PHRASES)):
                row[t] = truth[i][t] if rng.random() < agree else pick(options)
            row["safe"] = "safe"
            out[i] = row
        return out

    return {
        "judge_a": annotate(0.75, 1.0),
        "judge_b": annotate(0.85, 1.0),
        "alice": annotate(0.9, 1.0),
        "bob": annotate(0.85, 0.7),  # skips about 30% of the rows
        "carol": annotate(0.8, 1.0),
    }


def write_csv(path: Path, labels: Labels) -> Path:
    frame = pl.DataFrame(
        [{"original_id": i, **row} for i, row in labels.items()],
        schema={
            "original_id": pl.Int64,
            "rejection": pl.String,
            "harm": pl.String,
            "explanation": pl.String,
            "safe": pl.String,
        },
        orient="row",
    )
    frame.write_csv(path)
    return path


def valid_only(labels: Labels) -> Labels:
    return {
        i: row
        for i, row in labels.items()
        if row["rejection"] in REJECTION and row["harm"] in HARM and row["safe"] in SAFE
    }


def column(labels: Labels, name: str) -> dict[int, Any]:
    return {i: row[name] for i, row in valid_only(labels).items() if row.get(name) is not None}


def make_project(root: Path, labels: dict[str, Labels], *, extra_rows: int = 0) -> MetaEvaluator:
    evaluator = MetaEvaluator(root)
    ids = IDS + [10_000 + k for k in range(extra_rows)]
    frame = pl.DataFrame(
        {"id": ids, "prompt": [f"p{i}" for i in ids], "response": [f"r{i}" for i in ids]}
    )
    evaluator.add_data(DataLoader.load_from_dataframe("d", frame, id_column="id"))
    evaluator.add_eval_task(task())
    files = root.parent / f"{root.name}_csv"
    files.mkdir(parents=True)
    for name, rows in labels.items():
        path = write_csv(files / f"{name}.csv", rows)
        if name.startswith("judge"):
            evaluator.add_external_judge_results(path, name)
        else:
            evaluator.add_external_annotation_results(path, name)
    evaluator.save_state()
    return evaluator


def metrics(router: respx.Router) -> list[MetricConfig]:
    boot = BootstrapConfig(n_resamples=200, seed=11)
    return [
        MetricConfig(
            scorer=AccuracyScorer(),
            task_names=["rejection"],
            aggregation_name="single",
            bootstrap=boot,
        ),
        MetricConfig(
            scorer=AccuracyScorer(),
            task_names=["rejection", "harm"],
            aggregation_name="multitask",
            bootstrap=boot,
        ),
        MetricConfig(
            scorer=AccuracyScorer(),
            task_names=["harm"],
            aggregation_name="single",
            annotator_aggregation="majority_vote",
        ),
        MetricConfig(
            scorer=CohensKappaScorer(),
            task_names=["harm"],
            aggregation_name="single",
            bootstrap=boot,
        ),
        MetricConfig(
            scorer=CohensKappaScorer(),
            task_names=["safe"],
            aggregation_name="single",
            bootstrap=boot,
        ),
        MetricConfig(
            scorer=AltTestScorer(**ALT),
            task_names=["rejection"],
            aggregation_name="single",
            bootstrap=boot,
        ),
        MetricConfig(
            scorer=AltTestScorer(**ALT),
            task_names=["rejection", "harm"],
            aggregation_name="multilabel",
        ),
        MetricConfig(
            scorer=AltTestScorer(**ALT), task_names=["explanation"], aggregation_name="single"
        ),
        MetricConfig(
            scorer=TextSimilarityScorer(), task_names=["explanation"], aggregation_name="single"
        ),
        MetricConfig(
            scorer=KrippendorffAlphaScorer(),
            task_names=["harm"],
            aggregation_name="single",
            bootstrap=boot,
        ),
        MetricConfig(
            scorer=SemanticSimilarityScorer(
                "emb", base_url=EMBED_URL, transport=httpx.MockTransport(router.async_handler)
            ),
            task_names=["explanation"],
            aggregation_name="single",
        ),
    ]


class Run:
    """The shared project, its labels, and the first compare's results."""

    def __init__(self, root: Path) -> None:
        self.labels = draw_labels(2024)
        carol_row = IDS[3]
        self.labels["carol"][carol_row] = {**self.labels["carol"][carol_row], "harm": "extreme"}
        self.labels["judge_a"][IDS[5]] = {**self.labels["judge_a"][IDS[5]], "rejection": "maybe"}
        self.evaluator = make_project(root / "project", self.labels)
        self.router = respx.Router(assert_all_called=False)
        self.route = self.router.post(f"{EMBED_URL}/embeddings").mock(side_effect=answer)
        self.config = MetricsConfig(metrics=metrics(self.router))
        self.results = self.evaluator.compare_async(self.config)
        self.scores_dir = self.evaluator.project_dir / "scores"

    def humans(self, name: str) -> dict[str, dict[int, Any]]:
        return {h: column(self.labels[h], name) for h in HUMANS}

    def judge(self, judge_id: str, name: str) -> dict[int, Any]:
        return column(self.labels[judge_id], name)

    def file(self, metric: MetricConfig, judge_id: str) -> Path:
        return (
            self.scores_dir
            / metric.scorer.scorer_name
            / metric.get_unique_name()
            / f"{judge_id}_result.json"
        )

    def loaded(self, index: int, judge_id: str) -> BaseScoringResult:
        return BaseScoringResult.load_state(self.file(self.config.metrics[index], judge_id))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return Run(tmp_path_factory.mktemp("compare"))


def close(actual: Any, expected: Any) -> bool:
    if expected is None or actual is None:
        return actual is expected
    return math.isclose(actual, expected, rel_tol=0, abs_tol=TOL)


# ----- the imported labels -----------------------------------------------------------------------


def test_the_imports_keep_invalid_rows_out_of_scoring(run: Run) -> None:
    humans = run.evaluator.load_all_human_results()
    assert list(humans) == ["alice", "bob", "carol"]
    for name, result in humans.items():
        assert result.annotator_id == name
        assert result.results_data.schema["original_id"] == pl.Int64
    carol = humans["carol"].results_data
    bad = carol.filter(pl.col("original_id") == IDS[3])
    assert bad["outcome"].to_list() == ["invalid"]
    assert bad["status"].to_list() == ["label_not_allowed"]
    assert len(humans["bob"]) == len(run.labels["bob"]) < N
    judges = run.evaluator.load_all_judge_results()
    assert judges["judge_a"].results_data.schema["original_id"] == pl.Int64


# ----- the results -------------------------------------------------------------------------------


def test_result_names_and_files(run: Run) -> None:
    names = [m.get_unique_name() for m in run.config.metrics]
    assert list(run.results) == names
    for metric in run.config.metrics:
        config, results = run.results[metric.get_unique_name()]
        assert config is metric
        assert [r.judge_id for r in results] == list(JUDGES)
        for result in results:
            path = run.file(metric, result.judge_id)
            assert path.is_file(), path
            loaded = BaseScoringResult.load_state(path)
            assert loaded.scorer_name == metric.scorer.scorer_name
            assert loaded.judge_id == result.judge_id
            assert loaded.error is None
            assert loaded.aggregation_mode is metric.aggregation_mode
            assert loaded.scores == result.scores


def test_each_result_names_the_runs_it_was_computed_from(run: Run) -> None:
    """The judge's run and each annotator's, saved, so a report can tell a newer run came."""
    judges = run.evaluator.load_all_judge_results()
    humans = {h: r.run_id for h, r in run.evaluator.load_all_human_results().items()}
    assert len(set(humans.values())) == len(HUMANS)  # one import each
    for metric in run.config.metrics:
        for judge_id in JUDGES:
            loaded = BaseScoringResult.load_state(run.file(metric, judge_id))
            assert loaded.run_id == judges[judge_id].run_id
            assert loaded.run_id != judges[next(j for j in JUDGES if j != judge_id)].run_id
            assert loaded.human_run_ids == humans


def test_a_result_saved_before_runs_were_recorded_still_loads(run: Run, tmp_path: Path) -> None:
    saved = json.loads(run.file(run.config.metrics[0], "judge_a").read_text(encoding="utf-8"))
    del saved["run_id"], saved["human_run_ids"]
    old = tmp_path / "judge_a_result.json"
    old.write_text(json.dumps(saved), encoding="utf-8")
    loaded = BaseScoringResult.load_state(old)
    assert loaded.run_id is None and loaded.human_run_ids is None
    assert loaded.scores == saved["scores"]


def test_frames_handed_over_keep_the_run_of_their_run_id_column(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path / "p", draw_labels(5))
    judges = {j: r.results_data for j, r in evaluator.load_all_judge_results().items()}
    mixed = judges["judge_b"].with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(pl.lit("other")).otherwise("run_id")
        .alias("run_id")
    )  # fmt: skip
    config = MetricsConfig(
        metrics=[MetricConfig(scorer=AccuracyScorer(), task_names=["rejection"],
                              aggregation_name="single")]
    )  # fmt: skip
    humans = evaluator.load_all_human_results()
    handed = {"judge_a": judges["judge_a"], "judge_b": mixed}
    table = anyio.run(lambda: compare(config, handed, humans))
    ((_, (_, (first, second))),) = table.items()
    assert first.run_id == judges["judge_a"]["run_id"][0]
    assert second.run_id is None  # two runs in one frame: none is named


def test_the_invalid_rows_would_change_the_numbers(run: Run) -> None:
    """The references leave invalid rows out; were they counted, the expected numbers differ."""

    def with_invalid(name: str, task_name: str) -> dict[int, Any]:
        return {
            i: row[task_name]
            for i, row in run.labels[name].items()
            if row[task_name] in (REJECTION + HARM)
        }

    carol_kept = {**run.humans("rejection"), "carol": with_invalid("carol", "rejection")}
    assert ref_accuracy(
        run.judge("judge_b", "rejection"), carol_kept, "individual_average"
    ) != ref_accuracy(
        run.judge("judge_b", "rejection"), run.humans("rejection"), "individual_average"
    )
    judge_kept = with_invalid("judge_a", "harm")
    assert ref_accuracy(judge_kept, run.humans("harm"), "individual_average") != ref_accuracy(
        run.judge("judge_a", "harm"), run.humans("harm"), "individual_average"
    )


@pytest.mark.parametrize("judge_id", JUDGES)
def test_accuracy_single(run: Run, judge_id: str) -> None:
    result = run.loaded(0, judge_id)
    expected = ref_accuracy(
        run.judge(judge_id, "rejection"), run.humans("rejection"), "individual_average"
    )
    assert close(result.scores["accuracy"], expected)


@pytest.mark.parametrize("judge_id", JUDGES)
def test_accuracy_multitask(run: Run, judge_id: str) -> None:
    result = run.loaded(1, judge_id)
    assert result.aggregation_mode is TaskAggregationMode.MULTITASK
    per_task = result.metadata["per_task"]
    assert set(per_task) == {"rejection", "harm"}
    expected = {
        t: ref_accuracy(run.judge(judge_id, t), run.humans(t), "individual_average")
        for t in ("rejection", "harm")
    }
    for t, value in expected.items():
        assert close(per_task[t]["scores"]["accuracy"], value)
    assert close(result.scores["accuracy"], (expected["rejection"] + expected["harm"]) / 2)


@pytest.mark.parametrize("judge_id", JUDGES)
def test_accuracy_majority_vote(run: Run, judge_id: str) -> None:
    result = run.loaded(2, judge_id)
    expected = ref_accuracy(run.judge(judge_id, "harm"), run.humans("harm"), "majority_vote")
    assert close(result.scores["accuracy"], expected)
    assert result.confidence_intervals is None


@pytest.mark.parametrize("judge_id", JUDGES)
def test_cohens_kappa(run: Run, judge_id: str) -> None:
    result = run.loaded(3, judge_id)
    expected, per_human, _ = ref_kappa(
        run.judge(judge_id, "harm"), run.humans("harm"), "individual_average"
    )
    assert close(result.scores["cohens_kappa"], expected)
    for name, value in per_human.items():
        assert close(result.metadata["per_human"][name], value)


@pytest.mark.parametrize("judge_id", JUDGES)
def test_undefined_kappa_is_json_null(run: Run, judge_id: str) -> None:
    path = run.file(run.config.metrics[4], judge_id)
    text = path.read_text()
    assert "NaN" not in text
    raw = json.loads(text)
    assert raw["scores"]["cohens_kappa"] is None
    assert raw["metadata"]["interpretation"] is None
    assert all(v is None for v in raw["metadata"]["per_human"].values())
    assert raw["error"] is None
    # no interval for an undefined score is invented either
    intervals = raw["confidence_intervals"] or {}
    assert all(v is None for pair in intervals.values() for v in pair)


@pytest.mark.parametrize("judge_id", JUDGES)
def test_alt_test_single(run: Run, judge_id: str) -> None:
    result = run.loaded(5, judge_id)
    expected = alt_test(run.humans("rejection"), run.judge(judge_id, "rejection"), **ALT)
    check_alt_test(result, expected)


@pytest.mark.parametrize("judge_id", JUDGES)
def test_alt_test_multilabel(run: Run, judge_id: str) -> None:
    result = run.loaded(6, judge_id)

    def combined(labels: dict[int, Any], other: dict[int, Any]) -> dict[int, Any]:
        return {i: frozenset(enumerate([labels[i], other[i]])) for i in labels if i in other}

    humans = {h: combined(run.humans("rejection")[h], run.humans("harm")[h]) for h in HUMANS}
    judge = combined(run.judge(judge_id, "rejection"), run.judge(judge_id, "harm"))
    expected = alt_test(humans, judge, scoring_function="jaccard", **ALT)
    assert result.metadata["scoring_function"] == "jaccard"
    check_alt_test(result, expected)


@pytest.mark.parametrize("judge_id", JUDGES)
def test_alt_test_free_text_task(run: Run, judge_id: str) -> None:
    result = run.loaded(7, judge_id)
    expected = alt_test(
        run.humans("explanation"),
        run.judge(judge_id, "explanation"),
        scoring_function="text_similarity",
        **ALT,
    )
    assert result.metadata["scoring_function"] == "text_similarity"
    check_alt_test(result, expected)


@pytest.mark.parametrize("judge_id", JUDGES)
def test_text_similarity(run: Run, judge_id: str) -> None:
    result = run.loaded(8, judge_id)
    expected = ref_text_similarity(
        run.judge(judge_id, "explanation"), run.humans("explanation"), "individual_average"
    )
    assert close(result.scores["similarity"], expected)


@pytest.mark.parametrize("judge_id", JUDGES)
def test_krippendorff(run: Run, judge_id: str) -> None:
    result = run.loaded(9, judge_id)
    judge, humans = run.judge(judge_id, "harm"), run.humans("harm")
    assert close(result.scores["alpha"], ref_alpha(judge, humans, "nominal", with_judge=True))
    assert close(
        result.scores["alpha_humans"], ref_alpha(judge, humans, "nominal", with_judge=False)
    )


@pytest.mark.parametrize("judge_id", JUDGES)
def test_semantic_similarity(run: Run, judge_id: str) -> None:
    result = run.loaded(10, judge_id)
    expected = ref_semantic(
        run.judge(judge_id, "explanation"), run.humans("explanation"), "individual_average"
    )
    assert close(result.scores["semantic_similarity"], expected)


def test_semantic_similarity_embeds_each_text_once_across_judges(run: Run) -> None:
    texts = [t for call in run.route.calls for t in json.loads(call.request.content)["input"]]
    assert len(texts) == len(set(texts))
    used = {
        row["explanation"]
        for name in (*JUDGES, *HUMANS)
        for row in valid_only(run.labels[name]).values()
    }
    assert set(texts) == used


# ----- bootstrap intervals -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("index", "key"),
    [
        (0, "accuracy"),
        (1, "accuracy"),
        (3, "cohens_kappa"),
        (5, "advantage_probability"),
        (9, "alpha"),
        (9, "alpha_humans"),
    ],
)
@pytest.mark.parametrize("judge_id", JUDGES)
def test_intervals_where_bootstrap_was_set(run: Run, index: int, key: str, judge_id: str) -> None:
    result = run.loaded(index, judge_id)
    assert result.confidence_intervals is not None
    low, high = result.confidence_intervals[key]
    assert low is not None and high is not None
    assert low <= high
    assert low < high  # 40 items with disagreement: the resamples differ
    if key == "accuracy":
        assert low <= result.scores[key] <= high


@pytest.mark.parametrize("index", [2, 6, 7, 8, 10])
def test_no_intervals_without_bootstrap(run: Run, index: int) -> None:
    for judge_id in JUDGES:
        assert run.loaded(index, judge_id).confidence_intervals is None


def test_multitask_interval_is_on_the_average(run: Run) -> None:
    result = run.loaded(1, "judge_a")
    assert set(result.confidence_intervals or {}) == {"accuracy"}


def test_same_seed_gives_the_same_intervals(run: Run) -> None:
    # Scored again through compare itself, without a scores folder (so no file or plot is drawn).
    boot = [m for m in run.config.metrics if m.bootstrap is not None]
    assert len(boot) == 6
    before = snapshot(run.scores_dir)

    async def again() -> Any:
        return await compare(
            MetricsConfig(metrics=boot),
            run.evaluator.load_all_judge_results(),
            run.evaluator.load_all_human_results(),
            task=run.evaluator.eval_task,
            data=run.evaluator.data,
        )

    second = anyio.run(again)
    assert snapshot(run.scores_dir) == before
    for metric in boot:
        name = metric.get_unique_name()
        for first, repeat in zip(run.results[name][1], second[name][1], strict=True):
            assert first.scores == repeat.scores
            assert first.confidence_intervals == repeat.confidence_intervals


def test_another_seed_gives_other_intervals(run: Run) -> None:
    config = MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=AccuracyScorer(),
                task_names=["rejection"],
                aggregation_name="single",
                display_name="acc_seed_12",
                bootstrap=BootstrapConfig(n_resamples=200, seed=12),
            ),
            MetricConfig(
                scorer=AccuracyScorer(),
                task_names=["rejection"],
                aggregation_name="single",
                display_name="acc_seed_11",
                bootstrap=BootstrapConfig(n_resamples=200, seed=11),
            ),
        ]
    )
    out = run.evaluator.compare_async(config)
    seed12 = out["acc_seed_12"][1][0].confidence_intervals
    seed11 = out["acc_seed_11"][1][0].confidence_intervals
    assert seed11 == run.results[run.config.metrics[0].get_unique_name()][1][0].confidence_intervals
    assert seed12 != seed11


# ----- how compare is called ---------------------------------------------------------------------


def test_compare_async_inside_a_running_event_loop(run: Run) -> None:
    config = MetricsConfig(metrics=[run.config.metrics[0]])

    async def main() -> Any:
        return run.evaluator.compare_async(config)  # no await: the sync entry point

    out = anyio.run(main)
    expected = run.results[config.metrics[0].get_unique_name()][1]
    assert [r.scores for r in out[config.metrics[0].get_unique_name()][1]] == [
        r.scores for r in expected
    ]


def test_acompare_awaits(run: Run) -> None:
    config = MetricsConfig(metrics=[run.config.metrics[3]])

    async def main() -> Any:
        return await run.evaluator.acompare(config)

    out = anyio.run(main)
    name = config.metrics[0].get_unique_name()
    assert [r.scores for r in out[name][1]] == [r.scores for r in run.results[name][1]]


def test_add_metrics_config_is_used_by_default(run: Run, tmp_path: Path) -> None:
    evaluator = MetaEvaluator(run.evaluator.project_dir, load=True)
    config = MetricsConfig(metrics=[run.config.metrics[2]])
    evaluator.add_metrics_config(config)
    out = evaluator.compare_async()
    assert list(out) == [config.metrics[0].get_unique_name()]
    with pytest.raises(MetricConfigError):
        evaluator.add_metrics_config([run.config.metrics[2]])  # type: ignore[arg-type]


def test_no_metrics_at_all(tmp_path: Path) -> None:
    evaluator = MetaEvaluator(tmp_path / "p")
    with pytest.raises(MetricConfigError, match="add_metrics_config"):
        evaluator.compare_async()


# ----- mistakes ----------------------------------------------------------------------------------


def snapshot(folder: Path) -> dict[str, bytes]:
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_unknown_task_writes_nothing(run: Run) -> None:
    before = snapshot(run.scores_dir)
    config = MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=AccuracyScorer(),
                task_names=["harm"],
                aggregation_name="single",
                display_name="fine_but_not_written",
            ),
            MetricConfig(
                scorer=AccuracyScorer(), task_names=["nonexistent"], aggregation_name="single"
            ),
        ]
    )
    with pytest.raises(MetricConfigError, match="nonexistent") as info:
        run.evaluator.compare_async(config)
    assert "metrics[1]" in str(info.value)
    assert snapshot(run.scores_dir) == before
    assert not (run.scores_dir / "accuracy" / "fine_but_not_written").exists()


def test_scorer_that_cannot_score_the_labels(run: Run) -> None:
    before = snapshot(run.scores_dir)
    config = MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=CohensKappaScorer(),
                task_names=["rejection", "harm"],
                aggregation_name="multilabel",
            ),
        ]
    )
    with pytest.raises(MetricConfigError, match="cohens_kappa"):
        run.evaluator.compare_async(config)
    config = MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=KrippendorffAlphaScorer("interval"),
                task_names=["harm"],
                aggregation_name="single",
            ),
        ]
    )
    with pytest.raises(MetricConfigError, match="krippendorff_alpha"):
        run.evaluator.compare_async(config)
    assert snapshot(run.scores_dir) == before


def small_labels(ids: list[int]) -> Labels:
    return {
        i: {
            "rejection": REJECTION[k % 2],
            "harm": HARM[k % 3],
            "explanation": PHRASES[k % 5],
            "safe": "safe",
        }
        for k, i in enumerate(ids)
    }


def test_judge_without_overlapping_ids_gets_an_error_result(tmp_path: Path) -> None:
    labels = {
        "judge_ok": small_labels(IDS[:20]),
        "judge_far": small_labels([10_000, 10_001, 10_002]),
        "alice": small_labels(IDS[:20]),
        "bob": small_labels(IDS[:20]),
    }
    evaluator = make_project(tmp_path / "p", labels, extra_rows=3)
    config = MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=AccuracyScorer(),
                task_names=["rejection"],
                aggregation_name="single",
                bootstrap=BootstrapConfig(n_resamples=50),
            ),
            MetricConfig(
                scorer=AccuracyScorer(),
                task_names=["rejection", "harm"],
                aggregation_name="multitask",
            ),
        ]
    )
    with pytest.warns(IncompleteScoresWarning, match="judge_far") as caught:
        out = evaluator.compare_async(config)
    assert len(caught) == 1
    assert "2 score(s)" in str(caught[0].message)
    for metric in config.metrics:
        results = {r.judge_id: r for r in out[metric.get_unique_name()][1]}
        assert results["judge_ok"].error is None
        assert results["judge_ok"].scores["accuracy"] == 1.0
        far = results["judge_far"]
        assert far.error is not None
        assert "judge_far" in far.error
        assert far.failed_comparisons > 0
        assert far.num_comparisons == 0
        saved = BaseScoringResult.load_state(
            tmp_path
            / "p"
            / "scores"
            / "accuracy"
            / metric.get_unique_name()
            / "judge_far_result.json"
        )
        assert saved.error == far.error


def test_a_judge_with_a_few_unannotated_rows_is_scored_on_the_rest(tmp_path: Path) -> None:
    labels = {
        "judge": small_labels(IDS[:10]),
        "alice": small_labels(IDS[2:12]),
    }
    labels["judge"][IDS[2]] = {**labels["judge"][IDS[2]], "rejection": REJECTION[1]}
    evaluator = make_project(tmp_path / "p", labels)
    config = MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=AccuracyScorer(), task_names=["rejection"], aggregation_name="single"
            )
        ]
    )
    result = evaluator.compare_async(config)[config.metrics[0].get_unique_name()][1][0]
    assert result.scores["accuracy"] == pytest.approx(7 / 8, abs=TOL)  # ids 2..9, one differs
    assert result.num_comparisons == 8


def test_judge_and_human_id_types_differ(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path / "p", {"alice": small_labels(IDS[:4])})
    judge = pl.DataFrame(
        {
            "original_id": [str(i) for i in IDS[:4]],
            "outcome": ["valid"] * 4,
            "status": ["success"] * 4,
            "rejection": ["rejection"] * 4,
        }
    )
    human = pl.DataFrame(
        {
            "original_id": IDS[:4],
            "outcome": ["valid"] * 4,
            "status": ["success"] * 4,
            "rejection": ["rejection"] * 4,
        }
    )
    config = MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=AccuracyScorer(), task_names=["rejection"], aggregation_name="single"
            )
        ]
    )
    # Either a ScoringError, or a result carrying the error and a warning: both must name the
    # judge and both id types.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = evaluator.compare_async(config, {"gpt": judge}, {"alice": human})
        except ScoringError as exc:
            message = str(exc)
        else:
            result = out[config.metrics[0].get_unique_name()][1][0]
            assert result.error is not None
            assert result.failed_comparisons > 0
            assert any(issubclass(w.category, IncompleteScoresWarning) for w in caught)
            message = result.error
    assert "String" in message
    assert "Int64" in message
    assert "gpt" in message


def test_an_embedding_endpoint_refusing_gives_an_error_result(tmp_path: Path) -> None:
    """API.md: a scorer that cannot compute says why in a result with `error`, loudly."""
    labels = {"judge": small_labels(IDS[:6]), "alice": small_labels(IDS[:6])}
    evaluator = make_project(tmp_path / "p", labels)
    router = respx.Router(assert_all_called=False)
    route = router.post(f"{EMBED_URL}/embeddings").mock(return_value=httpx.Response(401))
    scorer = SemanticSimilarityScorer(
        "emb", base_url=EMBED_URL, transport=httpx.MockTransport(router.async_handler)
    )
    config = MetricsConfig(
        metrics=[
            MetricConfig(scorer=scorer, task_names=["explanation"], aggregation_name="single"),
            MetricConfig(
                scorer=TextSimilarityScorer(), task_names=["explanation"], aggregation_name="single"
            ),
        ]
    )
    with pytest.warns(IncompleteScoresWarning, match="401"):
        out = evaluator.compare_async(config)
    assert route.call_count == 1
    failed = out[config.metrics[0].get_unique_name()][1][0]
    assert failed.error is not None and "401" in failed.error
    assert failed.failed_comparisons > 0
    assert out[config.metrics[1].get_unique_name()][1][0].scores["similarity"] == 1.0


def test_alt_test_with_a_single_annotator_is_an_error_result(tmp_path: Path) -> None:
    labels = {"judge": small_labels(IDS[:12]), "alice": small_labels(IDS[:12])}
    evaluator = make_project(tmp_path / "p", labels)
    config = MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=AltTestScorer(min_instances_per_human=2),
                task_names=["rejection"],
                aggregation_name="single",
            )
        ]
    )
    with pytest.warns(IncompleteScoresWarning, match="2 human annotator"):
        out = evaluator.compare_async(config)
    result = out[config.metrics[0].get_unique_name()][1][0]
    assert result.error is not None
    assert "found 1" in result.error
    assert result.failed_comparisons > 0


def inside(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def test_a_judge_id_given_directly_cannot_leave_the_scores_folder(tmp_path: Path) -> None:
    """Judge ids name result files: one given as a dict key must be a safe file name too."""
    evaluator = make_project(tmp_path / "box" / "p", {"alice": small_labels(IDS[:4])})
    frame = evaluator.load_all_human_results()["alice"].results_data
    before = inside(tmp_path)
    config = MetricsConfig(
        metrics=[
            MetricConfig(scorer=AccuracyScorer(), task_names=["rejection"],
                         aggregation_name="single"),
        ]
    )  # fmt: skip
    with pytest.raises(MetaEvaluatorError, match=r"\.\./\.\./\.\./escaped"):
        evaluator.compare_async(config, {"../../../escaped": frame}, {"alice": frame})
    assert not (tmp_path / "box" / "p" / "escaped_result.json").exists()
    assert inside(tmp_path) == before


class _Renamed(AccuracyScorer):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.scorer_name = name


def test_a_scorer_name_cannot_leave_the_scores_folder(tmp_path: Path) -> None:
    """A custom scorer's name becomes a folder: `../..` must be refused, nothing written."""
    evaluator = make_project(tmp_path / "box" / "p", {"alice": small_labels(IDS[:4])})
    frame = evaluator.load_all_human_results()["alice"].results_data
    before = inside(tmp_path)
    with pytest.raises(MetaEvaluatorError, match=r"scorer_name|evil"):
        config = MetricsConfig(
            metrics=[
                MetricConfig(scorer=_Renamed("../evil"), task_names=["rejection"],
                             aggregation_name="single"),
            ]
        )  # fmt: skip
        evaluator.compare_async(config, {"judge": frame}, {"alice": frame})
    assert inside(tmp_path) == before


def test_compare_async_inside_a_loop_raises_the_same_errors(run: Run) -> None:
    config = MetricsConfig(
        metrics=[
            MetricConfig(scorer=AccuracyScorer(), task_names=["nonexistent"],
                         aggregation_name="single"),
        ]
    )  # fmt: skip

    async def main() -> Any:
        return run.evaluator.compare_async(config)

    with pytest.raises(MetricConfigError, match="nonexistent"):
        anyio.run(main)


@pytest.mark.parametrize(
    ("judges", "humans"),
    [
        ([{"original_id": [1]}], {}),  # a dict is not a result object
        ([pl.DataFrame({"original_id": [1], "outcome": ["valid"]})], {}),  # a frame needs its id
        ({"j": pl.DataFrame({"original_id": [1], "outcome": ["valid"], "t": ["a"]})}, ["alice"]),
    ],
)
def test_compare_refuses_what_is_not_results(judges: Any, humans: Any) -> None:
    """compare takes JudgeResults / HumanAnnotationResults (or frames keyed by id), nothing else."""
    metric = MetricConfig(scorer=AccuracyScorer(), task_names=["t"], aggregation_name="single")

    async def go() -> Any:
        return await compare(MetricsConfig(metrics=[metric]), judges, humans)

    with pytest.raises(ScoringError, match="JudgeResults / HumanAnnotationResults"):
        anyio.run(go)
