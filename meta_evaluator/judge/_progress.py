"""Progress of a run: a live bar per judge on a terminal, log lines per judge otherwise.

Scheduled runs (cron, CI, a batch job) get one line per judge each time it passes another
`every_percent` of its rows, or once `every_seconds` went by since its last line, whichever
comes first, and a last line when it ends:

```
judge=gpt4 done=120/400 (30%) valid=110 invalid=6 error=4 reused=40 cached=12 retries=9
  rate=3.2 rows/s eta=1m28s spent=$0.0410            (one line, cut here)
```

`valid`, `invalid` and `error` count every row done, as the run's summary does; `reused` rows
(answered by an earlier run, kept, not asked again) and `cached` ones (answered from the
response cache) are the part of them this run did not ask. A judge says at most one line a
second (a fast run would pass every 10% within one), and its last line always. The rate is over
the rows this run finished, `eta` the rest at that rate; `spent` is shown when the run counts
its cost (`max_cost`). Lines go to the `meta_evaluator.judge._progress` logger at INFO (the
command line shows them on standard error); the clock is injectable, so tests never wait.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

__all__ = ["JudgeProgress", "Progress", "ProgressMode", "progress_mode"]

logger = logging.getLogger(__name__)

ProgressMode = Literal["auto", "bar", "lines", "off"]

TICK_SECONDS = 1.0
"""How often a running judge is looked at for a line due by time."""

MIN_LINE_SECONDS = 1.0
"""The least time between two lines of a judge (its last line excepted): a fast run passes
every `every_percent` within a second, and ten lines of it say nothing the last does not."""


def progress_mode(mode: ProgressMode) -> Literal["bar", "lines", "off"]:
    """`auto` made concrete: lines when stdout is not a terminal or `CI=true`, else a bar."""
    if mode != "auto":
        return mode
    in_ci = os.environ.get("CI", "").strip().lower() in ("true", "1")
    on_terminal = sys.stdout.isatty() and sys.stderr.isatty()
    return "bar" if on_terminal and not in_ci else "lines"


@dataclass
class JudgeProgress:
    """Counts for one judge."""

    total: int
    done: int = 0
    """Rows with an outcome, reused ones included."""
    reused: int = 0
    """Rows kept from an earlier run (done before this run asked anything)."""
    retries: int = 0
    cached: int = 0
    """Rows answered from the response cache (no call made)."""
    outcomes: dict[str, int] = field(default_factory=lambda: {"valid": 0, "invalid": 0, "error": 0})
    started: float = field(default_factory=time.perf_counter)
    spent: Callable[[], float] | None = None
    """US dollars the judge's calls cost so far, when the run counts them."""
    last_line_at: float = 0.0
    last_line_done: int = -1

    def line(self, judge_id: str, now: float | None = None) -> str:
        """`judge=… done=40/40 (100%) valid=38 invalid=1 error=1 reused=0 cached=12 …`."""
        now = time.perf_counter() if now is None else now
        elapsed = max(now - self.started, 0.0)
        percent = math.floor(100 * self.done / self.total) if self.total else 100
        counts = " ".join(f"{k}={v}" for k, v in self.outcomes.items())
        asked = self.done - self.reused
        rate = asked / elapsed if elapsed > 0 else 0.0
        left = self.total - self.done
        eta = "0s" if left <= 0 else (_duration(left / rate) if rate > 0 else "unknown")
        text = (
            f"judge={judge_id} done={self.done}/{self.total} ({percent}%) {counts} "
            f"reused={self.reused} cached={self.cached} retries={self.retries} "
            f"rate={rate:.{2 if rate < 1 else 1}f} rows/s eta={eta}"
        )
        if self.spent is not None:
            text += f" spent=${self.spent():.4f}"
        return text


