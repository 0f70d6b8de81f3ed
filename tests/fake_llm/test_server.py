"""The fake LLM server: deterministic answers, faults at their rates, keep-alive, stats, exit."""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import json
import socket
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.fake_llm.server import (
    FakeConfig,
    ThreadHandle,
    allowed_values,
    count_tokens,
    expected_answer,
    expected_text,
    free_text,
    prompt_key,
    run_server,
    start_in_thread,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rejection": {"type": "string", "enum": ["rejection", "not rejection"]},
        "topics": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c", "d"]}},
        "explanation": {"type": "string"},
    },
    "required": ["rejection", "topics", "explanation"],
}
TAGGED_SYSTEM = (
    "Judge the response.\n"
    "Allowed values for rejection: rejection | not rejection\n"
    "Allowed values for tone: calm | angry | neutral\n"
)


def h(prompt: str, name: str) -> int:
    return int.from_bytes(hashlib.sha256((prompt + name).encode()).digest(), "big")


def openai_body(prompt: str, *, model: str = "gpt-fake", schema: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "messages": [
            {"role": "system", "content": TAGGED_SYSTEM},
            {"role": "user", "content": "an earlier turn"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": prompt}]},
        ],
    }
    if schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "verdict", "schema": schema, "strict": True},
        }
    return body


def anthropic_body(prompt: str, *, model: str = "claude-fake", schema: Any = None) -> dict:
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": 256,
        "system": TAGGED_SYSTEM,
        "messages": [{"role": "user", "content": prompt}],
    }
    if schema is not None:
        body["tools"] = [{"name": "verdict", "description": "x", "input_schema": schema}]
        body["tool_choice"] = {"type": "tool", "name": "verdict"}
    return body


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadHandle]:
    with start_in_thread(seed=1) as handle:
        yield handle


@pytest.fixture
def srv(server: ThreadHandle) -> ThreadHandle:
    server.reset()
    return server


# --------------------------------------------------------------------------- the pure rules


def test_expected_answer_follows_the_documented_rules() -> None:
    for prompt in ["p1", "Is this a refusal?", "ünïcode ✓", ""]:
        answer = expected_answer(prompt, SCHEMA)
        assert list(answer) == ["rejection", "topics", "explanation"]
        assert answer["rejection"] == ["rejection", "not rejection"][h(prompt, "rejection") % 2]
        mask = h(prompt, "topics") % 15 + 1
        assert answer["topics"] == [v for i, v in enumerate("abcd") if mask >> i & 1]
        assert answer["topics"]  # non-empty, enum order
        assert isinstance(answer["explanation"], str) and answer["explanation"].endswith(".")
        assert answer == expected_answer(prompt, SCHEMA)  # deterministic
    assert len({json.dumps(expected_answer(f"q{i}", SCHEMA)) for i in range(40)}) > 10
    assert expected_answer("x", {}) == {}


