"""The installed version of meta-evaluator."""

__version__ = "0.1.0"
