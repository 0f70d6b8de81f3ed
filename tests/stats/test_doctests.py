"""Every example in the docstrings of `meta_evaluator.stats` runs and gives what it shows."""

import doctest
import importlib

import pytest

MODULES = [
    "meta_evaluator.stats.agreement",
    "meta_evaluator.stats.alt_test",
    "meta_evaluator.stats.bootstrap",
    "meta_evaluator.stats.classification",
    "meta_evaluator.stats.proportions",
    "meta_evaluator.stats.text",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, extraglobs={"np": importlib.import_module("numpy")})
    assert result.failed == 0
    assert result.attempted > 0
