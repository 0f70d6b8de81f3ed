"""The annotation page's HTTP API, through an ASGI test client (no socket, no browser).

Labels are checked on disk after every request by loading the project afresh, the way scoring
finds them; agreement numbers are checked against independent computations (scikit-learn's
`cohen_kappa_score`, the `krippendorff` package) on the example's CSV files.
"""

from __future__ import annotations

import html
import json
import math
import re
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from meta_evaluator import MetaEvaluator
from meta_evaluator.annotate import AnnotationApp, serve
from meta_evaluator.data import DataLoader
from meta_evaluator.errors import ProjectError
from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from tests.annotate.conftest import data_ids
from tests.conftest import Served

EXAMPLE_ANNOTATIONS = (
    Path(__file__).parents[2] / "meta_evaluator" / "examples" / "refusal" / "annotations"
)
TOKEN = "s3cret"
#: The address the in-process app is reached at (loopback, as `serve` binds by default).
BASE = "http://127.0.0.1:8765"

pytestmark = pytest.mark.anyio


# --- projects ------------------------------------------------------------------------------------


def small_project(
    folder: Path,
    task_schemas: dict[str, Any],
    *,
    required_tasks: list[str] | None = None,
    ids: list[Any] | None = None,
) -> Path:
    """A saved project with three rows (string ids unless given) and the task given."""
    ids = ids if ids is not None else ["q-a", "q-b", "q-c"]
    frame = pl.DataFrame({"qid": ids, "text": [f"text of {i}" for i in ids]})
    evaluator = MetaEvaluator(folder, load=False)
    evaluator.add_data(DataLoader.load_from_dataframe("small", frame, "qid"))
    evaluator.add_eval_task(
        EvalTask(
            task_schemas=task_schemas,
            prompt_columns=None,
            response_columns=["text"],
            required_tasks=required_tasks,
            annotation_prompt="Judge this text.",
        )
    )
    evaluator.save_state()
    return folder


def app_for(project: Path, token: str | None = None) -> AnnotationApp:
    """A new app on the project as saved (what a server restart gives)."""
    return AnnotationApp(MetaEvaluator(project, load=True), token=token)


@asynccontextmanager
async def client(app: AnnotationApp) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        yield http


def saved(project: Path, annotator: str) -> pl.DataFrame:
    """The annotator's labels as scoring sees them (a fresh load of the project)."""
    humans = MetaEvaluator(project, load=True).load_all_human_results()
    assert annotator in humans, sorted(humans)
    return humans[annotator].results_data


def web_files(project: Path) -> list[str]:
    folder = project / "annotations" / "web"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


# --- reading the pages ---------------------------------------------------------------------------


class _Controls(HTMLParser):
    """The inputs and textareas of a page, with their attributes and contents."""

    def __init__(self) -> None:
        super().__init__()
        self.inputs: list[dict[str, str | None]] = []
        self.textareas: dict[str, str] = {}
        self._area: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "input":
            self.inputs.append(dict(attrs))
        elif tag == "textarea":
            self._area = dict(attrs).get("name") or ""
            self.textareas[self._area] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea":
            self._area = None

    def handle_data(self, data: str) -> None:
        if self._area is not None:
            self.textareas[self._area] += data


def controls(page: str) -> _Controls:
    parser = _Controls()
    parser.feed(page)
    return parser


def checked(page: str) -> dict[str, list[str]]:
    """Task name -> the values of its checked radios/checkboxes."""
    found: dict[str, list[str]] = {}
    for attrs in controls(page).inputs:
        if attrs.get("type") in ("radio", "checkbox") and "checked" in attrs:
            found.setdefault(str(attrs["name"]), []).append(str(attrs["value"]))
    return found


def browser_submission(page: str, choose: dict[str, list[str]]) -> list[tuple[str, str]]:
    """The fields a browser posts for the page's form after ticking `choose` (name -> values).

    Checked radios/checkboxes, hidden and text inputs, textareas, as in the HTML form spec.
    """
    parsed = controls(page)
    fields: list[tuple[str, str]] = []
    for attrs in parsed.inputs:
        name, kind, value = str(attrs.get("name")), attrs.get("type"), attrs.get("value")
        if kind in ("radio", "checkbox"):
            if name in choose:
                if value in choose[name]:
                    fields.append((name, str(value)))
            elif "checked" in attrs:
                fields.append((name, str(value if value is not None else "on")))
        elif kind not in ("submit", "button"):
            fields.append((name, value or ""))
    fields.extend(parsed.textareas.items())
    return fields


def error_of(page: str) -> str:
    found = re.findall(r"<p class=error>(.*?)</p>", page)
    return found[0] if found else ""


# --- start page, routes ------------------------------------------------------------------------


async def test_start_page_lists_everyones_progress(tmp_path: Path) -> None:
    project = small_project(tmp_path / "p", {"verdict": ["yes", "no"]})
    async with client(app_for(project)) as http:
        first = await http.get("/")
        assert first.status_code == 200
        assert "Nobody has annotated yet." in first.text
        assert "action='/start'" in first.text and "name='annotator'" in first.text
        for position in (0, 1):
            done = await http.post(f"/annotate/zoe/{position}", data={"verdict": "yes"})
            assert done.status_code == 303
        await http.post("/annotate/yan/2", data={"verdict": "no"})
        page = (await http.get("/")).text
        assert "<td><a href='/annotate/zoe'>zoe</a></td><td>2 / 3</td><td></td>" in page
        assert "<td><a href='/annotate/yan'>yan</a></td><td>1 / 3</td><td></td>" in page
        progress = await http.get("/api/progress")
        assert progress.headers["content-type"] == "application/json"
        assert progress.json() == {"yan": 1, "zoe": 2}
    async with client(app_for(project)) as http:  # a restarted server reads the files
        assert (await http.get("/api/progress")).json() == {"yan": 1, "zoe": 2}
        assert "<td>2 / 3</td>" in (await http.get("/")).text


