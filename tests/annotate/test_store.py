"""Saving labels from the page: safe across server processes, never dropping imported labels.

Labels are checked the way scoring finds them: `load_all_human_results` on a fresh load.
"""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import httpx
import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.annotate import AnnotationApp
from meta_evaluator.annotate.store import LOCK_FILE
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.locks import file_lock
from tests.annotate.conftest import data_ids

pytestmark = pytest.mark.anyio

ROWS = 50
ANNOTATORS = ("ann", "bob")


def fifty_rows(folder: Path) -> Path:
    """A saved project of 50 rows (string ids) and one required task, one optional."""
    ids = [f"q{i:02d}" for i in range(ROWS)]
    frame = pl.DataFrame({"qid": ids, "text": [f"text {i}" for i in ids]})
    evaluator = MetaEvaluator(folder, load=False)
    evaluator.add_data(DataLoader.load_from_dataframe("rows", frame, "qid"))
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"verdict": ["yes", "no"], "note": None},
            prompt_columns=None,
            response_columns=["text"],
            required_tasks=["verdict"],
            annotation_prompt="Yes or no?",
        )
    )
    evaluator.save_state()
    return folder


def humans(project: Path) -> dict[str, pl.DataFrame]:
    found = MetaEvaluator(project, load=True).load_all_human_results()
    return {a: h.results_data for a, h in found.items()}


def verdict(annotator: str, row: int) -> str:
    return "yes" if (row + ANNOTATORS.index(annotator)) % 3 else "no"


