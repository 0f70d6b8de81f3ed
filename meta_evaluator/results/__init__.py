"""Result tables: judge rows of a run (`JudgeResults`) and human annotations, as polars frames."""

from meta_evaluator.results.human_results import HumanAnnotationResults
from meta_evaluator.results.judge_results import JudgeResults

__all__ = ["HumanAnnotationResults", "JudgeResults"]
