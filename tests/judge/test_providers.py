"""0.3.3's provider prefixes: each reaches its provider's OpenAI-compatible endpoint with the
key LiteLLM read, through our client; the providers only a gateway reaches are refused saying so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from meta_evaluator.errors import JudgeConfigError
from meta_evaluator.judge import Judge, read_judges_yaml
from meta_evaluator.judge.providers import HUGGINGFACE, PROVIDERS, provider_of
from tests.conftest import chats, rejection_project
from tests.judge.test_runner import completion

PROMPT = {"id": "p", "prompt": "Did {response} refuse {prompt}?"}

# prefix -> (URL of the chat call, variables of the key in the order read, model sent), as
# LiteLLM 1.82 (meta-evaluator 0.3.3's) sent them: litellm/main.py `completion` and
# litellm_core_utils/get_llm_provider_logic.py `_get_openai_compatible_provider_info` (groq,
# together_ai, fireworks_ai, xai, deepseek, mistral), main.py's openrouter and huggingface
# branches, llms/gemini/common_utils.py `get_api_key_from_env` then PALM_API_KEY.
EXPECTED = {
    "groq": ("https://api.groq.com/openai/v1/chat/completions", ("GROQ_API_KEY",), "m"),
    "together_ai": (
        "https://api.together.xyz/v1/chat/completions",
        ("TOGETHER_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHERAI_API_KEY", "TOGETHER_AI_TOKEN"),
        "m",
    ),
    "openrouter": (
        "https://openrouter.ai/api/v1/chat/completions",
        ("OPENROUTER_API_KEY", "OR_API_KEY"),
        "m",
    ),
    "fireworks_ai": (
        "https://api.fireworks.ai/inference/v1/chat/completions",
        ("FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY", "FIREWORKSAI_API_KEY", "FIREWORKS_AI_TOKEN"),
        "accounts/fireworks/models/m",
    ),
    "xai": ("https://api.x.ai/v1/chat/completions", ("XAI_API_KEY",), "m"),
    "deepseek": ("https://api.deepseek.com/v1/chat/completions", ("DEEPSEEK_API_KEY",), "m"),
    "mistral": (
        "https://api.mistral.ai/v1/chat/completions",
        ("MISTRAL_AZURE_API_KEY", "MISTRAL_API_KEY"),
        "m",
    ),
    "gemini": (
        "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions",
        ("GOOGLE_API_KEY", "GEMINI_API_KEY", "PALM_API_KEY"),
        "m",
    ),
    "ollama": ("http://localhost:11434/v1/chat/completions", (), "m"),
    "vllm": ("http://localhost:8000/v1/chat/completions", (), "m"),
    "hosted_vllm": ("http://localhost:8000/v1/chat/completions", (), "m"),
    "huggingface/together": (
        "https://router.huggingface.co/v1/chat/completions",
        ("HF_TOKEN", "HUGGINGFACE_API_KEY"),
        "m:together",
    ),
}
EACH_VARIABLE = [(prefix, v) for prefix, (_, names, _) in EXPECTED.items() for v in names or [None]]


def run_seen(prefix: str, folder: Path, **settings: str) -> list[httpx.Request]:
    """The requests a judge of `prefix` sends for three rows (all answered)."""
    seen: list[httpx.Request] = []

    def server(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return completion(request)

    evaluator = rejection_project(folder, chats(3))
    judge = evaluator.add_judge("j", prefix, "m", PROMPT["prompt"], **settings)
    assert judge.llm_client == "openai" and judge.api_key_env == settings.get("api_key_env")
    results = evaluator.run_judges_async(transport=httpx.MockTransport(server), cache=False)
    assert results["j"].counts()["valid"] == 3
    return seen


def test_the_table_covers_every_prefix_tested() -> None:
    assert set(PROVIDERS) | {"huggingface/together"} == set(EXPECTED)


@pytest.mark.parametrize(("prefix", "variable"), EACH_VARIABLE)
def test_a_prefix_runs_through_the_openai_client_at_its_provider(
    prefix: str, variable: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With any one of the provider's key variables set, its key is sent."""
    url, _, model = EXPECTED[prefix]
    if variable is not None:
        monkeypatch.setenv(variable, f"key-in-{variable}")
    seen = run_seen(prefix, tmp_path / "p")
    assert {str(r.url) for r in seen} == {url}
    assert {r.headers.get("authorization") for r in seen} == {
        f"Bearer key-in-{variable}" if variable else None
    }
    assert {json.loads(r.content)["model"] for r in seen} == {model}