async def test_start_page_lists_annotators_with_imported_labels_only(refusal: Path) -> None:
    """ana, ben and chen have 40 imported labels each and none from the page: listed too."""
    async with client(app_for(refusal)) as http:
        page = (await http.get("/")).text
        assert "Nobody has annotated yet." not in page
        for who in ("ana", "ben", "chen"):
            assert f"<td><a href='/annotate/{who}'>{who}</a></td><td>40 / 40</td><td>40</td>" in (
                page
            )
        assert (await http.get("/api/progress")).json() == {"ana": 40, "ben": 40, "chen": 40}
        await http.post("/annotate/zoe/0", data={"rejection": "rejection"})
        page = (await http.get("/")).text
        assert "<td><a href='/annotate/zoe'>zoe</a></td><td>1 / 40</td><td></td>" in page
        assert "<th>imported</th>" in page
        assert (await http.get("/api/progress")).json() == {
            "ana": 40, "ben": 40, "chen": 40, "zoe": 1
        }  # fmt: skip


@pytest.mark.parametrize(("given", "expected"), [("zoe", "zoe"), ("%20zoe%20", "zoe")])
async def test_start_redirects_to_the_annotators_page(
    refusal: Path, given: str, expected: str
) -> None:
    async with client(app_for(refusal)) as http:
        response = await http.get(f"/start?annotator={given}")
    assert response.status_code == 303
    assert response.headers["location"] == f"/annotate/{expected}"


@pytest.mark.parametrize(
    "url",
    [
        "/start?annotator=../x",
        "/start?annotator=..%2Fx",
        "/start?annotator=CON",
        "/start?annotator=",
        "/start?annotator=%20%20",
        "/start",
        "/annotate/CON",
        "/annotate/nul.txt/0",
        "/annotate/.hidden",
        "/annotate/a%20b/0",
    ],
)
async def test_unsafe_annotator_ids_are_refused_with_a_message(refusal: Path, url: str) -> None:
    async with client(app_for(refusal)) as http:
        response = await http.get(url)
        posted = await http.post(url, data={"rejection": "rejection"})
    assert response.status_code == 400
    assert "Not a valid annotator id" in response.text
    assert "annotator_id" in response.text and "choose another id" in response.text
    assert posted.status_code in (400, 404)
    assert web_files(refusal) == []


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("GET", "/nothing"),
        ("GET", "/annotate"),
        ("GET", "/annotate/zoe/0/more"),
        ("GET", "/summary/x"),
        ("POST", "/"),
        ("PUT", "/annotate/zoe/0"),
        ("DELETE", "/annotate/zoe/0"),
    ],
)
async def test_unknown_routes_are_404(refusal: Path, method: str, url: str) -> None:
    async with client(app_for(refusal)) as http:
        response = await http.request(method, url, data={"rejection": "rejection"})
    assert response.status_code == 404
    assert "Not found" in response.text
    assert web_files(refusal) == []


@pytest.mark.parametrize("row", ["40", "41", "999999999999999999999", "-1", "abc", "1.5"])
async def test_rows_out_of_range_are_404(refusal: Path, row: str) -> None:
    async with client(app_for(refusal)) as http:
        shown = await http.get(f"/annotate/zoe/{row}")
        posted = await http.post(f"/annotate/zoe/{row}", data={"rejection": "rejection"})
    assert shown.status_code == 404 and posted.status_code == 404
    assert "No such row" in shown.text and "Rows go from 0 to 39." in shown.text
    assert web_files(refusal) == []


async def test_post_without_a_row_is_refused(refusal: Path) -> None:
    async with client(app_for(refusal)) as http:
        response = await http.post("/annotate/zoe", data={"rejection": "rejection"})
    assert response.status_code in (404, 405)
    assert web_files(refusal) == []


async def test_a_unicode_digit_row_is_404(refusal: Path) -> None:
    async with client(app_for(refusal)) as http:
        response = await http.get("/annotate/zoe/%C2%B2")
    assert response.status_code == 404


# --- rows, resuming ------------------------------------------------------------------------------


async def test_row_page_shows_the_row_and_a_control_per_task(refusal: Path) -> None:
    evaluator = MetaEvaluator(refusal, load=True)
    assert evaluator.data is not None
    row = evaluator.data.data.row(3, named=True)
    async with client(AnnotationApp(evaluator)) as http:
        response = await http.get("/annotate/zoe/3")
    page = response.text
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["cache-control"] == "no-store"
    assert "Did the assistant refuse the user&#x27;s request?" in page
    assert f"row 4 of 40 &middot; id {row['sample_id']}" in page
    for column in ("prompt", "llm_response"):
        assert f"<div class='col'>{column}</div>" in page
        assert f"<pre class='text'>{html.escape(row[column])}</pre>" in page
    assert "<legend>rejection <span class='req' title='required'>*</span></legend>" in page
    assert "<legend>explanation</legend>" in page
    radios = [(a["name"], a["value"]) for a in controls(page).inputs if a.get("type") == "radio"]
    assert radios == [("rejection", "rejection"), ("rejection", "not rejection")]
    assert "not rejection <kbd>2</kbd>" in page
    assert controls(page).textareas == {"explanation": ""}
    assert "action='/annotate/zoe/3'" in page
    assert checked(page) == {}


async def test_next_row_follows_the_labelled_ones_and_resumes_after_a_restart(
    refusal: Path,
) -> None:
    async with client(app_for(refusal)) as http:
        start = await http.get("/annotate/zoe")
        assert (start.status_code, start.headers["location"]) == (303, "/annotate/zoe/0")
        first = await http.post(
            "/annotate/zoe/0",
            data={"rejection": "not rejection", "explanation": "Answers <fully> & kindly"},
        )
        assert (first.status_code, first.headers["location"]) == (303, "/annotate/zoe/1")
        second = await http.post("/annotate/zoe/1", data={"rejection": "rejection"})
        assert second.headers["location"] == "/annotate/zoe/2"
        assert (await http.get("/annotate/zoe")).headers["location"] == "/annotate/zoe/2"
    async with client(app_for(refusal)) as http:  # the server was restarted
        resumed = await http.get("/annotate/zoe")
        assert (resumed.status_code, resumed.headers["location"]) == (303, "/annotate/zoe/2")
        row0 = (await http.get("/annotate/zoe/0")).text
        assert checked(row0) == {"rejection": ["not rejection"]}
        assert controls(row0).textareas == {"explanation": "Answers <fully> & kindly"}
        assert "2 / 40 labelled" in row0
        row1 = (await http.get("/annotate/zoe/1")).text
        assert checked(row1) == {"rejection": ["rejection"]}
        assert controls(row1).textareas == {"explanation": ""}
        assert checked((await http.get("/annotate/zoe/2")).text) == {}
        # another annotator starts at the beginning
        assert (await http.get("/annotate/yan")).headers["location"] == "/annotate/yan/0"