def test_two_annotate_processes_100_interleaved_saves_all_on_disk(
    tmp_path: Path, annotate_server: Callable[[Path], str]
) -> None:
    """Two `meta-evaluator annotate` processes on one project, two annotators, 100 saves.

    The saves alternate between the servers (each annotator goes through both) and four run at
    a time, so the two processes write the same annotator's file concurrently.
    """
    project = fifty_rows(tmp_path / "rows")
    servers = [annotate_server(project), annotate_server(project)]
    # each server has read both annotators' (empty) files before the saves begin
    with httpx.Client(timeout=20) as http:
        for base in servers:
            for annotator in ANNOTATORS:
                assert http.get(f"{base}/annotate/{annotator}/0").status_code == 200
    saves = [(i // 2, ANNOTATORS[i % 2], servers[(i + i // 2) % 2]) for i in range(2 * ROWS)]
    assert len(saves) == 100
    assert {(a, s) for _, a, s in saves} == {(a, s) for a in ANNOTATORS for s in servers}

    def post(save: tuple[int, str, str]) -> int:
        row, annotator, base = save
        with httpx.Client(timeout=20) as http:
            response = http.post(
                f"{base}/annotate/{annotator}/{row}",
                data={"verdict": verdict(annotator, row), "note": f"{annotator} {row}"},
            )
        return response.status_code

    with ThreadPoolExecutor(max_workers=4) as pool:
        statuses = list(pool.map(post, saves))
    assert statuses == [303] * 100

    found = humans(project)
    assert sorted(found) == list(ANNOTATORS)
    for annotator in ANNOTATORS:
        frame = found[annotator].sort("original_id")
        assert frame.height == ROWS, (annotator, frame.height)
        assert frame.select("original_id", "verdict", "note").rows() == [
            (f"q{row:02d}", verdict(annotator, row), f"{annotator} {row}") for row in range(ROWS)
        ]
    # and both servers show every label (neither serves a stale copy)
    with httpx.Client(timeout=20) as http:
        for base in servers:
            assert http.get(f"{base}/api/progress").json() == {"ann": ROWS, "bob": ROWS}


async def test_a_stale_server_keeps_the_labels_another_one_saved(tmp_path: Path) -> None:
    """Two apps on one project (two servers, or one left running): no save is lost."""
    project = fifty_rows(tmp_path / "rows")
    first = AnnotationApp(MetaEvaluator(project, load=True))
    second = AnnotationApp(MetaEvaluator(project, load=True))
    base = "http://127.0.0.1:8000"
    async with (
        httpx.AsyncClient(transport=httpx.ASGITransport(app=first), base_url=base) as one,
        httpx.AsyncClient(transport=httpx.ASGITransport(app=second), base_url=base) as two,
    ):
        assert (await one.post("/annotate/ann/0", data={"verdict": "yes"})).status_code == 303
        assert (await two.post("/annotate/ann/1", data={"verdict": "no"})).status_code == 303
        assert (await one.post("/annotate/ann/2", data={"verdict": "yes"})).status_code == 303
        # the first app, asked for the next row, knows row 1 is labelled
        following = await one.get("/annotate/ann")
        assert following.headers["location"] == "/annotate/ann/3"
    frame = humans(project)["ann"]
    assert frame.select("original_id", "verdict").rows() == [
        ("q00", "yes"),
        ("q01", "no"),
        ("q02", "yes"),
    ]


async def test_labels_given_on_the_page_never_drop_the_imported_ones(refusal: Path) -> None:
    """ana has 40 imported labels; one label on the page replaces that row's label only."""
    before = humans(refusal)["ana"]
    assert before.height == 40
    first_id, first_label = before.row(0, named=True)["original_id"], before["rejection"][0]
    other = "not rejection" if first_label == "rejection" else "rejection"
    app = AnnotationApp(MetaEvaluator(refusal, load=True))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000"
    ) as http:
        saved = await http.post("/annotate/ana/0", data={"rejection": other})
        assert saved.status_code == 303
        after = humans(refusal)["ana"]
        assert after.height == 40  # not 1: the imported labels still count
        progress = (await http.get("/api/progress")).json()
        page = html.unescape((await http.get("/annotate/ana/1")).text)
    assert progress["ana"] == 40
    # the page says what happens to labels given here
    assert "ana has 40 imported labels" in page
    assert "saved apart, as web labels" in page
    assert "a row you label here replaces its imported label" in page
    assert "This row's label below is the imported one" in page
    assert after.filter(pl.col("original_id") == first_id)["rejection"].to_list() == [other]
    unchanged = after.filter(pl.col("original_id") != first_id).sort("original_id")
    expected = before.filter(pl.col("original_id") != first_id).sort("original_id")
    assert unchanged.select("original_id", "rejection", "explanation").equals(
        expected.select("original_id", "rejection", "explanation")
    )
    # the imported file is untouched; the page's label is in the web folder
    assert (refusal / "annotations" / "web" / "ana.parquet").is_file()
    assert pl.read_parquet(refusal / "annotations" / "web" / "ana.parquet").height == 1


async def test_an_import_after_page_labels_wins_for_the_rows_it_has(refusal: Path) -> None:
    """Row by row, the label given last counts: a later import replaces earlier page labels."""
    app = AnnotationApp(MetaEvaluator(refusal, load=True))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000"
    ) as http:
        assert (await http.post("/annotate/ana/0", data={"rejection": "rejection"})).is_redirect
    evaluator = MetaEvaluator(refusal, load=True)
    assert evaluator.data is not None
    ids = evaluator.data.ids.to_list()
    again = refusal / "again.csv"
    again.write_text(f"original_id,rejection\n{ids[0]},not rejection\n", encoding="utf-8")
    evaluator.add_external_annotation_results(again, "ana")
    after = humans(refusal)["ana"]
    assert after.select("original_id", "rejection").rows() == [(ids[0], "not rejection")]


