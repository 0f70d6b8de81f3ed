"""One annotator's labels from the annotation page, saved at every submission.

```
annotations/web/<annotator_id>.parquet      every label the annotator gave, in data order
annotations/web/<annotator_id>_state.json   counts and times (the file scoring reads)
```
Each submission rewrites both files atomically, so a server stopped at any moment loses nothing
that was acknowledged. Ids keep the data's dtype.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from meta_evaluator.data import EvalData
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.results.human_results import annotation_schema, save_annotations
from meta_evaluator.results.runs import now_iso
from meta_evaluator.storage import check_safe_name, read_json

__all__ = ["WEB_RUN", "AnnotatorLabels"]

#: The run folder of labels made on the annotation page.
WEB_RUN = "web"


class AnnotatorLabels:
    """The labels of one annotator on the page: loaded on first use, saved on every change."""

    def __init__(self, annotations_dir: Path, annotator_id: str, data: EvalData, task: EvalTask):
        self.annotator_id = check_safe_name(annotator_id, field="annotator_id")
        self._dir = annotations_dir
        self._data = data
        self._task = task
        self._schema = annotation_schema(task, data.data.schema[data.id_column])
        self._ids = data.ids.to_list()
        self._position = {row_id: i for i, row_id in enumerate(self._ids)}
        self._rows: dict[int, dict[str, Any]] = {}
        self._created: str | None = None
        table = annotations_dir / WEB_RUN / f"{annotator_id}.parquet"
        if table.is_file():
            frame = pl.read_parquet(table)
            for row in frame.iter_rows(named=True):
                position = self._position.get(row["original_id"])
                if position is not None:  # rows of data that changed since are dropped
                    self._rows[position] = row
            state = annotations_dir / WEB_RUN / f"{annotator_id}_state.json"
            if state.is_file():
                self._created = read_json(state).get("created_at")

    def labelled(self) -> set[int]:
        """Positions (in data order) the annotator has labelled."""
        return set(self._rows)

    def get(self, position: int) -> dict[str, Any] | None:
        """The saved row at `position`, or None."""
        return self._rows.get(position)

    def next_unlabelled(self, after: int = -1) -> int | None:
        """The first unlabelled position after `after` (wrapping around), or None when done."""
        n = len(self._ids)
        for step in range(1, n + 1):
            position = (after + step) % n
            if position not in self._rows:
                return position
        return None

    def save(self, position: int, labels: dict[str, Any]) -> None:
        """Store the labels of one row and write the annotator's files at once."""
        rows_now = dict(self._rows)
        rows_now[position] = {
            "original_id": self._ids[position],
            "annotator_id": self.annotator_id,
            "run_id": WEB_RUN,
            "outcome": "valid",
            "status": "success",
            "error_message": None,
            "timestamp": now_iso(),
            **{t: labels.get(t) for t in self._task.task_names},
        }
        rows = [rows_now[p] for p in sorted(rows_now)]
        frame = pl.DataFrame(
            [{c: r.get(c) for c in self._schema} for r in rows], schema=self._schema, orient="row"
        )
        save_annotations(
            self._dir, WEB_RUN, self.annotator_id, frame, source="annotation page",
            created_at=self._created,
        )  # fmt: skip
        self._rows = rows_now  # only once it is on disk
        self._created = self._created or now_iso()
