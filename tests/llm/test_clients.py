"""The HTTP clients: the exact requests they send, how they read answers, how failures map.

Requests go through respx (or an httpx.MockTransport) on a real httpx.AsyncClient (STYLE.md X4).
"""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import httpx
import pytest
import respx

from meta_evaluator.llm._http import post_json
from meta_evaluator.llm.anthropic import AnthropicClient, parse_message
from meta_evaluator.llm.classify import CallFailed, EndpointRejected, MalformedResponse, classify
from meta_evaluator.llm.openai import OpenAIClient, parse_completion
from meta_evaluator.llm.types import ChatRequest, ChatResponse, OutputSchema

KEY = "sk-test-9f8e7d6c5b4a-SECRET"
BASE = "https://llm.test/v1"
AZURE = "https://acme.openai.azure.com"
ANTHROPIC = "https://anthropic.test"

SCHEMA = OutputSchema(
    "evaluation",
    {
        "type": "object",
        "properties": {"rejection": {"type": "string", "enum": ["rejection", "not rejection"]}},
        "required": ["rejection"],
        "additionalProperties": False,
    },
)
MESSAGES = [{"role": "user", "content": "Did the reply refuse?"}]
COMPLETION = {
    "choices": [
        {"message": {"role": "assistant", "content": "rejection"}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 11, "completion_tokens": 2},
}
MESSAGE = {
    "content": [{"type": "text", "text": "rejection"}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 11, "output_tokens": 2},
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def sent_json(route: respx.Route) -> Any:
    return json.loads(route.calls.last.request.content)


# --- OpenAI-compatible -------------------------------------------------------------------------


@pytest.mark.anyio
async def test_openai_request_with_schema() -> None:
    request = ChatRequest(
        model="gpt-x", messages=MESSAGES, temperature=0.0, max_tokens=64, output_schema=SCHEMA
    )
    async with httpx.AsyncClient() as http:
        with respx.mock(assert_all_called=True) as router:
            route = router.post(f"{BASE}/chat/completions").respond(200, json=COMPLETION)
            client = OpenAIClient(http, base_url=BASE + "/", api_key=KEY)
            assert client.url("gpt-x") == f"{BASE}/chat/completions"
            await client.complete(request)
    sent = route.calls.last.request
    assert route.call_count == 1
    assert sent.method == "POST"
    assert str(sent.url) == f"{BASE}/chat/completions"
    assert sent.headers["Authorization"] == f"Bearer {KEY}"
    assert "api-key" not in sent.headers
    assert sent.headers["content-type"] == "application/json"
    assert sent_json(route) == {
        "model": "gpt-x",
        "messages": MESSAGES,
        "temperature": 0.0,
        "max_tokens": 64,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "evaluation", "schema": SCHEMA.schema, "strict": True},
        },
    }


@pytest.mark.anyio
async def test_openai_request_without_schema_or_settings_and_extra_headers() -> None:
    request = ChatRequest(model="m", messages=MESSAGES, extra_headers={"X-Team": "evals"})
    async with httpx.AsyncClient() as http:
        with respx.mock(assert_all_called=True) as router:
            route = router.post(f"{BASE}/chat/completions").respond(200, json=COMPLETION)
            await OpenAIClient(http, base_url=BASE, api_key=KEY).complete(request)
    # None settings leave the server's defaults: the keys are not sent at all.
    assert sent_json(route) == {"model": "m", "messages": MESSAGES}
    assert route.calls.last.request.headers["X-Team"] == "evals"


@pytest.mark.anyio
async def test_openai_without_key_sends_no_authorization() -> None:
    async with httpx.AsyncClient() as http:
        with respx.mock(assert_all_called=True) as router:
            route = router.post(f"{BASE}/chat/completions").respond(200, json=COMPLETION)
            await OpenAIClient(http, base_url=BASE).complete(ChatRequest("m", MESSAGES))
    assert "Authorization" not in route.calls.last.request.headers


def test_openai_default_base_url() -> None:
    client = OpenAIClient(httpx.AsyncClient())
    assert client.url("gpt-4o") == "https://api.openai.com/v1/chat/completions"


