"""How a run calls its judges: one validated settings object, shared by the facade and the CLI.

`MetaEvaluator.run_judges_async(**options)`, `plan_run(**options)` and `meta-evaluator run`
all build a `RunSettings`; every field is declared (with its unit and scope) only here, and every
problem with the values given is reported at once, naming the field.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, TypedDict

from pydantic import (
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    field_validator,
    model_validator,
)

from meta_evaluator._validation import ConfigModel
from meta_evaluator.errors import JudgeConfigError, MetaEvaluatorError
from meta_evaluator.judge._shards import check_shard, parse_shard

__all__ = ["RetryOutcome", "RunOptions", "RunSettings"]

RetryOutcome = Literal["invalid", "error"]


class RunSettings(ConfigModel):
    """How a run calls endpoints; a judge's own `max_concurrency` wins over the run's.

    Example:
        >>> RunSettings(max_concurrency=64, retry=["error"]).retry
        ('error',)
    """

    model_config = ConfigDict(
        frozen=True, extra="forbid", hide_input_in_errors=True, use_attribute_docstrings=True
    )
    error_class: ClassVar[type[MetaEvaluatorError]] = JudgeConfigError

    max_concurrency: StrictInt = Field(16, ge=1)
    """Requests in flight per judge (a judge's own `max_concurrency` wins); with
    `adaptive_concurrency`, the ceiling."""
    adaptive_concurrency: StrictBool = True
    """Adapt the requests in flight per endpoint and key under the `max_concurrency` ceiling:
    start at 16, double every 10 ms while full, cut on 429/503/529, pace by the server's
    rate-limit headers (docs/judges-and-endpoints.md#adaptive-concurrency). False: always
    `max_concurrency` in flight."""
    max_retries: StrictInt = Field(3, ge=0)
    """Retries after the first attempt: at most `max_retries + 1` calls per row (2 allows 3)."""
    timeout: StrictFloat = Field(60.0, gt=0, allow_inf_nan=False)
    """Seconds for one attempt, connect to last byte; a timed-out attempt is retried."""
    resume: StrictBool = True
    """Reuse rows already answered with the same judge fingerprint; False asks every row again."""
    retry: tuple[RetryOutcome, ...] = ()
    """Outcomes of rows already in the run to ask again (`invalid`, `error`); others are kept."""
    requests_per_minute: StrictFloat | None = Field(None, gt=0, allow_inf_nan=False)
    """Budget shared by all judges on one endpoint and key."""
    tokens_per_minute: StrictFloat | None = Field(None, gt=0, allow_inf_nan=False)
    """Budget shared by all judges on one endpoint and key (estimated before each call)."""
    backoff_base: StrictFloat = Field(1.0, ge=0, allow_inf_nan=False)
    """Seconds of the first retry's backoff window; it doubles with each retry (jittered, and
    never shorter than the server's Retry-After)."""
    backoff_cap: StrictFloat = Field(30.0, ge=0, allow_inf_nan=False)
    """Most seconds of one backoff window."""
    consistency: StrictInt = Field(1, ge=1)
    """Answers asked per row; above 1, each task's label is the majority vote of the valid
    answers (ties go to the label seen first)."""
    shard: tuple[StrictInt, StrictInt] | None = None
    """`(k, N)`: only part k of N of the rows (1-based, split by a stable hash of the id), so N
    processes each run one part under the same run id (which a shard needs)."""
    batch: StrictBool = False
    """Ask through the provider's batch engine (OpenAI Batch, Anthropic Message Batches)."""
    batch_poll_interval: StrictFloat = Field(30.0, gt=0, allow_inf_nan=False)
    """Seconds between two looks at a running batch."""
    batch_wait: StrictFloat | None = Field(None, ge=0, allow_inf_nan=False)
    """Most seconds to wait for batches (None: until they end; 0: submit and return). Batches
    still running stay recorded in the run folder; the next batch run collects them."""
    cancel_batches: StrictBool = False
    """With `batch`: cancel the run's pending batches (submitting nothing), then collect what
    they hold; the rest become `batch_canceled` error rows."""
    max_cost: StrictFloat | None = Field(None, ge=0, allow_inf_nan=False)
    """US dollars the run's calls may cost, all judges together, priced by the project's
    `prices.yaml`: no call starts once what was spent plus what is in flight would pass it
    (rows not asked stay to do; `CostCeilingError`). Mock judges cost nothing. Not with
    `batch` (a batch is paid when the provider runs it)."""
    cache: StrictBool = True
    """Reuse answers stored by earlier runs for identical requests, and store new ones (the
    response cache, `meta_evaluator.llm.cache`); False: every row is asked of the endpoint,
    as a run measuring drift needs. A judge's own `cache: false` wins. Not for the mock nor
    for batch mode."""
    cache_dir: Path | None = None
    """The response cache's folder; None: `$META_EVALUATOR_CACHE_DIR`, else the user cache
    folder (`~/.cache/meta-evaluator` on Linux). A folder named here that cannot be created
    or written is an error; the default one only a warning."""
    cache_max_mb: StrictFloat = Field(1024.0, gt=0, allow_inf_nan=False)
    """Most MB (10**6 bytes) the cache file keeps; past it, the least recently used answers
    are dropped."""

    progress: Literal["auto", "bar", "lines", "off"] = "auto"
    """How a run shows its progress: `bar` (a live bar per judge), `lines` (a log line per judge
    every `progress_every` percent of its rows or `progress_seconds`, whichever first: for
    cron and CI), `off`, or `auto`: lines when standard output is not a terminal or the
    environment says `CI=true`, else the bar."""
    progress_every: StrictFloat = Field(10.0, gt=0, le=100, allow_inf_nan=False)
    """With progress lines: a judge's line each time it passes another this many percent of
    its rows."""
    progress_seconds: StrictFloat = Field(30.0, gt=0, allow_inf_nan=False)
    """With progress lines: a judge's line at the latest this many seconds after its last."""

    @field_validator("shard", mode="before")
    @classmethod
    def _shard(cls, value: Any) -> Any:
        try:
            if isinstance(value, str):  # as written on the command line: "2/4"
                return parse_shard(value)
            if value is not None:
                return check_shard(tuple(value) if isinstance(value, list) else value)
        except JudgeConfigError as exc:
            raise ValueError(exc.message.removeprefix("shard ")) from None
        return value

    @model_validator(mode="after")
    def _cancel_needs_batch(self) -> RunSettings:
        if self.cancel_batches and not self.batch:
            raise ValueError("cancel_batches needs batch=True (it cancels the run's batches)")
        return self

    @model_validator(mode="after")
    def _max_cost_is_live(self) -> RunSettings:
        if self.max_cost is not None and self.batch:
            raise ValueError(
                "max_cost does not apply to batch=True: a batch is paid when the provider runs "
                "it, after the run submitted it whole; run live with max_cost, or estimate a "
                "batch's cost with a dry run"
            )
        return self

    @classmethod
    def _error_root(cls, data: dict[str, Any]) -> str:
        return "run settings"


class RunOptions(TypedDict, total=False):
    """The run options as keyword arguments (`run_judges_async(**options)`), for type checkers.

    The names and types of `RunSettings`' fields, which document and validate them; a test
    keeps the two the same.
    """

    max_concurrency: int
    adaptive_concurrency: bool
    max_retries: int
    timeout: float
    resume: bool
    retry: Sequence[RetryOutcome]
    requests_per_minute: float | None
    tokens_per_minute: float | None
    backoff_base: float
    backoff_cap: float
    consistency: int
    shard: tuple[int, int] | str | None
    batch: bool
    batch_poll_interval: float
    batch_wait: float | None
    cancel_batches: bool
    max_cost: float | None
    cache: bool
    cache_dir: str | Path | None
    cache_max_mb: float
    progress: Literal["auto", "bar", "lines", "off"]
    progress_every: float
    progress_seconds: float
