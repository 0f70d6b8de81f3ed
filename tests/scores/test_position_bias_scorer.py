"""PositionBiasScorer and PreferenceScorer(debias_positions=True).

Part 1 calls the scorers on judge frames built here (`original_id`, `label`, `swapped_of`, as
compare hands them) and checks them against `stats.position` (itself checked against scipy's
`binomtest` and statsmodels' Wilson interval in tests/stats/test_position.py) and against those
references directly. Part 2 runs judges end to end: a project of pairs with their swapped
twins (`add_preference_pairs(swap_positions=True)`), two judges behind a loopback server whose
answers are decided here (one leans to the answer shown first, its twin reads the content),
scored from a metrics YAML.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import polars as pl
import pytest
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader, position_swapped_variants
from meta_evaluator.errors import ScoringError
from meta_evaluator.scores import BootstrapConfig, MetricConfig, MetricsConfig
from meta_evaluator.scores.base_scorer import ScoringCall
from meta_evaluator.scores.compare import compare
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.metrics import PositionBiasScorer, PreferenceScorer
from meta_evaluator.scores.yaml_config import read_metrics_yaml
from meta_evaluator.stats.position import debiased_labels, position_bias
from tests.loopback import JsonHandler, serving
from tests.scores.conftest import run_scorer

HUMANS = pl.DataFrame(schema={"original_id": pl.Int64, "human_id": pl.String, "label": pl.String})


def pairs_frame(original: list[Any], swapped: list[Any], *, offset: int = 100) -> pl.DataFrame:
    """Judge rows of pairs 1..n (label per order; a None label: no row in that order)."""
    ids, labels, links = [], [], []
    for i, (a, b) in enumerate(zip(original, swapped, strict=True), start=1):
        if a is not None:
            ids.append(i), labels.append(a), links.append(None)
        if b is not None:
            ids.append(i + offset), labels.append(b), links.append(i)
    return pl.DataFrame(
        {"original_id": ids, "label": labels, "swapped_of": links},
        schema={"original_id": pl.Int64, "label": pl.String, "swapped_of": pl.Int64},
    )


def simulated(n: int, first_bias: float, seed: int) -> tuple[list[str], list[str]]:
    """Labels of a judge that picks text_a with prob. `first_bias`, else the better answer."""
    rng = np.random.default_rng(seed)
    better_first = rng.random(n) < 0.5

    def answer(better_is_first: np.ndarray) -> list[str]:
        biased = rng.random(n) < first_bias
        return list(np.where(biased | better_is_first, "text_a", "text_b"))

    return answer(better_first), answer(~better_first)


# ----- part 1: the scorer on frames ------------------------------------------------------------


def test_scores_are_position_bias_of_the_pairs_and_match_scipy_and_statsmodels() -> None:
    original, swapped = simulated(150, first_bias=0.5, seed=3)
    result = run_scorer(PositionBiasScorer(), pairs_frame(original, swapped), HUMANS)
    to_position = {"text_a": "first", "text_b": "second"}
    expected = position_bias([to_position[v] for v in original], [to_position[v] for v in swapped])
    assert result.scores == expected
    firsts = sum(v == "text_a" for v in original + swapped)
    assert result.scores["first_answers"] == firsts and result.scores["answers"] == 300
    # the test and interval rest on pairs: first_both among the inconsistent pairs (McNemar)
    both, second = result.scores["first_both"], result.scores["second_both"]
    assert result.scores["p_value"] == pytest.approx(binomtest(both, both + second, 0.5).pvalue)
    share = proportion_confint(both, both + second, method="wilson")
    mapped = tuple(0.5 + (both + second) * (2 * q - 1) / 300 for q in share)
    assert result.scores["inconsistent_first_interval"] == pytest.approx(share)
    assert result.scores["first_position_interval"] == pytest.approx(mapped)
    assert result.confidence_intervals == {"first_position_rate": pytest.approx(mapped)}
    assert result.num_comparisons == 150 and result.metadata["unusable_rows"] == 0


def test_labels_of_every_list_and_missing_rows_count_as_the_hand_count_says() -> None:
    original = ["A", "2", "tie", "first", None, "b"]
    swapped = ["B", "1", "a", "A", "text_b", None]
    result = run_scorer(PositionBiasScorer(), pairs_frame(original, swapped), HUMANS)
    # usable both ways: pairs 1, 2, 4 (3 has a tie, 5 no original, 6 no twin); consistent: 1, 2
    scores = result.scores
    assert (scores["rows"], scores["pairs"], scores["consistent"], scores["first_both"]) == (
        6, 3, 2, 1,
    )  # fmt: skip
    assert scores["first_answers"] == 4 and scores["answers"] == 6
    assert result.metadata["unusable_rows"] == 3


def test_string_ids_and_custom_labels() -> None:
    frame = pl.DataFrame(
        {
            "original_id": ["p1", "p2", "p1_swapped", "p2_swapped"],
            "label": ["left", "left", "left", "right"],
            "swapped_of": [None, None, "p1", "p2"],
        }
    )
    humans = HUMANS.cast({"original_id": pl.String})
    scorer = PositionBiasScorer(["left"], ["right"], tie_labels=[])
    result = run_scorer(scorer, frame, humans)
    assert (result.scores["consistent"], result.scores["first_both"]) == (1, 1)


def test_no_usable_pair_is_undefined_with_the_reason() -> None:
    result = run_scorer(PositionBiasScorer(), pairs_frame(["tie", "a"], ["a", "tie"]), HUMANS)
    assert result.scores["consistency_rate"] is None and result.scores["p_value"] is None
    assert result.metadata["undefined"] == "no pair has a usable answer in both orders"


def test_the_bootstrap_statistic_is_the_rates_of_the_rows_drawn() -> None:
    """Reference: position_bias of the pairs each resample draws (a pair goes with its
    original row's draws; twins weigh nothing)."""
    original, swapped = simulated(30, first_bias=0.4, seed=5)
    frame = pairs_frame(original, swapped)
    scorer = PositionBiasScorer()
    call = ScoringCall(frame, HUMANS, "task", "j", TaskAggregationMode.SINGLE)
    ids = frame.get_column("original_id").sort()
    statistic = scorer.resampling_statistic(call, ids)
    rng = np.random.default_rng(0)
    draws = rng.integers(0, ids.len(), size=(4, ids.len()))
    weights = np.array([np.bincount(d, minlength=ids.len()) for d in draws], dtype=float)
    found = statistic(weights)
    to_position = {"text_a": "first", "text_b": "second"}
    for r, draw in enumerate(draws):
        drawn = [ids[int(i)] for i in draw if ids[int(i)] <= 30]
        expected = position_bias(
            [to_position[original[i - 1]] for i in drawn],
            [to_position[swapped[i - 1]] for i in drawn],
        )
        assert found["consistency_rate"][r] == pytest.approx(expected["consistency_rate"])
        assert found["first_position_rate"][r] == pytest.approx(expected["first_position_rate"])


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (pairs_frame(["a"], ["b"]).drop("swapped_of"), "no column 'swapped_of' naming each"),
        (pairs_frame(["a", "b"], [None, None]), "no swapped row has an answer"),
        (pairs_frame(["a", "yes"], ["b", "b"]), "the label 'yes' names no position"),
    ],
)
def test_misuse_is_named(frame: pl.DataFrame, message: str) -> None:
    with pytest.raises(ScoringError, match=message) as caught:
        run_scorer(PositionBiasScorer(), frame, HUMANS)
    assert "judge 'judge_x', task 'task'" in str(caught.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"first_labels": ["a"], "second_labels": ["a"]}, "'a' is in both first_labels and"),
        ({"second_labels": []}, "second_labels must name at least one label"),
        ({"first_labels": "text_a"}, "first_labels must be a list of labels"),
        ({"link_column": ""}, "link_column must be a column name"),
        ({"confidence_level": 1.5}, "confidence_level must be in"),
    ],
)
def test_bad_options_are_refused_at_once(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ScoringError, match=message):
        PositionBiasScorer(**kwargs)


