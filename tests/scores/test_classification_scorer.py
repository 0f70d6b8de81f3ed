"""ClassificationScorer (meta-evaluator 0.3.3's scorer) against scikit-learn.

References: `sklearn.metrics.precision_recall_fscore_support` and `accuracy_score` with
`zero_division=np.nan` (undefined values left out of averages, as METRICS.md G.13 says), on
single labels and on `MultiLabelBinarizer` indicator matrices; the per-human mean and the
majority vote (ties to the lexicographically largest label; a multi-label tie chooses the label)
are written here from METRICS.md F, not from the scorer's code.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import accuracy_score, precision_recall_fscore_support
from sklearn.preprocessing import MultiLabelBinarizer

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.errors import MetricConfigError, ScoringError
from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.scores import BootstrapConfig, MetricConfig, MetricsConfig
from meta_evaluator.scores.metrics import ClassificationScorer, CohensKappaScorer
from tests.scores.conftest import frames, random_annotations, run_scorer

Labels = dict[Any, Any]
HARMS = ["hate", "fraud", "violence", "spam"]


def sk(metric: str, truth: list[Any], pred: list[Any], average: str, pos: Any = None) -> float:
    if metric == "accuracy":
        return float(accuracy_score(truth, pred))
    index = {"precision": 0, "recall": 1, "f1": 2}[metric]
    options: dict[str, Any] = {"average": average, "zero_division": np.nan}
    if average == "binary":
        options["pos_label"] = pos
    return float(precision_recall_fscore_support(truth, pred, **options)[index])


def sk_sets(metric: str, truth: list[list[str]], pred: list[list[str]], average: str) -> float:
    binarizer = MultiLabelBinarizer(classes=sorted({v for s in truth + pred for v in s}))
    binarizer.fit(truth + pred)
    return sk(metric, binarizer.transform(truth), binarizer.transform(pred), average)


def pairs(judge: Labels, human: Labels) -> tuple[list[Any], list[Any]]:
    keys = [i for i, v in judge.items() if v is not None and human.get(i) is not None]
    return [human[i] for i in keys], [judge[i] for i in keys]


def mean_defined(values: list[float]) -> float | None:
    kept = [v for v in values if not np.isnan(v)]
    return float(np.mean(kept)) if kept else None


def majority(labels: list[str]) -> str:
    counts = Counter(labels)
    return max(counts.items(), key=lambda item: (item[1], item[0]))[0]


def majority_set(sets: list[list[str]]) -> list[str]:
    votes = Counter(v for s in sets for v in s)
    return sorted(v for v, c in votes.items() if 2 * c >= len(sets))


def scored(judge: Labels, humans: dict[str, Labels]) -> list[Any]:
    return [
        i for i, v in judge.items()
        if v is not None and any(h.get(i) is not None for h in humans.values())
    ]  # fmt: skip


def assert_close(actual: Any, expected: float | None) -> None:
    if expected is None or np.isnan(expected):
        assert actual is None
    else:
        assert actual == pytest.approx(expected, abs=1e-12)


# ----- single labels -------------------------------------------------------------------------


@pytest.mark.parametrize("metric", ["accuracy", "f1", "precision", "recall"])
@pytest.mark.parametrize("average", ["macro", "micro", "weighted"])
@pytest.mark.parametrize("aggregation", ["individual_average", "majority_vote"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_single_labels_match_sklearn(
    metric: str, average: str, aggregation: str, seed: int
) -> None:
    judge, humans = random_annotations(seed, labels=["no", "unsure", "yes"], coverage=0.7)
    jf, hf = frames(judge, humans, "int")
    scorer = ClassificationScorer(metric, average=average)  # type: ignore[arg-type]
    result = run_scorer(scorer, jf, hf, annotator_aggregation=aggregation)
    assert result.scorer_name == f"classification_{metric}" and result.error is None
    if aggregation == "majority_vote":
        items = scored(judge, humans)
        votes = [majority([h[i] for h in humans.values() if h.get(i) is not None]) for i in items]
        expected = sk(metric, votes, [judge[i] for i in items], average)
    else:
        per_human = [sk(metric, *pairs(judge, h), average) for _, h in sorted(humans.items())]
        expected = mean_defined(per_human)  # type: ignore[assignment]
        for name, value in result.metadata["per_human"].items():
            assert_close(value, sk(metric, *pairs(judge, humans[name]), average))
    assert_close(result.scores[metric], expected)


@pytest.mark.parametrize("metric", ["f1", "precision", "recall"])
@pytest.mark.parametrize("pos_label", ["accurate", "inaccurate"])
@pytest.mark.parametrize("seed", [3, 4])
def test_binary_with_pos_label_matches_sklearn(metric: str, pos_label: str, seed: int) -> None:
    judge, humans = random_annotations(
        seed, labels=["accurate", "inaccurate"], n_humans=2, id_kind="str"
    )
    jf, hf = frames(judge, humans, "str")
    result = run_scorer(ClassificationScorer(metric, pos_label=pos_label), jf, hf)  # type: ignore[arg-type]
    per_human = [sk(metric, *pairs(judge, h), "binary", pos_label) for _, h in humans.items()]
    assert_close(result.scores[metric], mean_defined(per_human))
    assert result.metadata["pos_label"] == pos_label and result.metadata["average"] == "binary"


def test_numeric_pos_label_matches_text_labels() -> None:
    """0.3.3's default pos_label=1 names the label "1" (the label rule reads 1 as "1")."""
    jf, hf = frames({1: "1", 2: "0", 3: "1"}, {"a": {1: "1", 2: "1", 3: "0"}}, "int")
    result = run_scorer(ClassificationScorer("recall"), jf, hf)
    assert result.scores["recall"] == pytest.approx(0.5)  # of the two "1"s, the judge found one


