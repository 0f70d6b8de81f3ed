"""The result row: what one judge made of one data row, and the results table built from rows.

A `ResultRow` is made for every answered (or failed) row, so it is a typed named tuple: immutable,
no validation beyond what its makers already did, no copy of its labels. A named tuple, not a
frozen dataclass: it is five times cheaper to make, and once its labels are plain strings the
garbage collector stops tracking it, so a run holding a million rows does not scan them all on
every full collection (a slotted dataclass stays tracked: measured 4-10% more CPU per row).

Its record (`to_record`) is the JSON line the row store writes, key for key as the format has
always been, and `from_record` reads such a line back, from this version or an older one.
`rows_frame` builds the results table (`results_schema`: `ROW_COLUMNS`, then one column per
task) that the run writes as Parquet; `JudgeOutcome` is what the runner hands back per judge.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Literal, NamedTuple, cast

import polars as pl

from meta_evaluator.eval_task import EvalTask
from meta_evaluator.eval_task.eval_task import JUDGE_ROW_COLUMNS, RESULT_COLUMNS

__all__ = [
    "FIELD_COLUMNS",
    "OUTCOMES",
    "ROW_COLUMNS",
    "JudgeOutcome",
    "Outcome",
    "ResultRow",
    "count_outcomes",
    "results_schema",
    "rows_frame",
]

Outcome = Literal["valid", "invalid", "error", "skipped"]
OUTCOMES: tuple[Outcome, ...] = ("valid", "invalid", "error", "skipped")

ROW_COLUMNS = (*(c for c in RESULT_COLUMNS if c != "annotator_id"), *JUDGE_ROW_COLUMNS)
"""The columns of a judge's results table before its task columns, in order."""

_DTYPES: dict[str, pl.DataType] = {
    "judge_id": pl.String(),
    "run_id": pl.String(),
    "outcome": pl.String(),
    "status": pl.String(),
    "error_message": pl.String(),
    "llm_raw_response_content": pl.String(),
    "llm_prompt_tokens": pl.Int64(),
    "llm_completion_tokens": pl.Int64(),
    "llm_call_duration_seconds": pl.Float64(),
    "attempts": pl.Int64(),
    "timestamp": pl.String(),
    "fingerprint": pl.String(),
    "prompt_hash": pl.String(),
    "batch_id": pl.String(),
    "cached": pl.Boolean(),
    "sample_labels": pl.String(),
}

_NO_LABELS: Mapping[str, Any] = {}
"""No labels: shared, read-only by type (a plain dict, so a row holding it is not GC-tracked)."""


class ResultRow(NamedTuple):
    """One judge's row for one data row: an answer parsed and classified, or a failure."""

    original_id: Any
    """The data row's id, in the data's own type (int, str ...)."""
    judge_id: str
    """The judge that answered."""
    run_id: str
    """The run the row was first written in (kept rows carry their run's id along)."""
    outcome: Outcome
    """`valid` (every required task labelled), `invalid` (answered, not usable as it is),
    `error` (no answer: the call failed) or `skipped`. Only valid rows are scored."""
    status: str | None
    """Why: `success`, an invalid answer's reason (`partial`, `parsing_error`,
    `label_not_allowed`, `refusal`, `truncated`, `empty`) or a failure's (`rate_limited`,
    `timeout`, `http_error`, `batch_expired` ...)."""
    error_message: str | None = None
    """The reason in words; for a majority of several answers, how many agreed per task."""
    labels: Mapping[str, Any] = _NO_LABELS
    """Task name → label: a string, a list of strings for a multi-label task, or None. Only
    tasks whose value passed the checks are present. Read-only: the makers of rows hand over
    a mapping of their own (a proxy per row would cost CPU on every answered row)."""
    raw_response: str | None = None
    """The answer as received: its text, or its structured output as JSON; a JSON list of the
    answers for a majority row. Stored as `llm_raw_response_content`."""
    prompt_tokens: int | None = None
    """Input tokens the provider counted (summed over a majority's answers); None if unknown."""
    completion_tokens: int | None = None
    """Output tokens the provider counted (summed likewise); None if unknown."""
    duration_seconds: float | None = None
    """Seconds of the last attempt's call, rounded to microseconds (summed over a majority's
    answers); None for batch answers. Stored as `llm_call_duration_seconds`."""
    attempts: int | None = None
    """Calls made for the row, retries included (summed over a majority's answers)."""
    timestamp: str | None = None
    """When the row was made: UTC, ISO 8601 with microseconds."""
    fingerprint: str | None = None
    """Digest of the judge configuration that answered (`plan.fingerprint`)."""
    prompt_hash: str | None = None
    """Digest of the request sent (`_prompting.prompt_hash`): a changed data row is asked again."""
    batch_id: str | None = None
    """The provider batch that answered; None for live calls."""
    cached: bool = False
    """Whether the answer came from the response cache (`llm/cache.py`): no call was made and
    nothing was paid. The row keeps the stored answer's token counts."""
    sample_labels: str | None = None
    """For a majority of k answers (`consistency`): each answer's labels, as a JSON list in
    the order asked: an object of task -> label for a valid answer, null for one that was not
    (invalid or failed), as the majority counts them. None for a single answer (and for rows
    written before this column existed). `SelfConsistencyScorer` reads it."""

    def to_record(self) -> dict[str, Any]:
        """The row as the row store's JSON line holds it (the stored format, key for key).

        Keys in the order they have always been written, so a rewritten file is byte for byte
        the same: labels after the answer's keys, `batch_id` only for batch answers, `cached`
        only for answers from the response cache (last), `sample_labels` only for a majority of
        several answers (before `cached`); an error row has no answer keys, unless it is the
        majority of failed answers (they come after the labels).
        """
        record: dict[str, Any] = {
            "original_id": self.original_id,
            "judge_id": self.judge_id,
            "run_id": self.run_id,
            "attempts": self.attempts,
            "llm_call_duration_seconds": self.duration_seconds,
            "timestamp": self.timestamp,
            "fingerprint": self.fingerprint,
            "prompt_hash": self.prompt_hash,
            "outcome": self.outcome,
            "status": self.status,
            "error_message": self.error_message,
        }
        if self.outcome != "error":
            record["llm_raw_response_content"] = self.raw_response
            record["llm_prompt_tokens"] = self.prompt_tokens
            record["llm_completion_tokens"] = self.completion_tokens
        record.update(self.labels)
        if self.batch_id is not None:
            record["batch_id"] = self.batch_id
        if self.outcome == "error" and (
            self.raw_response is not None
            or self.prompt_tokens is not None
            or self.completion_tokens is not None
        ):  # the majority of failed answers: these keys came last, in this order
            record["llm_prompt_tokens"] = self.prompt_tokens
            record["llm_completion_tokens"] = self.completion_tokens
            record["llm_raw_response_content"] = self.raw_response
        if self.sample_labels is not None:
            record["sample_labels"] = self.sample_labels
        if self.cached:
            record["cached"] = True
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any], task_names: Iterable[str]) -> ResultRow:
        """Read a stored line (or an imported row) back; unknown keys are ignored.

        Args:
            record: The line's object: `original_id`, `judge_id`, `run_id` and `outcome` are
                required; any other key missing reads as None.
            task_names: The tasks whose keys are labels (a key absent stays absent).

        Raises:
            KeyError: A required key is missing.
        """
        get = record.get
        return cls(
            record["original_id"],
            record["judge_id"],
            record["run_id"],
            cast(Outcome, record["outcome"]),
            get("status"),
            get("error_message"),
            {name: record[name] for name in task_names if name in record},
            get("llm_raw_response_content"),
            get("llm_prompt_tokens"),
            get("llm_completion_tokens"),
            get("llm_call_duration_seconds"),
            get("attempts"),
            get("timestamp"),
            get("fingerprint"),
            get("prompt_hash"),
            get("batch_id"),
            get("cached") is True,  # absent from lines written before the cache: False
            get("sample_labels"),  # absent from single answers and older lines: None
        )


