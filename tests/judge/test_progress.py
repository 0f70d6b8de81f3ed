"""Progress lines for runs off a terminal: every N% or N seconds, with an injected clock."""

from __future__ import annotations

import doctest
import logging
from pathlib import Path

import pytest

from meta_evaluator.errors import JudgeConfigError
from meta_evaluator.judge import RunSettings, _progress
from meta_evaluator.judge._progress import Progress, progress_mode

LOGGER = "meta_evaluator.judge._progress"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def propagating(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line gives the progress logger its own handler and stops propagation; the
    records must reach caplog here, whatever ran in this process before."""
    monkeypatch.setattr(logging.getLogger(LOGGER), "propagate", True)


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


def test_a_line_each_ten_percent(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    with Progress(mode="lines", clock=clock) as progress:
        progress.add_judge("gpt4", total=20)
        for row in range(20):
            clock.now += 0.5
            progress.finished("gpt4", "error" if row == 3 else "valid", cached=row < 2)
            if row == 4:
                progress.retried("gpt4")
    said = lines(caplog)
    assert len(said) == 10  # rows 2, 4, ... 20: each passes another 10% (2 rows)
    assert said[0] == (
        "judge=gpt4 done=2/20 (10%) valid=2 invalid=0 error=0 reused=0 cached=2 retries=0 "
        "rate=2.0 rows/s eta=9s"
    )
    assert said[2] == (
        "judge=gpt4 done=6/20 (30%) valid=5 invalid=0 error=1 reused=0 cached=2 retries=1 "
        "rate=2.0 rows/s eta=7s"
    )
    assert said[-1] == (
        "judge=gpt4 done=20/20 (100%) valid=19 invalid=0 error=1 reused=0 cached=2 retries=1 "
        "rate=2.0 rows/s eta=0s"
    )


def test_reused_rows_count_as_done_but_not_in_the_rate(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    progress = Progress(mode="lines", every_percent=25, clock=clock)
    # kept from an earlier run
    progress.add_judge("j", total=100, kept={"valid": 36, "invalid": 3, "error": 1, "skipped": 0})
    for _ in range(10):
        clock.now += 1.0
        progress.finished("j", "valid")
    # 40% -> 50% passes the 50% mark: one line; 10 rows in 10 s, 50 left. The outcomes count
    # the reused rows too (done = valid + invalid + error), as the run's summary does.
    assert lines(caplog) == [
        "judge=j done=50/100 (50%) valid=46 invalid=3 error=1 reused=40 cached=0 retries=0 "
        "rate=1.0 rows/s eta=50s"
    ]


def test_a_line_every_thirty_seconds_when_rows_come_slowly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    progress = Progress(mode="lines", clock=clock)
    progress.add_judge("slow", total=1000)
    clock.now += 29.0
    progress.tick()
    assert lines(caplog) == []
    clock.now += 1.0
    progress.tick()  # nothing finished for 30 s: a line all the same, saying so
    assert lines(caplog) == [
        "judge=slow done=0/1000 (0%) valid=0 invalid=0 error=0 reused=0 cached=0 retries=0 "
        "rate=0.00 rows/s eta=unknown"
    ]
    clock.now += 15.0
    progress.finished("slow", "valid")
    assert len(lines(caplog)) == 1  # 15 s since the last line, 0.1% done
    clock.now += 15.0
    progress.finished("slow", "invalid")  # 30 s since the last line
    assert lines(caplog)[-1] == (
        "judge=slow done=2/1000 (0%) valid=1 invalid=1 error=0 reused=0 cached=0 retries=0 "
        "rate=0.03 rows/s eta=8h19m"
    )


def test_a_judge_that_stops_early_gets_a_last_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    spent = [0.0]
    with Progress(mode="lines", clock=clock) as progress:
        progress.add_judge("paid", total=40, spent=lambda: spent[0])
        for _ in range(5):
            clock.now += 1.0
            spent[0] += 0.01
            progress.finished("paid", "valid")
    assert lines(caplog) == [
        "judge=paid done=4/40 (10%) valid=4 invalid=0 error=0 reused=0 cached=0 retries=0 "
        "rate=1.0 rows/s eta=36s spent=$0.0400",
        "judge=paid done=5/40 (12%) valid=5 invalid=0 error=0 reused=0 cached=0 retries=0 "
        "rate=1.0 rows/s eta=35s spent=$0.0500",
    ]


def test_off_and_bar_log_no_lines(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    for mode in ("off", "bar"):
        with Progress(mode=mode) as progress:  # type: ignore[arg-type]
            progress.add_judge("j", total=2)
            progress.finished("j", "valid")
            progress.tick()
            progress.finished("j", "valid")
    assert lines(caplog) == []


@pytest.mark.parametrize(
    ("ci", "tty", "expected"),
    [
        ("", True, "bar"),
        ("true", True, "lines"),
        ("TRUE", True, "lines"),
        ("", False, "lines"),
        ("false", True, "bar"),
    ],
)
def test_auto_picks_lines_off_a_terminal_or_in_ci(
    monkeypatch: pytest.MonkeyPatch, ci: str, tty: bool, expected: str
) -> None:
    monkeypatch.setenv("CI", ci)
    monkeypatch.setattr("sys.stdout.isatty", lambda: tty)
    monkeypatch.setattr("sys.stderr.isatty", lambda: tty)
    assert progress_mode("auto") == expected
    assert progress_mode("off") == "off"


def test_settings_choose_and_check_the_progress() -> None:
    settings = RunSettings(progress="lines", progress_every=5.0, progress_seconds=60.0)
    progress = Progress.for_settings(
        settings.progress,
        every_percent=settings.progress_every,
        every_seconds=settings.progress_seconds,
    )
    assert (progress.mode, progress.every_percent, progress.every_seconds) == ("lines", 5.0, 60.0)
    with pytest.raises(JudgeConfigError) as caught:
        RunSettings(progress="loud", progress_every=0.0, progress_seconds=-1.0)  # type: ignore[arg-type]
    assert [e["loc"] for e in caught.value.errors] == [
        "progress",
        "progress_every",
        "progress_seconds",
    ]


def test_the_doctest() -> None:
    assert doctest.testmod(_progress).failed == 0


def test_a_run_logs_its_lines(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner takes the mode from the settings: 40 rows, 20% steps, one judge.

    A mock judge answers its 40 rows within a second: one line, its last (before, five lines
    of `eta=1s`). Run again asking its invalid rows, the reused rows count in `valid`.
    """
    from meta_evaluator.examples import create_example_project

    caplog.set_level(logging.INFO, logger=LOGGER)
    evaluator = create_example_project("refusal", tmp_path / "p")
    evaluator.run_judges_async(progress="lines", progress_every=20.0)
    said = lines(caplog)
    assert [line.split()[1] for line in said] == ["done=40/40"]
    assert said[-1].startswith("judge=mock_refusal_judge done=40/40 (100%) valid=38 invalid=2 ")
    caplog.clear()
    evaluator.run_judges_async(progress="lines", retry=["invalid"])
    assert lines(caplog)[0].startswith(
        "judge=mock_refusal_judge done=40/40 (100%) valid=38 invalid=2 error=0 reused=38 "
    )
    caplog.clear()
    evaluator.run_judges_async(progress="off")
    assert lines(caplog) == []


def test_at_most_one_line_a_second_and_the_last_always(caplog: pytest.LogCaptureFixture) -> None:
    """40 rows at 6,000 rows/s used to give ten lines of `eta=1s`; now the last alone, and a
    run of 4 s at 16 rows/s one line a second at most, each passing another 10%."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    with Progress(mode="lines", clock=clock) as progress:
        progress.add_judge("fast", total=40)
        for _ in range(40):
            clock.now += 1 / 6000
            progress.finished("fast", "valid")
    assert [line.split()[1] for line in lines(caplog)] == ["done=40/40"]
    caplog.clear()
    with Progress(mode="lines", clock=clock) as progress:
        progress.add_judge("steady", total=64)
        for _ in range(64):
            clock.now += 1 / 16
            progress.finished("steady", "valid")
    said = [line.split()[1] for line in lines(caplog)]
    assert said == ["done=16/64", "done=32/64", "done=48/64", "done=64/64"]
