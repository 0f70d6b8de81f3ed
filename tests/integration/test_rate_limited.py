"""Judge runs against a loopback server that admits a few requests per second (a token bucket,
429 + Retry-After beyond it, rate-limit headers on every reply: tests/fake_llm/server.py).

Counts only, never wall-clock times: the adaptive window keeps refusals few and every row valid,
where a fixed pool of 64 calls would be refused most of the time.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from meta_evaluator import MetaEvaluator
from meta_evaluator.cli import app
from meta_evaluator.examples import create_example_project
from meta_evaluator.judge import RunSettings
from tests.fake_llm.server import run_server
from tests.integration.test_loopback_runs import make_project


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_rate_limited_server_gets_few_refusals_and_every_row_is_valid(
    tmp_path: Path, api: str
) -> None:
    with run_server(requests_per_second=20) as server:
        evaluator = make_project(tmp_path / "p", 60, server.base_url)
        if api == "anthropic":
            evaluator.add_judge("j", "anthropic", "claude", "Did {response} refuse {prompt}?",
                                base_url=server.base_url, on_duplicate="overwrite")  # fmt: skip
        results = evaluator.run_judges_async(max_concurrency=64)["j"]
        stats = server.stats()
    assert results.counts()["valid"] == 60
    refused = stats["by_status"].get("429", 0)
    assert stats["by_fault"]["bucket"] == refused
    assert stats["total_requests"] == 60 + refused
    # The bucket holds 20: of the first window of 16 none is refused; of its first doubling
    # (32) about 12 may be, before the first refusal or answer says how fast to go.
    assert refused <= 16, stats


def test_without_headers_the_window_still_adapts(tmp_path: Path) -> None:
    with run_server(requests_per_second=20, rate_limit_headers=False) as server:
        evaluator = make_project(tmp_path / "p", 60, server.base_url)
        results = evaluator.run_judges_async(max_concurrency=64)["j"]
        stats = server.stats()
    assert results.counts()["valid"] == 60
    assert stats["total_requests"] == 60 + stats["by_status"].get("429", 0)


def test_adaptive_concurrency_can_be_turned_off(tmp_path: Path) -> None:
    """Off, the judge keeps `max_concurrency` in flight at once, as before."""
    with run_server(latency=0.3) as server:
        evaluator = make_project(tmp_path / "p", 40, server.base_url)
        evaluator.run_judges_async(max_concurrency=40, adaptive_concurrency=False, cache=False)
        fixed = server.stats()["max_in_flight"]
        server.reset()
        evaluator.run_judges_async(max_concurrency=40, resume=False, cache=False)
        stats = server.stats()
    assert fixed == 40
    assert stats["total_requests"] == 40 and 16 <= stats["max_in_flight"] <= 40


def test_the_command_line_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[RunSettings] = []

    def plan_run(self: MetaEvaluator, *args: object, settings: RunSettings) -> None:
        seen.append(settings)
        raise SystemExit(0)

    create_example_project("refusal", tmp_path / "p")
    monkeypatch.setattr(MetaEvaluator, "plan_run", plan_run)
    for flags in ([], ["--no-adaptive-concurrency"], ["--adaptive-concurrency"]):
        CliRunner().invoke(app, ["run", str(tmp_path / "p"), "--dry-run", *flags])
    assert [settings.adaptive_concurrency for settings in seen] == [True, False, True]
    assert RunSettings().adaptive_concurrency is True
