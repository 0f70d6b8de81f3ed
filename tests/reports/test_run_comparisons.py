"""The report's section on saved run comparisons: what it shows, and what it leaves out."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from meta_evaluator.errors import StateError
from meta_evaluator.reports import write_report
from meta_evaluator.reports.run_comparisons import FLIPS_SHOWN
from meta_evaluator.scores import BootstrapConfig
from tests.browser import open_page, screenshot
from tests.scores.test_run_comparison import make_project


def _section(page: str) -> str:
    start = page.index("<h2>Run comparisons</h2>")
    end = page.find("<h2>", start + 1)
    return page[start : end if end > 0 else None]


def test_the_section_shows_each_saved_comparison(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path)
    result = evaluator.compare_runs("mon", "tue", bootstrap=BootstrapConfig(n_resamples=100))
    page = write_report(evaluator).read_text(encoding="utf-8")
    section = _section(page)
    assert "<script" not in page
    assert "mon → tue (task verdict, judge j)" in section
    assert "6 rows labelled by both" in section and "<strong>3 flipped</strong>" in section
    assert "1 toward the humans, 2 away, 0 wrong both times" in section
    assert "McNemar&#x27;s exact test: p = 1" in section
    accuracy = result.scores[0]
    assert f"<td class='num'>{accuracy.difference:+.3f}</td>" in section
    assert f"[{accuracy.low:+.3f}, {accuracy.high:+.3f}]" in section
    rows = re.findall(r"<tr><td>(\d+)</td><td>(\w+)</td><td>(\w+)</td><td>(\w+)</td>"
                      r"<td class='(\w+)'>(\w+)</td></tr>", section)  # fmt: skip
    assert rows == [
        ("12", "yes", "no", "yes", "fail", "away"),
        ("13", "no", "yes", "no", "fail", "away"),
        ("14", "no", "yes", "yes", "pass", "toward"),
    ]


def test_no_comparison_no_section(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path)
    assert "Run comparisons" not in write_report(evaluator).read_text(encoding="utf-8")


def test_without_humans_it_says_why(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path, humans=False)
    evaluator.compare_runs("mon", "tue")
    section = _section(write_report(evaluator).read_text(encoding="utf-8"))
    assert "no direction: no human labels were given" in section
    assert "why undefined" in section and "n/a" in section


def test_many_flips_are_cut_with_where_the_rest_is(tmp_path: Path) -> None:
    ids = list(range(1, FLIPS_SHOWN + 13))
    evaluator = make_project(
        tmp_path, ids=ids, humans=False, runs=(["yes"] * len(ids), ["no"] * len(ids))
    )
    evaluator.compare_runs("mon", "tue")
    section = _section(write_report(evaluator).read_text(encoding="utf-8"))
    assert section.count("<td class='muted'>unrated</td>") == FLIPS_SHOWN
    assert "… and 12 more in compare-runs/mon__tue.json." in section


def test_a_damaged_comparison_file_is_named(tmp_path: Path) -> None:
    evaluator = make_project(tmp_path)
    evaluator.compare_runs("mon", "tue")
    saved = evaluator.paths.reports_dir / "compare-runs" / "mon__tue.json"
    saved.write_text("{}", encoding="utf-8")
    with pytest.raises(StateError, match=r"mon__tue\.json: not a run comparison"):
        write_report(evaluator)


def test_the_section_in_a_browser(tmp_path: Path, browser: Any) -> None:
    """Directions are coloured (green toward, red away), tables fit the page; a screenshot is
    kept in /tmp/report_run_comparisons.png."""
    evaluator = make_project(tmp_path)
    evaluator.compare_runs("mon", "tue", bootstrap=BootstrapConfig(n_resamples=50))
    with open_page(browser, 1100, 900) as page:
        page.goto(write_report(evaluator).as_uri())
        heading = page.locator("h2", has_text="Run comparisons")
        heading.scroll_into_view_if_needed()
        toward = page.locator("td.pass", has_text="toward").first
        away = page.locator("td.fail", has_text="away").first
        assert toward.evaluate("e => getComputedStyle(e).color") == "rgb(26, 127, 55)"
        assert away.evaluate("e => getComputedStyle(e).color") == "rgb(180, 35, 24)"
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1100
        box = heading.bounding_box()  # where the viewport shows it: the page is scrolled
        assert box is not None
        top = box["y"] + page.evaluate("window.scrollY")
        clip = {"x": 0, "y": top - 10, "width": 1100, "height": 700}
        screenshot(page, tmp_path, "report_run_comparisons", full_page=True, clip=clip)
