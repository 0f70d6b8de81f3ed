"""The batch clients: the exact requests they send, how statuses and result lines map.

Requests go through respx on a real httpx.AsyncClient, like the live clients' tests.
"""

from __future__ import annotations

import datetime as dt
import json
import ssl
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
import respx

from meta_evaluator.llm.anthropic import AnthropicClient
from meta_evaluator.llm.anthropic_batch import AnthropicBatchClient, read_result_line
from meta_evaluator.llm.batch import BatchNotIdentified, BatchResult, BatchStatus
from meta_evaluator.llm.classify import CallFailed, EndpointRejected, MalformedResponse, classify
from meta_evaluator.llm.openai import OpenAIClient
from meta_evaluator.llm.openai_batch import OpenAIBatchClient, read_output_line
from meta_evaluator.llm.types import ChatRequest, ChatResponse, OutputSchema

KEY = "sk-batch-0a1b2c3d4e5f-SECRET"
BASE = "https://llm.test/v1"
AZURE = "https://acme.openai.azure.com"
AZURE_VERSION = "2024-10-21"
ANTHROPIC = "https://anthropic.test"
ANTHROPIC_ROOT = f"{ANTHROPIC}/v1/messages/batches"

SCHEMA = OutputSchema(
    "evaluation",
    {
        "type": "object",
        "properties": {"rejection": {"type": "string", "enum": ["rejection", "not rejection"]}},
        "required": ["rejection"],
        "additionalProperties": False,
    },
)
MESSAGES = [
    {"role": "system", "content": "You are a careful judge."},
    {"role": "user", "content": "Did the reply refuse?\nSay «rejection» or not — 拒绝?"},
]
REQUEST = ChatRequest(
    model="judge-model", messages=MESSAGES, temperature=0.0, max_tokens=64, output_schema=SCHEMA
)
PLAIN_REQUEST = ChatRequest(model="judge-model", messages=MESSAGES[1:])
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
TOOL_MESSAGE = {
    "content": [
        {"type": "tool_use", "id": "t1", "name": "evaluation", "input": {"rejection": "rejection"}}
    ],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 30, "output_tokens": 9},
}


async def upload_and_create(client: Any, lines: list[bytes], key: str) -> tuple[str, str | None]:
    """Upload (where the provider wants a file) and create: (batch id, file id)."""
    file_id = await client.upload(lines, key)
    return await client.create(lines, key, file_id), file_id


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# One TLS context for every client: loading the CA bundle per client costs ~50 ms.
TLS = ssl.create_default_context()
IDLE = httpx.AsyncClient(verify=TLS)  # for building lines only: it never sends


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(verify=TLS) as client:
        yield client


def openai(http: httpx.AsyncClient, **kwargs: Any) -> OpenAIBatchClient:
    return OpenAIBatchClient(http, base_url=BASE, api_key=KEY, **kwargs)


def azure(http: httpx.AsyncClient) -> OpenAIBatchClient:
    return OpenAIBatchClient(
        http, base_url=AZURE + "/", api_key=KEY, azure_api_version=AZURE_VERSION
    )


def anthropic(http: httpx.AsyncClient, base: str = ANTHROPIC) -> AnthropicBatchClient:
    return AnthropicBatchClient(http, base_url=base, api_key=KEY)


def jsonl(*entries: Any) -> bytes:
    return b"".join(
        (e if isinstance(e, bytes) else json.dumps(e).encode()) + b"\n" for e in entries
    )


def multipart(request: httpx.Request) -> dict[str, tuple[dict[str, str], bytes]]:
    """The parts of a multipart/form-data body by name: (headers, exact content)."""
    ctype = request.headers["content-type"]
    assert ctype.startswith("multipart/form-data; boundary=")
    boundary = ctype.split("boundary=", 1)[1].strip('"').encode()
    body = request.content
    chunks = body.split(b"--" + boundary)
    assert chunks[0] == b""
    assert chunks[-1] == b"--\r\n"
    parts: dict[str, tuple[dict[str, str], bytes]] = {}
    for chunk in chunks[1:-1]:
        assert chunk.startswith(b"\r\n") and chunk.endswith(b"\r\n")
        head, _, content = chunk[2:-2].partition(b"\r\n\r\n")
        headers = {}
        for raw in head.decode().split("\r\n"):
            name, _, value = raw.partition(":")
            headers[name.strip().lower()] = value.strip()
        disposition = headers["content-disposition"]
        name = disposition.split('name="', 1)[1].split('"', 1)[0]
        parts[name] = (headers, content)
    return parts


def sent_json(route: respx.Route, index: int = -1) -> Any:
    return json.loads(route.calls[index].request.content)


# --- encode() and line() ------------------------------------------------------------------------


def line_of(client: OpenAIBatchClient | AnthropicBatchClient, cid: str, req: ChatRequest) -> bytes:
    return client.line(cid, client.encode(req))


@pytest.mark.parametrize("request_", [REQUEST, PLAIN_REQUEST], ids=["schema", "plain"])
def test_openai_line_is_one_json_line_with_the_live_body(request_: ChatRequest) -> None:
    http = IDLE
    line = line_of(openai(http), "bk-7", request_)
    assert b"\n" not in line and b"\r" not in line
    entry = json.loads(line.decode("utf-8"))
    assert entry == {
        "custom_id": "bk-7",
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": OpenAIClient(http, base_url=BASE, api_key=KEY).body(request_),
    }
    assert list(entry) == ["custom_id", "method", "url", "body"]
    # Non-ASCII text is sent as UTF-8, not as \\u escapes.
    assert "拒绝".encode() in line


def test_openai_encode_is_the_live_body_exactly() -> None:
    body = json.loads(openai(IDLE).encode(REQUEST))
    assert body == {
        "model": "judge-model",
        "messages": MESSAGES,
        "temperature": 0.0,
        "max_tokens": 64,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "evaluation", "schema": SCHEMA.schema, "strict": True},
        },
    }


def test_line_embeds_the_encoded_body_verbatim() -> None:
    http = IDLE
    for client in (openai(http), anthropic(http)):
        body = client.encode(REQUEST)
        assert body in client.line("bk-0", body)
        # The same body serves every answer of a row: only the custom id differs.
        one, two = client.line("bk-0-0", body), client.line("bk-0-1", body)
        assert one.replace(b"bk-0-0", b"bk-0-1") == two