@pytest.mark.anyio
async def test_azure_request() -> None:
    request = ChatRequest(model="my-deploy", messages=MESSAGES, output_schema=SCHEMA)
    expected_url = f"{AZURE}/openai/deployments/my-deploy/chat/completions?api-version=2024-06-01"
    async with httpx.AsyncClient() as http:
        with respx.mock(assert_all_called=True) as router:
            route = router.post(
                f"{AZURE}/openai/deployments/my-deploy/chat/completions",
                params={"api-version": "2024-06-01"},
            ).respond(200, json=COMPLETION)
            client = OpenAIClient(
                http, base_url=AZURE + "/", api_key=KEY, azure_api_version="2024-06-01"
            )
            assert client.url("my-deploy") == expected_url
            response = await client.complete(request)
    sent = route.calls.last.request
    assert str(sent.url) == expected_url
    assert sent.headers["api-key"] == KEY
    assert "Authorization" not in sent.headers
    assert sent_json(route)["response_format"]["json_schema"]["strict"] is True
    assert response.text == "rejection"


# --- Anthropic ---------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    "base", [ANTHROPIC, ANTHROPIC + "/", ANTHROPIC + "/v1", ANTHROPIC + "/v1/"]
)
async def test_anthropic_url_with_or_without_v1(base: str) -> None:
    async with httpx.AsyncClient() as http:
        with respx.mock(assert_all_called=True) as router:
            route = router.post(f"{ANTHROPIC}/v1/messages").respond(200, json=MESSAGE)
            client = AnthropicClient(http, base_url=base, api_key=KEY)
            assert client.url("claude") == f"{ANTHROPIC}/v1/messages"
            await client.complete(ChatRequest("claude", MESSAGES))
    assert str(route.calls.last.request.url) == f"{ANTHROPIC}/v1/messages"


def test_anthropic_default_url() -> None:
    client = AnthropicClient(httpx.AsyncClient())
    assert client.url("claude") == "https://api.anthropic.com/v1/messages"


@pytest.mark.anyio
async def test_anthropic_request_with_schema() -> None:
    request = ChatRequest(
        model="claude-x",
        messages=[
            {"role": "system", "content": "You are a careful judge."},
            {"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": "Did the reply refuse?"},
        ],
        temperature=0.2,
        output_schema=SCHEMA,
    )
    async with httpx.AsyncClient() as http:
        with respx.mock(assert_all_called=True) as router:
            route = router.post(f"{ANTHROPIC}/v1/messages").respond(200, json=MESSAGE)
            await AnthropicClient(http, base_url=ANTHROPIC, api_key=KEY).complete(request)
    sent = route.calls.last.request
    assert sent.headers["x-api-key"] == KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert "Authorization" not in sent.headers
    assert sent_json(route) == {
        "model": "claude-x",
        "max_tokens": 1024,
        "system": "You are a careful judge.\n\nAnswer briefly.",
        "messages": [{"role": "user", "content": "Did the reply refuse?"}],
        "temperature": 0.2,
        "tools": [
            {
                "name": "evaluation",
                "description": "Record the evaluation.",
                "input_schema": SCHEMA.schema,
            }
        ],
        "tool_choice": {"type": "tool", "name": "evaluation"},
    }


@pytest.mark.anyio
async def test_anthropic_request_without_schema() -> None:
    request = ChatRequest(model="claude-x", messages=MESSAGES, max_tokens=50)
    async with httpx.AsyncClient() as http:
        with respx.mock(assert_all_called=True) as router:
            route = router.post(f"{ANTHROPIC}/v1/messages").respond(200, json=MESSAGE)
            await AnthropicClient(http, base_url=ANTHROPIC, api_key=KEY).complete(request)
    assert sent_json(route) == {"model": "claude-x", "max_tokens": 50, "messages": MESSAGES}


# --- Reading answers ---------------------------------------------------------------------------