def test_a_pos_label_nobody_chose_is_undefined_not_zero() -> None:
    jf, hf = frames({1: "no", 2: "no"}, {"a": {1: "no", 2: "no"}}, "int")
    result = run_scorer(ClassificationScorer("precision", pos_label="yes"), jf, hf)
    assert result.scores["precision"] is None


def test_binary_with_three_labels_is_refused() -> None:
    jf, hf = frames({1: "a", 2: "b", 3: "c"}, {"h": {1: "a", 2: "c", 3: "b"}}, "int")
    with pytest.raises(ScoringError, match=r"average='binary' needs two labels"):
        run_scorer(ClassificationScorer("f1", pos_label="a"), jf, hf)


# ----- multi-label answers -------------------------------------------------------------------


def random_sets(seed: int, n: int = 40) -> tuple[Labels, dict[str, Labels]]:
    rng = np.random.default_rng(seed)

    def draw() -> list[str]:
        return [h for h in HARMS if rng.random() < 0.35]

    truth = {i: draw() for i in range(n)}

    def annotate() -> Labels:
        return {
            i: (truth[i] if rng.random() < 0.6 else draw()) for i in range(n) if rng.random() < 0.85
        }

    return annotate(), {h: annotate() for h in ("alice", "bob", "carol")}


@pytest.mark.parametrize("metric", ["accuracy", "f1", "precision", "recall"])
@pytest.mark.parametrize("average", ["macro", "micro", "weighted", "samples"])
@pytest.mark.parametrize("aggregation", ["individual_average", "majority_vote"])
@pytest.mark.parametrize("seed", [0, 1])
def test_multilabel_matches_sklearn_on_indicator_matrices(
    metric: str, average: str, aggregation: str, seed: int
) -> None:
    judge, humans = random_sets(seed)
    jf, hf = frames(judge, humans, "int")
    scorer = ClassificationScorer(metric, average=average)  # type: ignore[arg-type]
    result = run_scorer(scorer, jf, hf, annotator_aggregation=aggregation)
    if aggregation == "majority_vote":
        items = scored(judge, humans)
        votes = [majority_set([h[i] for h in humans.values() if i in h]) for i in items]
        expected = sk_sets(metric, votes, [judge[i] for i in items], average)
    else:
        expected = mean_defined(  # type: ignore[assignment]
            [sk_sets(metric, *pairs(judge, h), average) for _, h in sorted(humans.items())]
        )
    assert_close(result.scores[metric], expected)


def test_samples_leaves_out_items_where_both_chose_nothing() -> None:
    """Hand count: item 1 (both empty) is undefined and left out (sklearn's default counts
    it as 0); item 2 has F1 2*1/(1+2) = 2/3."""
    jf, hf = frames({1: [], 2: ["hate"]}, {"a": {1: [], 2: ["hate", "spam"]}}, "int")
    result = run_scorer(ClassificationScorer("f1", average="samples"), jf, hf)
    assert result.scores["f1"] == pytest.approx(2 / 3)


def test_a_multilabel_majority_tie_chooses_the_label() -> None:
    """Two humans split on "spam": the tie chooses it (0.3.3: "spam" sorts after "FALSE")."""
    jf, hf = frames({1: ["hate", "spam"]}, {"a": {1: ["hate", "spam"]}, "b": {1: ["hate"]}}, "int")
    result = run_scorer(
        ClassificationScorer("accuracy"), jf, hf, annotator_aggregation="majority_vote"
    )
    assert result.scores["accuracy"] == 1.0


def test_binary_on_multilabel_answers_is_refused() -> None:
    jf, hf = frames({1: ["hate"]}, {"a": {1: ["hate"]}}, "int")
    with pytest.raises(ScoringError, match=r"'binary' does not apply to multi-label"):
        run_scorer(ClassificationScorer("f1"), jf, hf)


# ----- arguments, configuration and the project ----------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"metric": "auc"}, "metric must be 'accuracy', 'f1', 'precision' or 'recall'; got 'auc'"),
        ({"average": None}, "average must be 'binary', 'macro', 'micro', 'weighted' or"),
        ({"pos_label": ""}, "pos_label must be a label"),
    ],
)
def test_bad_arguments_are_refused_at_once(arguments: dict[str, Any], says: str) -> None:
    with pytest.raises(ScoringError, match="ClassificationScorer: ") as caught:
        ClassificationScorer(**arguments)
    assert says in caught.value.message


