"""meta-evaluator 0.3.3's import paths: each name still imports, from its new home, and warns
once (a MetaEvaluatorDeprecationWarning naming the version, the removal and the new path).

Each import runs in a fresh interpreter: a name served once is kept by its old module, so in
this process only the first import would warn.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from meta_evaluator.errors import MetaEvaluatorDeprecationWarning, warn_deprecated

ROOT = Path(__file__).resolve().parents[1]

# 0.3.3's import (as its docs and examples write it) -> where the name lives now
PATHS = {
    "from meta_evaluator.meta_evaluator import MetaEvaluator": "meta_evaluator",
    "from meta_evaluator.common.models import Prompt": "meta_evaluator.judge",
    "from meta_evaluator.common import Prompt": "meta_evaluator.judge",
    "from meta_evaluator.scores import ClassificationScorer": "meta_evaluator.scores.metrics",
    "from meta_evaluator.scores import AltTestScorer": "meta_evaluator.scores.metrics",
    "from meta_evaluator.scores import CohensKappaScorer": "meta_evaluator.scores.metrics",
    "from meta_evaluator.scores import TextSimilarityScorer": "meta_evaluator.scores.metrics",
    "from meta_evaluator.scores import SemanticSimilarityScorer": "meta_evaluator.scores.metrics",
    "from meta_evaluator.scores_reporting import ScoreReport": "meta_evaluator.reports",
}

PROBE = """
import warnings, importlib
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    {statement}
name = "{name}"
value = globals()[name]
home = importlib.import_module("{home}")
assert value is getattr(home, name), "not the same object as the new home's"
first = seen[0] if seen else None
print(len(seen), first and first.category.__name__, first and first.filename,
      first and str(first.message), sep="|")
"""


@pytest.mark.parametrize("statement", sorted(PATHS))
def test_an_033_import_works_and_warns_once(statement: str) -> None:
    name = statement.rsplit(" ", 1)[1]
    code = PROBE.format(statement=statement, name=name, home=PATHS[statement])
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    count, category, filename, message = (part.strip() for part in done.stdout.split("|"))
    assert (count, category) == ("1", "MetaEvaluatorDeprecationWarning")
    assert filename == "<string>"  # it points at the script's import, not at our code
    # what it is (0.3.3's path, kept for compatibility), when it goes, and the new path; never
    # "deprecated since 0.1.0", which reads as if 0.3.3 came after this version
    assert message == (
        f"`{statement}` is an import path of meta-evaluator 0.3.3, kept for compatibility and "
        f"to be removed in meta-evaluator 1.0; use `from {PATHS[statement]} import {name}`."
    )


def test_sanitize_task_name_is_answer_key() -> None:
    said = r"sanitize_task_name` is a name of meta-evaluator 0\.3\.3, .*; use `meta_evaluator\."
    with pytest.warns(MetaEvaluatorDeprecationWarning, match=said):
        from meta_evaluator.eval_task import sanitize_task_name
    assert sanitize_task_name("harm types") == "harm_types"


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    import meta_evaluator.meta_evaluator as old

    with pytest.raises(AttributeError, match="has no attribute 'Judge'"):
        _ = old.Judge


def test_the_warning_carries_both_versions() -> None:
    with pytest.warns(MetaEvaluatorDeprecationWarning) as caught:
        warn_deprecated("x", "use y", kind="an argument", since="0.2", removed_in="2.0")
    warning = caught[0].message
    assert isinstance(warning, MetaEvaluatorDeprecationWarning)
    assert (warning.since, warning.expected_removal) == ("0.2", "2.0")
    assert str(warning) == (
        "x is an argument of meta-evaluator 0.3.3, kept for compatibility and to be removed in "
        "meta-evaluator 2.0; use y."
    )


def test_the_default_versions_are_kept_on_the_warning() -> None:
    with pytest.warns(MetaEvaluatorDeprecationWarning) as caught:
        warn_deprecated("x", "use y")
    warning = caught[0].message
    assert isinstance(warning, MetaEvaluatorDeprecationWarning)
    assert (warning.since, warning.expected_removal) == ("0.1.0", "1.0")
    assert "since" not in str(warning) and "0.1.0" not in str(warning)
