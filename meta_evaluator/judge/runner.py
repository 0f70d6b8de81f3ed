"""The second stage of a run: execute a `RunPlan`, every finished row saved at once.

Structure: one anyio task group per run, one per judge inside it, holding as many workers as
the judge may have rows in flight, each taking the next row not yet taken; judges on one
endpoint share its per-minute budgets and its adaptive window (how many of their workers may
have a call in flight: `llm/_window.py`), and its connection pool is the sum of their workers.
A row's failures that retrying may cure are retried (llm/retry.py); what remains becomes the row's
outcome. An endpoint that refuses the request itself (401, 404 ...) stops that judge at once;
one never reached (its first calls all fail to connect) is stopped by its breaker
(`_breaker.py`) within a few calls. With a cost ceiling (`max_cost`), every call of a priced
judge reserves its estimated cost in the run's `Spend` first (llm/spend.py); once the ceiling is
reached no call starts, and the rows not asked stay to do. Batch judges go through `_batch.py`
instead.

A row whose request was answered before (by any run on this machine) is answered from the
response cache (`llm/cache.py`) without a call: no rate-limit admission, no breaker record,
no cost.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import anyio
import httpx
import polars as pl

from meta_evaluator._async import our_error_first
from meta_evaluator.errors import CostCeilingError, JudgeRunError, StateError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge._batch import run_batch_judge
from meta_evaluator.judge._clients import (
    LLMClient,
    build_batch_client,
    build_client,
    judge_endpoint,
    request_keys,
)
from meta_evaluator.judge._judge_run import (
    JudgeRun,
    majority,
    mark_started,
    row_values,
    start_over,
    write_skipped,
    write_state,
)
from meta_evaluator.judge._progress import Progress
from meta_evaluator.judge._prompting import prompt_hash
from meta_evaluator.judge.plan import JudgePlan, RunPlan
from meta_evaluator.judge.result_row import JudgeOutcome, ResultRow, count_outcomes, rows_frame
from meta_evaluator.judge.row_store import RowStore
from meta_evaluator.judge.run_files import RunLock, now_iso
from meta_evaluator.judge.settings import RunSettings
from meta_evaluator.llm.cache import ResponseCache
from meta_evaluator.llm.classify import CallFailed, EndpointRejected
from meta_evaluator.llm.limits import EndpointKey, EndpointLimits
from meta_evaluator.llm.retry import call_with_retries
from meta_evaluator.llm.spend import CeilingReached, JudgeSpend, Spend
from meta_evaluator.llm.transport import PooledTransport, connections_that_fit, make_transport
from meta_evaluator.llm.types import ChatResponse

__all__ = ["execute"]

logger = logging.getLogger(__name__)

BATCH_TIMEOUT = 600.0
"""Seconds for one batch API call: uploads and downloads of up to a few hundred MB."""

CONNECT_TIMEOUT = 10.0
"""Most seconds to open a connection (at most half of an attempt's timeout)."""


async def execute(
    plan: RunPlan,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
) -> dict[str, JudgeOutcome]:
    """Ask what `plan` says to ask; return each judge's rows (kept and new, in data order).

    The judges the plan refused (their key cannot be read) make no call; the others run, and
    the error naming the refused ones is raised when they are done.

    Raises:
        JudgeConfigError: Every judge was refused (its key cannot be read), before any call.
        JudgeRunError: After the other judges finished: a judge's key could not be read, its
            endpoint refused its requests, or was never reached (`errors` names each;
            `results` holds each judge's `JudgeOutcome`, which the facade turns into
            `JudgeResults`).
        StateError: Another process is writing a judge's run (its lock is held).
        CostCeilingError: After the calls in flight finished: the run reached its `max_cost`,
            rows not asked remain (`results` as for `JudgeRunError`). A stopped judge's
            `JudgeRunError` wins, saying this too.
    """
    settings = plan.settings
    problem = plan.problem_error()
    if problem is not None and not plan.judges:
        raise problem  # every judge refused: nothing runs, said before any call
    for exc in plan.refused:  # said now too: the other judges may take hours
        logger.warning("%s The other judges run.", exc.message)
    runs = [JudgeRun.start(judge_plan, _key_of(judge_plan), plan.task)
            for judge_plan in plan.judges]  # fmt: skip
    spend = Spend(settings.max_cost) if settings.max_cost is not None else None
    if spend is not None:
        for run in runs:
            price = plan.prices.get(run.judge.id)
            if price is not None:  # (a mock judge has none: it costs nothing)
                run.spend = JudgeSpend(spend, price, run.judge.id)
    rows, ids, task = plan.rows, plan.ids, plan.task
    progress = progress or Progress.for_settings(
        settings.progress,
        every_percent=settings.progress_every,
        every_seconds=settings.progress_seconds,
    )
    # Judges on one endpoint and key share its limits; each judge keeps its own in-flight bound,
    # so the endpoint allows the sum of theirs.
    _fit_in_flight(runs, settings)
    sizes: dict[EndpointKey, int] = {}
    for run in runs:
        sizes[run.endpoint] = sizes.get(run.endpoint, 0) + run.in_flight
    limits = {
        key: EndpointLimits(
            size,
            requests_per_minute=settings.requests_per_minute,
            tokens_per_minute=settings.tokens_per_minute,
            # The mock answers offline: nothing to adapt to.
            adaptive=settings.adaptive_concurrency and key.client != "mock",
            name=str(key),
        )
        for key, size in sizes.items()
    }
    async with contextlib.AsyncExitStack() as stack:
        for run in runs:  # one writer per run and judge, across processes
            if run.plan.writes:
                lock = RunLock(run.files)
                lock.acquire()
                stack.callback(lock.release)
                _check_unchanged(run.plan)
        cache = _open_cache(runs, settings)
        if cache is not None:  # closed last: stores what is buffered, also when stopped
            stack.callback(cache.close)
        http: dict[EndpointKey, httpx.AsyncClient] = {}
        batch_http: dict[EndpointKey, httpx.AsyncClient] = {}
        for run in runs:
            if run.plan.batch and run.endpoint not in batch_http:
                batch_http[run.endpoint] = await stack.enter_async_context(
                    httpx.AsyncClient(
                        transport=transport,
                        timeout=httpx.Timeout(BATCH_TIMEOUT, connect=min(10.0, settings.timeout)),
                    )
                )
        live = {run.endpoint for run in runs if not run.plan.batch}
        direct: dict[EndpointKey, PooledTransport] = {}
        for key, limit in limits.items():
            if key.client == "mock" or key not in live:
                continue
            size = limit.max_in_flight
            # The connect timeout ends before the attempt's: a connect that times out shows no
            # host is there (the breaker counts it), while the attempt's own timeout says nothing.
            connect = min(CONNECT_TIMEOUT, settings.timeout / 2)
            own = make_transport(size, key.base_url) if transport is None else None
            if own is not None:
                direct[key] = own  # chat calls skip the client's per-call machinery
            http[key] = await stack.enter_async_context(
                httpx.AsyncClient(
                    transport=transport or own,  # None: httpx's own, through the proxy
                    limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
                    timeout=httpx.Timeout(settings.timeout, connect=connect),
                )
            )
        with progress, our_error_first():  # a full disk: one DiskFullError, not a group
            async with anyio.create_task_group() as ticking:
                ticking.start_soon(progress.tick_forever)  # lines due by time, not by rows
                try:
                    await _run_judges(
                        runs, limits, http, batch_http, direct, cache, rows, ids, task, settings,
                        progress,
                    )  # fmt: skip
                finally:
                    ticking.cancel_scope.cancel()
    results = {run.judge.id: _finish(run, ids, task, plan.id_dtype, spend) for run in runs}
    ceiling = _ceiling_error(spend, results, len(ids)) if spend is not None else None
    stopped = [(exc.judge_id, exc.field, exc.message) for exc in plan.refused]
    stopped += [(r.judge.id, "endpoint", r.failure) for r in runs if r.failure]
    if stopped:
        if ceiling is not None:
            stopped.append((None, "max_cost", ceiling.message))
        raise _stopped_error(stopped, finished=[r.judge.id for r in runs if not r.failure],
                             results=results)  # fmt: skip
    if ceiling is not None:
        raise ceiling
    return results


async def _run_judges(
    runs: list[JudgeRun],
    limits: dict[EndpointKey, EndpointLimits],
    http: dict[EndpointKey, httpx.AsyncClient],
    batch_http: dict[EndpointKey, httpx.AsyncClient],
    direct: dict[EndpointKey, PooledTransport],
    cache: ResponseCache | None,
    rows: tuple[Mapping[str, Any], ...],
    ids: tuple[Any, ...],
    task: EvalTask,
    settings: RunSettings,
    progress: Progress,
) -> None:
    """Every judge of the run at once, one task each (batch judges through `_batch.py`)."""
    async with anyio.create_task_group() as group:
        for run in runs:
            if run.plan.batch:
                batch_client = build_batch_client(
                    run.judge, batch_http[run.endpoint], run.api_key, timeout=BATCH_TIMEOUT
                )
                group.start_soon(
                    run_batch_judge, run, batch_client, rows, ids, task, settings, progress
                )
                continue
            client = build_client(
                run.judge,
                http.get(run.endpoint),
                run.api_key,
                timeout=settings.timeout,
                direct=direct.get(run.endpoint),
            )
            if cache is not None and run.judge.cache:
                run.cache, run.cache_keys = cache, request_keys(run.judge, client)
            group.start_soon(
                _run_judge, run, client, limits[run.endpoint], rows, ids, task, settings,
                progress,
            )  # fmt: skip


def _open_cache(runs: list[JudgeRun], settings: RunSettings) -> ResponseCache | None:
    """The response cache, when the run and one of its live judges with rows to ask use it.

    Raises:
        StorageError: The cache folder named (`cache_dir`, `$META_EVALUATOR_CACHE_DIR`)
            cannot be created or written.
    """
    if not settings.cache or not any(
        run.judge.cache and run.judge.llm_client != "mock" and not run.plan.batch
        and run.plan.todo and not run.plan.unchanged
        for run in runs
    ):  # fmt: skip
        return None
    return ResponseCache.open(settings.cache_dir, max_mb=settings.cache_max_mb)


def _ceiling_error(
    spend: Spend, results: dict[str, JudgeOutcome], rows: int
) -> CostCeilingError | None:
    """The error saying the run reached its cost ceiling, or None when it did not."""
    if not spend.reached:
        return None
    remaining = {j: rows - o.frame.height for j, o in results.items() if o.frame.height < rows}
    left = sum(remaining.values())
    each = ", ".join(f"{judge}: {count}" for judge, count in remaining.items())
    return CostCeilingError(
        f"stopped at the cost ceiling: the run's calls cost ${spend.spent_usd:.4f} of max_cost "
        f"${spend.max_cost:.4f} (priced by prices.yaml), "
        f"{spend.past_it('and the next call would pass it')}; "
        f"{left} rows not asked ({each}). Finished rows are kept: run again to go on (each run "
        "counts its own calls; a higher --max-cost / max_cost= asks more of them).",
        results=results,
        spent=spend.spent_usd,
        max_cost=spend.max_cost,
        remaining=remaining,
    )


def _key_of(plan: JudgePlan) -> str | None:
    """The judge's key; None for a judge asking nothing whose key cannot be read."""
    return None if plan.keyless else judge_endpoint(plan.judge)[1]


def _check_unchanged(plan: JudgePlan) -> None:
    """Refuse to write a run that another process wrote to since it was planned.

    Raises:
        StateError: The run's files differ from the plan's snapshot: executed, the plan would
            ask (and pay for) rows again that the other process answered.
    """
    if plan.files.snapshot() != plan.snapshot:
        raise StateError(
            f"{plan.files.rows.parent}: run {plan.run_id!r} of judge {plan.judge_id!r} changed "
            "since it was planned (a run wrote to it since, this plan's own or another's); plan "
            "again, which reuses its new rows.",
            path=plan.files.rows.parent,
        )


def _stopped_error(
    stopped: list[tuple[str | None, str | None, str]],
    *,
    finished: list[str],
    results: dict[str, JudgeOutcome],
) -> JudgeRunError:
    """One error naming every judge stopped (judge id, field at fault, message), after the rest."""
    lines = [message for _, _, message in stopped]
    if finished:
        lines.append(
            f"The other judges ran ({', '.join(map(repr, finished))}); their rows are saved."
        )
    judge_id, field, _ = stopped[0]
    return JudgeRunError(
        "\n".join(lines),
        results=results,
        judge_id=judge_id,
        field=field,
        errors=[{"loc": (judge, where), "msg": message} for judge, where, message in stopped],
    )


def _fit_in_flight(runs: list[JudgeRun], settings: RunSettings) -> None:
    """Set each judge's rows in flight: its bound, scaled down when the open-file limit is short.

    Each call in flight holds a connection (a file descriptor). `connections_that_fit` raises
    the process's soft limit toward the hard one first; when even that leaves too few, every
    live judge's bound shrinks by the same factor (at least 1), and a warning says how to
    raise the limit, instead of calls failing with "too many open files".
    """
    for run in runs:
        run.in_flight = run.judge.max_concurrency or settings.max_concurrency
    live = [run for run in runs if not run.plan.batch and run.endpoint.client != "mock"]
    wanted = sum(run.in_flight for run in live)
    room = connections_that_fit(wanted) if wanted else 0
    if room >= wanted:
        return
    for run in live:
        run.in_flight = max(1, run.in_flight * room // wanted)
    logger.warning(
        "%d calls in flight were asked for, but this process may open only about %d more files "
        "(its open-file limit, `ulimit -n`, cannot be raised further): %d are run at once. "
        "Raise the limit (`ulimit -Hn`, or LimitNOFILE for a service) to run them all.",
        wanted, room, sum(run.in_flight for run in live),
    )  # fmt: skip


async def _run_judge(
    run: JudgeRun,
    client: LLMClient,
    limits: EndpointLimits,
    rows: tuple[Mapping[str, Any], ...],
    ids: tuple[Any, ...],
    task: EvalTask,
    settings: RunSettings,
    progress: Progress,
) -> None:
    judge = run.judge
    spent = functools.partial(run.spend.spend.judge_usd, judge.id) if run.spend else None
    kept = count_outcomes(run.kept.values())
    progress.add_judge(judge.id, total=len(ids), kept=kept, spent=spent)
    if run.plan.unchanged or not (run.plan.todo or run.plan.seeded):
        return
    if run.plan.fresh_start:
        start_over(run)  # resume=False: the run starts over
    asked, skipped = run.plan.to_ask(ids)
    todo = iter(asked)  # shared by the workers: each row goes to the first one free
    workers = min(run.in_flight, len(asked))
    with RowStore(run.files.rows, root=run.files.root) as store:
        if run.plan.seeded:
            for values in run.kept.values():
                store.append(values)
            mark_started(run)
        write_skipped(run, store, [ids[index] for index in skipped], progress)
        async with anyio.create_task_group() as group:
            for _ in range(workers):
                group.start_soon(
                    _ask_rows, run, client, limits, todo, rows, ids, task, settings, store,
                    progress, group.cancel_scope,
                )  # fmt: skip
    if run.breaker.tripped and run.failure is None:
        failed = sum(1 for values in run.new_rows.values() if values.outcome == "error")
        cause = run.breaker.cause
        # A cause with its own advice (a TLS failure) has said what to fix already.
        fix = (
            "fix that" if cause is not None and cause.advice else "start the server or fix base_url"
        )
        run.failure = (
            f"judge {judge.id!r}: stopped, its first {run.breaker.failures} calls failed to "
            f"connect ({cause}; {run.endpoint}); {fix}, then run again with --retry error "
            f"(from Python: retry=['error']): it asks the {failed} rows that failed and the "
            "rows not asked yet."
        )
        logger.warning(  # at once: the run's error comes only when the other judges are done
            "judge=%s stopped: %s (its first %d calls failed to connect); the other judges go on",
            judge.id,
            run.breaker.cause,
            run.breaker.failures,
        )


async def _ask_rows(
    run: JudgeRun,
    client: LLMClient,
    limits: EndpointLimits,
    todo: Iterator[int],
    rows: tuple[Mapping[str, Any], ...],
    ids: tuple[Any, ...],
    task: EvalTask,
    settings: RunSettings,
    store: RowStore,
    progress: Progress,
    judge_scope: anyio.CancelScope,
) -> None:
    """One worker of a judge: ask the next row not yet taken until none is left.

    A judge runs as many workers as rows it may have in flight: a fixed pool, rather than a
    task per row, keeps the runner's own cost per row to a few microseconds.
    """
    for index in todo:
        if run.breaker.tripped:  # the endpoint is not there: the rest stay unasked
            return
        if run.spend is not None and run.spend.spend.reached:  # the cost ceiling: the same
            return
        row, row_id = rows[index], ids[index]
        samples = []
        for number in range(settings.consistency):
            sample = await _ask(run, client, limits, row, row_id, task, settings, progress, number)
            if sample is None:
                break
            samples.append(sample)
            if run.breaker.tripped:
                break
        if len(samples) < settings.consistency:
            # The judge is stopping: a row with fewer answers than asked for is not done, and
            # saved it would be kept as if it were; left unasked, a later run asks it whole.
            if not run.breaker.tripped and not (run.spend and run.spend.spend.reached):
                judge_scope.cancel()  # the endpoint refused the request itself
            continue
        values = samples[0] if len(samples) == 1 else majority(samples, task)
        assert values is not None, "consistency answers make a row"
        mark_started(run)
        store.append(values)  # synchronous: a cancellation cannot cut a row in half
        run.new_rows[row_id] = values
        progress.finished(run.judge.id, values.outcome, cached=values.cached)


async def _ask(
    run: JudgeRun,
    client: LLMClient,
    limits: EndpointLimits,
    row: Mapping[str, Any],
    row_id: Any,
    task: EvalTask,
    settings: RunSettings,
    progress: Progress,
    sample: int = 0,
    attempts_before: int = 0,
) -> ResultRow | None:
    """Call for one row, with retries; the row's values, or None when the judge must stop.

    When the judge's breaker trips meanwhile, a row that had failed attempts ends with its last
    failure (an error row naming the cause), and one not yet asked returns None (left unasked).
    `sample` numbers the row's answers (`consistency`): each has its own cache entry. A stored
    answer is used unless its row's outcome is one `retry` names (that is asked again).
    """
    judge = run.judge
    method = run.method
    request = run.builders[method].build(row)
    cache, key = run.cache, None
    if cache is not None and run.cache_keys is not None:
        key = run.cache_keys.key(request, sample)
        stored = cache.get(key)
        if stored is not None:
            values = row_values(
                run, row_id, prompt_hash(request), method, task,
                attempts=attempts_before, duration=None, response=stored, failure=None,
                cached=True,
            )  # fmt: skip
            if values.outcome not in settings.retry:
                return values
    attempts = attempts_before
    duration = 0.0
    response: ChatResponse | None = None
    failure: CallFailed | None = None
    last_failure: CallFailed | None = None

    async def attempt(sending: Callable[[], None] | None = None) -> ChatResponse:
        # An attempt counts (with its duration) when it ends with an answer or a failure; one
        # cancelled in flight (the breaker tripped) is not counted, as its row keeps the failure
        # of the attempt before. `sending()` tells the cost ceiling the request is handed to the
        # client: one cancelled before (waiting in `limits.admit`) costs nothing.
        nonlocal attempts, duration, last_failure
        ticket = await limits.admit(request.estimated_tokens())
        begun = time.perf_counter()
        try:
            if sending is not None:
                sending()
            answer = await client.complete(request)
        except (CallFailed, EndpointRejected) as exc:
            limits.failed(ticket, exc)
            attempts, duration = attempts + 1, time.perf_counter() - begun
            if isinstance(exc, CallFailed):
                last_failure = exc
            run.breaker.record(exc)
            raise
        except BaseException:
            limits.done(ticket, None)  # cancelled, or a bug: the slot is given back
            raise
        limits.done(ticket, answer)
        attempts, duration = attempts + 1, time.perf_counter() - begun
        run.breaker.record(None)
        return answer

    paid = attempt if run.spend is None else functools.partial(run.spend.call, request, attempt)
    with run.breaker.guard() as guard:
        try:
            response = await call_with_retries(
                paid,
                max_retries=settings.max_retries,
                backoff_base=settings.backoff_base,
                backoff_cap=settings.backoff_cap,
                describe=lambda: f"judge={judge.id} row={row_id!r}",
                on_retry=lambda: progress.retried(judge.id),
            )
        except CallFailed as exc:
            failure = exc
        except CeilingReached:  # no call may start: the row stays unasked, as the rest
            return None
        except EndpointRejected as exc:
            if (
                method == "structured"
                and task.fallback_method is not None
                and exc.http_status in (400, 422)
            ):
                if run.method == "structured":
                    logger.warning(
                        "judge=%s: %s refused structured output (HTTP %s); asking for XML tags "
                        "instead (structured_outputs_fallback)",
                        judge.id,
                        run.endpoint,
                        exc.http_status,
                    )
                    run.method = task.fallback_method
                return await _ask(
                    run, client, limits, row, row_id, task, settings, progress, sample,
                    attempts_before=attempts,
                )  # fmt: skip
            if run.failure is None:
                run.failure = (
                    f"judge {judge.id!r}: {run.endpoint} refused the request ({exc}); fix the "
                    "key, model name or URL, then run again (finished rows are kept)."
                )
                logger.error("%s", run.failure)
            return None
    if guard is not None and guard.cancelled_caught:  # the breaker stopped the judge
        if last_failure is None:
            return None
        failure = last_failure
    if cache is not None and key is not None and response is not None:
        cache.put(key, response)
    return row_values(
        run, row_id, prompt_hash(request), method, task,
        attempts=attempts, duration=duration, response=response, failure=failure,
    )  # fmt: skip


def _finish(
    run: JudgeRun,
    ids: tuple[Any, ...],
    task: EvalTask,
    id_dtype: pl.DataType,
    spend: Spend | None = None,
) -> JudgeOutcome:
    """Merge kept and new rows in data order; a complete run also gets its table and state."""
    by_id = {**run.kept, **run.new_rows}
    ordered = [by_id[i] for i in ids if i in by_id]
    complete = len(ordered) == len(ids) and run.failure is None
    frame = rows_frame(ordered, task, id_dtype)
    cost = spend.judge_usd(run.judge.id) if spend is not None else None
    outcome = JudgeOutcome(run.judge.id, run.files.run_id, frame, complete, cost)
    if run.plan.unchanged or not (run.started or complete):
        return outcome  # nothing was asked: the files stay as they were
    if complete:
        run.files.write_table(frame)
    write_state(run, completed_at=now_iso() if complete else None, counts=count_outcomes(ordered))
    return outcome
