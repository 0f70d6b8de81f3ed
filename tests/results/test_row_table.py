"""The row table (results/row_table.py) against hand-computed cases, and its majority pinned
to the one rule scoring uses (`stats/majority.py`); the confusion matrix against
scikit-learn's."""

from __future__ import annotations

import random
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader, EvalData
from meta_evaluator.errors import ColumnError, TaskError
from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.examples import create_example_project
from meta_evaluator.results.row_table import (
    FLAGS,
    RowSources,
    build_row_table,
    confusion,
    most_disagreed,
    read_row_sources,
)


def _ids(kind: str, numbers: list[int]) -> list[Any]:
    return numbers if kind == "int" else [f"q-{n}" for n in numbers]


def _data(ids: list[Any]) -> EvalData:
    frame = pl.DataFrame(
        {
            "qid": ids,
            "text": [f"text <b>{i}</b>" for i in ids],
            "hidden": ["not shown"] * len(ids),
        }
    )
    return DataLoader.load_from_dataframe("rows", frame, "qid")


def _task(**schemas: Any) -> EvalTask:
    return EvalTask(
        task_schemas=schemas or {"verdict": ["yes", "no"], "why": None},
        prompt_columns=None,
        response_columns=["text"],
        required_tasks=[next(iter(schemas or {"verdict": 0}))],
    )


def _judge(ids: list[Any], rows: list[tuple[str, str, Any, str | None]]) -> pl.DataFrame:
    """Judge rows: (outcome, status, verdict, why) per id."""
    return pl.DataFrame(
        {
            "original_id": ids,
            "outcome": [r[0] for r in rows],
            "status": [r[1] for r in rows],
            "error_message": [None if r[0] == "valid" else f"{r[1]} happened" for r in rows],
            "llm_raw_response_content": [f"raw {i}" for i in ids],
            "verdict": [r[2] for r in rows],
            "why": [r[3] for r in rows],
        }
    )


def _human(ids: list[Any], labels: list[Any], outcomes: list[str] | None = None) -> pl.DataFrame:
    outcomes = outcomes or ["valid"] * len(ids)
    return pl.DataFrame(
        {
            "original_id": ids,
            "outcome": outcomes,
            "status": ["success" if o == "valid" else "label_not_allowed" for o in outcomes],
            "verdict": labels,
        },
        schema_overrides={"verdict": pl.String},
    )


