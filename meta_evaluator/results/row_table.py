"""The row table: for one judge and one task, every data row beside what the humans said.

One row per data row, in data order (`position`, 0-based): `original_id` (the data's dtype),
the columns the task shows (`data.<column>`), the judge's label (`judge_label`), its raw answer
(`raw_answer`) and reasoning (`reasoning`: the judge's free-text tasks, such as an
explanation), `outcome`, `status`, `error_message`, each annotator's label (`human.<id>`), the
humans' majority (`human_majority`, by `stats.majority`'s rule, the one scoring uses: the most
frequent label, ties to the largest; for a multi-label task each outcome at least half of the
humans who labelled the row chose, in the task's order), how many humans labelled the row
(`humans_labelled`) and how many of them gave another label than the judge (`humans_against`),
and four flags:

- `disagree`: the judge's label is not the humans' majority (both present);
- `humans_split`: the humans who labelled the row do not all agree;
- `invalid`, `error`: the judge's row has that outcome.

Labels count as scoring counts them: a judge's or annotator's label of the task from a valid
row, or a partial row that answered the task; other rows have no label. Each label also has
its text (`judge_key`, `majority_key`, `key.<id>`): the label itself for a single-choice or
free-text task, the JSON array of a multi-label task's list (`["a","b"]`), so that labels are
compared, filtered and counted as text. The viewer (`view/`) and the report
(`reports/disagreements.py`) both read this table; it is built with polars expressions, no
Python loop over rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import polars as pl

from meta_evaluator.data import EvalData
from meta_evaluator.errors import ColumnError, TaskError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.eval_task.eval_task import TaskKind
from meta_evaluator.stats.majority import majority_labels

__all__ = [
    "DATA_PREFIX",
    "FLAGS",
    "HUMAN_PREFIX",
    "KEY_PREFIX",
    "RowSources",
    "RowTable",
    "build_row_table",
    "confusion",
    "human_columns",
    "judge_columns",
    "label_dtype",
    "label_key",
    "most_disagreed",
    "ordered_labels",
    "read_raw_answers",
    "read_row_sources",
]

#: The flags of a row, each a Boolean column of the table (never null).
FLAGS = ("disagree", "humans_split", "invalid", "error")
#: Prefix of the columns holding the data's shown columns (`data.prompt`).
DATA_PREFIX = "data."
#: Prefix of each annotator's label column (`human.ana`).
HUMAN_PREFIX = "human."
#: Prefix of each annotator's label text (`key.ana`).
KEY_PREFIX = "key."


def judge_columns(task: EvalTask, *, raw_answers: bool = True) -> list[str]:
    """The columns of a judge's results the row tables read (the raw answer with `raw_answers`)."""
    raw = ["llm_raw_response_content"] if raw_answers else []
    return ["original_id", "outcome", "status", "error_message", *raw, *task.task_names]


def human_columns(task: EvalTask) -> list[str]:
    """The columns of an annotator's labels the row tables read."""
    return ["original_id", "outcome", "status", *task.task_names]


@dataclass(frozen=True)
class RowSources:
    """The rows the tables are built from: each judge's and annotator's latest, by id.

    `judges` are the latest complete results of each judge and `humans` the latest labels of
    each annotator, as `load_all_judge_results` and `load_all_human_results` give them (only
    the columns `judge_columns` and `human_columns` name need be there).
    """

    judges: Mapping[str, pl.DataFrame]
    humans: Mapping[str, pl.DataFrame]
    judge_runs: Mapping[str, str] = field(default_factory=dict)
    """The run each judge's rows come from, by judge id (when known)."""
    human_runs: Mapping[str, str] = field(default_factory=dict)
    """The set each annotator's labels come from, by annotator id (when known)."""