def test_debiased_preference_keeps_verdicts_both_orders_agree_on() -> None:
    """Reference: `stats.position.debiased_labels` mapped back to text_a/text_b/tie."""
    original = ["text_a", "text_a", "b", "text_b", None, "tie"]
    swapped = ["text_b", "text_a", "a", "text_b", "text_a", "text_a"]
    humans = pl.DataFrame(
        {"original_id": [1, 2, 3, 4, 5, 6], "human_id": ["h"] * 6,
         "label": ["text_a", "text_b", "text_b", "text_a", "text_a", "text_a"]},
    )  # fmt: skip
    frame = pairs_frame(original, swapped).with_columns(outcome=pl.lit("valid"))
    scorer = PreferenceScorer(debias_positions=True, n_resamples=10)
    result = run_scorer(scorer, frame, humans)
    positions = {"text_a": "first", "a": "first", "text_b": "second", "b": "second"}
    debiased = debiased_labels(
        [positions.get(v) if v else None for v in original], [positions.get(v) for v in swapped]
    )
    assert debiased == ["first", "tie", "second", "tie", None, None]
    # votes text_a, tie, text_b, tie, -: agree on 1 and 3, two ties, one without a vote (pair
    # 5 has no original row: an error is never an item)
    assert (result.metadata["agreed"], result.metadata["disagreed"]) == (2, 0)
    assert result.metadata["not_applicable"] == 3 and result.metadata["num_pairs"] == 5
    assert result.scores["relevance"] == pytest.approx(2 / 5)
    plain = run_scorer(PreferenceScorer(n_resamples=10), frame, humans)
    assert plain.metadata["agreed"] == 2 and plain.metadata["disagreed"] == 2  # twins unused
    with pytest.raises(ScoringError, match="preference: judge 'judge_x', task 'task': the data"):
        run_scorer(scorer, frame.drop("swapped_of"), humans)
    with pytest.raises(ScoringError, match="link_column must be a column name"):
        PreferenceScorer(debias_positions=True, link_column="")


