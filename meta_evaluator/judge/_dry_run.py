"""A run's plan in figures: what a dry run prints, worked out without calling or writing.

The figures come from the `RunPlan` the run itself executes, so a dry run and the run that
follows pick the same run to continue, reuse the same rows and ask the same ones.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import httpx

from meta_evaluator.judge._batch import prepare_batches
from meta_evaluator.judge._clients import build_batch_client, build_client, request_keys
from meta_evaluator.judge._parse import parse_answer
from meta_evaluator.judge._prompting import RequestBuilder
from meta_evaluator.judge.plan import JudgePlan, RunAction, RunPlan
from meta_evaluator.llm.cache import ResponseCache
from meta_evaluator.llm.prices import PICO
from meta_evaluator.llm.spend import reserved_tokens

__all__ = ["JudgeSummary", "RunSummary", "summarize"]


@dataclass(frozen=True)
class JudgeSummary:
    """What one judge's part of a run would do, in figures (a dry run prints it)."""

    judge_id: str
    llm_client: str
    model: str
    base_url: str
    """Where calls would go (the provider's default URL when the judge names none); no key."""
    rows: int
    """Rows in the data (in the shard, for a sharded run)."""
    reused: int
    """Rows already answered, with the same judge fingerprint, that would be kept."""
    calls: int
    """Calls to make before any retry: rows to ask times answers per row (consistency), less
    the answers the response cache holds."""
    estimated_tokens: int
    """Sum of `ChatRequest.estimated_tokens()` over the calls: prompt plus answer allowance."""
    action: RunAction
    """What happens to the judge's run (see `RunAction`)."""
    run_id: str | None
    """The run that would be written or continued; None for a new run (its id is made then)."""
    source_run_id: str | None
    """The run whose rows would be reused (the same as `run_id` when continuing one)."""
    in_batches: int = 0
    """Rows in batches the run already submitted: collected, not asked again (batch runs)."""
    batch: bool = False
    """Whether the rows would go through the provider's batch engine."""
    batches: int = 0
    """Batches the rows to ask would fill (within the provider's limits), for a batch run."""
    batch_bytes: int = 0
    """Bytes of request lines those batches would send."""
    estimated_cost: float | None = None
    """With `max_cost`: US dollars the calls would cost at the estimate the ceiling reserves
    (`spend.reserved_tokens`: not a bound); 0 for a mock judge; None without a ceiling."""
    from_cache: int = 0
    """Answers the response cache holds for the rows to ask: taken from it, not called."""
    base_url_from: str | None = None
    """The environment variable that set `base_url` (the judge gives none), if one did."""


@dataclass(frozen=True)
class RunSummary:
    """Every judge's summary, the judges refused, and the totals."""

    judges: list[JudgeSummary]
    max_retries: int
    """Retries after the first attempt: failed calls may add up to this many calls each."""
    refused: list[str]
    """One line per judge that would make no call (its key cannot be read), saying why."""
    max_cost: float | None = None
    """The run's cost ceiling, if any."""

    @property
    def rows(self) -> int:
        """Rows over all judges."""
        return sum(j.rows for j in self.judges)

    @property
    def reused(self) -> int:
        """Reused rows over all judges."""
        return sum(j.reused for j in self.judges)

    @property
    def calls(self) -> int:
        """Calls over all judges, before retries."""
        return sum(j.calls for j in self.judges)

    @property
    def from_cache(self) -> int:
        """Answers from the response cache over all judges."""
        return sum(j.from_cache for j in self.judges)

    @property
    def estimated_tokens(self) -> int:
        """Estimated tokens over all judges."""
        return sum(j.estimated_tokens for j in self.judges)

    @property
    def estimated_cost(self) -> float | None:
        """Estimated US dollars over all judges, with `max_cost`; None without."""
        if self.max_cost is None:
            return None
        return sum(j.estimated_cost or 0.0 for j in self.judges)


