"""The runner through the public API, with an in-process HTTP transport (httpx.MockTransport)."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.errors import JudgeConfigError, JudgeRunError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.llm.mock import mock_answer
from tests.conftest import snapshot

BASE = "http://llm.test/v1"
Handler = Callable[[httpx.Request], Awaitable[httpx.Response]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def project(tmp_path: Path, frame: pl.DataFrame, *, fallback: bool = False) -> MetaEvaluator:
    evaluator = MetaEvaluator(tmp_path / "p")
    evaluator.add_data(DataLoader.load_from_dataframe("chats", frame, "qid"))
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={"rejection": ["rejection", "not rejection"], "explanation": None},
            prompt_columns=["prompt"],
            response_columns=["response"],
            required_tasks=["rejection"],
            structured_outputs_fallback=fallback,
        )
    )
    return evaluator


def completion(request: httpx.Request) -> httpx.Response:
    """Answer like a server would: what the offline mock would say for this prompt."""
    body = json.loads(request.content)
    schema = body.get("response_format", {}).get("json_schema", {}).get("schema")
    answer = mock_answer(body["messages"][-1]["content"], schema)
    content = json.dumps(answer) if isinstance(answer, dict) else answer
    return httpx.Response(
        200,
        json={
            "choices": [{"message": {"content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7},
        },
    )


class Server:
    """Counts calls per prompt and in flight; `behave` decides each response."""

    def __init__(self, behave: Callable[[httpx.Request, int], httpx.Response | None]) -> None:
        self.behave = behave
        self.calls: dict[str, int] = {}
        self.in_flight = 0
        self.most_in_flight = 0

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        prompt = json.loads(request.content)["messages"][-1]["content"]
        self.calls[prompt] = self.calls.get(prompt, 0) + 1
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await anyio.sleep(0.005)
            return self.behave(request, self.calls[prompt]) or completion(request)
        finally:
            self.in_flight -= 1

    @property
    def total(self) -> int:
        return sum(self.calls.values())


def run(evaluator: MetaEvaluator, server: Server, **options: Any) -> Any:
    options.setdefault("backoff_base", 0.001)
    return evaluator.run_judges_async(transport=httpx.MockTransport(server), **options)


def test_every_row_gets_an_outcome_and_ids_keep_their_dtype(
    tmp_path: Path, frame: pl.DataFrame
) -> None:
    evaluator = project(tmp_path, frame)
    evaluator.add_judge("j", "openai", "m", "Did {response} refuse {prompt}?", base_url=BASE)
    server = Server(lambda request, n: None)
    results = run(evaluator, server)["j"]
    data = results.results_data
    assert data["original_id"].to_list() == frame["qid"].to_list()
    assert data.schema["original_id"] == frame.schema["qid"]
    assert set(data["outcome"]) == {"valid"} and set(data["status"]) == {"success"}
    assert data["llm_prompt_tokens"].to_list() == [11] * len(frame)
    assert server.total == len(frame)
    saved = evaluator.load_all_judge_results()["j"].results_data
    assert saved.equals(data)
    folder = evaluator.paths.results_dir / results.run_id
    state = json.loads((folder / "j_state.json").read_text())
    assert state["complete"] is True and state["counts"]["valid"] == len(frame)
    assert len((folder / "j.jsonl").read_text().splitlines()) == len(frame)


def test_rerun_reuses_finished_rows_and_retry_asks_again(
    tmp_path: Path, frame: pl.DataFrame
) -> None:
    evaluator = project(tmp_path, frame)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE)
    flaky = Server(lambda request, n: httpx.Response(503) if b"Trofie" in request.content else None)
    first = run(evaluator, flaky, max_retries=1)["j"]
    assert first.counts()["error"] == 1 and first.counts()["valid"] == len(frame) - 1
    assert max(flaky.calls.values()) == 2  # max_retries + 1
    quiet = Server(lambda request, n: None)
    again = run(evaluator, quiet)["j"]
    assert quiet.total == 0 and again.run_id == first.run_id  # nothing asked again
    assert again.counts()["error"] == 1
    healed = run(evaluator, quiet, retry=["error"])["j"]
    assert quiet.total == 1 and healed.counts()["valid"] == len(frame)


def test_changing_the_prompt_asks_every_row_again(tmp_path: Path, frame: pl.DataFrame) -> None:
    evaluator = project(tmp_path, frame)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE)
    server = Server(lambda request, n: None)
    first = run(evaluator, server)["j"]
    evaluator.add_judge("j", "openai", "m", "Judge this: {response}", base_url=BASE, overwrite=True)
    second = run(evaluator, server)["j"]
    assert server.total == 2 * len(frame)
    assert second.run_id != first.run_id


def test_a_refused_endpoint_stops_its_judge_and_others_finish(
    tmp_path: Path, frame: pl.DataFrame
) -> None:
    evaluator = project(tmp_path, frame)
    evaluator.add_judge("bad", "openai", "no-such-model", "Judge {response}", base_url=BASE)
    evaluator.add_judge("good", "openai", "m", "Judge {response}", base_url=BASE)

    def behave(request: httpx.Request, n: int) -> httpx.Response | None:
        if json.loads(request.content)["model"] == "no-such-model":
            return httpx.Response(404, json={"error": {"message": "model not found"}})
        return None

    server = Server(behave)
    with pytest.raises(JudgeRunError, match=r"'bad'.*404.*model not found"):
        run(evaluator, server, max_concurrency=2)
    assert evaluator.load_all_judge_results()["good"].counts()["valid"] == len(frame)
    assert "bad" not in evaluator.load_all_judge_results()


def test_missing_key_variable_fails_before_any_call(
    tmp_path: Path, frame: pl.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    evaluator = project(tmp_path, frame)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE,
                        api_key_env="NO_SUCH_KEY_VAR")  # fmt: skip
    server = Server(lambda request, n: None)
    with pytest.raises(JudgeConfigError, match="NO_SUCH_KEY_VAR is not set") as caught:
        run(evaluator, server)
    assert caught.value.judge_id == "j" and server.total == 0


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("sk-live-ab12cd34ef56gh78\n", "ends with a newline"),
        ("sk-live-ab12cd34ef56gh78 ", "ends with a space"),
        ("sk-live-ab12 cd34ef56gh78", "contains a space at position 13"),
        ("sk-live-ab12cd34ef56gh78\u00e9", "contains a non-ASCII character at position 25"),
        ("sk-live-ab12cd34\x1bef56gh78", "contains a control character at position 17"),
    ],
)
@pytest.mark.parametrize("batch", [False, True])
def test_a_key_with_stray_characters_fails_before_any_call(
    tmp_path: Path,
    frame: pl.DataFrame,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    value: str,
    problem: str,
    batch: bool,
) -> None:
    """A key pasted from a web page is named (never shown) before any request, live or batch."""
    monkeypatch.setenv("JUDGE_KEY", value)
    evaluator = project(tmp_path, frame)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE,
                        api_key_env="JUDGE_KEY")  # fmt: skip
    requests: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(500)

    caplog.set_level(logging.DEBUG)
    with pytest.raises(JudgeConfigError) as caught:
        evaluator.run_judges_async(transport=httpx.MockTransport(record), batch=batch)
    exc = caught.value
    assert (exc.judge_id, exc.field) == ("j", "api_key_env")
    assert "judge 'j'" in str(exc) and "JUDGE_KEY" in str(exc) and problem in str(exc)
    assert requests == []
    core = value.strip()
    for text in (str(exc), repr(exc.errors), caplog.text):
        assert core[:12] not in text and core[-12:] not in text
    assert not (tmp_path / "p" / "results").exists() or not any(
        (tmp_path / "p" / "results").rglob("*.jsonl")
    )


def test_a_missing_key_blocks_only_its_judge_and_the_mock_still_runs(
    tmp_path: Path,
    frame: pl.DataFrame,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    evaluator = project(tmp_path, frame)
    evaluator.add_judge("offline", "mock", "m", "Judge {response}")
    evaluator.add_judge("live", "openai", "m", "Judge {response}", base_url=BASE)
    evaluator.add_judge("keyed", "openai", "m", "Judge {response}", base_url=BASE,
                        api_key_env="NO_SUCH_KEY_VAR")  # fmt: skip
    server = Server(lambda request, n: None)
    with pytest.raises(JudgeRunError, match="NO_SUCH_KEY_VAR is not set") as caught:
        run(evaluator, server)
    exc = caught.value
    assert (exc.judge_id, exc.field) == ("keyed", "api_key_env")
    assert set(exc.results) == {"offline", "live"}
    assert "'keyed'" in str(exc) and "'offline'" not in str(exc).split("NO_SUCH_KEY_VAR")[0]
    assert [e["loc"] for e in exc.errors] == [("keyed", "api_key_env")]
    saved = evaluator.load_all_judge_results()
    assert set(saved) == {"offline", "live"}  # the others ran, and their rows are saved
    assert saved["offline"].counts()["valid"] == len(frame) and saved["offline"].complete
    assert saved["live"].counts()["valid"] == len(frame)
    assert server.total == len(frame)  # only the live judge called; the blocked one never did
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("'keyed'" in m and "NO_SUCH_KEY_VAR is not set" in m for m in warned)
    # Unselected, the blocked judge is no obstacle at all.
    assert set(run(evaluator, server, judge_ids=["offline", "live"])) == {"offline", "live"}


def test_the_key_reaches_the_server_and_nothing_else(
    tmp_path: Path,
    frame: pl.DataFrame,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = "sk-live-THIS-MUST-NOT-LEAK-42"
    monkeypatch.setenv("JUDGE_KEY", secret)
    evaluator = project(tmp_path, frame)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE,
                        api_key_env="JUDGE_KEY")  # fmt: skip
    seen: list[str] = []

    def behave(request: httpx.Request, n: int) -> httpx.Response | None:
        seen.append(request.headers["authorization"])
        return httpx.Response(429, headers={"retry-after-ms": "1"}) if n == 1 else None

    caplog.set_level(logging.DEBUG)
    run(evaluator, Server(behave))
    evaluator.save_state()
    assert set(seen) == {f"Bearer {secret}"}
    assert all(secret.encode() not in content for content in snapshot(tmp_path / "p").values())
    assert secret not in caplog.text
    assert "attempt=1/4" in caplog.text  # the retries were logged, without the key


def test_concurrency_is_bounded(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {"qid": list(range(40)), "prompt": ["p"] * 40, "response": [f"r{i}" for i in range(40)]}
    )
    evaluator = project(tmp_path, frame)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE, max_concurrency=3)
    server = Server(lambda request, n: None)
    run(evaluator, server, max_concurrency=10)  # the judge's own setting wins
    assert server.most_in_flight == 3 and server.total == 40


def test_judges_on_one_endpoint_keep_to_the_sum_of_their_bounds(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {"qid": list(range(60)), "prompt": ["p"] * 60, "response": [f"r{i}" for i in range(60)]}
    )
    evaluator = project(tmp_path, frame)
    evaluator.add_judge("a", "openai", "m", "Judge {response}", base_url=BASE, max_concurrency=2)
    evaluator.add_judge("b", "openai", "m", "Rate {response}", base_url=BASE, max_concurrency=3)
    server = Server(lambda request, n: None)
    results = run(evaluator, server, max_concurrency=50)
    assert server.most_in_flight == 5 and server.total == 120  # each judge its own, together
    assert all(r.counts()["valid"] == 60 for r in results.values())


def test_structured_fallback_to_xml(tmp_path: Path, frame: pl.DataFrame) -> None:
    def no_schema(request: httpx.Request, n: int) -> httpx.Response | None:
        if b"response_format" in request.content:
            return httpx.Response(400, json={"error": "response_format is not supported"})
        return None

    evaluator = project(tmp_path, frame, fallback=True)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE)
    results = run(evaluator, Server(no_schema))["j"]
    assert results.counts()["valid"] == len(frame)
    strict = project(tmp_path / "strict", frame, fallback=False)
    strict.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE)
    with pytest.raises(JudgeRunError, match="400"):
        run(strict, Server(no_schema))


def test_retries_are_counted_per_row(tmp_path: Path, frame: pl.DataFrame) -> None:
    evaluator = project(tmp_path, frame)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE)
    server = Server(lambda request, n: httpx.Response(500) if n == 1 else None)
    results = run(evaluator, server)["j"].results_data
    assert results["attempts"].to_list() == [2] * len(frame)
    assert set(results["outcome"]) == {"valid"}


@pytest.mark.anyio
async def test_sync_call_works_inside_a_running_event_loop(
    tmp_path: Path, frame: pl.DataFrame
) -> None:
    """As in a notebook: the script style of the docs, called while a loop runs."""
    evaluator = project(tmp_path, frame)
    evaluator.add_judge("j", "mock", "mock-1", "Judge {response}")
    results = evaluator.run_judges_async()
    assert results["j"].counts()["valid"] == len(frame)
    again = await evaluator.arun_judges()
    assert again["j"].run_id == results["j"].run_id


def test_mock_judge_misbehaves_as_configured(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {"qid": list(range(200)), "prompt": ["p"] * 200, "response": [f"r{i}" for i in range(200)]}
    )
    evaluator = project(tmp_path, frame)
    evaluator.add_judge("j", "mock", "m", "Judge {response}",
                        mock={"invalid_rate": 0.2, "error_rate": 0.1})  # fmt: skip
    counts = evaluator.run_judges_async()["j"].counts()
    assert 8 <= counts["error"] <= 35 and 20 <= counts["invalid"] <= 60
    assert counts["valid"] + counts["invalid"] + counts["error"] == 200


def test_consistency_takes_the_majority_of_several_answers(
    tmp_path: Path, frame: pl.DataFrame
) -> None:
    answers = ["rejection", "not rejection", "rejection"]

    def behave(request: httpx.Request, n: int) -> httpx.Response:
        content = json.dumps({"rejection": answers[(n - 1) % 3], "explanation": f"take {n}"})
        return httpx.Response(200, json={"choices": [{"message": {"content": content}}]})

    evaluator = project(tmp_path, frame)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE)
    server = Server(behave)
    results = run(evaluator, server, consistency=3)["j"].results_data
    assert set(results["rejection"]) == {"rejection"}
    assert results["attempts"].to_list() == [3] * len(frame)
    assert all("rejection: 2/3 agree" in m for m in results["error_message"])
    assert len(json.loads(results["llm_raw_response_content"][0])) == 3
    assert [json.loads(v) for v in results["sample_labels"]] == [
        [{"rejection": a, "explanation": f"take {n}"} for n, a in enumerate(answers, start=1)]
    ] * len(frame)
    single = run(evaluator, Server(behave))["j"]  # another configuration: a new run
    assert single.run_id != results["run_id"][0]
    assert single.results_data["sample_labels"].is_null().all()  # one answer: nothing more


def test_a_table_written_before_sample_labels_loads_and_is_reused(
    tmp_path: Path, frame: pl.DataFrame
) -> None:
    evaluator = project(tmp_path, frame)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE)
    server = Server(lambda request, n: None)
    first = run(evaluator, server, consistency=2)["j"]
    folder = evaluator.paths.results_dir / first.run_id
    old = pl.read_parquet(folder / "j.parquet").drop("sample_labels")  # as 0.4 wrote it
    old.write_parquet(folder / "j.parquet")
    loaded = evaluator.load_all_judge_results()["j"].results_data
    assert "sample_labels" not in loaded.columns and loaded.height == len(frame)
    again = run(evaluator, server, consistency=2, run_id=first.run_id)["j"].results_data
    assert server.total == 2 * len(frame)  # every row reused, none asked again
    assert again["sample_labels"].is_null().all()


def test_a_call_that_fails_its_checks_leaves_finished_runs_untouched(
    tmp_path: Path, frame: pl.DataFrame
) -> None:
    # A missing key blocks only its own judge (test_a_missing_key_blocks_only_its_judge_...);
    # an Azure judge without api_version is a check that stops the whole call.
    evaluator = project(tmp_path, frame)
    evaluator.add_judge("a", "openai", "m", "Judge {response}", base_url=BASE)
    first = run(evaluator, Server(lambda request, n: None))["a"]
    before = snapshot(tmp_path / "p" / "results")
    evaluator.add_judge("b", "azure_openai", "m", "Judge {response}", base_url=BASE)
    for resume in (True, False):
        with pytest.raises(JudgeConfigError, match="api_version"):
            run(evaluator, Server(lambda request, n: None), run_id=first.run_id, resume=resume)
        assert snapshot(tmp_path / "p" / "results") == before


def test_a_complete_run_is_reused_and_new_rows_go_to_a_new_run(
    tmp_path: Path, frame: pl.DataFrame
) -> None:
    evaluator = project(tmp_path, frame)
    evaluator.add_judge("j", "openai", "m", "Judge {response}", base_url=BASE)
    server = Server(lambda request, n: None)
    first = run(evaluator, server)["j"]
    again = run(evaluator, server)["j"]
    assert again.run_id == first.run_id and server.total == len(frame)
    more = frame.vstack(frame.head(1).with_columns(pl.lit(None).alias("score")).with_columns(
        pl.col("qid").map_elements(lambda q: q * 1000 if isinstance(q, int) else f"{q}-new",
                                   return_dtype=frame.schema["qid"])))  # fmt: skip
    evaluator.add_data(DataLoader.load_from_dataframe("chats", more, "qid"), overwrite=True)
    grown = run(evaluator, server)["j"]
    # Only the new row was asked; it repeats the first row's request, so the cache answered it.
    assert server.total == len(frame)
    assert grown.results_data["cached"].to_list() == [False] * len(frame) + [True]
    assert grown.run_id != first.run_id and len(grown) == len(more)
    assert evaluator.load_all_judge_results()["j"].run_id == grown.run_id
    # The first run is still complete on disk.
    assert (evaluator.paths.results_dir / first.run_id / "j.parquet").is_file()


def test_a_judge_listed_twice_is_refused(tmp_path: Path, frame: pl.DataFrame) -> None:
    evaluator = project(tmp_path, frame)
    evaluator.add_judge("j", "mock", "m", "Judge {response}")
    with pytest.raises(JudgeConfigError, match="listed twice"):
        evaluator.run_judges_async(["j", "j"])


@pytest.mark.anyio
async def test_two_writers_of_one_run_are_refused(tmp_path: Path, frame: pl.DataFrame) -> None:
    from meta_evaluator.errors import StateError

    evaluator = project(tmp_path, frame)
    evaluator.add_judge("j", "mock", "m", "Judge {response}", mock={"latency": 0.2})
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: evaluator.arun_judges(run_id="r1"))
        await anyio.sleep(0.05)
        with pytest.raises(StateError, match="being written by process"):
            await evaluator.arun_judges(run_id="r1")
    assert not (tmp_path / "p" / "results" / "r1" / "j.lock").exists()  # released at the end
