"""`PreferenceScorer` against `meta_evaluator.stats.preference` (tested on its own in
tests/stats/test_preference.py) on votes aligned here, and end to end through a project.

References: `annotator_metrics`, `dataset_statistics` and `strength_interval` called with plain
lists built in this file from METRICS.md A; the majority preference of several humans written
here (a tie between text_a and text_b is no vote); the end-to-end strengths recomputed from the
labels written to the imported CSV files with the plain-Python reference of the stats tests.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.errors import MetricConfigError, ScoringError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.scores import BootstrapConfig, MetricConfig, MetricsConfig, TaskAggregationMode
from meta_evaluator.scores.metrics import PreferenceScorer
from meta_evaluator.stats.preference import (
    annotator_metrics,
    dataset_statistics,
    normalize_vote,
    strength_interval,
)
from tests.scores.conftest import run_scorer
from tests.stats.test_preference import reference_metrics, reference_statistics

TOL = 1e-12
SINGLE = TaskAggregationMode.SINGLE
SCORE_KEYS = ("relevance", "accuracy", "cohens_kappa", "cohens_kappa_estimated", "strength")
JUDGE_VOTES = ["text_a", "text_b", "a", "TEXT_B", "tie", None]  # None: an invalid row
HUMAN_VOTES = ["text_a", "text_b", "a", "b", "tie"]
TOPICS = ["code", "chat", "math"]

Votes = dict[str, Any]


# ------------------------------------------------------------------------ frames & data --


def draw(seed: int, n_humans: int, n: int = 50) -> tuple[Votes, dict[str, Votes], Votes]:
    """Judge votes, each human's votes (each skips ~20% of the pairs) and a topic per pair."""
    rng = np.random.default_rng(seed)
    ids = [f"pair-{i:03d}" for i in range(n)]
    truth = {i: HUMAN_VOTES[int(rng.integers(0, 2))] for i in ids}

    def vote(choices: list[Any], i: str) -> Any:
        if rng.random() < 0.6:
            return truth[i]
        return choices[int(rng.integers(0, len(choices)))]

    judge = {i: vote(JUDGE_VOTES, i) for i in ids if rng.random() < 0.9}
    humans = {
        f"h{k}": {i: vote(HUMAN_VOTES, i) for i in ids if rng.random() < 0.8}
        for k in range(n_humans)
    }
    topics = {i: TOPICS[int(rng.integers(0, len(TOPICS)))] for i in ids}
    return judge, humans, topics


def judge_frame(judge: Votes, **columns: Votes) -> pl.DataFrame:
    """original_id, label, outcome (invalid rows: label None), plus data columns by id."""
    ids = list(judge)
    return pl.DataFrame(
        {
            "original_id": ids,
            "label": pl.Series([judge[i] for i in ids], dtype=pl.String),
            "outcome": ["invalid" if judge[i] is None else "valid" for i in ids],
            **{name: [values[i] for i in ids] for name, values in columns.items()},
        }
    )


def human_frame(humans: dict[str, Votes]) -> pl.DataFrame:
    rows = [(i, h, v) for h, votes in humans.items() for i, v in votes.items()]
    return pl.DataFrame(
        {
            "original_id": [r[0] for r in rows],
            "human_id": [r[1] for r in rows],
            "label": [r[2] for r in rows],
        },
        schema={"original_id": pl.String, "human_id": pl.String, "label": pl.String},
    )


def majority(humans: dict[str, Votes], i: str) -> str | None:
    """The humans' majority preference on pair i; equal text_a and text_b votes: no vote."""
    votes = [normalize_vote(h[i]) for h in humans.values() if i in h]
    a, b = votes.count("text_a"), votes.count("text_b")
    return "text_a" if a > b else "text_b" if b > a else None


def aligned(judge: Votes, reference: Votes) -> tuple[list[str], list[Any], list[Any]]:
    """Pairs with a judge row and a reference label: ids, judge votes, reference votes."""
    ids = sorted(i for i in judge if i in reference)
    return ids, [judge[i] for i in ids], [reference[i] for i in ids]


def assert_scores(scores: dict[str, Any], expected: dict[str, Any]) -> None:
    for key in SCORE_KEYS:
        if expected[key] is None:
            assert scores[key] is None, key
        else:
            assert scores[key] == pytest.approx(expected[key], abs=TOL), key


