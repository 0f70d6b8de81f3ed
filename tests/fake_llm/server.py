"""A fake OpenAI/Anthropic-compatible LLM server for tests and benchmarks.

Standard library only: a small asyncio HTTP/1.1 server (keep-alive, Content-Length or chunked
request bodies, Content-Length responses) bound to 127.0.0.1.

Endpoints:
    POST /v1/chat/completions  OpenAI chat completions shape.
    POST /v1/messages          Anthropic Messages shape.
    GET  /stats                JSON counters (see `_FakeServer.stats`).
    POST /reset                zero the counters (the fault RNG is not re-seeded).
    GET  /health               {"ok": true}.

Answers depend only on the last user message's text (the *prompt*), the JSON schema carried by
the request and, without a schema, the `Allowed values for NAME: a | b | c` lines found in any
message: see `expected_answer` and `expected_text`, which the server itself uses.

Rate limit (`requests_per_second` > 0): a token bucket of `burst` requests (default one
second's worth) refilled at `requests_per_second`, taken when a well-formed completion request
arrives; an empty bucket answers 429 at once with `Retry-After` (the true wait in seconds, rounded
up, as servers do; with `retry_after_ms` also `retry-after-ms`, exact). With
`rate_limit_headers` every completion reply (429 or not) says how the bucket stands: OpenAI's
`x-ratelimit-limit-requests` (per minute) / `-remaining-requests` / `-reset-requests` (until
full), or on /v1/messages Anthropic's `anthropic-ratelimit-requests-limit` / `-remaining` /
`-reset` (RFC 3339). Refused requests are counted in `/stats` `by_status["429"]` and
`by_fault["bucket"]`.

Faults (`FakeConfig`): one `random.Random(seed)` draw per well-formed completion request picks at
most one of 429 / 500 / malformed / hang / disconnect (rates are cumulative, so they must sum to
<= 1).  429 and `fail_status_for_model` answer at once; every other reply, faulty or not, waits
`latency` (+/- `jitter`, from a second RNG so jitter never shifts the fault sequence); a hang
waits `hang_seconds` instead.  A fault never changes what the answer would have been.

Run it:
    with run_server(latency=0.2, rate_429=0.1) as srv: ...   # subprocess, srv.base_url
    with start_in_thread(seed=3) as srv: ...                  # same server, daemon thread
    python -m tests.fake_llm.server --port 8123 --config '{"latency": 0.1}'
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import hashlib
import http
import json
import math
import os
import random
import re
import select
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tests.fake_llm.batches import BatchEngine

HOST = "127.0.0.1"
PORT_LINE_PREFIX = "FAKE_LLM_PORT "
_ROOT = Path(__file__).resolve().parents[2]

#: Fault kinds as reported in `/stats` under `by_fault`.
FAULT_KINDS = ("429", "500", "malformed", "hang", "disconnect", "model_status", "bucket")
_RANDOM_FAULTS = (
    ("rate_429", "429"),
    ("rate_500", "500"),
    ("rate_malformed", "malformed"),
    ("rate_hang", "hang"),
    ("rate_disconnect", "disconnect"),
)


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class FakeConfig:
    """What the fake server does besides answering (all rates are probabilities per request)."""

    latency: float = 0.0
    jitter: float = 0.0
    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_malformed: float = 0.0
    rate_hang: float = 0.0
    rate_disconnect: float = 0.0
    hang_seconds: float = 30.0
    retry_after_ms: bool = False
    fail_status_for_model: dict[str, int] = field(default_factory=dict)
    seed: int = 0
    max_seconds: float = 600.0
    batch_seconds: float = 0.2
    batch_expire_rate: float = 0.0
    batch_create_failures: int = 0
    requests_per_second: float = 0.0
    """A token bucket admitting this many completion requests per second (0: no limit)."""
    burst: float = 0.0
    """The bucket's size in requests (0: one second's worth, at least 1)."""
    rate_limit_headers: bool = True
    """With `requests_per_second`: the bucket's state on every completion reply."""

    def __post_init__(self) -> None:
        rates = [getattr(self, name) for name, _ in _RANDOM_FAULTS]
        if any(not 0.0 <= r <= 1.0 for r in rates) or sum(rates) > 1.0 + 1e-9:
            raise ValueError(f"fault rates must be in [0, 1] and sum to <= 1, got {rates}")
        if not 0.0 <= self.batch_expire_rate <= 1.0 or self.batch_seconds < 0:
            raise ValueError("batch_expire_rate must be in [0, 1] and batch_seconds >= 0")
        if min(self.latency, self.jitter, self.hang_seconds) < 0 or self.max_seconds <= 0:
            raise ValueError("latency, jitter, hang_seconds must be >= 0 and max_seconds > 0")
        if self.requests_per_second < 0 or self.burst < 0:
            raise ValueError("requests_per_second and burst must be >= 0")
        for model, status in self.fail_status_for_model.items():
            if not isinstance(status, int) or not 400 <= status <= 599:
                raise ValueError(f"fail_status_for_model[{model!r}] must be a 4xx/5xx int")


