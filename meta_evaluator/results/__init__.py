"""Judge results (and, later, human annotations): the row store and the tables built from it."""

from meta_evaluator.results.judge_results import JudgeResults

__all__ = ["JudgeResults"]
