"""The evaluation task: the columns a judge sees, the tasks it answers, and the label rule."""

from meta_evaluator.eval_task.eval_task import EvalTask, MultiLabelSchema, answer_key
from meta_evaluator.eval_task.labels import (
    LabelCheck,
    check_label,
    check_values,
    label_vector,
    normalize_label,
)

__all__ = [
    "EvalTask",
    "LabelCheck",
    "MultiLabelSchema",
    "answer_key",
    "check_label",
    "check_values",
    "label_vector",
    "normalize_label",
]
