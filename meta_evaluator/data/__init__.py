"""Evaluation data: loading files into validated, immutable `EvalData`, and sampling it.

`read_preference_pairs` reads pairwise preference files (AnnotatedPairs JSON, CSV).
"""

from meta_evaluator.data.counterfactual import counterfactual_variants
from meta_evaluator.data.eval_data import EvalData, SampleEvalData
from meta_evaluator.data.loader import DataLoader
from meta_evaluator.data.pairs import AnnotatorInfo, PreferencePairs, read_preference_pairs

__all__ = [
    "AnnotatorInfo",
    "DataLoader",
    "EvalData",
    "PreferencePairs",
    "SampleEvalData",
    "counterfactual_variants",
    "read_preference_pairs",
]
