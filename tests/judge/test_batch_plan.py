"""plan_batches: consecutive batches that cover every line once and keep within both limits."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from meta_evaluator.judge import _batch


def plan_batches(sizes: list[int], *, max_requests: int, max_bytes: int) -> list[tuple[int, int]]:
    """The plan as a list (the library yields batches as they fill)."""
    return list(_batch.plan_batches(sizes, max_requests=max_requests, max_bytes=max_bytes))


def check_plan(
    plan: list[tuple[int, int]], sizes: list[int], *, max_requests: int, max_bytes: int
) -> None:
    """Every property a plan must have (see plan_batches' docstring)."""
    # Consecutive, non-empty batches from 0 to the end: every index exactly once, in order.
    covered = [index for start, stop in plan for index in range(start, stop)]
    assert covered == list(range(len(sizes)))
    assert all(start < stop for start, stop in plan)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(plan))
    for start, stop in plan:
        assert stop - start <= max_requests
        total = sum(size + 1 for size in sizes[start:stop])
        if stop - start > 1:
            assert total <= max_bytes, (start, stop, total)
        else:
            # A single line may exceed the limit only if it cannot fit on its own.
            assert total <= max_bytes or sizes[start] + 1 > max_bytes
    # Greedy: no batch could have taken the next line within both limits.
    for (start, stop), _ in itertools.pairwise(plan):
        grown = sum(size + 1 for size in sizes[start : stop + 1])
        assert stop + 1 - start > max_requests or grown > max_bytes, (start, stop)


@pytest.mark.parametrize("seed", range(300))
def test_random_plans(seed: int) -> None:
    rng = random.Random(seed)
    max_requests = rng.choice([1, 2, 3, 5, 10, 50, 1000])
    max_bytes = rng.choice([1, 2, 10, 100, 1_000, 10_000])
    n = rng.choice([0, 1, 2, rng.randint(3, 40), rng.randint(40, 400)])
    shape = rng.choice(["small", "mixed", "around-limit", "zeros"])
    if shape == "small":
        sizes = [rng.randint(0, 20) for _ in range(n)]
    elif shape == "mixed":
        sizes = [rng.choice([0, 1, rng.randint(0, 2 * max_bytes)]) for _ in range(n)]
    elif shape == "around-limit":
        sizes = [max(0, max_bytes - 1 + rng.randint(-2, 2)) for _ in range(n)]
    else:
        sizes = [0] * n
    plan = plan_batches(sizes, max_requests=max_requests, max_bytes=max_bytes)
    check_plan(plan, sizes, max_requests=max_requests, max_bytes=max_bytes)


def test_empty() -> None:
    assert plan_batches([], max_requests=10, max_bytes=100) == []


def test_one_line() -> None:
    assert plan_batches([5], max_requests=1, max_bytes=6) == [(0, 1)]


@pytest.mark.parametrize("size", [100, 10**9])
def test_one_huge_line_gets_a_batch_of_its_own(size: int) -> None:
    assert plan_batches([size], max_requests=10, max_bytes=50) == [(0, 1)]
    assert plan_batches([1, size, 1], max_requests=10, max_bytes=50) == [(0, 1), (1, 2), (2, 3)]
    assert plan_batches([size, size], max_requests=10, max_bytes=50) == [(0, 1), (1, 2)]


def test_exact_byte_limit_fits() -> None:
    # Each line counts its size plus one newline: 9 + 1 + 9 + 1 == 20.
    assert plan_batches([9, 9], max_requests=10, max_bytes=20) == [(0, 2)]
    assert plan_batches([9, 9], max_requests=10, max_bytes=19) == [(0, 1), (1, 2)]
    assert plan_batches([9, 9, 9], max_requests=10, max_bytes=20) == [(0, 2), (2, 3)]
    # A single line of exactly the limit (with its newline) is within it.
    assert plan_batches([19, 0], max_requests=10, max_bytes=20) == [(0, 1), (1, 2)]


def test_exact_request_limit() -> None:
    assert plan_batches([1] * 6, max_requests=3, max_bytes=10**6) == [(0, 3), (3, 6)]
    assert plan_batches([1] * 7, max_requests=3, max_bytes=10**6) == [(0, 3), (3, 6), (6, 7)]
    assert plan_batches([1] * 3, max_requests=3, max_bytes=10**6) == [(0, 3)]
    assert plan_batches([1] * 3, max_requests=1, max_bytes=10**6) == [(0, 1), (1, 2), (2, 3)]


def test_zero_sized_lines_still_count_their_newline() -> None:
    assert plan_batches([0] * 5, max_requests=100, max_bytes=2) == [(0, 2), (2, 4), (4, 5)]


def test_the_byte_limit_resets_per_batch() -> None:
    # After a cut, the next batch starts empty: the oversized line does not spill over.
    assert plan_batches([30, 4, 4, 4], max_requests=10, max_bytes=10) == [(0, 1), (1, 3), (3, 4)]


def test_large_input_is_fast_and_within_limits() -> None:
    rng = random.Random(7)
    sizes = [rng.randint(200, 4000) for _ in range(200_000)]
    plan = plan_batches(sizes, max_requests=50_000, max_bytes=190 * 1024 * 1024)
    assert plan[0][0] == 0 and plan[-1][1] == len(sizes)
    for start, stop in plan:
        assert stop - start <= 50_000
        assert sum(sizes[start:stop]) + (stop - start) <= 190 * 1024 * 1024
    assert len(plan) == 4  # the request limit binds before the byte limit here