def project(tmp_path: Path) -> MetaEvaluator:
    """Six items, a judge and two annotators imported, as a 0.3.3 scoring-only script does."""
    evaluator = MetaEvaluator(tmp_path / "p")
    data = pl.DataFrame({"qid": list(range(6)), "response": [f"r{i}" for i in range(6)]})
    evaluator.add_data(DataLoader.load_from_dataframe("d", data, "qid"))
    evaluator.add_eval_task(
        EvalTask(
            {"verdict": ["accurate", "inaccurate"], "harms": MultiLabelSchema(outcomes=HARMS)},
            None,
            ["response"],
        )
    )
    files = {
        "judge": (["accurate", "inaccurate", "accurate", "accurate", "inaccurate", "accurate"],
                  ["hate", "", "fraud;spam", "", "violence", "hate"]),
        "h1": (["accurate", "accurate", "accurate", "inaccurate", "inaccurate", "accurate"],
               ["hate", "", "fraud", "", "violence", "hate;spam"]),
        "h2": (["accurate", "inaccurate", "inaccurate", "accurate", "inaccurate", "accurate"],
               ["hate", "spam", "fraud;spam", "", "", "hate"]),
    }  # fmt: skip
    for name, (verdicts, harms) in files.items():
        path = tmp_path / f"{name}.csv"
        pl.DataFrame({"original_id": range(6), "verdict": verdicts, "harms": harms}).write_csv(path)
        if name == "judge":
            evaluator.add_external_judge_results(path, "judge")
        else:
            evaluator.add_external_annotation_results(path, name)
    return evaluator


def test_the_task_is_checked_before_anything_is_scored(tmp_path: Path) -> None:
    evaluator = project(tmp_path)
    config = MetricsConfig(
        metrics=[
            MetricConfig(scorer=ClassificationScorer("f1", pos_label="yes"),
                         task_names=["verdict"], task_strategy="single"),
            MetricConfig(scorer=ClassificationScorer("recall"), task_names=["harms"],
                         task_strategy="single"),
            MetricConfig(scorer=ClassificationScorer("f1", average="samples"),
                         task_names=["verdict"], task_strategy="single", display_name="s"),
        ]
    )  # fmt: skip
    with pytest.raises(MetricConfigError) as caught:
        evaluator.compare_async(config)
    message = caught.value.message
    assert "pos_label='yes' is not one of its labels ['accurate', 'inaccurate']" in message
    assert "task 'harms' is multi-label: average='binary' does not apply" in message
    assert "average='samples' is for multi-label tasks" in message
    assert not (evaluator.paths.scores_dir).exists()


def test_scores_and_intervals_in_the_project_with_033s_folder_names(tmp_path: Path) -> None:
    evaluator = project(tmp_path)
    config = MetricsConfig(
        metrics=[
            MetricConfig(scorer=ClassificationScorer("f1", pos_label="accurate"),
                         task_names=["verdict"], task_strategy="single",
                         bootstrap=BootstrapConfig(n_resamples=200)),
            MetricConfig(scorer=ClassificationScorer("f1", average="macro"),
                         task_names=["harms"], task_strategy="single"),
            MetricConfig(scorer=CohensKappaScorer(), task_names=["verdict"],
                         task_strategy="single"),
        ]
    )  # fmt: skip
    table = evaluator.compare_async(config)
    (_, (f1,)), (_, (macro,)), (_, (kappa,)) = table.values()
    assert (evaluator.paths.scores_dir / "classification_f1" / next(iter(table))).is_dir()
    judge = ["accurate", "inaccurate", "accurate", "accurate", "inaccurate", "accurate"]
    h1 = ["accurate", "accurate", "accurate", "inaccurate", "inaccurate", "accurate"]
    h2 = ["accurate", "inaccurate", "inaccurate", "accurate", "inaccurate", "accurate"]
    expected = np.mean([sk("f1", h, judge, "binary", "accurate") for h in (h1, h2)])
    assert f1.scores["f1"] == pytest.approx(expected)
    low, high = f1.confidence_intervals["f1"]  # type: ignore[index]
    assert low <= f1.scores["f1"] <= high
    sets = [["hate"], [], ["fraud", "spam"], [], ["violence"], ["hate"]]
    by_h1 = [["hate"], [], ["fraud"], [], ["violence"], ["hate", "spam"]]
    by_h2 = [["hate"], ["spam"], ["fraud", "spam"], [], [], ["hate"]]
    expected = np.mean([sk_sets("f1", h, sets, "macro") for h in (by_h1, by_h2)])
    assert macro.scores["f1"] == pytest.approx(expected)
    assert kappa.scores["kappa"] == kappa.scores["cohens_kappa"]  # 0.3.3's key beside ours
