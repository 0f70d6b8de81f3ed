"""Whether a 0.3.3 run's rows are the ones our run would ask, and the keys that let it reuse them.

A run reuses a stored row when the row carries the judge's fingerprint and the row's prompt
hash (`judge.row_keys`). A migrated run gets both where its rows are what our run of the
migrated judge would ask: the run was made by that judge (same client and model as registered,
for the same tasks), and each row's prompt, filled in as 0.3.3 filled it (each prompt or
response column's `{name}` replaced by the value's text), is the prompt we send. 0.3.3 recorded
neither prompt nor temperature with a run: the judge as registered is taken for both.

Where that does not hold the run keeps a `migrated-0.3.3:` fingerprint (no judge's) or the row
no prompt hash, so `run` asks again, and `Reuse.problem` says why, for the migration report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from meta_evaluator.data import EvalData
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge import Judge, fingerprint, prompt_hashes, prompt_texts
from meta_evaluator.migrate._read import ResultsFile, V033Judge

__all__ = ["Reuse", "reuse_keys"]


@dataclass(frozen=True)
class Reuse:
    """The keys a migrated run's rows get, and what `run` cannot reuse of them."""

    fingerprint: str
    """The run's fingerprint: the migrated judge's (`judge.fingerprint`), or a `migrated-0.3.3:`
    one that no judge has when the run is not that judge's."""
    prompt_hashes: list[str | None]
    """Per row (in the run's order): the prompt hash our run gives it, or None where the
    0.3.3 prompt differs from ours (or the run is not the judge's)."""
    problem: str | None = None
    """What `run` does not reuse and why, as a sentence for the report; None when it reuses
    every row."""

    @property
    def reused(self) -> int:
        """How many rows `run` reuses (those with a prompt hash)."""
        return sum(h is not None for h in self.prompt_hashes)


def reuse_keys(
    record: ResultsFile,
    ids: pl.Series,
    theirs: V033Judge | None,
    ours: Judge | None,
    data: EvalData,
    task: EvalTask,
    unmatched: str,
) -> Reuse:
    """The keys of a 0.3.3 run whose rows have `ids` (the data's dtype, the run's order).

    `theirs` is the run's judge in 0.3.3's registry (None: no such judge), `ours` the judge
    migrated from it (None: not carried over); `unmatched` is the fingerprint for a run that
    is not the judge's.
    """
    nothing: list[str | None] = [None] * len(ids)
    state = record.state
    none = "`run` reuses none of its rows: "
    if theirs is None:
        return Reuse(unmatched, nothing, f"kept for scoring only: the 0.3.3 project has no "
                     f"judge {state.judge_id!r} (its labels were imported there)")  # fmt: skip
    if ours is None:
        return Reuse(unmatched, nothing, none + "its judge was not carried over, and a judge "
                     "loaded from judges-not-migrated.yaml is a new configuration")  # fmt: skip
    made = (state.llm_client, state.model_used)
    registered = (theirs.llm_client, theirs.model)
    if any(m is not None and m != r for m, r in zip(made, registered, strict=True)):
        return Reuse(unmatched, nothing, none + f"they were made by {made[0]} {made[1]!r}, "
                     f"the judge is now {theirs.llm_client} {theirs.model!r}")  # fmt: skip
    tasks = task.model_dump(mode="json")["task_schemas"]
    if state.task_schemas is not None and state.task_schemas != tasks:
        return Reuse(unmatched, nothing, none + "they answer other tasks than the project's")
    rows = _data_rows(ids, data)
    filled = _filled_as_033(theirs, task, rows)
    hashes: list[str | None] = list(prompt_hashes(ours, task, rows))
    same = [a == b for a, b in zip(filled, prompt_texts(ours, task, rows), strict=True)]
    hashes = [h if s else None for h, s in zip(hashes, same, strict=True)]
    problem = None
    if not all(same):
        why = _why_different(theirs, task, [r for r, s in zip(rows, same, strict=True) if not s])
        problem = (
            f"`run` reuses {same.count(True)} of its {len(same)} rows and asks "
            f"{same.count(False)} again, whose prompts 0.3.3 filled in differently: {why}"
        )
    return Reuse(fingerprint(ours, task), hashes, problem)


def _data_rows(ids: pl.Series, data: EvalData) -> list[dict[str, Any]]:
    """The data row of each id, in the order of `ids` (each id names a row of the data)."""
    order = pl.DataFrame({data.id_column: ids})
    return order.join(data.data, on=data.id_column, how="left", maintain_order="left").to_dicts()


def _columns_033(judge: V033Judge, task: EvalTask) -> list[str]:
    """The columns 0.3.3 filled into the judge's prompt: its task's prompt and response columns."""
    own = judge.eval_task or {}
    if "response_columns" in own:
        return [*(own.get("prompt_columns") or []), *(own.get("response_columns") or [])]
    return task.columns_shown()


def _filled_as_033(
    judge: V033Judge, task: EvalTask, rows: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Each row's prompt as 0.3.3 filled it in.

    Column by column, for its prompt and response columns only, `{column}` is replaced by
    `str(value)` (0.3.3's `Judge._substitute_template_variables`); anything else, `{{` and
    other placeholders included, is sent as written.
    """
    columns = _columns_033(judge, task)
    filled = []
    for row in rows:
        text = judge.prompt.prompt
        for column in columns:
            if column in row:
                text = text.replace("{" + column + "}", str(row[column]))
        filled.append(text.rstrip())
    return filled


def _why_different(judge: V033Judge, task: EvalTask, rows: Sequence[Mapping[str, Any]]) -> str:
    """What 0.3.3 filled in differently in these rows' prompts, in words."""
    columns = _columns_033(judge, task)
    reasons = []
    placeholders = _placeholders(judge.prompt.prompt)
    unfilled = [p for p in placeholders if p not in columns]
    if unfilled:
        named = ", ".join("{" + p + "}" for p in unfilled)
        reasons.append(f"0.3.3 sent {named} as written: not a prompt or response column")
    if "{{" in judge.prompt.prompt or "}}" in judge.prompt.prompt:
        reasons.append("0.3.3 sent the doubled braces {{ }} as written, this version as { }")
    held = [
        c for c in columns if any("{" + c + "}" in str(r.get(v)) for r in rows for v in columns)
    ]
    if held:
        named = ", ".join("{" + c + "}" for c in held)
        reasons.append(f"a value holding {named}, which 0.3.3 filled in too")
    return "; ".join(reasons) or "the prompt's text"


def _placeholders(template: str) -> list[str]:
    """The `{name}` placeholders of a template, as `string.Formatter` reads them."""
    import string

    try:
        return list(dict.fromkeys(f for _, f, _, _ in string.Formatter().parse(template) if f))
    except ValueError:  # not a template of ours (the judge was not carried over)
        return []