@pytest.mark.parametrize("custom_id", ['we"ird', "back\\slash", "tab\there", "ünï"])
def test_line_escapes_the_custom_id(custom_id: str) -> None:
    http = IDLE
    for client in (openai(http), anthropic(http)):
        line = line_of(client, custom_id, PLAIN_REQUEST)
        assert b"\n" not in line
        assert json.loads(line)["custom_id"] == custom_id


def test_azure_line_uses_the_azure_endpoint() -> None:
    http = IDLE
    entry = json.loads(line_of(azure(http), "bk-0", REQUEST))
    assert entry["url"] == "/chat/completions"
    assert entry["method"] == "POST"
    assert entry["custom_id"] == "bk-0"
    live = OpenAIClient(http, base_url=AZURE, api_key=KEY, azure_api_version=AZURE_VERSION)
    assert entry["body"] == live.body(REQUEST)


@pytest.mark.parametrize("request_", [REQUEST, PLAIN_REQUEST], ids=["schema", "plain"])
@pytest.mark.parametrize("base", [ANTHROPIC, ANTHROPIC + "/v1/"])
def test_anthropic_line_has_the_live_body(request_: ChatRequest, base: str) -> None:
    http = IDLE
    line = line_of(anthropic(http, base), "bk-1-2", request_)
    assert b"\n" not in line
    entry = json.loads(line.decode("utf-8"))
    assert entry == {
        "custom_id": "bk-1-2",
        "params": AnthropicClient(http, base_url=base, api_key=KEY).body(request_),
    }
    assert "拒绝".encode() in line


def test_anthropic_encode_is_the_live_body_exactly() -> None:
    params = json.loads(anthropic(IDLE).encode(REQUEST))
    assert params == {
        "model": "judge-model",
        "max_tokens": 64,
        "system": "You are a careful judge.",
        "messages": MESSAGES[1:],
        "temperature": 0.0,
        "tools": [
            {
                "name": "evaluation",
                "description": "Record the evaluation.",
                "input_schema": SCHEMA.schema,
            }
        ],
        "tool_choice": {"type": "tool", "name": "evaluation"},
    }


def test_limits() -> None:
    http = IDLE
    assert (openai(http).max_requests, openai(http).provider) == (50_000, "openai")
    assert 0 < openai(http).max_bytes <= 200 * 1024 * 1024
    assert (anthropic(http).max_requests, anthropic(http).provider) == (100_000, "anthropic")
    assert 0 < anthropic(http).max_bytes <= 256 * 1024 * 1024


# --- submit() -----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_openai_submit_uploads_then_creates(http: httpx.AsyncClient) -> None:
    client = openai(http)
    lines = [line_of(client, f"bk-{i}", REQUEST) for i in range(3)]
    with respx.mock(assert_all_called=True) as router:
        upload = router.post(f"{BASE}/files").respond(200, json={"id": "file-in", "object": "file"})
        create = router.post(f"{BASE}/batches").respond(200, json={"id": "batch_1"})
        done = await upload_and_create(client, lines, "bk")
        # The upload comes first: the batch is created over the file it answered.
        assert [c.request.url.path for c in router.calls] == ["/v1/files", "/v1/batches"]
    assert done == ("batch_1", "file-in")
    assert upload.call_count == 1 and create.call_count == 1
    sent = upload.calls.last.request
    assert str(sent.url) == f"{BASE}/files"
    assert sent.headers["Authorization"] == f"Bearer {KEY}"
    assert "api-key" not in sent.headers
    parts = multipart(sent)
    assert set(parts) == {"purpose", "file"}
    assert parts["purpose"][1] == b"batch"
    file_headers, content = parts["file"]
    assert content == lines[0] + b"\n" + lines[1] + b"\n" + lines[2] + b"\n"
    assert 'filename="bk.jsonl"' in file_headers["content-disposition"]
    assert [json.loads(x)["custom_id"] for x in content.splitlines()] == ["bk-0", "bk-1", "bk-2"]
    made = create.calls.last.request
    assert str(made.url) == f"{BASE}/batches"
    assert made.headers["Authorization"] == f"Bearer {KEY}"
    assert json.loads(made.content) == {
        "input_file_id": "file-in",
        "endpoint": "/v1/chat/completions",
        "completion_window": "24h",
        "metadata": {"meta_evaluator_key": "bk"},
    }


@pytest.mark.anyio
async def test_openai_submit_default_base_url(http: httpx.AsyncClient) -> None:
    client = OpenAIBatchClient(http, api_key=KEY)
    with respx.mock(assert_all_called=True) as router:
        router.post("https://api.openai.com/v1/files").respond(200, json={"id": "f"})
        router.post("https://api.openai.com/v1/batches").respond(200, json={"id": "b"})
        assert await upload_and_create(client, [b"{}"], "k") == ("b", "f")


@pytest.mark.anyio
async def test_azure_submit(http: httpx.AsyncClient) -> None:
    client = azure(http)
    lines = [line_of(client, "az-0", REQUEST)]
    with respx.mock(assert_all_called=True) as router:
        upload = router.post(f"{AZURE}/openai/files").respond(200, json={"id": "file-az"})
        create = router.post(f"{AZURE}/openai/batches").respond(200, json={"id": "batch_az"})
        done = await upload_and_create(client, lines, "az")
    assert done == ("batch_az", "file-az")
    for route, path in ((upload, "files"), (create, "batches")):
        sent = route.calls.last.request
        assert str(sent.url) == f"{AZURE}/openai/{path}?api-version={AZURE_VERSION}"
        assert sent.headers["api-key"] == KEY
        assert "Authorization" not in sent.headers
    parts = multipart(upload.calls.last.request)
    assert parts["purpose"][1] == b"batch"
    assert parts["file"][1] == lines[0] + b"\n"
    assert sent_json(create) == {
        "input_file_id": "file-az",
        "endpoint": "/chat/completions",
        "completion_window": "24h",
        "metadata": {"meta_evaluator_key": "az"},
    }


