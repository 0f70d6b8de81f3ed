"""The viewer's row tables, read from the result files and kept in memory until they change.

The first request reads every judge's latest complete results and every annotator's latest
labels (`results.row_table.read_row_sources`, only the columns the tables need); a table of a
judge and task is built when first asked for and kept. Before each request the store looks at
the files under `results/` and `annotations/` (name, size, modification time): when one
changed, appeared or went, everything is read again, so a finished run or a label saved on
the annotation page shows on the next page load.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import polars as pl

from meta_evaluator.errors import ProjectError
from meta_evaluator.results.row_table import (
    DATA_PREFIX,
    FLAGS,
    KEY_PREFIX,
    RowSources,
    RowTable,
    build_row_table,
    confusion,
    read_row_sources,
)
from meta_evaluator.view.query import sort_order

if TYPE_CHECKING:
    from meta_evaluator.data import EvalData
    from meta_evaluator.eval_task import EvalTask

__all__ = ["FileState", "RowStore", "ViewedProject", "file_state"]

_INTEGER = re.compile(r"-?[0-9]+")


class _ViewFolders(Protocol):
    @property
    def results_dir(self) -> Path: ...
    @property
    def annotations_dir(self) -> Path: ...
    @property
    def reports_dir(self) -> Path: ...


class ViewedProject(Protocol):
    """What the viewer reads of a project: a `MetaEvaluator` is one.

    The viewer sits below the facade that launches it (docs/architecture.md), so it names what
    it needs instead of importing the facade.
    """

    @property
    def project_dir(self) -> Path:
        """The project folder."""

    @property
    def paths(self) -> _ViewFolders:
        """The project's folders (`results_dir`, `annotations_dir`, `reports_dir`)."""

    @property
    def data(self) -> EvalData | None:
        """The evaluation data, or None."""

    @property
    def eval_task(self) -> EvalTask | None:
        """The task, or None."""


#: (path, size, modification time in ns) of every file the tables are read from, sorted.
FileState = tuple[tuple[str, int, int], ...]


