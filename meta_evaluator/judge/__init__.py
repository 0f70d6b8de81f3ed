"""Judges: their configuration (and, in later modules, parsing answers and running calls)."""

from meta_evaluator.judge.config import Judge, LLMClientName, MockSettings, Prompt
from meta_evaluator.judge.yaml_config import read_judges_yaml

__all__ = ["Judge", "LLMClientName", "MockSettings", "Prompt", "read_judges_yaml"]