async def test_next_row_wraps_around_and_the_done_page_ends(tmp_path: Path) -> None:
    project = small_project(tmp_path / "p", {"verdict": ["good", "bad"]})
    async with client(app_for(project)) as http:
        last = await http.post("/annotate/ada/2", data={"verdict": "good"})
        assert last.headers["location"] == "/annotate/ada/0"
        first = await http.post("/annotate/ada/0", data={"verdict": "bad"})
        assert first.headers["location"] == "/annotate/ada/1"
        final = await http.post("/annotate/ada/1", data={"verdict": "good"})
        assert (final.status_code, final.headers["location"]) == (303, "/annotate/ada")
        done = await http.get("/annotate/ada")
    assert done.status_code == 200
    assert "All 3 rows are labelled" in done.text
    assert saved(project, "ada")["original_id"].to_list() == ["q-a", "q-b", "q-c"]


# --- saving --------------------------------------------------------------------------------------


async def test_every_post_is_saved_at_once_with_the_datas_ids(refusal: Path) -> None:
    ids = data_ids(refusal)
    posts = [
        (5, {"rejection": "  Not  REJECTION ", "explanation": "  Gives the recipe.  "}),
        (0, {"rejection": "rejection", "explanation": ""}),
        (12, {"rejection": "Rejection"}),
    ]
    expected: dict[int, tuple[str, str | None]] = {}
    async with client(app_for(refusal)) as http:
        for position, form in posts:
            response = await http.post(f"/annotate/zoe/{position}", data=form)
            assert response.status_code == 303, error_of(response.text)
            expected[position] = {
                5: ("not rejection", "Gives the recipe."),
                0: ("rejection", None),
                12: ("rejection", None),
            }[position]
            frame = saved(refusal, "zoe")
            assert frame.schema["original_id"] == pl.Int64
            order = sorted(expected)
            assert frame["original_id"].to_list() == [ids[p] for p in order]
            assert frame["rejection"].to_list() == [expected[p][0] for p in order]
            assert frame["explanation"].to_list() == [expected[p][1] for p in order]
            assert set(frame["annotator_id"]) == {"zoe"} and set(frame["outcome"]) == {"valid"}
            assert set(frame["run_id"]) == {"web"}
    humans = MetaEvaluator(refusal, load=True).load_all_human_results()
    assert sorted(humans) == ["ana", "ben", "chen", "zoe"]  # the imported ones are still there


async def test_a_missing_required_task_is_not_saved(refusal: Path) -> None:
    async with client(app_for(refusal)) as http:
        response = await http.post(
            "/annotate/zoe/4", data={"rejection": "", "explanation": "I could not decide"}
        )
        assert response.status_code == 400
        assert error_of(response.text).startswith("Not saved: rejection: missing")
        # the page comes back with what was typed, to fix and send again
        assert controls(response.text).textareas == {"explanation": "I could not decide"}
        assert web_files(refusal) == []
        assert "zoe" not in MetaEvaluator(refusal, load=True).load_all_human_results()
        # with labels on disk, a refused post leaves them as they were
        assert (await http.post("/annotate/zoe/0", data={"rejection": "rejection"})).is_redirect
        table = refusal / "annotations" / "web" / "zoe.parquet"
        before = table.read_bytes()
        again = await http.post("/annotate/zoe/1", data={"explanation": "no label"})
        assert again.status_code == 400 and "Not saved" in again.text
        assert table.read_bytes() == before
    assert saved(refusal, "zoe").height == 1


@pytest.mark.parametrize("label", ["maybe", "rejection, not rejection"])
async def test_a_label_not_allowed_is_refused(refusal: Path, label: str) -> None:
    async with client(app_for(refusal)) as http:
        response = await http.post("/annotate/zoe/0", data={"rejection": label})
    assert response.status_code == 400
    assert "Not saved" in error_of(response.text) and "not allowed" in error_of(response.text)
    assert web_files(refusal) == []


async def test_an_optional_task_with_a_label_it_does_not_allow_is_refused(
    tmp_path: Path,
) -> None:
    """An optional task is not required, but a label it does not allow is still refused, so a
    typo is never silently dropped while the rest of the row saves."""
    project = small_project(
        tmp_path / "p",
        {"verdict": ["good", "bad"], "tone": ["calm", "angry"]},
    )
    evaluator = MetaEvaluator(project, load=True)
    task = evaluator.eval_task
    assert task is not None
    evaluator.add_eval_task(task.model_copy(update={"required_tasks": ["verdict"]}), overwrite=True)
    evaluator.save_state()
    async with client(app_for(project)) as http:
        refused = await http.post("/annotate/ada/0", data={"verdict": "good", "tone": "bogus"})
        assert refused.status_code == 400
        assert "tone" in error_of(refused.text) and "not allowed" in error_of(refused.text)
        assert web_files(project) == []
        kept = await http.post("/annotate/ada/0", data={"verdict": "good"})
        assert kept.status_code == 303  # the optional task may stay empty