@pytest.fixture(params=["int", "str"])
def id_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_a_hand_computed_table(id_kind: str) -> None:
    """Ties, a missing human, invalid and error rows, a row nobody answered, a partial row."""
    i10, i3, i7, i42, i5, i8 = _ids(id_kind, [10, 3, 7, 42, 5, 8])
    data = _data([i10, i3, i7, i42, i5, i8])
    judge = _judge(
        [i10, i3, i7, i42, i8],
        [
            ("valid", "success", "yes", "Clearly yes."),
            ("valid", "success", "no", "Looks like no."),
            ("invalid", "parsing_error", "yes", None),  # an invalid row's label is no answer
            ("error", "timeout", None, None),
            ("invalid", "partial", "no", None),  # partial: its answered task counts
        ],
    )
    humans = {
        "chen": _human([i10, i7], ["no", "no"]),
        "ana": _human([i10, i3, i7, i42, i8], ["yes", "yes", "no", "no", "yes"]),
        "ben": _human(
            [i10, i3, i7, i5, i8],
            ["yes", "no", "no", "yes", "no"],
            ["valid", "valid", "valid", "invalid", "valid"],
        ),
    }
    table = build_row_table(data, _task(), "verdict", "j", RowSources({"j": judge}, humans))
    assert table.annotators == ("ana", "ben", "chen")
    assert table.shown == ("text",) and table.kind == "single"
    frame = table.frame
    assert frame.schema["original_id"] == (pl.Int64 if id_kind == "int" else pl.String)
    assert frame["original_id"].to_list() == [i10, i3, i7, i42, i5, i8]  # data order
    assert frame["position"].to_list() == [0, 1, 2, 3, 4, 5]
    assert frame["data.text"].to_list()[0] == f"text <b>{i10}</b>"
    assert "data.hidden" not in frame.columns
    expected = {
        # id: judge, majority, labelled, against, disagree, split, invalid, error, outcome
        i10: ("yes", "yes", 3, 1, False, True, False, False, "valid"),
        i3: ("no", "yes", 2, 1, True, True, False, False, "valid"),  # a 1-1 tie goes to "yes"
        i7: (None, "no", 3, 0, False, False, True, False, "invalid"),
        i42: (None, "no", 1, 0, False, False, False, True, "error"),
        i5: (None, None, 0, 0, False, False, False, False, None),  # ben's label is invalid
        i8: ("no", "yes", 2, 1, True, True, True, False, "invalid"),  # a tie: "yes" > "no"
    }
    columns = ["judge_label", "human_majority", "humans_labelled", "humans_against", *FLAGS]
    got = {
        row["original_id"]: (*(row[c] for c in columns), row["outcome"])
        for row in frame.iter_rows(named=True)
    }
    assert got == expected
    assert frame["human.ana"].to_list() == ["yes", "yes", "no", "no", None, "yes"]
    assert frame["human.ben"].to_list() == ["yes", "no", "no", None, None, "no"]
    assert frame["human.chen"].to_list() == ["no", None, "no", None, None, None]
    assert frame["reasoning"].to_list() == [
        "Clearly yes.",
        "Looks like no.",
        None,
        None,
        None,
        None,
    ]
    assert frame["raw_answer"].to_list()[:2] == [f"raw {i10}", f"raw {i3}"]
    assert frame["status"].to_list() == [
        "success",
        "success",
        "parsing_error",
        "timeout",
        None,
        "partial",
    ]
    assert frame["error_message"].to_list()[3] == "timeout happened"


def test_no_humans_at_all(id_kind: str) -> None:
    ids = _ids(id_kind, [1, 2])
    judge = _judge(ids, [("valid", "success", "yes", None), ("error", "http_error", None, None)])
    table = build_row_table(_data(ids), _task(), "verdict", "j", RowSources({"j": judge}, {}))
    frame = table.frame
    assert table.annotators == ()
    assert frame["human_majority"].to_list() == [None, None]
    assert frame["humans_labelled"].to_list() == [0, 0]
    assert frame.select(FLAGS).rows() == [(False, False, False, False), (False, False, False, True)]


def test_several_free_text_tasks_make_the_reasoning() -> None:
    task = EvalTask(
        task_schemas={"verdict": ["yes", "no"], "why": None, "advice": None},
        prompt_columns=None,
        response_columns=["text"],
        required_tasks=["verdict"],
    )
    judge = _judge([1], [("valid", "success", "yes", "Because.")]).with_columns(
        advice=pl.lit("Ask again.")
    )
    table = build_row_table(_data([1]), task, "verdict", "j", RowSources({"j": judge}, {}))
    assert table.frame["reasoning"].to_list() == ["why: Because.\nadvice: Ask again."]


