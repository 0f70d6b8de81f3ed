"""Every example in the docstrings of `meta_evaluator.stats` runs and gives what it shows.

The modules are found, not listed, so a new statistic's examples are run too; every module
but the argument checks shows at least one.
"""

import doctest
import importlib
import pkgutil

import pytest

import meta_evaluator.stats

MODULES = sorted(
    f"meta_evaluator.stats.{m.name}" for m in pkgutil.iter_modules(meta_evaluator.stats.__path__)
)
WITHOUT_EXAMPLES = {"meta_evaluator.stats.checks"}


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, extraglobs={"np": importlib.import_module("numpy")})
    assert result.failed == 0
    assert result.attempted > 0 or name in WITHOUT_EXAMPLES
