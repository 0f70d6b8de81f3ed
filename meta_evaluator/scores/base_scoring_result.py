"""ScoringResult: what one scorer found for one judge, saved as `<judge_id>_result.json`.

`BaseScoringResult` is the same class under the name of meta-evaluator 0.3 (and of API.md): the
result is concrete, so it is called `ScoringResult`; the old name stays for existing scripts.
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from meta_evaluator.errors import StateError
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.storage import read_json, write_json

__all__ = ["BaseScoringResult", "ScoringResult"]


class ScoringResult(BaseModel):
    """The scores of one judge for one metric, with what they rest on.

    Undefined values (0/0) are None (JSON null), never 0 or NaN. A scorer that could not
    compute at all fills `error` and counts the failure in `failed_comparisons`.
    """

    scorer_name: str = Field(description="Name of the scorer that produced this result.")
    task_name: str = Field(description="The task scored (or the tasks, joined by '+').")
    judge_id: str = Field(description="The judge whose labels were scored.")
    scores: dict[str, Any] = Field(description="Metric name to value (None when undefined).")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Breakdowns and context.")
    aggregation_mode: TaskAggregationMode = Field(description="How the tasks were combined.")
    num_comparisons: int = Field(description="Judge-human label pairs compared.")
    failed_comparisons: int = Field(default=0, description="Comparisons that could not be made.")
    confidence_intervals: dict[str, tuple[float | None, float | None]] | None = Field(
        default=None, description="Score name to (low, high) from the paired bootstrap."
    )
    error: str | None = Field(default=None, description="Why the scorer could not compute.")
    judge_outcomes: dict[str, int] | None = Field(
        default=None,
        description="The judge's rows per outcome (valid, invalid, error): errors never enter a "
        "metric, and are counted here.",
    )
    timestamp: dt.datetime = Field(
        default_factory=lambda: dt.datetime.now(dt.UTC), description="When this was computed."
    )
    run_id: str | None = Field(
        default=None,
        description="The judge's run whose labels were scored, so that a report can tell scores "
        "of an older run from those of the latest; None when unknown (results saved before "
        "it was recorded, or labels handed over without a run).",
    )
    human_run_ids: dict[str, str] | None = Field(
        default=None,
        description="Annotator id -> the run of that annotator's labels the judge was scored "
        "against (`<run>+web` with labels from the annotation page); None when unknown.",
    )

    def save_state(self, file_path: str | Path) -> None:
        """Write the result as JSON, atomically; NaN and infinities are written as null."""
        write_json(file_path, _finite(self.model_dump(mode="json")))

    @classmethod
    def load_state(cls, file_path: str | Path) -> ScoringResult:
        """Read a result written by `save_state`.

        Raises:
            StorageError: The file cannot be read.
            StateError: It is not JSON, or not a scoring result.
        """
        raw = read_json(file_path)
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            raise StateError(
                f"{file_path}: not a scoring result ({exc.error_count()} problem(s), first: "
                f"{exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}); score again to rewrite it.",
                path=file_path,
            ) from exc


BaseScoringResult = ScoringResult
"""The 0.3 name of `ScoringResult` (the same class), kept for scripts and custom scorers."""


def _finite(value: Any) -> Any:
    """`value` with every NaN or infinite float replaced by None, recursively."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