def completion(message: dict[str, Any], finish: str | None, usage: Any = None) -> dict[str, Any]:
    answer: dict[str, Any] = {"choices": [{"message": message, "finish_reason": finish}]}
    if usage is not None:
        answer["usage"] = usage
    return answer


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        pytest.param(
            completion(
                {"content": "rejection"}, "stop", {"prompt_tokens": 12, "completion_tokens": 3}
            ),
            ChatResponse("rejection", finish_reason="stop", prompt_tokens=12, completion_tokens=3),
            id="stop-with-usage",
        ),
        pytest.param(
            completion({"content": '{"rejection": "rej'}, "length"),
            ChatResponse('{"rejection": "rej', finish_reason="length"),
            id="length",
        ),
        pytest.param(
            completion({"content": None}, "content_filter"),
            ChatResponse("", finish_reason="refusal"),
            id="content-filter",
        ),
        pytest.param(
            completion({"content": None, "refusal": "I can't help with that."}, "stop"),
            ChatResponse("", finish_reason="refusal", refusal="I can't help with that."),
            id="refusal-field",
        ),
        pytest.param(
            completion({"content": "x"}, None), ChatResponse("x", finish_reason="stop"), id="none"
        ),
        pytest.param(
            completion({"content": "x"}, "tool_calls"),
            ChatResponse("x", finish_reason="other"),
            id="other",
        ),
        pytest.param(
            completion(
                {"content": "x"}, "stop", {"prompt_tokens": "12", "completion_tokens": True}
            ),
            ChatResponse("x", finish_reason="stop"),
            id="usage-not-integers",
        ),
    ],
)
def test_parse_completion(answer: dict[str, Any], expected: ChatResponse) -> None:
    assert parse_completion(answer) == expected


@pytest.mark.parametrize(
    "answer", [{}, {"id": "x"}, {"choices": []}, {"choices": [{}]}, {"choices": None}]
)
def test_parse_completion_without_message_is_malformed(answer: dict[str, Any]) -> None:
    with pytest.raises(MalformedResponse, match="choices"):
        parse_completion(answer)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        pytest.param(
            {
                "content": [
                    {"type": "text", "text": "Hello, "},
                    {"type": "tool_use", "name": "x", "input": {"a": 1}},
                    {"type": "text", "text": "world"},
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 20, "output_tokens": 5},
            },
            ChatResponse(
                "Hello, world",
                structured={"a": 1},
                finish_reason="stop",
                prompt_tokens=20,
                completion_tokens=5,
            ),
            id="text-and-tool",
        ),
        pytest.param(
            {
                "content": [
                    {"type": "tool_use", "name": "evaluation", "input": {"rejection": "rejection"}},
                    {"type": "tool_use", "name": "evaluation", "input": {"rejection": "other"}},
                ],
                "stop_reason": "tool_use",
            },
            ChatResponse("", structured={"rejection": "rejection"}),
            id="first-tool-input",
        ),
        pytest.param(
            {"content": [{"type": "text", "text": "partial"}], "stop_reason": "max_tokens"},
            ChatResponse("partial", finish_reason="length"),
            id="max-tokens",
        ),
        pytest.param(
            {"content": [], "stop_reason": "refusal"},
            ChatResponse("", finish_reason="refusal"),
            id="refusal",
        ),
        pytest.param(
            {"content": [{"type": "text", "text": "x"}], "stop_reason": "pause_turn"},
            ChatResponse("x", finish_reason="other"),
            id="other",
        ),
    ],
)
def test_parse_message(answer: dict[str, Any], expected: ChatResponse) -> None:
    assert parse_message(answer) == expected


def test_parse_message_without_content_list_is_malformed() -> None:
    with pytest.raises(MalformedResponse, match="content"):
        parse_message({"type": "message"})


@pytest.mark.anyio
async def test_openai_complete_parses_the_answer() -> None:
    async with httpx.AsyncClient() as http:
        with respx.mock(assert_all_called=True) as router:
            router.post(f"{BASE}/chat/completions").respond(200, json=COMPLETION)
            response = await OpenAIClient(http, base_url=BASE).complete(ChatRequest("m", MESSAGES))
    assert response == ChatResponse("rejection", prompt_tokens=11, completion_tokens=2)


@pytest.mark.anyio
async def test_anthropic_complete_parses_a_tool_answer() -> None:
    answer = {
        "content": [
            {"type": "tool_use", "name": "evaluation", "input": {"rejection": "rejection"}}
        ],
        "stop_reason": "max_tokens",
        "usage": {"input_tokens": 30, "output_tokens": 7},
    }
    async with httpx.AsyncClient() as http:
        with respx.mock(assert_all_called=True) as router:
            router.post(f"{ANTHROPIC}/v1/messages").respond(200, json=answer)
            client = AnthropicClient(http, base_url=ANTHROPIC, api_key=KEY)
            response = await client.complete(ChatRequest("c", MESSAGES, output_schema=SCHEMA))
    assert response.structured == {"rejection": "rejection"}
    assert response.finish_reason == "length"
    assert (response.prompt_tokens, response.completion_tokens) == (30, 7)


