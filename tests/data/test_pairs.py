"""Pairwise preference files: AnnotatedPairs JSON (v1, v2) and CSV, and their project import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data.pairs import read_preference_pairs
from meta_evaluator.errors import (
    AlreadySetError,
    ColumnError,
    DataError,
    DataFileError,
    MetaEvaluatorError,
    TaskError,
)
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.scores import MetricConfig, MetricsConfig
from meta_evaluator.scores.metrics import PreferenceScorer

LABELS = ["text_a", "text_b", "tie"]

# ----- files ---------------------------------------------------------------------------------

ANNOTATORS_V1: dict[str, Any] = {
    "aa11": {"name": "crowd_preference", "description": "Crowd's choice", "type": "human"},
    "bb22": {"name": "Expert Rater", "description": "An expert", "type": "human"},
    "cc33": {"description": "Select the response that is more concise.", "type": "principle"},
    "dd44": {"description": "Select the response that gives an example.", "type": "principle"},
}


def vote(pref: str | None, reason: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"pref": pref}
    if reason is not None:
        entry["no_pref_reason"] = reason
    return entry


def comparison(
    cid: str, votes: dict[str, dict[str, Any]], topic: str = "cooking"
) -> dict[str, Any]:
    return {
        "id": cid,
        "prompt": f"question {cid}",
        "text_a": f"answer A of {cid}",
        "text_b": f"answer B of {cid}",
        "annotations": votes,
        "metadata": {"topic": topic},
    }


COMPARISONS_V1 = [
    comparison(
        "c1",
        {
            "aa11": vote("text_a"),
            "bb22": vote("text_a"),
            "cc33": vote("text_b"),
            "dd44": vote("text_a"),
        },
    ),
    comparison(
        "c2",
        {
            "aa11": vote("text_b"),
            "bb22": vote("a"),
            "cc33": vote("text_b"),
            "dd44": vote(None, "not_applicable"),
        },
        topic="travel",
    ),
    comparison(
        "c3",
        {
            "aa11": vote(None, "both"),
            "bb22": vote("text_b"),
            "cc33": vote("text_a"),
            "dd44": vote("text_b"),
        },
    ),
    comparison("c4", {"aa11": vote("text_a"), "bb22": vote("tie"), "dd44": vote("invalid")}),
    # a repeated id: dropped, the first c1 wins
    comparison(
        "c1",
        {
            "aa11": vote("text_b"),
            "bb22": vote("text_b"),
            "cc33": vote("text_a"),
            "dd44": vote("text_b"),
        },
        topic="repeated",
    ),
]


def write_json(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def v1_document(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "metadata": {"version": "1.0", "default_annotator": "aa11"},
        "annotators": json.loads(json.dumps(ANNOTATORS_V1)),
        "comparisons": json.loads(json.dumps(COMPARISONS_V1)),
    }
    document.update(changes)
    return document


@pytest.fixture
def v1_file(tmp_path: Path) -> Path:
    return write_json(tmp_path / "pairs_v1.json", v1_document())


def v2_document() -> dict[str, Any]:
    def pair(cid: str, model_b: str, votes: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": cid,
            "prompt": f"q {cid}",
            "response_a": {"text": f"A {cid}", "model": "model-one"},
            "response_b": {"text": f"B {cid}", "model": model_b},
            "annotations": votes,
            "metadata": {"topic": "t"},
        }

    return {
        "metadata": {"version": "2.0", "default_annotator": "h"},
        "annotators": {
            "h": {"name": "Crowd", "type": "human"},
            "p": {"description": "Select the response that is more polite.", "type": "principle"},
        },
        "comparisons": [
            pair("x1", "model-two", {"h": vote("a"), "p": vote("b")}),
            pair("x2", "model-three", {"h": vote("b"), "p": vote("tie")}),
            pair("x3", "model-two", {"h": vote(None, "neither"), "p": vote("a")}),
        ],
    }


CSV_TEXT = (
    "comparison_id,text_a,text_b,preferred,prompt,topic,gpt_vote\n"
    "p1,A1,B1,text_a,q1,food,text_b\n"
    "p2,A2,B2,b,q2,travel,tie\n"
    "p1,A9,B9,text_b,q9,food,text_a\n"
    "p3,A3,B3,tie,q3,food,text_a\n"
    "p4,A4,B4,,q4,travel,\n"
)


@pytest.fixture
def csv_file(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.csv"
    path.write_text(CSV_TEXT, encoding="utf-8")
    return path


# ----- reading AnnotatedPairs v1 -------------------------------------------------------------


def test_v1_frame_columns_rows_and_duplicates(v1_file: Path) -> None:
    pairs = read_preference_pairs(v1_file)
    assert pairs.frame.columns == ["comparison_id", "prompt", "text_a", "text_b", "topic"]
    assert pairs.frame["comparison_id"].to_list() == ["c1", "c2", "c3", "c4"]
    assert pairs.frame.schema["comparison_id"] == pl.String
    # the first c1 is kept, the repeated one (topic "repeated") is dropped and counted
    assert pairs.frame["topic"].to_list() == ["cooking", "travel", "cooking", "cooking"]
    assert pairs.frame.row(0, named=True)["text_a"] == "answer A of c1"
    assert pairs.duplicates == 1
    assert pairs.source == str(v1_file)


def test_v1_annotators_kinds_keys_and_reference(v1_file: Path) -> None:
    pairs = read_preference_pairs(v1_file)
    assert list(pairs.annotators) == [
        "crowd_preference",
        "expert_rater",
        "is_more_concise",
        "gives_an_example",
    ]
    kinds = {key: info.kind for key, info in pairs.annotators.items()}
    assert kinds == {
        "crowd_preference": "reference",
        "expert_rater": "human",
        "is_more_concise": "principle",
        "gives_an_example": "principle",
    }
    assert pairs.reference == "crowd_preference"
    assert pairs.annotators["is_more_concise"].description == (
        "Select the response that is more concise."
    )
    assert all(info.key == key for key, info in pairs.annotators.items())


def test_v1_votes_are_normalised_and_aligned_with_rows(v1_file: Path) -> None:
    votes = read_preference_pairs(v1_file).votes
    assert votes == {
        "crowd_preference": ["text_a", "text_b", None, "text_a"],
        "expert_rater": ["text_a", "text_a", "text_b", None],  # "a" -> text_a, "tie" -> None
        "is_more_concise": ["text_b", "text_b", "text_a", None],  # no annotation on c4
        "gives_an_example": ["text_a", None, "text_b", None],  # "invalid" -> None
    }
    assert all(len(v) == 4 for v in votes.values())


def test_principles_that_slug_alike_get_distinct_keys(tmp_path: Path) -> None:
    annotators = {
        "h": {"name": "crowd", "type": "human"},
        "p1": {"description": "Select the response that is more concise.", "type": "principle"},
        "p2": {"description": "select the response that IS MORE CONCISE!", "type": "principle"},
        "p3": {"description": "Select the response that is more concise", "type": "principle"},
    }
    votes = {"h": vote("text_a"), "p1": vote("text_a"), "p2": vote("text_b"), "p3": vote("b")}
    document = v1_document(annotators=annotators, comparisons=[comparison("c1", votes)])
    document["metadata"]["default_annotator"] = "h"
    path = write_json(tmp_path / "same.json", document)
    pairs = read_preference_pairs(path)
    assert list(pairs.annotators) == [
        "crowd",
        "is_more_concise",
        "is_more_concise_2",
        "is_more_concise_3",
    ]
    assert pairs.votes["is_more_concise_2"] == ["text_b"]
    assert pairs.votes["is_more_concise_3"] == ["text_b"]


def test_annotator_without_name_or_description_and_unknown_type(tmp_path: Path) -> None:
    annotators = {
        "ref": {"name": "Crowd", "type": "human"},
        "9xyz": {"type": "model"},  # named by its id; a slug must start with a letter
    }
    votes = {"ref": vote("text_b"), "9xyz": vote("text_a")}
    document = v1_document(annotators=annotators, comparisons=[comparison("c1", votes)])
    document["metadata"]["default_annotator"] = "ref"
    pairs = read_preference_pairs(write_json(tmp_path / "odd.json", document))
    assert {k: a.kind for k, a in pairs.annotators.items()} == {
        "crowd": "reference",
        "a_9xyz": "other",
    }
    assert pairs.votes == {"crowd": ["text_b"], "a_9xyz": ["text_a"]}


# ----- reading AnnotatedPairs v2 -------------------------------------------------------------


def test_v2_responses_become_text_and_model_columns(tmp_path: Path) -> None:
    pairs = read_preference_pairs(write_json(tmp_path / "v2.json", v2_document()))
    frame = pairs.frame
    assert frame.columns[:4] == ["comparison_id", "prompt", "text_a", "text_b"]
    assert set(frame.columns) == {
        "comparison_id",
        "prompt",
        "text_a",
        "text_b",
        "model_a",
        "model_b",
        "topic",
    }
    assert frame["text_a"].to_list() == ["A x1", "A x2", "A x3"]
    assert frame["text_b"].to_list() == ["B x1", "B x2", "B x3"]
    assert frame["model_a"].to_list() == ["model-one"] * 3
    assert frame["model_b"].to_list() == ["model-two", "model-three", "model-two"]
    assert pairs.votes == {
        "crowd": ["text_a", "text_b", None],
        "is_more_polite": ["text_b", None, "text_a"],
    }
    assert pairs.reference == "crowd"
    assert pairs.annotators["is_more_polite"].kind == "principle"


def test_v2_integer_ids_become_text(tmp_path: Path) -> None:
    document = v2_document()
    for i, c in enumerate(document["comparisons"]):
        c["id"] = 100 + i
    pairs = read_preference_pairs(write_json(tmp_path / "v2.json", document))
    assert pairs.frame["comparison_id"].to_list() == ["100", "101", "102"]
    assert pairs.frame.schema["comparison_id"] == pl.String


# ----- reading CSV -----------------------------------------------------------------------------


def test_csv_frame_votes_and_extra_vote_column(csv_file: Path) -> None:
    pairs = read_preference_pairs(csv_file)
    assert pairs.frame.columns == ["comparison_id", "prompt", "text_a", "text_b", "topic"]
    assert pairs.frame["comparison_id"].to_list() == ["p1", "p2", "p3", "p4"]
    assert pairs.frame["text_a"].to_list() == ["A1", "A2", "A3", "A4"]  # first p1 kept
    assert pairs.duplicates == 1
    assert pairs.reference == "preferred"
    assert {k: a.kind for k, a in pairs.annotators.items()} == {
        "preferred": "reference",
        "gpt_vote": "other",
    }
    assert pairs.votes == {
        "preferred": ["text_a", "text_b", None, None],
        "gpt_vote": ["text_b", None, "text_a", None],
    }


def test_csv_vote_column_names_are_slugged(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text(
        "comparison_id,text_a,text_b,preferred,My Vote!\nc1,A,B,text_a,text_b\n", encoding="utf-8"
    )
    pairs = read_preference_pairs(path)
    assert list(pairs.annotators) == ["preferred", "my_vote"]
    assert pairs.votes["my_vote"] == ["text_b"]
    assert "My Vote!" not in pairs.frame.columns


# ----- errors --------------------------------------------------------------------------------


def check(info: pytest.ExceptionInfo[Any], cls: type[Exception], *fragments: str) -> Any:
    exc = info.value
    assert type(exc) is cls, f"expected {cls.__name__}, got {type(exc).__name__}: {exc}"
    assert isinstance(exc, MetaEvaluatorError)
    for fragment in fragments:
        assert fragment in str(exc), f"{fragment!r} not in {str(exc)!r}"
    return exc


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataFileError) as info:
        read_preference_pairs(tmp_path / "nowhere.json")
    assert check(info, DataFileError, "nowhere.json").path == tmp_path / "nowhere.json"


def test_unsupported_suffix(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text("{}\n", encoding="utf-8")
    with pytest.raises(DataFileError) as info:
        read_preference_pairs(path)
    assert check(info, DataFileError, "pairs.jsonl", ".json", ".csv").path == path


def test_bad_json(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"metadata": ', encoding="utf-8")
    with pytest.raises(DataFileError) as info:
        read_preference_pairs(path)
    assert check(info, DataFileError, "broken.json", "JSON").path == path


@pytest.mark.parametrize(
    "document",
    [[1, 2], {"annotators": {}, "metadata": {}}, {"comparisons": {"c1": {}}}],
    ids=["list", "no-comparisons", "comparisons-not-a-list"],
)
def test_not_annotated_pairs_layout(tmp_path: Path, document: Any) -> None:
    path = write_json(tmp_path / "other.json", document)
    with pytest.raises(DataFileError) as info:
        read_preference_pairs(path)
    check(info, DataFileError, "other.json", "AnnotatedPairs", "comparisons")


@pytest.mark.parametrize("default", ["zz99", None])
def test_default_annotator_not_among_annotators(tmp_path: Path, default: str | None) -> None:
    document = v1_document()
    document["metadata"]["default_annotator"] = default
    with pytest.raises(DataFileError) as info:
        read_preference_pairs(write_json(tmp_path / "d.json", document))
    check(info, DataFileError, "d.json", "default_annotator")


def test_comparison_without_id(tmp_path: Path) -> None:
    document = v1_document()
    del document["comparisons"][2]["id"]
    with pytest.raises(DataFileError) as info:
        read_preference_pairs(write_json(tmp_path / "noid.json", document))
    check(info, DataFileError, "noid.json", "comparisons[2]", "'id'")


def test_v1_text_that_is_not_text(tmp_path: Path) -> None:
    document = v1_document()
    document["comparisons"][1]["text_b"] = None
    with pytest.raises(DataFileError) as info:
        read_preference_pairs(write_json(tmp_path / "t.json", document))
    check(info, DataFileError, "comparisons[1]", "text_b")


@pytest.mark.parametrize("response", [{"model": "m"}, "just text", None])
def test_v2_response_without_text(tmp_path: Path, response: Any) -> None:
    document = v2_document()
    document["comparisons"][1]["response_b"] = response
    with pytest.raises(DataFileError) as info:
        read_preference_pairs(write_json(tmp_path / "v2.json", document))
    check(info, DataFileError, "v2.json", "comparisons[1]", "response_b", "'text'")


@pytest.mark.parametrize("part", ["metadata", "annotators", "annotations", "comparison-metadata"])
def test_wrong_type_inside_the_layout_is_a_data_file_error(tmp_path: Path, part: str) -> None:
    document = v1_document()
    if part == "metadata":
        document["metadata"] = ["1.0"]
    elif part == "annotators":
        document["annotators"] = ["aa11"]
    elif part == "annotations":
        document["comparisons"][0]["annotations"] = ["aa11"]
    else:
        document["comparisons"][0]["metadata"] = ["cooking"]
    with pytest.raises(DataFileError):
        read_preference_pairs(write_json(tmp_path / "typed.json", document))


def test_csv_without_preferred(tmp_path: Path) -> None:
    path = tmp_path / "nopref.csv"
    path.write_text("comparison_id,text_a,text_b,prompt\nc1,A,B,q\n", encoding="utf-8")
    with pytest.raises(ColumnError) as info:
        read_preference_pairs(path)
    exc = check(info, ColumnError, "nopref.csv", "preferred", "['comparison_id', 'text_a'")
    assert exc.column == "preferred" and exc.path == path


def test_csv_missing_several_columns_names_the_first(tmp_path: Path) -> None:
    path = tmp_path / "few.csv"
    path.write_text("comparison_id,preferred\nc1,text_a\n", encoding="utf-8")
    with pytest.raises(ColumnError) as info:
        read_preference_pairs(path)
    assert check(info, ColumnError, "'text_a', 'text_b'").column == "text_a"


# ----- into a project --------------------------------------------------------------------------


def test_add_preference_pairs_sets_data_task_humans_and_traits(
    tmp_path: Path, v1_file: Path
) -> None:
    evaluator = MetaEvaluator(tmp_path / "project", load=False)
    summary = evaluator.add_preference_pairs(v1_file)
    assert summary == {
        "pairs": 4,
        "duplicates_dropped": 1,
        "annotators": ["crowd_preference", "expert_rater"],
        "traits": ["is_more_concise", "gives_an_example"],
    }
    data = evaluator.data
    assert data is not None and data.id_column == "comparison_id"
    assert data.data.schema["comparison_id"] == pl.String
    assert data.data["comparison_id"].to_list() == ["c1", "c2", "c3", "c4"]

    task = evaluator.eval_task
    assert task is not None
    assert task.task_names == ["preference", "is_more_concise", "gives_an_example"]
    assert all(task.allowed_labels(name) == LABELS for name in task.task_names)
    assert task.get_required_tasks() == ["preference"]
    assert task.prompt_columns == ["prompt"] and task.response_columns == ["text_a", "text_b"]

    humans = evaluator.load_all_human_results()
    assert sorted(humans) == ["crowd_preference", "expert_rater"]
    crowd = humans["crowd_preference"].results_data.sort("original_id")
    assert crowd["original_id"].to_list() == ["c1", "c2", "c3", "c4"]
    assert crowd["preference"].to_list() == ["text_a", "text_b", None, "text_a"]
    assert crowd["outcome"].to_list() == ["valid", "valid", "invalid", "valid"]
    expert = humans["expert_rater"].results_data.sort("original_id")
    assert expert["outcome"].to_list() == ["valid", "valid", "valid", "invalid"]

    judges = evaluator.load_all_judge_results()
    assert list(judges) == ["annotated_pairs"]
    traits = judges["annotated_pairs"].results_data.sort("original_id")
    assert traits["outcome"].to_list() == ["valid"] * 4  # no vote on a trait is still valid
    assert traits["is_more_concise"].to_list() == ["text_b", "text_b", "text_a", None]
    assert traits["gives_an_example"].to_list() == ["text_a", None, "text_b", None]


def test_invalid_human_rows_are_not_scored(tmp_path: Path, v1_file: Path) -> None:
    evaluator = MetaEvaluator(tmp_path / "project", load=False)
    evaluator.add_preference_pairs(v1_file)
    config = MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=PreferenceScorer(
                    reference_task="preference",
                    reference_annotator="crowd_preference",
                    n_resamples=20,
                ),
                task_names=["is_more_concise"],
                aggregation_name="single",
            )
        ]
    )
    ((_, results),) = evaluator.compare_async(config).values()
    (result,) = results
    assert result.error is None
    # the crowd voted on c1, c2, c4 (c3 had no preference): 3 pairs; concise agrees on c2 only
    assert result.metadata["num_pairs"] == 3
    assert (result.metadata["agreed"], result.metadata["disagreed"]) == (1, 1)
    assert result.metadata["not_applicable"] == 1
    assert result.scores["relevance"] == pytest.approx(2 / 3)


def test_add_preference_pairs_from_csv_and_v2(tmp_path: Path, csv_file: Path) -> None:
    from_csv = MetaEvaluator(tmp_path / "csv", load=False)
    summary = from_csv.add_preference_pairs(csv_file)
    assert summary["annotators"] == ["preferred", "gpt_vote"] and summary["traits"] == []
    assert from_csv.load_all_judge_results() == {}  # no principles, no imported judge
    assert from_csv.eval_task is not None and from_csv.eval_task.task_names == ["preference"]
    assert sorted(from_csv.load_all_human_results()) == ["gpt_vote", "preferred"]

    v2 = write_json(tmp_path / "v2.json", v2_document())
    from_v2 = MetaEvaluator(tmp_path / "v2", load=False)
    from_v2.add_preference_pairs(v2, preference_task="overall", trait_judge_id="traits")
    assert from_v2.eval_task is not None
    assert from_v2.eval_task.task_names == ["overall", "is_more_polite"]
    judge = from_v2.load_all_judge_results()["traits"].results_data.sort("original_id")
    assert judge["is_more_polite"].to_list() == ["text_b", None, "text_a"]
    assert from_v2.data is not None
    assert {"model_a", "model_b"} <= set(from_v2.data.data.columns)


def test_add_preference_pairs_then_save_and_reload(tmp_path: Path, v1_file: Path) -> None:
    evaluator = MetaEvaluator(tmp_path / "project", load=False)
    evaluator.add_preference_pairs(v1_file)
    evaluator.save_state()
    reloaded = MetaEvaluator(tmp_path / "project", load=True)
    assert reloaded.data == evaluator.data
    assert reloaded.eval_task == evaluator.eval_task
    assert sorted(reloaded.load_all_human_results()) == ["crowd_preference", "expert_rater"]
    judge = reloaded.load_all_judge_results()["annotated_pairs"].results_data
    assert judge.height == 4


def test_swap_positions_adds_a_twin_of_each_pair_and_imports_the_pairs_votes(
    tmp_path: Path, v1_file: Path
) -> None:
    evaluator = MetaEvaluator(tmp_path / "project", load=False)
    summary = evaluator.add_preference_pairs(v1_file, swap_positions=True)
    assert summary["pairs"] == 4 and summary["swapped_rows"] == 4
    data = evaluator.data
    assert data is not None
    frame = data.data
    assert frame["comparison_id"].to_list() == [
        "c1", "c2", "c3", "c4", "c1_swapped", "c2_swapped", "c3_swapped", "c4_swapped",
    ]  # fmt: skip
    assert frame["swapped_of"].to_list() == [None] * 4 + ["c1", "c2", "c3", "c4"]
    assert frame["text_a"].tail(4).to_list() == frame["text_b"].head(4).to_list()
    crowd = evaluator.load_all_human_results()["crowd_preference"].results_data
    assert sorted(crowd["original_id"].to_list()) == ["c1", "c2", "c3", "c4"]  # the pairs' own
    traits = evaluator.load_all_judge_results()["annotated_pairs"].results_data
    assert sorted(traits["original_id"].to_list()) == ["c1", "c2", "c3", "c4"]
    evaluator.save_state()
    assert MetaEvaluator(tmp_path / "project", load=True).data == data


def test_swap_positions_swaps_the_model_columns_too(tmp_path: Path) -> None:
    v2 = write_json(tmp_path / "v2.json", v2_document())
    evaluator = MetaEvaluator(tmp_path / "v2", load=False)
    evaluator.add_preference_pairs(v2, swap_positions=True)
    assert evaluator.data is not None
    frame = evaluator.data.data
    half = frame.height // 2
    assert frame["model_a"].tail(half).to_list() == frame["model_b"].head(half).to_list()
    assert frame["model_b"].tail(half).to_list() == frame["model_a"].head(half).to_list()


def test_swap_positions_must_be_a_bool(tmp_path: Path, v1_file: Path) -> None:
    evaluator = MetaEvaluator(tmp_path / "project", load=False)
    with pytest.raises(DataError, match="swap_positions must be True or False; got 'yes'"):
        evaluator.add_preference_pairs(v1_file, swap_positions="yes")  # type: ignore[arg-type]
    assert evaluator.data is None


def test_add_preference_pairs_twice_needs_overwrite(tmp_path: Path, v1_file: Path) -> None:
    evaluator = MetaEvaluator(tmp_path / "project", load=False)
    evaluator.add_preference_pairs(v1_file)
    with pytest.raises(AlreadySetError) as info:
        evaluator.add_preference_pairs(v1_file)
    check(info, AlreadySetError, "overwrite=True")


def test_task_without_the_preference_task(tmp_path: Path, v1_file: Path) -> None:
    evaluator = MetaEvaluator(tmp_path / "project", load=False)
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"quality": ["good", "bad"]},
            prompt_columns=["prompt"],
            response_columns=["text_a", "text_b"],
        )
    )
    evaluator.save_state()
    before = {str(p): p.read_bytes() for p in (tmp_path / "project").rglob("*") if p.is_file()}
    with pytest.raises(TaskError) as info:
        evaluator.add_preference_pairs(v1_file)
    exc = check(info, TaskError, "pairs_v1.json", "preference", "is_more_concise")
    assert exc.field == "task_schemas"
    after = {str(p): p.read_bytes() for p in (tmp_path / "project").rglob("*") if p.is_file()}
    assert after == before  # no annotations or judge results were written


def test_task_with_the_preference_task_but_not_the_traits(tmp_path: Path, v1_file: Path) -> None:
    evaluator = MetaEvaluator(tmp_path / "project", load=False)
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"preference": LABELS, "is_more_concise": LABELS},
            prompt_columns=["prompt"],
            response_columns=["text_a", "text_b"],
        )
    )
    with pytest.raises(TaskError) as info:
        evaluator.add_preference_pairs(v1_file)
    check(info, TaskError, "gives_an_example")


def test_task_error_leaves_the_project_without_the_pairs(tmp_path: Path, v1_file: Path) -> None:
    evaluator = MetaEvaluator(tmp_path / "project", load=False)
    evaluator.add_eval_task(
        EvalTask(task_schemas={"quality": ["good", "bad"]}, response_columns=["text_a", "text_b"])
    )
    with pytest.raises(TaskError):
        evaluator.add_preference_pairs(v1_file)
    assert evaluator.data is None