# --------------------------------------------------------------------------- deterministic answers


def prompt_key(prompt: str) -> str:
    """The key of `prompt` in `/stats` `per_prompt`: the sha256 hex digest of its UTF-8 text."""
    return hashlib.sha256(prompt.encode()).hexdigest()


def _h(prompt: str, name: str) -> int:
    """The integer h of `prompt` and a property name: sha256(prompt + name), big-endian."""
    return int.from_bytes(hashlib.sha256((prompt + name).encode()).digest(), "big")


def free_text(prompt: str, name: str = "") -> str:
    """The short deterministic sentence answered for a plain string (or with nothing to fill)."""
    tag = f"{_h(prompt, name):064x}"[:8]
    return f"Fake answer {tag} about {name}." if name else f"Fake answer {tag}."


def _resolve(spec: Any, root: Mapping[str, Any]) -> Mapping[str, Any]:
    for _ in range(16):  # local $refs only ("#/$defs/X", "#/definitions/X"), bounded
        if not isinstance(spec, Mapping) or "$ref" not in spec:
            break
        target: Any = root
        for part in str(spec["$ref"]).lstrip("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        spec = target
    return spec if isinstance(spec, Mapping) else {}


def _value(prompt: str, name: str, spec: Any, root: Mapping[str, Any], depth: int) -> Any:
    spec = _resolve(spec, root)
    h = _h(prompt, name)
    if "const" in spec:
        return spec["const"]
    if spec.get("enum"):
        enum = list(spec["enum"])
        return enum[h % len(enum)]
    for key in ("anyOf", "oneOf", "allOf"):
        options = [_resolve(o, root) for o in spec.get(key) or []]
        options = [o for o in options if o.get("type") != "null"]
        if options:
            return _value(prompt, name, options[0], root, depth)
    kind = spec.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "array":
        items = _resolve(spec.get("items", {}), root)
        if items.get("enum"):
            enum = list(items["enum"])
            mask = h % (2 ** len(enum) - 1) + 1  # non-empty subset, enum order kept
            return [v for i, v in enumerate(enum) if mask >> i & 1]
        return [_value(prompt, name, items, root, depth + 1)] if depth < 8 else []
    if kind == "object" or "properties" in spec:
        if depth >= 8:
            return {}
        props = spec.get("properties") or {}
        prefix = f"{name}." if depth else ""
        return {k: _value(prompt, prefix + k, v, root, depth + 1) for k, v in props.items()}
    if kind in ("integer", "number"):
        low = spec.get("minimum", 0)
        high = spec.get("maximum", low + 9)
        value = low + h % (int(high - low) + 1) if high >= low else low
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return bool(h & 1)
    if kind == "null":
        return None
    return free_text(prompt, name)


def expected_answer(prompt: str, schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """The object the server answers for `prompt` under the JSON `schema` (its `properties`).

    For each property (h = int(sha256(prompt + property name))): `enum` -> `enum[h % len]`;
    `array` of `items.enum` -> the non-empty subset picked by bits of `h % (2**n - 1) + 1`, in
    enum order; `string` -> a short sentence (`free_text(prompt, name)`); integer/number ->
    `minimum + h % (span + 1)` (default 0..9); boolean -> `h & 1`; nested objects recurse with
    "outer.inner" names.  Local `$ref`s and `anyOf`/nullable types are followed.  A schema
    without properties gives `{}`.
    """
    if not schema:
        return {}
    root = _resolve(schema, schema)
    if not root.get("properties"):
        return {}
    result = _value(prompt, "", root, schema, 0)
    return result if isinstance(result, dict) else {}


_ALLOWED_RE = re.compile(
    r"^Allowed values for (?P<name>[^:\r\n]+): (?P<values>[^\r\n]*\S)[ \t]*\r?$", re.MULTILINE
)


def allowed_values(texts: Iterable[str]) -> dict[str, list[str]]:
    """NAME -> values of every `Allowed values for NAME: a | b | c` line, first one per NAME."""
    found: dict[str, list[str]] = {}
    for text in texts:
        for m in _ALLOWED_RE.finditer(text):
            values = [v.strip() for v in m["values"].split("|") if v.strip()]
            if values:
                # The name may be written bare or in angle brackets (`<rejection>`).
                found.setdefault(m["name"].strip().removeprefix("<").removesuffix(">"), values)
    return found


def allowed_values_schema(allowed: Mapping[str, list[str]]) -> dict[str, Any]:
    """The JSON schema equivalent of `allowed_values(...)`: one string enum per name."""
    return {
        "type": "object",
        "properties": {k: {"type": "string", "enum": list(v)} for k, v in allowed.items()},
    }


def expected_text(prompt: str, texts: Iterable[str]) -> str:
    """The text answered without a schema: `<NAME>value</NAME>` lines, or `free_text(prompt)`.

    `texts` are all message texts (system included); values are picked as `expected_answer`
    picks an enum.
    """
    allowed = allowed_values(texts)
    if not allowed:
        return free_text(prompt)
    answer = expected_answer(prompt, allowed_values_schema(allowed))
    return "\n".join(f"<{name}>{value}</{name}>" for name, value in answer.items())


def count_tokens(text: str) -> int:
    """The fake token count: ceil(len(text) / 4)."""
    return math.ceil(len(text) / 4)


# --------------------------------------------------------------------------- request parsing


class _BadRequest(Exception):
    pass


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


@dataclass
class _Parsed:
    api: str  # "openai" | "anthropic"
    model: str
    prompt: str
    texts: list[str]
    schema: Mapping[str, Any] | None = None
    tool_name: str | None = None
    json_mode: bool = False


def _parse(api: str, body: Any) -> _Parsed:
    if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list):
        raise _BadRequest("body must be a JSON object with a 'messages' list")
    messages = [m for m in body["messages"] if isinstance(m, Mapping)]
    texts = [_text_of(m.get("content")) for m in messages]
    users = [t for m, t in zip(messages, texts, strict=True) if m.get("role") == "user"]
    parsed = _Parsed(api, str(body.get("model", "")), users[-1] if users else "", texts)
    if api == "openai":
        fmt = body.get("response_format")
        if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
            schema = (fmt.get("json_schema") or {}).get("schema")
            if not isinstance(schema, Mapping):
                raise _BadRequest("response_format.json_schema.schema must be an object")
            parsed.schema = schema
        elif isinstance(fmt, Mapping) and fmt.get("type") == "json_object":
            parsed.json_mode = True
    else:
        if "system" in body:
            parsed.texts = [_text_of(body["system"]), *texts]
        tools = [t for t in body.get("tools") or [] if isinstance(t, Mapping)]
        choice = body.get("tool_choice")
        tool = None
        if isinstance(choice, Mapping) and choice.get("type") == "tool":
            tool = next((t for t in tools if t.get("name") == choice.get("name")), None)
            if tool is None:
                raise _BadRequest(f"tool_choice names an unknown tool {choice.get('name')!r}")
        elif isinstance(choice, Mapping) and choice.get("type") == "any" and tools:
            tool = tools[0]
        if tool is not None:
            parsed.schema = tool.get("input_schema") or {}
            parsed.tool_name = str(tool.get("name"))
    return parsed


def _answer(parsed: _Parsed, serial: int) -> tuple[dict[str, Any], str]:
    """The success body and the answer text whose length counts as completion tokens."""
    if parsed.schema is not None:
        obj: dict[str, Any] = expected_answer(parsed.prompt, parsed.schema)
        text = json.dumps(obj)
    elif parsed.json_mode:
        allowed = allowed_values(parsed.texts)
        obj = (
            expected_answer(parsed.prompt, allowed_values_schema(allowed))
            if allowed
            else {"answer": free_text(parsed.prompt)}
        )
        text = json.dumps(obj)
    else:
        text = expected_text(parsed.prompt, parsed.texts)
    p_tokens = count_tokens("\n".join(parsed.texts))
    c_tokens = count_tokens(text)
    if parsed.api == "openai":
        return {
            "id": f"chatcmpl-fake{serial}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": parsed.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": p_tokens,
                "completion_tokens": c_tokens,
                "total_tokens": p_tokens + c_tokens,
            },
        }, text
    if parsed.tool_name is not None:
        block: dict[str, Any] = {
            "type": "tool_use",
            "id": f"toolu_fake{serial}",
            "name": parsed.tool_name,
            "input": json.loads(text),
        }
        stop = "tool_use"
    else:
        block, stop = {"type": "text", "text": text}, "end_turn"
    return {
        "id": f"msg_fake{serial}",
        "type": "message",
        "role": "assistant",
        "model": parsed.model,
        "content": [block],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": p_tokens, "output_tokens": c_tokens},
    }, text


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def _error_body(api: str, status: int, message: str) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(status, "api_error")
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": str(status)}}