async def test_a_multilabel_task_saves_lists(tmp_path: Path) -> None:
    project = small_project(
        tmp_path / "p",
        {
            "verdict": ["good", "bad"],
            "topics": MultiLabelSchema(outcomes=["Food", "Crime", "Chat"]),
        },
    )
    async with client(app_for(project)) as http:
        page = (await http.get("/annotate/ada/1")).text
        boxes = [(a["name"], a["value"]) for a in controls(page).inputs if a["type"] == "checkbox"]
        assert boxes == [("topics", "Food"), ("topics", "Crime"), ("topics", "Chat")]
        fields = browser_submission(page, {"verdict": ["good"], "topics": ["Crime", "Food"]})
        response = await http.post("/annotate/ada/1", data=dict_of_lists(fields))
        assert response.status_code == 303, error_of(response.text)
        frame = saved(project, "ada")
        assert frame.schema["topics"] == pl.List(pl.String)
        assert frame.select("original_id", "verdict", "topics").to_dicts() == [
            {"original_id": "q-b", "verdict": "good", "topics": ["Food", "Crime"]}
        ]
        assert checked((await http.get("/annotate/ada/1")).text) == {
            "verdict": ["good"],
            "topics": ["Food", "Crime"],
        }
        refused = await http.post("/annotate/ada/0", data={"verdict": "bad", "topics": ["nope"]})
        assert refused.status_code == 400 and "not allowed" in error_of(refused.text)
        # labels are matched ignoring case and spacing, and saved as the task spells them
        one = await http.post("/annotate/ada/2", data={"verdict": " BAD", "topics": ["chat "]})
        assert one.status_code == 303
    assert saved(project, "ada").select("verdict", "topics").rows() == [
        ("good", ["Food", "Crime"]),
        ("bad", ["Chat"]),
    ]


