"""The error tree: documented, rooted at MetaEvaluatorError, listed in the README."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from meta_evaluator import errors

EXCEPTIONS = [
    getattr(errors, name)
    for name in errors.__all__
    if not issubclass(getattr(errors, name), Warning)
]
WARNINGS = [getattr(errors, name) for name in errors.__all__ if name.endswith("Warning")]


@pytest.mark.parametrize("cls", EXCEPTIONS, ids=lambda c: c.__name__)
def test_each_error_is_documented_and_rooted(cls: type[BaseException]) -> None:
    assert issubclass(cls, errors.MetaEvaluatorError)
    doc = inspect.getdoc(cls) or ""
    assert len(doc) > 30, f"{cls.__name__} needs a docstring saying when it is raised"


def test_warnings_are_documented_user_warnings() -> None:
    assert {w.__name__ for w in WARNINGS} == {
        "MetaEvaluatorWarning",
        "MetaEvaluatorDeprecationWarning",
    }
    for warning in WARNINGS:
        assert issubclass(warning, errors.MetaEvaluatorWarning)
        assert len(inspect.getdoc(warning) or "") > 30
    assert issubclass(errors.MetaEvaluatorDeprecationWarning, DeprecationWarning)


def test_value_errors_are_value_errors() -> None:
    for cls in (errors.DataError, errors.IdError, errors.TaskError, errors.JudgeConfigError):
        assert issubclass(cls, ValueError)
    assert issubclass(errors.ProjectExistsError, FileExistsError)
    assert issubclass(errors.ProjectNotFoundError, FileNotFoundError)
    assert issubclass(errors.StorageError, OSError)


def test_readme_table_lists_exactly_the_error_classes() -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `(\w+)` \|", readme, flags=re.MULTILINE))
    assert listed == {cls.__name__ for cls in EXCEPTIONS}


def test_module_docstring_draws_every_class() -> None:
    doc = errors.__doc__ or ""
    for cls in EXCEPTIONS:
        assert cls.__name__ in doc


def test_attributes_carry_the_place() -> None:
    error = errors.IdError("bad", path="a/b.csv", column="id", row_id=3)
    assert error.path == Path("a/b.csv") and error.column == "id" and error.row_id == 3
    assert str(error) == "bad"
    assert errors.JudgeConfigError("x", errors=[{"loc": "a"}]).errors == [{"loc": "a"}]


def test_all_is_sorted() -> None:
    assert errors.__all__ == sorted(errors.__all__)


def test_every_message_is_bounded_and_hides_keys() -> None:
    """Whatever a message quotes, no line exceeds the limit and no key-shaped text is shown."""
    key = "sk-proj-SECRETabcdefghijklmnop0123456789XYZ"
    exc = errors.ScoringError(f"epsilon must be a number; got {key!r}\nlabel {'Q' * 300_000!r}")
    lines = str(exc).split("\n")
    assert "SECRET" not in str(exc)
    assert lines[0] == "epsilon must be a number; got '<hidden: looks like an API key>'"
    assert len(lines[1]) < errors.MESSAGE_LINE_LIMIT + 50
    assert lines[1].endswith(f"({300_008 - errors.MESSAGE_LINE_LIMIT} more characters not shown)")
    assert exc.message == str(exc)


def test_a_huge_placeholder_and_a_key_as_scorer_argument_are_not_quoted_whole(
    tmp_path: Path,
) -> None:
    from meta_evaluator import MetaEvaluator
    from meta_evaluator.examples import create_example_project
    from meta_evaluator.scores.metrics import AltTestScorer

    create_example_project("refusal", tmp_path / "p")
    evaluator = MetaEvaluator(tmp_path / "p", load=True)
    with pytest.raises(errors.JudgeConfigError) as caught:
        evaluator.add_judge("pj", "mock", "m", prompt="{" + "Q" * 300_000 + "}")
    assert len(str(caught.value)) < 2 * errors.MESSAGE_LINE_LIMIT
    with pytest.raises(errors.MetaEvaluatorError) as caught:
        AltTestScorer(epsilon="sk-proj-SECRETabcdefghijklmnop0123456789XYZ")  # type: ignore[arg-type]
    assert "SECRET" not in str(caught.value)
