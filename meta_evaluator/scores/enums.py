"""How the tasks of one metric are combined before scoring."""

from __future__ import annotations

from enum import Enum

__all__ = ["TaskAggregationMode"]


class TaskAggregationMode(Enum):
    """How a metric's tasks are turned into labels for a scorer.

    - SINGLE: one task; its label as is.
    - MULTITASK: each task scored on its own, then the scores averaged (per-task kept).
    - MULTILABEL: the tasks' labels combined into one list per row, in task order.
    """

    SINGLE = "single"
    MULTITASK = "multitask"
    MULTILABEL = "multilabel"