# --------------------------------------------------------------------------- HTTP server


def _response(
    status: int, body: bytes, keep_alive: bool, extra: Iterable[tuple[str, str]] = ()
) -> bytes:
    try:
        reason = http.HTTPStatus(status).phrase
    except ValueError:
        reason = "Status"
    lines = [
        f"HTTP/1.1 {status} {reason}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        f"Connection: {'keep-alive' if keep_alive else 'close'}",
        *(f"{k}: {v}" for k, v in extra),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _json(obj: Any) -> bytes:
    return json.dumps(obj).encode()


class _Bucket:
    """The token bucket of `requests_per_second`: who is admitted, and the headers saying so."""

    def __init__(self, config: FakeConfig) -> None:
        self.rate = config.requests_per_second
        self.size = config.burst or max(1.0, self.rate)
        self.level = self.size
        self.updated = time.monotonic()
        self.headers = config.rate_limit_headers
        self.retry_after_ms = config.retry_after_ms

    def take(self, api: str) -> tuple[bool, list[tuple[str, str]]]:
        """Take one request's token if there is one: (admitted, the reply's extra headers)."""
        now = time.monotonic()
        self.level = min(self.size, self.level + (now - self.updated) * self.rate)
        self.updated = now
        admitted = self.level >= 1.0
        if admitted:
            self.level -= 1.0
        extra: list[tuple[str, str]] = []
        if not admitted:
            wait = (1.0 - self.level) / self.rate
            extra.append(("Retry-After", str(math.ceil(wait))))
            if self.retry_after_ms:
                extra.append(("retry-after-ms", str(math.ceil(wait * 1000))))
        if self.headers:
            remaining = math.floor(self.level)
            until_full = (self.size - self.level) / self.rate
            limit = str(round(self.rate * 60))  # per minute, as OpenAI and Anthropic say
            if api == "anthropic":
                full = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=until_full)
                extra += [
                    ("anthropic-ratelimit-requests-limit", limit),
                    ("anthropic-ratelimit-requests-remaining", str(remaining)),
                    ("anthropic-ratelimit-requests-reset", full.isoformat(timespec="milliseconds")),
                ]
            else:
                extra += [
                    ("x-ratelimit-limit-requests", limit),
                    ("x-ratelimit-remaining-requests", str(remaining)),
                    ("x-ratelimit-reset-requests", f"{until_full * 1000:.0f}ms"),
                ]
        return admitted, extra


