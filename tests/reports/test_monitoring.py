"""The report's sections on the label plan and the drift history: what they show, when they
are left out, a damaged history line named, and how they look in a browser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from meta_evaluator.errors import StateError
from meta_evaluator.reports import write_report
from meta_evaluator.scores import BootstrapConfig
from tests.browser import open_page, screenshot
from tests.scores.monitor_projects import add_run, make_project, noisy, random_labels, shifted

FAST = BootstrapConfig(n_resamples=100)


def _section(page: str, title: str) -> str:
    start = page.index(f"<h2>{title}</h2>")
    end = page.find("<h2>", start + 1)
    return page[start : end if end > 0 else None]


def _project(tmp_path: Path):  # type: ignore[no-untyped-def]
    evaluator, truth = make_project(tmp_path, rows=120)
    before = noisy(truth, 0.9, seed=3)
    add_run(evaluator, tmp_path, "j", "mon", before)
    add_run(evaluator, tmp_path, "j", "tue", before)
    add_run(evaluator, tmp_path, "j", "wed", shifted(before, 0.5, seed=4))
    return evaluator


def test_both_sections_show_what_was_saved(tmp_path: Path) -> None:
    evaluator = _project(tmp_path)
    steady = evaluator.drift("j", against="tue", bootstrap=FAST)
    drifted = evaluator.drift("j", bootstrap=FAST)
    plan = evaluator.plan_labels(simulations=20)
    page = write_report(evaluator).read_text(encoding="utf-8")
    assert page.index("<h2>Drift</h2>") < page.index("<h2>Label plan</h2>")
    drift = _section(page, "Drift")
    rows = drift.split("<tr>")[2:]
    assert len(rows) == 2  # newest first
    assert "mon → wed" in rows[0] and "mon → tue" in rows[1]
    assert "drifted: max_psi, max_changed_share, max_agreement_drop" in rows[0]
    assert "<span class='pass'>steady</span>" in rows[1]
    assert f"<td class='num'>{drifted.shift.psi:.3f}</td>" in rows[0]
    watched = drifted.watched()
    assert watched is not None and watched.low is not None and watched.high is not None
    assert f"{watched.difference:+.3f} [{watched.low:+.3f}, {watched.high:+.3f}]" in rows[0]
    assert f"{steady.shift.changed_share:.3f}" in rows[1]
    assert drift.count("data:image/png;base64,") == 1
    section = _section(page, "Label plan")
    assert plan.chosen is None  # the judge's latest run is the drifted one
    assert "No design reaches power 0.8" in section and "far below the humans" in section
    assert section.count("<tr>") == 1 + len({d.items for d in plan.designs})
    assert "data:image/png;base64," in section


def test_a_chosen_design_is_named(tmp_path: Path) -> None:
    evaluator, truth = make_project(tmp_path, rows=60)
    add_run(evaluator, tmp_path, "j", "r1", truth)
    plan = evaluator.plan_labels(simulations=20)
    assert plan.chosen is not None
    section = _section(write_report(evaluator).read_text(encoding="utf-8"), "Label plan")
    chosen = plan.chosen
    assert (
        f"<span class='pass'>{chosen.items:,} items x {chosen.annotators} annotators = "
        f"{chosen.labels:,} human labels</span>"
    ) in section
    assert section.count(" ✓") == 1


def test_no_plan_no_history_no_sections(tmp_path: Path) -> None:
    evaluator, _ = make_project(tmp_path, rows=30)
    add_run(evaluator, tmp_path, "j", "r1", random_labels(30, seed=1))
    page = write_report(evaluator).read_text(encoding="utf-8")
    assert "<h2>Drift</h2>" not in page and "<h2>Label plan</h2>" not in page


def test_damaged_files(tmp_path: Path) -> None:
    evaluator = _project(tmp_path)
    evaluator.drift("j", bootstrap=FAST)
    history = evaluator.paths.reports_dir / "drift_history.jsonl"
    with history.open("a") as file:
        file.write("not json\n")
    drift = _section(write_report(evaluator).read_text(encoding="utf-8"), "Drift")
    assert "<p class='warn'>1 line(s) of drift_history.jsonl are not drift checks" in drift
    assert "line 2: not JSON" in drift and drift.count("→ wed") == 1
    (evaluator.paths.reports_dir / "label_plan.json").write_text("{}")
    with pytest.raises(StateError, match=r"label_plan\.json: not a label plan"):
        write_report(evaluator)


def test_the_sections_in_a_browser(tmp_path: Path, browser: Any) -> None:
    """A drifted check is red, a steady one green, the plots load and the page keeps its width;
    screenshots are kept in /tmp/report_drift.png and /tmp/report_label_plan.png."""
    evaluator = _project(tmp_path)
    evaluator.drift("j", against="tue", bootstrap=FAST)
    evaluator.drift("j", bootstrap=FAST)
    evaluator.plan_labels(simulations=20)
    with open_page(browser, 1100, 900) as page:
        page.goto(write_report(evaluator).as_uri())
        drifted = page.locator("span.fail", has_text="drifted").first
        steady = page.locator("span.pass", has_text="steady").first
        assert drifted.evaluate("e => getComputedStyle(e).color") == "rgb(180, 35, 24)"
        assert steady.evaluate("e => getComputedStyle(e).color") == "rgb(26, 127, 55)"
        widths = page.evaluate(
            "[...document.querySelectorAll('figure img')].map(i => i.naturalWidth)"
        )
        assert len(widths) >= 2 and all(w > 500 for w in widths)
        assert page.evaluate("document.documentElement.scrollWidth") <= 1100
        for title, name in (("Drift", "report_drift"), ("Label plan", "report_label_plan")):
            box = page.locator("h2", has_text=title).bounding_box()
            clip = {"x": 0, "y": box["y"] - 10, "width": 1100, "height": 1000}
            screenshot(page, tmp_path, name, full_page=True, clip=clip)
