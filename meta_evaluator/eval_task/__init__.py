"""The evaluation task: the columns a judge sees and the tasks it answers."""

from meta_evaluator.eval_task.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.eval_task.labels import normalize_label

__all__ = ["EvalTask", "MultiLabelSchema", "normalize_label"]