def test_multilabel_answers_are_lists(id_kind: str) -> None:
    """Lists are label sets: the majority holds each outcome half the humans or more chose."""
    ids = _ids(id_kind, [1, 2, 3])
    task = EvalTask(
        task_schemas={"topics": MultiLabelSchema(outcomes=["a", "b", "c"])},
        prompt_columns=None,
        response_columns=["text"],
    )
    judge = pl.DataFrame(
        {
            "original_id": ids,
            "outcome": ["valid"] * 3,
            "status": ["success"] * 3,
            "topics": [["a", "b"], ["a"], []],
        }
    )
    humans = {
        "ana": pl.DataFrame(
            {
                "original_id": ids,
                "outcome": ["valid"] * 3,
                "status": ["success"] * 3,
                "topics": [["a", "b"], ["a"], []],
            }
        ),
        "ben": pl.DataFrame(
            {
                "original_id": ids,
                "outcome": ["valid"] * 3,
                "status": ["success"] * 3,
                "topics": [["a"], ["b"], []],
            }
        ),
        "chen": pl.DataFrame(
            {
                "original_id": ids[:1],
                "outcome": ["valid"],
                "status": ["success"],
                "topics": [["a", "b"]],
            }
        ),
    }
    table = build_row_table(_data(ids), task, "topics", "j", RowSources({"j": judge}, humans))
    frame = table.frame
    assert table.kind == "multilabel"
    assert frame.schema["judge_label"] == pl.List(pl.String)
    # row 2: ana chose a, ben b: each outcome by 1 of 2, a tie that keeps it
    assert frame["human_majority"].to_list() == [["a", "b"], ["a", "b"], []]
    assert frame["majority_key"].to_list() == ['["a","b"]', '["a","b"]', "[]"]
    assert frame["judge_key"].to_list() == ['["a","b"]', '["a"]', "[]"]
    assert frame["disagree"].to_list() == [False, True, False]
    assert frame["humans_split"].to_list() == [True, True, False]
    assert frame["humans_against"].to_list() == [1, 1, 0]
    assert confusion(table).rows() == [
        ('["a","b"]', '["a","b"]', 1),
        ('["a"]', '["a","b"]', 1),
        ("[]", "[]", 1),
    ]


def test_bad_requests_raise_typed_errors() -> None:
    data = _data([1, 2])
    judge = _judge([1, 2], [("valid", "success", "yes", None)] * 2)
    sources = RowSources({"j": judge}, {"ana": _human(["1"], ["yes"])})
    with pytest.raises(TaskError, match="no task 'nope'"):
        build_row_table(data, _task(), "nope", "j", sources)
    with pytest.raises(TaskError, match="no results of judge 'k'; judges with results are"):
        build_row_table(data, _task(), "verdict", "k", sources)
    with pytest.raises(ColumnError, match=r"annotator 'ana'.*ids are String, but Int64") as caught:
        build_row_table(data, _task(), "verdict", "j", sources)
    assert caught.value.column == "original_id"
    without = build_row_table(
        data, _task(), "verdict", "j", RowSources({"j": judge.drop("verdict")}, {})
    )
    assert without.frame["judge_label"].to_list() == [None, None]  # imported for other tasks
    lists = judge.with_columns(pl.concat_list("verdict"))
    with pytest.raises(ColumnError, match="task 'verdict' holds List"):
        build_row_table(data, _task(), "verdict", "j", RowSources({"j": lists}, {}))


def test_confusion_matches_scikit_learn() -> None:
    from sklearn.metrics import confusion_matrix

    rng = random.Random(7)
    n = 300
    ids = list(range(n))
    labels = ["a", "b", "c"]
    judge_labels = [rng.choice(labels) for _ in ids]
    judge = _judge(ids, [("valid", "success", v, None) for v in judge_labels])
    humans = {
        h: _human(ids, [rng.choice([*labels, None]) for _ in ids]) for h in ("ana", "ben", "chen")
    }
    task = _task(verdict=labels)
    table = build_row_table(_data(ids), task, "verdict", "j", RowSources({"j": judge}, humans))
    frame = table.frame.filter(pl.col("human_majority").is_not_null())
    reference = confusion_matrix(
        frame["judge_label"].to_list(), frame["human_majority"].to_list(), labels=labels
    )
    cells = {(a, b): rows for a, b, rows in confusion(table).rows()}
    assert {
        (a, b): int(reference[i, j])
        for i, a in enumerate(labels)
        for j, b in enumerate(labels)
        if reference[i, j]
    } == cells
    assert sum(cells.values()) == frame.height