@pytest.mark.anyio
async def test_openai_without_key_sends_no_auth(http: httpx.AsyncClient) -> None:
    client = OpenAIBatchClient(http, base_url=BASE)
    with respx.mock(assert_all_called=True) as router:
        upload = router.post(f"{BASE}/files").respond(200, json={"id": "f"})
        router.post(f"{BASE}/batches").respond(200, json={"id": "b"})
        await upload_and_create(client, [b"{}"], "k")
    assert "Authorization" not in upload.calls.last.request.headers
    assert "api-key" not in upload.calls.last.request.headers


@pytest.mark.anyio
async def test_openai_submit_upload_without_id_is_malformed(http: httpx.AsyncClient) -> None:
    with respx.mock(assert_all_called=False) as router:
        router.post(f"{BASE}/files").respond(200, json={"object": "file"})
        create = router.post(f"{BASE}/batches").respond(200, json={"id": "b"})
        with pytest.raises(MalformedResponse, match="no id"):
            await upload_and_create(openai(http), [b"{}"], "k")
    assert create.call_count == 0


@pytest.mark.anyio
async def test_openai_submit_create_without_id_is_malformed(http: httpx.AsyncClient) -> None:
    with respx.mock(assert_all_called=True) as router:
        router.post(f"{BASE}/files").respond(200, json={"id": "f"})
        router.post(f"{BASE}/batches").respond(200, json={"id": 12})
        with pytest.raises(MalformedResponse, match="no id"):
            await upload_and_create(openai(http), [b"{}"], "k")


@pytest.mark.anyio
@pytest.mark.parametrize(
    "base", [ANTHROPIC, ANTHROPIC + "/", ANTHROPIC + "/v1", ANTHROPIC + "/v1/"]
)
async def test_anthropic_submit(http: httpx.AsyncClient, base: str) -> None:
    client = anthropic(http, base)
    lines = [line_of(client, f"ak-{i}", REQUEST) for i in range(3)]
    with respx.mock(assert_all_called=True) as router:
        route = router.post(ANTHROPIC_ROOT).respond(
            200, json={"id": "msgbatch_1", "processing_status": "in_progress"}
        )
        done = await upload_and_create(client, lines, "ak")
    assert done == ("msgbatch_1", None)  # nothing uploaded: the requests go inline
    sent = route.calls.last.request
    assert str(sent.url) == ANTHROPIC_ROOT
    assert sent.method == "POST"
    assert sent.headers["x-api-key"] == KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["content-type"] == "application/json"
    assert "Authorization" not in sent.headers
    assert json.loads(sent.content) == {"requests": [json.loads(line) for line in lines]}
    assert sent.content == b'{"requests":[' + b",".join(lines) + b"]}"


@pytest.mark.anyio
async def test_anthropic_default_base_url(http: httpx.AsyncClient) -> None:
    with respx.mock(assert_all_called=True) as router:
        router.post("https://api.anthropic.com/v1/messages/batches").respond(200, json={"id": "m"})
        assert await upload_and_create(AnthropicBatchClient(http, api_key=KEY), [b"{}"], "k") == (
            "m",
            None,
        )


@pytest.mark.anyio
async def test_anthropic_submit_without_id_is_malformed(http: httpx.AsyncClient) -> None:
    with respx.mock(assert_all_called=True) as router:
        router.post(ANTHROPIC_ROOT).respond(200, json={"type": "message_batch"})
        with pytest.raises(MalformedResponse, match="no id"):
            await upload_and_create(anthropic(http), [b"{}"], "k")


# --- status() -----------------------------------------------------------------------------------

OPENAI_COUNTS = {"total": 4, "completed": 3, "failed": 1}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("raw", "state"),
    [
        ("validating", "running"),
        ("in_progress", "running"),
        ("finalizing", "running"),
        ("cancelling", "running"),
        ("completed", "ended"),
        ("expired", "ended"),
        ("cancelled", "ended"),
    ],
)
async def test_openai_status(http: httpx.AsyncClient, raw: str, state: str) -> None:
    with respx.mock(assert_all_called=True) as router:
        route = router.get(f"{BASE}/batches/batch_9").respond(
            200,
            json={
                "id": "batch_9",
                "status": raw,
                "request_counts": {**OPENAI_COUNTS, "note": "x"},
            },
        )
        status = await openai(http).status("batch_9")
    assert status == BatchStatus(state, raw, OPENAI_COUNTS)  # type: ignore[arg-type]
    assert route.calls.last.request.headers["Authorization"] == f"Bearer {KEY}"


@pytest.mark.anyio
async def test_azure_status_url(http: httpx.AsyncClient) -> None:
    with respx.mock(assert_all_called=True) as router:
        route = router.get(f"{AZURE}/openai/batches/batch_9").respond(
            200, json={"status": "completed"}
        )
        status = await azure(http).status("batch_9")
    assert status == BatchStatus("ended", "completed", {})
    sent = route.calls.last.request
    assert str(sent.url) == f"{AZURE}/openai/batches/batch_9?api-version={AZURE_VERSION}"
    assert sent.headers["api-key"] == KEY


@pytest.mark.anyio
async def test_openai_failed_status_carries_the_errors(http: httpx.AsyncClient) -> None:
    errors = {
        "object": "list",
        "data": [
            {"code": "invalid_json_line", "line": 2, "message": "This line is not valid JSON."},
            {"code": "too_large", "line": None, "message": "The file is too large."},
        ],
    }
    with respx.mock(assert_all_called=True) as router:
        router.get(f"{BASE}/batches/b").respond(
            200, json={"status": "failed", "errors": errors, "request_counts": {"total": 0}}
        )
        status = await openai(http).status("b")
    assert status.state == "failed"
    assert status.provider_status == "failed"
    assert status.counts == {"total": 0}
    assert status.message == "line 2: This line is not valid JSON.; The file is too large."


@pytest.mark.anyio
@pytest.mark.parametrize("errors", [None, {}, {"data": []}, "broken"])
async def test_openai_failed_status_without_errors(http: httpx.AsyncClient, errors: Any) -> None:
    with respx.mock(assert_all_called=True) as router:
        router.get(f"{BASE}/batches/b").respond(200, json={"status": "failed", "errors": errors})
        status = await openai(http).status("b")
    assert status == BatchStatus("failed", "failed", {}, "failed")


@pytest.mark.anyio
@pytest.mark.parametrize("raw", ["paused", None, "COMPLETED"])
async def test_openai_unknown_status_is_malformed(http: httpx.AsyncClient, raw: Any) -> None:
    with respx.mock(assert_all_called=True) as router:
        router.get(f"{BASE}/batches/b").respond(200, json={"status": raw})
        with pytest.raises(MalformedResponse, match="unknown status"):
            await openai(http).status("b")