def test_compare_keeps_twins_beside_labelled_pairs_and_never_scores_them() -> None:
    """Humans who labelled the twins too: the twins still only serve the debiasing."""
    pairs = DataLoader.load_from_dataframe(
        "p", pl.DataFrame({"id": [1, 2, 3], "text_a": ["x", "y", "z"], "text_b": ["u", "v", "w"]}),
        id_column="id",
    )  # fmt: skip
    data = position_swapped_variants(pairs)  # twins 11, 12, 13
    ids = data.data["id"].to_list()
    judge = pl.DataFrame(
        {
            "original_id": ids,
            "outcome": ["valid"] * 6,
            "preference": ["text_a", "text_a", "text_b", "text_b", "text_a", "text_a"],
        }
    )
    human = pl.DataFrame(
        {
            "original_id": ids,
            "outcome": ["valid"] * 6,
            "preference": ["text_a", "text_b", "text_b", "text_b", "text_a", "text_a"],
        }
    )
    metric = MetricConfig(
        scorer=PreferenceScorer(debias_positions=True, n_resamples=10),
        task_names=["preference"], aggregation_name="single",
    )  # fmt: skip
    table = anyio.run(
        lambda: compare(MetricsConfig(metrics=[metric]), {"j": judge}, {"h": human}, data=data)
    )
    (result,) = next(iter(table.values()))[1]
    # pair 1: text_a then (swapped) text_b: text_a won both ways; pair 2: first both times:
    # tie; pair 3: text_b then text_a: text_b won both ways
    assert result.metadata["num_pairs"] == 3
    assert (result.metadata["agreed"], result.metadata["not_applicable"]) == (2, 1)


# ----- part 2: end to end ----------------------------------------------------------------------

PROMPT = "Question:\n{prompt}\n\nAnswer A:\n{text_a}\n\nAnswer B:\n{text_b}\n\nWhich is better?"
_ANSWERS = re.compile(r"Answer A:\n(.*?)\n\nAnswer B:\n(.*?)\n\nWhich", re.DOTALL)


def _fraction(text: str) -> float:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