def read_row_sources(
    results_dir: Path,
    annotations_dir: Path,
    task: EvalTask,
    ids: pl.Series | None = None,
    *,
    raw_answers: bool = True,
) -> RowSources:
    """Read the latest results of every judge and labels of every annotator, columns as needed.

    `ids` (the data's) order a sharded run's rows. Without `raw_answers`, the judges' raw
    answers stay on disk (the longest column of a results table). Outcomes, statuses and
    single-choice labels are read as polars Categoricals (the tables hold them as text).

    Raises:
        StateError, StorageError: A results or annotations file cannot be read.
    """
    from meta_evaluator.results.human_results import latest_annotations
    from meta_evaluator.results.judge_results import latest_results

    # the few distinct values of these are held as categories: 4 bytes a row, not 16 or more
    single = [t for t in task.task_names if task.task_kind(t) == "single"]
    codes = ["outcome", "status", *single]
    judges = latest_results(
        results_dir,
        ids,
        columns=judge_columns(task, raw_answers=raw_answers),
        categories=codes,
    )
    humans = latest_annotations(annotations_dir, columns=human_columns(task), categories=codes)
    return RowSources(
        judges={j: r.results_data for j, r in judges.items()},
        humans={h: r.results_data for h, r in humans.items()},
        judge_runs={j: r.run_id for j, r in judges.items()},
        human_runs={h: r.run_id for h, r in humans.items()},
    )


def read_raw_answers(results_dir: Path, only: pl.Series) -> dict[str, pl.DataFrame]:
    """Each judge's raw answers to the rows of `only` (ids): `original_id`, `raw_answer`.

    Only those rows are kept as the files are read: a page of rows' answers, not a million.

    Raises:
        StateError, StorageError: A results file cannot be read.
    """
    from meta_evaluator.results.judge_results import latest_results

    found = latest_results(
        results_dir, columns=["original_id", "llm_raw_response_content"], only=only
    )
    out = {}
    for judge, results in found.items():
        frame = results.results_data
        if "llm_raw_response_content" not in frame.columns:
            frame = frame.with_columns(
                pl.lit(None, dtype=pl.String).alias("llm_raw_response_content")
            )
        out[judge] = frame.select(
            "original_id", pl.col("llm_raw_response_content").cast(pl.String).alias("raw_answer")
        )
    return out


@dataclass(frozen=True)
class RowTable:
    """The row table of one judge and one task (`frame`, columns as the module says)."""

    judge_id: str
    task_name: str
    kind: TaskKind
    """The task's kind: `single`, `multilabel` (labels are lists) or `free_text`."""
    shown: tuple[str, ...]
    """The data columns shown, in order (in `frame` as `data.<column>`)."""
    annotators: tuple[str, ...]
    """The annotators, sorted (in `frame` as `human.<id>` and `key.<id>`)."""
    frame: pl.DataFrame

    def __len__(self) -> int:
        return self.frame.height


def label_dtype(kind: TaskKind) -> pl.DataType:
    """The dtype of a task's labels: a list of text for a multi-label task, else text."""
    return pl.List(pl.String) if kind == "multilabel" else pl.String()


