"""The batch runner: a judge's rows through a provider's batch engine instead of live calls.

For each judge: reconnect to the batches its run already submitted (the ledger in the run
folder), submit the rows no batch holds yet in batches within the provider's limits (each
recorded before and after submission), then poll until every batch has ended, or until the
run's wait is over. An ended batch's results become rows like live answers do: parsed and
classified, failures as error rows with their reason, all in the row store at once.

Never paying twice is the rule every step follows: a create request that fails in a way that
may have reached the provider is followed by a look for the batch before any new attempt, and
a batch that cannot be told apart from others stops the judge with a message rather than being
submitted again.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio

from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge._judge_run import (
    JudgeRun,
    majority,
    mark_started,
    row_values,
    start_over,
    write_skipped,
)
from meta_evaluator.judge._progress import Progress
from meta_evaluator.judge._prompting import RequestBuilder, prompt_hash
from meta_evaluator.judge.batch_ledger import (
    BatchLedger,
    BatchRecord,
    batch_names,
    known_batch_ids,
    new_batch_key,
)
from meta_evaluator.judge.result_row import count_outcomes
from meta_evaluator.judge.row_store import RowStore
from meta_evaluator.judge.run_files import now_iso
from meta_evaluator.judge.settings import RunSettings
from meta_evaluator.llm.batch import BatchClient, BatchNotIdentified, BatchResult
from meta_evaluator.llm.classify import CallFailed, EndpointRejected, classify
from meta_evaluator.llm.retry import backoff_seconds, call_with_retries

__all__ = [
    "PreparedBatch",
    "plan_batches",
    "prepare_batches",
    "run_batch_judge",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_NO_RESULT_STATUS = {"expired": "batch_expired", "cancelled": "batch_canceled"}


def plan_batches(
    sizes: Iterable[int], *, max_requests: int, max_bytes: int
) -> Iterator[tuple[int, int]]:
    """Split lines of `sizes` bytes into consecutive (start, stop) batches within both limits.

    Each batch is yielded as soon as the next line does not fit it, so `sizes` may be computed
    while batches are being sent. A line larger than `max_bytes` still gets a batch of its own
    (the provider then refuses it, which the row's outcome says).
    """
    start, count, total = 0, 0, 0
    for index, size in enumerate(sizes):
        if count and (count >= max_requests or total + size + 1 > max_bytes):
            yield start, index
            start, count, total = index, 0, 0
        count += 1
        total += size + 1
    if count:
        yield start, start + count


@dataclass
class PreparedBatch:
    """Rows turned into one batch's request bodies, within the provider's limits."""

    positions: list[int] = field(default_factory=list)
    """Where the rows are in the sequence given to `prepare_batches`."""
    bodies: list[bytes] = field(default_factory=list)
    """Each row's encoded request body (sent `answers_per_row` times)."""
    hashes: list[str] = field(default_factory=list)
    """Each row's `prompt_hash`."""
    line_bytes: list[int] = field(default_factory=list)
    """Each row's bytes in the batch: its lines and their newlines (an upper bound)."""


def prepare_batches(
    client: BatchClient,
    builder: RequestBuilder,
    rows: Sequence[Mapping[str, Any]],
    per_row: int,
    *,
    keep_bodies: bool = True,
) -> Iterator[PreparedBatch]:
    """The rows' requests, built, encoded and hashed once each, one batch at a time.

    Batches are yielded as they fill (`plan_batches`), so only about one batch's bodies are
    held at a time; `keep_bodies=False` counts without keeping them.
    """
    # A line is its body plus a custom id of at most this many bytes, and a little framing.
    id_bytes = len(f"{new_batch_key()}-{len(rows)}-{per_row}")
    framing = len(client.line("x" * id_bytes, b""))
    waiting = PreparedBatch()  # rows encoded, not yet yielded in a batch

    def sizes() -> Iterator[int]:
        for position, row in enumerate(rows):
            request = builder.build(row)
            body = client.encode(request)
            size = (len(body) + framing + 1) * per_row
            waiting.positions.append(position)
            waiting.bodies.append(body if keep_bodies else b"")
            waiting.hashes.append(prompt_hash(request))
            waiting.line_bytes.append(size)
            yield size - 1  # plan_batches adds the last newline itself

    limit = max(1, client.max_requests // per_row)
    for start, stop in plan_batches(sizes(), max_requests=limit, max_bytes=client.max_bytes):
        count = stop - start
        yield PreparedBatch(
            waiting.positions[:count],
            waiting.bodies[:count],
            waiting.hashes[:count],
            waiting.line_bytes[:count],
        )
        for part in (waiting.positions, waiting.bodies, waiting.hashes, waiting.line_bytes):
            del part[:count]


async def run_batch_judge(
    run: JudgeRun,
    client: BatchClient,
    rows: Sequence[Mapping[str, Any]],
    ids: Sequence[Any],
    task: EvalTask,
    settings: RunSettings,
    progress: Progress,
) -> None:
    """Submit, reconnect to, wait for and collect one judge's batches (see the module).

    With `settings.cancel_batches`, the run's pending batches are canceled instead and nothing
    new is submitted; what they answered before stopping is collected, the rest become error rows
    (`batch_canceled`) that `retry=["error"]` asks again.
    """
    progress.add_judge(run.judge.id, total=len(ids), kept=count_outcomes(run.kept.values()))
    ledger = BatchLedger(run.files)
    pending = [] if run.plan.unchanged else ledger.pending()
    if run.plan.unchanged or not (run.plan.todo or run.plan.seeded or pending):
        return
    if run.plan.fresh_start:
        start_over(run)  # the plan made sure no batch is pending
    with RowStore(run.files.rows, root=run.files.root) as store:
        job = _BatchJob(run, client, ledger, store, task, settings, progress, rows, ids)
        if run.plan.seeded:
            for values in run.kept.values():
                store.append(values)
            mark_started(run)
        try:
            pending = await job.reconnect(pending)
            if settings.cancel_batches:
                await job.cancel(pending)
            else:
                waiting = {row_id for record in pending for row_id in record.ids}
                asked, skipped = run.plan.to_ask(ids)
                write_skipped(run, store, [ids[i] for i in skipped if ids[i] not in waiting],
                              progress)  # fmt: skip
                todo = [index for index in asked if ids[index] not in waiting]
                pending += await job.submit(todo)
            await job.wait(pending)
        except (CallFailed, EndpointRejected) as exc:
            job.fail(f"{client.provider} batch API failed ({exc})")
        except BatchNotIdentified as exc:
            job.fail(str(exc))


class _BatchJob:
    """One judge's batch work in one call: the run, its client, ledger and row store."""

    def __init__(
        self,
        run: JudgeRun,
        client: BatchClient,
        ledger: BatchLedger,
        store: RowStore,
        task: EvalTask,
        settings: RunSettings,
        progress: Progress,
        rows: Sequence[Mapping[str, Any]],
        ids: Sequence[Any],
    ) -> None:
        self.run, self.client, self.ledger, self.store = run, client, ledger, store
        self.task, self.settings, self.progress = task, settings, progress
        self.rows, self.ids = rows, ids
        self.results_dir: Path = run.files.rows.parent.parent
        self.submitted_here: set[str] = set()
        """Keys of the batches this call submitted: their rows cannot have changed since."""

    async def retried(self, call: Callable[[], Awaitable[T]], what: str) -> T:
        """`call()` with the run's retries of failures that may pass (429, 5xx, timeouts)."""
        return await call_with_retries(
            call,
            max_retries=self.settings.max_retries,
            backoff_base=self.settings.backoff_base,
            backoff_cap=self.settings.backoff_cap,
            describe=lambda: f"judge={self.run.judge.id} {what}",
            on_retry=lambda: self.progress.retried(self.run.judge.id),
        )

    def fail(self, message: str) -> None:
        """Record why the judge stopped (the first reason wins); the run raises it at the end."""
        if self.run.failure is None:
            self.run.failure = f"judge {self.run.judge.id!r}: {message}"
            logger.error("%s", self.run.failure)

    # -- reconnecting

    async def reconnect(self, records: list[BatchRecord]) -> list[BatchRecord]:
        """The run's pending `records`, each with its provider id (found again if lost).

        Raises:
            BatchNotIdentified: A lost batch matches several batches at the provider.
        """
        pending = []
        for record in records:
            if record.batch_id is None:  # killed between submitting and saving the id
                found = await self.find(record)
                if found is None:
                    logger.warning(
                        "judge=%s: batch %s was not found at the provider (it was never "
                        "created); its %d rows are submitted again",
                        self.run.judge.id,
                        record.key,
                        len(record.ids),
                    )
                    self.ledger.write(
                        record.update(
                            status="abandoned",
                            message="not found at the provider",
                            finished_at=now_iso(),
                        )
                    )
                    continue
                record = record.update(status="submitted", batch_id=found)
                self.ledger.write(record)
            logger.info(
                "judge=%s: reconnecting to batch %s (%d rows)",
                self.run.judge.id,
                record.batch_id,
                len(record.ids),
            )
            pending.append(record)
        return pending

    async def find(self, record: BatchRecord) -> str | None:
        """The provider's id of `record`'s batch, if it was created; never another's."""
        known = known_batch_ids(self.results_dir)
        requests = len(record.ids) * record.answers_per_row
        try:
            found: str | None = await self.retried(
                partial(self.client.find, record.key, record.submitted_at, requests, known),
                f"find batch {record.key}",
            )
        except BatchNotIdentified as exc:
            raise BatchNotIdentified(f"{exc} The record: {self.ledger.path(record.key)}") from exc
        return found

    # -- submitting

    async def submit(self, todo: list[int]) -> list[BatchRecord]:
        """Submit the `todo` rows in as few batches as the provider's limits allow."""
        if not todo:
            return []
        client, per_row = self.client, self.settings.consistency
        submitted = []
        builder = self.run.builders[self.run.method]
        for prepared in prepare_batches(client, builder, [self.rows[i] for i in todo], per_row):
            record = BatchRecord(
                key=new_batch_key(),
                provider=client.provider,
                fingerprint=self.run.fingerprint,
                submitted_at=now_iso(),
                ids=[self.ids[todo[position]] for position in prepared.positions],
                prompt_hashes=prepared.hashes,
                answers_per_row=per_row,
            )
            lines = []
            bodies = prepared.bodies
            for row in range(len(bodies)):
                body, bodies[row] = bodies[row], b""  # it lives on in its lines only
                lines += [client.line(record.custom_id(row, k), body) for k in range(per_row)]
            mark_started(self.run)
            self.ledger.write(record)  # before any call: a kill mid-submission is found again
            began = time.perf_counter()
            try:
                file_id = await self.retried(partial(client.upload, lines, record.key), "upload")
                record = record.update(input_file_id=file_id)
                self.ledger.write(record)
                batch_id = await self.create(record, lines)
            except EndpointRejected as exc:
                self.ledger.write(
                    record.update(status="failed", message=str(exc), finished_at=now_iso())
                )
                raise
            record = record.update(status="submitted", batch_id=batch_id)
            self.ledger.write(record)
            self.submitted_here.add(record.key)
            logger.info(
                "judge=%s: submitted batch %s: %d rows, %d requests, %.1f MB in %.1f s",
                self.run.judge.id,
                batch_id,
                len(record.ids),
                len(lines),
                sum(len(line) + 1 for line in lines) / 1e6,
                time.perf_counter() - began,
            )
            submitted.append(record)
        return submitted

    async def create(self, record: BatchRecord, lines: list[bytes]) -> str:
        """Create the batch, looking for it after a failure before asking again.

        A failure may have reached the provider (a lost answer); creating again would make a
        second batch, paid twice.

        Raises:
            CallFailed: The last attempt failed (the record stays `submitting`: the next run
                looks for the batch again).
            BatchNotIdentified: After a failure, several batches at the provider could be it.
        """
        attempt = 0
        while True:
            try:
                return await self.client.create(lines, record.key, record.input_file_id)
            except CallFailed as exc:
                attempt += 1
                if not classify(exc).retry or attempt > self.settings.max_retries:
                    raise
                wait = backoff_seconds(
                    attempt, exc, base=self.settings.backoff_base, cap=self.settings.backoff_cap
                )
                logger.info(
                    "judge=%s create batch %s attempt=%d failed (%s); looking for it in %.1fs",
                    self.run.judge.id,
                    record.key,
                    attempt,
                    exc.status,
                    wait,
                )
                self.progress.retried(self.run.judge.id)
                await anyio.sleep(wait)
                found = await self.find(record)
                if found is not None:
                    return found

    # -- canceling

    async def cancel(self, pending: list[BatchRecord]) -> None:
        """Ask the provider to stop each pending batch that is still running."""
        for record in pending:
            assert record.batch_id is not None
            try:
                status = await self.retried(partial(self.client.status, record.batch_id), "poll")
            except (CallFailed, EndpointRejected) as exc:
                self.fail(self.unreachable(record, exc))
                continue  # wait() reports it again and goes on with the others
            if status.state != "running":
                continue  # ended or failed already: nothing to stop, its results are read
            try:
                await self.retried(partial(self.client.cancel, record.batch_id), "cancel")
            except EndpointRejected as exc:  # it ended in between: the provider refuses
                logger.warning("judge=%s: batch %s: %s", self.run.judge.id, record.batch_id, exc)
                continue
            logger.warning(
                "judge=%s: canceled batch %s (%d rows)",
                self.run.judge.id,
                record.batch_id,
                len(record.ids),
            )

    # -- waiting and collecting

    async def wait(self, pending: list[BatchRecord]) -> None:
        """Poll every pending batch until it ends (collecting it) or the wait is over.

        A batch that cannot be polled or read (the provider no longer knows it, or keeps
        failing) is left pending and reported; the others go on.
        """
        wait = self.settings.batch_wait
        deadline = math.inf if wait is None else time.monotonic() + wait
        seen: dict[str, dict[str, int]] = {}
        while pending:
            for record in list(pending):
                try:
                    done = await self.visit(record, seen)
                except (CallFailed, EndpointRejected) as exc:
                    pending.remove(record)
                    self.fail(self.unreachable(record, exc))
                    continue
                if done:
                    pending.remove(record)
            if not pending:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                logger.warning(
                    "judge=%s: %d batch(es) still running (%s); run again to collect them",
                    self.run.judge.id,
                    len(pending),
                    batch_names(pending),
                )
                return
            await anyio.sleep(min(self.settings.batch_poll_interval, left))

    def unreachable(self, record: BatchRecord, exc: Exception) -> str:
        """What to tell the user about a batch that could not be polled or read."""
        if isinstance(exc, EndpointRejected) and exc.http_status == 404:
            return (
                f"the provider no longer knows batch {record.batch_id} ({exc}); it may have "
                "been deleted, its results expired, or it was made with another key. Its "
                f"{len(record.ids)} rows stay pending in {self.ledger.path(record.key)}: with "
                'the right key, run again; to give them up, set its "status" to "abandoned" '
                "there (they are then asked again, and paid again)."
            )
        return (
            f"batch {record.batch_id} could not be polled or read ({exc}); it stays pending: "
            "run again to reconnect"
        )

    async def visit(self, record: BatchRecord, seen: dict[str, dict[str, int]]) -> bool:
        """Look at one batch; collect it if it has ended. True when it needs no more looks."""
        assert record.batch_id is not None
        judge_id = self.run.judge.id
        status = await self.retried(partial(self.client.status, record.batch_id), "poll")
        if status.state == "running":
            if seen.get(record.key) != status.counts:
                seen[record.key] = status.counts
                logger.info(
                    "judge=%s: batch %s %s %s",
                    judge_id,
                    record.batch_id,
                    status.provider_status,
                    status.counts,
                )
            return False
        if status.state == "failed":
            self.ledger.write(
                record.update(
                    status="failed",
                    provider_status=status.provider_status,
                    counts=status.counts,
                    message=status.message,
                    finished_at=now_iso(),
                )
            )
            self.fail(
                f"{self.client.provider} refused batch {record.batch_id} ({status.message}); "
                f"its {len(record.ids)} rows stay to do: fix the judge (model, prompt, "
                "settings), or for a quota error wait, then run again"
            )
            return True
        results = await self.retried(
            partial(self.client.results, record.batch_id), f"download {record.batch_id}"
        )
        if results and not any(record.locate(result.custom_id) for result in results):
            # Every result belongs to another batch: a lost batch was matched wrongly.
            self.ledger.write(
                record.update(
                    status="failed",
                    message="its results carry another batch's custom ids",
                    finished_at=now_iso(),
                )
            )
            self.fail(
                f"batch {record.batch_id} holds another batch's results, so it is not this "
                f"run's; its {len(record.ids)} rows stay to do: run again to submit them"
            )
            return True
        self.collect(record, status.provider_status, results)
        self.store.sync()  # the rows are on disk before the ledger says they were collected
        self.ledger.write(
            record.update(
                status="collected",
                provider_status=status.provider_status,
                counts=status.counts,
                finished_at=now_iso(),
            )
        )
        return True

    def collect(
        self, record: BatchRecord, provider_status: str, results: list[BatchResult]
    ) -> None:
        """Every row of an ended batch into the row store: answers classified, failures errors.

        A row whose prompt changed since it was sent is stored but stays to do.
        """
        run, task = self.run, self.task
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
        current = {} if record.key in self.submitted_here else self.current_hashes(record)
        counts = {"valid": 0, "invalid": 0, "error": 0}
        changed = 0
        for row, (row_id, sent) in enumerate(zip(record.ids, record.prompt_hashes, strict=True)):
            samples = []
            for answer in range(record.answers_per_row):
                got = found.get((row, answer))
                values = row_values(
                    run,
                    row_id,
                    sent,
                    run.method,
                    task,
                    attempts=1,
                    duration=None,
                    response=got.response if got is not None else None,
                    failure=missing if got is None else got.failure,
                    batch_id=record.batch_id,
                )
                samples.append(values)
            merged = samples[0] if len(samples) == 1 else majority(samples, task)
            assert merged is not None
            self.store.append(merged)
            if current.get(row_id, sent) != sent:
                changed += 1  # answered for a prompt the data no longer has: asked again
                continue
            run.new_rows[row_id] = merged
            counts[merged.outcome] = counts.get(merged.outcome, 0) + 1
            self.progress.finished(run.judge.id, merged.outcome)
        logger.info(
            "judge=%s: collected batch %s (%s): %s",
            run.judge.id,
            record.batch_id,
            provider_status,
            counts,
        )
        if changed:
            logger.warning(
                "judge=%s: %d rows of batch %s changed since they were submitted; their "
                "answers are kept in the row store, and the rows are asked again by the next "
                "run",
                run.judge.id,
                changed,
                record.batch_id,
            )

    def current_hashes(self, record: BatchRecord) -> dict[Any, str]:
        """What would be sent now for the record's rows that are still in the data."""
        wanted = set(record.ids)
        builder = self.run.builders[self.run.method]
        return {
            row_id: prompt_hash(builder.build(row))
            for row, row_id in zip(self.rows, self.ids, strict=True)
            if row_id in wanted
        }
