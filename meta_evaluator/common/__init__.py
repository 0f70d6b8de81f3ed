"""meta-evaluator 0.3's `meta_evaluator.common`, deprecated.

Its `models.Prompt` is `meta_evaluator.judge.Prompt`, served from there with a warning.
"""

from meta_evaluator.errors import moved_names

__all__: list[str] = []  # nothing new is exported here; the old names warn

__getattr__ = moved_names(__name__, {"Prompt": "meta_evaluator.judge"})
