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
