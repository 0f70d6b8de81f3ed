"""One HTTP attempt: POST JSON, and turn every way it can fail into one of our exceptions."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import ssl
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx

from meta_evaluator.llm.classify import (
    FATAL_STATUSES,
    RATE_LIMIT_HEADERS,
    CallFailed,
    EndpointRejected,
    MalformedResponse,
    parse_rate_limits,
    parse_retry_after,
)
from meta_evaluator.llm.transport import PooledTransport
from meta_evaluator.llm.types import RateLimits

__all__ = ["compact_json", "json_object", "list_model_ids", "post_json", "redact", "send"]

_EXCERPT = 300


async def post_json(
    http: httpx.AsyncClient,
    url: httpx.URL | str,
    *,
    headers: dict[str, str],
    body: dict[str, Any],
    timeout: float,
    secret: str | None = None,
    direct: PooledTransport | None = None,
) -> tuple[dict[str, Any], float, RateLimits | None]:
    """POST `body`; return the JSON object answered, the seconds taken and the rate limits.

    The rate limits are what the answer's headers say of the requests budget (None when they
    say nothing); the runner paces the endpoint's calls by them.

    The whole attempt, connect to last byte, runs under `timeout` seconds. `direct`, the
    transport `http` sends through, takes the call itself, as raw bytes: a judge's calls then
    use none of the client's per-call machinery (auth flows, redirects, event hooks, cookies,
    request and response objects), which cost 0.16 ms of CPU per call, as much as the
    transport's own work (issue 17).

    Raises:
        CallFailed: A timeout, connection error, 429/408/409/5xx or other non-fatal status.
        MalformedResponse: A 2xx answer whose body is not a JSON object.
        EndpointRejected: 400/401/403/404/422: the request itself is refused.
    """
    started = time.perf_counter()
    content = compact_json(body)
    if direct is not None:
        target = url if isinstance(url, httpx.URL) else httpx.URL(url)
        connect = http.timeout.connect
        with _call_failures(target, timeout=timeout, connect=connect, secret=secret):
            answer = await direct.post(
                target,
                {**headers, "content-type": "application/json"},
                content,
                timeout=timeout,
                connect=connect,
            )
        elapsed = time.perf_counter() - started
        if answer.status < 300:
            try:
                found = json.loads(answer.content)
            except (ValueError, RecursionError):
                found = None
            if isinstance(found, dict):
                return found, elapsed, _rate_limits(answer.headers)
        response = answer.response()  # a failure: its message is made from the response
        _raise_for_status(response, url, secret)
        return json_object(response, secret), elapsed, parse_rate_limits(response.headers)
    # The request is built here and sent as is: httpx's json= and build_request paths
    # (URL merging, cookies, default headers) cost about 0.1 ms of CPU per call.
    response = await _send(
        http,
        httpx.Request(
            "POST",
            url,
            headers={**headers, "content-type": "application/json"},
            content=content,
            extensions={"timeout": http.timeout.as_dict()},
        ),
        timeout,
        secret,
    )
    elapsed = time.perf_counter() - started
    _raise_for_status(response, url, secret)
    return json_object(response, secret), elapsed, parse_rate_limits(response.headers)


def _rate_limits(raw: list[tuple[bytes, bytes]]) -> RateLimits | None:
    """`parse_rate_limits` of an answer's raw headers: one pass, known names only."""
    found: dict[str, str] | None = None
    for name, value in raw:
        lowered = name.lower()
        if lowered in RATE_LIMIT_HEADERS:
            if found is None:
                found = {}
            found[lowered.decode("ascii")] = value.decode("latin-1")
    return None if found is None else parse_rate_limits(found)


async def send(
    http: httpx.AsyncClient,
    method: str,
    url: httpx.URL | str,
    *,
    headers: dict[str, str],
    timeout: float,
    json_body: dict[str, Any] | None = None,
    content: bytes | None = None,
    files: dict[str, tuple[str, bytes, str]] | None = None,
    data: dict[str, str] | None = None,
    secret: str | None = None,
) -> httpx.Response:
    """One request of any kind (uploads, polls, downloads); the 2xx response, read in full.

    Raises the same failures as `post_json`, except that the body is not parsed.
    """
    request = http.build_request(
        method, url, headers=headers, json=json_body, content=content, files=files, data=data
    )
    response = await _send(http, request, timeout, secret)
    _raise_for_status(response, url, secret)
    return response