def mean_defined(values: list[Any]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


# --------------------------------------------------------------------- compute_score_async --


@pytest.mark.parametrize("seed", range(6))
def test_single_human_matches_annotator_metrics(seed: int) -> None:
    """Scores, counts, p-value and the strength interval equal the pure functions on the
    aligned votes; an invalid judge row (label None) is a 'not applicable' vote."""
    judge, humans, _ = draw(seed, 1)
    scorer = PreferenceScorer(n_resamples=500, seed=seed)
    result = run_scorer(scorer, judge_frame(judge), human_frame(humans))
    _, votes, ref = aligned(judge, humans["h0"])
    expected = annotator_metrics(votes, ref)
    assert_scores(result.scores, expected)
    assert_scores(result.scores, reference_metrics(votes, ref))
    for key in ("num_pairs", "agreed", "disagreed", "not_applicable"):
        assert result.metadata[key] == expected[key], key
    assert result.metadata["p_value"] == pytest.approx(expected["p_value"], abs=TOL)
    assert result.metadata["strength_interval"] == strength_interval(votes, ref, 500, seed)
    assert result.num_comparisons == expected["num_pairs"]
    assert result.failed_comparisons == 0
    assert result.scorer_name == "preference"
    assert result.metadata["human_annotators"] == 1
    assert "dataset_statistics" not in result.metadata
    assert "per_group" not in result.metadata


def test_invalid_rows_count_as_not_applicable() -> None:
    """Three pairs: agree, disagree, invalid judge row -> relevance 2/3, strength 0."""
    judge = {"p1": "text_a", "p2": "a", "p3": None}
    humans = {"h": {"p1": "text_a", "p2": "text_b", "p3": "b"}}
    result = run_scorer(PreferenceScorer(), judge_frame(judge), human_frame(humans))
    assert result.metadata["not_applicable"] == 1
    assert result.scores["relevance"] == pytest.approx(2 / 3, abs=TOL)
    assert result.scores["strength"] == pytest.approx(0.0, abs=TOL)
    # without the invalid row: relevance 1
    del judge["p3"]
    result = run_scorer(PreferenceScorer(), judge_frame(judge), human_frame(humans))
    assert result.scores["relevance"] == 1.0


def test_invalid_row_with_a_label_is_not_a_vote() -> None:
    frame = pl.DataFrame(
        {
            "original_id": ["p1", "p2"],
            "label": ["text_a", "text_a"],
            "outcome": ["valid", "invalid"],
        }
    )
    humans = human_frame({"h": {"p1": "text_a", "p2": "text_b"}})
    result = run_scorer(PreferenceScorer(), frame, humans)
    assert result.metadata["not_applicable"] == 1
    assert result.scores["strength"] == pytest.approx(0.5, abs=TOL)


@pytest.mark.parametrize("n_humans", [2, 3])
@pytest.mark.parametrize("seed", range(4))
def test_individual_average_is_the_mean_over_humans(seed: int, n_humans: int) -> None:
    """individual_average: each score is the mean of the per-human metrics (undefined skipped);
    metadata['per_human'] holds each human's metrics."""
    judge, humans, _ = draw(seed + 10, n_humans)
    result = run_scorer(
        PreferenceScorer(), judge_frame(judge), human_frame(humans),
        annotator_aggregation="individual_average",
    )  # fmt: skip
    per_human = {}
    for h, votes_h in humans.items():
        _, votes, ref = aligned(judge, votes_h)
        per_human[h] = annotator_metrics(votes, ref)
    expected = {k: mean_defined([m[k] for m in per_human.values()]) for k in SCORE_KEYS}
    assert_scores(result.scores, expected)
    assert set(result.metadata["per_human"]) == set(humans)
    for h, metrics in per_human.items():
        assert_scores(result.metadata["per_human"][h], metrics)
        assert result.metadata["per_human"][h]["num_pairs"] == metrics["num_pairs"]
    assert result.metadata["human_annotators"] == n_humans
    assert result.num_comparisons == sum(m["num_pairs"] for m in per_human.values())


@pytest.mark.parametrize("n_humans", [2, 3, 4])
@pytest.mark.parametrize("seed", range(4))
def test_majority_vote(seed: int, n_humans: int) -> None:
    """majority_vote: the metrics against the majority preference of the humans, a text_a /
    text_b tie (and no vote at all) being no vote."""
    judge, humans, _ = draw(seed + 20, n_humans)
    result = run_scorer(
        PreferenceScorer(), judge_frame(judge), human_frame(humans),
        annotator_aggregation="majority_vote",
    )  # fmt: skip
    labelled = {i for h in humans.values() for i in h}
    reference = {i: majority(humans, i) for i in labelled}
    _, votes, ref = aligned(judge, reference)
    expected = annotator_metrics(votes, ref)
    assert_scores(result.scores, expected)
    assert result.num_comparisons == expected["num_pairs"]


def test_majority_vote_tie_is_no_vote() -> None:
    """p1: one text_a, one text_b -> no vote (left out); p2: text_b, b, tie -> text_b."""
    judge = {"p1": "text_a", "p2": "text_b", "p3": "text_a"}
    humans = {
        "h0": {"p1": "text_a", "p2": "text_b", "p3": "a"},
        "h1": {"p1": "text_b", "p2": "b", "p3": "tie"},
        "h2": {"p2": "tie", "p3": "tie"},
    }
    result = run_scorer(
        PreferenceScorer(), judge_frame(judge), human_frame(humans),
        annotator_aggregation="majority_vote",
    )  # fmt: skip
    assert result.num_comparisons == 2
    assert result.scores["strength"] == 1.0


@pytest.mark.parametrize(
    ("aggregation", "n_humans"), [("individual_average", 1), ("majority_vote", 3)]
)
@pytest.mark.parametrize("seed", range(3))
def test_group_by(seed: int, aggregation: str, n_humans: int) -> None:
    """metadata['per_group'][topic] = the metrics on that topic's pairs only."""
    judge, humans, topics = draw(seed + 30, n_humans)
    result = run_scorer(
        PreferenceScorer(group_by="topic"), judge_frame(judge, topic=topics),
        human_frame(humans), annotator_aggregation=aggregation,
    )  # fmt: skip
    labelled = {i for h in humans.values() for i in h}
    reference = {i: majority(humans, i) for i in labelled} if n_humans > 1 else humans["h0"]
    per_group = result.metadata["per_group"]
    assert sorted(per_group) == sorted({topics[i] for i in judge if i in labelled})
    for topic, metrics in per_group.items():
        mine = {i: v for i, v in judge.items() if topics[i] == topic}
        _, votes, ref = aligned(mine, reference)
        expected = annotator_metrics(votes, ref)
        assert_scores(metrics, expected)
        assert metrics["num_pairs"] == expected["num_pairs"]
    assert sum(m["num_pairs"] for m in per_group.values()) == result.metadata.get(
        "num_pairs", result.num_comparisons
    )


def test_group_by_without_the_column_gives_no_groups() -> None:
    judge, humans, _ = draw(1, 1)
    result = run_scorer(PreferenceScorer(group_by="topic"), judge_frame(judge), human_frame(humans))
    assert "per_group" not in result.metadata


@pytest.mark.parametrize("n_humans", [1, 3])
def test_dataset_statistics_with_text_columns(n_humans: int) -> None:
    """With text_a/text_b in judge_data: dataset_statistics of the reference preference on the
    scored pairs (non-ASCII texts, some of equal length)."""
    judge, humans, _ = draw(40 + n_humans, n_humans)
    rng = np.random.default_rng(5)
    words = ["é", "日本", "ok", "🙂", "long words", "x"]

    def text() -> str:
        return " ".join(words[int(k)] for k in rng.integers(0, len(words), rng.integers(1, 4)))

    text_a = {i: text() for i in judge}
    text_b = {i: text() for i in judge}
    result = run_scorer(
        PreferenceScorer(), judge_frame(judge, text_a=text_a, text_b=text_b),
        human_frame(humans), annotator_aggregation="majority_vote",
    )  # fmt: skip
    labelled = {i for h in humans.values() for i in h}
    reference = {i: majority(humans, i) for i in labelled} if n_humans > 1 else humans["h0"]
    ids, _, ref = aligned(judge, reference)
    a, b = [text_a[i] for i in ids], [text_b[i] for i in ids]
    expected = dataset_statistics(a, b, ref)
    assert result.metadata["dataset_statistics"] == expected
    for key, value in reference_statistics(a, b, ref).items():
        assert expected[key] == pytest.approx(value, abs=TOL), key


def test_dataset_statistics_custom_text_columns() -> None:
    judge, humans, _ = draw(3, 1)
    text_1 = {i: "x" * (len(i) % 5 + 1) for i in judge}
    text_2 = {i: "yy" for i in judge}
    frame = judge_frame(judge, first=text_1, second=text_2)
    plain = run_scorer(PreferenceScorer(), frame, human_frame(humans))
    assert "dataset_statistics" not in plain.metadata
    custom = run_scorer(
        PreferenceScorer(text_columns=("first", "second")), frame, human_frame(humans)
    )
    ids, _, ref = aligned(judge, humans["h0"])
    assert custom.metadata["dataset_statistics"] == dataset_statistics(
        [text_1[i] for i in ids], [text_2[i] for i in ids], ref
    )


def test_chance_agreement_option() -> None:
    judge, humans, _ = draw(8, 1)
    result = run_scorer(
        PreferenceScorer(chance_agreement=0.3), judge_frame(judge), human_frame(humans)
    )
    _, votes, ref = aligned(judge, humans["h0"])
    assert_scores(result.scores, annotator_metrics(votes, ref, chance_agreement=0.3))
    assert result.metadata["chance_agreement"] == 0.3


def test_no_common_pair_raises() -> None:
    with pytest.raises(ScoringError, match="no pair"):
        run_scorer(PreferenceScorer(), judge_frame({"p1": "a"}), human_frame({"h": {"p2": "a"}}))


def test_can_score_task() -> None:
    scorer = PreferenceScorer()
    assert scorer.can_score_task("text_a")
    assert scorer.can_score_task("tie")
    assert not scorer.can_score_task(["text_a"])
    assert not scorer.can_score_task(1)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"chance_agreement": 0}, "chance_agreement"),
        ({"chance_agreement": 1.0}, "chance_agreement"),
        ({"chance_agreement": True}, "chance_agreement"),
        ({"chance_agreement": "0.5"}, "chance_agreement"),
        ({"n_resamples": 0}, "n_resamples"),
        ({"n_resamples": 10.0}, "n_resamples"),
        ({"n_resamples": True}, "n_resamples"),
        ({"reference_task": ""}, "reference_task"),
        ({"reference_task": 3}, "reference_task"),
        ({"group_by": ""}, "group_by"),
        ({"text_columns": ("text_a",)}, "text_columns"),
        ({"text_columns": "ab"}, "text_columns"),
        ({"text_columns": ("text_a", 2)}, "text_columns"),
    ],
)
def test_constructor_validation(kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ScoringError, match=fragment) as info:
        PreferenceScorer(**kwargs)
    assert type(info.value) is ScoringError


