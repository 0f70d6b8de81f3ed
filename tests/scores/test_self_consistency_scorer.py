"""SelfConsistencyScorer: a judge asked k times per row, against itself and against humans.

Part 1 calls the scorer on judge frames built here (`original_id`, `label`, `sample_labels` as
a run with `consistency=k` stores them) and checks it against statsmodels' Fleiss' kappa, the
krippendorff package, scikit-learn's accuracy and Cohen's kappa, and `stats.consistency`
(itself checked against those in tests/stats/test_consistency.py). Part 2 runs two judges end
to end with `consistency=5` behind a loopback server whose answers are decided here: one
answers at random 30% of the time, its steady twin never does.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import anyio
import krippendorff
import numpy as np
import polars as pl
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from meta_evaluator.errors import MetricConfigError, ScoringError
from meta_evaluator.scores import BootstrapConfig, MetricConfig, MetricsConfig
from meta_evaluator.scores.base_scorer import ScoringCall
from meta_evaluator.scores.compare import compare
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.metrics import SelfConsistencyScorer
from meta_evaluator.stats.consistency import self_consistency
from tests.conftest import chats, rejection_project
from tests.loopback import JsonHandler, serving
from tests.scores.conftest import run_scorer
from tests.stats.test_consistency import LABELS, judge

NO_HUMANS = pl.DataFrame(
    schema={"original_id": pl.Int64, "human_id": pl.String, "label": pl.String}
)


def run_majority(row: list) -> Any:
    """The run's label: the most frequent valid answer, the first seen on a tie."""
    given = [v for v in row if v is not None]
    if not given:
        return None
    counts = Counter(given)
    return max(dict.fromkeys(given), key=counts.__getitem__)


def frame_of(samples: list[list], task: str = "task", ids: list[Any] | None = None) -> pl.DataFrame:
    """Judge rows as compare hands them: the majority label and each answer's labels."""
    ids = ids if ids is not None else list(range(1, len(samples) + 1))
    stored = [
        json.dumps([{task: v, "other": "x"} if v is not None else None for v in row])
        for row in samples
    ]
    return pl.DataFrame(
        {"original_id": ids, "label": [run_majority(r) for r in samples], "sample_labels": stored}
    )


def human_majority(columns: list[list]) -> list[Any]:
    """Per row, the humans' most frequent label; ties to the largest (as scoring does)."""
    out = []
    for row in zip(*columns, strict=True):
        counts = Counter(v for v in row if v is not None)
        top = max(counts.values(), default=0)
        out.append(max(v for v, c in counts.items() if c == top) if counts else None)
    return out


# ----- part 1: the scorer on frames ------------------------------------------------------------


def test_scores_match_statsmodels_and_krippendorff() -> None:
    samples = judge(120, 5, flip=0.3, seed=2, missing=0.1)
    result = run_scorer(
        SelfConsistencyScorer(n_resamples=200, seed=3), frame_of(samples), NO_HUMANS
    )
    complete = [r for r in samples if None not in r]
    codes = np.array([[LABELS.index(v) for v in r] for r in complete])
    assert result.scores["fleiss_kappa"] == pytest.approx(fleiss_kappa(aggregate_raters(codes)[0]))
    coded = np.array([[np.nan if v is None else LABELS.index(v) for v in r] for r in samples]).T
    expected = krippendorff.alpha(reliability_data=coded, level_of_measurement="nominal")
    assert result.scores["krippendorff_alpha"] == pytest.approx(expected)
    reference = self_consistency(samples, n_resamples=200, seed=3)
    for key in ("flip_rate", "unanimous_share", "rows", "rows_used", "complete_rows"):
        assert result.scores[key] == pytest.approx(reference[key]), key
    assert result.scores["samples_per_row"] == 5
    assert result.confidence_intervals is not None
    for key, interval in reference["intervals"].items():
        assert result.confidence_intervals[key] == pytest.approx(interval), key
    assert "first_answer_accuracy" not in result.scores  # no humans: nothing to compare with
    assert result.num_comparisons == reference["rows_used"]


def test_first_answer_and_majority_against_the_humans_match_sklearn() -> None:
    samples = judge(90, 5, flip=0.4, seed=7, missing=0.1)
    rng = random.Random(1)
    truth = [run_majority(r) or "yes" for r in samples]
    columns = [[v if rng.random() > 0.2 else rng.choice(LABELS) for v in truth] for _ in range(3)]
    columns[2][5] = None  # a row one human left out
    humans = pl.DataFrame(
        {
            "original_id": [i for _ in columns for i in range(1, 91)],
            "human_id": [h for h in ("ana", "ben", "chen") for _ in range(90)],
            "label": [v for c in columns for v in c],
        }
    )
    result = run_scorer(SelfConsistencyScorer(n_resamples=0), frame_of(samples), humans)
    reference = human_majority(columns)
    first = [r[0] for r in samples]
    vote = [run_majority(r) for r in samples]
    rows = [i for i in range(90) if first[i] is not None and vote[i] is not None]
    ref = [reference[i] for i in rows]
    assert result.scores["human_rows"] == len(rows)
    for name, labels in (("first_answer", first), ("majority", vote)):
        mine = [labels[i] for i in rows]
        assert result.scores[f"{name}_accuracy"] == pytest.approx(accuracy_score(ref, mine))
        assert result.scores[f"{name}_kappa"] == pytest.approx(cohen_kappa_score(ref, mine))
    assert result.scores["majority_accuracy"] > result.scores["first_answer_accuracy"]
    assert result.metadata["human_annotators"] == ["ana", "ben", "chen"]
    assert result.confidence_intervals is None  # n_resamples=0: none of its own


