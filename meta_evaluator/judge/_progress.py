"""Progress of a run: a live bar per judge on a terminal, one log line per judge otherwise."""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["JudgeProgress", "Progress"]

logger = logging.getLogger(__name__)


@dataclass
class JudgeProgress:
    """Counts for one judge."""

    total: int
    done: int = 0
    retries: int = 0
    cached: int = 0
    """Rows answered from the response cache (no call made)."""
    outcomes: dict[str, int] = field(default_factory=lambda: {"valid": 0, "invalid": 0, "error": 0})
    started: float = field(default_factory=time.perf_counter)

    def line(self, judge_id: str) -> str:
        """`judge=… done=40/40 valid=38 invalid=1 error=1 cached=12 retries=3 in 2.1s`."""
        counts = " ".join(f"{k}={v}" for k, v in self.outcomes.items())
        return (
            f"judge={judge_id} done={self.done}/{self.total} {counts} cached={self.cached} "
            f"retries={self.retries} in {time.perf_counter() - self.started:.1f}s"
        )


class Progress:
    """Collects counts; shows a rich progress bar when `live`, else logs a line per judge."""

    def __init__(self, *, live: bool = False) -> None:
        self.judges: dict[str, JudgeProgress] = {}
        self._live = live
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}

    @classmethod
    def for_terminal(cls) -> Progress:
        """Live only when standard error is a terminal (scheduled batches get log lines)."""
        return cls(live=sys.stderr.isatty())

    def __enter__(self) -> Progress:
        if self._live:
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
            logger.info("%s", judge.line(judge_id))

    def add_judge(self, judge_id: str, *, total: int, done: int) -> None:
        """Start counting a judge; `done` rows were kept from before."""
        self.judges[judge_id] = JudgeProgress(total=total, done=done)
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

    def _refresh(self, judge_id: str) -> None:
        if self._bar is None:
            return
        judge = self.judges[judge_id]
        counts = " ".join(f"{k}={v}" for k, v in judge.outcomes.items())
        counts += f" cached={judge.cached}" if judge.cached else ""
        self._bar.update(
            self._tasks[judge_id], completed=judge.done, counts=f"{counts} retries={judge.retries}"
        )
