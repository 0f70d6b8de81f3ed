"""The annotation page end to end: a real server, a real headless Chromium, the keyboard only.

Needs Debian's `chromium` (`make test` installs it where it can) and the `playwright` package
(dev extra; it drives the system browser, no browser download). Skipped without either
(tests/browser.py). Screenshots of what was seen are copied to /tmp (annotate_*.png).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.annotate import AnnotationApp, free_port
from meta_evaluator.annotate.pages import row_page
from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.examples import create_example_project
from tests.browser import open_page, screenshot
from tests.loopback import serving_app


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    with open_page(browser, 1100, 900) as opened:
        yield opened


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The refusal example served by uvicorn on 127.0.0.1 in a thread, stopped afterwards."""
    project = tmp_path / "refusal"
    evaluator = create_example_project("refusal", project)
    port = free_port()
    app = AnnotationApp(evaluator, host="127.0.0.1", port=port)
    with serving_app(app, port, "annotation server") as base:
        yield base, project


def _checked(page: Any, task: str) -> list[str]:
    return list(
        page.eval_on_selector_all(
            f"input[name='{task}']:checked", "inputs => inputs.map(i => i.value)"
        )
    )


def _active(page: Any) -> str:
    return str(page.eval_on_selector("fieldset.active legend", "l => l.firstChild.textContent"))


def test_annotate_three_rows_with_the_keyboard(
    page: Any, served: tuple[str, Path], tmp_path: Path
) -> None:
    base, project = served
    page.goto(f"{base}/")
    assert page.title() == "Annotate refusal"
    page.keyboard.type("kim")  # the id field has the focus
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base}/annotate/kim/0")

    # row 0: option 1 of the highlighted (required) task, Enter saves
    assert _active(page).strip() == "rejection"
    page.keyboard.press("1")
    assert _checked(page, "rejection") == ["rejection"]
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base}/annotate/kim/1")

    # row 1: option 2, then an explanation (digits typed there pick no option), Ctrl+Enter saves
    assert "1 / 40 labelled" in page.inner_text("header")
    page.keyboard.press("2")
    page.focus("textarea[name='explanation']")
    page.keyboard.type("Complies: step 1 and 2 of a recipe.")
    assert _checked(page, "rejection") == ["not rejection"]
    screenshot(page, tmp_path, "annotate_row", full_page=True)
    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"{base}/annotate/kim/2")

    # row 2: Enter with nothing chosen is refused and says why; then option 2 and Enter
    page.keyboard.press("Enter")
    page.wait_for_selector("p.error")
    assert "Not saved: rejection: missing" in page.inner_text("p.error")
    assert page.url == f"{base}/annotate/kim/2"
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base}/annotate/kim/3")
    assert "3 / 40 labelled" in page.inner_text("header")

    evaluator = MetaEvaluator(project, load=True)
    assert evaluator.data is not None
    ids = evaluator.data.ids.to_list()
    frame = evaluator.load_all_human_results()["kim"].results_data
    assert frame.schema["original_id"] == pl.Int64
    assert frame.select("original_id", "rejection", "explanation").rows() == [
        (ids[0], "rejection", None),
        (ids[1], "not rejection", "Complies: step 1 and 2 of a recipe."),
        (ids[2], "not rejection", None),
    ]
    folder = project / "annotations" / "web"
    assert sorted(p.name for p in folder.iterdir()) == ["kim.parquet", "kim_state.json"]

    # going back to a saved row shows its labels
    page.goto(f"{base}/annotate/kim/1")
    assert _checked(page, "rejection") == ["not rejection"]
    assert page.input_value("textarea[name='explanation']") == "Complies: step 1 and 2 of a recipe."


def test_an_annotator_with_imported_labels_is_told_they_stay(
    page: Any, served: tuple[str, Path], tmp_path: Path
) -> None:
    """ana has 40 imported labels: the page says how its labels combine with them."""
    base, project = served
    evaluator = MetaEvaluator(project, load=True)
    imported = evaluator.load_all_human_results()["ana"].results_data
    first = imported.row(0, named=True)
    other = "not rejection" if first["rejection"] == "rejection" else "rejection"
    page.goto(f"{base}/annotate/ana/0")
    notice = page.inner_text("p.notice")
    assert "ana has 40 imported labels" in notice
    assert "saved apart, as web labels" in notice
    assert "a row you label here replaces its imported label; the other imported labels stay" in (
        notice
    )
    assert "This row's label below is the imported one" in notice
    assert "40 / 40 labelled" in page.inner_text("header")
    assert _checked(page, "rejection") == [first["rejection"]]
    screenshot(page, tmp_path, "annotate_imported", full_page=True)

    page.keyboard.press("1" if other == "rejection" else "2")
    assert _checked(page, "rejection") == [other]
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base}/annotate/ana")  # every row labelled: the done page
    assert "All 40 rows are labelled" in page.inner_text("main")

    after = MetaEvaluator(project, load=True).load_all_human_results()["ana"].results_data
    assert after.height == 40
    assert after.filter(pl.col("original_id") == first["original_id"])["rejection"].to_list() == [
        other
    ]
    page.goto(f"{base}/annotate/ana/0")
    assert "This row's label below" not in page.inner_text("p.notice")
    assert _checked(page, "rejection") == [other]


def test_number_keys_reach_a_multilabel_task_after_a_single_choice(page: Any) -> None:
    task = EvalTask(
        task_schemas={
            "verdict": ["good", "bad"],
            "topics": MultiLabelSchema(outcomes=["Food", "Crime", "Chat"]),
        },
        prompt_columns=None,
        response_columns=["text"],
    )
    page.set_content(
        row_page(
            project="p",
            annotator="kim",
            task=task,
            position=0,
            total=3,
            done=0,
            row_id="a",
            shown={"text": "Some text"},
            saved=None,
        )
    )
    page.keyboard.press("1")
    page.keyboard.press("2")
    page.keyboard.press("3")
    assert _checked(page, "verdict") == ["good"]
    assert _checked(page, "topics") == ["Crime", "Chat"]
