"""One humans' majority everywhere it is shown or scored against: the scorers (AccuracyScorer,
CohensKappaScorer on single labels, ClassificationScorer), compare-runs, the row table and the
viewer give the same majority per row, and scores that agree with it.

The review's demo is row 1 of the multi-label task: humans [a,b], [a,c], [b,c] choose each of
a, b and c two times in three, so the majority is {a,b,c} (docs/scoring.md, "The humans'
majority"); a judge answering [a,c] is wrong there. Every expected figure below is worked out
by hand from the labels, not from the code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from sklearn.metrics import cohen_kappa_score

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.scores import BootstrapConfig
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.metrics import AccuracyScorer, ClassificationScorer, CohensKappaScorer
from meta_evaluator.scores.metrics._items import Items, common_ids
from tests.scores.conftest import frames, run_scorer
from tests.view.conftest import client

pytestmark = pytest.mark.anyio

IDS = [1, 2, 3, 4]
OUTCOMES = ["c", "b", "a"]  # the task's order, not the alphabet's
TOPICS = {  # per annotator, per row
    "ana": [["a", "b"], ["a"], ["c"], []],
    "ben": [["a", "c"], ["a"], ["b", "c"], []],
    "chen": [["b", "c"], [], ["b"], ["a"]],
}
# majority: {a,b,c} (2/3 each); {a} (2/3); {b,c} (2/3 each); {} (a: 1/3)
TOPICS_MAJORITY = [{"a", "b", "c"}, {"a"}, {"b", "c"}, set()]
TOPICS_RUNS = {
    "mon": [["a", "c"], ["a"], ["b"], []],  # right on 2 and 4: 0.5
    "tue": [["a", "b", "c"], ["a"], ["b", "c"], ["a"]],  # right on 1, 2, 3: 0.75
}
VERDICT = {
    "ana": ["yes", "yes", "yes", "no"],
    "ben": ["no", "no", "yes", "no"],
    "chen": ["no", None, "no", "no"],
}
VERDICT_MAJORITY = ["no", "yes", "yes", "no"]  # row 2: a tie, to the largest label
VERDICT_RUNS = {"mon": ["yes", "yes", "yes", "no"], "tue": ["no", "no", "yes", "no"]}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four rows, tasks `topics` (outcomes c, b, a) and `verdict` (yes/no); runs mon and tue of
    judge j and annotators ana, ben, chen, all imported from files."""
    folder = tmp_path_factory.mktemp("majority")
    evaluator = MetaEvaluator(folder / "proj")
    frame = pl.DataFrame({"qid": IDS, "text": [f"chat {i}" for i in IDS]})
    evaluator.add_data(DataLoader.load_from_dataframe("chats", frame, "qid"))
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"topics": MultiLabelSchema(outcomes=OUTCOMES), "verdict": ["yes", "no"]},
            prompt_columns=None,
            response_columns=["text"],
            required_tasks=["topics"],  # chen left one verdict out
        )
    )
    evaluator.save_state()

    def write(name: str, topics: list[Any], verdict: list[Any]) -> Path:
        path = folder / f"{name}.parquet"
        pl.DataFrame(
            {"original_id": IDS, "topics": topics, "verdict": verdict},
            schema={"original_id": pl.Int64, "topics": pl.List(pl.String), "verdict": pl.String},
        ).write_parquet(path)
        return path

    for run in ("mon", "tue"):
        source = write(run, TOPICS_RUNS[run], VERDICT_RUNS[run])
        evaluator.add_external_judge_results(source, "j", run_id=run)
    for name in TOPICS:
        evaluator.add_external_annotation_results(write(name, TOPICS[name], VERDICT[name]), name)
    return folder / "proj"


