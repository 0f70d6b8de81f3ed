"""The runner: many judges over many rows, concurrently, every finished row saved at once.

Structure: one anyio task group per run, one per judge inside it, one task per row bounded by
the judge's concurrency; calls share per-endpoint limits (in flight, per minute). A row's
failures that retrying may cure are retried (llm/retry.py); what remains becomes the row's
outcome. An endpoint that refuses the request itself (401, 404 ...) stops that judge at once;
one never reached (its first calls all fail to connect) is stopped by its breaker
(`_breaker.py`) within a few calls.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx

from meta_evaluator._async import our_error_first
from meta_evaluator._util import finite_number, repeated
from meta_evaluator.data import EvalData
from meta_evaluator.errors import JudgeConfigError, JudgeRunError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.eval_task.eval_task import AnsweringMethod
from meta_evaluator.judge._batch import BatchSettings, check_ledger, run_batch_judge
from meta_evaluator.judge._clients import (
    LLMClient,
    build_batch_client,
    build_client,
    judge_endpoint,
)
from meta_evaluator.judge._judge_run import (
    JudgeRun,
    majority,
    mark_started,
    row_values,
    write_state,
)
from meta_evaluator.judge._progress import Progress
from meta_evaluator.judge._prompting import RequestBuilder, answering_method, prompt_hash
from meta_evaluator.judge._shards import check_shard, shard_of
from meta_evaluator.judge.config import Judge
from meta_evaluator.judge.result_row import JudgeOutcome, ResultRow, count_outcomes, rows_frame
from meta_evaluator.judge.row_store import RowStore, read_rows
from meta_evaluator.judge.run_files import (
    RunFiles,
    RunLock,
    latest_run,
    latest_sharded_run,
    new_run_id,
    now_iso,
)
from meta_evaluator.llm.classify import CallFailed, EndpointRejected
from meta_evaluator.llm.limits import EndpointKey, EndpointLimits
from meta_evaluator.llm.retry import call_with_retries
from meta_evaluator.llm.transport import make_transport
from meta_evaluator.llm.types import ChatResponse

__all__ = [
    "RunSettings",
    "check_judge",
    "check_judges",
    "check_listed_once",
    "combined_error",
    "fingerprint",
    "plan_judge",
    "run_judges",
    "shard_rows",
]

logger = logging.getLogger(__name__)

OUTCOMES = ("valid", "invalid", "error", "skipped")

BATCH_TIMEOUT = 600.0
"""Seconds for one batch API call: uploads and downloads of up to a few hundred MB."""

CONNECT_TIMEOUT = 10.0
"""Most seconds to open a connection (at most half of an attempt's timeout)."""


@dataclass(frozen=True)
class RunSettings:
    """How a run calls endpoints; a judge's own `max_concurrency` wins over the run's."""

    max_concurrency: int = 16
    """Requests in flight per judge."""
    max_retries: int = 3
    """Retries after the first attempt: at most `max_retries + 1` calls per row."""
    timeout: float = 60.0
    """Seconds for one attempt, connect to last byte; a timed-out attempt is retried."""
    retry: tuple[str, ...] = ()
    """Outcomes of rows already in the run to ask again (`invalid`, `error`); others are kept."""
    requests_per_minute: float | None = None
    """Budget shared by all judges on one endpoint and key."""
    tokens_per_minute: float | None = None
    """Budget shared by all judges on one endpoint and key (estimated before each call)."""
    backoff_base: float = 1.0
    """Seconds of the first backoff window; it doubles with each retry."""
    backoff_cap: float = 30.0
    """Most seconds of one backoff window."""
    consistency: int = 1
    """Answers asked per row; with more than one, each task's label is the majority vote of
    the valid answers (ties go to the label seen first)."""
    batch: bool = False
    """Ask through the provider's batch engine (OpenAI Batch, Anthropic Message Batches)."""
    batch_poll_interval: float = 30.0
    """Seconds between two looks at a running batch."""
    batch_wait: float | None = None
    """Most seconds to wait for batches (None: until they end; 0: submit and return). Batches
    still running stay recorded in the run folder; the next batch run collects them."""
    batch_cancel: bool = False
    """Cancel the run's pending batches (submitting nothing), then collect what they hold."""

    def __post_init__(self) -> None:
        problems = []
        if not (isinstance(self.max_concurrency, int) and self.max_concurrency >= 1):
            problems.append(
                f"max_concurrency must be an integer >= 1, got {self.max_concurrency!r}"
            )
        if not (isinstance(self.max_retries, int) and self.max_retries >= 0):
            problems.append(f"max_retries must be an integer >= 0, got {self.max_retries!r}")
        if not (isinstance(self.consistency, int) and self.consistency >= 1):
            problems.append(f"consistency must be an integer >= 1, got {self.consistency!r}")
        if not (isinstance(self.timeout, int | float) and self.timeout > 0):
            problems.append(f"timeout must be seconds > 0, got {self.timeout!r}")
        if self.batch_cancel and not self.batch:
            problems.append("batch_cancel needs batch=True (it cancels the run's batches)")
        unknown = [r for r in self.retry if r not in ("invalid", "error")]
        if unknown:
            problems.append(f"retry takes 'invalid' and 'error', got {unknown}")
        if not finite_number(self.batch_poll_interval) or self.batch_poll_interval <= 0:
            problems.append(
                f"batch_poll_interval must be seconds > 0, got {self.batch_poll_interval!r}"
            )
        if self.batch_wait is not None and not (
            finite_number(self.batch_wait) and self.batch_wait >= 0
        ):
            problems.append(f"batch_wait must be seconds >= 0 or None, got {self.batch_wait!r}")
        for name in ("requests_per_minute", "tokens_per_minute"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int | float) and value > 0):
                problems.append(f"{name} must be > 0 or None, got {value!r}")
        if problems:
            raise JudgeConfigError("run settings: " + "; ".join(problems), field="settings")


