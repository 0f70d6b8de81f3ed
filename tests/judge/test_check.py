"""`check_endpoints`: one models-list request per endpoint and key, in each provider's shape."""

from __future__ import annotations

import httpx
import pytest

from meta_evaluator.judge.config import Judge, Prompt
from meta_evaluator.judge.endpoint_check import check_endpoints


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def judge(judge_id: str, client: str, **settings: object) -> Judge:
    return Judge(id=judge_id, llm_client=client, model="m",
                 prompt=Prompt(id="p", prompt="Judge {response}"), **settings)  # fmt: skip


@pytest.mark.anyio
async def test_each_provider_is_asked_for_its_models_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-SECRET")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-SECRET")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ant-SECRET")
    monkeypatch.delenv("CHECK_UNSET_KEY", raising=False)
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.host == "down.test":
            raise httpx.ConnectError("[Errno 111] Connection refused")
        return httpx.Response(200, json={"data": []})

    judges = [
        judge("gpt", "openai"),
        judge("gpt_again", "openai"),
        judge("claude", "anthropic", base_url="https://anthropic.test",
              api_key_env="ANTHROPIC_API_KEY"),
        judge("azure", "azure_openai", base_url="https://acme.openai.azure.com",
              api_version="2024-10-21"),
        judge("offline", "mock"),
        judge("down", "openai", base_url="http://down.test:8000/v1"),
        judge("nokey", "openai", base_url="https://other.test/v1", api_key_env="CHECK_UNSET_KEY"),
    ]  # fmt: skip
    checks = await check_endpoints(judges, transport=httpx.MockTransport(handler))
    lines = [c.line() for c in checks]
    assert lines[:5] == [
        "openai https://api.openai.com/v1 (gpt, gpt_again): ok",
        "anthropic https://anthropic.test (claude): ok",
        "azure_openai https://acme.openai.azure.com (azure): ok",
        "mock mock://offline (offline): ok",
        "openai http://down.test:8000/v1 (down): connection refused at down.test:8000",
    ]
    assert not checks[5].ok and "CHECK_UNSET_KEY" in checks[5].detail
    assert [c.ok for c in checks] == [True, True, True, True, False, False]
    urls = sorted(str(r.url) for r in seen)
    assert urls == [
        "http://down.test:8000/v1/models",
        "https://acme.openai.azure.com/openai/models?api-version=2024-10-21",
        "https://anthropic.test/v1/models",
        "https://api.openai.com/v1/models",
    ]
    by_host = {r.url.host: r.headers for r in seen}
    assert by_host["api.openai.com"]["authorization"] == "Bearer sk-openai-SECRET"
    assert by_host["anthropic.test"]["x-api-key"] == "ant-SECRET"
    assert by_host["acme.openai.azure.com"]["api-key"] == "azure-SECRET"
    assert not any("SECRET" in line for line in lines)


def test_the_check_goes_through_the_clients_not_llm_internals() -> None:
    """The models-list request is the clients' own (`list_models`): one place for URLs, keys."""
    import ast
    from pathlib import Path

    import meta_evaluator.judge.endpoint_check as module

    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not {name for name in imported if name and name.startswith("meta_evaluator.llm._")}
