"""The evaluation task: the columns a judge sees, the tasks it answers, and the label rule."""

from meta_evaluator.errors import warn_deprecated
from meta_evaluator.eval_task.eval_task import EvalTask, MultiLabelSchema, answer_key
from meta_evaluator.eval_task.labels import (
    LabelCheck,
    NormalisedLabels,
    check_label,
    check_values,
    label_vector,
    normalised_labels,
    normalize_label,
)

__all__ = [
    "EvalTask",
    "LabelCheck",
    "MultiLabelSchema",
    "NormalisedLabels",
    "answer_key",
    "check_label",
    "check_values",
    "label_vector",
    "normalised_labels",
    "normalize_label",
]


def __getattr__(name: str) -> object:
    if name == "sanitize_task_name":  # 0.3's name of answer_key, for its scripts
        warn_deprecated(
            "`meta_evaluator.eval_task.sanitize_task_name`",
            "use `meta_evaluator.eval_task.answer_key`",
            kind="a name",
        )
        globals()[name] = answer_key  # `from ... import` looks twice: warn once
        return answer_key
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