def fingerprint(judge: Judge, task: EvalTask, consistency: int = 1) -> str:
    """A digest of what makes two runs' answers comparable.

    Client, endpoint, model, prompt, answering method, sampling parameters and the task's
    labels count; concurrency and headers do not.
    """
    payload = {
        "llm_client": judge.llm_client,
        "base_url": judge.base_url,
        "api_version": judge.api_version,
        "model": judge.model,
        "prompt": judge.prompt.prompt,
        "answering_method": answering_method(judge, task),
        "temperature": judge.temperature,
        "max_tokens": judge.max_tokens,
        "mock": judge.mock.model_dump() if judge.mock else None,
        "tasks": task.model_dump(mode="json")["task_schemas"],
        "required": task.get_required_tasks(),
    }
    if consistency > 1:  # absent at 1, so single-answer fingerprints stay as they were
        payload["consistency"] = consistency
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


async def run_judges(
    results_dir: Path,
    judges: Sequence[Judge],
    data: EvalData,
    task: EvalTask,
    *,
    run_id: str | None,
    settings: RunSettings,
    resume: bool = True,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
    shard: tuple[int, int] | None = None,
) -> dict[str, JudgeOutcome]:
    """Run `judges` over every row of `data` (or of its shard); return each judge's rows.

    With `shard=(k, N)`, only the rows with `shard_of(id, N) == k - 1` are asked, into files
    of that shard in the run `run_id` (which a sharded run needs, as all its shards share it).

    A judge whose key cannot be read (variable not set, stray characters in the key) makes no
    call; the other judges run, and the error naming it is raised when they are done.

    Raises:
        JudgeConfigError: Before any call: a judge's answering method does not fit the task,
            a bad shard (or one without a run_id), or no selected judge's key can be read.
        JudgeRunError: After the other judges finished: a judge's key could not be read, its
            endpoint refused its requests, or was never reached (`errors` names each;
            `results` holds each judge's `JudgeOutcome`, which the facade turns into
            `JudgeResults`).
    """
    check_listed_once(judges)
    # Every judge is checked before any file is touched or any call made.
    checked, problems = check_judges(judges, task)
    blocked = [exc for exc in problems if exc.field == "api_key_env"]
    if len(blocked) < len(problems):  # only a key blocks just its judge; the rest stop the run
        raise next(exc for exc in problems if exc.field != "api_key_env")
    if blocked and not checked:
        raise combined_error(blocked, field="api_key_env")
    for exc in blocked:  # said now too: the other judges may take hours
        logger.warning("%s The other judges run.", exc.message)
    rows, ids = shard_rows(data, shard, run_id)
    fresh = new_run_id()  # judges starting a new run in this call share its id
    runs = [
        plan_judge(results_dir, judge, method, endpoint, api_key, task, rows, ids,
              run_id=run_id, fresh_run_id=fresh, settings=settings, resume=resume, shard=shard)
        for judge, method, endpoint, api_key in checked
    ]  # fmt: skip
    batched = {r.judge.id for r in runs if settings.batch and r.judge.llm_client != "mock"}
    for run in runs:
        check_ledger(run, batch=run.judge.id in batched)
    progress = progress or Progress.for_terminal()
    # Judges on one endpoint and key share its limits; each judge keeps its own in-flight bound,
    # so the endpoint allows the sum of theirs.
    sizes: dict[EndpointKey, int] = {}
    for run in runs:
        size = run.judge.max_concurrency or settings.max_concurrency
        sizes[run.endpoint] = sizes.get(run.endpoint, 0) + size
    limits = {
        key: EndpointLimits(
            size,
            requests_per_minute=settings.requests_per_minute,
            tokens_per_minute=settings.tokens_per_minute,
        )
        for key, size in sizes.items()
    }
    async with contextlib.AsyncExitStack() as stack:
        for run in runs:  # one writer per run and judge, across processes
            if not run.unchanged and (run.todo or run.seeded or run.judge.id in batched):
                lock = RunLock(run.files)
                lock.acquire()
                stack.callback(lock.release)
        http: dict[EndpointKey, httpx.AsyncClient] = {}
        batch_http: dict[EndpointKey, httpx.AsyncClient] = {}
        for run in runs:
            if run.judge.id in batched and run.endpoint not in batch_http:
                batch_http[run.endpoint] = await stack.enter_async_context(
                    httpx.AsyncClient(
                        transport=transport,
                        timeout=httpx.Timeout(BATCH_TIMEOUT, connect=min(10.0, settings.timeout)),
                    )
                )
        live = {run.endpoint for run in runs if run.judge.id not in batched}
        for key, limit in limits.items():
            if key.client == "mock" or key not in live:
                continue
            size = int(limit.in_flight.total_tokens)
            # The connect timeout ends before the attempt's: a connect that times out shows no
            # host is there (the breaker counts it), while the attempt's own timeout says nothing.
            connect = min(CONNECT_TIMEOUT, settings.timeout / 2)
            http[key] = await stack.enter_async_context(
                httpx.AsyncClient(
                    transport=transport or make_transport(size),
                    limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
                    timeout=httpx.Timeout(settings.timeout, connect=connect),
                )
            )
        with progress, our_error_first():  # a full disk: one DiskFullError, not a group
            async with anyio.create_task_group() as group:
                for run in runs:
                    if run.judge.id in batched:
                        group.start_soon(
                            _run_batches, run, batch_http[run.endpoint], rows, ids, task,
                            settings, progress,
                        )  # fmt: skip
                        continue
                    client = build_client(
                        run.judge, http.get(run.endpoint), run.api_key, timeout=settings.timeout
                    )
                    group.start_soon(
                        _run_judge, run, client, limits[run.endpoint], rows, ids, task, settings,
                        progress,
                    )  # fmt: skip
    results = {}
    for run in runs:
        results[run.judge.id] = _finish(run, ids, task, data)
    stopped = [(exc.judge_id, exc.field, exc.message) for exc in blocked]
    stopped += [(r.judge.id, "endpoint", r.failure) for r in runs if r.failure]
    if stopped:
        raise _stopped_error(stopped, finished=[r.judge.id for r in runs if not r.failure],
                             results=results)  # fmt: skip
    return results


