"""Judges from YAML: prompt files relative to the YAML, every problem listed at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from meta_evaluator.errors import JudgeConfigError, MetaEvaluatorDeprecationWarning
from meta_evaluator.examples import create_example_project
from meta_evaluator.judge import read_judges_yaml

CONFIGS = Path(__file__).parents[2] / "configs"


def write(folder: Path, text: str) -> Path:
    (folder / "prompts").mkdir(exist_ok=True)
    (folder / "prompts" / "p.md").write_text("Judge {response}", encoding="utf-8")
    path = folder / "judges.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_config_loads_into_the_example_project(tmp_path: Path) -> None:
    evaluator = create_example_project("refusal", tmp_path / "p")
    judges = evaluator.load_judges_from_yaml(CONFIGS / "judges.yaml", on_duplicate="skip")
    assert [j.id for j in judges] == [
        "mock_refusal_judge",
        "local_llama_judge",
        "gpt_4o_mini_judge",
        "claude_haiku_judge",
    ]
    assert evaluator.judge_registry["claude_haiku_judge"].answering_method == "xml"
    assert evaluator.judge_registry["local_llama_judge"].max_concurrency == 32
    assert evaluator.judge_registry["gpt_4o_mini_judge"].prompt.placeholders == [
        "prompt",
        "llm_response",
    ]


def test_prompt_file_is_relative_to_the_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(
        tmp_path,
        "judges:\n  - id: a\n    llm_client: azure\n    model: m\n    prompt_file: prompts/p.md\n",
    )
    monkeypatch.chdir("/")
    (judge,) = read_judges_yaml(path)
    assert judge.prompt.prompt == "Judge {response}" and judge.prompt.id == "p"
    assert judge.llm_client == "azure_openai"


def test_inline_prompt(tmp_path: Path) -> None:
    path = write(tmp_path, "judges:\n  - {id: a, llm_client: mock, model: m, prompt: 'Rate {x}'}\n")
    assert read_judges_yaml(path)[0].prompt.placeholders == ["x"]


def test_every_problem_is_listed_with_file_and_location(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
judges:
  - id: ok
    llm_client: mock
    model: m
    prompt_file: prompts/p.md
  - id: ../evil
    llm_client: mock
    model: m
    prompt_file: prompts/p.md
  - id: b
    llm_client: mock
    model: m
    prompt_file: prompts/missing.md
  - id: c
    llm_client: mock
    model: m
    prompt_file: prompts/p.md
    max_concurency: 4
  - id: ok
    llm_client: mock
    model: m
    prompt_file: prompts/p.md
  - just a string
""",
    )
    with pytest.raises(JudgeConfigError) as caught:
        read_judges_yaml(path)
    text = str(caught.value)
    assert "5 problem(s)" in text
    assert f"{path}: judges[1].id:" in text and "../evil" in text
    assert "judges[2].prompt_file" in text and "missing.md" in text
    assert (
        "judges[3].max_concurency: unknown key 'max_concurency'; did you mean 'max_concurrency'?"
        in text
    )
    assert "judges[4].id: id 'ok' is also used by judges[0]" in text
    assert "judges[5]: must be a mapping" in text
    assert caught.value.path == path
    assert len(caught.value.errors) == 5


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("judges: 3\n", "list under 'judges:'"),
        ("- id: a\n", "list under 'judges:'"),
        ("judges: [\n", "not valid YAML at line"),
        ("judges:\n  - {id: a, llm_client: mock, model: m}\n", "needs prompt_file"),
        (
            "judges:\n  - {id: a, llm_client: mock, model: m, prompt: x,\n"
            "     prompt_file: prompts/p.md}\n",
            "not both",
        ),
        ("judgez: []\njudges: []\n", "judgez: unknown top-level key"),
    ],
)
def test_structural_problems(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(JudgeConfigError, match=fragment.replace("[", r"\[")):
        read_judges_yaml(write(tmp_path, text))


def test_missing_yaml_file(tmp_path: Path) -> None:
    with pytest.raises(JudgeConfigError, match="no such file") as caught:
        read_judges_yaml(tmp_path / "nope.yaml")
    assert caught.value.path == tmp_path / "nope.yaml"


def test_registration_is_all_or_nothing(tmp_path: Path) -> None:
    evaluator = create_example_project("refusal", tmp_path / "p")
    before = evaluator.judge_registry
    path = write(
        tmp_path,
        "judges:\n"
        "  - {id: fine, llm_client: mock, model: m, prompt: 'See {prompt}'}\n"
        "  - {id: typo, llm_client: mock, model: m, prompt: 'See {respons}'}\n",
    )
    with pytest.raises(JudgeConfigError, match=r"'typo'.*\{respons\}") as caught:
        evaluator.load_judges_from_yaml(path)
    assert caught.value.judge_id == "typo" and caught.value.field == "judges[1].prompt"
    assert evaluator.judge_registry == before


def test_duplicates_against_the_registry(tmp_path: Path) -> None:
    evaluator = create_example_project("refusal", tmp_path / "p")
    with pytest.raises(JudgeConfigError, match="already registered"):
        evaluator.load_judges_from_yaml(CONFIGS / "judges.yaml")
    judges = evaluator.load_judges_from_yaml(CONFIGS / "judges.yaml", on_duplicate="overwrite")
    assert len(judges) == 4 and len(evaluator.judge_registry) == 4


def test_async_mode_is_accepted_with_a_deprecation_warning(tmp_path: Path) -> None:
    evaluator = create_example_project("refusal", tmp_path / "p")
    said = r"async_mode=\.\.\.\) is an argument of meta-evaluator 0\.3\.3, .* removed in .* 1\.0"
    with pytest.warns(MetaEvaluatorDeprecationWarning, match=said):
        evaluator.load_judges_from_yaml(
            CONFIGS / "judges.yaml", on_duplicate="skip", async_mode=True
        )


def test_duplicate_keys_and_lax_types_are_refused(tmp_path: Path) -> None:
    twice = "judges:\n  - id: a\n    id: b\n    llm_client: mock\n    model: m\n    prompt: x\n"
    with pytest.raises(JudgeConfigError, match="'id' appears twice"):
        read_judges_yaml(write(tmp_path, twice))
    lax = "judges:\n  - {id: a, llm_client: mock, model: m, prompt: x, temperature: yes}\n"
    with pytest.raises(JudgeConfigError, match=r"judges\[0\]\.temperature"):
        read_judges_yaml(write(tmp_path, lax))


def test_prompt_file_with_a_byte_order_mark(tmp_path: Path) -> None:
    path = write(tmp_path, "judges:\n  - {id: a, llm_client: mock, model: m, prompt_file: b.md}\n")
    (tmp_path / "b.md").write_bytes("\ufeffJudge {response}".encode())
    assert read_judges_yaml(path)[0].prompt.prompt == "Judge {response}"


def test_one_pass_finds_every_problem_of_the_file(tmp_path: Path) -> None:
    """Before, a file needed three rounds: the entries, then ids taken, then placeholders; an
    entry whose prompt file was missing hid its other fields' problems."""
    evaluator = create_example_project("refusal", tmp_path / "p")
    path = write(
        tmp_path,
        """
judges:
  - id: a
    llm_client: mock
    model: m
    prompt_file: prompts/missing.md
    temperature: 9
  - id: b
    llm_client: nope
    model: m
    prompt: inline
    prompt_file: prompts/p.md
  - id: mock_refusal_judge
    llm_client: mock
    model: m
    prompt: 'Did {llm_response} refuse?'
  - id: c
    llm_client: mock
    model: m
    prompt: 'Did {respons} refuse?'
    promt_file: x.md
""",
    )
    with pytest.raises(JudgeConfigError) as caught:
        evaluator.load_judges_from_yaml(path)
    lines = str(caught.value).splitlines()
    assert lines[0] == f"{path}: 7 problem(s) in the judge configuration:"
    assert [p["loc"] for p in caught.value.errors] == [
        "judges[0].prompt_file",
        "judges[0].temperature",
        "judges[1]",
        "judges[1].llm_client",
        "judges[2].id",
        "judges[3].promt_file",
        "judges[3].prompt",
    ]
    assert "missing.md" in lines[1] and "cannot read the prompt file" in lines[1]
    assert lines[2:] == [
        f"{path}: judges[0].temperature: Input should be less than or equal to 2, got 9",
        f"{path}: judges[1]: give prompt or prompt_file, not both",
        f"{path}: judges[1].llm_client: 'nope' is not known (did you mean 'openai'?); use one "
        "of openai, azure_openai, anthropic, mock or a provider prefix (groq, together_ai, "
        "openrouter, fireworks_ai, xai, deepseek, mistral, gemini, ollama, vllm, hosted_vllm, "
        "huggingface/<provider>). For any other provider (a LiteLLM name of meta-evaluator 0.3), "
        "reach it through an OpenAI-compatible gateway in front of it (for example a LiteLLM "
        "proxy server you run) and give the judge llm_client: openai, base_url: the gateway's "
        "URL and api_key_env: the variable holding the gateway's key",
        f"{path}: judges[2].id: judge 'mock_refusal_judge' is already registered; pass "
        "on_duplicate='overwrite' to replace it or 'skip' to keep it",
        f"{path}: judges[3].promt_file: unknown key 'promt_file'; did you mean 'prompt_file'?",
        f"{path}: judges[3].prompt: judge 'c': prompt placeholder(s) ['{{respons}}'] name no "
        "column (columns: ['sample_id', 'prompt', 'llm_response', 'category']); fix the prompt "
        "or the data",
    ]
    assert caught.value.path == path and caught.value.judge_id == "mock_refusal_judge"
    assert evaluator.judge_registry.keys() == {"mock_refusal_judge"}
    path.write_text(path.read_text().replace("promt_file: x.md", "max_tokens: 0"))
    with pytest.raises(JudgeConfigError) as caught:
        evaluator.load_judges_from_yaml(path, on_duplicate="overwrite")
    text = str(caught.value)
    assert "judges[3].max_tokens: Input should be greater than or equal to 1" in text
    assert "judges[2]" not in text  # overwrite: an id taken is no problem


def test_placeholders_are_checked_with_the_other_fields(tmp_path: Path) -> None:
    evaluator = create_example_project("refusal", tmp_path / "p")
    path = write(
        tmp_path,
        "judges:\n"
        "  - {id: x, llm_client: mock, model: m, prompt: 'See {respons}'}\n"
        "  - {id: y, llm_client: mock, model: m, prompt: 'See {prompt}', temperature: -1}\n",
    )
    with pytest.raises(JudgeConfigError) as caught:
        evaluator.load_judges_from_yaml(path)
    assert [p["loc"] for p in caught.value.errors] == ["judges[0].prompt", "judges[1].temperature"]
    assert "{respons}" in caught.value.errors[0]["msg"]
    assert "'llm_response'" in caught.value.errors[0]["msg"]
    assert evaluator.judge_registry.keys() == {"mock_refusal_judge"}


def test_an_invalid_entry_hides_neither_its_placeholders_nor_its_id(tmp_path: Path) -> None:
    """A wrong temperature used to hide a wrong placeholder, and an invalid entry its id."""
    evaluator = create_example_project("refusal", tmp_path / "p")
    path = write(
        tmp_path,
        "judges:\n"
        "  - {id: x, llm_client: mok, model: m, prompt: 'See {respons}', temperature: 5}\n"
        "  - {id: x, llm_client: mock, model: m, prompt: 'See {prompt}'}\n",
    )
    with pytest.raises(JudgeConfigError) as caught:
        evaluator.load_judges_from_yaml(path)
    assert [p["loc"] for p in caught.value.errors] == [
        "judges[0].prompt",
        "judges[0].llm_client",
        "judges[0].temperature",
        "judges[1].id",
    ]
    assert "judge 'x': prompt placeholder(s) ['{respons}']" in caught.value.errors[0]["msg"]
    assert caught.value.errors[3]["msg"] == "id 'x' is also used by judges[0]"
