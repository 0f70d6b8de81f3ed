"""The docstring examples of the modules added for meta-evaluator 0.3.3's scripts run and give
what they show (tests/stats/test_doctests.py runs those of `meta_evaluator.stats`)."""

import doctest
import importlib

import pytest

MODULES = [
    "meta_evaluator.errors",
    "meta_evaluator.eval_task.eval_task",
    "meta_evaluator.eval_task.labels",
    "meta_evaluator.judge.providers",
    "meta_evaluator.judge.row_keys",
    "meta_evaluator.migrate",
    "meta_evaluator.reports.score_report",
    "meta_evaluator.results.export",
    "meta_evaluator.scores.metrics.classification",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0 and result.attempted > 0