def test_constructor_lists_every_problem() -> None:
    with pytest.raises(ScoringError) as info:
        PreferenceScorer(chance_agreement=2, n_resamples=0, group_by="")
    message = str(info.value)
    assert all(k in message for k in ("chance_agreement", "n_resamples", "group_by"))


# ------------------------------------------------------------------------------ end to end --


N_PAIRS = 60
IDS = [f"cmp-{i:03d}" for i in range(N_PAIRS)]
SKIPPED_BY_JUDGE = {"cmp-007", "cmp-031"}
SKIPPED_BY_HUMAN = {"cmp-012"}
PREFERENCE_LABELS = ["text_a", "text_b", "tie"]


def pairs_data(seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for k, cid in enumerate(IDS):
        len_a = int(rng.integers(5, 60))
        len_b = len_a if k % 10 == 0 else int(rng.integers(5, 60))
        rows.append(
            {
                "comparison_id": cid,
                "prompt": f"question {k}",
                "text_a": "é" * (len_a // 2) + "a" * (len_a - len_a // 2),
                "text_b": "b" * len_b,
                "topic": TOPICS[k % len(TOPICS)],
            }
        )
    return pl.DataFrame(rows)


def votes_by_rule(data: pl.DataFrame, seed: int = 1) -> tuple[Votes, Votes, Votes]:
    """The human prefers the longer text 80% of the time (some ties); the judge votes the
    shorter text for 'concise' and the longer for 'detailed' (tie on equal lengths, and
    'concise' says tie on ~15% of the pairs)."""
    rng = np.random.default_rng(seed)
    human: Votes = {}
    concise: Votes = {}
    detailed: Votes = {}
    for row in data.iter_rows(named=True):
        cid, la, lb = row["comparison_id"], len(row["text_a"]), len(row["text_b"])
        longer = "text_a" if la > lb else "text_b" if lb > la else None
        shorter = {"text_a": "text_b", "text_b": "text_a", None: None}[longer]
        u = rng.random()
        if u < 0.1 or longer is None:
            human[cid] = "tie" if u < 0.1 else PREFERENCE_LABELS[int(rng.integers(0, 2))]
        else:
            human[cid] = longer if u < 0.8 else shorter
        concise[cid] = "tie" if shorter is None or rng.random() < 0.15 else shorter
        detailed[cid] = longer or "tie"
    return human, concise, detailed


def make_project(root: Path) -> tuple[MetaEvaluator, pl.DataFrame, dict[str, Votes]]:
    data = pairs_data()
    human, concise, detailed = votes_by_rule(data)
    evaluator = MetaEvaluator(root)
    evaluator.add_data(DataLoader.load_from_dataframe("pairs", data, id_column="comparison_id"))
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={
                "preference": PREFERENCE_LABELS,
                "concise": PREFERENCE_LABELS,
                "detailed": PREFERENCE_LABELS,
            },
            prompt_columns=["prompt"],
            response_columns=["text_a", "text_b"],
            required_tasks=["preference"],  # humans label the preference only
        )
    )
    files = root.parent / "files"
    files.mkdir()
    judged = [c for c in IDS if c not in SKIPPED_BY_JUDGE]
    pl.DataFrame(
        {
            "comparison_id": judged,
            "preference": [detailed[c] for c in judged],
            "concise": [concise[c] for c in judged],
            "detailed": [detailed[c] for c in judged],
        }
    ).write_csv(files / "judge.csv")
    evaluator.add_external_judge_results(
        files / "judge.csv", "trait_judge", id_column="comparison_id"
    )
    annotated = [c for c in IDS if c not in SKIPPED_BY_HUMAN]
    pl.DataFrame({"original_id": annotated, "preference": [human[c] for c in annotated]}).write_csv(
        files / "human.csv"
    )
    evaluator.add_external_annotation_results(files / "human.csv", "alice")
    return evaluator, data, {"human": human, "concise": concise, "detailed": detailed}