def label_key(column: str | pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """A label as text (name it with `.alias`): itself for text, a list as its JSON array.

    Null stays null; a list's text has no spaces (`["a","b"]`).

    Example:
        >>> frame = pl.DataFrame({"l": [["a", "b"], None]})
        >>> frame.select(label_key("l", frame.schema["l"]).alias("k"))["k"].to_list()
        ['["a","b"]', None]
    """
    expr = pl.col(column) if isinstance(column, str) else column
    if not isinstance(dtype, pl.List | pl.Array):
        return expr.cast(pl.String)
    encoded = pl.struct(expr.alias("k")).struct.json_encode()
    text = encoded.str.strip_prefix('{"k":').str.strip_suffix("}")
    return pl.when(expr.is_not_null()).then(text)


def build_row_table(
    data: EvalData,
    task: EvalTask,
    task_name: str,
    judge_id: str,
    sources: RowSources,
    *,
    shown: Sequence[str] | None = None,
) -> RowTable:
    """The row table of `judge_id` on `task_name` (see the module docstring).

    Args:
        data: The project's data: its rows, in order, and the columns `task` shows.
        task: The project's task.
        task_name: One of `task.task_names`.
        judge_id: A judge of `sources.judges`.
        sources: The judges' and annotators' latest rows (`read_row_sources`).
        shown: The data columns to keep (default: those the task shows); fewer make a
            smaller table (the report keeps one).

    Raises:
        TaskError: `task_name` is not a task of `task`, or `judge_id` has no results.
        ColumnError: A results or labels table lacks `original_id`, its ids are of another
            dtype than the data's, or the task's labels of another kind than the task's (a
            table without the task's column has no labels for it).
    """
    if task_name not in task.task_names:
        raise TaskError(f"no task {task_name!r}; the tasks are {task.task_names}.")
    if judge_id not in sources.judges:
        raise TaskError(
            f"no results of judge {judge_id!r}; judges with results are {sorted(sources.judges)}."
        )
    id_dtype = data.ids.dtype
    shown = tuple(task.columns_shown() if shown is None else shown)
    rows = data.data.select(
        pl.int_range(pl.len(), dtype=pl.UInt32).alias("position"),
        data.ids.alias("original_id"),
        *(pl.col(c).alias(DATA_PREFIX + c) for c in shown),
    )
    dtype = label_dtype(task.task_kind(task_name))
    judge = _judge_part(sources.judges[judge_id], task, task_name, judge_id, id_dtype, dtype)
    ids = rows.select("original_id")
    rows = rows.hstack(_aligned(ids, judge).get_columns())
    if not _nested(dtype):  # text labels are their own text: the same column, not a copy
        rows = rows.with_columns(judge_key=rows["judge_label"])
    annotators = tuple(sorted(sources.humans))
    humans = {h: _human_part(sources.humans[h], task_name, h, ids, dtype) for h in annotators}
    for annotator, part in humans.items():
        key = part["key"] if _nested(dtype) else part["label"]
        rows = rows.hstack(
            [part["label"].alias(HUMAN_PREFIX + annotator), key.alias(KEY_PREFIX + annotator)]
        )
    rows = rows.hstack([_majority(task, task_name, dtype, humans.values(), rows.height)])
    voted = label_key("human_majority", dtype) if _nested(dtype) else pl.col("human_majority")
    rows = rows.with_columns(voted.alias("majority_key"))
    rows = rows.with_columns(_counts_and_flags(annotators))
    return RowTable(
        judge_id=judge_id,
        task_name=task_name,
        kind=task.task_kind(task_name),
        shown=shown,
        annotators=annotators,
        frame=rows,
    )


def _aligned(ids: pl.DataFrame, part: pl.DataFrame) -> pl.DataFrame:
    """`part`'s columns but `original_id`, a row per id of `ids` in its order (null if absent).

    Only the ids are joined, then each column is gathered once: joining whole frames into the
    growing table would copy the table at every join (a million rows: hundreds of MB).
    """
    columns = part.drop("original_id")
    if part.height == ids.height and part["original_id"].equals(ids["original_id"]):
        return columns  # already one row per id, in order (a judge's results usually are)
    place = ids.join(
        part.select("original_id").with_row_index("_place"),
        on="original_id",
        how="left",
        maintain_order="left",
    ).get_column("_place")
    return columns.select(pl.all().gather(place))


def _usable() -> pl.Expr:
    """Rows whose labels count: valid ones, and partial ones (the tasks they answered)."""
    return (pl.col("outcome") == "valid") | (pl.col("status") == "partial")


def _with_columns(
    frame: pl.DataFrame, wanted: Sequence[str], owner: str, id_dtype: pl.DataType
) -> pl.DataFrame:
    """`frame` with `wanted` columns (missing ones null text), ids checked against the data's."""
    if "original_id" not in frame.columns:
        raise ColumnError(f"{owner}: no column 'original_id'.", column="original_id")
    found = frame.schema["original_id"]
    if found != id_dtype:
        raise ColumnError(
            f"{owner}: ids are {found}, but {id_dtype} in the project's data; re-import them "
            "against the project's data so ids keep one type.",
            column="original_id",
        )
    missing = [c for c in wanted if c not in frame.columns]
    return frame.with_columns(pl.lit(None, dtype=pl.String).alias(c) for c in missing)


def _judge_part(
    frame: pl.DataFrame,
    task: EvalTask,
    task_name: str,
    judge_id: str,
    id_dtype: pl.DataType,
    dtype: pl.DataType,
) -> pl.DataFrame:
    """The judge's columns of the table, one row per id it answered."""
    owner = f"the results of judge {judge_id!r}"
    if task_name not in frame.columns:  # results imported for other tasks only
        frame = frame.with_columns(pl.lit(None, dtype=dtype).alias(task_name))
    frame = _with_columns(
        frame, ["outcome", "status", "error_message", "llm_raw_response_content"], owner, id_dtype
    )
    _check_label_dtype(frame, task_name, dtype, owner)
    usable = _usable()
    label = pl.when(usable).then(pl.col(task_name).cast(dtype))
    free = [
        t
        for t in task.task_names
        if t != task_name and task.task_kind(t) == "free_text" and t in frame.columns
    ]
    reasoning: pl.Expr
    if len(free) == 1:
        reasoning = pl.when(usable).then(pl.col(free[0]).cast(pl.String))
    elif free:
        parts = [pl.format(f"{t}: {{}}", pl.col(t).cast(pl.String)) for t in free]
        reasoning = pl.when(usable).then(pl.concat_str(parts, separator="\n", ignore_nulls=True))
    else:
        reasoning = pl.lit(None, dtype=pl.String)
    return frame.select(
        "original_id",
        label.alias("judge_label"),
        *([label_key(label, dtype).alias("judge_key")] if _nested(dtype) else []),
        pl.col("llm_raw_response_content").cast(pl.String).alias("raw_answer"),
        reasoning.alias("reasoning"),
        pl.col("outcome").cast(pl.String),
        pl.col("status").cast(pl.String),
        pl.col("error_message").cast(pl.String),
    ).pipe(_one_per_id, keep="first")


def _human_part(
    frame: pl.DataFrame,
    task_name: str,
    annotator: str,
    ids: pl.DataFrame,
    dtype: pl.DataType,
) -> pl.DataFrame:
    """`label` (and `key`, for lists) of one annotator, a row per id of `ids` in its order.

    The label is null where the annotator has no usable label. Rows are aligned first and
    masked after, so no filtered copy of the annotator's table is made.
    """
    owner = f"the labels of annotator {annotator!r}"
    frame = _with_columns(frame, ["outcome", "status"], owner, ids.schema["original_id"])
    if task_name not in frame.columns:  # labelled other tasks only
        frame = frame.with_columns(pl.lit(None, dtype=dtype).alias(task_name))
    _check_label_dtype(frame, task_name, dtype, owner)
    picked = frame.select("original_id", "outcome", "status", task_name)
    aligned = _aligned(ids, picked.pipe(_one_per_id, keep="last"))
    label = pl.when(_usable()).then(pl.col(task_name).cast(dtype))
    return aligned.select(
        label.alias("label"),
        *([label_key(label, dtype).alias("key")] if _nested(dtype) else []),
    )


def _nested(dtype: pl.DataType) -> bool:
    """Whether labels of `dtype` are lists (whose text is their JSON array, not themselves)."""
    return isinstance(dtype, pl.List | pl.Array)


def _majority(
    task: EvalTask, task_name: str, dtype: pl.DataType, parts: Iterable[pl.DataFrame], n: int
) -> pl.Series:
    """`human_majority`: the humans' majority of each row (`stats.majority`), null if none.

    A multi-label majority lists its outcomes in the task's order, as every stored answer does,
    so its text (`majority_key`) equals an answer's that chooses the same outcomes.
    """
    columns = [part.get_column("label") for part in parts]
    if not columns:
        return pl.Series("human_majority", [None] * n, dtype=dtype)
    order = task.allowed_labels(task_name) if _nested(dtype) else None
    return majority_labels(columns, order=order).cast(dtype).alias("human_majority")


def _one_per_id(frame: pl.DataFrame, *, keep: Literal["first", "last"]) -> pl.DataFrame:
    """`frame` with one row per `original_id` (results hold one; a copy only when not)."""
    if frame.get_column("original_id").n_unique() == frame.height:
        return frame
    return frame.unique("original_id", keep=keep, maintain_order=True)


def _check_label_dtype(frame: pl.DataFrame, task: str, dtype: pl.DataType, owner: str) -> None:
    """Raise ColumnError unless `task`'s column holds `dtype` (text may be categorical)."""
    found = frame.schema[task]
    text = found in (pl.String, pl.Categorical, pl.Null) or isinstance(found, pl.Enum)
    if found == dtype or (text and dtype == pl.String) or found == pl.Null:
        return
    raise ColumnError(
        f"{owner}: task {task!r} holds {found}, not {dtype} as the task's labels are; the task "
        "changed since these results were saved. Run or import them again.",
        column=task,
    )


def _counts_and_flags(annotators: Sequence[str]) -> list[pl.Expr]:
    """`humans_labelled`, `humans_against` and the four flags, from the wide key columns."""
    keys = [pl.col(KEY_PREFIX + a) for a in annotators]
    judge = pl.col("judge_key")
    if keys:
        labelled = pl.sum_horizontal(k.is_not_null().cast(pl.UInt32) for k in keys)
        against = pl.sum_horizontal(
            (k.is_not_null() & judge.is_not_null() & (k != judge)).fill_null(False).cast(pl.UInt32)
            for k in keys
        )
        first = pl.coalesce(keys)
        split = pl.any_horizontal((k != first).fill_null(False) for k in keys)
    else:
        labelled = against = pl.lit(0, dtype=pl.UInt32)
        split = pl.lit(False)
    outcome = pl.col("outcome")
    disagree = judge.is_not_null() & pl.col("majority_key").is_not_null()
    disagree = disagree & (judge != pl.col("majority_key"))
    return [
        labelled.cast(pl.UInt32).alias("humans_labelled"),
        against.cast(pl.UInt32).alias("humans_against"),
        disagree.fill_null(False).alias("disagree"),
        split.fill_null(False).alias("humans_split"),
        (outcome == "invalid").fill_null(False).alias("invalid"),
        (outcome == "error").fill_null(False).alias("error"),
    ]


def confusion(table: RowTable) -> pl.DataFrame:
    """Rows per (judge label, humans' majority), over rows that have both, sorted by the labels.

    Columns `judge_key`, `majority_key` (labels as text, see `label_key`) and `rows`.

    Example:
        >>> frame = pl.DataFrame({"judge_key": ["a", "a", "b", None],
        ...                       "majority_key": ["a", "b", "b", "a"]})
        >>> table = RowTable("j", "t", "single", (), (), frame)
        >>> confusion(table).rows()
        [('a', 'a', 1), ('a', 'b', 1), ('b', 'b', 1)]
    """
    both = pl.col("judge_key").is_not_null() & pl.col("majority_key").is_not_null()
    return (
        table.frame.select("judge_key", "majority_key")  # filter two columns, not the table
        .filter(both)
        .group_by("judge_key", "majority_key")
        .agg(pl.len().cast(pl.Int64).alias("rows"))
        .sort("judge_key", "majority_key")
    )


def ordered_labels(task: EvalTask, task_name: str, found: Iterable[str]) -> list[str]:
    """Labels (as text) in the order tables show them: a single-choice task's own, then others.

    The task's labels come in its order, any other label found after them, sorted.

    Example:
        >>> task = EvalTask({"r": ["yes", "no"]}, None, ["text"])
        >>> ordered_labels(task, "r", {"no", "maybe", "yes"})
        ['yes', 'no', 'maybe']
    """
    held = set(found)
    own = task.allowed_labels(task_name) if task.task_kind(task_name) == "single" else None
    first = [label for label in own or [] if label in held]
    return first + sorted(held - set(first))


def most_disagreed(table: RowTable, limit: int = 20) -> pl.DataFrame:
    """The rows where the judge's label is not the majority, most humans against it first.

    Ties: a larger share of the humans who labelled the row against the judge first, then data
    order.
    """
    share = pl.col("humans_against") / pl.col("humans_labelled")
    # the order is found on four small columns; only the rows listed are taken whole
    order = (
        table.frame.select("disagree", "humans_against", "humans_labelled", "position")
        .with_row_index("_row")
        .filter("disagree")
        .sort(
            [pl.col("humans_against"), share, pl.col("position")],
            descending=[True, True, False],
        )
        .head(limit)
        .get_column("_row")
    )
    return table.frame[order]
