"""A section of `project.yaml` that has problems, read as far as it can be, for the checks after it.

A section with a problem is reported and never built into a project. But the checks that
depend on it (the data's ids for the files of labels, the task's columns and tasks) would
stay silent until the next round, so `recovered` reads the section the way it was most likely
meant, for those checks alone: a misspelt key that resembles one known key (`id_colum`, the
same "did you mean" its problem names) is read as that key, and a field whose value is wrong is
replaced as `repairs` says (an optional setting takes its default, an unusable name a stand-in).
Problems that only this reading finds (`task_schema` misspelt hid that `required_tasks` names
no task) are returned, to be reported with the others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from meta_evaluator._validation import ConfigModel, closest_key
from meta_evaluator.errors import MetaEvaluatorError

__all__ = ["DROP", "Repair", "recovered"]

M = TypeVar("M", bound=ConfigModel)

DROP = object()
"""What a repair returns to leave a field out (its default holds)."""

Repair = Callable[[Any, dict[str, Any]], Any]
"""(the field's wrong value, the section's fields) → the value to check with, or `DROP`."""


def recovered(
    model: type[M], value: Any, repairs: Mapping[str, Repair]
) -> tuple[M | None, list[dict[str, Any]]]:
    """`value` read as `model` as it was most likely meant, and the problems found on the way.

    None when it cannot be: a key resembles no known key (or one given too), or a field whose
    value is wrong has no repair. The problems' `loc` is inside the section (`required_tasks`).
    """
    if not isinstance(value, dict):
        return None, []
    known = list(model.model_fields)
    fields = {key: item for key, item in value.items() if key in known}
    for key, item in value.items():
        if key in known:
            continue
        meant = closest_key(key, known, model.key_synonyms)
        if meant is None or meant in fields:
            return None, []
        fields[meant] = item
    try:
        return model(**fields), []
    except MetaEvaluatorError as exc:
        found = list(exc.errors)
    wrong = {_field_of(problem["loc"]) for problem in found}
    if not wrong <= set(repairs):
        return None, found
    for name in wrong:
        repaired = repairs[name](fields.get(name), fields)
        if repaired is DROP:
            fields.pop(name, None)
        else:
            fields[name] = repaired
    try:
        return model(**fields), found
    except MetaEvaluatorError:
        return None, found


def _field_of(loc: object) -> str:
    """The section's field a problem is about: `required_tasks` of `required_tasks[0]`."""
    return str(loc).split(".")[0].split("[")[0]