# ----- settings and secrets of batch runs ---------------------------------------------------


@pytest.mark.parametrize(
    "settings",
    [
        {"batch": True, "batch_poll_interval": float("inf")},
        {"batch": True, "batch_poll_interval": True},
        {"batch": True, "batch_poll_interval": 0},
        {"batch": True, "batch_wait": -1},
        {"batch": True, "batch_wait": float("nan")},
        {"cancel_batches": True},
    ],
)
def test_bad_batch_settings_are_refused(settings: dict[str, object]) -> None:
    from meta_evaluator.errors import JudgeConfigError
    from meta_evaluator.judge import RunSettings

    with pytest.raises(JudgeConfigError, match="batch"):
        RunSettings(**settings)  # type: ignore[arg-type]


def test_a_judge_runs_repr_never_shows_its_key(tmp_path: Path) -> None:
    from meta_evaluator.eval_task import EvalTask
    from meta_evaluator.judge import JudgePlan
    from meta_evaluator.judge._judge_run import JudgeRun
    from meta_evaluator.judge.config import Judge, Prompt
    from meta_evaluator.judge.run_files import RunFiles
    from meta_evaluator.llm.limits import endpoint_key

    judge = Judge(id="j", llm_client="openai", model="m", prompt=Prompt(id="p", prompt="{x}"))
    secret = "sk-never-shown-123"
    files = RunFiles(tmp_path, "r", "j")
    plan = JudgePlan(
        judge=judge,
        method="structured",
        endpoint=endpoint_key("openai", "https://x", secret),
        fingerprint="fp",
        files=files,
        action="new",
        source=None,
        source_run_id=None,
        created_at="2026-01-01T00:00:00Z",
        kept={},
        todo=(),
        seeded=False,
        batch=True,
    )
    run = JudgeRun.start(plan, secret, EvalTask({"t": ["a", "b"]}, ["x"], ["y"]))
    assert secret not in repr(run)


@pytest.mark.parametrize("per_row", [1, 3])
def test_prepared_batches_fill_within_the_limits(per_row: int) -> None:
    import httpx

    from meta_evaluator.eval_task import EvalTask
    from meta_evaluator.judge._batch import prepare_batches
    from meta_evaluator.judge._prompting import RequestBuilder, prompt_hash
    from meta_evaluator.judge.batch_ledger import BatchRecord, new_batch_key
    from meta_evaluator.judge.config import Judge, Prompt
    from meta_evaluator.llm.openai_batch import OpenAIBatchClient

    task = EvalTask({"verdict": ["yes", "no"]}, ["question"], ["answer"])
    judge = Judge(id="j", llm_client="openai", model="m",
                  prompt=Prompt(id="p", prompt="Is {answer} right for {question}?"))  # fmt: skip
    builder = RequestBuilder(judge, task, "structured")
    client = OpenAIBatchClient(httpx.AsyncClient())
    client.max_requests = 4 * per_row  # type: ignore[misc]
    rows = [{"question": f"q{i}" * (i + 1), "answer": f"a{i}"} for i in range(10)]
    batches = list(prepare_batches(client, builder, rows, per_row))
    assert [b.positions for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [h for b in batches for h in b.hashes] == [
        prompt_hash(builder.build(row)) for row in rows
    ]
    assert [body for b in batches for body in b.bodies] == [
        client.encode(builder.build(row)) for row in rows
    ]
    counted = list(prepare_batches(client, builder, rows, per_row, keep_bodies=False))
    assert [b.line_bytes for b in counted] == [b.line_bytes for b in batches]
    assert all(body == b"" for b in counted for body in b.bodies)
    # The counted bytes bound what is really sent under real custom ids.
    for prepared in batches:
        record = BatchRecord(new_batch_key(), "openai", "fp", "2026-01-01T00:00:00+00:00",
                             prepared.positions, prepared.hashes,
                             answers_per_row=per_row)  # fmt: skip
        for row, body in enumerate(prepared.bodies):
            sent = sum(len(client.line(record.custom_id(row, k), body)) + 1 for k in range(per_row))
            assert sent <= prepared.line_bytes[row] <= sent + 8 * per_row


def test_prepared_batches_split_by_bytes_as_plan_batches_does() -> None:
    import httpx

    from meta_evaluator.eval_task import EvalTask
    from meta_evaluator.judge._batch import prepare_batches
    from meta_evaluator.judge._prompting import RequestBuilder
    from meta_evaluator.judge.config import Judge, Prompt
    from meta_evaluator.llm.anthropic_batch import AnthropicBatchClient

    task = EvalTask({"verdict": ["yes", "no"]}, ["question"], ["answer"])
    judge = Judge(id="j", llm_client="anthropic", model="m",
                  prompt=Prompt(id="p", prompt="{answer} / {question}"))  # fmt: skip
    builder = RequestBuilder(judge, task, "xml")
    client = AnthropicBatchClient(httpx.AsyncClient())
    rng = random.Random(5)
    rows = [{"question": "q" * rng.randint(0, 3000), "answer": "a"} for _ in range(60)]
    client.max_bytes = 9000  # type: ignore[misc]
    batches = list(prepare_batches(client, builder, rows, 1))
    sizes = [size - 1 for b in batches for size in b.line_bytes]
    planned = plan_batches(sizes, max_requests=client.max_requests, max_bytes=9000)
    assert [(b.positions[0], b.positions[-1] + 1) for b in batches] == planned
    assert len(batches) > 5