ANTHROPIC_COUNTS = {"processing": 2, "succeeded": 5, "errored": 1, "canceled": 0, "expired": 0}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("raw", "state"), [("in_progress", "running"), ("canceling", "running"), ("ended", "ended")]
)
async def test_anthropic_status(http: httpx.AsyncClient, raw: str, state: str) -> None:
    with respx.mock(assert_all_called=True) as router:
        route = router.get(f"{ANTHROPIC_ROOT}/msgbatch_1").respond(
            200,
            json={
                "id": "msgbatch_1",
                "processing_status": raw,
                "request_counts": ANTHROPIC_COUNTS,
                "results_url": "https://elsewhere.test/results",
            },
        )
        status = await anthropic(http).status("msgbatch_1")
    assert status == BatchStatus(state, raw, ANTHROPIC_COUNTS)  # type: ignore[arg-type]
    sent = route.calls.last.request
    assert sent.headers["x-api-key"] == KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"


@pytest.mark.anyio
@pytest.mark.parametrize("raw", ["failed", None, "completed"])
async def test_anthropic_unknown_status_is_malformed(http: httpx.AsyncClient, raw: Any) -> None:
    with respx.mock(assert_all_called=True) as router:
        router.get(f"{ANTHROPIC_ROOT}/m").respond(200, json={"processing_status": raw})
        with pytest.raises(MalformedResponse, match="unknown processing_status"):
            await anthropic(http).status("m")


# --- results(): OpenAI --------------------------------------------------------------------------


def output_entry(custom_id: str, code: int, body: Any) -> dict[str, Any]:
    return {
        "id": f"batch_req_{custom_id}",
        "custom_id": custom_id,
        "response": {"status_code": code, "request_id": "r", "body": body},
        "error": None,
    }


def error_entry(custom_id: str, code: str, message: str) -> dict[str, Any]:
    return {
        "id": f"batch_req_{custom_id}",
        "custom_id": custom_id,
        "response": None,
        "error": {"code": code, "message": message},
    }


OUTPUT_FILE = jsonl(
    output_entry("k-0", 200, COMPLETION),
    b"this line is not json",
    output_entry("k-1", 200, {"unexpected": "shape"}),
    {"response": {"status_code": 200, "body": COMPLETION}},  # no custom id
    {"custom_id": 17, "response": {"status_code": 200, "body": COMPLETION}},  # not a string
    b"   ",
    b"[1, 2]",
    output_entry("k-2", 200, "plain text body"),
)
ERROR_FILE = jsonl(
    output_entry("k-3", 400, {"error": {"message": "Invalid 'messages'", "type": "invalid"}}),
    output_entry("k-4", 429, {"error": {"message": "Too many tokens"}}),
    output_entry("k-5", 500, {"error": {"message": "server fell over"}}),
    error_entry("k-6", "batch_expired", "not executed before the window expired"),
    error_entry("k-7", "batch_cancelled", "the batch was cancelled"),
    error_entry("k-8", "something_else", "odd"),
    {"custom_id": "k-9", "response": None, "error": None},
    output_entry("k-10", 408, "timed out"),
)


def by_id(results: list[BatchResult]) -> dict[str, BatchResult]:
    found = {r.custom_id: r for r in results}
    assert len(found) == len(results)
    return found


def failure(result: BatchResult) -> CallFailed:
    assert result.response is None
    assert result.failure is not None
    return result.failure


@pytest.mark.anyio
async def test_openai_results_reads_output_and_error_files(http: httpx.AsyncClient) -> None:
    with respx.mock(assert_all_called=True) as router:
        batch = router.get(f"{BASE}/batches/batch_1").respond(
            200,
            json={
                "id": "batch_1",
                "status": "completed",
                "output_file_id": "file-out",
                "error_file_id": "file-err",
            },
        )
        out = router.get(f"{BASE}/files/file-out/content").respond(200, content=OUTPUT_FILE)
        err = router.get(f"{BASE}/files/file-err/content").respond(200, content=ERROR_FILE)
        results = await openai(http).results("batch_1")
    assert batch.call_count == out.call_count == err.call_count == 1
    for route in (batch, out, err):
        assert route.calls.last.request.headers["Authorization"] == f"Bearer {KEY}"
    assert [r.custom_id for r in results] == [f"k-{i}" for i in range(11)]
    found = by_id(results)

    ok = found["k-0"]
    assert ok.failure is None
    assert ok.response == ChatResponse(
        text="rejection", finish_reason="stop", prompt_tokens=11, completion_tokens=2
    )

    for custom_id in ("k-1", "k-2"):
        bad = failure(found[custom_id])
        assert isinstance(bad, MalformedResponse)
        assert bad.status == "malformed_response"
        assert classify(bad).retry

    refused = failure(found["k-3"])
    assert (refused.status, refused.http_status, refused.retryable) == ("http_error", 400, False)
    assert "Invalid 'messages'" in str(refused)
    assert not classify(refused).retry

    limited = failure(found["k-4"])
    assert (limited.status, limited.http_status) == ("rate_limited", 429)
    assert "Too many tokens" in str(limited)
    assert classify(limited).retry

    broken = failure(found["k-5"])
    assert (broken.status, broken.http_status, broken.retryable) == ("http_error", 500, True)
    assert classify(broken).retry

    expired = failure(found["k-6"])
    assert expired.status == "batch_expired"
    assert "batch_expired" in str(expired) and "window expired" in str(expired)

    assert failure(found["k-7"]).status == "batch_canceled"
    assert failure(found["k-8"]).status == "batch_failed"
    assert "something_else" in str(failure(found["k-8"]))
    assert failure(found["k-9"]).status == "batch_failed"

    slow = failure(found["k-10"])
    assert (slow.status, slow.http_status, slow.retryable) == ("http_error", 408, True)