def _frames(task: str, run: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    runs, humans = (TOPICS_RUNS, TOPICS) if task == "topics" else (VERDICT_RUNS, VERDICT)
    judge = dict(zip(IDS, runs[run], strict=True))
    by_human = {h: dict(zip(IDS, labels, strict=True)) for h, labels in humans.items()}
    return frames(judge, by_human, "int")


def _majority_vote(scorer: Any, task: str, run: str) -> dict[str, Any]:
    judge, human = _frames(task, run)
    mode = TaskAggregationMode.SINGLE
    return run_scorer(scorer, judge, human, mode, annotator_aggregation="majority_vote").scores


def _as_set(label: Any) -> Any:
    return None if label is None else set(label)


def _right(task: str, run: str) -> float:
    """The share of rows where the run's label is the majority's, worked out from the lists."""
    if task == "topics":
        pairs = zip(TOPICS_RUNS[run], TOPICS_MAJORITY, strict=True)
        return sum(set(label) == voted for label, voted in pairs) / len(IDS)
    pairs = zip(VERDICT_RUNS[run], VERDICT_MAJORITY, strict=True)
    return sum(label == voted for label, voted in pairs) / len(IDS)


def test_scoring_reads_the_majority_the_rule_gives() -> None:
    for task, expected in (("topics", TOPICS_MAJORITY), ("verdict", VERDICT_MAJORITY)):
        judge, human = _frames(task, "mon")
        items = Items.build(judge, human, common_ids(judge, human))
        found = items.majority()
        assert [_as_set(m) for m in found] == expected if task == "topics" else found == expected


@pytest.mark.parametrize(("run", "expected"), [("mon", 0.5), ("tue", 0.75)])
def test_multi_label_scores_against_the_majority_set(run: str, expected: float) -> None:
    assert _right("topics", run) == expected
    accuracy = _majority_vote(AccuracyScorer(), "topics", run)["accuracy"]
    classification = _majority_vote(ClassificationScorer("accuracy"), "topics", run)["accuracy"]
    assert accuracy == classification == pytest.approx(expected)


@pytest.mark.parametrize("run", ["mon", "tue"])
def test_single_label_scores_against_the_same_majority(run: str) -> None:
    labels, right = VERDICT_RUNS[run], _right("verdict", run)
    reference = cohen_kappa_score(labels, VERDICT_MAJORITY)  # scikit-learn, on the rule's labels
    assert _majority_vote(AccuracyScorer(), "verdict", run)["accuracy"] == pytest.approx(right)
    classification = _majority_vote(ClassificationScorer("accuracy"), "verdict", run)
    assert classification["accuracy"] == pytest.approx(right)
    kappa = _majority_vote(CohensKappaScorer(), "verdict", run)["cohens_kappa"]
    assert kappa == pytest.approx(reference)


@pytest.mark.parametrize("task", ["topics", "verdict"])
async def test_compare_runs_and_the_viewer_show_the_same_majority(project: Path, task: str) -> None:
    """compare-runs' flips and scores, the viewer's rows and its Runs tab: one majority."""
    from meta_evaluator.view import ViewerApp

    majority: list[Any] = TOPICS_MAJORITY if task == "topics" else VERDICT_MAJORITY
    compared = MetaEvaluator(project, load=True).compare_runs(
        "mon", "tue", judge_id="j", task=task, bootstrap=BootstrapConfig(n_resamples=50)
    )
    by_id = dict(zip(IDS, majority, strict=True))
    for change in compared.changes:
        shown = change.human
        if task == "topics":  # listed in the task's order, a list as the runs' labels are
            assert shown == [o for o in OUTCOMES if o in by_id[change.id]]
        else:
            assert shown == by_id[change.id]
    scores = {s.name: s for s in compared.scores}
    runs = TOPICS_RUNS if task == "topics" else VERDICT_RUNS
    for side, run in (("a", "mon"), ("b", "tue")):
        assert getattr(scores["accuracy_majority_vote"], side) == pytest.approx(_right(task, run))
    if task == "topics":
        # 1 and 3 moved toward the majority, 4 away from it
        assert compared.flipped == (1, 3, 4)
        assert [c.direction for c in compared.changes] == ["toward", "toward", "away"]
    app = ViewerApp(MetaEvaluator(project, load=True))
    async with client(app) as http:
        rows = (await http.get("/api/rows", params={"judge": "j", "task": task})).json()["rows"]
        ask = {"a": "mon", "b": "tue", "task": task}
        runs_json = await http.get("/api/compare", params=ask)
        runs_page = await http.get("/runs", params=ask)
    assert runs_json.json()["changes"] == compared.to_json()["changes"]
    if task == "topics":  # the Runs tab writes the majority as it writes the runs' labels
        assert runs_page.text.count("{c, b, a}") == 2  # row 1: run B's label and the majority
        assert "(&#x27;c&#x27;" not in runs_page.text and "()" not in runs_page.text
    shown_run = runs["tue"]  # the viewer shows the judge's latest run
    for row, expected, label in zip(rows, majority, shown_run, strict=True):
        if task == "topics":
            assert row["human_majority"] == [o for o in OUTCOMES if o in expected]
            assert ("disagree" in row["flags"]) == (set(label) != expected)
        else:
            assert row["human_majority"] == expected
            assert ("disagree" in row["flags"]) == (label != expected)


def test_0_3_3_vectors_are_the_sets_they_name_in_every_scorer() -> None:
    """Vectors with a slot per outcome (the outcome or FALSE), as 0.3.3 stored them and as
    `multilabel` aggregation combines yes/no tasks: row 1's majority is {violence} (2 of 3),
    row 2's {} (fraud 1 of 3). The judge is right on row 1 only: accuracy 1/2."""
    from meta_evaluator.stats.paired import label_change

    humans = {
        "ana": {1: ["violence", "FALSE"], 2: ["FALSE", "fraud"]},
        "ben": {1: ["violence", "fraud"], 2: ["FALSE", "FALSE"]},
        "chen": {1: ["FALSE", "FALSE"], 2: ["FALSE", "FALSE"]},
    }
    judge = {1: ["violence", "FALSE"], 2: ["FALSE", "fraud"]}
    judge_frame, human_frame = frames(judge, humans, "int")
    options = {"annotator_aggregation": "majority_vote"}
    for scorer in (AccuracyScorer(), ClassificationScorer("accuracy")):
        found = run_scorer(scorer, judge_frame, human_frame, **options).scores["accuracy"]
        assert found == pytest.approx(0.5)
    columns = [[labels[i] for i in (1, 2)] for labels in humans.values()]
    change = label_change(
        [judge[1], judge[2]], [["violence"], []], columns, n_resamples=20
    )  # row 2 now chooses nothing: toward the empty majority
    assert change.changed == (1,) and change.majority == ((),)
    assert change.directions == ("toward",)
