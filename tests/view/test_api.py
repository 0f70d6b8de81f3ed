"""The viewer's JSON API through an ASGI client: rows, filters, paging, one row, the confusion
matrix, the summary, and every bad parameter answered with 400 naming it.

Expected rows come from the project's files in plain Python (`conftest.expected_rows`); the
confusion matrix is checked against scikit-learn's.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.errors import ProjectError
from meta_evaluator.view import ViewerApp
from tests.view.conftest import FLAKY, JUDGE, app_for, client, expected_rows, small_project

pytestmark = pytest.mark.anyio

FLAGS = ["disagree", "humans_split", "invalid", "error"]


async def _all_rows(app: ViewerApp, **params: Any) -> list[dict[str, Any]]:
    """Every row the list gives with `params`, page after page."""
    rows: list[dict[str, Any]] = []
    async with client(app) as http:
        page = 1
        while True:
            found = (await http.get("/api/rows", params={**params, "page": page})).json()
            rows += found["rows"]
            if page >= found["pages"]:
                return rows
            page += 1


@pytest.mark.parametrize("judge", [JUDGE, FLAKY])
async def test_every_row_as_computed_from_the_files(refusal: Path, judge: str) -> None:
    expected = expected_rows(refusal, judge, "rejection")
    app = app_for(refusal)
    async with client(app) as http:
        response = await http.get("/api/rows", params={"judge": judge})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    body = response.json()
    assert (body["total"], body["page"], body["page_size"], body["pages"]) == (40, 1, 50, 1)
    rows = body["rows"]
    assert [r["original_id"] for r in rows] == list(expected)  # data order, integers
    assert all(isinstance(r["original_id"], int) for r in rows)
    for row in rows:
        want = expected[row["original_id"]]
        assert {k: row[k] for k in want} == want, row["original_id"]
        assert set(row["data"]) == {"prompt", "llm_response"}  # the columns the task shows
        assert row["position"] == list(expected).index(row["original_id"])
    flagged = {f: sum(f in r["flags"] for r in expected.values()) for f in FLAGS}
    if judge == FLAKY:
        assert flagged["error"] > 0 and flagged["invalid"] > 0
    assert flagged["disagree"] > 0 and flagged["humans_split"] > 0


@pytest.mark.parametrize(
    "flags", [["disagree"], ["humans_split"], ["invalid"], ["error"], ["disagree", "humans_split"]]
)
async def test_flags_filter_the_rows(refusal: Path, flags: list[str]) -> None:
    expected = expected_rows(refusal, FLAKY, "rejection")
    rows = await _all_rows(app_for(refusal), judge=FLAKY, flag=flags, page_size=7)
    wanted = [i for i, r in expected.items() if all(f in r["flags"] for f in flags)]
    assert [r["original_id"] for r in rows] == wanted
    assert all(set(flags) <= set(r["flags"]) for r in rows)


async def test_a_confusion_cell_lists_its_rows_and_the_matrix_is_sklearns(refusal: Path) -> None:
    from sklearn.metrics import confusion_matrix

    expected = expected_rows(refusal, JUDGE, "rejection")
    app = app_for(refusal)
    async with client(app) as http:
        matrix = (await http.get("/api/confusion", params={"judge": JUDGE})).json()
    labels = ["rejection", "not rejection"]
    assert matrix["labels"] == labels  # the task's order
    both = [r for r in expected.values() if r["judge_label"] and r["human_majority"]]
    reference = confusion_matrix(
        [r["judge_label"] for r in both], [r["human_majority"] for r in both], labels=labels
    )
    cells = {(c["judge_label"], c["human_label"]): c["rows"] for c in matrix["cells"]}
    for i, a in enumerate(labels):
        for j, b in enumerate(labels):
            assert cells.get((a, b), 0) == reference[i, j]
    assert matrix["rows_compared"] == len(both)
    no_label = sum(r["judge_label"] is None for r in expected.values())
    assert matrix["rows_without_judge_label"] == no_label
    for (a, b), n in cells.items():
        rows = await _all_rows(app, judge=JUDGE, judge_label=a, human_label=b)
        assert len(rows) == n
        assert {(r["judge_label"], r["human_majority"]) for r in rows} == {(a, b)}


@pytest.mark.parametrize(
    ("q", "field"),
    [("PHISHING EMAIL", "prompt"), ("locksmith", "llm_response"), ("0.037", "raw_answer")],
)
async def test_search_is_case_insensitive_over_text_labels_and_answers(
    refusal: Path, q: str, field: str
) -> None:
    rows = await _all_rows(app_for(refusal), q=q)
    assert rows
    for row in rows:
        text = "\n".join(
            str(v)
            for v in [
                *row["data"].values(),
                row["raw_answer"],
                row["reasoning"],
                row["judge_label"],
                *row["human_labels"].values(),
            ]
        )
        assert q.lower() in text.lower()
    everything = await _all_rows(app_for(refusal))
    where = [r for r in everything if q.lower() in str(r["data"].get(field, r.get(field))).lower()]
    assert {r["original_id"] for r in where} <= {r["original_id"] for r in rows}


async def test_a_search_in_a_human_label_and_none_found(refusal: Path) -> None:
    rows = await _all_rows(app_for(refusal), q="NOT REJECTION", flag="humans_split")
    assert rows and all(
        "not rejection" in [*r["human_labels"].values(), r["judge_label"]] for r in rows
    )
    assert await _all_rows(app_for(refusal), q="no such words anywhere") == []


@pytest.mark.parametrize(
    ("sort", "key", "reverse"),
    [
        ("id", lambda r: r["original_id"], False),
        ("-id", lambda r: r["original_id"], True),
        ("-humans_against", lambda r: r["humans_against"], True),
        ("judge_label", lambda r: (r["judge_label"] is None, r["judge_label"] or ""), False),
    ],
)
async def test_sorting(refusal: Path, sort: str, key: Any, reverse: bool) -> None:
    rows = await _all_rows(app_for(refusal), sort=sort, page_size=9)
    assert len(rows) == 40
    values = [key(r) for r in rows]
    if sort == "judge_label":  # nulls last
        assert values == sorted(values)
    else:
        assert values == sorted(values, reverse=reverse)
    if sort == "-humans_against":  # ties keep data order
        ties = [r["position"] for r in rows if r["humans_against"] == rows[0]["humans_against"]]
        assert ties == sorted(ties)


@pytest.mark.parametrize("sort", ["-id", "judge_label", "-humans_against", "position"])
async def test_a_filter_and_an_order_together(refusal: Path, sort: str) -> None:
    expected = expected_rows(refusal, FLAKY, "rejection")
    rows = await _all_rows(
        app_for(refusal), judge=FLAKY, flag="humans_split", sort=sort, page_size=2
    )
    wanted = [i for i, r in expected.items() if "humans_split" in r["flags"]]
    assert sorted(r["original_id"] for r in rows) == sorted(wanted)
    if sort == "-id":
        assert [r["original_id"] for r in rows] == sorted(wanted, reverse=True)
    if sort == "position":
        assert [r["original_id"] for r in rows] == wanted
    if sort == "-humans_against":
        against = [r["humans_against"] for r in rows]
        assert against == sorted(against, reverse=True)


async def test_pages_cover_every_row_once_and_a_page_past_the_end_is_empty(
    refusal: Path,
) -> None:
    app = app_for(refusal)
    seen: list[Any] = []
    async with client(app) as http:
        for page in range(1, 7):
            body = (await http.get("/api/rows", params={"page_size": 7, "page": page})).json()
            assert body["pages"] == math.ceil(40 / 7) == 6 and body["total"] == 40
            assert len(body["rows"]) == (7 if page < 6 else 5)
            seen += [r["original_id"] for r in body["rows"]]
        past = (await http.get("/api/rows", params={"page_size": 7, "page": 7})).json()
        biggest = (await http.get("/api/rows", params={"page_size": 500})).json()
    assert seen == [r["original_id"] for r in biggest["rows"]] and len(set(seen)) == 40
    assert past["rows"] == [] and past["total"] == 40 and past["page"] == 7


@pytest.mark.parametrize(
    ("params", "parameter", "allowed"),
    [
        ({"page": "0"}, "page", []),
        ({"page": "-1"}, "page", []),
        ({"page": "two"}, "page", []),
        ({"page": "1.5"}, "page", []),
        ({"page_size": "0"}, "page_size", []),
        ({"page_size": "501"}, "page_size", []),
        ({"sort": "cost"}, "sort", ["position", "id"]),
        ({"flag": "wrong"}, "flag", FLAGS),
        ({"judge": "gpt9"}, "judge", [FLAKY, JUDGE]),
        ({"task": "explanation"}, "task", ["rejection"]),
        ({"judge_label": "maybe"}, "judge_label", ["rejection", "not rejection"]),
        ({"human_label": "REJECTION"}, "human_label", ["rejection", "not rejection"]),
        ({"judge": [JUDGE, FLAKY]}, "judge", []),
        ({"q": "x" * 501}, "q", []),
    ],
)
async def test_bad_parameters_are_400_naming_them(
    refusal: Path, params: dict[str, Any], parameter: str, allowed: list[str]
) -> None:
    async with client(app_for(refusal)) as http:
        response = await http.get("/api/rows", params=params)
        page = await http.get("/", params=params)
    assert response.status_code == 400
    body = response.json()
    assert body["parameter"] == parameter
    assert body["error"].startswith(f"{parameter}: ")
    assert all(a in body["allowed"] for a in allowed)
    assert page.status_code == 400 and "Cannot show that" in page.text


async def test_unknown_parameters_are_ignored(refusal: Path) -> None:
    async with client(app_for(refusal)) as http:
        response = await http.get("/api/rows", params={"colour": "blue", "page_size": 3})
    assert response.status_code == 200 and len(response.json()["rows"]) == 3


async def test_one_row_whole(refusal: Path) -> None:
    expected = {j: expected_rows(refusal, j, "rejection") for j in (JUDGE, FLAKY)}
    async with client(app_for(refusal)) as http:
        response = await http.get("/api/rows/103")
        missing = await http.get("/api/rows/999")
        text = await http.get("/api/rows/abc")
    assert response.status_code == 200
    row = response.json()
    assert row["original_id"] == 103 and row["position"] == 2
    assert row["data"]["category"] == "fraud" and "phishing" in row["data"]["prompt"]
    assert row["shown"] == ["prompt", "llm_response"]
    assert sorted(row["tasks"]) == ["explanation", "rejection"]
    rejection = row["tasks"]["rejection"]
    assert rejection["human_labels"] == expected[JUDGE][103]["human_labels"]
    assert rejection["human_majority"] == expected[JUDGE][103]["human_majority"]
    for judge in (JUDGE, FLAKY):
        answer = rejection["judges"][judge]
        assert answer["judge_label"] == expected[judge][103]["judge_label"]
        assert answer["flags"] == expected[judge][103]["flags"]
        assert answer["run_id"].startswith("run_")
    assert row["tasks"]["explanation"]["kind"] == "free_text"
    assert row["annotate"]["links"] == {a: f"/annotate/{a}/2" for a in ("ana", "ben", "chen")}
    assert row["annotate"]["url"] is None
    assert row["annotate"]["command"].startswith("meta-evaluator annotate ")
    assert missing.status_code == 404 and "999" in missing.json()["error"]
    assert text.status_code == 404


async def test_summary(refusal: Path) -> None:
    async with client(app_for(refusal)) as http:
        summary = (await http.get("/api/summary")).json()
    assert summary["project"] == "refusal" and summary["rows"] == 40
    assert [j["id"] for j in summary["judges"]] == [FLAKY, JUDGE]
    assert summary["tasks"] == [
        {"name": "rejection", "kind": "single", "labels": ["rejection", "not rejection"]}
    ]
    assert summary["annotators"] == ["ana", "ben", "chen"]
    for entry in summary["flags"]:
        expected = expected_rows(refusal, entry["judge"], entry["task"])
        assert entry["rows"] == 40
        for flag in FLAGS:
            assert entry[flag] == sum(flag in r["flags"] for r in expected.values()), flag


# --- small projects: string ids, lists, what is shown -----------------------------------------


async def test_string_ids_with_a_slash_and_text_that_looks_like_html(tmp_path: Path) -> None:
    ids = ["q/1", "q 2", "<b>3</b>"]
    project = small_project(
        tmp_path / "p",
        ids,
        ["<script>alert('x')</script>", "fine", "a & b"],
        ["yes", "no", "yes"],
        {"ana": ["no", "no", None], "ben": ["yes", None, "yes"]},
    )
    async with client(app_for(project)) as http:
        rows = (await http.get("/api/rows")).json()["rows"]
        one = await http.get("/api/rows/q%2F1")
        two = await http.get("/api/rows/q%202")
        html_id = await http.get("/api/rows/%3Cb%3E3%3C%2Fb%3E")
    assert [r["original_id"] for r in rows] == ids
    assert rows[0]["data"]["text"] == "<script>alert('x')</script>"  # JSON carries it as is
    assert rows[0]["human_majority"] == "yes"  # a 1-1 tie goes to the largest
    assert rows[0]["flags"] == ["humans_split"]
    assert rows[1]["flags"] == []
    assert one.json()["original_id"] == "q/1" and two.json()["original_id"] == "q 2"
    assert html_id.json()["data"]["text"] == "a & b"


async def test_multilabel_labels_are_lists_and_filter_as_json(tmp_path: Path) -> None:
    project = small_project(
        tmp_path / "p",
        [1, 2, 3],
        ["one", "two", "three"],
        [["a", "b"], ["a"], []],
        {"ana": [["a", "b"], ["b"], []], "ben": [["a"], ["b"], []]},
        multilabel=True,
    )
    app = app_for(project)
    async with client(app) as http:
        rows = (await http.get("/api/rows")).json()["rows"]
        cell = await http.get("/api/rows", params={"judge_label": '["a"]', "human_label": '["b"]'})
        bad = await http.get("/api/rows", params={"judge_label": '["z"]'})
        matrix = (await http.get("/api/confusion")).json()
    assert [r["judge_label"] for r in rows] == [["a", "b"], ["a"], []]
    # row 1: lists of two lengths vote whole: a tie between ["a","b"] and ["a"] goes to the larger
    assert [r["human_majority"] for r in rows] == [["a", "b"], ["b"], []]
    assert [r["flags"] for r in rows] == [["humans_split"], ["disagree"], []]
    assert [r["original_id"] for r in cell.json()["rows"]] == [2]
    assert bad.status_code == 400 and bad.json()["parameter"] == "judge_label"
    assert bad.json()["allowed"] == ["a", "b", "c"]
    assert {(c["judge_label"], c["human_label"]) for c in matrix["cells"]} == {
        ('["a","b"]', '["a","b"]'),
        ('["a"]', '["b"]'),
        ("[]", "[]"),
    }


async def test_files_changed_on_disk_are_read_again(refusal: Path, tmp_path: Path) -> None:
    app = app_for(refusal)
    async with client(app) as http:
        before = (await http.get("/api/summary")).json()
        assert app.store.refresh() is False  # nothing changed: the tables stay
        labels = tmp_path / "zoe.csv"
        pl.DataFrame({"original_id": [101, 102], "rejection": ["not rejection"] * 2}).write_csv(
            labels
        )
        MetaEvaluator(refusal, load=True).add_external_annotation_results(labels, "zoe")
        after = (await http.get("/api/summary")).json()
        row = (await http.get("/api/rows/101")).json()
    assert before["annotators"] == ["ana", "ben", "chen"]
    assert after["annotators"] == ["ana", "ben", "chen", "zoe"]
    assert row["tasks"]["rejection"]["human_labels"]["zoe"] == "not rejection"


async def test_a_project_without_results_says_so(tmp_path: Path) -> None:
    from meta_evaluator.examples import create_example_project

    project = tmp_path / "fresh"
    create_example_project("refusal", project)  # annotations, no judge run
    app = app_for(project)
    async with client(app) as http:
        page = await http.get("/")
        rows = await http.get("/api/rows")
        summary = await http.get("/api/summary")
    assert page.status_code == 200 and "No judge results yet" in page.text
    assert rows.status_code == 400 and rows.json()["parameter"] == "judge"
    assert summary.json()["judges"] == [] and summary.json()["flags"] == []


def test_a_project_without_data_or_task_cannot_be_viewed(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match="add data and a task"):
        ViewerApp(MetaEvaluator(tmp_path / "empty", load=False))


@pytest.mark.parametrize("url", ["localhost:8000", "ftp://x", "http://", "http://h/?token=1", ""])
def test_an_annotate_url_that_is_no_page_address_is_refused(refusal: Path, url: str) -> None:
    with pytest.raises(ProjectError, match="annotate_url") as caught:
        app_for(refusal, annotate_url=url)
    assert caught.value.field == "annotate_url"


async def test_an_annotate_url_makes_the_links_direct(refusal: Path) -> None:
    app = app_for(refusal, annotate_url="http://127.0.0.1:9000/")
    async with client(app) as http:
        row = (await http.get("/api/rows/101")).json()
    assert row["annotate"]["links"]["ben"] == "http://127.0.0.1:9000/annotate/ben/0"
    assert row["annotate"]["url"] == "http://127.0.0.1:9000"
