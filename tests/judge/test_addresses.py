"""A judge without `base_url` goes where meta-evaluator 0.3.3 (through LiteLLM) sent it: to the
address in its provider's variable (`HOSTED_VLLM_API_BASE`, `OPENAI_BASE_URL` ...), else the
provider's default. Against a loopback server: the calls, and the key, go there.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.errors import JudgeConfigError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge import Judge, fingerprint
from meta_evaluator.judge.addresses import ADDRESS_VARIABLES, configured_url, judge_address
from meta_evaluator.judge.providers import CLIENTS, PROVIDERS
from meta_evaluator.llm.mock import mock_answer
from tests.conftest import Main, chats, rejection_project
from tests.fake_llm.server import start_in_thread
from tests.loopback import JsonHandler, serving

DOCS = Path(__file__).parents[2] / "docs"
PROMPT = {"id": "p", "prompt": "Did {response} refuse {prompt}?"}
KEY = "sk-loopback-test-key-0000"


class Recorded(JsonHandler):
    """Answers chat completions (OpenAI's and Azure's paths) as the mock would; records each
    call's path and credentials."""

    calls: list[dict[str, Any]]
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = json.loads(self.read_body())
        with self.lock:
            self.calls.append(
                {
                    "path": self.path,
                    "authorization": self.headers.get("authorization"),
                    "api-key": self.headers.get("api-key"),
                    "model": body["model"],
                }
            )
        schema = body.get("response_format", {}).get("json_schema", {}).get("schema")
        answer = mock_answer(body["messages"][-1]["content"], schema)
        content = json.dumps(answer) if isinstance(answer, dict) else answer
        self.send_json(200, {
            "choices": [{"message": {"content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7},
        })  # fmt: skip


@pytest.fixture
def server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A loopback server: its root URL and the calls it received."""
    calls: list[dict[str, Any]] = []
    handler = type("Handler", (Recorded,), {"calls": calls})
    with serving(handler) as running:
        yield f"http://127.0.0.1:{running.server_address[1]}", calls


def judges_033(tmp_path: Path) -> Path:
    """A judges YAML as 0.3.3 users wrote it: providers by prefix, no base_url."""
    (tmp_path / "prompt.md").write_text("Prompt: {prompt}\nResponse: {response}\n")
    path = tmp_path / "judges.yaml"
    path.write_text(
        "judges:\n"
        "  - {id: local_vllm_judge, llm_client: hosted_vllm, model: meta-llama/Llama-3.1-8B,\n"
        "     prompt_file: ./prompt.md, temperature: 0.0}\n"
        "  - {id: gpt_judge, llm_client: openai, model: gpt-4o-mini, prompt_file: ./prompt.md}\n"
    )
    return path


def test_the_table_covers_every_client_and_provider() -> None:
    assert set(ADDRESS_VARIABLES) == {*CLIENTS, *PROVIDERS, "huggingface"} - {"mock"}


@pytest.mark.parametrize("page", ["judges-and-endpoints.md", "migrating-from-0.3.md"])
def test_the_docs_print_the_codes_table(page: str) -> None:
    """The one table: each page shows every row of `ADDRESS_VARIABLES`, in its order."""
    label = {"azure_openai": "`azure_openai` (0.3.3: `azure`)",
             "huggingface": "`huggingface/<provider>`"}  # fmt: skip
    rows = ["| `llm_client` | variables read, in this order | what the value is |", "| --- |"]
    for name, variables in ADDRESS_VARIABLES.items():
        names = ", ".join(f"`{n}`" for n in variables.names) or "none"
        if variables.version:
            names += f"; `{variables.version}` for `api_version`"
        rows.append(f"| {label.get(name, f'`{name}`')} | {names} | {variables.reads} |")
    text = (DOCS / page).read_text()
    start = text.index(rows[0])
    shown = text[start:].split("\n\n", 1)[0].splitlines()
    assert [shown[0], *shown[2:]] == [rows[0], *rows[2:]]


@pytest.mark.parametrize("openai_variable", ["OPENAI_BASE_URL", "OPENAI_API_BASE"])
def test_033_judges_go_to_the_address_their_variables_name(
    openai_variable: str,
    tmp_path: Path,
    server: tuple[str, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, calls = server
    monkeypatch.setenv("HOSTED_VLLM_API_BASE", f"{root}/v1")
    monkeypatch.setenv(openai_variable, f"{root}/v1/")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    evaluator = rejection_project(tmp_path / "p", chats(3))
    evaluator.load_judges_from_yaml(judges_033(tmp_path))
    results = evaluator.run_judges_async(cache=False)
    assert {j: r.counts()["valid"] for j, r in results.items()} == {
        "local_vllm_judge": 3, "gpt_judge": 3,
    }  # fmt: skip
    assert len(calls) == 6 and {c["path"] for c in calls} == {"/v1/chat/completions"}
    by_model = {c["model"]: c["authorization"] for c in calls}
    # the OpenAI judge sends OPENAI_API_KEY there, as LiteLLM did; the local vLLM none
    assert by_model == {"gpt-4o-mini": f"Bearer {KEY}", "meta-llama/Llama-3.1-8B": None}


def test_azure_reads_its_address_and_version_as_033_did(
    tmp_path: Path, server: tuple[str, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, calls = server
    monkeypatch.setenv("AZURE_API_BASE", root)
    monkeypatch.setenv("AZURE_API_VERSION", "2024-10-21")
    monkeypatch.setenv("AZURE_API_KEY", KEY)
    evaluator = rejection_project(tmp_path / "p", chats(2))
    evaluator.add_judge("az", "azure", "gpt-4o-mini-2024-07-18", PROMPT["prompt"])
    results = evaluator.run_judges_async(cache=False)
    assert results["az"].counts()["valid"] == 2
    assert {c["path"] for c in calls} == {
        "/openai/deployments/gpt-4o-mini-2024-07-18/chat/completions?api-version=2024-10-21"
    }
    assert {c["api-key"] for c in calls} == {KEY}


def test_azure_without_address_or_variable_says_both(tmp_path: Path) -> None:
    evaluator = rejection_project(tmp_path / "p", chats(2))
    evaluator.add_judge("az", "azure", "gpt-4o-mini", PROMPT["prompt"])
    with pytest.raises(JudgeConfigError, match="AZURE_API_BASE and AZURE_API_VERSION"):
        evaluator.plan_run()


def test_anthropic_reads_its_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with start_in_thread() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        evaluator = rejection_project(tmp_path / "p", chats(2))
        evaluator.add_judge("claude", "anthropic", "claude-x", PROMPT["prompt"])
        results = evaluator.run_judges_async(cache=False)
        assert results["claude"].counts()["valid"] == 2
        assert fake.stats()["by_endpoint"] == {"/v1/messages": 2}


def judge(client: str, **fields: Any) -> Judge:
    return Judge(id="j", llm_client=client, model="m", prompt=PROMPT, **fields)


@pytest.mark.parametrize(
    ("client", "variable", "value", "url"),
    [
        ("openai", "OPENAI_BASE_URL", "http://10.1.2.3:8000/v1", "http://10.1.2.3:8000/v1"),
        ("hosted_vllm", "HOSTED_VLLM_API_BASE", "http://gpu:8000/v1/", "http://gpu:8000/v1"),
        ("hosted_vllm", "HOSTED_VLLM_API_BASE", "http://gpu:8000/v1/chat/completions",
         "http://gpu:8000/v1"),
        ("ollama", "OLLAMA_API_BASE", "http://gpu:11434", "http://gpu:11434/v1"),
        ("ollama", "OLLAMA_API_BASE", "http://gpu:11434/v1", "http://gpu:11434/v1"),
        ("groq", "GROQ_API_BASE", "https://proxy.example/groq/v1", "https://proxy.example/groq/v1"),
        ("gemini", "GEMINI_API_BASE", "https://proxy.example/v1beta",
         "https://proxy.example/v1beta/openai"),
        ("anthropic", "ANTHROPIC_API_BASE", "https://proxy.example/v1/messages",
         "https://proxy.example/v1"),
        ("huggingface/together", "HUGGINGFACE_API_BASE",
         "https://proxy.example/v1/chat/completions", "https://proxy.example/v1"),
    ],
)  # fmt: skip
def test_each_value_becomes_our_base_url(client: str, variable: str, value: str, url: str) -> None:
    address = judge_address(judge(client), {variable: value})
    assert (address.base_url, address.variable) == (url, variable)
    assert address.describe() == f"{url} (from {variable})"


def test_without_a_variable_the_provider_default_and_with_base_url_the_judges_own() -> None:
    assert judge_address(judge("hosted_vllm"), {}).describe() == "http://localhost:8000/v1"
    assert judge_address(judge("openai"), {}).describe() == "https://api.openai.com/v1"
    own = judge("hosted_vllm", base_url="http://127.0.0.1:9/v1")
    assert judge_address(own, {"HOSTED_VLLM_API_BASE": "http://other:1/v1"}).describe() == (
        "http://127.0.0.1:9/v1"
    )
    # vLLM run by LiteLLM inside the process read no address: its variable is another's
    assert judge_address(judge("vllm"), {"HOSTED_VLLM_API_BASE": "http://x:1/v1"}).variable is None


@pytest.mark.parametrize("value", ["localhost:8000", "ftp://gpu/v1", "gpu:8000/v1"])
def test_a_base_url_that_is_not_http_is_refused_naming_the_variable(
    value: str, tmp_path: Path, server: tuple[str, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    _, calls = server
    monkeypatch.setenv("HOSTED_VLLM_API_BASE", value)
    evaluator = rejection_project(tmp_path / "p", chats(2))
    evaluator.add_judge("v", "hosted_vllm", "m", PROMPT["prompt"])
    with pytest.raises(JudgeConfigError) as caught:
        evaluator.run_judges_async(cache=False)
    message = caught.value.message
    assert "HOSTED_VLLM_API_BASE" in message and "is not an http:// or https:// URL" in message
    assert (caught.value.judge_id, caught.value.field) == ("v", "base_url")
    assert calls == []


def test_a_credential_in_the_variable_is_refused_and_never_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_BASE", "http://me:hunter2secret@10.0.0.1/v1")
    with pytest.raises(JudgeConfigError, match=r"OPENAI_API_BASE.*holds a credential") as caught:
        judge_address(judge("openai"))
    assert "hunter2secret" not in caught.value.message


def test_two_variables_naming_different_addresses_are_refused() -> None:
    env = {"OPENAI_BASE_URL": "http://a:1/v1", "OPENAI_API_BASE": "http://b:2/v1"}
    with pytest.raises(JudgeConfigError, match="OPENAI_BASE_URL and OPENAI_API_BASE"):
        judge_address(judge("openai"), env)
    same = {"OPENAI_BASE_URL": "http://a:1/v1", "OPENAI_API_BASE": "http://a:1/v1/"}
    assert judge_address(judge("openai"), same).variable == "OPENAI_BASE_URL"


def test_the_fingerprint_is_the_configurations_not_the_environments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A provider judge's fingerprint is what it was when its default address was written into
    the judge (runs of earlier versions are reused), with or without an address variable."""
    task = EvalTask({"rejection": ["rejection", "not rejection"]}, ["prompt"], ["response"])
    vllm = judge("hosted_vllm")
    assert vllm.base_url is None and vllm.provider == "hosted_vllm"
    assert configured_url(vllm) == PROVIDERS["hosted_vllm"].base_url
    written = judge("openai", base_url=PROVIDERS["hosted_vllm"].base_url)
    before = fingerprint(vllm, task)
    assert fingerprint(written, task) == before
    monkeypatch.setenv("HOSTED_VLLM_API_BASE", "http://gpu:8000/v1")
    assert fingerprint(vllm, task) == before


def test_a_provider_judge_saves_its_prefix_not_an_address(tmp_path: Path) -> None:
    evaluator = rejection_project(tmp_path / "p", chats(2))
    evaluator.add_judge("v", "hosted_vllm", "m", PROMPT["prompt"])
    evaluator.save_state()
    saved = json.loads((tmp_path / "p" / "main_state.json").read_text())
    entry = saved["judges"]["v"]
    assert (entry["llm_client"], entry["provider"], entry["base_url"]) == (
        "openai", "hosted_vllm", None,
    )  # fmt: skip
    again = MetaEvaluator(tmp_path / "p", load=True).judge_registry["v"]
    assert again.provider == "hosted_vllm" and again == evaluator.judge_registry["v"]
    plain = judge("openai").model_dump(mode="json")
    assert "provider" not in plain  # judges without one are saved as before


def test_status_and_the_dry_run_name_the_variable(
    tmp_path: Path, entry: Main, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOSTED_VLLM_API_BASE", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    evaluator = rejection_project(tmp_path / "p", chats(2))
    evaluator.load_judges_from_yaml(judges_033(tmp_path))
    evaluator.save_state()
    status = entry("status", tmp_path / "p")
    assert status.returncode == 0, status.stderr
    assert (
        "local_vllm_judge: openai 'meta-llama/Llama-3.1-8B' at http://127.0.0.1:9/v1 "
        "(from HOSTED_VLLM_API_BASE), prompt" in status.stdout
    )
    assert "gpt_judge: openai 'gpt-4o-mini' at https://api.openai.com/v1, prompt" in status.stdout
    data = json.loads(entry("status", tmp_path / "p", "--json").stdout)["judges"]
    assert (data["local_vllm_judge"]["base_url"], data["local_vllm_judge"]["base_url_from"]) == (
        "http://127.0.0.1:9/v1", "HOSTED_VLLM_API_BASE",
    )  # fmt: skip
    assert data["gpt_judge"]["base_url_from"] is None
    dry = entry("run", tmp_path / "p", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert (
        "local_vllm_judge: openai 'meta-llama/Llama-3.1-8B' at http://127.0.0.1:9/v1 "
        "(from HOSTED_VLLM_API_BASE)\n" in dry.stdout
    )
    plan = MetaEvaluator(tmp_path / "p", load=True).plan_run()
    assert {p.judge_id: p.base_url_from for p in plan.judges} == {
        "local_vllm_judge": "HOSTED_VLLM_API_BASE", "gpt_judge": None,
    }  # fmt: skip
    monkeypatch.setenv("HOSTED_VLLM_API_BASE", "gpu:8000")
    status = entry("status", tmp_path / "p")
    assert status.returncode == 0 and "its address cannot be used" in status.stdout
    assert "HOSTED_VLLM_API_BASE" in status.stdout
    dry = entry("run", tmp_path / "p", "--dry-run")
    assert dry.returncode == 2 and "HOSTED_VLLM_API_BASE" in dry.stderr
    assert "Traceback" not in dry.stderr


def test_provider_must_be_a_prefix_of_the_openai_client() -> None:
    with pytest.raises(JudgeConfigError, match=r"provider: 'nope' is not a provider prefix"):
        judge("openai", provider="nope")
    with pytest.raises(JudgeConfigError, match="served by the OpenAI-compatible client"):
        judge("anthropic", provider="groq")
    assert judge("openai", provider="huggingface/together").provider == "huggingface/together"
