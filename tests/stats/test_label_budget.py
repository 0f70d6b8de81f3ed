"""The label-budget planner: each simulated study against stats.alt_test and sklearn, and
synthetic judges of known quality (a perfect judge plans small, a random one never passes)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.alt_test import alt_test_table
from meta_evaluator.stats.label_budget import _Settings, _studies, plan_labels

LABELS = 3


def pilot(items: int, annotators: int, judge_accuracy: float | None, seed: int) -> tuple:
    """Humans right 80% of the time (else a random label); a judge right `judge_accuracy` of the
    time (None: uniformly random), some human labels missing."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, LABELS, items)

    def noisy(p: float) -> np.ndarray:
        return np.where(rng.random(items) < p, truth, rng.integers(0, LABELS, items))

    humans = np.column_stack([noisy(0.8) for _ in range(annotators)])
    humans[rng.random(humans.shape) < 0.05] = -1
    judge = rng.integers(0, LABELS, items) if judge_accuracy is None else noisy(judge_accuracy)
    return judge.astype(np.int64), humans.astype(np.int64)


def as_labels(codes: np.ndarray) -> list:
    return [None if c < 0 else f"l{c}" for c in codes]


@pytest.mark.parametrize("multiplicative", [False, True])
def test_each_study_is_the_alt_test(multiplicative: bool) -> None:
    judge, humans = pilot(300, 5, 0.75, seed=3)
    rng = np.random.default_rng(11)
    studies, n, m = 25, 80, 4
    items = rng.integers(0, judge.size, size=(studies, n))
    chosen = np.argsort(rng.random((studies, humans.shape[1])), axis=1)[:, :m]
    settings = _Settings(0.15, multiplicative, 0.05, 30, 2)
    passed, kappas = _studies(judge, humans, items, chosen, settings)
    assert 0 < passed.sum() < studies  # both verdicts occur, so the comparison means something
    for s in range(studies):
        labels = humans[items[s]][:, chosen[s]]
        result = alt_test_table(
            as_labels(judge[items[s]]), [as_labels(labels[:, j]) for j in range(m)],
            [f"h{j}" for j in range(m)], epsilon=0.15, multiplicative_epsilon=multiplicative,
        )  # fmt: skip
        assert bool(passed[s]) == result.passed, s
        majority = []
        for row in labels:
            votes = Counter(int(v) for v in row if v >= 0)
            majority.append(max(votes.items(), key=lambda kv: (kv[1], kv[0]))[0])
        expected = cohen_kappa_score(judge[items[s]], majority)
        assert kappas[s] == pytest.approx(expected), s


def test_a_study_where_nobody_can_be_tested_fails() -> None:
    judge, humans = pilot(100, 3, 1.0, seed=1)
    items = np.arange(20)[None, :]  # 20 items: below min_instances_per_human = 30
    passed, _ = _studies(
        judge, humans, items, np.array([[0, 1, 2]]), _Settings(0.2, False, 0.05, 30, 2)
    )
    assert not passed[0]


def test_a_perfect_judge_plans_small_and_a_random_one_never_passes() -> None:
    grid = {"items_grid": [30, 60, 150, 300], "annotators_grid": [2, 3, 5], "simulations": 60}
    plans = {}
    for name, accuracy in (("perfect", 1.0), ("human level", 0.8), ("random", None)):
        judge, humans = pilot(300, 5, accuracy, seed=5)
        plans[name] = plan_labels(as_labels(judge), [as_labels(h) for h in humans.T], **grid)
    perfect, level, random = plans["perfect"], plans["human level"], plans["random"]
    assert perfect.chosen is not None
    assert perfect.chosen.items <= 60 and perfect.chosen.annotators <= 3
    assert level.chosen is not None and level.chosen.labels >= perfect.chosen.labels
    assert random.chosen is None
    assert max(d.power for d in random.designs) < 0.05


def test_power_grows_with_items_and_the_plan_is_seeded() -> None:
    judge, humans = pilot(400, 4, 0.7, seed=8)
    args = (as_labels(judge), [as_labels(h) for h in humans.T])
    plan = plan_labels(*args, items_grid=[30, 100, 400], annotators_grid=[3], simulations=60)
    powers = [d.power for d in plan.designs]
    assert powers == sorted(powers)
    again = plan_labels(*args, items_grid=[30, 100, 400], annotators_grid=[3], simulations=60)
    assert again == plan
    widths = [d.kappa_width for d in plan.designs]
    assert widths[0] > widths[-1]  # more items, a narrower kappa interval
    assert plan.as_dict()["designs"][0]["labels"] == 90


def test_the_default_grid_follows_the_pilot() -> None:
    judge, humans = pilot(120, 3, 0.9, seed=2)
    plan = plan_labels(as_labels(judge), [as_labels(h) for h in humans.T], simulations=10)
    assert sorted({d.items for d in plan.designs}) == [30, 50, 100, 120, 150, 200]
    assert sorted({d.annotators for d in plan.designs}) == [2, 3]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"annotators_grid": [4]}, "annotators_grid must be in \\[2, 3\\]"),
        ({"items_grid": [0]}, "items_grid must be in \\[1"),
        ({"simulations": 5}, "simulations must be in \\[10"),
        ({"target_power": 1.0}, "target_power"),
    ],
)
def test_bad_settings_are_named(kwargs: dict, message: str) -> None:
    judge, humans = pilot(50, 3, 0.9, seed=2)
    with pytest.raises(ScoringError, match=message):
        plan_labels(as_labels(judge), [as_labels(h) for h in humans.T], **kwargs)


def test_bad_pilots_are_named() -> None:
    with pytest.raises(ScoringError, match="annotator 1 has 2 labels, the judge 3"):
        plan_labels(["a", "b", "a"], [["a", "b", "a"], ["a", "b"]])
    with pytest.raises(ScoringError, match="at least two annotators"):
        plan_labels(["a", "b"], [["a", "b"]])
    with pytest.raises(ScoringError, match="labelled none"):
        plan_labels([None, None], [["a", "b"], ["a", "a"]])
