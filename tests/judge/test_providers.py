"""0.3.3's provider prefixes: each reaches its provider's OpenAI-compatible endpoint with the
key LiteLLM read, through our client; the providers only a gateway reaches are refused saying so.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from meta_evaluator.errors import JudgeConfigError
from meta_evaluator.judge import Judge, read_judges_yaml
from meta_evaluator.judge.providers import PROVIDERS, provider_of
from tests.conftest import chats, rejection_project
from tests.judge.test_runner import completion

PROMPT = {"id": "p", "prompt": "Did {response} refuse {prompt}?"}

# prefix -> (URL of the chat call, variable of the key, model sent), as LiteLLM sent them
EXPECTED = {
    "groq": ("https://api.groq.com/openai/v1/chat/completions", "GROQ_API_KEY", "m"),
    "together_ai": ("https://api.together.xyz/v1/chat/completions", "TOGETHER_API_KEY", "m"),
    "openrouter": ("https://openrouter.ai/api/v1/chat/completions", "OPENROUTER_API_KEY", "m"),
    "fireworks_ai": (
        "https://api.fireworks.ai/inference/v1/chat/completions",
        "FIREWORKS_AI_API_KEY",
        "accounts/fireworks/models/m",
    ),
    "xai": ("https://api.x.ai/v1/chat/completions", "XAI_API_KEY", "m"),
    "deepseek": ("https://api.deepseek.com/v1/chat/completions", "DEEPSEEK_API_KEY", "m"),
    "mistral": ("https://api.mistral.ai/v1/chat/completions", "MISTRAL_API_KEY", "m"),
    "gemini": (
        "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions",
        "GEMINI_API_KEY",
        "m",
    ),
    "ollama": ("http://localhost:11434/v1/chat/completions", None, "m"),
    "vllm": ("http://localhost:8000/v1/chat/completions", None, "m"),
    "hosted_vllm": ("http://localhost:8000/v1/chat/completions", None, "m"),
    "huggingface/together": (
        "https://router.huggingface.co/v1/chat/completions",
        "HUGGINGFACE_API_KEY",
        "m:together",
    ),
}


def test_the_table_covers_every_prefix_tested() -> None:
    assert set(PROVIDERS) | {"huggingface/together"} == set(EXPECTED)


@pytest.mark.parametrize("prefix", sorted(EXPECTED))
def test_a_prefix_runs_through_the_openai_client_at_its_provider(
    prefix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, variable, model = EXPECTED[prefix]
    if variable is not None:
        monkeypatch.setenv(variable, f"key-for-{prefix}")
    seen: list[httpx.Request] = []

    def server(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return completion(request)

    evaluator = rejection_project(tmp_path / "p", chats(3))
    judge = evaluator.add_judge("j", prefix, "m", PROMPT["prompt"])
    assert judge.llm_client == "openai"
    results = evaluator.run_judges_async(transport=httpx.MockTransport(server), cache=False)
    assert results["j"].counts()["valid"] == 3
    assert {str(r.url) for r in seen} == {url}
    assert {r.headers.get("authorization") for r in seen} == {
        f"Bearer key-for-{prefix}" if variable else None
    }
    assert {json.loads(r.content)["model"] for r in seen} == {model}


def test_the_judges_own_base_url_and_key_variable_win(monkeypatch: pytest.MonkeyPatch) -> None:
    judge = Judge(
        id="j", llm_client="groq", model="m", prompt=PROMPT,
        base_url="http://127.0.0.1:9/v1", api_key_env="MY_GROQ_KEY",
    )  # fmt: skip
    assert (judge.llm_client, judge.base_url, judge.api_key_env) == (
        "openai", "http://127.0.0.1:9/v1", "MY_GROQ_KEY",
    )  # fmt: skip


def test_a_resolved_judge_reads_back_as_it_was_saved() -> None:
    """main_state.json holds the resolved judge: reading it again changes nothing (the model
    suffix and prefix are not added twice)."""
    for prefix in ("huggingface/together", "fireworks_ai"):
        judge = Judge(id="j", llm_client=prefix, model="m", prompt=PROMPT)
        again = Judge(**judge.model_dump(mode="json"))
        assert again == judge


def test_fireworks_keeps_a_model_already_under_accounts() -> None:
    full = "accounts/me/models/tuned"
    assert Judge(id="j", llm_client="fireworks_ai", model=full, prompt=PROMPT).model == full
    assert provider_of("huggingface/fireworks-ai") is not None
    assert provider_of("huggingface") is None and provider_of("huggingface/a/b") is None


def test_azure_keeps_033s_key_variable() -> None:
    judge = Judge(id="j", llm_client="azure", model="gpt-4o-mini-2024-07-18", prompt=PROMPT)
    assert (judge.llm_client, judge.api_key_env) == ("azure_openai", "AZURE_API_KEY")


@pytest.mark.parametrize(
    ("prefix", "says"),
    [
        ("bedrock", "SigV4"),
        ("vertex_ai", "llm_client: gemini"),
        ("sagemaker", "SigV4"),
        ("huggingface", "huggingface/<provider>"),
        ("cohere", "https://api.cohere.ai/compatibility/v1"),
        ("replicate", "is not known"),
    ],
)
def test_a_provider_only_a_gateway_reaches_is_refused_saying_how(prefix: str, says: str) -> None:
    with pytest.raises(JudgeConfigError) as caught:
        Judge(id="j", llm_client=prefix, model="m", prompt=PROMPT)
    message = caught.value.message
    assert f"llm_client: {prefix!r}" in message and says in message
    assert "OpenAI-compatible gateway" in message and "base_url" in message
    assert caught.value.field == "llm_client" and caught.value.judge_id == "j"


def test_a_misspelt_prefix_names_the_closest() -> None:
    with pytest.raises(JudgeConfigError, match=r"'grok' is not known \(did you mean 'groq'\?\)"):
        Judge(id="j", llm_client="grok", model="m", prompt=PROMPT)


def test_a_yaml_file_lists_every_refused_provider_at_once(tmp_path: Path) -> None:
    (tmp_path / "prompt.md").write_text("Judge {response}")
    path = tmp_path / "judges.yaml"
    path.write_text(
        "judges:\n"
        "  - {id: a, llm_client: groq, model: llama-3.1-8b-instant, prompt_file: ./prompt.md}\n"
        "  - {id: b, llm_client: bedrock, model: anthropic.claude, prompt_file: ./prompt.md}\n"
        "  - {id: c, llm_client: vertex_ai, model: gemini-2.5, prompt_file: ./prompt.md}\n"
    )
    with pytest.raises(JudgeConfigError) as caught:
        read_judges_yaml(path)
    assert [e["loc"] for e in caught.value.errors] == [
        "judges[1].llm_client", "judges[2].llm_client",
    ]  # fmt: skip


def test_033s_yaml_keys_load_as_0_3_3_wrote_them(tmp_path: Path) -> None:
    """0.3.3's judge keys (id, llm_client, model, prompt_file, temperature, extra_headers),
    with its defaults written out (`extra_headers: null`), a whole-number temperature and an
    absolute prompt path."""
    prompt = tmp_path / "prompt.md"
    prompt.write_text("Judge {response}")
    path = tmp_path / "judges.yaml"
    path.write_text(
        "judges:\n"
        f"  - {{id: a, llm_client: groq, model: m, prompt_file: {prompt}, temperature: 0,\n"
        "      extra_headers: null}\n"
        "  - {id: b, llm_client: openai, model: m, prompt_file: ./prompt.md,\n"
        "      extra_headers: {X-HF-Bill-To: org}}\n"
    )
    first, second = read_judges_yaml(path)
    assert (first.temperature, first.extra_headers, first.prompt.id) == (0.0, {}, "prompt")
    assert second.extra_headers == {"X-HF-Bill-To": "org"}