@pytest.mark.anyio
async def test_openai_results_without_error_file(http: httpx.AsyncClient) -> None:
    with respx.mock(assert_all_called=True) as router:
        router.get(f"{BASE}/batches/b").respond(
            200, json={"output_file_id": "file-out", "error_file_id": None}
        )
        out = router.get(f"{BASE}/files/file-out/content").respond(
            200, content=jsonl(output_entry("k-0", 200, COMPLETION)).rstrip(b"\n")
        )
        results = await openai(http).results("b")
    assert out.call_count == 1
    assert [r.custom_id for r in results] == ["k-0"]
    assert results[0].response is not None and results[0].response.text == "rejection"


@pytest.mark.anyio
async def test_openai_results_of_a_batch_without_files(http: httpx.AsyncClient) -> None:
    with respx.mock(assert_all_called=True) as router:
        router.get(f"{BASE}/batches/b").respond(200, json={"status": "expired"})
        assert await openai(http).results("b") == []
        # Only the batch was fetched: no file download was attempted.
        assert len(router.calls) == 1


@pytest.mark.anyio
async def test_azure_results_urls(http: httpx.AsyncClient) -> None:
    with respx.mock(assert_all_called=True) as router:
        router.get(f"{AZURE}/openai/batches/b").respond(200, json={"error_file_id": "file-err"})
        err = router.get(f"{AZURE}/openai/files/file-err/content").respond(
            200, content=jsonl(error_entry("k-0", "batch_expired", "late"))
        )
        results = await azure(http).results("b")
    sent = err.calls.last.request
    assert str(sent.url) == f"{AZURE}/openai/files/file-err/content?api-version={AZURE_VERSION}"
    assert sent.headers["api-key"] == KEY
    assert failure(results[0]).status == "batch_expired"


@pytest.mark.parametrize(
    ("raw", "status", "http_status"),
    [
        (output_entry("c", 403, {"error": {"message": "no"}}), "http_error", 403),
        (output_entry("c", 502, {"error": {"message": "bad gateway"}}), "http_error", 502),
        (error_entry("c", "batch_canceled", "x"), "batch_canceled", None),
        ({"custom_id": "c", "response": "text"}, "batch_failed", None),
    ],
)
def test_read_output_line_failures(raw: Any, status: str, http_status: int | None) -> None:
    result = read_output_line(json.dumps(raw).encode())
    assert result is not None and result.custom_id == "c"
    got = failure(result)
    assert (got.status, got.http_status) == (status, http_status)


def test_read_output_line_without_status_code_reads_the_body() -> None:
    result = read_output_line(json.dumps({"custom_id": "c", "response": {"body": COMPLETION}}))
    assert result is not None and result.response is not None
    assert result.response.text == "rejection"


@pytest.mark.parametrize("raw", [b"", b"{", b"null", b'"k-0"', b'{"custom_id": null}', b"{}"])
def test_read_output_line_skips_lines_without_custom_id(raw: bytes) -> None:
    assert read_output_line(raw) is None


# --- results(): Anthropic -----------------------------------------------------------------------


def anthropic_entry(custom_id: str, result: Any) -> dict[str, Any]:
    return {"custom_id": custom_id, "result": result}


def errored(kind: str, message: str = "went wrong") -> dict[str, Any]:
    return {
        "type": "errored",
        "error": {"type": "error", "error": {"type": kind, "message": message}},
    }


RESULTS_FILE = jsonl(
    anthropic_entry("a-0", {"type": "succeeded", "message": MESSAGE}),
    anthropic_entry("a-1", {"type": "succeeded", "message": TOOL_MESSAGE}),
    b"junk { line",
    {"result": {"type": "succeeded", "message": MESSAGE}},
    anthropic_entry("a-2", errored("rate_limit_error", "slow down")),
    anthropic_entry("a-3", errored("invalid_request_error", "max_tokens: too large")),
    anthropic_entry("a-4", errored("overloaded_error")),
    anthropic_entry("a-5", {"type": "expired"}),
    anthropic_entry("a-6", {"type": "canceled"}),
    anthropic_entry("a-7", {"type": "mystery"}),
    b"",
    anthropic_entry("a-8", {"type": "succeeded"}),
    anthropic_entry("a-9", None),
)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("base", "root"),
    [
        (ANTHROPIC, ANTHROPIC_ROOT),
        (ANTHROPIC + "/v1/", ANTHROPIC_ROOT),
        ("https://proxy.test/anthropic", "https://proxy.test/anthropic/v1/messages/batches"),
    ],
)
async def test_anthropic_results(http: httpx.AsyncClient, base: str, root: str) -> None:
    with respx.mock(assert_all_called=True) as router:
        route = router.get(f"{root}/msgbatch_1/results").respond(
            200, content=RESULTS_FILE, headers={"content-type": "application/binary"}
        )
        results = await anthropic(http, base).results("msgbatch_1")
        # Exactly one request, to our own base URL (never a results_url the server names).
        assert len(router.calls) == 1
    sent = route.calls.last.request
    assert sent.method == "GET"
    assert sent.headers["x-api-key"] == KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert [r.custom_id for r in results] == [f"a-{i}" for i in range(10)]
    found = by_id(results)

    text = found["a-0"]
    assert text.failure is None
    assert text.response == ChatResponse(
        text="rejection", finish_reason="stop", prompt_tokens=11, completion_tokens=2
    )
    tool = found["a-1"].response
    assert tool is not None and found["a-1"].failure is None
    assert tool.structured == {"rejection": "rejection"}
    assert (tool.prompt_tokens, tool.completion_tokens) == (30, 9)

    limited = failure(found["a-2"])
    assert (limited.status, limited.http_status, limited.retryable) == ("rate_limited", 429, True)
    assert "slow down" in str(limited)
    assert classify(limited).retry

    refused = failure(found["a-3"])
    assert (refused.status, refused.http_status, refused.retryable) == ("http_error", 400, False)
    assert "max_tokens: too large" in str(refused)
    assert not classify(refused).retry

    overloaded = failure(found["a-4"])
    assert (overloaded.status, overloaded.http_status) == ("http_error", 529)
    assert overloaded.retryable and classify(overloaded).retry

    assert failure(found["a-5"]).status == "batch_expired"
    assert failure(found["a-6"]).status == "batch_canceled"
    unknown = failure(found["a-7"])
    assert unknown.status == "batch_failed" and "mystery" in str(unknown)
    assert failure(found["a-8"]).status == "malformed_response"
    assert failure(found["a-9"]).status == "batch_failed"