# --- Failures ----------------------------------------------------------------------------------


def exception_text(exc: BaseException) -> str:
    """Every message and repr along the exception's cause/context chain."""
    parts: list[str] = []
    seen: BaseException | None = exc
    while seen is not None:
        parts += [str(seen), repr(seen)]
        seen = seen.__cause__ or seen.__context__
    return "\n".join(parts)


async def openai_failure(route_response: dict[str, Any]) -> BaseException:
    """The exception OpenAIClient.complete raises when the server does `route_response`."""
    async with httpx.AsyncClient() as http:
        with respx.mock(assert_all_called=True) as router:
            router.post(f"{BASE}/chat/completions").mock(**route_response)
            client = OpenAIClient(http, base_url=BASE, api_key=KEY, timeout=5)
            with pytest.raises((CallFailed, EndpointRejected)) as caught:
                await client.complete(ChatRequest("m", MESSAGES))
    assert KEY not in exception_text(caught.value)
    return caught.value


@pytest.mark.anyio
async def test_429_with_retry_after_is_rate_limited() -> None:
    response = httpx.Response(429, headers={"Retry-After": "7"}, json={"error": "slow down"})
    exc = await openai_failure({"return_value": response})
    assert type(exc) is CallFailed
    assert exc.status == "rate_limited"
    assert exc.http_status == 429
    assert exc.retry_after == 7.0
    assert "slow down" in str(exc)
    assert classify(exc).retry and classify(exc).min_wait == 7.0


@pytest.mark.anyio
async def test_429_with_a_garbage_retry_after_is_still_rate_limited() -> None:
    response = httpx.Response(429, headers={"Retry-After": "soon"}, text="slow down")
    async with httpx.AsyncClient() as http:
        with respx.mock(assert_all_called=True) as router:
            router.post(f"{BASE}/chat/completions").mock(return_value=response)
            client = OpenAIClient(http, base_url=BASE, api_key=KEY)
            with pytest.raises(CallFailed) as caught:
                await client.complete(ChatRequest("m", MESSAGES))
    assert caught.value.status == "rate_limited"
    assert caught.value.retry_after is None


@pytest.mark.anyio
@pytest.mark.parametrize("status", [500, 502, 503])
async def test_5xx_is_http_error(status: int) -> None:
    response = httpx.Response(status, headers={"Retry-After": "2"}, text="overloaded")
    exc = await openai_failure({"return_value": response})
    assert type(exc) is CallFailed
    assert exc.status == "http_error"
    assert exc.http_status == status
    assert exc.retry_after == 2.0
    assert classify(exc).retry


@pytest.mark.anyio
@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_fatal_status_is_endpoint_rejected(status: int) -> None:
    response = httpx.Response(status, json={"error": {"message": "bad request"}})
    exc = await openai_failure({"return_value": response})
    assert isinstance(exc, EndpointRejected)
    assert exc.http_status == status
    assert f"HTTP {status}" in str(exc)
    assert "bad request" in str(exc)
    assert not classify(exc).retry


@pytest.mark.anyio
@pytest.mark.parametrize(
    "response",
    [
        pytest.param(httpx.Response(200, text="<html>gateway</html>"), id="not-json"),
        pytest.param(httpx.Response(200, text=""), id="empty-body"),
        pytest.param(httpx.Response(200, json=[1, 2, 3]), id="json-list"),
        pytest.param(httpx.Response(200, json="ok"), id="json-string"),
        pytest.param(httpx.Response(200, json={"id": "chatcmpl-1"}), id="no-choices"),
        pytest.param(httpx.Response(200, json={"choices": []}), id="empty-choices"),
    ],
)
async def test_bad_2xx_body_is_malformed(response: httpx.Response) -> None:
    exc = await openai_failure({"return_value": response})
    assert isinstance(exc, MalformedResponse)
    assert exc.status == "malformed_response"
    assert classify(exc).retry


@pytest.mark.anyio
async def test_connect_error_is_connection_error() -> None:
    exc = await openai_failure({"side_effect": httpx.ConnectError("connection refused")})
    assert type(exc) is CallFailed
    assert exc.status == "connection_error"
    assert exc.http_status is None
    assert "connection refused" in str(exc)
    assert isinstance(exc.__cause__, httpx.ConnectError)
    assert classify(exc).retry