async def test_a_save_waiting_for_the_lock_does_not_stall_the_server(tmp_path: Path) -> None:
    """Another process holds the lock: the save waits in a worker thread, pages still answer."""
    project = fifty_rows(tmp_path / "rows")
    app = AnnotationApp(MetaEvaluator(project, load=True))
    lock = project / "annotations" / LOCK_FILE
    lock.parent.mkdir(exist_ok=True)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:  # flock: another open file description conflicts, as another process
        with file_lock(lock):
            held.set()
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(5)
    posted: list[httpx.Response] = []
    try:
        async with (
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000"
            ) as http,
            anyio.create_task_group() as group,
        ):

            async def post() -> None:
                posted.append(await http.post("/annotate/ann/0", data={"verdict": "yes"}))

            group.start_soon(post)
            began = time.monotonic()
            await anyio.sleep(0.2)
            progress = await http.get("/api/progress")
            page = await http.get("/annotate/bob/3")
            answered = time.monotonic() - began
            waiting = posted == []  # the save still waits for the lock
            release.set()
    finally:
        release.set()
        holder.join()
    assert answered < 2, f"the event loop stalled {answered:.1f}s behind the lock"
    assert waiting
    assert progress.json() == {"ann": 0} and page.status_code == 200
    assert [r.status_code for r in posted] == [303]
    assert humans(project)["ann"]["verdict"].to_list() == ["yes"]


async def test_saved_rows_are_in_data_order_one_per_id_with_the_data_id_dtype(
    refusal: Path,
) -> None:
    """Rows saved out of order, one relabelled: the file holds each id once, in data order."""
    app = AnnotationApp(MetaEvaluator(refusal, load=True))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000"
    ) as http:
        for position in (5, 2, 9, 2):
            label = "not rejection" if position == 2 else "rejection"
            assert (
                await http.post(f"/annotate/zoe/{position}", data={"rejection": label})
            ).status_code == 303
    ids = data_ids(refusal)
    frame = pl.read_parquet(refusal / "annotations" / "web" / "zoe.parquet")
    assert frame.select("original_id", "rejection").rows() == [
        (ids[2], "not rejection"),
        (ids[5], "rejection"),
        (ids[9], "rejection"),
    ]
    assert frame.schema["original_id"] == pl.Int64


async def test_rows_of_ids_the_data_lost_are_kept_after_the_others(tmp_path: Path) -> None:
    project = fifty_rows(tmp_path / "rows")
    web = project / "annotations" / "web"
    web.mkdir(parents=True)
    stray = pl.DataFrame(
        {
            "original_id": ["gone-2", "gone-1"],
            "annotator_id": "ann",
            "run_id": "web",
            "outcome": "valid",
            "status": "success",
            "error_message": None,
            "timestamp": "2026-01-01T00:00:00",
            "verdict": "no",
        },
        schema_overrides={"error_message": pl.String},
    )  # fmt: skip  (an older file: no `note` column, the task gained it later)
    stray.write_parquet(web / "ann.parquet")
    app = AnnotationApp(MetaEvaluator(project, load=True))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000"
    ) as http:
        assert (
            await http.post("/annotate/ann/7", data={"verdict": "yes", "note": "n"})
        ).status_code == 303
        assert (await http.post("/annotate/ann/3", data={"verdict": "no"})).status_code == 303
    frame = pl.read_parquet(web / "ann.parquet")
    assert frame.select("original_id", "verdict", "note").rows() == [
        ("q03", "no", None),
        ("q07", "yes", "n"),
        ("gone-2", "no", None),
        ("gone-1", "no", None),
    ]


@pytest.mark.parametrize(
    ("method", "url", "most"),
    [("GET", "/annotate/ana/3", 1), ("GET", "/annotate/ana", 1), ("POST", "/annotate/ana/3", 2)],
)
async def test_a_request_lists_the_annotators_folders_once(
    refusal: Path, monkeypatch: pytest.MonkeyPatch, method: str, url: str, most: int
) -> None:
    """Each refresh lists annotations/*/<id>_state.json: once per request (again after a save)."""
    import meta_evaluator.annotate.store as store

    app = AnnotationApp(MetaEvaluator(refusal, load=True))
    calls: list[str] = []
    real = store.latest_imported_table

    def counted(annotations_dir: Path, annotator_id: str) -> object:
        calls.append(annotator_id)
        return real(annotations_dir, annotator_id)

    monkeypatch.setattr(store, "latest_imported_table", counted)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000"
    ) as http:
        await http.get("/annotate/ana/0")
        calls.clear()
        response = await http.request(method, url, data={"rejection": "rejection"})
    assert response.status_code in (200, 303)
    assert calls == ["ana"] * len(calls) and 1 <= len(calls) <= most
