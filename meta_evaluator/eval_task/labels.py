"""The one rule by which answers and allowed labels are compared (both sides, always).

Used for a judge's answers (`judge/`), imported results and annotations (`results/`) and the
annotation page (`annotate/`), so a label means the same wherever it comes from.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from meta_evaluator._util import shown

if TYPE_CHECKING:
    from meta_evaluator.eval_task.eval_task import EvalTask

__all__ = [
    "LabelCheck",
    "NormalisedLabels",
    "check_frame",
    "check_label",
    "check_values",
    "label_vector",
    "normalised_labels",
    "normalize_label",
]

_SPLIT = re.compile(r"[,;\n]")
_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""Every character `str.isspace` accepts: what `str.strip()` removes, for polars' strip."""


def normalize_label(text: str) -> str:
    r"""Compose accents (NFC), collapse white space and fold case, so equal-looking labels match.

    Example:
        >>> normalize_label(" Not  Rejection\n")
        'not rejection'
        >>> normalize_label("cafe\u0301") == normalize_label("CAFÉ")
        True
    """
    return " ".join(unicodedata.normalize("NFC", text).split()).casefold()


@dataclass(frozen=True)
class LabelCheck:
    """The labels read from one response, the row's outcome and its precise status."""

    outcome: Literal["valid", "invalid"]
    status: str
    labels: dict[str, Any] = field(default_factory=dict)
    error_message: str | None = None


def check_values(
    raw: Mapping[str, Any],
    task: EvalTask,
    *,
    truncated: bool = False,
    required: Sequence[str] | None = None,
) -> LabelCheck:
    """Check each task's value in `raw` (task name → value, as answered or imported).

    The status names why a required task failed; the tasks that are fine are kept either way.
    `required` replaces the task's required tasks (imports of some tasks only).
    """
    labels: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for name in task.task_names:
        value, problem = check_label(task, name, raw.get(name))
        if problem is None:
            labels[name] = value
        else:
            problems[name] = problem
    needed = task.get_required_tasks() if required is None else required
    missing = [t for t in needed if t in problems]
    if not missing:
        return LabelCheck("valid", "success", labels)
    message = "; ".join(f"{t}: {problems[t]}" for t in missing)
    if any("not allowed" in problems[t] for t in missing):
        status = "label_not_allowed"
    elif labels:
        status = "partial"
    elif truncated:
        status = "truncated"
    else:
        status = "parsing_error"
    return LabelCheck("invalid", status, labels, message)


