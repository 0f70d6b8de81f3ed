"""Built-in scorers: judge against humans, pairwise preferences, a model's answers, self-checks.

Self-checks measure the judge against itself: position bias and self-consistency.
"""

from meta_evaluator.scores.metrics.accuracy import AccuracyScorer
from meta_evaluator.scores.metrics.alt_test import AltTestScorer
from meta_evaluator.scores.metrics.classification import ClassificationScorer
from meta_evaluator.scores.metrics.counterfactual import CounterfactualScorer
from meta_evaluator.scores.metrics.fairness import FairnessScorer
from meta_evaluator.scores.metrics.kappa import CohensKappaScorer
from meta_evaluator.scores.metrics.krippendorff import KrippendorffAlphaScorer
from meta_evaluator.scores.metrics.multiple_choice import MultipleChoiceScorer
from meta_evaluator.scores.metrics.position_bias import PositionBiasScorer
from meta_evaluator.scores.metrics.preference import PreferenceScorer
from meta_evaluator.scores.metrics.self_consistency import SelfConsistencyScorer
from meta_evaluator.scores.metrics.semantic_similarity import SemanticSimilarityScorer
from meta_evaluator.scores.metrics.stereotype import StereotypeScorer
from meta_evaluator.scores.metrics.text_similarity import TextSimilarityScorer

__all__ = [
    "AccuracyScorer",
    "AltTestScorer",
    "ClassificationScorer",
    "CohensKappaScorer",
    "CounterfactualScorer",
    "FairnessScorer",
    "KrippendorffAlphaScorer",
    "MultipleChoiceScorer",
    "PositionBiasScorer",
    "PreferenceScorer",
    "SelfConsistencyScorer",
    "SemanticSimilarityScorer",
    "StereotypeScorer",
    "TextSimilarityScorer",
]
