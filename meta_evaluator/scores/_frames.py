"""From results to the frames a scorer receives: usable labels only, ids aligned, one shape.

judge frame: `original_id`, `label`; human frame: `original_id`, `human_id`, `label`. Only
valid labels pass: valid rows, and the tasks a `partial` row did answer well.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import polars as pl

from meta_evaluator.errors import ScoringError
from meta_evaluator.results.reasons import summarize_errors
from meta_evaluator.scores.enums import TaskAggregationMode

__all__ = [
    "first_label",
    "human_frame",
    "judge_frame",
    "labels_as_text",
    "no_valid_rows",
    "require_columns",
    "restrict_to_common_ids",
    "usable_rows",
]


def usable_rows(frame: pl.DataFrame) -> pl.Expr:
    """Rows a scorer reads labels from: valid ones, and partial ones (their good tasks)."""
    valid = pl.col("outcome") == "valid"
    if "status" in frame.columns:
        valid = valid | (pl.col("status") == "partial")
    return valid


def _usable(
    rows: pl.LazyFrame, frame: pl.DataFrame, tasks: Sequence[str], *, include_invalid: bool
) -> pl.LazyFrame:
    """The rows of `frame` (as `rows`) whose labels of `tasks` may be scored (all present)."""
    present = pl.all_horizontal([pl.col(t).is_not_null() for t in tasks])
    valid = usable_rows(frame)
    if include_invalid:
        # Every answered row: invalid ones, and valid ones that left an optional task empty.
        # An invalid row's labels are not answers (only a partial row's good tasks are).
        answered = rows.filter(pl.col("outcome").is_in(["valid", "invalid"]))
        return answered.with_columns(
            pl.when(valid).then(pl.col(t)).otherwise(None).alias(t) for t in tasks
        )
    return rows.filter(valid & present)


def _label(tasks: Sequence[str], mode: TaskAggregationMode, schema: pl.Schema) -> pl.Expr:
    """The `label` expression: the task's column, or the tasks' values as one list."""
    if mode is not TaskAggregationMode.MULTILABEL:
        return pl.col(tasks[0]).alias("label")
    parts = []
    for t in tasks:
        if isinstance(schema[t], pl.List):
            # a multi-label task inside a combined label: its set, as sorted JSON text
            parts.append(
                pl.col(t).map_elements(lambda v: json.dumps(sorted(v)), return_dtype=pl.String)
            )
        else:
            parts.append(pl.col(t).cast(pl.String))
    return pl.concat_list(parts).alias("label")


def require_columns(
    frame: pl.DataFrame,
    columns: Collection[str],
    owner: str,
    fix: str,
    *,
    hide: Collection[str] = (),
) -> None:
    """Raise ScoringError naming the `columns` that `frame` lacks, those it has, and `fix`.

    `owner` names the frame (`the results of judge 'gpt4'`); columns in `hide` are not listed
    among those it has.
    """
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        held = [c for c in frame.columns if c not in hide]
        raise ScoringError(f"{owner} has no column(s) {missing} (it has {held}); {fix}.")


_META = {"original_id", "judge_id", "annotator_id", "run_id", "outcome", "status"}


def _check_tasks(frame: pl.DataFrame, tasks: Sequence[str], owner: str) -> None:
    fix = "check the metric's task_names"
    require_columns(frame, tasks, f"the results of {owner}", fix, hide=_META)


def judge_frame(
    frame: pl.DataFrame,
    tasks: Sequence[str],
    mode: TaskAggregationMode,
    *,
    judge_id: str,
    include_invalid: bool = False,
    result_columns: Sequence[str] = (),
) -> pl.DataFrame:
    """`original_id`, `label` (and `outcome`, `status`, the raw response with invalid rows).

    `result_columns` are passed on too, those the results have (`BaseScorer.result_columns`).
    """
    _check_tasks(frame, tasks, f"judge {judge_id!r}")
    columns: list[Any] = ["original_id", _label(tasks, mode, frame.schema)]
    if include_invalid:
        columns += ["outcome"] + (["status"] if "status" in frame.columns else [])
        if "llm_raw_response_content" in frame.columns:
            columns.append("llm_raw_response_content")
    named = {c for c in columns if isinstance(c, str)}
    columns += [c for c in dict.fromkeys(result_columns) if c in frame.columns and c not in named]
    # Lazily, so that only the columns selected are filtered (not the error messages, say).
    rows = _usable(frame.lazy(), frame, tasks, include_invalid=include_invalid)
    return rows.select(columns).collect()


def no_valid_rows(frame: pl.DataFrame, judge_id: str, *, include_invalid: bool) -> str | None:
    """Why a judge cannot be scored at all: not one valid row, and what its rows are instead.

    `judge 'gpt4' has no valid rows (400 errors: 400× connection refused at 127.0.0.1:9); ...`.
    None when some row is valid (or partial), or invalid rows count for this scorer.
    """
    outcome = pl.col("outcome")
    if frame.filter(usable_rows(frame)).height:
        return None
    invalid = frame.filter(outcome == "invalid").height
    if include_invalid and invalid:
        return None
    parts = [f"{invalid} invalid"] if invalid else []
    errors = summarize_errors(frame)
    if errors is not None:
        parts.append(errors)
    what = "; ".join(parts) or "no rows at all"
    return (
        f"judge {judge_id!r} has no valid rows ({what}); fix the cause, then run the judge "
        "again (`run --retry error` asks the error rows again)."
    )


def human_frame(
    humans: Mapping[str, pl.DataFrame], tasks: Sequence[str], mode: TaskAggregationMode
) -> pl.DataFrame:
    """`original_id`, `human_id`, `label` of every annotator, in annotator order."""
    parts = []
    for human_id, frame in humans.items():
        _check_tasks(frame, tasks, f"annotator {human_id!r}")
        rows = _usable(frame.lazy(), frame, tasks, include_invalid=False)
        parts.append(
            rows.select(
                "original_id",
                # a category: 4 bytes a row, where text takes 16 (compares as text does)
                pl.lit(human_id, dtype=pl.Categorical).alias("human_id"),
                _label(tasks, mode, frame.schema),
            ).collect()
        )
    if not parts:
        return pl.DataFrame(
            schema={"original_id": pl.Int64, "human_id": pl.Categorical, "label": pl.String}
        )
    # One chunk per annotator, not copied into one (a million rows each: 20 MB saved apiece).
    return pl.concat(parts, how="vertical_relaxed", rechunk=False)


def restrict_to_common_ids(
    judge: pl.DataFrame,
    humans: pl.DataFrame,
    *,
    judge_id: str,
    task: str,
    human_ids: pl.Series | None = None,
    humans_whole: bool = False,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Both frames limited to ids that both have; raise when the id types differ or none align.

    `human_ids` are the distinct ids of `humans` when the caller has them (they are the same for
    every judge); each frame is filtered only when it has ids the other lacks, and `humans`
    not at all with `humans_whole` (for a scorer that keeps the common ids by itself).

    Raises:
        ScoringError: Ids of different dtypes, or no id in common.
    """
    left, right = judge.schema["original_id"], humans.schema["original_id"]
    if judge.height and humans.height and left != right:
        raise ScoringError(
            f"judge {judge_id!r}, task {task!r}: judge ids are {left}, human ids are {right}; "
            "import both against the same project data so ids keep one type."
        )
    if human_ids is None:
        human_ids = humans.get_column("original_id").unique()
    judge_ids = judge.get_column("original_id")
    shared = judge_ids.is_in(human_ids.implode())
    kept = judge_ids.filter(shared).unique()
    if kept.len() == 0:
        raise ScoringError(
            f"judge {judge_id!r}, task {task!r}: 0 of {judge_ids.n_unique()} "
            f"ids with a usable judge label have a usable human label "
            f"({human_ids.len()} ids annotated)."
        )
    if not shared.all():
        judge = judge.filter(shared)
    if kept.len() < human_ids.len() and not humans_whole:
        humans = humans.filter(pl.col("original_id").is_in(kept.implode()))
    return judge, humans


def labels_as_text(frame: pl.DataFrame) -> pl.DataFrame:
    """A copy of `frame` whose columns held as categories are text again.

    What a scorer written against the BaseScorer contract expects: text it may use `.str` on
    (labels, `human_id`, an invalid row's `outcome` and `status`), in a frame of its own (the
    copy shares the columns' memory, but a change made in place stays in it).
    """
    held = [c for c, dtype in frame.schema.items() if isinstance(dtype, pl.Categorical | pl.Enum)]
    return frame.with_columns(pl.col(held).cast(pl.String)) if held else frame.clone()


def first_label(frame: pl.DataFrame) -> Any:
    """The first non-null label (what `can_score_task` is shown), or None."""
    labels = frame.get_column("label").drop_nulls().head(1).to_list()
    return labels[0] if labels else None