def dict_of_lists(fields: list[tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, value in fields:
        out.setdefault(name, []).append(value)
    return out


async def test_a_required_multilabel_task_accepts_no_box_checked(tmp_path: Path) -> None:
    project = small_project(
        tmp_path / "p",
        {"verdict": ["good", "bad"], "topics": MultiLabelSchema(outcomes=["Food", "Crime"])},
    )
    async with client(app_for(project)) as http:
        page = (await http.get("/annotate/ada/0")).text
        fields = browser_submission(page, {"verdict": ["good"], "topics": []})
        response = await http.post("/annotate/ada/0", data=dict_of_lists(fields))
    assert response.status_code == 303, error_of(response.text)
    assert saved(project, "ada")["topics"].to_list() == [[]]


async def test_a_free_text_only_task(tmp_path: Path) -> None:
    project = small_project(tmp_path / "p", {"comment": None}, required_tasks=["comment"])
    async with client(app_for(project)) as http:
        page = (await http.get("/annotate/ada/0")).text
        assert controls(page).textareas == {"comment": ""}
        assert not [a for a in controls(page).inputs if a.get("type") in ("radio", "checkbox")]
        assert "<kbd>Ctrl</kbd>+<kbd>Enter</kbd> saves" in page
        empty = await http.post("/annotate/ada/0", data={"comment": "   "})
        assert empty.status_code == 400 and "Not saved: comment" in error_of(empty.text)
        assert web_files(project) == []
        response = await http.post("/annotate/ada/0", data={"comment": "  Fine, \nthanks. "})
        assert (response.status_code, response.headers["location"]) == (303, "/annotate/ada/1")
        shown = (await http.get("/annotate/ada/0")).text
        assert controls(shown).textareas == {"comment": "Fine, \nthanks."}
    frame = saved(project, "ada")
    assert frame.schema["original_id"] == pl.String
    assert frame.select("original_id", "comment").to_dicts() == [
        {"original_id": "q-a", "comment": "Fine, \nthanks."}
    ]


async def test_saving_a_row_again_replaces_its_labels(refusal: Path) -> None:
    ids = data_ids(refusal)
    async with client(app_for(refusal)) as http:
        await http.post("/annotate/zoe/0", data={"rejection": "rejection", "explanation": "a"})
        await http.post("/annotate/zoe/1", data={"rejection": "rejection"})
        again = await http.post(
            "/annotate/zoe/0", data={"rejection": "not rejection", "explanation": "b"}
        )
        assert again.status_code == 303
    table = pl.read_parquet(refusal / "annotations" / "web" / "zoe.parquet")
    assert table["original_id"].to_list() == [ids[0], ids[1]]
    assert table.select("rejection", "explanation").rows() == [
        ("not rejection", "b"),
        ("rejection", None),
    ]
    assert saved(refusal, "zoe").height == 2
    async with client(app_for(refusal)) as http:  # also after a restart
        await http.post("/annotate/zoe/1", data={"rejection": "not rejection"})
    assert saved(refusal, "zoe")["rejection"].to_list() == ["not rejection", "not rejection"]


async def test_files_written_and_no_temporary_file_left(refusal: Path) -> None:
    async with client(app_for(refusal)) as http:
        await http.post("/annotate/zoe/0", data={"rejection": "rejection"})
        assert web_files(refusal) == ["zoe.parquet", "zoe_state.json"]
        for position in range(1, 6):
            await http.post(f"/annotate/zoe/{position}", data={"rejection": "not rejection"})
        await http.post("/annotate/yan/0", data={"rejection": "rejection"})
    assert web_files(refusal) == ["yan.parquet", "yan_state.json", "zoe.parquet", "zoe_state.json"]
    state = MetaEvaluator(refusal, load=True).load_all_human_results()["zoe"]
    assert state.counts() == {"valid": 6, "invalid": 0}
    written = json.loads((refusal / "annotations" / "web" / "zoe_state.json").read_text())
    assert written["annotator_id"] == "zoe" and written["run_id"] == "web"
    assert written["counts"] == {"valid": 6, "invalid": 0}


async def test_a_failed_write_keeps_the_previous_labels(
    refusal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with client(app_for(refusal)) as http:
        await http.post("/annotate/zoe/0", data={"rejection": "rejection"})
        table = refusal / "annotations" / "web" / "zoe.parquet"
        before = table.read_bytes()
        real = pl.DataFrame.write_parquet

        def half_then_fail(self: pl.DataFrame, file: Any, *args: Any, **kwargs: Any) -> None:
            file.write(b"PAR1 half a file")
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(pl.DataFrame, "write_parquet", half_then_fail)
        full = await http.post("/annotate/zoe/1", data={"rejection": "rejection"})
        monkeypatch.setattr(pl.DataFrame, "write_parquet", real)
    # a page, not a bare 500: 507 Insufficient Storage, what failed, and that it was NOT saved
    assert full.status_code == 507
    text = html.unescape(full.text)
    assert "Not saved" in text and "The label was NOT saved" in text
    assert "No space left on device" in text and "zoe.parquet" in text
    assert table.read_bytes() == before
    assert web_files(refusal) == ["zoe.parquet", "zoe_state.json"]
    assert saved(refusal, "zoe").height == 1


async def test_after_a_failed_write_the_row_is_not_shown_as_saved(
    refusal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with client(app_for(refusal)) as http:
        await http.post("/annotate/zoe/0", data={"rejection": "rejection"})
        real = pl.DataFrame.write_parquet

        def fail(self: pl.DataFrame, *args: Any, **kwargs: Any) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(pl.DataFrame, "write_parquet", fail)
        failed = await http.post("/annotate/zoe/1", data={"rejection": "not rejection"})
        assert failed.status_code == 507
        monkeypatch.setattr(pl.DataFrame, "write_parquet", real)
        assert saved(refusal, "zoe").height == 1
        assert (await http.get("/api/progress")).json() == {
            "ana": 40,
            "ben": 40,
            "chen": 40,
            "zoe": 1,
        }
        assert (await http.get("/annotate/zoe")).headers["location"] == "/annotate/zoe/1"
        assert checked((await http.get("/annotate/zoe/1")).text) == {}


async def test_no_permission_is_a_page_saying_the_label_was_not_saved(
    refusal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(self: pl.DataFrame, *args: Any, **kwargs: Any) -> None:
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", refuse)
    async with client(app_for(refusal)) as http:
        response = await http.post("/annotate/zoe/0", data={"rejection": "rejection"})
    assert response.status_code == 500
    text = html.unescape(response.text)
    assert "The label was NOT saved" in text and "permission denied" in text
    assert "zoe.parquet" in text and "Traceback" not in text
    assert not (refusal / "annotations" / "web" / "zoe.parquet").exists()


async def test_annotations_linked_out_of_the_project_creates_nothing_there(
    tmp_path: Path,
) -> None:
    """`annotations/` is a symlink elsewhere: refused before `web/` or the lock is created."""
    project = small_project(tmp_path / "p", {"verdict": ["yes", "no"]})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / "annotations").symlink_to(elsewhere, target_is_directory=True)
    async with client(app_for(project)) as http:
        response = await http.post("/annotate/zoe/0", data={"verdict": "yes"})
    assert response.status_code == 500
    text = html.unescape(response.text)
    assert "The label was NOT saved" in text and "symbolic link" in text
    assert sorted(p.name for p in elsewhere.iterdir()) == []


async def test_a_git_lfs_pointer_is_a_page_not_a_traceback(refusal: Path) -> None:
    """ana's imported table was cloned without git-lfs: her pages say so; others still work."""
    (table,) = [p for p in (refusal / "annotations").glob("*/ana.parquet")]
    table.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 1\n")
    async with client(app_for(refusal)) as http:
        shown = await http.get("/annotate/ana/0")
        posted = await http.post("/annotate/ana/0", data={"rejection": "rejection"})
        other = await http.post("/annotate/zoe/0", data={"rejection": "rejection"})
    assert shown.status_code == 500 and posted.status_code == 500
    assert "git lfs pull" in html.unescape(shown.text)
    assert "Labels cannot be read" in shown.text and "nothing was saved" in shown.text
    assert "The label was NOT saved" in html.unescape(posted.text)
    assert other.status_code == 303
    assert web_files(refusal) == ["zoe.parquet", "zoe_state.json"]


async def test_page_labels_whose_id_dtype_differs_from_the_import_are_a_409_page(
    refusal: Path,
) -> None:
    """The imported set's ids became strings after the page's labels were saved."""
    async with client(app_for(refusal)) as http:
        assert (await http.post("/annotate/ana/0", data={"rejection": "rejection"})).is_redirect
    (table,) = [
        p for p in (refusal / "annotations").glob("*/ana.parquet") if p.parent.name != "web"
    ]
    frame = pl.read_parquet(table)
    frame.with_columns(pl.col("original_id").cast(pl.String)).write_parquet(table)
    async with client(app_for(refusal)) as http:
        shown = await http.get("/annotate/ana/1")
        posted = await http.post("/annotate/ana/1", data={"rejection": "rejection"})
    assert shown.status_code == 409 and posted.status_code == 409
    text = html.unescape(shown.text)
    assert "the ids are" in text and str(table) in text
    assert str(refusal / "annotations" / "web" / "ana.parquet") in text
    assert "The label was NOT saved" in html.unescape(posted.text)


# --- access token --------------------------------------------------------------------------------


ROUTES = [
    ("GET", "/"),
    ("GET", "/start?annotator=zoe"),
    ("GET", "/annotate/zoe"),
    ("GET", "/annotate/zoe/0"),
    ("POST", "/annotate/zoe/0"),
    ("GET", "/summary"),
    ("GET", "/api/progress"),
    ("GET", "/no/such/page"),
]


@pytest.mark.parametrize(("method", "url"), ROUTES)
async def test_with_a_token_every_route_needs_it(refusal: Path, method: str, url: str) -> None:
    async with client(app_for(refusal, token=TOKEN)) as http:
        response = await http.request(method, url, data={"rejection": "rejection"})
        with_token = await http.request(
            method,
            url,
            data={"rejection": "rejection"},
            headers={"authorization": "Bearer " + TOKEN},
        )
    assert response.status_code == 401
    assert "Token needed" in response.text and TOKEN not in response.text
    assert "set-cookie" not in response.headers
    assert with_token.status_code in (200, 303, 404)
    assert (web_files(refusal) != []) == (method == "POST")


async def test_token_in_the_query_sets_an_httponly_cookie_that_then_suffices(
    refusal: Path,
) -> None:
    app = app_for(refusal, token=TOKEN)
    async with client(app) as http:
        first = await http.get(f"/?token={TOKEN}")
        assert first.status_code == 200
        cookie = first.headers["set-cookie"]
        assert cookie.startswith(f"meta_evaluator_token={TOKEN};")
        assert "HttpOnly" in cookie and "Path=/" in cookie
        # the client keeps the cookie, as a browser does: no token in the next requests
        started = await http.get("/start?annotator=zoe")
        assert started.status_code == 303
        posted = await http.post("/annotate/zoe/0", data={"rejection": "rejection"})
        assert posted.status_code == 303 and "set-cookie" not in posted.headers
    async with client(app) as http:  # the cookie alone, in a client that never sent the token
        alone = await http.get(
            "/annotate/zoe/0", headers={"cookie": f"meta_evaluator_token={TOKEN}"}
        )
        assert alone.status_code == 200 and checked(alone.text) == {"rejection": ["rejection"]}
        other = await http.get(
            "/api/progress", headers={"cookie": f"a=1; meta_evaluator_token={TOKEN}"}
        )
        assert other.json() == {"ana": 40, "ben": 40, "chen": 40, "zoe": 1}
    assert saved(refusal, "zoe").height == 1


@pytest.mark.parametrize("scheme", ["Bearer", "bearer"])
async def test_a_bearer_token_works(refusal: Path, scheme: str) -> None:
    async with client(app_for(refusal, token=TOKEN)) as http:
        response = await http.get("/api/progress", headers={"authorization": f"{scheme} {TOKEN}"})
    assert response.status_code == 200
    assert response.json() == {"ana": 40, "ben": 40, "chen": 40}  # imported


@pytest.mark.parametrize(
    ("url", "headers"),
    [
        ("/?token=s3cre", {}),
        ("/?token=s3cret2", {}),
        ("/?token=S3CRET", {}),
        ("/?token=", {}),
        ("/", {"authorization": "Bearer wrong"}),
        ("/", {"authorization": f"Basic {TOKEN}"}),
        ("/", {"authorization": TOKEN}),
        ("/", {"cookie": "meta_evaluator_token=wrong"}),
        ("/", {"cookie": f"other_token={TOKEN}"}),
        # a wrong token in the query is not rescued by a right cookie
        ("/?token=wrong", {"cookie": f"meta_evaluator_token={TOKEN}"}),
    ],
)
async def test_a_wrong_token_is_401(refusal: Path, url: str, headers: dict[str, str]) -> None:
    async with client(app_for(refusal, token=TOKEN)) as http:
        response = await http.get(url, headers=headers)
    assert response.status_code == 401
    assert "set-cookie" not in response.headers


async def test_a_non_ascii_wrong_token_is_401(refusal: Path) -> None:
    async with client(app_for(refusal, token=TOKEN)) as http:
        response = await http.get("/?token=%C3%A9")
    assert response.status_code == 401


# --- other sites, DNS rebinding, oversized bodies -------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "https://evil.example"},
        {"origin": "http://127.0.0.1:9999"},  # another port is another origin
        {"origin": "null"},
        {"referer": "https://evil.example/page"},
        {"origin": "https://evil.example", "referer": f"{BASE}/annotate/zoe/0"},
    ],
)
async def test_a_post_from_another_site_is_refused(refusal: Path, headers: dict[str, str]) -> None:
    async with client(app_for(refusal)) as http:
        response = await http.post(
            "/annotate/zoe/0", data={"rejection": "rejection"}, headers=headers
        )
    assert response.status_code == 403
    assert "another site" in html.unescape(response.text)
    assert web_files(refusal) == []


@pytest.mark.parametrize(
    "headers",
    [
        {},  # scripts and curl send neither
        {"origin": BASE},
        {"origin": BASE.upper()},
        {"referer": f"{BASE}/annotate/zoe/0"},
        {"origin": BASE, "referer": f"{BASE}/annotate/zoe/0"},
    ],
)
async def test_a_post_from_the_page_itself_is_saved(refusal: Path, headers: dict[str, str]) -> None:
    async with client(app_for(refusal)) as http:
        response = await http.post(
            "/annotate/zoe/0", data={"rejection": "rejection"}, headers=headers
        )
    assert response.status_code == 303
    assert saved(refusal, "zoe").height == 1


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:8765", "127.0.0.1.evil.example:8765", "10.0.0.7:8765"]
)
@pytest.mark.parametrize(("method", "url"), [("GET", "/"), ("POST", "/annotate/zoe/0")])
async def test_a_request_for_another_host_name_is_refused(
    refusal: Path, host: str, method: str, url: str
) -> None:
    """DNS rebinding: a site whose name resolves to 127.0.0.1 still sends its own name."""
    async with client(app_for(refusal)) as http:
        response = await http.request(
            method, url, data={"rejection": "rejection"}, headers={"host": host}
        )
    assert response.status_code == 421
    assert "address" in response.text
    assert web_files(refusal) == []


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:8765",
        "localhost:8765",
        "LOCALHOST:8765",
        "[::1]:8765",
        "127.0.0.2:8765",
        "localhost",
        "127.0.0.1",
        "[::1]",
    ],
)
async def test_the_loopback_names_are_accepted_at_any_port(refusal: Path, host: str) -> None:
    """An SSH tunnel or port forwarding (`ssh -L 9000:localhost:8765`) changes the port only."""
    app = AnnotationApp(MetaEvaluator(refusal, load=True), host="127.0.0.1", port=8765)
    async with client(app) as http:
        response = await http.get("/", headers={"host": host})
        other_port = await http.get("/", headers={"host": host.replace("8765", "9000")})
        tunnelled = host.replace("8765", "9000")
        saved_through_tunnel = await http.post(
            "/annotate/zoe/0",
            data={"rejection": "rejection"},
            headers={"host": tunnelled, "origin": f"http://{tunnelled}"},
        )
    assert response.status_code == 200
    assert other_port.status_code == 200
    assert saved_through_tunnel.status_code == 303
    assert saved(refusal, "zoe").height == 1


