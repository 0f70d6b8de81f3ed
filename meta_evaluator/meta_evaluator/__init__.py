"""meta-evaluator 0.3's import path of `MetaEvaluator`, deprecated.

Use `from meta_evaluator import MetaEvaluator`; the name is served from there with a
`MetaEvaluatorDeprecationWarning`, so 0.3's scripts run.
"""

from meta_evaluator.errors import moved_names

__all__: list[str] = []  # nothing new is exported here; the old names warn

__getattr__ = moved_names(__name__, {"MetaEvaluator": "meta_evaluator"})
