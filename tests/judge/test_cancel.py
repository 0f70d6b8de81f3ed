"""Cancelling a run mid-flight: whole lines on disk, the client closed, the run resumable."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx
import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask
from tests.judge.test_runner import completion


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class SlowTransport(httpx.MockTransport):
    """Answers after a delay; remembers whether it was closed."""

    def __init__(self, delay: float) -> None:
        async def handler(request: httpx.Request) -> httpx.Response:
            self.calls += 1
            await anyio.sleep(delay)
            return completion(request)

        super().__init__(handler)
        self.calls = 0
        self.closed = False

    async def aclose(self) -> None:
        self.closed = True


@pytest.mark.anyio
async def test_cancelled_run_leaves_whole_rows_and_resumes(tmp_path: Path) -> None:
    n = 60
    evaluator = MetaEvaluator(tmp_path / "p")
    frame = pl.DataFrame({"qid": list(range(n)), "response": [f"answer {i}" for i in range(n)]})
    evaluator.add_data(DataLoader.load_from_dataframe("d", frame, "qid"))
    evaluator.add_eval_task(EvalTask({"ok": ["yes", "no"]}, None, ["response"]))
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url="http://llm.test/v1")
    slow = SlowTransport(0.05)
    with anyio.move_on_after(0.3) as scope:
        await evaluator.arun_judges(run_id="r", max_concurrency=4, transport=slow)
    assert scope.cancelled_caught
    assert slow.closed, "the HTTP client must be closed on cancellation"
    rows_file = tmp_path / "p" / "results" / "r" / "j.jsonl"
    text = rows_file.read_text()
    assert text.endswith("\n")
    done = [json.loads(line) for line in text.splitlines()]  # every line is whole JSON
    assert 0 < len(done) < n
    state = json.loads((tmp_path / "p" / "results" / "r" / "j_state.json").read_text())
    assert state["complete"] is False
    fast = SlowTransport(0.0)
    results = await evaluator.arun_judges(max_concurrency=4, transport=fast)
    assert results["j"].run_id == "r" and results["j"].counts()["valid"] == n
    assert fast.calls == n - len(done)
