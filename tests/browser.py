"""Headless Chromium for the tests that look at a page: one launch, one page setup, one
screenshot rule.

Needs Debian's `chromium` (`make test` installs it where it can) and the `playwright` package
(dev extra; it drives the system browser, no browser download); a test asking for either is
skipped, saying which is missing. The `browser` fixture (tests/conftest.py) launches it once per
module; `open_page` and `screenshot` are the helpers the tests call.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

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
#: Where a copy of every screenshot is kept, to be looked at after the run.
SHOTS = Path("/tmp")


@contextlib.contextmanager
def launched() -> Iterator[Any]:
    """The system's Chromium, headless, for the with-block; the test is skipped without it or
    without playwright."""
    if shutil.which(CHROMIUM) is None:
        pytest.skip(
            f"no browser: {CHROMIUM} is missing (Debian package 'chromium'; `make test` installs "
            "it when run as root with apt-get)"
        )
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the playwright package is missing (pip install -e '.[dev]')"
    )
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True, timeout=15_000
        )
        try:
            yield chromium
        finally:
            chromium.close()


@contextlib.contextmanager
def open_page(browser: Any, width: int = 1100, height: int = 900) -> Iterator[Any]:
    """A page of its own context (`width` x `height`, 5 s timeouts) for the with-block; fails
    the test when the page raised a JavaScript error."""
    context = browser.new_context(viewport={"width": width, "height": height})
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


def screenshot(page: Any, folder: Path, name: str, **options: Any) -> Path:
    """`page` saved as `folder/NAME.png` (playwright's `options`: full_page, clip) and copied to
    /tmp/NAME.png to be looked at; a nearly empty picture (10 kB at most) fails the test."""
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), **options)
    assert path.stat().st_size > 10_000, f"{path}: {path.stat().st_size} bytes, a blank page?"
    shutil.copyfile(path, SHOTS / path.name)
    return path