class _FakeServer:
    """Connection handling, answers, faults and counters of one server instance."""

    def __init__(self, config: FakeConfig) -> None:
        self.config = config
        self.fault_rng = random.Random(config.seed)
        self.jitter_rng = random.Random(f"{config.seed}/jitter")
        self.tasks: set[asyncio.Task[Any]] = set()
        self.open_connections = 0
        self.in_flight = 0
        self.serial = 0
        self.bucket = _Bucket(config) if config.requests_per_second > 0 else None
        self._zero()
        self.batch_engine = BatchEngine(
            config, self.fault_rng, parse=_parse, answer=_answer, on_prompt=self._count_prompt
        )

    def _count_prompt(self, prompt: str) -> None:
        self.per_prompt[prompt_key(prompt)] += 1

    def _zero(self) -> None:
        self.total = 0
        self.by_status: Counter[str] = Counter()
        self.by_fault: dict[str, int] = dict.fromkeys(FAULT_KINDS, 0)
        self.by_endpoint: Counter[str] = Counter()
        self.by_model: Counter[str] = Counter()
        self.per_prompt: Counter[str] = Counter()
        self.connections_opened = 0
        if hasattr(self, "batch_engine"):
            self.batch_engine.counts.clear()
        self.max_in_flight = self.in_flight
        self.cpu_base = time.process_time()
        self.time_base = time.monotonic()

    def stats(self) -> dict[str, Any]:
        """Counters since start or the last /reset (completion endpoints only).

        A status is counted when its reply is made, even if the client has left meanwhile (a
        timed-out hang still counts as 200); a disconnect has no status.  `connections_opened`
        counts every connection, the /stats call's own included.
        """
        return {
            "total_requests": self.total,
            "by_status": dict(self.by_status),
            "by_fault": dict(self.by_fault),
            "by_endpoint": dict(self.by_endpoint),
            "by_model": dict(self.by_model),
            "per_prompt": dict(self.per_prompt),
            "connections_opened": self.connections_opened,
            "open_connections": self.open_connections,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "batch": self.batch_engine.stats() if hasattr(self, "batch_engine") else {},
            "server_cpu_seconds": time.process_time() - self.cpu_base,
            "seconds_since_reset": time.monotonic() - self.time_base,
        }

    # -- HTTP/1.1 framing

    async def handle_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self.tasks.add(task)
        self.connections_opened += 1
        self.open_connections += 1
        try:
            while True:
                request = await self._read_request(reader, writer)
                if request is None:
                    break
                method, path, body, keep_alive, query, headers = request
                reply = await self._dispatch(method, path, body, keep_alive, query, headers)
                if reply is None or reader.at_eof():
                    break  # injected disconnect, or the client left while we waited
                writer.write(reply)
                await writer.drain()
                if not keep_alive:
                    break
        except _BadRequest as exc:
            with contextlib.suppress(Exception):
                writer.write(_response(400, _json({"error": {"message": str(exc)}}), False))
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            pass  # shutdown (close_connections); ending normally keeps 3.11's streams quiet
        finally:
            self.open_connections -= 1
            if task is not None:
                self.tasks.discard(task)
            writer.close()

    async def _read_request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> tuple[str, str, bytes, bool, dict[str, str], dict[str, str]] | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None  # the client closed the connection between requests
        lines = head.decode("latin-1").strip("\r\n").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise _BadRequest(f"bad request line {lines[0]!r}")
        method, target, version = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("expect", "").lower() == "100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks = []
            while True:
                size_line = await reader.readuntil(b"\r\n")
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while (await reader.readuntil(b"\r\n")) != b"\r\n":
                        pass  # trailers
                    break
                chunks.append(await reader.readexactly(size))
                await reader.readexactly(2)
            body = b"".join(chunks)
        else:
            try:
                length = int(headers.get("content-length", "0"))
            except ValueError as exc:
                raise _BadRequest("bad Content-Length") from exc
            body = await reader.readexactly(length) if length > 0 else b""
        connection = headers.get("connection", "").lower()
        keep_alive = connection != "close" if version == "HTTP/1.1" else connection == "keep-alive"
        path, _, query = target.partition("?")
        params = {}
        for part in filter(None, query.split("&")):
            name, _, value = part.partition("=")
            params[name] = urllib.parse.unquote_plus(value)
        return method, path, body, keep_alive, params, headers

    async def _dispatch(
        self,
        method: str,
        path: str,
        body: bytes,
        keep_alive: bool,
        query: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> bytes | None:
        api = {"/v1/chat/completions": "openai", "/v1/messages": "anthropic"}.get(path)
        if api is not None and method == "POST":
            return await self._completion(api, path, body, keep_alive)
        batch_reply = self.batch_engine.handle(method, path, query or {}, body, headers or {})
        if batch_reply is not None:
            status, payload = batch_reply
            data = payload if isinstance(payload, bytes) else _json(payload)
            return _response(status, data, keep_alive)
        if path == "/stats" and method == "GET":
            return _response(200, _json(self.stats()), keep_alive)
        if path == "/reset" and method == "POST":
            self._zero()
            return _response(200, _json({"ok": True}), keep_alive)
        if path == "/health" and method == "GET":
            return _response(200, _json({"ok": True}), keep_alive)
        known = api is not None or path in ("/stats", "/reset", "/health")
        status = 405 if known else 404
        return _response(status, _json({"error": {"message": f"{method} {path}"}}), keep_alive)

    # -- completions

    def _draw_fault(self) -> str | None:
        draw = self.fault_rng.random()
        edge = 0.0
        for name, kind in _RANDOM_FAULTS:
            edge += getattr(self.config, name)
            if draw < edge:
                return kind
        return None

    async def _completion(self, api: str, path: str, raw: bytes, keep_alive: bool) -> bytes | None:
        self.total += 1
        self.by_endpoint[path] += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._completion_inner(api, raw, keep_alive)
        finally:
            self.in_flight -= 1

    def _error(
        self,
        api: str,
        status: int,
        message: str,
        keep_alive: bool,
        extra: Iterable[tuple[str, str]] = (),
    ) -> bytes:
        self.by_status[str(status)] += 1
        return _response(status, _json(_error_body(api, status, message)), keep_alive, extra)

    async def _completion_inner(self, api: str, raw: bytes, keep_alive: bool) -> bytes | None:
        try:
            parsed = _parse(api, json.loads(raw))
        except (ValueError, _BadRequest) as exc:
            return self._error(api, 400, f"bad request: {exc}", keep_alive)
        self.per_prompt[prompt_key(parsed.prompt)] += 1
        self.by_model[parsed.model] += 1
        self.serial += 1
        serial = self.serial
        fault = self._draw_fault()  # one draw per well-formed request, whatever happens next
        cfg = self.config
        status = cfg.fail_status_for_model.get(parsed.model)
        if status is not None:
            self.by_fault["model_status"] += 1
            return self._error(api, status, f"model {parsed.model!r} fails", keep_alive)
        extra: list[tuple[str, str]] = []
        if self.bucket is not None:
            admitted, extra = self.bucket.take(api)
            if not admitted:
                self.by_fault["bucket"] += 1
                return self._error(api, 429, "rate limit reached (fake)", keep_alive, extra)
        if fault == "429":
            self.by_fault["429"] += 1
            header = ("retry-after-ms", "300") if cfg.retry_after_ms else ("Retry-After", "1")
            return self._error(api, 429, "rate limited (fake)", keep_alive, [header, *extra])
        delay = cfg.latency
        if cfg.jitter:
            delay = max(0.0, delay + self.jitter_rng.uniform(-cfg.jitter, cfg.jitter))
        if fault == "hang":
            self.by_fault["hang"] += 1
            delay = cfg.hang_seconds
        if delay > 0:
            await asyncio.sleep(delay)
        if fault == "disconnect":
            self.by_fault["disconnect"] += 1
            return None
        if fault == "500":
            self.by_fault["500"] += 1
            return self._error(api, 500, "internal error (fake)", keep_alive, extra)
        body, _ = _answer(parsed, serial)
        data = _json(body)
        if fault == "malformed":
            self.by_fault["malformed"] += 1
            data = data[: len(data) // 2]
        self.by_status["200"] += 1
        return _response(200, data, keep_alive, extra)

    async def close_connections(self) -> None:
        tasks = list(self.tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def serve(
    config: FakeConfig,
    *,
    port: int = 0,
    on_ready: Callable[[int], None] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve on 127.0.0.1:`port` until `stop` is set or `config.max_seconds` have passed."""
    state = _FakeServer(config)
    server = await asyncio.start_server(
        state.handle_connection, HOST, port, limit=1 << 20, backlog=2048
    )
    bound = server.sockets[0].getsockname()[1]
    stop = stop or asyncio.Event()
    timer = asyncio.get_running_loop().call_later(config.max_seconds, stop.set)
    try:
        if on_ready is not None:
            on_ready(bound)
        await stop.wait()
    finally:
        timer.cancel()
        server.close()
        await state.close_connections()
        await server.wait_closed()


# --------------------------------------------------------------------------- handles


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class _Handle:
    base_url: str

    def _call(self, method: str, path: str) -> dict[str, Any]:
        request = urllib.request.Request(self.base_url + path, method=method, data=None)
        with _OPENER.open(request, timeout=10) as response:
            result: dict[str, Any] = json.loads(response.read())
            return result

    def stats(self) -> dict[str, Any]:
        """The server's `/stats`."""
        return self._call("GET", "/stats")

    def reset(self) -> None:
        """Zero the server's counters."""
        self._call("POST", "/reset")


@dataclass
class ServerHandle(_Handle):
    """A running subprocess server (from `run_server`)."""

    base_url: str
    port: int
    process: subprocess.Popen[bytes]
    config: FakeConfig


@dataclass
class ThreadHandle(_Handle):
    """A server in a daemon thread (from `start_in_thread`); `stop()` or use it in `with`."""

    base_url: str
    port: int
    config: FakeConfig
    _thread: threading.Thread
    _loop: asyncio.AbstractEventLoop
    _stop: asyncio.Event

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving, close every connection and join the thread."""
        with contextlib.suppress(RuntimeError):  # loop already closed
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise RuntimeError("fake LLM server thread did not stop")

    def __enter__(self) -> ThreadHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_in_thread(**config: Any) -> ThreadHandle:
    """Start the server in a daemon thread with its own event loop; returns once it listens."""
    cfg = FakeConfig(**config)
    ready = threading.Event()
    box: dict[str, Any] = {}

    async def main() -> None:
        box["loop"] = asyncio.get_running_loop()
        box["stop"] = asyncio.Event()

        def on_ready(port: int) -> None:
            box["port"] = port
            ready.set()

        await serve(cfg, on_ready=on_ready, stop=box["stop"])

    def run() -> None:
        try:
            asyncio.run(main())
        except BaseException as exc:
            box["error"] = exc
            ready.set()

    thread = threading.Thread(target=run, name="fake-llm-server", daemon=True)
    thread.start()
    if not ready.wait(10) or "error" in box:
        raise RuntimeError(f"fake LLM server thread did not start: {box.get('error')!r}")
    port = box["port"]
    return ThreadHandle(f"http://{HOST}:{port}", port, cfg, thread, box["loop"], box["stop"])


def _read_port(process: subprocess.Popen[bytes], timeout: float) -> int:
    assert process.stdout is not None
    fd = process.stdout.fileno()
    deadline = time.monotonic() + timeout
    data = b""
    while b"\n" not in data:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise RuntimeError(f"fake LLM server printed no port within {timeout} s")
        readable, _, _ = select.select([fd], [], [], remaining)
        if readable:
            chunk = os.read(fd, 4096)
            if not chunk:
                raise RuntimeError(f"fake LLM server exited early (code {process.wait(5)})")
            data += chunk
    line = data.split(b"\n", 1)[0].decode()
    if not line.startswith(PORT_LINE_PREFIX):
        raise RuntimeError(f"unexpected first line from fake LLM server: {line!r}")
    return int(line.removeprefix(PORT_LINE_PREFIX))


def _stop_process(process: subprocess.Popen[bytes]) -> None:
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    process.terminate()
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


@contextlib.contextmanager
def run_server(**config: Any) -> Iterator[ServerHandle]:
    """Run the server in a subprocess (`python -m tests.fake_llm.server`) for the with-block.

    The process also exits by itself after `max_seconds` or when this process goes away (its
    stdin closes).  On exit it is terminated, and killed after 5 s.
    """
    cfg = FakeConfig(**config)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), env.get("PYTHONPATH")) if p)
    command = [
        sys.executable,
        "-m",
        "tests.fake_llm.server",
        "--port",
        "0",
        "--config",
        json.dumps(asdict(cfg)),
        "--exit-on-stdin-eof",
    ]
    process = subprocess.Popen(
        command, cwd=_ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        port = _read_port(process, timeout=15)
        yield ServerHandle(f"http://{HOST}:{port}", port, process, cfg)
    finally:
        _stop_process(process)


# --------------------------------------------------------------------------- command line


def _raise_open_file_limit() -> None:
    """Raise this process's soft open-file limit to the hard one (each connection is a file)."""
    try:
        import resource
    except ImportError:
        return
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def main(argv: list[str] | None = None) -> int:
    """Serve until max_seconds, SIGTERM/SIGINT, or (with --exit-on-stdin-eof) stdin's end."""
    parser = argparse.ArgumentParser(prog="python -m tests.fake_llm.server")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--config", default="{}", help="FakeConfig fields as a JSON object")
    parser.add_argument("--exit-on-stdin-eof", action="store_true")
    args = parser.parse_args(argv)
    config = FakeConfig(**json.loads(args.config))
    _raise_open_file_limit()  # a client under test may hold thousands of connections open

    async def run() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in ("SIGTERM", "SIGINT"):
            with contextlib.suppress(NotImplementedError, AttributeError):
                loop.add_signal_handler(getattr(signal, sig), stop.set)
        if args.exit_on_stdin_eof:

            def watch_stdin() -> None:
                with contextlib.suppress(OSError, ValueError):
                    while os.read(0, 4096):  # raw fd: no buffer lock to trip shutdown
                        pass
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(stop.set)

            threading.Thread(target=watch_stdin, daemon=True).start()

        def on_ready(port: int) -> None:
            print(PORT_LINE_PREFIX + str(port), flush=True)

        await serve(config, port=args.port, on_ready=on_ready, stop=stop)

    asyncio.run(run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