@pytest.mark.anyio
async def test_httpx_timeout_is_timeout() -> None:
    exc = await openai_failure({"side_effect": httpx.ReadTimeout("read timed out")})
    assert type(exc) is CallFailed
    assert exc.status == "timeout"
    assert classify(exc).retry


@pytest.mark.anyio
async def test_an_attempt_past_its_timeout_is_timeout() -> None:
    async def hang(request: httpx.Request) -> httpx.Response:
        await anyio.sleep(1)
        return httpx.Response(200, json=COMPLETION)

    async with httpx.AsyncClient(transport=httpx.MockTransport(hang)) as http:
        client = OpenAIClient(http, base_url=BASE, api_key=KEY, timeout=0.05)
        started = time.perf_counter()
        with pytest.raises(CallFailed) as caught:
            await client.complete(ChatRequest("m", MESSAGES))
        elapsed = time.perf_counter() - started
    assert caught.value.status == "timeout"
    assert "0.05" in str(caught.value)
    assert elapsed < 0.5
    assert KEY not in exception_text(caught.value)
    assert classify(caught.value).retry


@pytest.mark.anyio
async def test_post_json_returns_the_object_and_the_time_taken() -> None:
    async def answer(request: httpx.Request) -> httpx.Response:
        await anyio.sleep(0.02)
        return httpx.Response(200, json={"ok": True})

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
        body, elapsed, limits = await post_json(
            http, f"{BASE}/x", headers={"A": "b"}, body={"q": 1}, timeout=5
        )
    assert body == {"ok": True}
    assert 0.015 <= elapsed < 1.0
    assert limits is None  # no rate-limit headers


@pytest.mark.anyio
async def test_post_json_goes_through_the_transport_mounted_for_the_url() -> None:
    """Without `direct`, calls go through AsyncClient.send: the transport for the URL (a proxy)."""
    seen: list[str] = []

    def mounted(request: httpx.Request) -> httpx.Response:
        seen.append(f"mounted {request.url}")
        return httpx.Response(200, json={"via": "mount"}, headers={"set-cookie": "a=1"})

    def default(request: httpx.Request) -> httpx.Response:
        seen.append(f"default {request.url}")
        return httpx.Response(200, json={"via": "default"})

    async with httpx.AsyncClient(
        transport=httpx.MockTransport(default),
        mounts={"http://judge.example": httpx.MockTransport(mounted)},
    ) as http:
        via_mount, _, _ = await post_json(
            http, "http://judge.example/v1/x", headers={}, body={}, timeout=5
        )
        via_default, _, _ = await post_json(
            http, "http://other.example/v1/x", headers={}, body={}, timeout=5
        )
    assert (via_mount, via_default) == ({"via": "mount"}, {"via": "default"})
    assert seen == ["mounted http://judge.example/v1/x", "default http://other.example/v1/x"]


@pytest.mark.anyio
async def test_post_json_with_direct_skips_the_clients_machinery() -> None:
    """`direct` takes the call itself: no event hook of the client runs, same answer."""
    from meta_evaluator.llm.transport import PooledTransport
    from tests.fake_llm import start_in_thread

    hooked: list[str] = []

    async def hook(request: httpx.Request) -> None:
        hooked.append(request.url.path)

    body = {"model": "m", "messages": [{"role": "user", "content": "Say yes."}]}
    with start_in_thread() as server:
        url = f"{server.base_url}/v1/chat/completions"
        direct = PooledTransport(max_connections=2)
        async with httpx.AsyncClient(transport=direct, event_hooks={"request": [hook]}) as http:
            fast, _, _ = await post_json(http, url, headers={}, body=body, timeout=5, direct=direct)
            assert not hooked
            slow, _, _ = await post_json(http, url, headers={}, body=body, timeout=5)
            assert hooked == ["/v1/chat/completions"]  # without `direct`: through send
    assert fast["choices"][0]["message"] == slow["choices"][0]["message"]


@pytest.mark.anyio
async def test_post_json_on_a_closed_client_raises_as_httpx_does() -> None:
    http = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(200)))
    await http.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        await post_json(http, f"{BASE}/x", headers={}, body={}, timeout=5)


