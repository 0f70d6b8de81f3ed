"""meta-evaluator 0.3's `meta_evaluator.scores_reporting`, deprecated.

Use `from meta_evaluator.reports import ScoreReport` (or `evaluator.score_report`); served from
there with a warning.
"""

from meta_evaluator.errors import moved_names

__all__: list[str] = []  # nothing new is exported here; the old names warn

__getattr__ = moved_names(__name__, {"ScoreReport": "meta_evaluator.reports"})
