"""Judges: their configuration, YAML files, and a check that their endpoints answer."""

from meta_evaluator.judge.config import Judge, LLMClientName, MockSettings, Prompt
from meta_evaluator.judge.endpoint_check import EndpointCheck
from meta_evaluator.judge.yaml_config import read_judges_yaml

__all__ = ["EndpointCheck", "Judge", "LLMClientName", "MockSettings", "Prompt", "read_judges_yaml"]