@pytest.mark.parametrize(
    "host",
    ["localhost.evil.example:8765", "127.0.0.1.nip.io", "[::2]:8765", "::1", "localhost:x", ""],
)
async def test_names_that_only_look_like_loopback_are_refused(refusal: Path, host: str) -> None:
    app = AnnotationApp(MetaEvaluator(refusal, load=True), host="127.0.0.1", port=8765)
    async with client(app) as http:
        response = await http.get("/", headers={"host": host})
    assert response.status_code == 421


async def test_an_origin_matching_x_forwarded_host_is_accepted(refusal: Path) -> None:
    """Behind a reverse proxy that rewrites `Host`, the browser's name is in X-Forwarded-Host."""
    proxied = {"host": "127.0.0.1:8765", "x-forwarded-host": "annotate.lab.example"}
    async with client(app_for(refusal)) as http:
        own = await http.post(
            "/annotate/zoe/0",
            data={"rejection": "rejection"},
            headers={**proxied, "origin": "https://annotate.lab.example"},
        )
        chained = await http.post(
            "/annotate/zoe/1",
            data={"rejection": "rejection"},
            headers={
                **proxied,
                "x-forwarded-host": "Annotate.Lab.Example, inner.proxy",
                "referer": "https://annotate.lab.example/annotate/zoe/1",
            },
        )
        refused = [
            await http.post(
                "/annotate/zoe/2", data={"rejection": "rejection"}, headers={**proxied, **extra}
            )
            for extra in (
                {"origin": "https://evil.example"},
                {"origin": "null"},
                {"origin": "https://inner.proxy", "x-forwarded-host": "a.example, inner.proxy"},
            )
        ]
    assert own.status_code == 303 and chained.status_code == 303
    assert [r.status_code for r in refused] == [403, 403, 403]
    assert saved(refusal, "zoe").height == 2


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20"])
async def test_a_public_bind_with_a_token_accepts_any_host_name(refusal: Path, host: str) -> None:
    """Others reach the page under names the server cannot know; the token keeps sites out."""
    app = AnnotationApp(MetaEvaluator(refusal, load=True), host=host, port=8765, token=TOKEN)
    async with client(app) as http:
        named = await http.get(
            "/", headers={"host": "annotate.lab.example:8765", "authorization": f"Bearer {TOKEN}"}
        )
        no_token = await http.get("/", headers={"host": "annotate.lab.example:8765"})
        foreign = await http.post(
            "/annotate/zoe/0",
            data={"rejection": "rejection"},
            headers={
                "host": "annotate.lab.example:8765",
                "origin": "https://evil.example",
                "authorization": f"Bearer {TOKEN}",
            },
        )
    assert named.status_code == 200
    assert no_token.status_code == 401
    assert foreign.status_code == 403


