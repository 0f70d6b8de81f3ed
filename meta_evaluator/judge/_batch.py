"""The batch runner: a judge's rows through a provider's batch engine instead of live calls.

For each judge: reconnect to the batches its run already submitted (the ledger in the run
folder), submit the rows no batch holds yet in batches within the provider's limits (each
recorded before and after submission), then poll until every batch has ended, or until the
run's wait is over. An ended batch's results become rows like live answers do: parsed and
classified, failures as error rows with their reason, all in the row store at once.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any, TypeVar

import anyio

from meta_evaluator.errors import JudgeConfigError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge._judge_run import JudgeRun, majority, mark_started, row_values
from meta_evaluator.judge._progress import Progress
from meta_evaluator.judge._prompting import prompt_hash
from meta_evaluator.llm._classify import CallFailed, EndpointRejected
from meta_evaluator.llm._retry import call_with_retries
from meta_evaluator.llm.batch import BatchClient, BatchResult
from meta_evaluator.results.batches import BatchLedger, BatchRecord, new_batch_key
from meta_evaluator.results.row_store import RowStore
from meta_evaluator.results.runs import now_iso

__all__ = ["check_ledger", "plan_batches", "run_batch_judge"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_NO_RESULT_STATUS = {"expired": "batch_expired", "cancelled": "batch_canceled"}


def check_ledger(run: JudgeRun, *, batch: bool) -> None:
    """Refuse, before any call, what would pay for rows twice or mix configurations.

    Raises:
        JudgeConfigError: The run has batches still pending and this run is live (its rows
            would be asked again), or pending batches of another judge configuration.
    """
    if run.fresh_start:
        return  # resume=False: pending batches are abandoned (run_batch_judge says so)
    pending = BatchLedger(run.files).pending()
    if not pending:
        return
    rows = sum(len(record.ids) for record in pending)
    where = f"run {run.files.run_id!r} of judge {run.judge.id!r}"
    if not batch:
        raise JudgeConfigError(
            f"{where} has {rows} rows in {len(pending)} submitted batch(es) "
            f"({', '.join(r.batch_id or r.key for r in pending)}); run with batch=True "
            "(--batch) to collect them, or start another run_id.",
            judge_id=run.judge.id,
            field="batch",
        )
    other = [r for r in pending if r.fingerprint != run.fingerprint]
    if other:
        raise JudgeConfigError(
            f"{where} has batches submitted with another configuration of the judge "
            f"({', '.join(r.batch_id or r.key for r in other)}); collect them with that "
            "configuration first, or start another run_id.",
            judge_id=run.judge.id,
            field="run_id",
        )


def plan_batches(
    sizes: Sequence[int], *, max_requests: int, max_bytes: int
) -> list[tuple[int, int]]:
    """Split lines of `sizes` bytes into consecutive (start, stop) batches within both limits.

    A line larger than `max_bytes` still gets a batch of its own (the provider then refuses it,
    which the row's outcome says).
    """
    batches = []
    start, total = 0, 0
    for index, size in enumerate(sizes):
        if index > start and (index - start >= max_requests or total + size + 1 > max_bytes):
            batches.append((start, index))
            start, total = index, 0
        total += size + 1
    if start < len(sizes):
        batches.append((start, len(sizes)))
    return batches


async def run_batch_judge(
    run: JudgeRun,
    client: BatchClient,
    rows: list[dict[str, Any]],
    ids: list[Any],
    task: EvalTask,
    *,
    answers_per_row: int,
    max_retries: int,
    backoff_base: float,
    backoff_cap: float,
    poll_interval: float,
    wait: float | None,
    progress: Progress,
    cancel: bool = False,
) -> None:
    """Submit, reconnect to, wait for and collect one judge's batches (see the module).

    With `cancel`, the run's pending batches are canceled instead and nothing new is
    submitted; what they answered before stopping is collected, the rest become error rows
    (`batch_canceled`) that `retry=["error"]` asks again.
    """
    judge = run.judge
    progress.add_judge(judge.id, total=len(ids), done=len(run.kept))
    ledger = BatchLedger(run.files)
    if run.unchanged or not (run.todo or run.seeded or ledger.pending()):
        return
    if run.fresh_start:
        run.files.rows.unlink(missing_ok=True)
        for record in ledger.pending():
            logger.warning(
                "judge=%s: resume=False abandons batch %s (%d rows); its results are not read",
                judge.id,
                record.batch_id or record.key,
                len(record.ids),
            )
            ledger.write(record.update(status="abandoned", finished_at=now_iso()))

    async def retried(call: Callable[[], Awaitable[T]], what: str) -> T:
        return await call_with_retries(
            call,
            max_retries=max_retries,
            backoff_base=backoff_base,
            backoff_cap=backoff_cap,
            describe=lambda: f"judge={judge.id} {what}",
            on_retry=lambda: progress.retried(judge.id),
        )

    with RowStore(run.files.rows) as store:
        if run.seeded:
            for values in run.kept.values():
                store.append(values)
            mark_started(run)
        try:
            pending = await _reconnect(run, client, ledger, retried)
            if cancel:
                for record in pending:
                    assert record.batch_id is not None
                    await retried(partial(client.cancel, record.batch_id), "cancel")
                    logger.warning(
                        "judge=%s: canceled batch %s (%d rows)",
                        judge.id,
                        record.batch_id,
                        len(record.ids),
                    )
            else:
                waiting = {row_id for record in pending for row_id in record.ids}
                todo = [index for index in run.todo if ids[index] not in waiting]
                pending += await _submit(
                    run, client, ledger, rows, ids, todo, answers_per_row, retried
                )
            await _wait(
                run, client, ledger, pending, task, store, progress, retried, poll_interval, wait
            )
        except (CallFailed, EndpointRejected) as exc:
            _fail(run, f"{client.provider} batch API failed ({exc})")


async def _reconnect(
    run: JudgeRun,
    client: BatchClient,
    ledger: BatchLedger,
    retried: Callable[[Callable[[], Awaitable[Any]], str], Awaitable[Any]],
) -> list[BatchRecord]:
    """The run's pending batches, each with its provider id (found again if it was lost)."""
    records = ledger.records()
    known = {r.batch_id for r in records if r.batch_id}
    pending = []
    for record in records:
        if not record.pending:
            continue
        if record.batch_id is None:  # killed between submitting and saving the id
            found = await retried(
                partial(client.find, record.key, record.submitted_at, _requests(record), known),
                f"find batch {record.key}",
            )
            if found is None:
                logger.warning(
                    "judge=%s: batch %s was not found at the provider (it was never created); "
                    "its %d rows are submitted again",
                    run.judge.id,
                    record.key,
                    len(record.ids),
                )
                ledger.write(record.update(status="abandoned", message="not found at the provider"))
                continue
            record = record.update(status="submitted", batch_id=found)
            ledger.write(record)
            known.add(found)
        logger.info(
            "judge=%s: reconnecting to batch %s (%d rows)",
            run.judge.id,
            record.batch_id,
            len(record.ids),
        )
        pending.append(record)
    return pending


def _requests(record: BatchRecord) -> int:
    return len(record.ids) * record.answers_per_row


async def _submit(
    run: JudgeRun,
    client: BatchClient,
    ledger: BatchLedger,
    rows: list[dict[str, Any]],
    ids: list[Any],
    todo: list[int],
    answers_per_row: int,
    retried: Callable[[Callable[[], Awaitable[Any]], str], Awaitable[Any]],
) -> list[BatchRecord]:
    """Submit the `todo` rows in as few batches as the provider's limits allow."""
    if not todo:
        return []
    builder = run.builders[run.method]
    bodies: list[bytes] = []
    hashes: list[str] = []
    for index in todo:  # one pass: only each body's bytes and hash are kept
        request = builder.build(rows[index])
        bodies.append(client.encode(request))
        hashes.append(prompt_hash(request))
    # A line is its body plus a custom id of at most this many bytes, and a little framing.
    id_bytes = len(f"{new_batch_key()}-{len(todo)}-{answers_per_row}")
    framing = len(client.line("x" * id_bytes, b""))
    plan = plan_batches(
        # plan_batches adds one newline per entry; a row sends answers_per_row lines
        [(len(body) + framing + 1) * answers_per_row - 1 for body in bodies],
        max_requests=max(1, client.max_requests // answers_per_row),
        max_bytes=client.max_bytes,
    )
    submitted = []
    for start, stop in plan:
        record = BatchRecord(
            key=new_batch_key(),
            provider=client.provider,
            fingerprint=run.fingerprint,
            submitted_at=now_iso(),
            ids=[ids[index] for index in todo[start:stop]],
            prompt_hashes=hashes[start:stop],
            answers_per_row=answers_per_row,
        )
        lines = []
        for row in range(stop - start):
            body, bodies[start + row] = bodies[start + row], b""  # it lives on in its line only
            lines += [client.line(record.custom_id(row, k), body) for k in range(answers_per_row)]
        mark_started(run)
        ledger.write(record)  # before the call: a kill mid-submission can still be found
        began = time.perf_counter()
        try:
            done = await retried(partial(client.submit, lines, record.key), "submit")
        except EndpointRejected as exc:
            ledger.write(record.update(status="failed", message=str(exc), finished_at=now_iso()))
            raise
        record = record.update(
            status="submitted", batch_id=done.batch_id, input_file_id=done.input_file_id
        )
        ledger.write(record)
        logger.info(
            "judge=%s: submitted batch %s: %d rows, %d requests, %.1f MB in %.1f s",
            run.judge.id,
            done.batch_id,
            len(record.ids),
            len(lines),
            sum(len(line) + 1 for line in lines) / 1e6,
            time.perf_counter() - began,
        )
        submitted.append(record)
    return submitted


async def _wait(
    run: JudgeRun,
    client: BatchClient,
    ledger: BatchLedger,
    pending: list[BatchRecord],
    task: EvalTask,
    store: RowStore,
    progress: Progress,
    retried: Callable[[Callable[[], Awaitable[Any]], str], Awaitable[Any]],
    poll_interval: float,
    wait: float | None,
) -> None:
    """Poll every pending batch until it ends (collecting it) or the wait is over."""
    deadline = math.inf if wait is None else time.monotonic() + wait
    seen: dict[str, dict[str, int]] = {}
    while pending:
        for record in list(pending):
            assert record.batch_id is not None
            status = await retried(
                partial(client.status, record.batch_id), f"poll {record.batch_id}"
            )
            if status.state == "running":
                if seen.get(record.key) != status.counts:
                    seen[record.key] = status.counts
                    logger.info(
                        "judge=%s: batch %s %s %s",
                        run.judge.id,
                        record.batch_id,
                        status.provider_status,
                        status.counts,
                    )
                continue
            pending.remove(record)
            if status.state == "failed":
                ledger.write(
                    record.update(
                        status="failed",
                        provider_status=status.provider_status,
                        counts=status.counts,
                        message=status.message,
                        finished_at=now_iso(),
                    )
                )
                _fail(
                    run,
                    f"{client.provider} refused batch {record.batch_id} ({status.message}); its "
                    f"{len(record.ids)} rows stay to do: fix the judge, then run again",
                )
                continue
            results = await retried(
                partial(client.results, record.batch_id), f"download {record.batch_id}"
            )
            _collect(run, record, status.provider_status, results, task, store, progress)
            ledger.write(
                record.update(
                    status="collected",
                    provider_status=status.provider_status,
                    counts=status.counts,
                    finished_at=now_iso(),
                )
            )
        if not pending:
            return
        left = deadline - time.monotonic()
        if left <= 0:
            logger.warning(
                "judge=%s: %d batch(es) still running (%s); run again to collect them",
                run.judge.id,
                len(pending),
                ", ".join(str(r.batch_id) for r in pending),
            )
            return
        await anyio.sleep(min(poll_interval, left))


def _collect(
    run: JudgeRun,
    record: BatchRecord,
    provider_status: str,
    results: list[BatchResult],
    task: EvalTask,
    store: RowStore,
    progress: Progress,
) -> None:
    """Every row of an ended batch into the row store: answers classified, failures as errors."""
    found: dict[tuple[int, int], BatchResult] = {}
    strangers = 0
    for result in results:
        where = record.locate(result.custom_id)
        if where is None:
            strangers += 1
        else:
            found[where] = result
    if strangers:
        logger.warning(
            "judge=%s: batch %s returned %d results with custom ids it was not sent; ignored",
            run.judge.id,
            record.batch_id,
            strangers,
        )
    missing = CallFailed(
        f"batch {record.batch_id} ({provider_status}) holds no result for this request",
        status=_NO_RESULT_STATUS.get(provider_status, "batch_failed"),  # type: ignore[arg-type]
    )
    counts = {"valid": 0, "invalid": 0, "error": 0}
    for row, (row_id, request_hash) in enumerate(
        zip(record.ids, record.prompt_hashes, strict=True)
    ):
        samples = []
        for answer in range(record.answers_per_row):
            got = found.get((row, answer))
            values = row_values(
                run,
                row_id,
                request_hash,
                run.method,
                task,
                attempts=1,
                duration=None,
                response=got.response if got is not None else None,
                failure=missing if got is None else got.failure,
            )
            values["batch_id"] = record.batch_id
            samples.append(values)
        merged = samples[0] if len(samples) == 1 else majority(samples, task)
        assert merged is not None
        store.append(merged)
        run.new_rows[row_id] = merged
        counts[merged["outcome"]] = counts.get(merged["outcome"], 0) + 1
        progress.finished(run.judge.id, merged["outcome"])
    logger.info(
        "judge=%s: collected batch %s (%s): %s",
        run.judge.id,
        record.batch_id,
        provider_status,
        counts,
    )


def _fail(run: JudgeRun, message: str) -> None:
    if run.failure is None:
        run.failure = f"judge {run.judge.id!r}: {message}"
        logger.error("%s", run.failure)