def file_state(*folders: Path) -> FileState:
    """The files two levels down `folders` (`<run>/<file>`), with size and modification time.

    Cheap (one `stat` per file, no read), so it is taken before every request.
    """
    found: list[tuple[str, int, int]] = []
    for folder in folders:
        try:
            runs = list(os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for run in runs:
            if not run.is_dir():
                continue
            try:
                entries = list(os.scandir(run.path))
            except (FileNotFoundError, NotADirectoryError):
                continue  # removed meanwhile: the next look sees it gone
            for entry in entries:
                try:
                    stat = entry.stat()
                except FileNotFoundError:
                    continue
                found.append((entry.path, stat.st_size, stat.st_mtime_ns))
    return tuple(sorted(found))


@dataclass(frozen=True)
class _Built:
    """A table with what the pages ask of it again and again, computed once."""

    table: RowTable
    counts: Mapping[str, int]
    confusion: pl.DataFrame
    judge_keys: frozenset[str]
    majority_keys: frozenset[str]


class RowStore:
    """The row tables of one project, rebuilt when its result or label files change.

    Not thread-safe: the app serves one request at a time from it.
    """

    def __init__(self, project: ViewedProject) -> None:
        """Tables of `project`, which needs data and a task.

        Raises:
            ProjectError: The project has no data or task yet.
        """
        if project.data is None or project.eval_task is None:
            raise ProjectError(
                f"{project.project_dir}: add data and a task, run a judge, then view its results.",
                path=project.project_dir,
            )
        self.project = project
        self.data: EvalData = project.data
        self.task: EvalTask = project.eval_task
        self._state: FileState | None = None
        self._sources = RowSources({}, {})
        self._built: dict[tuple[str, str], _Built] = {}
        self._search: dict[tuple[str, str], pl.Series] = {}
        self._orders: dict[tuple[str, str, str], pl.Series | None] = {}
        self._ids = self.data.ids

    # ----- reading ----------------------------------------------------------------------------

    def refresh(self) -> bool:
        """Read the result and label files again if any changed since the last look.

        Returns:
            Whether they were read again.

        Raises:
            StateError, StorageError: A results or annotations file cannot be read.
        """
        paths = self.project.paths
        state = file_state(paths.results_dir, paths.annotations_dir)
        if state == self._state:
            return False
        self._sources = read_row_sources(
            paths.results_dir, paths.annotations_dir, self.task, self._ids
        )
        self._built.clear()
        self._search.clear()
        self._orders.clear()
        self._state = state
        return True

    @property
    def judges(self) -> list[str]:
        """Judges with a complete run, sorted."""
        return sorted(self._sources.judges)

    @property
    def annotators(self) -> list[str]:
        """Annotators with labels, sorted."""
        return sorted(self._sources.humans)

    @property
    def judge_runs(self) -> Mapping[str, str]:
        """The run shown of each judge."""
        return self._sources.judge_runs

    @property
    def tasks(self) -> list[str]:
        """The tasks rows are listed by: those with labels to choose, else every task."""
        labelled = [t for t in self.task.task_names if self.task.task_kind(t) != "free_text"]
        return labelled or list(self.task.task_names)

    # ----- tables -----------------------------------------------------------------------------

    def table(self, judge: str, task: str) -> RowTable:
        """The row table of `judge` on `task` (built once per reading of the files)."""
        return self._get(judge, task).table

    def counts(self, judge: str, task: str) -> Mapping[str, int]:
        """Rows with each flag, and `rows`: every row."""
        return self._get(judge, task).counts

    def confusion(self, judge: str, task: str) -> pl.DataFrame:
        """`results.row_table.confusion` of the table."""
        return self._get(judge, task).confusion

    def keys(self, judge: str, task: str) -> tuple[frozenset[str], frozenset[str]]:
        """The judge's labels and the majorities found in the table, as text."""
        built = self._get(judge, task)
        return built.judge_keys, built.majority_keys

    def search_text(self, judge: str, task: str) -> pl.Series:
        """Per row, lower-case text of its shown columns, labels, raw answer and reasoning."""
        key = (judge, task)
        if key not in self._search:
            table = self.table(judge, task)
            columns = [
                *(DATA_PREFIX + c for c in table.shown),
                "judge_key",
                "majority_key",
                *(KEY_PREFIX + a for a in table.annotators),
                "raw_answer",
                "reasoning",
            ]
            text = pl.concat_str(
                [pl.col(c).cast(pl.String) for c in columns], separator="\n", ignore_nulls=True
            )
            self._search[key] = table.frame.select(text.str.to_lowercase()).to_series()
        return self._search[key]

    def order(self, judge: str, task: str, sort: str) -> pl.Series | None:
        """The table's row numbers in the order `sort` names (`view.query.sort_order`)."""
        key = (judge, task, sort)
        if key not in self._orders:
            self._orders[key] = sort_order(self.table(judge, task).frame, sort)
        return self._orders[key]

    def _get(self, judge: str, task: str) -> _Built:
        key = (judge, task)
        if key not in self._built:
            table = build_row_table(self.data, self.task, task, judge, self._sources)
            frame = table.frame
            sums = frame.select(pl.col(f).sum() for f in FLAGS).row(0, named=True)
            counts = {"rows": frame.height, **{f: int(sums[f] or 0) for f in FLAGS}}
            judge_keys = frame.get_column("judge_key").drop_nulls().unique()
            majority_keys = frame.get_column("majority_key").drop_nulls().unique()
            self._built[key] = _Built(
                table,
                counts,
                confusion(table),
                frozenset(judge_keys.to_list()),
                frozenset(majority_keys.to_list()),
            )
        return self._built[key]

    # ----- one row ----------------------------------------------------------------------------

    def position_of(self, text: str) -> int | None:
        """The data position of the row whose id reads `text` (an integer id as digits)."""
        ids = self._ids
        wanted: object = text
        if ids.dtype.is_integer():
            # only an id as the API writes it: "0101" or "+101" is no id, not row 101
            if not _INTEGER.fullmatch(text) or not -(2**63) <= int(text) < 2**63:
                return None
            if str(int(text)) != text:
                return None
            wanted = int(text)
        found = ids.to_frame("id").with_row_index("position").filter(pl.col("id") == wanted)
        return int(found["position"][0]) if found.height else None

    def data_row(self, position: int) -> dict[str, object]:
        """Every column of the data's row at `position`."""
        return self.data.data.row(position, named=True)
