"""Scoring: compare judges with human annotators through pluggable scorers.

`MetricsConfig` lists `MetricConfig(scorer, task_names, aggregation_name, ...)` entries;
`MetaEvaluator.compare_async` runs them. Scorers live in `meta_evaluator.scores.metrics`.
"""

from meta_evaluator.errors import moved_names
from meta_evaluator.scores.base_scorer import BaseScorer
from meta_evaluator.scores.base_scoring_result import BaseScoringResult, ScoringResult
from meta_evaluator.scores.config import BootstrapConfig, MetricConfig, MetricsConfig
from meta_evaluator.scores.enums import TaskAggregationMode

__all__ = [
    "BaseScorer",
    "BaseScoringResult",
    "BootstrapConfig",
    "MetricConfig",
    "MetricsConfig",
    "ScoringResult",
    "TaskAggregationMode",
]

# meta-evaluator 0.3 exported its scorers here too; they live in meta_evaluator.scores.metrics.
__getattr__ = moved_names(
    __name__,
    dict.fromkeys(
        [
            "AltTestScorer",
            "ClassificationScorer",
            "CohensKappaScorer",
            "SemanticSimilarityScorer",
            "TextSimilarityScorer",
        ],
        "meta_evaluator.scores.metrics",
    ),
)