def combined_error(problems: list[JudgeConfigError], *, field: str) -> JudgeConfigError:
    """One error for several judges' problems (the problem itself when there is one)."""
    if len(problems) == 1:
        return problems[0]
    return JudgeConfigError(
        "\n".join(exc.message for exc in problems),
        judge_id=problems[0].judge_id,
        field=field,
        errors=[{"loc": (exc.judge_id, exc.field), "msg": exc.message} for exc in problems],
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


async def _run_batches(
    run: JudgeRun,
    http: httpx.AsyncClient,
    rows: list[dict[str, Any]],
    ids: list[Any],
    task: EvalTask,
    settings: RunSettings,
    progress: Progress,
) -> None:
    batch = BatchSettings(
        answers_per_row=settings.consistency,
        max_retries=settings.max_retries,
        backoff_base=settings.backoff_base,
        backoff_cap=settings.backoff_cap,
        poll_interval=settings.batch_poll_interval,
        wait=settings.batch_wait,
        cancel=settings.batch_cancel,
    )
    client = build_batch_client(run.judge, http, run.api_key, timeout=BATCH_TIMEOUT)
    await run_batch_judge(run, client, rows, ids, task, batch, progress)


def check_listed_once(judges: Sequence[Judge]) -> None:
    """Raise JudgeConfigError naming the judges listed more than once."""
    twice = repeated(j.id for j in judges)
    if twice:
        raise JudgeConfigError(
            f"judges {twice} are listed twice; name each once.", field="judge_ids"
        )


def shard_rows(
    data: EvalData, shard: tuple[int, int] | None, run_id: str | None
) -> tuple[list[dict[str, Any]], list[Any]]:
    """The rows and ids a run asks: all of them, or those of part k of N (`shard=(k, N)`).

    Raises:
        JudgeConfigError: `shard` is not (k, N) with 1 <= k <= N, or comes without a run_id
            (shards started apart would otherwise write to different runs, never merged).
    """
    rows = data.data.to_dicts()
    ids = data.ids.to_list()
    if shard is None:
        return rows, ids
    k, count = check_shard(shard)
    if run_id is None:
        raise JudgeConfigError(
            f"shard {k}/{count} needs a run_id, the same for every shard of the run, so their "
            "results merge (for instance --run-id nightly-1 on every machine).",
            field="run_id",
        )
    keep = [index for index, row_id in enumerate(ids) if shard_of(row_id, count) == k - 1]
    return [rows[index] for index in keep], [ids[index] for index in keep]


def check_judges(
    judges: Sequence[Judge], task: EvalTask
) -> tuple[list[tuple[Judge, AnsweringMethod, EndpointKey, str | None]], list[JudgeConfigError]]:
    """`check_judge` for each judge: the judges that passed, and every problem of the others.

    The run lets a judge whose key cannot be read (`field == "api_key_env"`) block only itself;
    the dry run reports every problem at once.
    """
    checked, problems = [], []
    for judge in judges:
        try:
            checked.append((judge, *check_judge(judge, task)))
        except JudgeConfigError as exc:
            problems.append(exc)
    return checked, problems


def check_judge(judge: Judge, task: EvalTask) -> tuple[AnsweringMethod, EndpointKey, str | None]:
    """Everything about a judge that can fail before a call: method, Azure settings, key."""
    method = answering_method(judge, task)
    if method == "text" and not any(task.task_kind(t) == "single" for t in task.task_names):
        raise JudgeConfigError(
            f"judge {judge.id!r}: answering_method 'text' needs a single-choice task to match "
            "the answer to; use 'structured' or 'xml'.",
            judge_id=judge.id,
            field="answering_method",
        )
    endpoint, api_key = judge_endpoint(judge)
    return method, endpoint, api_key


def plan_judge(
    results_dir: Path,
    judge: Judge,
    method: AnsweringMethod,
    endpoint: EndpointKey,
    api_key: str | None,
    task: EvalTask,
    rows: list[dict[str, Any]],
    ids: list[Any],
    *,
    run_id: str | None,
    fresh_run_id: str,
    settings: RunSettings,
    resume: bool,
    shard: tuple[int, int] | None = None,
) -> JudgeRun:
    """Pick the judge's run and sort rows into kept and to-do; reads files, writes none.

    With `run_id`, that run is continued (or started). Without, the judge's latest unfinished
    run of the same configuration is continued; failing that, a new run starts, keeping the
    finished rows of the latest complete run of the same configuration, and when that run
    already covers every row, it is returned as it is, with no call and no write.

    With `shard`, `rows` and `ids` are that shard's (`shard_rows`) and the shard's own files in
    the run `run_id` are continued (or started).
    """
    print_ = fingerprint(judge, task, settings.consistency)
    source: RunFiles | None = None
    shard_sources: list[RunFiles] = []
    if shard is not None:
        if run_id is None:
            raise JudgeConfigError("a sharded run needs a run_id.", field="run_id")
        files = RunFiles(results_dir, run_id, judge.id, shard=shard)
        source = files if resume else None
    elif run_id is not None:
        files = RunFiles(results_dir, run_id, judge.id)
        source = files if resume else None
    elif resume and (unfinished := latest_run(results_dir, judge.id, complete=False,
                                               fingerprint=print_)):  # fmt: skip
        files = source = unfinished
    else:
        files = RunFiles(results_dir, fresh_run_id, judge.id)
        if resume:
            source = latest_run(results_dir, judge.id, complete=True, fingerprint=print_)
            shards = latest_sharded_run(results_dir, judge.id, fingerprint=print_)
            source_state = source.read_state() if source is not None else None
            if shards is not None and (
                source_state is None or (source_state.completed_at or "") < shards[0]
            ):
                shard_sources = shards[1]  # a later complete sharded run: its rows are reused
                source = None
    run = JudgeRun(judge, files, print_, method, endpoint, api_key, source=source)
    run.builders = {m: RequestBuilder(judge, task, m) for m in ("structured", "xml", "text")}
    state = source.read_state() if source is not None else None
    run.created_at = state.created_at if state and source is files else now_iso()
    run.fresh_start = not resume
    names = task.task_names
    previous: dict[Any, ResultRow] = {}
    for record in read_rows(source.rows) if source else []:  # an id's last line wins
        prior = ResultRow.from_record(record, names)
        previous[prior.original_id] = prior
    for part in shard_sources:  # each id once: the first shard's row wins, as on load
        for record in read_rows(part.rows):
            prior = ResultRow.from_record(record, names)
            previous.setdefault(prior.original_id, prior)
    if shard_sources:
        run.source_run_id = shard_sources[0].run_id
    methods: list[AnsweringMethod] = [method]
    if method == "structured" and task.structured_outputs_fallback:
        methods.append("xml")  # rows answered after a fallback count as done too
    for index, (row, row_id) in enumerate(zip(rows, ids, strict=True)):
        old = previous.get(row_id)
        if (
            old is not None
            and old.fingerprint == print_
            and old.outcome not in settings.retry
            and old.prompt_hash in {prompt_hash(run.builders[m].build(row)) for m in methods}
        ):
            run.kept[row_id] = old
        else:
            run.todo.append(index)
    if source is not None and source is not files:
        if not run.todo and state is not None and state.complete and len(previous) == len(ids):
            run.files, run.unchanged = source, True  # the complete run already has every row
        else:
            run.seeded = True  # the kept rows are copied into the new run
    elif shard_sources:
        if not run.todo and len(previous) == len(ids):  # the shards already have every row
            run.files, run.unchanged = (
                RunFiles(results_dir, shard_sources[0].run_id, judge.id),
                True,
            )
        else:
            run.seeded = True  # the shards' rows are copied into the new, unsharded run
    return run


async def _run_judge(
    run: JudgeRun,
    client: LLMClient,
    limits: EndpointLimits,
    rows: list[dict[str, Any]],
    ids: list[Any],
    task: EvalTask,
    settings: RunSettings,
    progress: Progress,
) -> None:
    judge = run.judge
    progress.add_judge(judge.id, total=len(ids), done=len(run.kept))
    if run.unchanged or not (run.todo or run.seeded):
        return
    if run.fresh_start:
        run.files.rows.unlink(missing_ok=True)  # resume=False: the run starts over
    slots = anyio.Semaphore(judge.max_concurrency or settings.max_concurrency)
    with RowStore(run.files.rows, root=run.files.root) as store:
        if run.seeded:
            for values in run.kept.values():
                store.append(values)
            mark_started(run)
        async with anyio.create_task_group() as group:
            for index in run.todo:
                await slots.acquire()
                if run.breaker.tripped:  # the endpoint is not there: the rest stay unasked
                    slots.release()
                    break
                group.start_soon(
                    _one_row, run, client, limits, slots, rows[index], ids[index], task,
                    settings, store, progress, group.cancel_scope,
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
            f"(retry=['error']): it asks the {failed} rows that failed and the rows not asked "
            "yet."
        )
        logger.warning(  # at once: the run's error comes only when the other judges are done
            "judge=%s stopped: %s (its first %d calls failed to connect); the other judges go on",
            judge.id,
            run.breaker.cause,
            run.breaker.failures,
        )


async def _one_row(
    run: JudgeRun,
    client: LLMClient,
    limits: EndpointLimits,
    slots: anyio.Semaphore,
    row: Mapping[str, Any],
    row_id: Any,
    task: EvalTask,
    settings: RunSettings,
    store: RowStore,
    progress: Progress,
    judge_scope: anyio.CancelScope,
) -> None:
    try:
        samples = []
        for _ in range(settings.consistency):
            sample = await _ask(run, client, limits, row, row_id, task, settings, progress)
            if sample is None:
                break
            samples.append(sample)
            if run.breaker.tripped:
                break
        if len(samples) < settings.consistency:
            # The judge is stopping: a row with fewer answers than asked for is not done, and
            # saved it would be kept as if it were; left unasked, a later run asks it whole.
            if not run.breaker.tripped:  # the endpoint refused the request itself
                judge_scope.cancel()
            return
        values = samples[0] if len(samples) == 1 else majority(samples, task)
        assert values is not None, "consistency answers make a row"
        mark_started(run)
        store.append(values)  # synchronous: a cancellation cannot cut a row in half
        run.new_rows[row_id] = values
        progress.finished(run.judge.id, values.outcome)
    finally:
        slots.release()


async def _ask(
    run: JudgeRun,
    client: LLMClient,
    limits: EndpointLimits,
    row: Mapping[str, Any],
    row_id: Any,
    task: EvalTask,
    settings: RunSettings,
    progress: Progress,
    attempts_before: int = 0,
) -> ResultRow | None:
    """Call for one row, with retries; the row's values, or None when the judge must stop.

    When the judge's breaker trips meanwhile, a row that had failed attempts ends with its last
    failure (an error row naming the cause), and one not yet asked returns None (left unasked).
    """
    judge = run.judge
    method = run.method
    request = run.builders[method].build(row)
    attempts = attempts_before
    duration = 0.0
    response: ChatResponse | None = None
    failure: CallFailed | None = None
    last_failure: CallFailed | None = None

    async def attempt() -> ChatResponse:
        # An attempt counts (with its duration) when it ends with an answer or a failure; one
        # cancelled in flight (the breaker tripped) is not counted, as its row keeps the failure
        # of the attempt before.
        nonlocal attempts, duration, last_failure
        await limits.admit(request.estimated_tokens())
        async with limits.in_flight:
            begun = time.perf_counter()
            try:
                answer = await client.complete(request)
            except (CallFailed, EndpointRejected) as exc:
                attempts, duration = attempts + 1, time.perf_counter() - begun
                if isinstance(exc, CallFailed):
                    last_failure = exc
                run.breaker.record(exc)
                raise
            attempts, duration = attempts + 1, time.perf_counter() - begun
        run.breaker.record(None)
        return answer

    with run.breaker.guard() as guard:
        try:
            response = await call_with_retries(
                attempt,
                max_retries=settings.max_retries,
                backoff_base=settings.backoff_base,
                backoff_cap=settings.backoff_cap,
                describe=lambda: f"judge={judge.id} row={row_id!r}",
                on_retry=lambda: progress.retried(judge.id),
            )
        except CallFailed as exc:
            failure = exc
        except EndpointRejected as exc:
            if (
                method == "structured"
                and task.structured_outputs_fallback
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
                    run.method = "xml"
                return await _ask(
                    run, client, limits, row, row_id, task, settings, progress,
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
    return row_values(
        run, row_id, prompt_hash(request), method, task,
        attempts=attempts, duration=duration, response=response, failure=failure,
    )  # fmt: skip


def _finish(run: JudgeRun, ids: list[Any], task: EvalTask, data: EvalData) -> JudgeOutcome:
    """Merge kept and new rows in data order; a complete run also gets its table and state."""
    by_id = {**run.kept, **run.new_rows}
    ordered = [by_id[i] for i in ids if i in by_id]
    complete = len(ordered) == len(ids) and run.failure is None
    frame = rows_frame(ordered, task, data.data.schema[data.id_column])
    outcome = JudgeOutcome(run.judge.id, run.files.run_id, frame, complete)
    if run.unchanged or not (run.started or complete):
        return outcome  # nothing was asked: the files stay as they were
    if complete:
        run.files.write_table(frame)
    write_state(run, completed_at=now_iso() if complete else None, counts=count_outcomes(ordered))
    return outcome
