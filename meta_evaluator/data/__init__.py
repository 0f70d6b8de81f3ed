"""Evaluation data: loading files into validated, immutable `EvalData`, and sampling it.

`read_preference_pairs` reads pairwise preference files (AnnotatedPairs JSON, CSV);
`counterfactual_variants` and `position_swapped_variants` add variant rows linked to their
originals.
"""

from meta_evaluator.data.counterfactual import counterfactual_variants
from meta_evaluator.data.eval_data import EvalData, SampleEvalData
from meta_evaluator.data.loader import DataLoader
from meta_evaluator.data.pairs import AnnotatorInfo, PreferencePairs, read_preference_pairs
from meta_evaluator.data.position_swaps import position_swapped_variants

__all__ = [
    "AnnotatorInfo",
    "DataLoader",
    "EvalData",
    "PreferencePairs",
    "SampleEvalData",
    "counterfactual_variants",
    "position_swapped_variants",
    "read_preference_pairs",
]