def _as_text(value: Any) -> Any:
    """Numbers and booleans as a label's text (`1` for label "1", `true`); lists item by item."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return [_as_text(v) for v in value]
    return value


def check_label(task: EvalTask, name: str, value: Any) -> tuple[Any, str | None]:
    """The canonical value of one task, or why it is unusable."""
    if value is None:
        return None, "missing"
    value = _as_text(value)
    allowed = task.allowed_labels(name)
    if allowed is None:
        if not isinstance(value, str) or not value.strip():
            return None, "empty free text"
        return value.strip(), None
    canonical = _lookup(tuple(allowed))
    if task.task_kind(name) == "multilabel":
        items = _label_list(value)
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            return None, f"expected a list of labels, got {shown(value)}"
        items = [i for i in items if i.strip()]
        if any(normalize_label(i) == _FALSE for i in items):  # 0.3.3's vector: a slot each
            return _from_vector(items, allowed)
        unknown = [i for i in items if normalize_label(i) not in canonical]
        if unknown:
            return None, f"label(s) {shown(unknown)} not allowed (allowed: {allowed})"
        chosen = {canonical[normalize_label(i)] for i in items}
        return [label for label in allowed if label in chosen], None
    if not isinstance(value, str):
        return None, f"expected a label, got {shown(value)}"
    exact = canonical.get(value)  # most answers are a label as written: no need to normalise
    if exact is not None:
        return exact, None
    key = normalize_label(value)
    if key not in canonical:
        return None, f"label {shown(value.strip())} not allowed (allowed: {allowed})"
    return canonical[key], None


@dataclass(frozen=True)
class NormalisedLabels:
    """Labels that match an allowed label only once normalised, as `normalised_labels` finds."""

    count: int
    """Cells (a row's label for a task) stored as an allowed label written otherwise."""
    examples: tuple[tuple[str, str], ...] = ()
    """A few distinct spellings and the label each became (`('HELPFUL', 'helpful')`)."""

    def describe(self) -> str:
        """`3 labels normalised ('HELPFUL' → 'helpful', ' helpful ' → 'helpful')`."""
        shown_examples = ", ".join(f"{shown(a)} → {shown(b)}" for a, b in self.examples)
        return f"{self.count} label{'s' if self.count != 1 else ''} normalised ({shown_examples})"


def normalised_labels(
    frame: pl.DataFrame, task: EvalTask, tasks: Sequence[str] | None = None, *, examples: int = 3
) -> NormalisedLabels:
    """The labels of `frame` (task name → column) accepted only once normalised.

    A label written `HELPFUL` or ` helpful ` is stored as the allowed `helpful`
    (`normalize_label`: case, white space, accent encoding); this counts such cells of the
    tasks with allowed labels (of `tasks`, default every task), for an import to report.
    Numbers read as their text (`1` for the label `"1"`) and separators between multi-label
    items do not count.

    Example:
        >>> from meta_evaluator.eval_task import EvalTask
        >>> task = EvalTask(task_schemas={"ok": ["yes", "no"]}, response_columns=["r"])
        >>> found = normalised_labels(pl.DataFrame({"ok": ["yes", "YES", " no", "maybe"]}), task)
        >>> found.count, found.examples
        (2, (('YES', 'yes'), (' no', 'no')))
    """
    count = 0
    found: list[tuple[str, str]] = []
    for name in tasks if tasks is not None else task.task_names:
        allowed = task.allowed_labels(name) if name in task.task_names else None
        if allowed is None or name not in frame.columns:
            continue
        values = frame.group_by(name, maintain_order=True).len().rows()  # few distinct
        for value, rows in values:
            label, problem = check_label(task, name, value)
            multilabel = task.task_kind(name) == "multilabel"
            if (
                problem is None
                and label is not None
                and not _as_written(value, allowed, multilabel)
            ):
                count += rows
                if len(found) < examples:
                    stored = label if isinstance(label, str) else ", ".join(label)
                    found.append((str(value), stored))
    return NormalisedLabels(count, tuple(found))


def _as_written(value: Any, allowed: Sequence[str], multilabel: bool) -> bool:
    """Whether `value` names allowed labels exactly as written (a 0.3.3 vector's FALSE too)."""
    text = _as_text(value)
    if isinstance(text, str) and text in allowed:
        return True
    if not multilabel:
        return False
    items = _label_list(text)
    if not isinstance(items, list):
        return False
    return all(
        isinstance(i, str) and (i.strip() in allowed or i.strip() in ("", "FALSE")) for i in items
    )


_FALSE = "false"
"""`FALSE` normalised: what meta-evaluator 0.3.3 writes in a multi-label slot not chosen."""


def _label_list(value: Any) -> Any:
    """A multi-label answer as a list (or as it is, for the caller to refuse).

    Text reads as JSON when it is a JSON list (`["a", "FALSE"]`: how 0.3.3 wrote a vector
    into a CSV cell), else it is split at `,`, `;` and line breaks.
    """
    if not isinstance(value, str):
        return value
    if value.lstrip().startswith("["):
        try:
            decoded = json.loads(value)
        except ValueError:
            decoded = None
        if isinstance(decoded, list):
            return decoded
    return _SPLIT.split(value)


def _from_vector(slots: list[str], allowed: list[str]) -> tuple[Any, str | None]:
    """The labels chosen in a vector as meta-evaluator 0.3.3 stored it, or why it is unusable.

    Such a vector has one slot per outcome, in the schema's order, each the outcome or `FALSE`.
    """
    if len(slots) != len(allowed) or any(
        normalize_label(slot) not in (_FALSE, normalize_label(label))
        for slot, label in zip(slots, allowed, strict=False)
    ):
        return None, (
            f"{shown(slots)} holds 'FALSE', so it reads as a vector of meta-evaluator 0.3.3, "
            f"which needs one slot per outcome in this order: each {allowed} or 'FALSE'"
        )
    return [label for slot, label in zip(slots, allowed, strict=True) if normalize_label(slot)
            != _FALSE], None  # fmt: skip


def label_vector(labels: Sequence[str] | None, outcomes: Sequence[str]) -> list[str] | None:
    """A multi-label task's chosen labels as meta-evaluator 0.3.3 stored them (a vector).

    One slot per outcome, in order: its name when chosen, `FALSE` when not (None stays None).

    Example:
        >>> label_vector(["fraud"], ["violence", "fraud", "hate"])
        ['FALSE', 'fraud', 'FALSE']
    """
    if labels is None:
        return None
    chosen = set(labels)
    return [label if label in chosen else "FALSE" for label in outcomes]


@functools.lru_cache(maxsize=256)
def _lookup(allowed: tuple[str, ...]) -> dict[str, str]:
    """Normalised label -> allowed label, and each allowed label to itself; built once per task.

    The labels of a task differ once normalised (EvalTask refuses others), so the two kinds of
    key never send one text to two labels.
    """
    return {normalize_label(a): a for a in allowed} | {a: a for a in allowed}


def check_frame(
    frame: pl.DataFrame, task: EvalTask, *, required: Sequence[str] | None = None
) -> pl.DataFrame:
    """`check_values` of every row of `frame` (task name → column), as columns.

    The result has a row per row of `frame`, in its order: `outcome`, `status`,
    `error_message`, then a column per task of `task` with its canonical label (null when
    unusable or absent; a list for a multi-label task). Equal, row for row, to
    `check_values(row, task, required=required)`. A task without a column is missing in
    every row.

    `check_label` runs once per distinct value of a column (a label column has few), and its
    answers are joined back to the rows; free text in a text column is checked by polars.
    """
    checked = pl.DataFrame({name: _check_column(frame, task, name) for name in task.task_names})
    checked = checked.unnest(task.task_names, separator="\0")
    needed = task.get_required_tasks() if required is None else list(required)
    needed = [t for t in needed if t in task.task_names]
    problem = {t: pl.col(f"{t}\0problem") for t in task.task_names}
    missing = [problem[t].is_not_null() for t in needed]
    invalid = pl.any_horizontal(missing) if missing else pl.lit(False)
    message = pl.concat_str(
        [pl.lit(f"{t}: ") + problem[t] for t in needed] or [pl.lit(None, pl.String())],
        separator="; ",
        ignore_nulls=True,
    )
    not_allowed = [
        problem[t].str.contains("not allowed", literal=True).fill_null(False) for t in needed
    ]
    any_label = pl.any_horizontal(p.is_null() for p in problem.values())
    status = (
        pl.when(~invalid)
        .then(pl.lit("success"))
        .when(pl.any_horizontal(not_allowed) if not_allowed else pl.lit(False))
        .then(pl.lit("label_not_allowed"))
        .when(any_label)
        .then(pl.lit("partial"))
        .otherwise(pl.lit("parsing_error"))
    )
    return checked.select(
        pl.when(invalid).then(pl.lit("invalid")).otherwise(pl.lit("valid")).alias("outcome"),
        status.alias("status"),
        pl.when(invalid).then(message).otherwise(pl.lit(None, pl.String())).alias("error_message"),
        *(pl.col(f"{t}\0label").alias(t) for t in task.task_names),
    )


def _check_column(frame: pl.DataFrame, task: EvalTask, name: str) -> pl.Series:
    """A struct per row of `frame`'s column `name`: `label` and `problem` (`check_label`)."""
    dtype = pl.List(pl.String()) if task.task_kind(name) == "multilabel" else pl.String()
    if name not in frame.columns:
        missing = pl.struct(pl.lit(None, dtype).alias("label"), pl.lit("missing").alias("problem"))
        return pl.select(missing.alias(name)).to_series().new_from_index(0, frame.height)
    column = frame.get_column(name)
    if task.allowed_labels(name) is None and column.dtype == pl.String():
        stripped = pl.col(name).str.strip_chars(_WHITESPACE)
        return frame.select(
            pl.struct(
                pl.when(stripped != "").then(stripped).alias("label"),
                pl.when(pl.col(name).is_null())
                .then(pl.lit("missing"))
                .when(stripped == "")
                .then(pl.lit("empty free text"))
                .alias("problem"),
            ).alias(name)
        ).to_series()
    values = column.unique(maintain_order=True).rename("value")
    answers = [check_label(task, name, v) for v in values.to_list()]
    found = pl.DataFrame(
        [
            values,
            pl.Series("label", [a[0] for a in answers], dtype=dtype),
            pl.Series("problem", [a[1] for a in answers], dtype=pl.String()),
        ]
    )
    return (
        column.rename("value")
        .to_frame()
        .join(found, on="value", how="left", maintain_order="left", nulls_equal=True)
        .select(pl.struct("label", "problem").alias(name))
        .to_series()
    )
