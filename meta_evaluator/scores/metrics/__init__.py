"""Built-in scorers: agreement of a judge with human annotators, and pairwise preferences."""

from meta_evaluator.scores.metrics.accuracy import AccuracyScorer
from meta_evaluator.scores.metrics.alt_test import AltTestScorer
from meta_evaluator.scores.metrics.kappa import CohensKappaScorer
from meta_evaluator.scores.metrics.krippendorff import KrippendorffAlphaScorer
from meta_evaluator.scores.metrics.preference import PreferenceScorer
from meta_evaluator.scores.metrics.semantic_similarity import SemanticSimilarityScorer
from meta_evaluator.scores.metrics.text_similarity import TextSimilarityScorer

__all__ = [
    "AccuracyScorer",
    "AltTestScorer",
    "CohensKappaScorer",
    "KrippendorffAlphaScorer",
    "PreferenceScorer",
    "SemanticSimilarityScorer",
    "TextSimilarityScorer",
]