class PairJudges(JsonHandler):
    """OpenAI chat completions: model `clean` picks the answer that says "good"; model
    `leans_first` picks the answer shown first in 60% of its answers (by a hash of the prompt),
    else the good one: about 80% of its answers pick the first position."""

    def do_POST(self) -> None:
        body = json.loads(self.read_body())
        prompt = body["messages"][-1]["content"]
        first, _ = _ANSWERS.search(prompt).groups()  # type: ignore[union-attr]
        good = "text_a" if first.startswith("good") else "text_b"
        lean = body["model"] == "leans_first" and _fraction(prompt) < 0.6
        content = json.dumps({"preference": "text_a" if lean else good})
        self.send_json(
            200,
            {
                "choices": [{"message": {"content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 30, "completion_tokens": 5},
            },
        )


def pairs_file(path: Path, n: int) -> Path:
    """n pairs; the good answer is text_a in odd pairs, text_b in even ones (the humans know)."""
    rows = []
    for i in range(1, n + 1):
        good, bad = f"good answer {i}", f"poor answer {i}"
        a, b, preferred = (good, bad, "text_a") if i % 2 else (bad, good, "text_b")
        rows.append({"comparison_id": f"c{i:03d}", "prompt": f"question {i}", "text_a": a,
                     "text_b": b, "preferred": preferred})  # fmt: skip
    pl.DataFrame(rows).write_csv(path)
    return path


METRICS = """\
metrics:
  - scorer: position_bias
    task_names: [preference]
    aggregation_name: single
    display_name: bias
    bootstrap: {n_resamples: 500, seed: 0}
  - scorer: preference
    args: {debias_positions: true, n_resamples: 200}
    task_names: [preference]
    aggregation_name: single
    display_name: debiased
  - scorer: preference
    args: {n_resamples: 200}
    task_names: [preference]
    aggregation_name: single
    display_name: as_voted
"""


def test_a_judge_leaning_to_the_first_answer_is_caught_and_its_clean_twin_is_not(
    tmp_path: Path,
) -> None:
    evaluator = MetaEvaluator(tmp_path / "project")
    imported = evaluator.add_preference_pairs(pairs_file(tmp_path / "pairs.csv", 80),
                                              swap_positions=True)  # fmt: skip
    assert imported["swapped_rows"] == 80 and len(evaluator.data) == 160  # type: ignore[arg-type]
    with serving(PairJudges) as server:
        base = f"http://127.0.0.1:{server.server_address[1]}/v1"
        for model in ("leans_first", "clean"):
            evaluator.add_judge(model, "openai", model, PROMPT, base_url=base)
        results = evaluator.run_judges_async()
    assert all(r.counts()["valid"] == 160 for r in results.values())
    (tmp_path / "metrics.yaml").write_text(METRICS, encoding="utf-8")
    scores = evaluator.compare_async(read_metrics_yaml(tmp_path / "metrics.yaml"))
    bias = {r.judge_id: r for r in scores["bias"][1]}
    leaning, clean = bias["leans_first"], bias["clean"]
    assert leaning.scores["pairs"] == 80 and leaning.scores["answers"] == 160
    assert leaning.scores["first_position_rate"] == pytest.approx(0.8, abs=0.06)
    assert leaning.scores["p_value"] < 0.01
    assert leaning.confidence_intervals["first_position_rate"][0] > 0.5  # type: ignore[index]
    assert clean.scores["first_position_rate"] == 0.5 and clean.scores["consistency_rate"] == 1
    # every pair consistent: nothing depends on the order, there is nothing to test
    assert clean.scores["p_value"] is None
    low, high = clean.confidence_intervals["first_position_rate"]  # type: ignore[index]
    assert low <= 0.5 <= high
    # the judge's own answers, counted here from its results: the reference
    frame = results["leans_first"].results_data
    firsts = int((frame["preference"] == "text_a").sum())
    assert leaning.scores["first_answers"] == firsts
    both, second = leaning.scores["first_both"], leaning.scores["second_both"]
    assert leaning.scores["p_value"] == pytest.approx(binomtest(both, both + second).pvalue)
    # Debiased, a position-led vote is a tie: what is left agrees with the humans.
    debiased = {r.judge_id: r for r in scores["debiased"][1]}
    as_voted = {r.judge_id: r for r in scores["as_voted"][1]}
    assert debiased["clean"].scores["accuracy"] == 1.0
    assert debiased["clean"].metadata["num_pairs"] == 80  # twins never compared
    assert debiased["leans_first"].scores["accuracy"] == 1.0
    assert debiased["leans_first"].metadata["agreed"] == leaning.scores["consistent"]
    assert as_voted["leans_first"].scores["accuracy"] < 0.85
    assert (tmp_path / "project/scores/position_bias").is_dir()
    png = next((tmp_path / "project/scores/position_bias").rglob("position_bias.png"))
    assert png.stat().st_size > 10_000


def test_scoring_without_swapped_rows_says_how_to_get_them(tmp_path: Path) -> None:
    evaluator = MetaEvaluator(tmp_path / "project")
    evaluator.add_preference_pairs(pairs_file(tmp_path / "pairs.csv", 6))
    evaluator.add_judge("mock", "mock", "m", PROMPT)
    evaluator.run_judges_async()
    metric = MetricConfig(
        scorer=PositionBiasScorer(), task_names=["preference"], aggregation_name="single",
        bootstrap=BootstrapConfig(n_resamples=10),
    )  # fmt: skip
    with pytest.warns(UserWarning, match="could not be computed"):
        scores = evaluator.compare_async(MetricsConfig(metrics=[metric]))
    (result,) = next(iter(scores.values()))[1]
    assert "no column 'swapped_of'" in (result.error or "")
    assert "position_swapped_variants" in (result.error or "")