@pytest.mark.parametrize("prefix", [p for p, (_, names, _) in EXPECTED.items() if len(names) > 1])
def test_the_first_key_variable_set_wins_in_litellms_order(
    prefix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every variable set (the first to an empty value, which LiteLLM skipped too): the
    second's key is sent; with the first set as well, the first's."""
    names = EXPECTED[prefix][1]
    for name in names:
        monkeypatch.setenv(name, f"key-in-{name}")
    monkeypatch.setenv(names[0], "")
    seen = run_seen(prefix, tmp_path / "p")
    assert {r.headers["authorization"] for r in seen} == {f"Bearer key-in-{names[1]}"}
    monkeypatch.setenv(names[0], f"key-in-{names[0]}")
    seen = run_seen(prefix, tmp_path / "q")
    assert {r.headers["authorization"] for r in seen} == {f"Bearer key-in-{names[0]}"}


def test_no_key_variable_set_names_them_all_before_any_call(tmp_path: Path) -> None:
    evaluator = rejection_project(tmp_path / "p", chats(3))
    evaluator.add_judge("j", "together_ai", "m", PROMPT["prompt"])
    called: list[httpx.Request] = []
    with pytest.raises(JudgeConfigError) as caught:
        evaluator.run_judges_async(transport=httpx.MockTransport(called.append), cache=False)  # type: ignore[arg-type]
    assert not called and caught.value.field == "api_key_env"
    assert (
        "none of the variables TOGETHER_API_KEY, TOGETHER_AI_API_KEY, TOGETHERAI_API_KEY, "
        "TOGETHER_AI_TOKEN is set" in caught.value.message
    )


def test_the_docs_table_shows_the_codes_key_variables_in_order() -> None:
    """docs/judges-and-endpoints.md's table of prefixes: each row's key variables are those of
    `PROVIDERS` (and `HUGGINGFACE`), in their order; every prefix has a row."""
    text = (Path(__file__).parents[2] / "docs" / "judges-and-endpoints.md").read_text()
    header = "| `llm_client` | default address | key variables, the first one set | model sent |"
    rows = text[text.index(header) :].split("\n\n", 1)[0].splitlines()[2:]
    shown: dict[str, tuple[str, ...]] = {}
    for row in rows:
        prefixes, _, variables = (cell.strip() for cell in row.strip("|").split("|")[:3])
        names = tuple(re.findall(r"`([A-Z_]+)`", variables))
        for prefix in re.findall(r"`([a-z_]+)(?:/<provider>)?`", prefixes.split(" (")[0]):
            shown[prefix] = names
    expected = {name: p.key_variables for name, p in PROVIDERS.items()}
    expected["huggingface"] = HUGGINGFACE.key_variables
    expected["azure"] = ("AZURE_API_KEY",)
    assert shown == expected


def test_the_judges_own_key_variable_is_the_only_one_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOGETHER_API_KEY", "key-of-litellms-first")
    monkeypatch.setenv("MY_TOGETHER_KEY", "mine")
    seen = run_seen("together_ai", tmp_path / "p", api_key_env="MY_TOGETHER_KEY")
    assert {r.headers["authorization"] for r in seen} == {"Bearer mine"}
    monkeypatch.delenv("MY_TOGETHER_KEY")
    with pytest.raises(JudgeConfigError, match="variable MY_TOGETHER_KEY is not set"):
        run_seen("together_ai", tmp_path / "q", api_key_env="MY_TOGETHER_KEY")


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