def test_most_disagreed_puts_most_humans_against_first() -> None:
    ids = [1, 2, 3, 4]
    judge = _judge(ids, [("valid", "success", "yes", None)] * 4)
    humans = {
        "ana": _human(ids, ["no", "no", "yes", "no"]),
        "ben": _human(ids, ["no", None, "no", "no"]),
        "chen": _human(ids, ["yes", None, "no", "no"]),
    }
    table = build_row_table(_data(ids), _task(), "verdict", "j", RowSources({"j": judge}, humans))
    top = most_disagreed(table)
    # 4: 3 of 3 against; 1 and 3: 2 of 3 (data order); 2: 1 of 1
    assert top["original_id"].to_list() == [4, 1, 3, 2]
    assert most_disagreed(table, 2)["original_id"].to_list() == [4, 1]


# --- the majority rule is scoring's ------------------------------------------------------------


LABEL = st.sampled_from(["a", "b", "c", "d", "not rejection", "rejection", "Z", "é"])


def _multilabel_task() -> EvalTask:
    return EvalTask(
        task_schemas={"topics": MultiLabelSchema(outcomes=["c", "a", "b"])},
        prompt_columns=None,
        response_columns=["text"],
    )


def _answers(ids: list[Any], labels: list[Any]) -> pl.DataFrame:
    """One annotator's (or the judge's) answers to the task of outcomes c, a, b, stored as the
    task stores them (in its order)."""
    canonical = [None if v is None else [o for o in ["c", "a", "b"] if o in v] for v in labels]
    return pl.DataFrame(
        {"original_id": ids, "outcome": ["valid"] * len(ids), "status": ["success"] * len(ids),
         "topics": canonical},
        schema_overrides={"topics": pl.List(pl.String)},
    )  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(
    votes=st.lists(
        st.lists(st.one_of(st.none(), LABEL), min_size=3, max_size=3), min_size=1, max_size=15
    ),
    few_counts=st.booleans(),
)
def test_the_tables_majority_is_scorings(
    votes: list[list[str | None]], few_counts: bool, monkeypatch_module: Any
) -> None:
    """Single labels, by both ways `stats.majority` counts codes (a table, or pair by pair)."""
    from meta_evaluator.stats import majority
    from meta_evaluator.stats.majority import majority_label

    monkeypatch_module.setattr(majority, "_MOST_COUNTS", 1 << 25 if few_counts else 0)
    ids = list(range(len(votes)))
    humans = {h: _human(ids, [v[k] for v in votes]) for k, h in enumerate(("ana", "ben", "chen"))}
    judge = _judge(ids, [("valid", "success", "a", None)] * len(ids))
    task = _task(verdict=["a", "b", "c", "d", "not rejection", "rejection", "Z", "é"])
    table = build_row_table(_data(ids), task, "verdict", "j", RowSources({"j": judge}, humans))
    assert table.frame["human_majority"].to_list() == [majority_label(v) for v in votes]
    assert table.frame["majority_key"].to_list() == [majority_label(v) for v in votes]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.lists(
            st.one_of(st.none(), st.lists(st.sampled_from(["a", "b", "c"]), max_size=3)),
            min_size=3,
            max_size=3,
        ),
        min_size=1,
        max_size=10,
    )
)
def test_label_sets_vote_as_scoring_does(votes: list[list[list[str] | None]]) -> None:
    """The table's majority set is `majority_label`'s, listed in the task's order, and the
    judge disagrees exactly where its set is another one."""
    from meta_evaluator.stats.majority import majority_label

    ids = [f"id-{i}" for i in range(len(votes))]
    humans = {h: _answers(ids, [v[k] for v in votes]) for k, h in enumerate(("ana", "ben", "chen"))}
    judge = _answers(ids, [["a", "c"]] * len(ids))
    table = build_row_table(
        _data(ids), _multilabel_task(), "topics", "j", RowSources({"j": judge}, humans)
    )
    expected = [majority_label(v, order=["c", "a", "b"]) for v in votes]
    assert table.frame["human_majority"].to_list() == expected
    assert table.frame["disagree"].to_list() == [
        m is not None and set(m) != {"a", "c"} for m in expected
    ]