def test_expected_answer_follows_refs_and_nullable() -> None:
    schema = {
        "$defs": {"Label": {"enum": ["yes", "no", "maybe"], "type": "string"}},
        "properties": {
            "label": {"$ref": "#/$defs/Label"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "score": {"type": "integer", "minimum": 1, "maximum": 5},
        },
        "type": "object",
    }
    answer = expected_answer("p", schema)
    assert answer["label"] == ["yes", "no", "maybe"][h("p", "label") % 3]
    assert isinstance(answer["note"], str)
    assert 1 <= answer["score"] <= 5


def test_expected_text_uses_allowed_values_lines() -> None:
    assert allowed_values([TAGGED_SYSTEM]) == {
        "rejection": ["rejection", "not rejection"],
        "tone": ["calm", "angry", "neutral"],
    }
    text = expected_text("p", [TAGGED_SYSTEM, "p"])
    rejection = ["rejection", "not rejection"][h("p", "rejection") % 2]
    tone = ["calm", "angry", "neutral"][h("p", "tone") % 3]
    assert text == f"<rejection>{rejection}</rejection>\n<tone>{tone}</tone>"
    assert expected_text("p", ["no such lines", "Allowed values for x:"]) == free_text("p")


def test_config_is_validated() -> None:
    with pytest.raises(ValueError):
        FakeConfig(rate_429=0.6, rate_500=0.6)
    with pytest.raises(TypeError):
        FakeConfig(rate_timeout=0.1)  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        FakeConfig(fail_status_for_model={"m": 200})


# --------------------------------------------------------------------------- the endpoints


def test_openai_with_and_without_schema(srv: ThreadHandle) -> None:
    with httpx.Client(base_url=srv.base_url, trust_env=False) as client:
        r = client.post("/v1/chat/completions", json=openai_body("q1", schema=SCHEMA))
        assert r.status_code == 200
        choice = r.json()["choices"][0]
        assert choice["finish_reason"] == "stop"
        assert json.loads(choice["message"]["content"]) == expected_answer("q1", SCHEMA)

        r = client.post("/v1/chat/completions", json=openai_body("q1"))
        body = r.json()
        content = body["choices"][0]["message"]["content"]
        assert content == expected_text("q1", [TAGGED_SYSTEM, "an earlier turn", "ok", "q1"])
        all_text = "\n".join([TAGGED_SYSTEM, "an earlier turn", "ok", "q1"])
        assert body["usage"]["prompt_tokens"] == count_tokens(all_text)
        assert body["usage"]["completion_tokens"] == count_tokens(content)
        assert body["usage"]["total_tokens"] == count_tokens(all_text) + count_tokens(content)

        plain = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
        r = client.post("/v1/chat/completions", json=plain)
        assert r.json()["choices"][0]["message"]["content"] == free_text("hello")


def test_anthropic_with_and_without_tool(srv: ThreadHandle) -> None:
    with httpx.Client(base_url=srv.base_url, trust_env=False) as client:
        r = client.post("/v1/messages", json=anthropic_body("q2", schema=SCHEMA))
        assert r.status_code == 200
        body = r.json()
        assert body["stop_reason"] == "tool_use"
        [block] = body["content"]
        assert block["type"] == "tool_use" and block["name"] == "verdict"
        assert block["input"] == expected_answer("q2", SCHEMA)
        assert body["usage"]["output_tokens"] == count_tokens(json.dumps(block["input"]))

        r = client.post("/v1/messages", json=anthropic_body("q2"))
        body = r.json()
        assert body["stop_reason"] == "end_turn"
        [block] = body["content"]
        assert block == {"type": "text", "text": expected_text("q2", [TAGGED_SYSTEM, "q2"])}
        all_text = f"{TAGGED_SYSTEM}\nq2"
        assert body["usage"] == {
            "input_tokens": count_tokens(all_text),
            "output_tokens": count_tokens(block["text"]),
        }


def test_bad_requests_and_unknown_paths(srv: ThreadHandle) -> None:
    with httpx.Client(base_url=srv.base_url, trust_env=False) as client:
        assert client.post("/v1/chat/completions", content=b"{not json").status_code == 400
        assert client.post("/v1/messages", json={"model": "m"}).status_code == 400
        assert client.get("/v1/messages").status_code == 405
        assert client.post("/v2/other", json={}).status_code == 404
        # a chunked request body (no Content-Length)
        raw = json.dumps(openai_body("chunked")).encode()
        chunks = iter([raw[:10], raw[10:]])
        r = client.post("/v1/chat/completions", content=chunks)
        assert r.status_code == 200
    assert srv.stats()["by_status"] == {"400": 2, "200": 1}


def test_fail_status_for_model() -> None:
    with (
        start_in_thread(fail_status_for_model={"bad-model": 401}) as srv,
        httpx.Client(base_url=srv.base_url, trust_env=False) as client,
    ):
        r = client.post("/v1/chat/completions", json=openai_body("x", model="bad-model"))
        assert r.status_code == 401
        assert r.json()["error"]["type"] == "authentication_error"
        r = client.post("/v1/messages", json=anthropic_body("x", model="bad-model"))
        assert r.status_code == 401
        assert r.json()["error"]["type"] == "authentication_error"
        assert client.post("/v1/chat/completions", json=openai_body("x")).status_code == 200
        stats = srv.stats()
        assert stats["by_fault"]["model_status"] == 2
        assert stats["by_status"] == {"401": 2, "200": 1}


def test_keep_alive_one_connection(srv: ThreadHandle) -> None:
    with httpx.Client(base_url=srv.base_url, trust_env=False) as client:
        for i in range(60):
            r = client.post("/v1/chat/completions", json=openai_body(f"k{i}"))
            assert r.status_code == 200
            assert r.headers["connection"] == "keep-alive"
    stats = srv.stats()
    assert stats["total_requests"] == 60
    assert stats["connections_opened"] == 2  # the client's one, and this stats call's own


def test_stats_count_and_reset(srv: ThreadHandle) -> None:
    with httpx.Client(base_url=srv.base_url, trust_env=False) as client:
        for prompt in ["a", "b", "a", "a"]:
            client.post("/v1/chat/completions", json=openai_body(prompt))
        client.post("/v1/messages", json=anthropic_body("b", model="c1"))
    stats = srv.stats()
    assert stats["total_requests"] == 5
    assert stats["by_status"] == {"200": 5}
    assert stats["per_prompt"] == {prompt_key("a"): 3, prompt_key("b"): 2}
    assert prompt_key("a") == hashlib.sha256(b"a").hexdigest()
    assert stats["by_endpoint"] == {"/v1/chat/completions": 4, "/v1/messages": 1}
    assert stats["by_model"] == {"gpt-fake": 4, "c1": 1}
    assert set(stats["by_fault"].values()) == {0}
    srv.reset()
    stats = srv.stats()
    assert stats["total_requests"] == 0 and stats["per_prompt"] == {} and stats["by_status"] == {}


# --------------------------------------------------------------------------- faults


async def _fire(base_url: str, n: int, timeout: float) -> tuple[Counter[str], list[str]]:
    outcomes: Counter[str] = Counter()
    problems: list[str] = []
    limit = asyncio.Semaphore(25)

    async def one(client: httpx.AsyncClient, i: int) -> None:
        prompt = f"fault-{i}"
        use_openai = i % 2 == 0
        path = "/v1/chat/completions" if use_openai else "/v1/messages"
        body = openai_body(prompt, schema=SCHEMA) if use_openai else anthropic_body(prompt)
        async with limit:
            try:
                r = await client.post(path, json=body, timeout=timeout)
            except httpx.TimeoutException:
                outcomes["hang"] += 1
                return
            except httpx.RemoteProtocolError:
                outcomes["disconnect"] += 1
                return
        if r.status_code == 429:
            outcomes["429"] += 1
            if r.headers.get("retry-after") != "1":
                problems.append(f"429 without Retry-After: {r.headers}")
        elif r.status_code == 500:
            outcomes["500"] += 1
        elif r.status_code != 200:
            problems.append(f"status {r.status_code}")
        else:
            try:
                data = r.json()
            except json.JSONDecodeError:
                outcomes["malformed"] += 1
                return
            outcomes["ok"] += 1
            if use_openai:
                got = json.loads(data["choices"][0]["message"]["content"])
                if got != expected_answer(prompt, SCHEMA):
                    problems.append(f"wrong answer for {prompt}")
            elif data["content"][0]["text"] != expected_text(prompt, [TAGGED_SYSTEM, prompt]):
                problems.append(f"wrong answer for {prompt}")

    async with httpx.AsyncClient(base_url=base_url, trust_env=False) as client:
        await asyncio.gather(*(one(client, i) for i in range(n)))
    return outcomes, problems


def test_each_fault_happens_at_about_its_rate() -> None:
    rates = {"429": 0.1, "500": 0.1, "malformed": 0.1, "hang": 0.05, "disconnect": 0.1}
    config = {f"rate_{k}": v for k, v in rates.items()}
    with start_in_thread(seed=7, latency=0.005, hang_seconds=0.6, **config) as srv:
        started = time.monotonic()
        outcomes, problems = asyncio.run(_fire(srv.base_url, 200, timeout=0.3))
        assert time.monotonic() - started < 5
        stats = srv.stats()
    assert problems == []
    assert sum(outcomes.values()) == 200 == stats["total_requests"]
    for kind, rate in rates.items():
        assert outcomes[kind] == stats["by_fault"][kind], kind
        assert 0.35 * rate * 200 <= outcomes[kind] <= 2.0 * rate * 200, (kind, outcomes)
    assert outcomes["ok"] >= 60
    assert stats["by_status"]["429"] == outcomes["429"]
    assert stats["by_status"]["500"] == outcomes["500"]
    assert len(stats["per_prompt"]) == 200


def test_fault_counts_repeat_with_the_same_seed() -> None:
    counts = []
    for _ in range(2):
        with start_in_thread(seed=3, rate_429=0.2, rate_500=0.2) as srv:
            outcomes, problems = asyncio.run(_fire(srv.base_url, 60, timeout=5))
            assert problems == []
            counts.append((outcomes, srv.stats()["by_fault"]))
    assert counts[0] == counts[1]


def test_retry_after_ms_and_latency() -> None:
    with (
        start_in_thread(rate_429=1.0, retry_after_ms=True) as srv,
        httpx.Client(base_url=srv.base_url, trust_env=False) as client,
    ):
        r = client.post("/v1/chat/completions", json=openai_body("x"))
        assert r.status_code == 429
        assert r.headers["retry-after-ms"] == "300" and "retry-after" not in r.headers
        assert r.json()["error"]["type"] == "rate_limit_error"
    with (
        start_in_thread(latency=0.15, jitter=0.05) as srv,
        httpx.Client(base_url=srv.base_url, trust_env=False) as client,
    ):
        started = time.monotonic()
        assert client.post("/v1/messages", json=anthropic_body("x")).status_code == 200
        assert 0.1 <= time.monotonic() - started < 1.0


def test_token_bucket_refuses_beyond_its_rate_and_says_so() -> None:
    with (
        start_in_thread(requests_per_second=0.5, burst=3, retry_after_ms=True) as srv,
        httpx.Client(base_url=srv.base_url, trust_env=False) as client,
    ):
        replies = [client.post("/v1/chat/completions", json=openai_body("x")) for _ in range(5)]
        anthropic = client.post("/v1/messages", json=anthropic_body("x"))
        stats = srv.stats()
    assert [r.status_code for r in replies] == [200, 200, 200, 429, 429]
    remaining = [r.headers["x-ratelimit-remaining-requests"] for r in replies]
    assert remaining == ["2", "1", "0", "0", "0"]
    assert {r.headers["x-ratelimit-limit-requests"] for r in replies} == {"30"}  # per minute
    refused = replies[3]
    # The true wait is about 2 s (one request at 0.5/s): Retry-After rounds it up.
    assert refused.headers["retry-after"] == "2"
    assert 1500 < int(refused.headers["retry-after-ms"]) <= 2000
    assert refused.json()["error"]["type"] == "rate_limit_error"
    assert anthropic.status_code == 429
    assert anthropic.headers["anthropic-ratelimit-requests-remaining"] == "0"
    reset = datetime.datetime.fromisoformat(anthropic.headers["anthropic-ratelimit-requests-reset"])
    assert 0 < reset.timestamp() - time.time() <= 6.5  # full again within 3 requests' time
    assert stats["by_status"] == {"200": 3, "429": 3} and stats["by_fault"]["bucket"] == 3


# --------------------------------------------------------------------------- the subprocess


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def test_subprocess_serves_and_stops() -> None:
    with run_server(seed=2) as srv:
        process = srv.process
        assert srv.base_url == f"http://127.0.0.1:{srv.port}"
        r = httpx.post(
            srv.base_url + "/v1/chat/completions", json=openai_body("sub"), trust_env=False
        )
        assert r.json()["choices"][0]["message"]["content"] == expected_text(
            "sub", [TAGGED_SYSTEM, "an earlier turn", "ok", "sub"]
        )
        assert srv.stats()["per_prompt"] == {prompt_key("sub"): 1}
        srv.reset()
        assert srv.stats()["total_requests"] == 0
        assert process.poll() is None
    assert process.poll() is not None
    assert not _accepts(srv.port)


def test_subprocess_exits_by_itself_after_max_seconds() -> None:
    with run_server(max_seconds=0.5) as srv:
        assert srv.process.wait(timeout=5) == 0
        assert not _accepts(srv.port)


def test_stop_with_a_hanging_request_is_quick_and_quiet(caplog: pytest.LogCaptureFixture) -> None:
    srv = start_in_thread(rate_hang=1.0, hang_seconds=30)
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(srv.base_url + "/v1/messages", json=anthropic_body("h"), timeout=0.2)
    started = time.monotonic()
    srv.stop()
    assert time.monotonic() - started < 2
    assert [r for r in caplog.records if r.levelno >= 40] == []
    assert not _accepts(srv.port)