@pytest.mark.parametrize(
    ("kind", "http_status", "status", "retryable"),
    [
        ("rate_limit_error", 429, "rate_limited", True),
        ("overloaded_error", 529, "http_error", True),
        ("api_error", 500, "http_error", True),
        ("invalid_request_error", 400, "http_error", False),
        ("authentication_error", 401, "http_error", False),
        ("permission_error", 403, "http_error", False),
        ("not_found_error", 404, "http_error", False),
        ("request_too_large", 413, "http_error", False),
        ("brand_new_error", 500, "http_error", True),
    ],
)
def test_anthropic_errored_types(kind: str, http_status: int, status: str, retryable: bool) -> None:
    result = read_result_line(json.dumps(anthropic_entry("a", errored(kind, "detail"))).encode())
    assert result is not None
    got = failure(result)
    assert (got.status, got.http_status, got.retryable) == (status, http_status, retryable)
    assert classify(got).retry is retryable
    assert kind in str(got) and "detail" in str(got)


def test_anthropic_errored_flat_error_shape() -> None:
    line = {"custom_id": "a", "result": {"type": "errored", "error": {"type": "rate_limit_error"}}}
    result = read_result_line(json.dumps(line).encode())
    assert result is not None
    assert (failure(result).status, failure(result).http_status) == ("rate_limited", 429)


@pytest.mark.parametrize("raw", [b"", b"nope", b"[]", b'{"result": {"type": "expired"}}'])
def test_read_result_line_skips_lines_without_custom_id(raw: bytes) -> None:
    assert read_result_line(raw) is None


# --- find() -------------------------------------------------------------------------------------

SINCE = "2025-03-04T05:06:07.000000+00:00"
SINCE_TS = int(dt.datetime.fromisoformat(SINCE).timestamp())


def paged(pages: list[dict[str, Any]]) -> Callable[[httpx.Request], httpx.Response]:
    """A handler answering the pages in turn (and failing on any request past the last)."""
    remaining = list(pages)

    def handler(request: httpx.Request) -> httpx.Response:
        assert remaining, f"unexpected request {request.url}"
        return httpx.Response(200, json=remaining.pop(0))

    return handler


def oa_batch(batch_id: str, key: str | None, created: int = SINCE_TS) -> dict[str, Any]:
    metadata = {"meta_evaluator_key": key} if key else {"other": "x"}
    return {"id": batch_id, "created_at": created, "metadata": metadata, "status": "completed"}


@pytest.mark.anyio
async def test_openai_find_pages_until_the_key(http: httpx.AsyncClient) -> None:
    pages = [
        {
            "data": [oa_batch("batch_a", "bother"), oa_batch("batch_b", None)],
            "has_more": True,
            "last_id": "batch_b",
        },
        {
            "data": [oa_batch("batch_c", None), oa_batch("batch_d", "bk"), oa_batch("e", "bk")],
            "has_more": True,
            "last_id": "e",
        },
    ]
    with respx.mock(assert_all_called=True) as router:
        route = router.get(f"{BASE}/batches").mock(side_effect=paged(pages))
        found = await openai(http).find("bk", SINCE, 3, {"batch_x"})
    assert found == "batch_d"
    assert route.call_count == 2
    first, second = (call.request for call in route.calls)
    assert dict(first.url.params) == {"limit": "100"}
    assert dict(second.url.params) == {"limit": "100", "after": "batch_b"}
    assert first.headers["Authorization"] == f"Bearer {KEY}"


@pytest.mark.anyio
async def test_openai_find_without_last_id_pages_after_the_last_batch(
    http: httpx.AsyncClient,
) -> None:
    pages = [
        {"data": [oa_batch("batch_a", None), oa_batch("batch_b", None)], "has_more": True},
        {"data": [oa_batch("batch_c", "bk")], "has_more": False},
    ]
    with respx.mock(assert_all_called=True) as router:
        route = router.get(f"{BASE}/batches").mock(side_effect=paged(pages))
        assert await openai(http).find("bk", SINCE, 1, set()) == "batch_c"
    assert route.calls[1].request.url.params["after"] == "batch_b"


@pytest.mark.anyio
async def test_openai_find_known_batch_is_none(http: httpx.AsyncClient) -> None:
    pages = [{"data": [oa_batch("batch_d", "bk")], "has_more": True, "last_id": "batch_d"}]
    with respx.mock(assert_all_called=True) as router:
        route = router.get(f"{BASE}/batches").mock(side_effect=paged(pages))
        assert await openai(http).find("bk", SINCE, 1, {"batch_d"}) is None
    assert route.call_count == 1


@pytest.mark.anyio
async def test_openai_find_stops_when_there_is_no_more(http: httpx.AsyncClient) -> None:
    pages = [{"data": [oa_batch("batch_a", "other")], "has_more": False, "last_id": "batch_a"}]
    with respx.mock(assert_all_called=True) as router:
        route = router.get(f"{BASE}/batches").mock(side_effect=paged(pages))
        assert await openai(http).find("bk", SINCE, 1, set()) is None
    assert route.call_count == 1


@pytest.mark.anyio
async def test_openai_find_stops_at_batches_older_than_the_submission(
    http: httpx.AsyncClient,
) -> None:
    # An hour of slack before `since`; a page reaching past it ends the search.
    pages = [
        {
            "data": [oa_batch("a", None), oa_batch("b", None, created=SINCE_TS - 7200)],
            "has_more": True,
            "last_id": "b",
        }
    ]
    with respx.mock(assert_all_called=True) as router:
        route = router.get(f"{BASE}/batches").mock(side_effect=paged(pages))
        assert await openai(http).find("bk", SINCE, 1, set()) is None
    assert route.call_count == 1


@pytest.mark.anyio
async def test_openai_find_on_an_empty_list(http: httpx.AsyncClient) -> None:
    with respx.mock(assert_all_called=True) as router:
        router.get(f"{BASE}/batches").respond(200, json={"data": [], "has_more": True})
        assert await openai(http).find("bk", SINCE, 1, set()) is None
        assert len(router.calls) == 1


@pytest.mark.anyio
async def test_azure_find_url(http: httpx.AsyncClient) -> None:
    with respx.mock(assert_all_called=True) as router:
        route = router.get(f"{AZURE}/openai/batches").respond(
            200, json={"data": [oa_batch("batch_z", "bk")], "has_more": False}
        )
        assert await azure(http).find("bk", SINCE, 1, set()) == "batch_z"
    params = route.calls.last.request.url.params
    assert dict(params) == {"api-version": AZURE_VERSION, "limit": "100"}