def test_the_demo_majority_is_one_set_everywhere() -> None:
    """Humans [a,b], [a,c], [b,c]: each outcome chosen by 2 of 3, so the majority is {a,b,c};
    a judge answering [a,c] disagrees with it (it agreed under the old per-position rule)."""
    ids = [1]
    humans = {
        h: _answers(ids, [labels])
        for h, labels in (("ana", ["a", "b"]), ("ben", ["a", "c"]), ("chen", ["b", "c"]))
    }
    table = build_row_table(
        _data(ids), _multilabel_task(), "topics", "j",
        RowSources({"j": _answers(ids, [["a", "c"]])}, humans),
    )  # fmt: skip
    assert table.frame["human_majority"].to_list() == [["c", "a", "b"]]  # the task's order
    assert table.frame["majority_key"].to_list() == ['["c","a","b"]']
    assert table.frame["disagree"].to_list() == [True]


@pytest.fixture(scope="module")
def monkeypatch_module() -> Any:
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_the_table_agrees_with_scorings_items_on_the_example() -> None:
    """The refusal example's majority per row, as `Items.majority_codes` encodes it."""
    from meta_evaluator.scores.metrics._items import Items

    with tempfile.TemporaryDirectory() as folder:
        evaluator = create_example_project("refusal", Path(folder) / "refusal")
        humans = evaluator.load_all_human_results()
        assert evaluator.data is not None and evaluator.eval_task is not None
        judge = _judge(
            evaluator.data.ids.to_list(),
            [("valid", "success", "rejection", None)] * len(evaluator.data),
        ).rename({"verdict": "rejection", "why": "explanation"})
        sources = RowSources({"j": judge}, {h: r.results_data for h, r in humans.items()})
        table = build_row_table(evaluator.data, evaluator.eval_task, "rejection", "j", sources)
    human = pl.concat(
        r.results_data.select(
            "original_id", pl.lit(h).alias("human_id"), pl.col("rejection").alias("label")
        )
        for h, r in humans.items()
    )
    ids = table.frame["original_id"].sort()
    items = Items.build(judge.select("original_id", pl.col("rejection").alias("label")), human, ids)
    _, codes, categories = items.majority_codes()
    scoring = dict(
        zip(ids.to_list(), [categories[c] if c >= 0 else None for c in codes], strict=True)
    )
    assert dict(table.frame.select("original_id", "human_majority").rows()) == scoring
    assert Counter(scoring.values()).total() == 40


def test_sources_are_read_as_the_project_loads_them(tmp_path: Path) -> None:
    evaluator = create_example_project("refusal", tmp_path / "refusal")
    evaluator.run_judges_async()
    evaluator = MetaEvaluator(tmp_path / "refusal", load=True)
    assert evaluator.data is not None and evaluator.eval_task is not None
    paths = evaluator.paths
    sources = read_row_sources(
        paths.results_dir, paths.annotations_dir, evaluator.eval_task, evaluator.data.ids
    )
    judges = evaluator.load_all_judge_results()
    assert sorted(sources.judges) == sorted(judges) == ["mock_refusal_judge"]
    full = judges["mock_refusal_judge"].results_data
    read = sources.judges["mock_refusal_judge"]
    assert read.columns == [
        "original_id",
        "outcome",
        "status",
        "error_message",
        "llm_raw_response_content",
        "rejection",
        "explanation",
    ]
    assert read.equals(full.select(read.columns))
    assert sorted(sources.humans) == ["ana", "ben", "chen"]
    lean = read_row_sources(
        paths.results_dir, paths.annotations_dir, evaluator.eval_task, raw_answers=False
    )
    assert "llm_raw_response_content" not in lean.judges["mock_refusal_judge"].columns


def test_the_modules_examples_run() -> None:
    import doctest

    from meta_evaluator.results import row_table

    result = doctest.testmod(row_table)
    assert result.attempted >= 4 and result.failed == 0