def trait_metric(**scorer_options: Any) -> MetricConfig:
    return MetricConfig(
        scorer=PreferenceScorer(reference_task="preference", group_by="topic", **scorer_options),
        task_names=["concise", "detailed"],
        aggregation_name="multitask",
        bootstrap=BootstrapConfig(n_resamples=200),
    )


def test_end_to_end_trait_table(tmp_path: Path) -> None:
    """Traits judged per pair, human preference as reference, through compare_async: per-task
    strengths, per-topic metrics and dataset statistics equal the references; the trait table
    (CSV, Markdown) is sorted by strength and the chart is a real PNG."""
    evaluator, data, votes = make_project(tmp_path / "project")
    metric = trait_metric()
    table = evaluator.compare_async(MetricsConfig(metrics=[metric]))
    ((name, (_, results)),) = table.items()
    (result,) = results
    assert result.error is None and result.judge_id == "trait_judge"

    common = [c for c in IDS if c not in SKIPPED_BY_JUDGE and c not in SKIPPED_BY_HUMAN]
    human = [votes["human"][c] for c in common]
    topic = dict(zip(data["comparison_id"], data["topic"], strict=True))
    per_task = result.metadata["per_task"]
    strengths = {}
    for trait in ("concise", "detailed"):
        judge = [votes[trait][c] for c in common]
        expected = reference_metrics(judge, human)
        entry = per_task[trait]
        for key in ("strength", "relevance", "accuracy", "cohens_kappa"):
            assert entry["scores"][key] == pytest.approx(expected[key], abs=TOL), (trait, key)
        assert entry["metadata"]["num_pairs"] == expected["num_pairs"]
        assert entry["metadata"]["strength_interval"] == pytest.approx(
            strength_interval(judge, human, 10000, 0)
        )
        strengths[trait] = expected["strength"]
        for group, metrics in entry["metadata"]["per_group"].items():
            rows = [k for k, c in enumerate(common) if topic[c] == group]
            group_expected = reference_metrics([judge[k] for k in rows], [human[k] for k in rows])
            assert metrics["strength"] == pytest.approx(group_expected["strength"], abs=TOL)
        assert sorted(entry["metadata"]["per_group"]) == sorted(TOPICS)
        stats = entry["metadata"]["dataset_statistics"]
        expected_stats = reference_statistics(
            [data.row(IDS.index(c), named=True)["text_a"] for c in common],
            [data.row(IDS.index(c), named=True)["text_b"] for c in common],
            human,
        )
        assert stats["num_pairs"] == expected_stats["num_pairs"]
        assert stats["num_equal_length_pairs"] == expected_stats["num_equal_length_pairs"] > 0
        assert stats["prop_preferring_longer"] == pytest.approx(
            expected_stats["prop_preferring_longer"], abs=TOL
        )
    # the rules make 'detailed' a strong positive trait and 'concise' a negative one
    assert strengths["detailed"] > 0.4 and strengths["concise"] < -0.3
    assert result.scores["strength"] == pytest.approx(
        (strengths["concise"] + strengths["detailed"]) / 2, abs=TOL
    )
    low, high = result.confidence_intervals["strength"]
    assert low is not None and high is not None
    assert low <= result.scores["strength"] <= high and high - low > 0.01

    folder = tmp_path / "project" / "scores" / "preference" / name
    assert (folder / "trait_judge_result.json").is_file()
    with (folder / "trait_table.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["trait"] for r in rows] == ["detailed", "concise"]
    column = [float(r["strength"]) for r in rows]
    assert column == sorted(column, reverse=True)
    for r in rows:
        assert float(r["strength"]) == pytest.approx(strengths[r["trait"]], abs=1e-9)
        assert float(r["low_2.5"]) <= float(r["strength"]) <= float(r["high_97.5"])
    markdown = (folder / "trait_table.md").read_text()
    assert markdown.index("| detailed |") < markdown.index("| concise |")
    assert f"{strengths['detailed']:.3f}" in markdown
    png = (folder / "strength_by_trait.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(png) > 5_000


def test_end_to_end_single_trait(tmp_path: Path) -> None:
    """One trait, aggregation 'single': the result's own scores are the trait's."""
    evaluator, _, votes = make_project(tmp_path / "project")
    metric = MetricConfig(
        scorer=PreferenceScorer(reference_task="preference"),
        task_names=["detailed"],
        aggregation_name="single",
    )
    ((_, (_, (result,))),) = evaluator.compare_async(MetricsConfig(metrics=[metric])).items()
    common = [c for c in IDS if c not in SKIPPED_BY_JUDGE and c not in SKIPPED_BY_HUMAN]
    expected = reference_metrics(
        [votes["detailed"][c] for c in common], [votes["human"][c] for c in common]
    )
    assert_scores(result.scores, expected)
    human_ties = sum(votes["human"][c] == "tie" for c in common)
    assert result.metadata["num_pairs"] == expected["num_pairs"] == len(common) - human_ties


def test_unknown_reference_task_raises(tmp_path: Path) -> None:
    evaluator, _, _ = make_project(tmp_path / "project")
    metric = MetricConfig(
        scorer=PreferenceScorer(reference_task="prefernce"),
        task_names=["concise", "detailed"],
        aggregation_name="multitask",
    )
    with pytest.raises(MetricConfigError, match="prefernce"):
        evaluator.compare_async(MetricsConfig(metrics=[metric]))
    assert not (tmp_path / "project" / "scores" / "preference").exists()


def test_reference_task_with_multilabel_raises(tmp_path: Path) -> None:
    evaluator, _, _ = make_project(tmp_path / "project")
    metric = MetricConfig(
        scorer=PreferenceScorer(reference_task="preference"),
        task_names=["concise", "detailed"],
        aggregation_name="multilabel",
    )
    with pytest.raises(MetricConfigError, match="not 'multilabel'"):
        evaluator.compare_async(MetricsConfig(metrics=[metric]))


def test_end_to_end_unusable_trait_votes_are_not_applicable(tmp_path: Path) -> None:
    """A judge row that leaves a trait empty, or gives a label the task does not allow, is
    still a pair with a human preference: the trait's vote there is 'not applicable'
    (relevance drops), as in Feedback Forensics; the pair is not dropped."""
    root = tmp_path / "project"
    evaluator, _, votes = make_project(root)
    judged = [c for c in IDS if c not in SKIPPED_BY_JUDGE]
    unusable = {judged[3]: None, judged[4]: "maybe", judged[5]: None}
    concise = {c: unusable[c] if c in unusable else votes["concise"][c] for c in judged}
    pl.DataFrame(
        {
            "comparison_id": judged,
            "preference": [votes["detailed"][c] for c in judged],
            "concise": [concise[c] for c in judged],
        }
    ).write_csv(root.parent / "files" / "judge_2.csv")
    evaluator.add_external_judge_results(
        root.parent / "files" / "judge_2.csv", "sloppy_judge", id_column="comparison_id"
    )
    metric = MetricConfig(
        scorer=PreferenceScorer(reference_task="preference"),
        task_names=["concise"],
        aggregation_name="single",
    )
    ((_, (_, results)),) = evaluator.compare_async(MetricsConfig(metrics=[metric])).items()
    result = next(r for r in results if r.judge_id == "sloppy_judge")
    common = [c for c in judged if c not in SKIPPED_BY_HUMAN]
    expected = reference_metrics(
        [None if c in unusable else concise[c] for c in common],
        [votes["human"][c] for c in common],
    )
    assert result.metadata["num_pairs"] == expected["num_pairs"]
    assert result.metadata["not_applicable"] == expected["not_applicable"]
    assert_scores(result.scores, expected)


# ------------------------------------------------------------------------ comparison ids --
#
# METRICS.md A.2 / G.5: pairs sharing a comparison id are one comparison; of the pairs with a
# judge row and a human preference, the first in the data's order counts, in every metric.

# (id, comparison id, judge vote, human vote), in the order of the data's rows
HAND = [
    ("p1", "c1", "text_a", "text_a"),  # agree
    ("p2", "c1", "text_b", "text_a"),  # repeats c1: would disagree, left out
    ("p3", "c2", "text_b", "text_a"),  # disagree
    ("p4", "c3", "tie", "text_b"),  # not applicable
    ("p5", "c3", "text_b", "text_b"),  # repeats c3: would agree, left out
    ("p6", "c4", "text_b", "text_b"),  # agree
    ("p7", None, "text_a", "text_a"),  # no id: kept, agree
    ("p8", None, "text_a", "text_b"),  # no id: kept, disagree
]


def hand_frames(rows: list[tuple[Any, ...]]) -> tuple[pl.DataFrame, pl.DataFrame]:
    judge = {r[0]: r[2] for r in rows}
    ids = {r[0]: r[1] for r in rows}
    texts = {r[0]: "a" * (k + 2) for k, r in enumerate(rows)}
    frame = judge_frame(judge, comparison_id=ids, text_a=texts, text_b=dict.fromkeys(judge, "bbb"))
    return frame, human_frame({"h": {r[0]: r[3] for r in rows}})


def test_repeated_comparison_ids_count_once_by_hand() -> None:
    """Kept: p1 agree, p3 disagree, p4 n/a, p6 agree, p7 agree, p8 disagree -> N 6, agree 3,
    disagree 2: accuracy 3/5, relevance 5/6, kappa 2 * 3/5 - 1 = 1/5, strength 1/6; kappa
    with estimated chance agreement on p1, p3, p6, p7, p8 (X a b b a a, R a a b a b):
    p_o 3/5, p_e 0.6^2 + 0.4^2 = 0.52, kappa 0.08 / 0.48 = 1/6. With p2 and p5 counted it
    would be agree 4, disagree 3 (accuracy 4/7)."""
    frame, humans = hand_frames(HAND)
    result = run_scorer(PreferenceScorer(n_resamples=300), frame, humans)
    expected = {
        "accuracy": 3 / 5, "relevance": 5 / 6, "cohens_kappa": 1 / 5, "strength": 1 / 6,
        "cohens_kappa_estimated": 1 / 6,
    }  # fmt: skip
    assert_scores(result.scores, expected)
    meta = result.metadata
    assert (meta["num_pairs"], meta["agreed"], meta["disagreed"], meta["not_applicable"]) == (
        6, 3, 2, 1,
    )  # fmt: skip
    assert meta["comparison_ids"] == {
        "column": "comparison_id",
        "kept": "the first pair of each comparison id in the order of the judge's rows",
        "pairs_left_out": 2,
    }
    kept = [r for r in HAND if r[0] not in ("p2", "p5")]
    votes, ref = [r[2] for r in kept], [r[3] for r in kept]
    assert meta["strength_interval"] == strength_interval(votes, ref, 300, 0)
    assert meta["dataset_statistics"]["num_pairs"] == 6
    texts = {r[0]: "a" * (k + 2) for k, r in enumerate(HAND)}
    assert meta["dataset_statistics"] == dataset_statistics(
        [texts[r[0]] for r in kept], ["bbb"] * len(kept), ref
    )
    # the rows' order decides which pair of an id is first: p2 before p1 keeps p2
    swapped = [HAND[1], HAND[0], *HAND[2:]]
    frame, humans = hand_frames(swapped)
    again = run_scorer(PreferenceScorer(n_resamples=300), frame, humans)
    assert (again.metadata["agreed"], again.metadata["disagreed"]) == (2, 3)


def test_repeats_are_left_out_of_groups_and_of_every_human() -> None:
    """per_group, individual_average over two humans and the majority all skip p2 and p5."""
    frame, _ = hand_frames(HAND)
    frame = frame.with_columns(topic=pl.Series(["x", "x", "y", "y", "y", "x", "x", "y"]))
    second = {r[0]: ("text_b" if r[0] in ("p1", "p6") else r[3]) for r in HAND}
    humans = human_frame({"h": {r[0]: r[3] for r in HAND}, "k": second})
    kept = [r[0] for r in HAND if r[0] not in ("p2", "p5")]
    judge = {r[0]: r[2] for r in HAND}
    first = {r[0]: r[3] for r in HAND}
    result = run_scorer(PreferenceScorer(group_by="topic", n_resamples=50), frame, humans)
    per_human = result.metadata["per_human"]
    for name, labels in (("h", first), ("k", second)):
        expected = annotator_metrics([judge[i] for i in kept], [labels[i] for i in kept])
        assert per_human[name]["agreed"] == expected["agreed"], name
        assert per_human[name]["strength"] == pytest.approx(expected["strength"], abs=TOL)
    majority_vote = run_scorer(
        PreferenceScorer(n_resamples=50), frame, humans, annotator_aggregation="majority_vote"
    )
    both = {"h": first, "k": second}
    expected = annotator_metrics([judge[i] for i in kept], [majority(both, i) for i in kept])
    assert majority_vote.metadata["num_pairs"] == expected["num_pairs"]
    assert_scores(majority_vote.scores, expected)
    # groups use the majority preference (one reference per pair)
    topic = dict(zip(frame["original_id"], frame["topic"], strict=True))
    for group, metrics in result.metadata["per_group"].items():
        rows = [i for i in kept if topic[i] == group]
        expected = annotator_metrics([judge[i] for i in rows], [majority(both, i) for i in rows])
        assert metrics["num_pairs"] == expected["num_pairs"], group
        assert metrics["strength"] == pytest.approx(expected["strength"], abs=TOL), group


def test_unique_comparison_ids_change_nothing() -> None:
    """Without repeats the scores and metadata equal those of the same pairs without ids."""
    judge, humans, topics = draw(7, 2)
    ids = {i: f"cmp-{i}" for i in judge}
    options = {"n_resamples": 200, "group_by": "topic"}
    with_ids = run_scorer(
        PreferenceScorer(**options), judge_frame(judge, topic=topics, comparison_id=ids),
        human_frame(humans),
    )  # fmt: skip
    without = run_scorer(
        PreferenceScorer(**options), judge_frame(judge, topic=topics), human_frame(humans)
    )
    assert with_ids.scores == without.scores
    assert with_ids.metadata.pop("comparison_ids")["pairs_left_out"] == 0
    assert with_ids.metadata == without.metadata
    assert "comparison_ids" not in without.metadata


def test_comparison_column_options() -> None:
    """comparison_column=None keeps every pair; a named column the data lacks is an error."""
    frame, humans = hand_frames(HAND)
    every = run_scorer(PreferenceScorer(comparison_column=None), frame, humans)
    assert (every.metadata["agreed"], every.metadata["disagreed"]) == (4, 3)
    assert "comparison_ids" not in every.metadata
    renamed = frame.rename({"comparison_id": "pair"})
    named = run_scorer(PreferenceScorer(comparison_column="pair"), renamed, humans)
    assert named.metadata["comparison_ids"]["pairs_left_out"] == 2
    with pytest.raises(ScoringError, match="no comparison id column 'pair'"):
        run_scorer(PreferenceScorer(comparison_column="pair"), frame, humans)
    with pytest.raises(ScoringError, match="comparison_column"):
        PreferenceScorer(comparison_column="")


def dup_project(root: Path, rows: list[dict[str, Any]]) -> MetaEvaluator:
    """A project whose data rows are `rows` in order (id, comparison_id, text_a, text_b,
    topic); the judge's and the human's votes ('judge', 'human'; None: no row) imported in
    reverse order, so neither the files' nor the ids' order is the data's."""
    data = pl.DataFrame(
        [{k: r[k] for k in ("id", "comparison_id", "text_a", "text_b", "topic")} for r in rows]
    )
    evaluator = MetaEvaluator(root)
    evaluator.add_data(DataLoader.load_from_dataframe("pairs", data, id_column="id"))
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"preference": PREFERENCE_LABELS},
            prompt_columns=["topic"],
            response_columns=["text_a", "text_b"],
        )
    )
    files = root.parent / "files"
    files.mkdir()
    judged = [r for r in reversed(rows) if r["judge"] is not None]
    pl.DataFrame(
        {"id": [r["id"] for r in judged], "preference": [r["judge"] for r in judged]}
    ).write_csv(files / "judge.csv")
    evaluator.add_external_judge_results(files / "judge.csv", "judge", id_column="id")
    labelled = [r for r in reversed(rows) if r["human"] is not None]
    pl.DataFrame(
        {"original_id": [r["id"] for r in labelled], "preference": [r["human"] for r in labelled]}
    ).write_csv(files / "human.csv")
    evaluator.add_external_annotation_results(files / "human.csv", "alice")
    return evaluator


