"""One annotator's labels from the annotation page, saved at every submission.

```
annotations/web/<annotator_id>.parquet      every label the annotator gave on the page
annotations/web/<annotator_id>_state.json   counts and times
```
Several servers may run on one project (two `meta-evaluator annotate`, or one left running):
each save takes an exclusive lock on `annotations/.web.lock` (`locks.file_lock`), reads the
annotator's file as it is on disk now, replaces that one row and writes the file atomically
(`save_annotations`), so no server overwrites a label another one saved, and a server stopped
at any moment loses nothing that was acknowledged. Reads take no lock (files are replaced
atomically); a server re-reads a file whenever it changed on disk, once per request
(`refresh`). Ids keep the data's dtype. Nothing is created before `check_inside_project`
has passed: with `annotations/` linked out of the project, neither `web/` nor the lock is made.

An annotator id may also have imported labels (`annotations/<run_id>/`). They are never
rewritten: scoring merges the page's labels into them row by row (`merge_web_labels`), and the
page shows the same merged view (`imported` says how many imported labels there are).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from meta_evaluator.data import EvalData
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge.run_files import now_iso
from meta_evaluator.locks import file_lock
from meta_evaluator.results.human_results import (
    WEB_RUN,
    HumanAnnotationResults,
    annotation_schema,
    combine_sets,
    conform_annotations,
    latest_imported_table,
    read_table,
    save_annotations,
)
from meta_evaluator.storage import check_inside_project, check_safe_name, os_error, read_json

__all__ = ["LOCK_FILE", "WEB_RUN", "AnnotatorLabels"]

#: The lock file, in `annotations/`, held while a page's label is saved.
LOCK_FILE = ".web.lock"

#: What a file looked like when last read: (inode, size, mtime in ns), or None when missing.
_Seen = tuple[int, int, int] | None


class AnnotatorLabels:
    """The labels of one annotator on the page, as on disk at the last `refresh`.

    The readers (`imported`, `labelled`, `get`, `next_unlabelled`) look at what the last
    `refresh` read: the app refreshes once per request, so one page is built from one view
    and the annotations folder is listed once, and again after `save`.
    """

    def __init__(
        self,
        annotations_dir: Path,
        annotator_id: str,
        eval_data: EvalData,
        task: EvalTask,
    ) -> None:
        """Labels of `annotator_id` in `annotations_dir`, the `annotations/` folder of a project.

        No write leaves the project folder, `annotations_dir`'s parent (`check_inside_project`).
        """
        self.annotator_id = check_safe_name(annotator_id, field="annotator_id")
        self._dir = annotations_dir
        self._folder = annotations_dir / WEB_RUN
        self._table = self._folder / f"{annotator_id}.parquet"
        self._task = task
        self._schema = annotation_schema(task, eval_data.ids.dtype)
        self._ids = eval_data.ids.to_list()
        self._position = {row_id: i for i, row_id in enumerate(self._ids)}
        self._order = pl.DataFrame(
            {
                "original_id": eval_data.ids,
                "_position": pl.int_range(eval_data.ids.len(), eager=True),
            },
            schema={"original_id": self._schema["original_id"], "_position": pl.Int64},
        )
        self._seen: tuple[tuple[_Seen, bytes | None], tuple[str, _Seen] | None] | None = None
        # (labelled rows by position, imported (run id, valid labels)), replaced as one
        self._view: tuple[dict[int, dict[str, Any]], tuple[str, int] | None] = ({}, None)

    @property
    def imported(self) -> tuple[str, int] | None:
        """(run id, valid labels) of the annotator's imported set, or None without one."""
        return self._view[1]

    def labelled(self) -> set[int]:
        """Positions (in data order) with a valid label, given here or imported."""
        return set(self._view[0])

    def get(self, position: int) -> dict[str, Any] | None:
        """The row at `position` that scoring uses (from the page or imported), or None."""
        return self._view[0].get(position)

    def next_unlabelled(self, after: int = -1) -> int | None:
        """The first unlabelled position after `after` (wrapping around), or None when done."""
        labelled = self._view[0]
        n = len(self._ids)
        for step in range(1, n + 1):
            position = (after + step) % n
            if position not in labelled:
                return position
        return None

    def save(self, position: int, labels: dict[str, Any]) -> None:
        """Store the labels of one row: under the folder's lock, merged into the file on disk.

        Blocks while another process holds the lock: an async caller runs it in a worker
        thread (`anyio.to_thread.run_sync`). Call `refresh` afterwards to see the label: the save
        replaces the file (a new inode) and its state file, which names the save to the
        microsecond, so `refresh` notices it as it notices another server's save.

        Raises:
            OutsideProjectError: `annotations/` (or `web/`, or the lock) links out of the
                project; nothing is created there.
            DiskFullError, PermissionDeniedError, StorageError: The file system refused.
            ColumnError: The annotator's file on disk has other id dtypes than the data.
        """
        row = {
            "original_id": self._ids[position],
            "annotator_id": self.annotator_id,
            "run_id": WEB_RUN,
            "outcome": "valid",
            "status": "success",
            "error_message": None,
            "timestamp": now_iso(),
            **{t: labels.get(t) for t in self._task.task_names},
        }
        new = pl.DataFrame([row], schema=self._schema, orient="row")
        lock = self._dir / LOCK_FILE
        for path in (lock, self._folder, self._table):  # before anything is created
            check_inside_project(path, root=self._dir.parent)
        try:
            self._folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise os_error(self._folder, exc) from exc
        with file_lock(lock):
            frame = new
            if self._table.is_file():  # as on disk now, whoever wrote it last
                old = conform_annotations(read_table(self._table), self._schema, self._table)
                old = old.filter(pl.col("original_id") != row["original_id"])
                frame = pl.concat([old, new])
            # data order; rows of ids the data no longer has are kept, after the others
            frame = (
                frame.join(self._order, on="original_id", how="left", maintain_order="left")
                .sort("_position", nulls_last=True, maintain_order=True)
                .drop("_position")
            )
            state = self._folder / f"{self.annotator_id}_state.json"
            created = read_json(state).get("created_at") if state.is_file() else None
            save_annotations(
                self._dir, WEB_RUN, self.annotator_id, frame, source="annotation page",
                created_at=created,
            )  # fmt: skip

    def refresh(self) -> None:
        """Re-read the page's file and the imported set if either changed on disk.

        Raises:
            StorageError: A file cannot be read (or is a git-lfs pointer).
            ColumnError: The page's labels and the imported set disagree on id dtype.
        """
        imported = latest_imported_table(self._dir, self.annotator_id)
        # the state file's bytes name the save to the microsecond (`completed_at`): a file
        # replaced within the file system's timestamp granularity is still noticed
        state = self._folder / f"{self.annotator_id}_state.json"
        web_seen = (_stat(self._table), _read(state))
        seen = (web_seen, (imported[0], _stat(imported[1])) if imported else None)
        if seen == self._seen:
            return
        web = self._table if web_seen[0] is not None else None
        _, merged, base = combine_sets(imported, web) or (WEB_RUN, pl.DataFrame(), None)
        rows: dict[int, dict[str, Any]] = {}
        for row in merged.iter_rows(named=True):
            position = self._position.get(row["original_id"])
            if position is not None and row["outcome"] == "valid":
                rows[position] = row
        counted = None
        if imported is not None and base is not None:  # base is the imported set
            valid = HumanAnnotationResults(self.annotator_id, imported[0], base).valid_rows()
            counted = (imported[0], valid.height)
        self._view = (rows, counted)
        self._seen = seen


def _stat(path: Path) -> _Seen:
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    return (found.st_ino, found.st_size, found.st_mtime_ns)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