async def list_model_ids(
    http: httpx.AsyncClient,
    url: str,
    *,
    headers: dict[str, str],
    timeout: float,
    secret: str | None = None,
) -> list[str]:
    """The `id` of each entry of a models list's `data` (OpenAI's and Anthropic's shape).

    One cheap GET, the request `--check` sends: no tokens are spent, and the key is checked.
    Raises the same failures as `send`; MalformedResponse when the answer is not a JSON object.
    """
    response = await send(http, "GET", url, headers=headers, timeout=timeout, secret=secret)
    entries = json_object(response, secret).get("data")
    if not isinstance(entries, list):
        return []
    return [e["id"] for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)]


def compact_json(value: Any) -> bytes:
    """`value` as compact UTF-8 JSON, the bytes every request body of ours is sent as."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def json_object(response: httpx.Response, secret: str | None = None) -> dict[str, Any]:
    """The response's body as a JSON object.

    Raises:
        MalformedResponse: The body is not JSON, or not an object.
    """
    status = response.status_code
    try:
        answer = json.loads(response.content)
    except (ValueError, RecursionError) as exc:
        raise MalformedResponse(
            f"HTTP {status} body is not JSON: {_excerpt(response, secret)}"
        ) from exc
    if not isinstance(answer, dict):
        raise MalformedResponse(
            f"HTTP {status} body is JSON but not an object: {_excerpt(response, secret)}"
        )
    return answer


async def _send(
    http: httpx.AsyncClient, request: httpx.Request, timeout: float, secret: str | None
) -> httpx.Response:
    """Send `request` under `timeout` seconds, every transport failure made one of ours."""
    seconds = request.extensions.get("timeout", {}).get("connect", http.timeout.connect)
    with _call_failures(request.url, timeout=timeout, connect=seconds, secret=secret):
        with anyio.fail_after(timeout):
            return await http.send(request)
    raise AssertionError("unreachable: _call_failures re-raises")  # pragma: no cover


@contextlib.contextmanager
def _call_failures(
    url: httpx.URL, *, timeout: float, connect: float | None, secret: str | None
) -> Iterator[None]:
    """Turn every way a call to `url` can fail on the wire into one of our exceptions."""
    try:
        yield
    except TimeoutError as exc:
        raise CallFailed(f"no complete answer within {timeout:g} s", status="timeout") from exc
    except httpx.TimeoutException as exc:
        if isinstance(exc, httpx.ConnectTimeout):
            # No TCP connection within the connect timeout: packets dropped (a wrong address,
            # a VPN down). Nothing answered, as with a refused connection.
            raise _no_answer_to_connect(url, connect) from exc
        raise CallFailed(f"timed out ({type(exc).__name__})", status="timeout") from exc
    except httpx.DecodingError as exc:
        raise MalformedResponse(f"the body cannot be decoded ({exc})") from exc
    except (httpx.ConnectError, ConnectionRefusedError, socket.gaierror) as exc:
        raise _not_connected(exc, url, secret) from exc
    except (httpx.HTTPError, OSError) as exc:
        raise CallFailed(
            f"connection failed ({type(exc).__name__}: {redact(str(exc), secret)})",
            status="connection_error",
        ) from exc


# How a failed name lookup reads on Linux, macOS and Windows.
_DNS_WORDS = (
    "name or service not known",
    "nodename nor servname",
    "temporary failure in name resolution",
    "no address associated with hostname",
    "getaddrinfo failed",
    "name resolution",
    "could not contact dns",
)


def _address(url: httpx.URL) -> str:
    """`host:port` of `url`, the scheme's default port filled in; `[::1]:9` for IPv6."""
    host = f"[{url.host}]" if ":" in url.host else url.host
    return f"{host}:{url.port or (443 if url.scheme == 'https' else 80)}"


def _no_answer_to_connect(url: httpx.URL, seconds: float | None) -> CallFailed:
    """A connect timeout: no TCP connection was made, so the endpoint never answered."""
    address = _address(url)
    within = f" within {seconds:g} s" if isinstance(seconds, int | float) else ""
    return CallFailed(
        f"no answer to connect{within} at {address}", status="timeout", unreachable=address
    )