def dup_rows(seed: int, n: int = 40) -> list[dict[str, Any]]:
    """n pairs in a shuffled data order, about a third repeating an earlier comparison id
    with votes of their own; some pairs have no judge row or no human vote."""
    rng = np.random.default_rng(seed)
    ids = [f"r{k:03d}" for k in rng.permutation(n)]  # the data's order is not the ids'
    rows = []
    for k, row_id in enumerate(ids):
        repeat = k > 3 and rng.random() < 0.35
        cid = rows[int(rng.integers(0, k))]["comparison_id"] if repeat else f"c{k:03d}"
        rows.append(
            {
                "id": row_id, "comparison_id": cid, "topic": TOPICS[k % 3],
                "text_a": "a" * int(rng.integers(3, 30)), "text_b": "b" * int(rng.integers(3, 30)),
                "judge": None if rng.random() < 0.1 else PREFERENCE_LABELS[int(rng.integers(3))],
                "human": None if rng.random() < 0.1 else PREFERENCE_LABELS[int(rng.integers(3))],
            }
        )  # fmt: skip
    return rows


def kept_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pairs scored, by hand: judge row and human vote, then the first per comparison id
    in the data's order."""
    seen: set[str] = set()
    kept = []
    for r in rows:
        if r["judge"] is None or r["human"] is None or r["comparison_id"] in seen:
            continue
        seen.add(r["comparison_id"])
        kept.append(r)
    return kept


