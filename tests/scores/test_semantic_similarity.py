"""SemanticSimilarityScorer: the embedding requests it sends, the cosine it computes, its failures.

(a) respx routes behind an `httpx.MockTransport` (STYLE.md X4): exact request body and headers,
caching, batching, retries, refusals, malformed answers, a missing key variable.
(b) a real loopback HTTP server started by the test, reached through `base_url` alone.
The reference cosine is computed here with numpy from the vectors the fake server hands out.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import numpy as np
import pytest
import respx

from meta_evaluator.errors import ScoringError
from meta_evaluator.scores.metrics import SemanticSimilarityScorer
from tests.scores.conftest import frames, run_scorer

BASE = "https://embed.test/v1"
URL = f"{BASE}/embeddings"
KEY = "emb-secret-1234"
MODEL = "emb-small"
TOL = 1e-9

JUDGE = {1: "The reply refuses.", 2: "It answers fully.", 3: "No idea", 4: "Refuses, politely."}
HUMANS = {
    "alice": {1: "The reply refuses.", 2: "It answers.", 3: "Unclear answer"},
    "bob": {1: "A refusal.", 2: "It answers fully.", 4: "Refuses politely."},
    "carol": {3: "No idea"},
}


def vector(text: str) -> list[float]:
    """A deterministic, never-zero embedding of `text` (8 dimensions)."""
    digest = hashlib.sha256(text.encode()).digest()
    return [b / 255.0 - 0.5 for b in digest[:8]] + [0.25]


def cosine(a: str, b: str) -> float:
    u, v = np.array(vector(a)), np.array(vector(b))
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def reference(judge: dict[Any, str], humans: dict[str, dict[Any, str]], aggregation: str) -> float:
    if aggregation == "majority_vote":
        items = [i for i in judge if any(i in h for h in humans.values())]
        return float(
            np.mean([max(cosine(judge[i], h[i]) for h in humans.values() if i in h) for i in items])
        )
    per_human = []
    for labels in humans.values():
        keys = [i for i in labels if i in judge]
        if keys:
            per_human.append(float(np.mean([cosine(judge[i], labels[i]) for i in keys])))
    return float(np.mean(per_human))


def all_texts(judge: dict[Any, str], humans: dict[str, dict[Any, str]]) -> set[str]:
    texts = set(judge.values())
    for labels in humans.values():
        texts |= set(labels.values())
    return texts


def answer(request: httpx.Request) -> httpx.Response:
    """An OpenAI-shaped embeddings answer, in reverse order (each item carries its index)."""
    texts = json.loads(request.content)["input"]
    data = [
        {"object": "embedding", "index": i, "embedding": vector(t)} for i, t in enumerate(texts)
    ]
    return httpx.Response(200, json={"object": "list", "data": data[::-1], "model": MODEL})


@pytest.fixture
def router() -> respx.Router:
    return respx.Router(assert_all_called=False)


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMB_TEST_KEY", KEY)


def scorer_for(router: respx.Router, **options: Any) -> SemanticSimilarityScorer:
    return SemanticSimilarityScorer(
        MODEL,
        base_url=BASE,
        api_key_env="EMB_TEST_KEY",
        transport=httpx.MockTransport(router.async_handler),
        **options,
    )


def sent(call: Any) -> Any:
    return json.loads(call.request.content)


# ----- (a) respx ---------------------------------------------------------------------------------


@pytest.mark.parametrize("aggregation", ["individual_average", "majority_vote"])
def test_request_and_cosine(router: respx.Router, aggregation: str) -> None:
    route = router.post(URL).mock(side_effect=answer)
    jf, hf = frames(JUDGE, HUMANS, "int")
    result = run_scorer(scorer_for(router), jf, hf, annotator_aggregation=aggregation)
    assert route.call_count == 1
    request = route.calls.last.request
    assert request.method == "POST"
    assert str(request.url) == URL
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    # each distinct text once, in a documented (sorted) order, nothing else in the body
    assert sent(route.calls.last) == {"model": MODEL, "input": sorted(all_texts(JUDGE, HUMANS))}
    assert request.headers["content-type"] == "application/json"
    assert result.scorer_name == "semantic_similarity"
    assert result.error is None
    assert math.isclose(
        result.scores["semantic_similarity"], reference(JUDGE, HUMANS, aggregation), abs_tol=TOL
    )


def test_string_ids_and_per_human(router: respx.Router) -> None:
    router.post(URL).mock(side_effect=answer)
    judge = {f"q{i}": t for i, t in JUDGE.items()}
    humans = {h: {f"q{i}": t for i, t in labels.items()} for h, labels in HUMANS.items()}
    jf, hf = frames(judge, humans, "str")
    result = run_scorer(scorer_for(router), jf, hf)
    for name, labels in humans.items():
        expected = np.mean([cosine(judge[i], t) for i, t in labels.items()])
        assert math.isclose(result.metadata["per_human"][name], expected, abs_tol=TOL)


def test_no_key_variable_named_sends_no_authorization(router: respx.Router) -> None:
    route = router.post(URL).mock(side_effect=answer)
    scorer = SemanticSimilarityScorer(
        MODEL, base_url=BASE, transport=httpx.MockTransport(router.async_handler)
    )
    jf, hf = frames(JUDGE, HUMANS, "int")
    run_scorer(scorer, jf, hf)
    assert "Authorization" not in route.calls.last.request.headers


def test_cache_serves_a_second_judge(router: respx.Router) -> None:
    route = router.post(URL).mock(side_effect=answer)
    scorer = scorer_for(router)
    jf, hf = frames(JUDGE, HUMANS, "int")
    run_scorer(scorer, jf, hf)
    assert route.call_count == 1
    second = {1: "A refusal.", 2: "It answers.", 3: "No idea"}  # texts already embedded
    jf2, _ = frames(second, HUMANS, "int")
    result = run_scorer(scorer, jf2, hf)
    assert route.call_count == 1
    assert math.isclose(
        result.scores["semantic_similarity"],
        reference(second, HUMANS, "individual_average"),
        abs_tol=TOL,
    )
    third = {1: "Something new entirely"}
    jf3, _ = frames(third, HUMANS, "int")
    run_scorer(scorer, jf3, hf)
    assert route.call_count == 2
    assert sent(route.calls.last)["input"] == ["Something new entirely"]


@pytest.mark.parametrize("batch_size", [1, 2, 3])
def test_batching(router: respx.Router, batch_size: int) -> None:
    route = router.post(URL).mock(side_effect=answer)
    jf, hf = frames(JUDGE, HUMANS, "int")
    result = run_scorer(scorer_for(router, batch_size=batch_size), jf, hf)
    texts = all_texts(JUDGE, HUMANS)
    assert route.call_count == math.ceil(len(texts) / batch_size)
    inputs = [sent(c)["input"] for c in route.calls]
    assert all(len(i) <= batch_size for i in inputs)
    assert sorted(t for i in inputs for t in i) == sorted(texts)
    assert math.isclose(
        result.scores["semantic_similarity"],
        reference(JUDGE, HUMANS, "individual_average"),
        abs_tol=TOL,
    )


def test_a_500_is_retried(router: respx.Router) -> None:
    route = router.post(URL).mock(side_effect=[httpx.Response(500, json={"error": "busy"}), answer])
    jf, hf = frames(JUDGE, HUMANS, "int")
    result = run_scorer(scorer_for(router, max_retries=1), jf, hf)
    assert route.call_count == 2
    assert sent(route.calls[0]) == sent(route.calls[1])
    assert math.isclose(
        result.scores["semantic_similarity"],
        reference(JUDGE, HUMANS, "individual_average"),
        abs_tol=TOL,
    )


def test_500_after_every_retry_raises_and_embeds_nothing(router: respx.Router) -> None:
    route = router.post(URL).mock(return_value=httpx.Response(503))
    scorer = scorer_for(router, max_retries=0)
    jf, hf = frames(JUDGE, HUMANS, "int")
    with pytest.raises(ScoringError, match=r"503|failed"):
        run_scorer(scorer, jf, hf)
    assert route.call_count == 1
    # never a zero vector (or any stand-in): the next call asks for every text again
    route.mock(side_effect=answer)
    result = run_scorer(scorer, jf, hf)
    assert sorted(sent(route.calls.last)["input"]) == sorted(all_texts(JUDGE, HUMANS))
    assert math.isclose(
        result.scores["semantic_similarity"],
        reference(JUDGE, HUMANS, "individual_average"),
        abs_tol=TOL,
    )


def test_401_raises_at_once(router: respx.Router) -> None:
    route = router.post(URL).mock(
        return_value=httpx.Response(401, json={"error": {"message": "bad key"}})
    )
    jf, hf = frames(JUDGE, HUMANS, "int")
    with pytest.raises(ScoringError, match="401") as info:
        run_scorer(scorer_for(router, max_retries=3), jf, hf)
    assert route.call_count == 1
    assert KEY not in str(info.value)
    assert MODEL in str(info.value)


def wrong_count(request: httpx.Request) -> httpx.Response:
    texts = json.loads(request.content)["input"]
    data = [{"index": i, "embedding": vector(t)} for i, t in enumerate(texts[:-1])]
    return httpx.Response(200, json={"data": data})


def non_numeric(request: httpx.Request) -> httpx.Response:
    texts = json.loads(request.content)["input"]
    data = [{"index": i, "embedding": ["0.1", "x"]} for i in range(len(texts))]
    return httpx.Response(200, json={"data": data})


def ragged(request: httpx.Request) -> httpx.Response:
    texts = json.loads(request.content)["input"]
    data = [{"index": i, "embedding": [1.0] * (i + 1)} for i in range(len(texts))]
    return httpx.Response(200, json={"data": data})


def not_json(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, content=b"<html>oops</html>")


@pytest.mark.parametrize("handler", [wrong_count, non_numeric, ragged, not_json])
def test_malformed_answers_raise(router: respx.Router, handler: Any) -> None:
    route = router.post(URL).mock(side_effect=handler)
    jf, hf = frames(JUDGE, HUMANS, "int")
    with pytest.raises(ScoringError, match="semantic_similarity"):
        run_scorer(scorer_for(router, max_retries=0), jf, hf)
    assert route.call_count == 1


def test_missing_key_variable_raises_before_any_request(
    router: respx.Router, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EMB_TEST_KEY")
    route = router.post(URL).mock(side_effect=answer)
    jf, hf = frames(JUDGE, HUMANS, "int")
    with pytest.raises(ScoringError, match="EMB_TEST_KEY"):
        run_scorer(scorer_for(router), jf, hf)
    assert route.call_count == 0


def test_default_endpoint_needs_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    jf, hf = frames(JUDGE, HUMANS, "int")
    with pytest.raises(ScoringError, match="OPENAI_API_KEY"):
        run_scorer(SemanticSimilarityScorer(), jf, hf)


def test_a_zero_vector_from_the_server_is_not_a_similarity(router: respx.Router) -> None:
    """A zero embedding has no direction: its pairs must not be scored as if they were data."""

    def with_zero(request: httpx.Request) -> httpx.Response:
        texts = json.loads(request.content)["input"]
        data = [
            {"index": i, "embedding": [0.0] * 9 if t == "No idea" else vector(t)}
            for i, t in enumerate(texts)
        ]
        return httpx.Response(200, json={"data": data})

    router.post(URL).mock(side_effect=with_zero)
    jf, hf = frames(JUDGE, HUMANS, "int")
    try:
        result = run_scorer(scorer_for(router, max_retries=0), jf, hf)
    except ScoringError:
        return
    # Pairs with "No idea" are undefined; carol's only pair is one of them.
    assert result.metadata["per_human"]["carol"] is None
    assert all(v is None or -1 <= v <= 1 for v in result.metadata["per_human"].values())


# ----- (b) a loopback server ---------------------------------------------------------------------


class _Embeddings(BaseHTTPRequestHandler):
    requests: list[dict[str, Any]]

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length))
        type(self).requests.append(
            {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
        )
        if self.path != "/v1/embeddings":
            self.send_error(404)
            return
        data = [{"index": i, "embedding": vector(t)} for i, t in enumerate(body["input"])]
        raw = json.dumps({"object": "list", "data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def loopback() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    handler = type("Handler", (_Embeddings,), {"requests": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler.requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.mark.parametrize("aggregation", ["individual_average", "majority_vote"])
def test_loopback_server(loopback: tuple[str, list[dict[str, Any]]], aggregation: str) -> None:
    base_url, requests = loopback
    scorer = SemanticSimilarityScorer(
        MODEL, base_url=base_url, api_key_env="EMB_TEST_KEY", batch_size=4
    )
    jf, hf = frames(JUDGE, HUMANS, "int")
    result = run_scorer(scorer, jf, hf, annotator_aggregation=aggregation)
    texts = all_texts(JUDGE, HUMANS)
    assert len(requests) == math.ceil(len(texts) / 4)
    assert all(r["path"] == "/v1/embeddings" for r in requests)
    assert all(r["auth"] == f"Bearer {KEY}" for r in requests)
    assert all(r["body"]["model"] == MODEL for r in requests)
    assert sorted(t for r in requests for t in r["body"]["input"]) == sorted(texts)
    assert math.isclose(
        result.scores["semantic_similarity"], reference(JUDGE, HUMANS, aggregation), abs_tol=TOL
    )