def test_the_bootstrap_statistic_is_the_scores_of_the_rows_drawn() -> None:
    """Reference: the scorer itself on the rows each resample draws (fresh ids per draw)."""
    samples = judge(40, 4, flip=0.3, seed=4, missing=0.05)
    truth = [run_majority(r) for r in samples]
    humans = pl.DataFrame({"original_id": list(range(1, 41)), "human_id": ["h"] * 40,
                           "label": truth})  # fmt: skip
    frame = frame_of(samples)
    scorer = SelfConsistencyScorer(n_resamples=0)
    call = ScoringCall(frame, humans, "task", "j", TaskAggregationMode.SINGLE)
    ids = pl.Series([*range(1, 41), 999])  # an id the judge lacks weighs nothing
    statistic = scorer.resampling_statistic(call, ids)
    draws = np.random.default_rng(5).integers(0, 41, size=(3, 41))
    weights = np.array([np.bincount(d, minlength=41) for d in draws], dtype=float)
    found = statistic(weights)
    for r, draw in enumerate(draws):
        drawn = [int(d) for d in draw if d < 40]
        again = run_scorer(
            scorer,
            frame_of([samples[i] for i in drawn]),
            pl.DataFrame({"original_id": list(range(1, len(drawn) + 1)),
                          "human_id": ["h"] * len(drawn), "label": [truth[i] for i in drawn]}),
        )  # fmt: skip
        for key, values in found.items():
            expected = again.scores[key]
            assert values[r] == pytest.approx(np.nan if expected is None else expected, nan_ok=True)


def test_each_task_is_read_from_the_answers_and_string_ids_work() -> None:
    samples = [["yes", "no", "yes"], ["no", "no", "no"]]
    frame = frame_of(samples, task="tone", ids=["b", "a"])
    result = anyio_run(SelfConsistencyScorer(n_resamples=0), frame, "tone")
    assert result.scores["unanimous_share"] == 0.5
    assert result.scores["flip_rate"] == pytest.approx((2 / 3) / 2)


def anyio_run(scorer: SelfConsistencyScorer, frame: pl.DataFrame, task: str, **kw: Any) -> Any:
    humans = NO_HUMANS.cast({"original_id": frame.schema["original_id"]})

    async def go() -> Any:
        return await scorer.compute_score_async(
            frame, humans, task, "judge_x", TaskAggregationMode.SINGLE, **kw
        )

    return anyio.run(go)


@pytest.mark.parametrize(
    ("frame", "kwargs", "message"),
    [
        (frame_of([["yes", "no"]]).drop("sample_labels"), {}, "hold one answer each"),
        (frame_of([["yes", "no"]]).with_columns(sample_labels=pl.lit(None, pl.String)), {},
         "run with consistency=1"),
        (frame_of([["yes", "no"]]), {"task_kind": "free_text"}, "free-text task"),
    ],
)  # fmt: skip
def test_misuse_is_named(frame: pl.DataFrame, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ScoringError, match=message) as caught:
        anyio_run(SelfConsistencyScorer(), frame, "task", **kwargs)
    assert "judge 'judge_x', task 'task'" in str(caught.value)
    if "consistency" in message or "one answer" in message:
        assert "--consistency 5" in str(caught.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_resamples": -1}, r"n_resamples must be in \[0, inf\)"),
        ({"confidence_level": 1.0}, r"confidence_level must be in \(0.0, 1.0\)"),
        ({"seed": 1.5}, "seed must be an integer"),
    ],
)
def test_bad_options_are_refused_at_once(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ScoringError, match=message):
        SelfConsistencyScorer(**kwargs)


# ----- part 2: end to end ----------------------------------------------------------------------


class Judges(JsonHandler):
    """OpenAI chat completions for the rejection task. The truth of "answer i": rejection for
    even i. Model `steady` always says it; model `flips` answers at random (either label) on
    60% of its calls, so 30% of its answers differ from the truth. A model's n-th call for a
    prompt draws from a generator seeded by (prompt, n): the same answers on every test run."""

    calls: ClassVar[Counter[str]] = Counter()
    lock: ClassVar[threading.Lock] = threading.Lock()

    def do_POST(self) -> None:
        body = json.loads(self.read_body())
        prompt = body["messages"][-1]["content"]
        with self.lock:  # judges share prompts: each counts its own calls
            self.calls[body["model"] + prompt] += 1
            n = self.calls[body["model"] + prompt]
        number = int(prompt.rsplit("answer ", 1)[1].split()[0])
        label = "rejection" if number % 2 == 0 else "not rejection"
        seed = hashlib.sha256(f"{prompt}#{n}".encode()).digest()
        draw = random.Random(seed)
        if body["model"] == "flips" and draw.random() < 0.6:
            label = draw.choice(["rejection", "not rejection"])
        content = json.dumps({"rejection": label})
        self.send_json(200, {"choices": [{"message": {"content": content},
                                          "finish_reason": "stop"}]})  # fmt: skip


