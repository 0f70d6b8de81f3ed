"""CPU cost of the response cache per row: key + lookup (miss) + store, then key + lookup (hit).

    python benchmarks/cache_cost.py [ROWS]

Rows look like a judge's: a ~1,500-character prompt, a structured-output schema, an answer of
~200 characters. Prints microseconds per row for each phase (the runner's budget is 0.7 ms of
client CPU per row in total).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import httpx

from meta_evaluator.llm.cache import RequestKeys, ResponseCache
from meta_evaluator.llm.openai import OpenAIClient
from meta_evaluator.llm.types import ChatRequest, ChatResponse, OutputSchema

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
SCHEMA = OutputSchema(
    "evaluation",
    {
        "type": "object",
        "properties": {
            "rejection": {"type": "string", "enum": ["rejection", "not rejection"]},
            "explanation": {"type": "string"},
        },
        "required": ["rejection", "explanation"],
        "additionalProperties": False,
    },
)


def request(i: int) -> ChatRequest:
    text = f"Row {i}: did the assistant refuse? " + "Some context of the conversation. " * 40
    return ChatRequest("gpt-4o-mini", [{"role": "user", "content": text}], 0.0, None, SCHEMA)


def main() -> None:
    client = OpenAIClient(httpx.AsyncClient(), base_url="http://127.0.0.1:8000/v1")
    keys = RequestKeys("openai", client.url("gpt-4o-mini"), {}, body=client.body)
    answer = ChatResponse(
        '{"rejection": "rejection", "explanation": "' + "It declines politely. " * 8 + '"}',
        {"rejection": "rejection", "explanation": "It declines politely. " * 8},
        "stop",
        None,
        412,
        57,
    )
    requests = [request(i) for i in range(ROWS)]
    with tempfile.TemporaryDirectory() as folder:
        cache = ResponseCache.open(Path(folder))
        assert cache is not None
        started = time.process_time()
        for r in requests:
            key = keys.key(r)
            assert cache.get(key) is None
            cache.put(key, answer)
        cache.flush()
        miss = (time.process_time() - started) / ROWS * 1e6
        cache.close()
        cache = ResponseCache.open(Path(folder))  # a second run: every answer is stored
        assert cache is not None
        started = time.process_time()
        for r in requests:
            assert cache.get(keys.key(r)) is not None
        cache.flush()
        hit = (time.process_time() - started) / ROWS * 1e6
        started = time.process_time()
        for r in requests:
            keys.key(r)
        key_only = (time.process_time() - started) / ROWS * 1e6
        cache.close()
    print(f"{ROWS} rows: key alone {key_only:.1f} us/row")
    print(f"  first run (key + lookup miss + store, commits batched): {miss:.1f} us/row")
    print(f"  second run (key + lookup hit + decode):                 {hit:.1f} us/row")


if __name__ == "__main__":
    main()
