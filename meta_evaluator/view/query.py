"""Which rows a list asks for (`RowQuery`), read from a request's parameters and applied.

Parameters (each once but `flag`; unknown ones, such as `token`, are ignored):

- `judge`: a judge with a complete run (default: the first, sorted);
- `task`: a task with labels, or any task if none has (default: the first);
- `flag`: `disagree`, `humans_split`, `invalid` or `error`; repeated, rows with all of them;
- `judge_label`, `human_label`: the judge's label, the humans' majority (a multi-label answer
  as its JSON array, `["a","b"]`): a cell of the confusion matrix;
- `q`: text found in the shown columns, the labels, the raw answer or the reasoning, in any
  case (at most `MAX_QUERY` characters);
- `sort`: `position` (data order, the default), `id`, `judge_label`, `human_majority`,
  `humans_against`, `outcome` or `status`, with `-` first for descending (ties in data order);
- `page`: 1, 2, ... (a page past the last is empty); `page_size`: 1 to 500 (default 50).

A value outside these raises `QueryError` naming the parameter and what it takes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from meta_evaluator.errors import QueryError
from meta_evaluator.results.row_table import FLAGS

__all__ = [
    "MAX_PAGE_SIZE",
    "MAX_QUERY",
    "PAGE_SIZE",
    "PARAMETERS",
    "SORTS",
    "LabelRule",
    "RowPage",
    "RowQuery",
    "apply_query",
    "parse_judge_task",
    "parse_row_query",
    "sort_order",
]

PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
#: The longest search text (characters).
MAX_QUERY = 500
#: Sort names -> the table column sorted by.
SORTS: Mapping[str, str] = {
    "position": "position",
    "id": "original_id",
    "judge_label": "judge_key",
    "human_majority": "majority_key",
    "humans_against": "humans_against",
    "outcome": "outcome",
    "status": "status",
}
#: The parameters `parse_row_query` reads (the pages keep them in their links).
PARAMETERS = ("judge", "task", "flag", "judge_label", "human_label", "q", "sort", "page",
              "page_size")  # fmt: skip


@dataclass(frozen=True)
class RowQuery:
    """A list of rows as asked: whose, which, in which order, which page."""

    judge: str
    task: str
    flags: tuple[str, ...] = ()
    judge_label: str | None = None
    human_label: str | None = None
    q: str | None = None
    sort: str = "position"
    page: int = 1
    page_size: int = PAGE_SIZE

    def params(self, **changes: Any) -> list[tuple[str, str]]:
        """The query as request parameters (defaults left out), with `changes` made.

        `changes` name fields of the query (`flags=()`, `page=2`).
        """
        unknown = set(changes) - set(self.__dataclass_fields__)
        if unknown:
            raise TypeError(f"RowQuery.params: no field {sorted(unknown)}")
        values = {**{f: getattr(self, f) for f in self.__dataclass_fields__}, **changes}
        values["flag"] = values.pop("flags")
        defaults = {"sort": "position", "page": 1, "page_size": PAGE_SIZE}
        out: list[tuple[str, str]] = []
        for name in PARAMETERS:
            value = values[name]
            if value is None or value == defaults.get(name):
                continue
            for item in value if isinstance(value, tuple | list) else [value]:
                out.append((name, str(item)))
        return out


@dataclass(frozen=True)
class RowPage:
    """One page of a list: the rows matched (`total`) and those on the page (`rows`)."""

    total: int
    page: int
    page_size: int
    rows: pl.DataFrame

    @property
    def pages(self) -> int:
        """Pages in all (at least 1)."""
        return max(1, -(-self.total // self.page_size))


def _one(params: Mapping[str, Sequence[str]], name: str) -> str | None:
    values = params.get(name) or []
    if len(values) > 1:
        raise QueryError(f"{name}: give it once; got {len(values)} values.", field=name)
    return values[0] if values else None


def _choice(name: str, value: str | None, allowed: Sequence[str], default: str) -> str:
    if value is None:
        return default
    if value not in allowed:
        shown = ", ".join(repr(a) for a in allowed[:30])
        more = f" and {len(allowed) - 30} more" if len(allowed) > 30 else ""
        raise QueryError(
            f"{name}: {value!r} is not one of {shown}{more}.", field=name, allowed=allowed
        )
    return value


def _number(name: str, value: str | None, default: int, low: int, high: int | None) -> int:
    if value is None:
        return default
    top = f" to {high}" if high is not None else " or more"
    wanted = f"{name}: give a whole number {low}{top}; got {value!r}."
    digits = value[1:] if value.startswith("-") else value
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 9:
        raise QueryError(wanted, field=name)
    number = int(value)
    if number < low or (high is not None and number > high):
        raise QueryError(wanted, field=name)
    return number


@dataclass(frozen=True)
class LabelRule:
    """What `judge_label` and `human_label` may be for one judge and task.

    A single-choice task takes one of `labels` (the task's, and any other found in the
    results); a multi-label task the JSON array of some of `labels` (`["a","b"]`); a free-text
    task (`free`) any text.
    """

    labels: tuple[str, ...] = ()
    multilabel: bool = False
    free: bool = False

    def check(self, name: str, value: str | None) -> str | None:
        """`value` if this rule allows it (None stays None).

        Raises:
            QueryError: It does not (naming `name` and the labels allowed).
        """
        if value is None or self.free:
            return value
        if not self.multilabel:
            return _choice(name, value, self.labels, "")
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        if isinstance(parsed, list) and all(v is None or v in self.labels for v in parsed):
            return value
        raise QueryError(
            f"{name}: {value!r} is not a JSON array of labels of {list(self.labels)} "
            '(for example ["a","b"]; [] for none).',
            field=name,
            allowed=self.labels,
        )


def parse_judge_task(
    params: Mapping[str, Sequence[str]], *, judges: Sequence[str], tasks: Sequence[str]
) -> tuple[str, str]:
    """The `judge` and `task` parameters (defaults: the first of each).

    Raises:
        QueryError: Either is given twice or is not one of those allowed; no judge at all.
    """
    if not judges:
        raise QueryError(
            "judge: no judge has a complete run to view; run one (meta-evaluator run).",
            field="judge",
        )
    judge = _choice("judge", _one(params, "judge"), judges, judges[0])
    task = _choice("task", _one(params, "task"), tasks, tasks[0])
    return judge, task


def parse_row_query(
    params: Mapping[str, Sequence[str]],
    *,
    judges: Sequence[str],
    tasks: Sequence[str],
    rule: Callable[[str, str], LabelRule],
) -> RowQuery:
    """The `RowQuery` `params` ask for (see the module docstring).

    Args:
        params: The request's query parameters (name -> values).
        judges: The judges that may be asked for (the first is the default).
        tasks: The tasks that may be asked for (the first is the default).
        rule: The label rule of a judge and task (called once both are known).

    Raises:
        QueryError: A parameter given twice (but `flag`) or with a value it does not take;
            no judge to list rows of.
    """
    judge, task = parse_judge_task(params, judges=judges, tasks=tasks)
    flags = tuple(_choice("flag", f, FLAGS, "") for f in params.get("flag") or [])
    q = _one(params, "q")
    if q is not None and len(q) > MAX_QUERY:
        raise QueryError(f"q: at most {MAX_QUERY} characters; got {len(q)}.", field="q")
    sorts = [*SORTS, *(f"-{s}" for s in SORTS)]
    sort = _choice("sort", _one(params, "sort"), sorts, "position")
    page = _number("page", _one(params, "page"), 1, 1, None)
    page_size = _number("page_size", _one(params, "page_size"), PAGE_SIZE, 1, MAX_PAGE_SIZE)
    labels = rule(judge, task)
    return RowQuery(
        judge=judge,
        task=task,
        flags=tuple(dict.fromkeys(flags)),
        judge_label=labels.check("judge_label", _one(params, "judge_label")),
        human_label=labels.check("human_label", _one(params, "human_label")),
        q=q if q and q.strip() else None,
        sort=sort,
        page=page,
        page_size=page_size,
    )


def sort_order(frame: pl.DataFrame, sort: str) -> pl.Series | None:
    """Row numbers of `frame` in the order `sort` names (ties in data order); None: as is.

    Computed once per table and sort (`RowStore.order`): a page then gathers its rows.
    """
    name = sort.removeprefix("-")
    if sort == "position":
        return None
    descending = sort.startswith("-")
    return frame.select(
        pl.arg_sort_by(SORTS[name], descending=descending, nulls_last=True, maintain_order=True)
    ).to_series()


def apply_query(
    frame: pl.DataFrame,
    query: RowQuery,
    search: pl.Series | None,
    order: pl.Series | None = None,
) -> RowPage:
    """The page of `frame` (a row table's) that `query` asks for.

    `search` is the table's search text (`RowStore.search_text`), needed with `query.q`;
    `order` the rows' order for `query.sort` (`sort_order`), computed here when not given.
    Only the rows of the page are taken from `frame`: a filter finds row numbers, not rows.
    """
    conditions = [pl.col(f) for f in query.flags]
    if query.judge_label is not None:
        conditions.append(pl.col("judge_key") == query.judge_label)
    if query.human_label is not None:
        conditions.append(pl.col("majority_key") == query.human_label)
    mask: pl.Series | None = None
    if conditions:
        mask = frame.select(pl.all_horizontal(conditions).fill_null(False)).to_series()
    if query.q is not None:
        if search is None:
            raise ValueError("apply_query: a search needs the table's search text")
        found = search.str.contains(query.q.lower(), literal=True)
        mask = found if mask is None else mask & found
    if order is None and query.sort != "position":
        order = sort_order(frame, query.sort)
    offset = (query.page - 1) * query.page_size
    if order is None and mask is None:
        rows = frame.slice(offset, query.page_size)
        return RowPage(frame.height, query.page, query.page_size, rows)
    if order is None:
        assert mask is not None
        chosen = mask.arg_true()
    else:
        chosen = order if mask is None else order.filter(mask.gather(order))
    page = chosen.slice(offset, query.page_size)
    return RowPage(chosen.len(), query.page, query.page_size, frame[page])
