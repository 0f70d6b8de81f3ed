"""A judge whose endpoint cannot be reached is stopped after a few calls; other judges go on.

The endpoints are an in-process transport (httpx.MockTransport) that raises httpx.ConnectError
for the dead host, as a refused connection or a failed DNS lookup does.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx
import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.errors import JudgeRunError
from meta_evaluator.judge.row_store import read_rows
from meta_evaluator.llm.mock import mock_answer
from tests.conftest import chats, rejection_project

ROWS = 400
KEY = "sk-dead-endpoint-SECRET"


def project(tmp_path: Path, rows: int = ROWS) -> MetaEvaluator:
    return rejection_project(tmp_path / "p", chats(rows))


def answer(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    schema = body.get("response_format", {}).get("json_schema", {}).get("schema")
    content = mock_answer(body["messages"][-1]["content"], schema)
    return httpx.Response(
        200,
        json={
            "choices": [
                {
                    "message": {"content": json.dumps(content) if schema else content},
                    "finish_reason": "stop",
                }
            ]
        },
    )


class Endpoints:
    """Hosts in `dead` refuse every connection (or never resolve); others answer."""

    def __init__(self, dead: dict[str, str]) -> None:
        self.dead = dead
        self.attempts: dict[str, int] = {}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        host = request.url.host
        self.attempts[host] = self.attempts.get(host, 0) + 1
        if host in self.dead:
            raise httpx.ConnectError(self.dead[host])
        return answer(request)


def test_an_unreachable_judge_stops_after_a_few_calls_and_others_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEAD_KEY", KEY)
    evaluator = project(tmp_path)
    evaluator.add_judge("refused", "openai", "m", "Judge {response}",
                        base_url="http://127.0.0.1:9/v1", api_key_env="DEAD_KEY")  # fmt: skip
    evaluator.add_judge("nodns", "openai", "m", "Judge {response}",
                        base_url="http://nonexistent.invalid:8000/v1")  # fmt: skip
    evaluator.add_judge("good", "openai", "m", "Judge {response}", base_url="http://ok.test/v1")
    evaluator.add_judge("offline", "mock", "m", "Judge {response}")
    endpoints = Endpoints(
        {
            "127.0.0.1": "[Errno 111] Connection refused",
            "nonexistent.invalid": "[Errno -2] Name or service not known",
        }
    )
    with pytest.raises(JudgeRunError) as caught:
        evaluator.run_judges_async(
            transport=httpx.MockTransport(endpoints), max_concurrency=8, backoff_base=0.5
        )
    message = str(caught.value)
    assert "'refused'" in message and "connection refused at 127.0.0.1:9" in message
    assert "'nodns'" in message
    assert "host not found (DNS lookup failed) at nonexistent.invalid:8000" in message
    assert KEY not in message
    # a few calls, not 400 rows x 4 attempts
    assert endpoints.attempts["127.0.0.1"] <= 2 * 8
    assert endpoints.attempts["nonexistent.invalid"] <= 2 * 8
    # the other judges finished and were saved
    saved = evaluator.load_all_judge_results()
    assert saved["good"].counts()["valid"] == ROWS
    assert saved["offline"].counts()["valid"] + saved["offline"].counts()["invalid"] == ROWS
    assert "refused" not in saved  # its run is unfinished
    # the stopped judge's results travel with the error; rows that failed name the cause
    stopped = caught.value.results["refused"]
    assert not stopped.complete
    errors = stopped.results_data
    assert 0 < errors.height <= 2 * 8
    assert set(errors["outcome"]) == {"error"} and set(errors["status"]) == {"connection_error"}
    assert set(errors["error_message"]) == {"connection refused at 127.0.0.1:9"}
    # rows not asked stay unasked: on disk, only the failed rows
    rows = list(read_rows(evaluator.paths.results_dir / stopped.run_id / "refused.jsonl"))
    assert len(rows) == errors.height
    assert not any(KEY in json.dumps(row) for row in rows)


def test_a_later_run_asks_the_rows_left_when_the_endpoint_is_back(tmp_path: Path) -> None:
    evaluator = project(tmp_path)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url="http://down.test/v1")
    down = Endpoints({"down.test": "[Errno 111] Connection refused"})
    with pytest.raises(JudgeRunError, match=r"connection refused at down\.test:80"):
        evaluator.run_judges_async(transport=httpx.MockTransport(down), backoff_base=0.5)
    up = Endpoints({})
    results = evaluator.run_judges_async(
        transport=httpx.MockTransport(up), retry=["error"], backoff_base=0.001
    )["j"]
    assert results.complete and results.counts()["valid"] == ROWS
    assert up.attempts["down.test"] == ROWS


def test_an_endpoint_that_answered_once_is_not_stopped(tmp_path: Path) -> None:
    """The breaker is for endpoints never reached: after a success, failures are rows' errors."""
    evaluator = project(tmp_path, rows=30)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url="http://flaky.test/v1")
    calls = {"n": 0}

    def flaky(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        if calls["n"] == 1:
            return answer(request)
        raise httpx.ConnectError("[Errno 111] Connection refused")

    results = evaluator.run_judges_async(
        transport=httpx.MockTransport(flaky), max_concurrency=1, max_retries=1,
        backoff_base=0.001,
    )["j"]  # fmt: skip
    counts = results.counts()
    assert counts["valid"] == 1 and counts["error"] == 29
    assert set(results.results_data.filter(pl.col("outcome") == "error")["error_message"]) == {
        "connection refused at flaky.test:80"
    }


@pytest.mark.parametrize(("timeout", "connect"), [(60.0, "10"), (4.0, "2")])
def test_a_blackholed_endpoint_stops_after_a_few_calls(
    tmp_path: Path, timeout: float, connect: str
) -> None:
    """Connects that time out (packets dropped: wrong IP, VPN down) are no answer either.

    The connect timeout is at most half the attempt's, so that it, not the attempt's own
    timeout (which says nothing of the host), ends a connect to nowhere.
    """
    evaluator = project(tmp_path)
    evaluator.add_judge("hole", "openai", "m", "Judge {response}", base_url="http://10.9.9.9/v1")
    calls = {"n": 0}

    def blackhole(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        raise httpx.ConnectTimeout("timed out")

    with pytest.raises(JudgeRunError) as caught:
        evaluator.run_judges_async(
            transport=httpx.MockTransport(blackhole), max_concurrency=8, backoff_base=0.001,
            timeout=timeout,
        )  # fmt: skip
    assert f"no answer to connect within {connect} s at 10.9.9.9:80" in str(caught.value)
    assert calls["n"] <= 2 * 8  # a handful of attempts, not 400 rows x 4


def test_timeouts_after_connecting_neither_stop_nor_disarm_the_breaker(tmp_path: Path) -> None:
    """A read timeout says nothing of the endpoint: refusals after it still stop the judge."""
    evaluator = project(tmp_path)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url="http://slow.test/v1")
    calls = {"n": 0}

    def slow_then_refused(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        if calls["n"] <= 3:
            raise httpx.ReadTimeout("timed out")
        raise httpx.ConnectError("[Errno 111] Connection refused")

    with pytest.raises(JudgeRunError, match=r"connection refused at slow\.test:80"):
        evaluator.run_judges_async(
            transport=httpx.MockTransport(slow_then_refused), max_concurrency=1,
            backoff_base=0.001,
        )  # fmt: skip
    assert calls["n"] <= 3 + 5


def test_a_row_cancelled_mid_attempt_counts_only_its_finished_attempts(tmp_path: Path) -> None:
    """The breaker cancels row 0's 2nd attempt: the row keeps its 1st one's failure and count."""
    evaluator = project(tmp_path, rows=2)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url="http://down.test/v1")
    seen: dict[str, int] = {}

    async def handler(request: httpx.Request) -> httpx.Response:
        row = "0" if "answer 0" in request.content.decode() else "1"
        seen[row] = seen.get(row, 0) + 1
        if row == "0" and seen[row] == 2:
            await anyio.sleep(60)  # in flight when the breaker trips
        raise httpx.ConnectError("[Errno 111] Connection refused")

    with pytest.raises(JudgeRunError):
        evaluator.run_judges_async(
            transport=httpx.MockTransport(handler), max_concurrency=2, max_retries=3,
            backoff_base=0.001,
        )  # fmt: skip
    assert seen == {"0": 2, "1": 4}
    stopped = evaluator.paths.results_dir
    rows = {r["original_id"]: r for path in stopped.glob("*/j.jsonl") for r in read_rows(path)}
    assert rows[1]["attempts"] == 4
    assert rows[0]["attempts"] == 1  # the cancelled second attempt is not counted
    assert rows[0]["llm_call_duration_seconds"] < 30
    assert rows[0]["error_message"] == "connection refused at down.test:80"


@pytest.mark.parametrize("way", ["unreachable", "rejected"])
def test_a_row_with_fewer_answers_than_consistency_is_left_unasked(
    tmp_path: Path, way: str
) -> None:
    """consistency=3: a judge stopped between a row's answers leaves the row for a later run."""
    evaluator = project(tmp_path)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url="http://x.test/v1")
    calls = {"n": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        if way == "rejected":
            if calls["n"] == 1:
                return answer(request)
            return httpx.Response(401, json={"error": {"message": "bad key"}})
        raise httpx.ConnectError("[Errno 111] Connection refused")

    with pytest.raises(JudgeRunError) as caught:
        evaluator.run_judges_async(
            transport=httpx.MockTransport(handler), max_concurrency=1, max_retries=3,
            backoff_base=0.001, consistency=3,
        )  # fmt: skip
    stopped = caught.value.results["j"]
    assert stopped.results_data.height == 0  # no row saved with 1 or 2 of its 3 answers
    assert not list(read_rows(evaluator.paths.results_dir / stopped.run_id / "j.jsonl"))