@pytest.mark.anyio
async def test_long_error_bodies_are_cut_short() -> None:
    response = httpx.Response(500, text="x" * 5000)
    exc = await openai_failure({"return_value": response})
    assert len(str(exc)) < 400
    assert str(exc).endswith("…")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("route_response", "expected"),
    [
        pytest.param(
            {"return_value": httpx.Response(429, headers={"retry-after-ms": "300"})},
            CallFailed,
            id="429",
        ),
        pytest.param({"return_value": httpx.Response(503)}, CallFailed, id="503"),
        pytest.param({"return_value": httpx.Response(401)}, EndpointRejected, id="401"),
        pytest.param({"return_value": httpx.Response(200, text="{")}, MalformedResponse, id="bad"),
        pytest.param(
            {"return_value": httpx.Response(200, json={})}, MalformedResponse, id="nolist"
        ),
        pytest.param({"side_effect": httpx.ConnectError("refused")}, CallFailed, id="connect"),
    ],
)
async def test_anthropic_failures_map_the_same_way_without_the_key(
    route_response: dict[str, Any], expected: type[Exception]
) -> None:
    async with httpx.AsyncClient() as http:
        with respx.mock(assert_all_called=True) as router:
            router.post(f"{ANTHROPIC}/v1/messages").mock(**route_response)
            client = AnthropicClient(http, base_url=ANTHROPIC, api_key=KEY)
            with pytest.raises(expected) as caught:
                await client.complete(ChatRequest("c", MESSAGES))
    assert KEY not in exception_text(caught.value)


@pytest.mark.anyio
async def test_azure_rejection_does_not_show_the_key() -> None:
    async with httpx.AsyncClient() as http:
        with respx.mock(assert_all_called=True) as router:
            router.post(f"{AZURE}/openai/deployments/d/chat/completions").respond(
                401, json={"error": "Access denied due to invalid subscription key"}
            )
            client = OpenAIClient(http, base_url=AZURE, api_key=KEY, azure_api_version="v1")
            with pytest.raises(EndpointRejected) as caught:
                await client.complete(ChatRequest("d", MESSAGES))
    assert caught.value.http_status == 401
    assert KEY not in exception_text(caught.value)


# --- list_models: the cheap request of --check -------------------------------------------------


@pytest.mark.anyio
async def test_list_models_of_each_provider_with_its_key_header() -> None:
    models = {"data": [{"id": "m1"}, {"id": "m2"}]}
    async with httpx.AsyncClient() as http:
        with respx.mock(assert_all_called=True) as router:
            openai_route = router.get(f"{BASE}/models").respond(200, json=models)
            azure_route = router.get(
                f"{AZURE}/openai/models", params={"api-version": "2024-06-01"}
            ).respond(200, json=models)
            anthropic_route = router.get(f"{ANTHROPIC}/v1/models").respond(200, json=models)
            assert await OpenAIClient(http, base_url=BASE, api_key=KEY).list_models(
                extra_headers={"x-team": "eval"}
            ) == ["m1", "m2"]
            azure = OpenAIClient(http, base_url=AZURE, api_key=KEY, azure_api_version="2024-06-01")
            assert await azure.list_models() == ["m1", "m2"]
            assert await AnthropicClient(http, base_url=ANTHROPIC, api_key=KEY).list_models() == [
                "m1",
                "m2",
            ]
    sent = openai_route.calls.last.request
    assert sent.headers["authorization"] == f"Bearer {KEY}" and sent.headers["x-team"] == "eval"
    assert azure_route.calls.last.request.headers["api-key"] == KEY
    assert anthropic_route.calls.last.request.headers["x-api-key"] == KEY
    assert anthropic_route.calls.last.request.headers["anthropic-version"] == "2023-06-01"


@pytest.mark.anyio
async def test_list_models_failures_are_ours_and_exported() -> None:
    from meta_evaluator.llm import CallFailed as PublicCallFailed
    from meta_evaluator.llm import EndpointRejected as PublicEndpointRejected

    assert PublicCallFailed is CallFailed and PublicEndpointRejected is EndpointRejected
    async with httpx.AsyncClient() as http:
        with respx.mock() as router:
            router.get(f"{BASE}/models").respond(401, json={"error": f"bad key {KEY}"})
            with pytest.raises(EndpointRejected, match="HTTP 401") as caught:
                await OpenAIClient(http, base_url=BASE, api_key=KEY).list_models()
    assert KEY not in str(caught.value)