class Progress:
    """Collects counts; shows a rich bar (`bar`), logs lines (`lines`), or says nothing (`off`).

    Example:
        >>> clock = iter([0.0, 0.0, 2.0]).__next__
        >>> progress = Progress(mode="lines", clock=clock)
        >>> progress.add_judge("j", total=2)
        >>> progress.finished("j", "valid")
        >>> for part in progress.judges["j"].line("j", now=2.0).split(" reused="):
        ...     print(part)
        judge=j done=1/2 (50%) valid=1 invalid=0 error=0
        0 cached=0 retries=0 rate=0.50 rows/s eta=2s
    """

    def __init__(
        self,
        *,
        mode: Literal["bar", "lines", "off"] = "off",
        every_percent: float = 10.0,
        every_seconds: float = 30.0,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.judges: dict[str, JudgeProgress] = {}
        self.mode = mode
        self.every_percent = every_percent
        self.every_seconds = every_seconds
        self._clock = clock
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}

    @classmethod
    def for_settings(
        cls, mode: ProgressMode, *, every_percent: float, every_seconds: float
    ) -> Progress:
        """As a run's settings ask (`RunSettings.progress`, `progress_every`, ...)."""
        return cls(
            mode=progress_mode(mode), every_percent=every_percent, every_seconds=every_seconds
        )

    def __enter__(self) -> Progress:
        if self.mode == "bar":
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            self._bar = Bar(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                TimeElapsedColumn(),
                transient=False,
            )
            self._bar.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc_info)
            self._bar = None
        for judge_id, judge in self.judges.items():
            if self.mode == "lines":
                if judge.last_line_done != judge.done:  # its end, where no line said it
                    self._say(judge_id, judge)
            else:
                logger.debug("%s", judge.line(judge_id, self._clock()))

    def add_judge(
        self,
        judge_id: str,
        *,
        total: int,
        kept: Mapping[str, int] | None = None,
        spent: Callable[[], float] | None = None,
    ) -> None:
        """Start counting a judge; `kept`: the rows kept from before (reused), per outcome.

        They count in `done` and in their outcomes from the start, as in the run's summary.
        """
        now = self._clock()
        outcomes = {"valid": 0, "invalid": 0, "error": 0}
        for outcome, count in (kept or {}).items():
            if count:
                outcomes[outcome] = outcomes.get(outcome, 0) + count
        done = sum(outcomes.values())
        self.judges[judge_id] = JudgeProgress(
            total=total, done=done, reused=done, outcomes=outcomes, started=now, spent=spent,
            last_line_at=now, last_line_done=done,
        )  # fmt: skip
        if self._bar is not None:
            self._tasks[judge_id] = self._bar.add_task(
                judge_id, total=total, completed=done, counts=""
            )

    def retried(self, judge_id: str) -> None:
        """A call of the judge is about to be retried."""
        self.judges[judge_id].retries += 1
        self._refresh(judge_id)

    def finished(self, judge_id: str, outcome: str, *, cached: bool = False) -> None:
        """A row of the judge has its outcome; `cached`: its answer came from the cache."""
        judge = self.judges[judge_id]
        judge.done += 1
        judge.cached += cached
        judge.outcomes[outcome] = judge.outcomes.get(outcome, 0) + 1
        self._refresh(judge_id)

    def tick(self) -> None:
        """Log a line for each unfinished judge silent for `every_seconds` (lines mode)."""
        if self.mode != "lines":
            return
        now = self._clock()
        for judge_id, judge in self.judges.items():
            since = now - judge.last_line_at
            if judge.done < judge.total and since >= max(self.every_seconds, MIN_LINE_SECONDS):
                self._say(judge_id, judge, now)

    async def tick_forever(self) -> None:
        """Call `tick` every second until cancelled (the runner cancels it when judges end)."""
        while True:
            await anyio.sleep(TICK_SECONDS)
            self.tick()

    def _refresh(self, judge_id: str) -> None:
        judge = self.judges[judge_id]
        if self.mode == "lines":
            now = self._clock()
            step = judge.total * self.every_percent / 100
            passed = step > 0 and (
                math.floor(judge.done / step) > math.floor(max(judge.last_line_done, 0) / step)
            )
            since = now - judge.last_line_at
            if (passed or since >= self.every_seconds) and since >= MIN_LINE_SECONDS:
                self._say(judge_id, judge, now)
            return
        if self._bar is None:
            return
        counts = " ".join(f"{k}={v}" for k, v in judge.outcomes.items())
        counts += f" cached={judge.cached}" if judge.cached else ""
        self._bar.update(
            self._tasks[judge_id], completed=judge.done, counts=f"{counts} retries={judge.retries}"
        )

    def _say(self, judge_id: str, judge: JudgeProgress, now: float | None = None) -> None:
        now = self._clock() if now is None else now
        judge.last_line_at, judge.last_line_done = now, judge.done
        logger.info("%s", judge.line(judge_id, now))


def _duration(seconds: float) -> str:
    """`45s`, `3m05s`, `2h07m`."""
    whole = math.ceil(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
