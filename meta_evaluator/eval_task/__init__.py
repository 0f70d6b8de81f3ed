"""The evaluation task: the columns a judge sees, the tasks it answers, and the label rule."""

from meta_evaluator.eval_task.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.eval_task.labels import LabelCheck, check_label, check_values, normalize_label

__all__ = [
    "EvalTask",
    "LabelCheck",
    "MultiLabelSchema",
    "check_label",
    "check_values",
    "normalize_label",
]
