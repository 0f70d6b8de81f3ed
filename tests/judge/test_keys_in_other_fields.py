"""A key pasted where a judge's id, model, URL, API version or header belongs is refused.

Those fields are saved in `main_state.json` and printed by `status` and `run`; a value shaped
like a provider's key is refused without being echoed, in Python, in a judges YAML file and in
the embedding scorer's `base_url`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from meta_evaluator.api_keys import check_endpoint_url
from meta_evaluator.errors import JudgeConfigError, ScoringError
from meta_evaluator.judge.config import Judge, Prompt
from meta_evaluator.scores.metrics import SemanticSimilarityScorer
from tests.secret_values import assert_not_echoed

GROQ = "gsk_9naHVck6pbd4ZRj2Sxphv0123456789abcdEFGH"
OPENAI = "sk-proj-SECRETabcdefghijklmnop0123456789XYZ"

PLACES: list[tuple[str, dict[str, Any], str]] = [
    ("id", {"id": GROQ}, GROQ),
    ("model", {"model": OPENAI}, OPENAI),
    ("base_url path", {"base_url": f"http://127.0.0.1:8000/{GROQ}/v1"}, GROQ),
    ("base_url fragment", {"base_url": f"http://127.0.0.1:8000/v1#{GROQ}"}, GROQ),
    ("base_url query", {"base_url": f"http://127.0.0.1:8000/v1?x={OPENAI}"}, OPENAI),
    (
        "api_version",
        {
            "llm_client": "azure_openai",
            "api_version": OPENAI,
            "base_url": "https://acme.openai.azure.com",
        },
        OPENAI,
    ),
    ("header value", {"extra_headers": {"X-Custom": OPENAI}}, OPENAI),
    ("header name", {"extra_headers": {GROQ: "1"}}, GROQ),
]


def settings(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"id": "j", "llm_client": "openai", "model": "gpt-4o-mini",
                            "prompt": Prompt(id="p", prompt="Judge {response}")}  # fmt: skip
    return base | changes


@pytest.mark.parametrize(("where", "changes", "key"), PLACES, ids=[p[0] for p in PLACES])
def test_a_key_in_another_field_is_refused_without_echo(
    where: str, changes: dict[str, Any], key: str
) -> None:
    with pytest.raises(JudgeConfigError) as caught:
        Judge(**settings(**changes))
    assert "API key" in str(caught.value)
    assert_not_echoed(key, str(caught.value), repr(caught.value.errors))


@pytest.mark.parametrize(("where", "changes", "key"), PLACES, ids=[p[0] for p in PLACES])
def test_a_key_in_a_judges_yaml_is_neither_saved_nor_echoed(
    tmp_path: Path, where: str, changes: dict[str, Any], key: str
) -> None:
    from meta_evaluator.examples import create_example_project

    evaluator = create_example_project("refusal", tmp_path / "p")
    entry = {k: v for k, v in settings(**changes).items() if k != "prompt"}
    lines = ["judges:", "  - prompt: 'Judge {llm_response}'"]
    for name, value in entry.items():
        if isinstance(value, dict):
            lines.append(f"    {name}:")
            lines += [f"      '{k}': '{v}'" for k, v in value.items()]
        else:
            lines.append(f"    {name}: '{value}'")
    (tmp_path / "judges.yaml").write_text("\n".join(lines) + "\n")
    with pytest.raises(JudgeConfigError) as caught:
        evaluator.load_judges_from_yaml(tmp_path / "judges.yaml")
    evaluator.save_state()
    saved = "".join(f.read_text(errors="replace") for f in (tmp_path / "p").rglob("*.json"))
    assert_not_echoed(key, str(caught.value), saved)


def test_plain_fields_are_still_accepted() -> None:
    judge = Judge(**settings(
        id="gpt4o_mini_v2", model="meta-llama/Llama-3.1-70B-Instruct",
        base_url="https://api.together.xyz/v1/sk-models", extra_headers={"X-Team": "eval-42"},
    ))  # fmt: skip
    assert judge.model == "meta-llama/Llama-3.1-70B-Instruct"


@pytest.mark.parametrize(
    "url",
    [
        f"http://127.0.0.1:9/v1?api_key={OPENAI}",
        "http://admin:hunter2SECRETpass@127.0.0.1:9/v1",
        f"http://127.0.0.1:9/{GROQ}/v1",
    ],
    ids=["query", "userinfo", "path"],
)
def test_the_embedding_scorer_refuses_a_url_with_a_credential(url: str) -> None:
    with pytest.raises(ScoringError) as caught:
        SemanticSimilarityScorer(base_url=url)
    assert "base_url" in str(caught.value)
    for secret in ("hunter2SECRETpass", OPENAI, GROQ):
        assert_not_echoed(secret, str(caught.value))


def test_check_endpoint_url_returns_a_clean_url() -> None:
    assert check_endpoint_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    with pytest.raises(ValueError, match="http:// or https://"):
        check_endpoint_url("ftp://127.0.0.1/v1")


def test_a_key_in_the_prompt_text_is_refused_without_echo() -> None:
    with pytest.raises(JudgeConfigError) as caught:
        Prompt(id="p", prompt=f"Use {OPENAI} to judge {{response}}")
    assert_not_echoed(OPENAI, str(caught.value), repr(caught.value.errors))


@pytest.mark.parametrize("field", ["run_id", "annotator_id", "display_name"])
def test_an_id_that_names_a_file_is_never_a_key(field: str) -> None:
    from meta_evaluator.errors import UnsafeNameError
    from meta_evaluator.storage import check_safe_name

    with pytest.raises(UnsafeNameError) as caught:
        check_safe_name(OPENAI, field=field)
    assert field in str(caught.value)
    assert_not_echoed(OPENAI, str(caught.value))
    assert check_safe_name("run_20261125_eval-2", field=field) == "run_20261125_eval-2"


def test_a_run_id_shaped_like_a_key_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    from meta_evaluator.errors import UnsafeNameError
    from meta_evaluator.examples import create_example_project

    evaluator = create_example_project("refusal", tmp_path / "p")
    with pytest.raises(UnsafeNameError):
        evaluator.run_judges_async(run_id=OPENAI)
    assert not any(OPENAI[:12] in str(path) for path in (tmp_path / "p").rglob("*"))


def test_a_prompt_file_that_is_not_a_small_regular_file_is_refused(tmp_path: Path) -> None:
    import os

    from meta_evaluator.judge.config import MAX_PROMPT_BYTES

    big = tmp_path / "big.md"
    big.write_text("Judge {response} " + "x" * MAX_PROMPT_BYTES)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, reason in [
        (big, "larger than"),
        (Path("/dev/zero"), "not a regular file"),
        (fifo, "not a regular file"),  # opening it would wait for a writer forever
        (tmp_path, "not a regular file"),
    ]:
        with pytest.raises(JudgeConfigError, match=reason):
            Prompt.from_file(path)
    small = tmp_path / "small.md"
    small.write_text("Judge {response}")
    assert Prompt.from_file(small).placeholders == ["response"]
