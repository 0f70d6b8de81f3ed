"""The results viewer end to end: a real server, a real headless Chromium, clicks only.

Needs Debian's `chromium` (`make test` installs it where it can) and the `playwright` package
(dev extra; it drives the system browser, no browser download). Skipped without either.
Screenshots of what was seen are copied to /tmp (view_*.png).
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.view import ViewerApp, free_port
from tests.view.conftest import JUDGE, expected_rows

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-proxy-server",
]
TIMEOUT_MS = 5_000

if shutil.which(CHROMIUM) is None:
    pytest.skip(
        f"no browser: {CHROMIUM} is missing (Debian package 'chromium'; `make test` installs it "
        "when run as root with apt-get)",
        allow_module_level=True,
    )
sync_api = pytest.importorskip(
    "playwright.sync_api",
    reason="the playwright package is missing (pip install -e '.[dev]')",
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True, timeout=15_000
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(TIMEOUT_MS)
    context.set_default_navigation_timeout(TIMEOUT_MS)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    try:
        yield opened
    finally:
        context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


@pytest.fixture
def served(refusal: Path) -> Iterator[str]:
    """The refusal example with its judges' runs, served by uvicorn on 127.0.0.1 in a thread."""
    import uvicorn

    port = free_port()
    app = ViewerApp(MetaEvaluator(refusal, load=True), host="127.0.0.1", port=port)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="viewer", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            pytest.fail(f"the viewer did not start on 127.0.0.1:{port}")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        assert not thread.is_alive(), "the viewer did not stop"


def _ids(page: Any) -> list[int]:
    return [
        int(i) for i in page.eval_on_selector_all("tr[data-id]", "rs => rs.map(r => r.dataset.id)")
    ]


def _shot(page: Any, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    assert path.stat().st_size > 10_000
    shutil.copyfile(path, Path("/tmp") / f"{name}.png")


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
    _shot(page, tmp_path, "view_list")

    # a flag: the chip lists the rows it marks
    disagree = [i for i, r in expected.items() if "disagree" in r["flags"]]
    page.click("a.chip[data-flag=disagree]")
    page.wait_for_url("**flag=disagree**")
    assert _ids(page) == disagree
    assert page.is_checked("input[name=flag][value=disagree]")
    assert f"of {len(disagree)}" in page.inner_text("#shown")
    _shot(page, tmp_path, "view_filtered")

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
    page.screenshot(path=str(tmp_path / "view_row.png"), full_page=True)
    shutil.copyfile(tmp_path / "view_row.png", Path("/tmp/view_row.png"))
    page.click("#back")
    page.wait_for_url("**page=2**")
    assert _ids(page) == list(expected)[20:40]