def iso(offset: float) -> str:
    moment = dt.datetime.fromisoformat(SINCE) + dt.timedelta(seconds=offset)
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def an_batch(batch_id: str, offset: float, total: int) -> dict[str, Any]:
    counts = {"processing": total - 1, "succeeded": 1, "errored": 0, "canceled": 0, "expired": 0}
    return {
        "id": batch_id,
        "type": "message_batch",
        "created_at": iso(offset),
        "processing_status": "in_progress",
        "request_counts": counts,
    }


@pytest.mark.anyio
async def test_anthropic_find_the_one_candidate(http: httpx.AsyncClient) -> None:
    page = {
        "data": [
            an_batch("too_late", 3601, 6),  # the window is the hour after the submission
            an_batch("right", 5, 6),
            an_batch("wrong_count", 4, 7),
            an_batch("too_early", -3600, 6),
        ],
        "has_more": True,
        "last_id": "too_early",
    }
    with respx.mock(assert_all_called=True) as router:
        route = router.get(ANTHROPIC_ROOT).mock(side_effect=paged([page]))
        assert await anthropic(http).find("ak", SINCE, 6, set()) == "right"
    # A batch older than the submission ends the listing (newest come first).
    assert route.call_count == 1
    sent = route.calls.last.request
    assert dict(sent.url.params) == {"limit": "100"}
    assert sent.headers["x-api-key"] == KEY


@pytest.mark.anyio
async def test_anthropic_find_two_candidates_is_not_identified(http: httpx.AsyncClient) -> None:
    page = {"data": [an_batch("one", 10, 6), an_batch("two", 20, 6)], "has_more": False}
    with respx.mock(assert_all_called=True) as router:
        router.get(ANTHROPIC_ROOT).mock(side_effect=paged([page]))
        with pytest.raises(BatchNotIdentified, match=r"2 batches .* \(one, two\)") as caught:
            await anthropic(http).find("ak", SINCE, 6, set())
    assert '"abandoned"' in str(caught.value) and '"batch_id"' in str(caught.value)


@pytest.mark.anyio
async def test_anthropic_find_excludes_known(http: httpx.AsyncClient) -> None:
    page = {"data": [an_batch("one", 10, 6), an_batch("two", 20, 6)], "has_more": False}
    with respx.mock(assert_all_called=True) as router:
        router.get(ANTHROPIC_ROOT).mock(side_effect=paged([page]))
        assert await anthropic(http).find("ak", SINCE, 6, {"two"}) == "one"


@pytest.mark.anyio
async def test_anthropic_find_known_only_is_none(http: httpx.AsyncClient) -> None:
    page = {"data": [an_batch("one", 10, 6)], "has_more": False}
    with respx.mock(assert_all_called=True) as router:
        router.get(ANTHROPIC_ROOT).mock(side_effect=paged([page]))
        assert await anthropic(http).find("ak", SINCE, 6, {"one"}) is None


@pytest.mark.anyio
async def test_anthropic_find_pages_with_after_id(http: httpx.AsyncClient) -> None:
    pages = [
        {
            "data": [an_batch("newer", 500, 2), an_batch("mid", 400, 2)],
            "has_more": True,
            "last_id": "mid",
        },
        {"data": [an_batch("mine", 1, 6), an_batch("old", -600, 6)], "has_more": True},
    ]
    with respx.mock(assert_all_called=True) as router:
        route = router.get(ANTHROPIC_ROOT).mock(side_effect=paged(pages))
        assert await anthropic(http).find("ak", SINCE, 6, set()) == "mine"
    assert route.call_count == 2
    assert dict(route.calls[1].request.url.params) == {"limit": "100", "after_id": "mid"}


@pytest.mark.anyio
async def test_anthropic_find_candidates_across_pages_are_ambiguous(
    http: httpx.AsyncClient,
) -> None:
    pages = [
        {"data": [an_batch("first", 300, 6)], "has_more": True, "last_id": "first"},
        {"data": [an_batch("second", 100, 6)], "has_more": False},
    ]
    with respx.mock(assert_all_called=True) as router:
        router.get(ANTHROPIC_ROOT).mock(side_effect=paged(pages))
        with pytest.raises(BatchNotIdentified, match=r"first, second"):
            await anthropic(http).find("ak", SINCE, 6, set())


# --- cancel() -----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_cancel(http: httpx.AsyncClient) -> None:
    with respx.mock(assert_all_called=True) as router:
        oa = router.post(f"{BASE}/batches/batch_1/cancel").respond(200, json={"id": "batch_1"})
        az = router.post(f"{AZURE}/openai/batches/batch_2/cancel").respond(200, json={})
        an = router.post(f"{ANTHROPIC_ROOT}/msgbatch_3/cancel").respond(200, json={})
        await openai(http).cancel("batch_1")
        await azure(http).cancel("batch_2")
        await anthropic(http).cancel("msgbatch_3")
    assert oa.calls.last.request.headers["Authorization"] == f"Bearer {KEY}"
    assert az.calls.last.request.url.params["api-version"] == AZURE_VERSION
    assert an.calls.last.request.headers["x-api-key"] == KEY


# --- HTTP failures ------------------------------------------------------------------------------

ECHO = {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "auth"}}


def calls(http: httpx.AsyncClient) -> list[tuple[str, str, Any]]:
    """(name, URL answered, coroutine factory) for a call of each kind of each client."""
    return [
        ("openai.submit", f"{BASE}/files", lambda: upload_and_create(openai(http), [b"{}"], "k")),
        ("openai.status", f"{BASE}/batches/b", lambda: openai(http).status("b")),
        ("openai.results", f"{BASE}/batches/b", lambda: openai(http).results("b")),
        ("openai.find", f"{BASE}/batches", lambda: openai(http).find("k", SINCE, 1, set())),
        ("openai.cancel", f"{BASE}/batches/b/cancel", lambda: openai(http).cancel("b")),
        (
            "anthropic.submit",
            ANTHROPIC_ROOT,
            lambda: upload_and_create(anthropic(http), [b"{}"], "k"),
        ),
        ("anthropic.status", f"{ANTHROPIC_ROOT}/b", lambda: anthropic(http).status("b")),
        (
            "anthropic.results",
            f"{ANTHROPIC_ROOT}/b/results",
            lambda: anthropic(http).results("b"),
        ),
        (
            "anthropic.find",
            ANTHROPIC_ROOT,
            lambda: anthropic(http).find("k", SINCE, 1, set()),
        ),
        ("anthropic.cancel", f"{ANTHROPIC_ROOT}/b/cancel", lambda: anthropic(http).cancel("b")),
    ]