@dataclass(frozen=True)
class JudgeOutcome:
    """One judge's rows at the end of a run call, as the runner hands them back."""

    judge_id: str
    run_id: str
    """The run holding the rows (an earlier complete run when nothing had to be asked)."""
    frame: pl.DataFrame
    """Every row, in data order (`rows_frame`)."""
    complete: bool
    """Every row of the data (or shard) has a row and the judge was not stopped."""
    cost_usd: float | None = None
    """What this call's calls of the judge cost (US dollars, from `prices.yaml`), when the
    run had a cost ceiling (`max_cost`); None otherwise."""


FIELD_COLUMNS: dict[str, str] = {
    "original_id": "original_id", "judge_id": "judge_id", "run_id": "run_id",
    "outcome": "outcome", "status": "status", "error_message": "error_message",
    "labels": "labels", "raw_response": "llm_raw_response_content",
    "prompt_tokens": "llm_prompt_tokens", "completion_tokens": "llm_completion_tokens",
    "duration_seconds": "llm_call_duration_seconds", "attempts": "attempts",
    "timestamp": "timestamp", "fingerprint": "fingerprint", "prompt_hash": "prompt_hash",
    "batch_id": "batch_id", "cached": "cached", "sample_labels": "sample_labels",
}  # fmt: skip
"""ResultRow field -> results table column, in the order of the fields (`labels` is one column
per task)."""


def results_schema(task: EvalTask, id_dtype: pl.DataType) -> dict[str, pl.DataType]:
    """Column → dtype of a results frame: ids keep the data's dtype; multi-label tasks are lists."""
    schema: dict[str, pl.DataType] = {"original_id": id_dtype}
    schema.update({c: _DTYPES[c] for c in ROW_COLUMNS if c != "original_id"})
    for name in task.task_names:
        kind = task.task_kind(name)
        schema[name] = pl.List(pl.String()) if kind == "multilabel" else pl.String()
    return schema


def rows_frame(rows: Sequence[ResultRow], task: EvalTask, id_dtype: pl.DataType) -> pl.DataFrame:
    """The results table of `rows`, in their order (`results_schema`), built column by column.

    Each column's Python list becomes a polars column before the next is made: a million
    rows hold one list of a million at a time, not sixteen.
    """
    schema = results_schema(task, id_dtype)
    columns = [pl.Series(name, list(map(attrgetter(field), rows)), dtype=schema[name])
               for field, name in FIELD_COLUMNS.items() if field != "labels"]  # fmt: skip
    columns += [
        pl.Series(name, [r.labels.get(name) for r in rows], dtype=schema[name])
        for name in task.task_names
    ]
    return pl.DataFrame(columns)


def count_outcomes(rows: Iterable[ResultRow]) -> dict[str, int]:
    """Rows per outcome, every outcome listed (in `OUTCOMES` order)."""
    counts: dict[str, int] = dict.fromkeys(OUTCOMES, 0)
    for row in rows:
        counts[row.outcome] = counts.get(row.outcome, 0) + 1
    return counts