def test_a_judge_flipping_30_percent_is_caught_and_its_steady_twin_is_not(tmp_path: Path) -> None:
    rows = 60
    evaluator = rejection_project(tmp_path / "p", chats(rows))
    truth = ["rejection" if i % 2 == 0 else "not rejection" for i in range(rows)]
    for annotator in ("ana", "ben"):
        path = tmp_path / f"{annotator}.csv"
        pl.DataFrame({"original_id": list(range(rows)), "rejection": truth}).write_csv(path)
        evaluator.add_external_annotation_results(path, annotator)
    Judges.calls = Counter()
    with serving(Judges) as server:
        base = f"http://127.0.0.1:{server.server_address[1]}/v1"
        for model in ("flips", "steady"):
            evaluator.add_judge(model, "openai", model, "Did {response} refuse {prompt}?",
                                base_url=base)  # fmt: skip
        results = evaluator.run_judges_async(consistency=5)
    assert sum(Judges.calls.values()) == 2 * 5 * rows
    stored = results["flips"].results_data
    samples = [[s["rejection"] for s in json.loads(v)] for v in stored["sample_labels"]]
    off = np.mean([[a != t for a in row] for row, t in zip(samples, truth, strict=True)])
    assert 0.22 < off < 0.38  # the judge as built: about 30% of its answers are off
    metric = MetricConfig(
        scorer=SelfConsistencyScorer(), task_names=["rejection"], aggregation_name="single",
        bootstrap=BootstrapConfig(n_resamples=500, seed=1),
    )  # fmt: skip
    table = evaluator.compare_async(MetricsConfig(metrics=[metric]))
    found = {r.judge_id: r for r in next(iter(table.values()))[1]}
    flips, steady = found["flips"], found["steady"]
    # flipping: its k answers disagree (flip rate about 2 * 0.3 * 0.7), kappa far below 0.8
    assert flips.scores["flip_rate"] > 0.3
    assert flips.scores["flip_rate"] == pytest.approx(self_consistency(samples)["flip_rate"])
    assert flips.confidence_intervals["fleiss_kappa"][1] < 0.8  # type: ignore[index]
    assert flips.scores["unanimous_share"] < 0.5
    # voting buys accuracy: the majority of 5 is right more often than one answer
    first = [row[0] for row in samples]
    assert flips.scores["first_answer_accuracy"] == pytest.approx(accuracy_score(truth, first))
    assert flips.scores["majority_accuracy"] > flips.scores["first_answer_accuracy"] + 0.05
    assert flips.scores["human_rows"] == rows
    # steady: it always repeats itself and voting changes nothing
    assert steady.scores["flip_rate"] == 0.0 and steady.scores["unanimous_share"] == 1.0
    assert steady.scores["fleiss_kappa"] == pytest.approx(1.0)
    assert steady.confidence_intervals["fleiss_kappa"][0] == pytest.approx(1.0)  # type: ignore[index]
    assert steady.scores["first_answer_accuracy"] == steady.scores["majority_accuracy"] == 1.0
    png = evaluator.paths.scores_dir / "self_consistency" / metric.get_unique_name()
    assert (png / "self_consistency.png").stat().st_size > 10_000


def test_one_answer_per_row_and_list_labels_are_refused(tmp_path: Path) -> None:
    evaluator = rejection_project(tmp_path / "p", chats(6))
    evaluator.add_judge("mock", "mock", "m", "Did {response} refuse {prompt}?")
    evaluator.run_judges_async()  # consistency=1
    metric = MetricConfig(
        scorer=SelfConsistencyScorer(), task_names=["rejection"], aggregation_name="single"
    )
    with pytest.warns(UserWarning, match="could not be computed"):
        table = evaluator.compare_async(MetricsConfig(metrics=[metric]), human_results={})
    (result,) = next(iter(table.values()))[1]
    assert "one answer each" in (result.error or "") and "--consistency 5" in (result.error or "")
    # labels of several tasks combined (multilabel) are lists: one answer is not one label
    assert not SelfConsistencyScorer().can_score_task(["rejection", "yes"])
    results = {
        "j": pl.DataFrame(
            {
                "original_id": [1],
                "outcome": ["valid"],
                "a": ["x"],
                "b": ["y"],
                "sample_labels": ['[{"a": "x"}, {"a": "x"}]'],
            }
        )
    }
    combined = MetricConfig(
        scorer=SelfConsistencyScorer(), task_names=["a", "b"], aggregation_name="multilabel"
    )
    with pytest.raises(MetricConfigError, match="'self_consistency' cannot score labels of a"):
        anyio.run(compare, MetricsConfig(metrics=[combined]), results, {})