CALL_NAMES = [name for name, _, _ in calls(IDLE)]


def the_call(http: httpx.AsyncClient, name: str) -> tuple[str, Any]:
    return next((url, make) for n, url, make in calls(http) if n == name)


@pytest.mark.anyio
@pytest.mark.parametrize("name", CALL_NAMES)
@pytest.mark.parametrize("code", [401, 403, 404])
async def test_refused_calls_raise_endpoint_rejected_without_the_key(
    http: httpx.AsyncClient, name: str, code: int
) -> None:
    url, make = the_call(http, name)
    with respx.mock(assert_all_called=True) as router:
        router.route(url=url).respond(code, json=ECHO)
        with pytest.raises(EndpointRejected) as caught:
            await make()
    assert caught.value.http_status == code
    assert KEY not in str(caught.value)
    assert "Incorrect API key provided: ***" in str(caught.value)


@pytest.mark.anyio
@pytest.mark.parametrize("name", CALL_NAMES)
async def test_server_errors_raise_call_failed_without_the_key(
    http: httpx.AsyncClient, name: str
) -> None:
    url, make = the_call(http, name)
    with respx.mock(assert_all_called=True) as router:
        router.route(url=url).respond(500, json=ECHO)
        with pytest.raises(CallFailed) as caught:
            await make()
    assert not isinstance(caught.value, MalformedResponse)
    assert (caught.value.status, caught.value.http_status) == ("http_error", 500)
    assert classify(caught.value).retry
    assert KEY not in str(caught.value)
    assert "***" in str(caught.value)


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["openai.status", "anthropic.submit"])
async def test_rate_limited_call(http: httpx.AsyncClient, name: str) -> None:
    url, make = the_call(http, name)
    with respx.mock(assert_all_called=True) as router:
        router.route(url=url).respond(429, json=ECHO, headers={"retry-after": "7"})
        with pytest.raises(CallFailed) as caught:
            await make()
    assert (caught.value.status, caught.value.http_status) == ("rate_limited", 429)
    assert caught.value.retry_after == 7.0
    assert KEY not in str(caught.value)


@pytest.mark.anyio
async def test_connection_error_is_call_failed(http: httpx.AsyncClient) -> None:
    with respx.mock(assert_all_called=True) as router:
        router.get(f"{BASE}/batches/b").mock(side_effect=httpx.ConnectError("refused"))
        with pytest.raises(CallFailed) as caught:
            await openai(http).status("b")
    assert caught.value.status == "connection_error"


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["openai.submit", "anthropic.submit"])
async def test_malformed_2xx_submit_body_is_redacted(http: httpx.AsyncClient, name: str) -> None:
    url, make = the_call(http, name)
    with respx.mock(assert_all_called=True) as router:
        router.route(url=url).respond(200, text=f"<html>key {KEY} accepted</html>")
        with pytest.raises(MalformedResponse) as caught:
            await make()
    assert KEY not in str(caught.value)
    assert "***" in str(caught.value)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "name", ["openai.status", "openai.results", "openai.find", "anthropic.status", "anthropic.find"]
)
async def test_malformed_2xx_poll_body_is_redacted(http: httpx.AsyncClient, name: str) -> None:
    url, make = the_call(http, name)
    with respx.mock(assert_all_called=True) as router:
        router.route(url=url).respond(200, text=f"<html>key {KEY} accepted</html>")
        with pytest.raises(MalformedResponse) as caught:
            await make()
    assert KEY not in str(caught.value)


@pytest.mark.anyio
async def test_batch_calls_carry_the_live_headers_plus_extra_headers(
    http: httpx.AsyncClient,
) -> None:
    """Batch calls are made at the live client's endpoint: its key headers, the judge's extras."""
    extra = {"x-team": "evals"}
    with respx.mock(assert_all_called=True) as router:
        oa = router.post(f"{BASE}/batches/b1/cancel").respond(200, json={})
        az = router.post(f"{AZURE}/openai/batches/b2/cancel").respond(200, json={})
        an = router.post(f"{ANTHROPIC_ROOT}/b3/cancel").respond(200, json={})
        await openai(http, extra_headers=extra).cancel("b1")
        await OpenAIBatchClient(
            http, base_url=AZURE, api_key=KEY, azure_api_version=AZURE_VERSION, extra_headers=extra
        ).cancel("b2")
        await AnthropicBatchClient(
            http, base_url=ANTHROPIC, api_key=KEY, extra_headers=extra
        ).cancel("b3")
    openai_headers = oa.calls.last.request.headers
    assert (openai_headers["Authorization"], openai_headers["x-team"]) == (f"Bearer {KEY}", "evals")
    azure_headers = az.calls.last.request.headers
    assert (azure_headers["api-key"], azure_headers["x-team"]) == (KEY, "evals")
    assert "Authorization" not in azure_headers
    anthropic_headers = an.calls.last.request.headers
    assert anthropic_headers["x-api-key"] == KEY and anthropic_headers["x-team"] == "evals"
    assert (
        anthropic_headers["anthropic-version"] == AnthropicClient(IDLE).headers["anthropic-version"]
    )


def test_live_and_batch_clients_share_one_azure_url_layout() -> None:
    live = OpenAIClient(IDLE, base_url=AZURE, api_key=KEY, azure_api_version=AZURE_VERSION)
    query = f"api-version={AZURE_VERSION}"
    assert live.url("dep") == f"{AZURE}/openai/deployments/dep/chat/completions?{query}"
    assert live.models_url() == f"{AZURE}/openai/models?{query}"
    assert str(live.resource_url("/files")) == f"{AZURE}/openai/files?{query}"
    plain = OpenAIClient(IDLE, base_url=BASE)
    assert (plain.url("m"), plain.models_url()) == (f"{BASE}/chat/completions", f"{BASE}/models")
