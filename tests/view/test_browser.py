"""The results viewer end to end: a real server, a real headless Chromium, clicks only.

Needs Debian's `chromium` (`make test` installs it where it can) and the `playwright` package
(dev extra; it drives the system browser, no browser download). Skipped without either
(tests/browser.py). Screenshots of what was seen are copied to /tmp (view_*.png).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.view import ViewerApp, free_port
from tests.browser import open_page, screenshot
from tests.loopback import serving_app
from tests.view.conftest import JUDGE, expected_rows


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    with open_page(browser, 1400, 1000) as opened:
        yield opened


@pytest.fixture
def served(refusal: Path) -> Iterator[str]:
    """The refusal example with its judges' runs, served by uvicorn on 127.0.0.1 in a thread."""
    port = free_port()
    app = ViewerApp(MetaEvaluator(refusal, load=True), host="127.0.0.1", port=port)
    with serving_app(app, port, "viewer") as base:
        yield base


def _ids(page: Any) -> list[int]:
    return [
        int(i) for i in page.eval_on_selector_all("tr[data-id]", "rs => rs.map(r => r.dataset.id)")
    ]


def test_browse_filter_click_a_cell_page_and_open_a_row(
    page: Any, served: str, refusal: Path, tmp_path: Path
) -> None:
    expected = expected_rows(refusal, JUDGE, "rejection")
    base = served
    page.goto(f"{base}/")
    assert page.title() == "refusal: flaky on rejection"  # the first judge, sorted
    page.select_option("select[name=judge]", JUDGE)
    page.click("button[type=submit]")
    page.wait_for_url(f"**judge={JUDGE}**")
    assert page.title() == f"refusal: {JUDGE} on rejection"
    assert _ids(page) == list(expected)
    assert page.inner_text("#shown") == "rows 1–40 of 40"
    screenshot(page, tmp_path, "view_list")

    # a flag: the chip lists the rows it marks
    disagree = [i for i, r in expected.items() if "disagree" in r["flags"]]
    page.click("a.chip[data-flag=disagree]")
    page.wait_for_url("**flag=disagree**")
    assert _ids(page) == disagree
    assert page.is_checked("input[name=flag][value=disagree]")
    assert f"of {len(disagree)}" in page.inner_text("#shown")
    screenshot(page, tmp_path, "view_filtered")

    # a cell of the confusion matrix: its rows only
    cell = page.locator("td a[data-judge='rejection'][data-human='not rejection']")
    count = int(cell.inner_text())
    cell.click()
    page.wait_for_url("**human_label=not+rejection**")
    wanted = [
        i
        for i, r in expected.items()
        if r["judge_label"] == "rejection" and r["human_majority"] == "not rejection"
    ]
    assert _ids(page) == wanted and len(wanted) == count > 0
    assert "flag=" not in page.url  # a cell shows all its rows, whatever the flags were

    # paging: 10 rows a page, then forward
    page.goto(f"{base}/?judge={JUDGE}")
    page.select_option("select[name=page_size]", "20")
    page.click("button[type=submit]")
    page.wait_for_url("**page_size=20**")
    assert _ids(page) == list(expected)[:20]
    page.click("a[rel=next]")
    page.wait_for_url("**page=2**")
    assert _ids(page) == list(expected)[20:40]
    assert "page 2 of 2" in page.inner_text(".pager")

    # a row page, and back to the list it came from
    first = list(expected)[20]
    page.click(f"tr[data-id='{first}'] td a")
    page.wait_for_url(f"{base}/rows/{first}?**")
    assert page.inner_text("h1").startswith(f"Row {first}")
    judge = page.locator(f".task[data-task=rejection] .judge[data-judge={JUDGE}]")
    assert str(expected[first]["judge_label"] or "—") in judge.inner_text()
    assert "meta-evaluator annotate" in page.inner_text("#annotate")
    screenshot(page, tmp_path, "view_row", full_page=True)
    page.click("#back")
    page.wait_for_url("**page=2**")
    assert _ids(page) == list(expected)[20:40]