@pytest.mark.parametrize("seed", [0, 1])
def test_end_to_end_repeats_follow_the_data_order(tmp_path: Path, seed: int) -> None:
    """Through compare: every metric, the groups, the dataset statistics, the strength
    interval (FF's multinomial) and the bootstrap interval of strength (items drawn as compare
    draws them, over every pair the judge has; a repeat weighs nothing) use the first pair of
    each comparison id in the data's order."""
    from meta_evaluator.stats.bootstrap import paired_bootstrap

    rows = dup_rows(seed)
    evaluator = dup_project(tmp_path / "project", rows)
    metric = MetricConfig(
        scorer=PreferenceScorer(group_by="topic", n_resamples=500),
        task_names=["preference"],
        aggregation_name="single",
        bootstrap=BootstrapConfig(n_resamples=60, seed=3),
    )
    ((_, (_, (result,))),) = evaluator.compare_async(MetricsConfig(metrics=[metric])).items()
    assert result.error is None
    kept = kept_rows(rows)
    both = [r for r in rows if r["judge"] is not None and r["human"] is not None]
    assert len(both) - len(kept) >= 5  # the data has repeats with a judge and a human vote
    # first by id, or in the files' order, would keep other pairs
    chosen = {r["id"] for r in kept}
    assert chosen != {r["id"] for r in kept_rows(sorted(rows, key=lambda r: r["id"]))}
    assert chosen != {r["id"] for r in kept_rows(rows[::-1])}
    votes, ref = [r["judge"] for r in kept], [r["human"] for r in kept]
    expected = reference_metrics(votes, ref)
    assert_scores(result.scores, expected)
    assert result.metadata["num_pairs"] == expected["num_pairs"]
    assert result.metadata["comparison_ids"] == {
        "column": "comparison_id",
        "kept": "the first pair of each comparison id in the data's order",
        "pairs_left_out": len(both) - len(kept),
    }
    assert result.metadata["strength_interval"] == strength_interval(votes, ref, 500, 0)
    stats = result.metadata["dataset_statistics"]
    assert stats == pytest.approx(
        reference_statistics([r["text_a"] for r in kept], [r["text_b"] for r in kept], ref)
    )
    for group, metrics in result.metadata["per_group"].items():
        part = [r for r in kept if r["topic"] == group]
        want = reference_metrics([r["judge"] for r in part], [r["human"] for r in part])
        assert metrics["strength"] == pytest.approx(want["strength"], abs=TOL), group

    # the bootstrap draws compare's items: the pairs with a judge row and a human vote
    items = sorted(r["id"] for r in both)
    first = {r["id"] for r in kept}
    by_id = {r["id"]: r for r in rows}

    def strength(positions: Any) -> float | None:
        drawn = [by_id[items[p]] for p in positions if items[p] in first]
        return reference_metrics([r["judge"] for r in drawn], [r["human"] for r in drawn])[
            "strength"
        ]

    low, high = paired_bootstrap(
        strength, list(range(len(items))), n_resamples=60, seed=3, vectorized=False
    )
    assert result.confidence_intervals is not None
    assert result.confidence_intervals["strength"] == pytest.approx((low, high), abs=1e-12)
