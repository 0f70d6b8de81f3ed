"""Judges: their configuration (and, in later modules, parsing answers and running calls)."""

from meta_evaluator.judge.config import Judge, LLMClientName, Prompt

__all__ = ["Judge", "LLMClientName", "Prompt"]