def summarize(plan: RunPlan) -> RunSummary:
    """Each judge's figures: rows, reused, calls, estimated tokens, batches, answers cached.

    Reads the response cache (read-only) for the judges that use it; writes nothing.
    """
    settings = plan.settings
    summaries = []
    encoder = _Encoder()
    cache = ResponseCache.peek(settings.cache_dir) if settings.cache else None
    for judge_plan in plan.judges:
        judge = judge_plan.judge
        todo = [] if judge_plan.batch and settings.cancel_batches else judge_plan.todo
        todo = [index for index in todo if plan.ids[index] not in judge_plan.waiting]
        todo = [index for index in todo if plan.ids[index] not in judge_plan.skipped]
        builder = RequestBuilder(judge, plan.task, judge_plan.method)
        asked, cached = _calls(plan, judge_plan, builder, todo, cache, encoder)
        requests = [(builder.build(plan.rows[index]), n) for index, n in asked if n]
        tokens = sum(request.estimated_tokens() * n for request, n in requests)
        cost: float | None = None
        if settings.max_cost is not None:  # answers from the cache reserve nothing
            price = plan.prices.get(judge.id)
            units = sum(price.units(*reserved_tokens(r)) * n for r, n in requests) if price else 0
            cost = units / PICO
        batches, batch_bytes = 0, 0
        if judge_plan.batch and todo:
            for prepared in prepare_batches(
                build_batch_client(judge, encoder.http, None, timeout=60.0),
                builder,
                [plan.rows[index] for index in todo],
                settings.consistency,
                keep_bodies=False,
            ):
                batches, batch_bytes = batches + 1, batch_bytes + sum(prepared.line_bytes)
        action = judge_plan.action
        summaries.append(
            JudgeSummary(
                judge_id=judge.id,
                llm_client=judge.llm_client,
                model=judge.model,
                base_url=judge_plan.endpoint.base_url,
                base_url_from=judge_plan.base_url_from,
                rows=len(plan.ids),
                reused=len(judge_plan.kept),
                calls=len(todo) * settings.consistency - cached,
                estimated_tokens=tokens,
                action=action,
                run_id=None if action == "new" else judge_plan.run_id,
                source_run_id=judge_plan.source_run_id,
                in_batches=sum(
                    1 for index in judge_plan.todo if plan.ids[index] in judge_plan.waiting
                ),
                batch=judge_plan.batch,
                batches=batches,
                batch_bytes=batch_bytes,
                estimated_cost=cost,
                from_cache=cached,
            )
        )
    if cache is not None:
        cache.close()
    refused = [exc.message for exc in plan.refused]
    return RunSummary(summaries, settings.max_retries, refused, settings.max_cost)


class _Encoder:
    """An HTTP client made once, when first needed, only to build clients; it never sends.

    (Each costs about 50 ms to make: its TLS setup.)
    """

    @functools.cached_property
    def http(self) -> httpx.AsyncClient:
        """The client."""
        return httpx.AsyncClient()


def _calls(
    plan: RunPlan,
    judge_plan: JudgePlan,
    builder: RequestBuilder,
    todo: list[int],
    cache: ResponseCache | None,
    encoder: _Encoder,
) -> tuple[list[tuple[int, int]], int]:
    """(each row to ask with its calls, the answers the cache holds): as the run would count.

    A stored answer counts unless its row's outcome is one `retry` names (asked again).
    """
    settings, judge = plan.settings, judge_plan.judge
    samples = settings.consistency
    keys = None
    if cache is not None and judge.cache and not judge_plan.batch and judge.llm_client != "mock":
        keys = request_keys(
            judge, build_client(judge, encoder.http, None, timeout=settings.timeout)
        )
    if keys is None or cache is None:
        return [(index, samples) for index in todo], 0
    asked, cached = [], 0
    for index in todo:
        request = builder.build(plan.rows[index])
        stored = [cache.get(keys.key(request, sample)) for sample in range(samples)]
        hits = sum(
            1
            for answer in stored
            if answer is not None
            and parse_answer(answer, plan.task, judge_plan.method).outcome not in settings.retry
        )
        cached += hits
        asked.append((index, samples - hits))
    return asked, cached
