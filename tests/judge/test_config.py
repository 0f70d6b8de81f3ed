"""Judge and Prompt configuration models."""

from __future__ import annotations

from pathlib import Path

import pytest

from meta_evaluator.errors import JudgeConfigError
from meta_evaluator.judge import Judge, Prompt


def test_placeholders_in_order_without_repeats_and_escaped_braces() -> None:
    prompt = Prompt(id="p", prompt='{a} then {b}, {a} again; JSON {{"label": "x"}}')
    assert prompt.placeholders == ["a", "b"]


@pytest.mark.parametrize("template", ["{}", "{0}x{", "{a.b}", "{a[0]}", "{a!r}", "{a:>10}", "  "])
def test_bad_templates_are_rejected(template: str) -> None:
    with pytest.raises(ValueError, match="prompt"):
        Prompt(id="p", prompt=template)


def test_prompt_from_file(tmp_path: Path) -> None:
    file = tmp_path / "refusal.md"
    file.write_text("Did {response} refuse?", encoding="utf-8")
    assert Prompt.from_file(file) == Prompt(id="refusal", prompt="Did {response} refuse?")
    with pytest.raises(JudgeConfigError, match=r"missing\.md"):
        Prompt.from_file(tmp_path / "missing.md")
    (tmp_path / "bad.md").write_text("{a!s}", encoding="utf-8")
    with pytest.raises(JudgeConfigError, match=r"bad\.md"):
        Prompt.from_file(tmp_path / "bad.md")


def test_judge_build_lists_every_problem() -> None:
    with pytest.raises(JudgeConfigError) as caught:
        Judge(
            id="j1",
            llm_client="openia",
            model="",
            prompt=Prompt(id="p", prompt="x"),
            temperature=3,
            max_concurency=4,
        )
    error = caught.value
    assert error.judge_id == "j1"
    assert len(error.errors) == 4
    text = str(error)
    assert "judge 'j1'.llm_client" in text
    assert "judge 'j1'.temperature" in text
    assert error.field == "llm_client"
    assert "did you mean 'max_concurrency'?" in text


def test_judge_alias_and_defaults() -> None:
    judge = Judge(
        id="j", llm_client="mock", model="m", prompt=Prompt(id="p", prompt="x"),
        answering_method="instructor",
    )  # fmt: skip
    assert judge.answering_method == "structured"
    assert judge.max_concurrency is None and judge.extra_headers == {}
    assert Judge.model_validate(judge.model_dump(mode="json")) == judge


SECRET = "sk-SECRETVALUE0123456789"


@pytest.mark.parametrize(
    "fields",
    [
        {"api_key": SECRET},
        {"api_key_env": SECRET},
        {"extra_headers": {"Authorization": f"Bearer {SECRET}"}},
        {"extra_headers": {"X-Goog-Api-Key": SECRET}},
        {"extra_headers": {"x-access-token": SECRET}},
        {"base_url": f"https://user:{SECRET}@api.example.com/v1"},
        {"base_url": f"https://api.example.com/v1?api-key={SECRET}"},
        {"base_url": f"ftp://user:{SECRET}@api.example.com"},
    ],
    ids=lambda f: next(iter(f)),
)
def test_a_secret_in_the_wrong_place_is_refused_and_never_echoed(fields: dict[str, object]) -> None:
    import traceback

    with pytest.raises(JudgeConfigError) as caught:
        Judge(id="j", llm_client="mock", model="m", prompt=Prompt(id="p", prompt="x"), **fields)
    text = "".join(traceback.format_exception(caught.value))
    assert SECRET not in text
    assert next(iter(fields)) in str(caught.value)


@pytest.mark.parametrize(
    "headers",
    [
        {"Transfer-Encoding": "chunked"},
        {"Content-Length": "12"},
        {"host": "other.example"},
        {"Content-Type": "text/plain"},
        {"Connection": "close"},
        {"X-Team": "evals\r\nX-Injected: 1"},
        {"X Team": "evals"},
    ],
    ids=lambda h: next(iter(h)),
)
def test_headers_the_client_writes_or_that_break_a_request_are_refused(
    headers: dict[str, str],
) -> None:
    """Sent beside the client's own (a second Content-Length, a line break), they would break
    the request on the wire."""
    with pytest.raises(JudgeConfigError, match="extra_headers"):
        Judge(id="j", llm_client="mock", model="m", prompt=Prompt(id="p", prompt="x"),
              extra_headers=headers)  # fmt: skip


def test_ordinary_headers_and_urls_are_accepted() -> None:
    judge = Judge(
        id="j", llm_client="openai", model="m", prompt=Prompt(id="p", prompt="x"),
        base_url="http://127.0.0.1:8000/v1?timeout=3", extra_headers={"X-Team": "evals"},
    )  # fmt: skip
    assert judge.extra_headers == {"X-Team": "evals"}


def test_model_copy_and_model_validate_validate_like_the_constructor() -> None:
    judge = Judge(id="j", llm_client="mock", model="m", prompt=Prompt(id="p", prompt="x"))
    with pytest.raises(JudgeConfigError, match="judge id"):
        judge.model_copy(update={"id": "../../evil"})
    assert judge.model_copy(update={"model": "m2"}).model == "m2"
    with pytest.raises(JudgeConfigError, match="llm_client"):
        Judge.model_validate({**judge.model_dump(), "llm_client": "nope"})


def test_non_path_arguments_are_typed_errors(tmp_path: Path) -> None:
    from meta_evaluator import MetaEvaluator
    from meta_evaluator.judge import read_judges_yaml

    with pytest.raises(JudgeConfigError, match="prompt_file must be a path"):
        Prompt.from_file(3)  # type: ignore[arg-type]
    with pytest.raises(JudgeConfigError, match="must be a path"):
        read_judges_yaml(None)  # type: ignore[arg-type]
    evaluator = MetaEvaluator(tmp_path / "p")
    with pytest.raises(JudgeConfigError, match="pass them once") as caught:
        evaluator.add_judge("j", "mock", "m", "x", id="other")
    assert caught.value.field == "id"
