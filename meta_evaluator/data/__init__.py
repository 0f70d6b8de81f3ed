"""Evaluation data: loading files into validated, immutable `EvalData`, and sampling it."""

from meta_evaluator.data.eval_data import EvalData, SampleEvalData
from meta_evaluator.data.loader import DataLoader

__all__ = ["DataLoader", "EvalData", "SampleEvalData"]