# `[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: ... (_ssl.c:1006)` → the words.
_SSL_REASON = re.compile(r"\[SSL(?:: [A-Z_]+)?\] ([^(\]']+?)\s*(?:\(_ssl\.c:\d+\))?(?:[)\]']|$)")

_TLS_ADVICE = "check the certificate or SSL_CERT_FILE/ca bundle"
"""What to do when the TLS handshake fails (a self-signed or corporate certificate)."""


def _tls_failure(chain: list[BaseException], address: str) -> CallFailed | None:
    """The failure of a TLS handshake found in `chain` (or its words), else None.

    Retrying cannot help, as with an unreachable host, so it is marked `unreachable` too, but
    its advice is about certificates, not about starting the server.
    """
    errors = [e for e in chain if isinstance(e, ssl.SSLError)]
    text = " ".join(str(e) for e in chain)
    if not errors and not re.search(r"\[SSL[:\]]|certificate verify failed|SSLError", text):
        return None
    inner = errors[-1] if errors else None
    verify = getattr(inner, "verify_message", None)
    if verify:
        detail = f"certificate verify failed: {verify}"
    else:
        found = _SSL_REASON.search(text)
        detail = found.group(1).strip() if found else type(inner or chain[0]).__name__
    if "certificate" in detail.lower():
        advice = _TLS_ADVICE
    else:  # wrong version number and the like: often https:// to a plain-HTTP port
        advice = f"{_TLS_ADVICE}, or use http:// if the server does not speak TLS"
    return CallFailed(
        f"TLS handshake failed at {address} ({detail}): {advice}",
        status="connection_error",
        unreachable=address,
        advice=advice,
    )


def _not_connected(exc: BaseException, url: httpx.URL, secret: str | None) -> CallFailed:
    """The failure of a connection that could not be opened: its cause and `host:port`.

    Failed TLS handshakes, refused connections and failed name lookups are told apart from the
    exception chain (the OS or SSL error inside the transport's) or, failing that, from the
    words of the message.
    """
    address = _address(url)
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    tls = _tls_failure(chain, address)
    if tls is not None:
        return tls
    text = " ".join(str(e) for e in chain).lower()
    if any(isinstance(e, ConnectionRefusedError) for e in chain) or "refused" in text:
        message = f"connection refused at {address}"
    elif any(isinstance(e, socket.gaierror) for e in chain) or any(
        words in text for words in _DNS_WORDS
    ):
        message = f"host not found (DNS lookup failed) at {address}"
    else:
        detail = redact(str(exc), secret)
        message = f"cannot connect to {address} ({type(exc).__name__}: {detail})"
    return CallFailed(message, status="connection_error", unreachable=address)


def _raise_for_status(response: httpx.Response, url: httpx.URL | str, secret: str | None) -> None:
    """Raise the failure a non-2xx status stands for."""
    status = response.status_code
    if status < 300:
        return
    if status == 429:
        raise CallFailed(
            f"HTTP 429 rate limited: {_excerpt(response, secret)}",
            status="rate_limited",
            http_status=429,
            retry_after=parse_retry_after(response.headers),
            rate_limits=parse_rate_limits(response.headers),
        )
    if status in FATAL_STATUSES:
        raise EndpointRejected(
            f"HTTP {status} from {url}: {_excerpt(response, secret)}", http_status=status
        )
    raise CallFailed(
        f"HTTP {status}: {_excerpt(response, secret)}",
        status="http_error",
        http_status=status,
        retry_after=parse_retry_after(response.headers),
        rate_limits=parse_rate_limits(response.headers),
    )


def _excerpt(response: httpx.Response, secret: str | None) -> str:
    """The start of the body, for messages; a server echoing our key does not get it written."""
    try:
        text = response.text.strip().replace("\n", " ")
    except (httpx.DecodingError, UnicodeDecodeError, LookupError):
        text = "(undecodable body)"
    text = redact(text, secret)
    return text[:_EXCERPT] + ("…" if len(text) > _EXCERPT else "") or "(empty body)"


def redact(text: str, secret: str | None) -> str:
    """`text` with `secret` replaced by ***."""
    return text.replace(secret, "***") if secret else text