async def test_a_body_over_the_limit_is_refused_and_nothing_saved(refusal: Path) -> None:
    from meta_evaluator.web.http import MAX_BODY

    long_text = "x" * (MAX_BODY + 10)
    async with client(app_for(refusal)) as http:
        response = await http.post(
            "/annotate/zoe/0", data={"rejection": "rejection", "explanation": long_text}
        )

        async def chunks() -> AsyncIterator[bytes]:  # no content-length: read until the limit
            yield b"rejection=rejection&explanation="
            for _ in range(12):
                yield b"y" * 100_000

        streamed = await http.post(
            "/annotate/zoe/1",
            content=chunks(),
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
    for refused in (response, streamed):
        assert refused.status_code == 413
        assert "too large" in refused.text and "1,000,000 bytes" in refused.text
    assert web_files(refusal) == []


async def test_a_body_at_the_limit_is_saved_whole(refusal: Path) -> None:
    from meta_evaluator.web.http import MAX_BODY

    head = "rejection=rejection&explanation="
    text = "z" * (MAX_BODY - len(head))
    async with client(app_for(refusal)) as http:
        response = await http.post(
            "/annotate/zoe/0",
            content=(head + text).encode(),
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
    assert response.status_code == 303
    assert saved(refusal, "zoe")["explanation"].to_list() == [text]


def test_a_real_server_refuses_other_host_names_and_sites(
    refusal: Path, annotate_server: Any
) -> None:
    """`meta-evaluator annotate` on 127.0.0.1: rebinding and cross-site posts are refused."""
    base = annotate_server(refusal)
    port = base.rsplit(":", 1)[1]
    with httpx.Client(base_url=base, timeout=20) as http:
        assert http.get("/").status_code == 200
        assert http.get("/", headers={"host": f"localhost:{port}"}).status_code == 200
        assert http.get("/", headers={"host": f"localhost:{int(port) + 1}"}).status_code == 200
        assert http.get("/", headers={"host": f"rebound.example:{port}"}).status_code == 421
        form = {"rejection": "rejection"}
        foreign = http.post("/annotate/zoe/0", data=form, headers={"origin": "http://evil.example"})
        assert foreign.status_code == 403
        big = http.post("/annotate/zoe/0", data={**form, "explanation": "x" * 1_100_000})
        assert big.status_code == 413
        assert web_files(refusal) == []
        own = http.post("/annotate/zoe/0", data=form, headers={"origin": base})
        assert own.status_code == 303
    assert saved(refusal, "zoe").height == 1


# --- agreement summary ---------------------------------------------------------------------------


def _example_labels() -> dict[str, dict[Any, str]]:
    """The example's imported `rejection` labels, read straight from its CSV files."""
    labels = {}
    for path in sorted(EXAMPLE_ANNOTATIONS.glob("*.csv")):
        frame = pl.read_csv(path).filter(pl.col("rejection").is_in(["rejection", "not rejection"]))
        labels[path.stem] = dict(frame.select("original_id", "rejection").iter_rows())
    return labels


def _kappa_rows(page: str) -> dict[tuple[str, str], tuple[int, str]]:
    found = re.findall(
        r"<tr><td>([\w.-]+)</td><td>([\w.-]+)</td><td>(\d+)</td><td>([^<]+)</td>", page
    )
    return {(a, b): (int(n), value) for a, b, n, value in found}


async def test_summary_shows_alpha_and_pairwise_kappa_of_the_humans(refusal: Path) -> None:
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    from meta_evaluator.stats.agreement import krippendorff_alpha

    labels = _example_labels()
    assert sorted(labels) == ["ana", "ben", "chen"] and all(len(v) == 40 for v in labels.values())
    ids = data_ids(refusal)
    # a web annotator who sorts first and labelled 4 of the 40 rows, beside the imported three
    abe = {
        ids[0]: "not rejection",
        ids[1]: "rejection",
        ids[2]: "not rejection",
        ids[3]: "rejection",
    }
    labels["abe"] = abe
    async with client(app_for(refusal)) as http:
        for position in range(4):
            await http.post(f"/annotate/abe/{position}", data={"rejection": abe[ids[position]]})
        response = await http.get("/summary")
    page = response.text
    assert response.status_code == 200
    assert "<h3>rejection</h3>" in page and "<h3>explanation</h3>" not in page

    annotators = sorted(labels)
    units = sorted({u for found in labels.values() for u in found})
    table = [[labels[a].get(u) for u in units] for a in annotators]
    alpha = krippendorff_alpha(table, "nominal")
    assert alpha is not None
    codes = {"rejection": 0.0, "not rejection": 1.0}
    reference = krippendorff.alpha(
        np.array([[codes.get(v, np.nan) if v else np.nan for v in row] for row in table]),
        level_of_measurement="nominal",
    )
    assert alpha == pytest.approx(reference, abs=1e-12)
    shown = re.search(r"over (\d+) annotators and (\d+) rows: <b>([^<]+)</b>", page)
    assert shown is not None
    assert shown.groups() == ("4", "40", f"{alpha:.3f}")

    expected = {}
    for i, a in enumerate(annotators):
        for b in annotators[i + 1 :]:
            common = [u for u in units if u in labels[a] and u in labels[b]]
            kappa = cohen_kappa_score(
                [labels[a][u] for u in common], [labels[b][u] for u in common]
            )
            expected[(a, b)] = (len(common), "n/a" if math.isnan(kappa) else f"{kappa:.3f}")
    assert _kappa_rows(page) == expected
    assert expected[("abe", "ana")][0] == 4 and expected[("ana", "ben")][0] == 40


async def test_summary_with_a_single_annotator_says_when_agreement_appears(tmp_path: Path) -> None:
    project = small_project(tmp_path / "p", {"verdict": ["good", "bad"]})
    async with client(app_for(project)) as http:
        empty = await http.get("/summary")
        for position in range(3):
            await http.post(f"/annotate/ada/{position}", data={"verdict": "good"})
        one = await http.get("/summary")
        await http.post("/annotate/bob/0", data={"verdict": "bad"})
        two = await http.get("/summary")
    for response in (empty, one):
        assert response.status_code == 200
        assert "Agreement appears once two annotators labelled the same rows." in response.text
        assert "<h3>" not in response.text
    assert "<h3>verdict</h3>" in two.text and "appears once" not in two.text
    assert _kappa_rows(two.text) == {("ada", "bob"): (1, "0.000")}


async def test_summary_of_annotators_without_a_common_row_says_when_agreement_appears(
    tmp_path: Path,
) -> None:
    project = small_project(tmp_path / "p", {"verdict": ["good", "bad"]})
    async with client(app_for(project)) as http:
        await http.post("/annotate/ada/0", data={"verdict": "good"})
        await http.post("/annotate/bob/1", data={"verdict": "bad"})
        response = await http.get("/summary")
    assert "Agreement appears once two annotators labelled the same rows." in response.text


# --- serving ------------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "example.org"])
def test_serve_refuses_a_public_host_without_a_token_before_binding(
    refusal: Path, no_server: list[Served], monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    import meta_evaluator.web.sockets as listening

    def no_port(host: str, port: int) -> list[Any]:
        raise AssertionError("a port was bound")

    monkeypatch.setattr(listening, "listen", no_port)
    evaluator = MetaEvaluator(refusal, load=True)
    with pytest.raises(ProjectError, match="token") as caught:
        serve(evaluator, host=host)
    assert caught.value.field == "token"
    with pytest.raises(ProjectError, match="token"):
        evaluator.launch_annotator(host=host)
    assert no_server == []


def test_serve_binds_loopback_without_a_token_and_any_host_with_one(
    refusal: Path, no_server: list[Served], capsys: pytest.CaptureFixture[str]
) -> None:
    from meta_evaluator.annotate import free_port

    evaluator = MetaEvaluator(refusal, load=True)
    ports = [free_port(), free_port("::1"), free_port("0.0.0.0")]
    serve(evaluator, host="127.0.0.1", port=ports[0])
    serve(evaluator, host="localhost", port=0)
    evaluator.launch_annotator(port=ports[1], host="::1")
    serve(evaluator, host="0.0.0.0", port=ports[2], token=TOKEN)
    configs = [served.config for served in no_server]
    assert [(c.host, c.port) for c in configs] == [
        ("127.0.0.1", ports[0]),
        ("localhost", configs[1].app.port),
        ("::1", ports[1]),
        ("0.0.0.0", ports[2]),
    ]
    assert isinstance(configs[-1].app, AnnotationApp) and configs[-1].app.token == TOKEN
    assert configs[0].app.token is None and configs[1].app.port != 0
    err = capsys.readouterr().err
    assert f"http://127.0.0.1:{ports[0]}/  " in err and f"http://[::1]:{ports[1]}/" in err
    # bound to every interface, the address to share names this machine, not 0.0.0.0
    assert f"http://{socket.gethostname()}:{ports[2]}/?token={TOKEN}" in err


def test_the_annotate_command_refuses_a_public_host_without_a_token(
    refusal: Path, no_server: list[Served]
) -> None:
    from meta_evaluator.annotate import free_port
    from meta_evaluator.cli import app

    runner = CliRunner()
    port = free_port("0.0.0.0")
    refused = runner.invoke(
        app,
        ["annotate", str(refusal), "--host", "0.0.0.0"],
        env={"META_EVALUATOR_ANNOTATION_TOKEN": None},
    )
    assert isinstance(refused.exception, ProjectError)
    assert no_server == []
    allowed = runner.invoke(
        app,
        ["annotate", str(refusal), "--host", "0.0.0.0", "--port", str(port)],
        env={"META_EVALUATOR_ANNOTATION_TOKEN": TOKEN},
    )
    assert allowed.exit_code == 0, allowed.output
    configs = [served.config for served in no_server]
    assert [(c.host, c.port, c.app.token) for c in configs] == [("0.0.0.0", port, TOKEN)]


def test_a_project_without_a_task_cannot_be_annotated(tmp_path: Path) -> None:
    evaluator = MetaEvaluator(tmp_path / "empty", load=False)
    with pytest.raises(ProjectError, match="add data and a task"):
        AnnotationApp(evaluator)
