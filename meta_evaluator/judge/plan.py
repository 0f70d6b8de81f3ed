"""The first stage of a run: what each judge will ask, reuse and write, worked out up front.

`plan_run` reads the project's run folder and writes nothing. Its `RunPlan` is immutable and is
the one input of the second stage (`execute`): the facade, the CLI, the dry run (a plan that is
printed) and batch mode all go through it, so what a dry run shows is what the run does.

Every problem that stops a judge is found here, all at once: a judge listed twice, an answering
method that does not fit the task, a key that cannot be read, batches pending in a run that
would ask their rows again. A judge whose key cannot be read is `refused` when it has rows to
ask (it alone makes no call, the others run); with none to ask (every row reused) it needs no
key and is planned as the others. Any other problem stops the whole run before its first call.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from meta_evaluator._util import repeated
from meta_evaluator.data import EvalData
from meta_evaluator.errors import JudgeConfigError, MetaEvaluatorError, TaskError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.eval_task.eval_task import AnsweringMethod
from meta_evaluator.judge._clients import judge_endpoint, key_variable
from meta_evaluator.judge._prompting import answering_method
from meta_evaluator.judge._reuse import complete_with, previous_rows, sort_rows
from meta_evaluator.judge._shards import shard_of
from meta_evaluator.judge.addresses import configured_url, judge_address
from meta_evaluator.judge.batch_ledger import BatchLedger
from meta_evaluator.judge.config import Judge
from meta_evaluator.judge.result_row import ResultRow
from meta_evaluator.judge.run_files import (
    RunFiles,
    latest_run,
    latest_sharded_run,
    new_run_id,
    now_iso,
)
from meta_evaluator.judge.settings import RunSettings
from meta_evaluator.llm.limits import EndpointKey
from meta_evaluator.llm.prices import Price, Prices, read_prices
from meta_evaluator.storage import check_inside_project, check_safe_name

if TYPE_CHECKING:
    from meta_evaluator.judge._dry_run import RunSummary

__all__ = [
    "JudgePlan",
    "RunAction",
    "RunPlan",
    "check_listed_once",
    "combined_error",
    "fingerprint",
    "plan_run",
]

RunAction = Literal["new", "continue", "start", "restart", "done"]
"""`new`: a new run; `continue`: an existing run (the latest unfinished one of this
configuration, or the one named by run_id); `start`: the named run, which does not exist yet;
`restart`: the named run from scratch (resume=False); `done`: a complete run of this
configuration already has every row, so nothing is asked and nothing written."""

KEY_FIELD = "api_key_env"
"""The field of the problems that refuse only their own judge (its key cannot be read)."""


@dataclass(frozen=True)
class JudgePlan:
    """One judge's part of a run: which run it writes, which rows it reuses and asks."""

    judge: Judge
    method: AnsweringMethod
    """How the judge is asked to answer (the judge's setting, else the task's)."""
    endpoint: EndpointKey
    """Where its calls go (client and base URL; a digest of the key, never the key)."""
    fingerprint: str
    """The digest of what makes two runs' answers comparable (`fingerprint`)."""
    files: RunFiles
    """The run folder's files the judge writes (or, when `action` is `done`, the complete run
    that already has every row)."""
    action: RunAction
    source: RunFiles | None
    """The run whose rows are reused: `files` itself, an earlier complete run, or none."""
    source_run_id: str | None
    """The id of the run whose rows are reused (also for a complete sharded run)."""
    created_at: str
    """When the run was first started (ISO 8601, UTC)."""
    kept: Mapping[Any, ResultRow] = field(repr=False)
    """Rows already answered with this fingerprint, by id, that the run keeps."""
    todo: tuple[int, ...] = field(repr=False)
    """Positions (in `RunPlan.rows`) of the rows to ask."""
    seeded: bool
    """Whether the kept rows come from another run and are copied into this one first."""
    batch: bool
    """Whether the rows go through the provider's batch engine."""
    waiting: frozenset[Any] = field(default=frozenset(), repr=False)
    """Ids in batches the run already submitted: collected, not asked again (batch runs)."""
    snapshot: tuple[tuple[str, int, int], ...] = field(default=(), repr=False)
    """The run's files as planned (`RunFiles.snapshot`): a run they no longer match is not
    executed, as another process wrote to it since."""
    skipped: frozenset[Any] = field(default=frozenset(), repr=False)
    """Ids the task's `skip_function` skips: rows to do among them become `skipped` rows,
    with no call."""
    base_url_from: str | None = None
    """The environment variable that set the base URL, when the judge gives none
    (`judge.addresses`); None: the judge's own, or the default."""
    keyless: bool = False
    """The judge's key cannot be read, and it asks nothing (every row reused): it needs none."""

    def to_ask(self, ids: Sequence[Any]) -> tuple[list[int], list[int]]:
        """(positions to ask, positions to skip) of `todo`; `ids` are the plan's row ids."""
        if not self.skipped:
            return list(self.todo), []
        asked = [i for i in self.todo if ids[i] not in self.skipped]
        return asked, [i for i in self.todo if ids[i] in self.skipped]

    @property
    def judge_id(self) -> str:
        """The judge's id."""
        return self.judge.id

    @property
    def run_id(self) -> str:
        """The run the judge writes or continues."""
        return self.files.run_id

    @property
    def unchanged(self) -> bool:
        """A complete run already has every row: nothing is asked and nothing written."""
        return self.action == "done"

    @property
    def fresh_start(self) -> bool:
        """The run starts over (resume=False): rows already in it are dropped first."""
        return self.action == "restart"

    @property
    def writes(self) -> bool:
        """Whether the judge writes into its run (asks rows, copies kept rows, or collects)."""
        return not self.unchanged and bool(self.todo or self.seeded or self.batch)


@dataclass(frozen=True)
class RunPlan:
    """Every judge's plan, the judges refused, and what the run was asked to do."""

    judges: tuple[JudgePlan, ...]
    refused: tuple[JudgeConfigError, ...]
    """Judges with rows to ask that make no call, because their key cannot be read; the others
    run. (A run whose judges are all refused stops before its first call.)"""
    settings: RunSettings
    task: EvalTask = field(repr=False)
    id_dtype: pl.DataType = field(repr=False)
    """The dtype of the data's ids, which every results table keeps."""
    rows: tuple[Mapping[str, Any], ...] = field(repr=False)
    """The data rows the run covers (all, or the shard's), in data order: the columns prompts
    read (the task's shown columns and the judges' placeholders)."""
    ids: tuple[Any, ...] = field(repr=False)
    """Their ids, in the same order."""
    prices: Mapping[str, Price] = field(default_factory=dict, repr=False)
    """With `settings.max_cost`: the price of each judge that asks rows, by judge id (mock
    judges cost nothing and have none)."""

    def summary(self) -> RunSummary:
        """The plan in figures (what a dry run prints): rows, reused, calls, tokens, batches."""
        from meta_evaluator.judge._dry_run import summarize

        return summarize(self)

    def problem_error(self) -> JudgeConfigError | None:
        """One error naming every refused judge, or None when all judges can run."""
        return combined_error(list(self.refused), field=KEY_FIELD) if self.refused else None


def fingerprint(judge: Judge, task: EvalTask, consistency: int = 1) -> str:
    """A digest of what makes two runs' answers comparable.

    Client, endpoint, model, prompt, answering method, sampling parameters and the task's
    labels count; concurrency and headers do not. The endpoint is the one the configuration
    names (`configured_url`: a provider's default for a provider judge without `base_url`, as
    when it was written into the judge), never an address variable's: like the key, the
    environment is not the judge's configuration.
    """
    payload = {
        "llm_client": judge.llm_client,
        "base_url": configured_url(judge),
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


def plan_run(
    results_dir: Path,
    judges: Sequence[Judge],
    eval_data: EvalData,
    task: EvalTask,
    *,
    run_id: str | None = None,
    settings: RunSettings | None = None,
    prices_file: Path | None = None,
) -> RunPlan:
    """Work out what a run of `judges` over `eval_data` would do; reads files, writes none.

    With `settings.max_cost`, each judge that asks rows needs a price in `prices_file` (the
    project's `prices.yaml`), by its id or its model; mock judges cost nothing.

    Raises:
        JudgeConfigError: Every problem found, one line each (`errors` lists them): a judge
            listed twice, a judge that cannot be run (an answering method that does not fit
            the task, batches pending in its run, no price with `max_cost` ...), a shard
            without a run_id. A judge whose key cannot be read is not raised: with rows to
            ask it is `refused` (the run raises when no judge is left), with none it needs no
            key.
        UnsafeNameError: `run_id` is not a safe file name.
        StateError, StorageError: A run's files are corrupt.
        PricesError: With `max_cost`, `prices_file` cannot be used.
    """
    settings = settings or RunSettings()
    prices = read_prices(prices_file) if settings.max_cost is not None and prices_file else None
    priced: dict[str, Price] = {}
    check_listed_once(judges)
    if run_id is not None:
        check_safe_name(run_id, field="run_id")
    # The columns a prompt reads: a row holds no others (a million rows of dicts: memory).
    read = [*task.columns_shown(), *(p for judge in judges for p in judge.prompt.placeholders)]
    rows, ids = _rows_to_cover(eval_data, settings.shard, run_id, read)
    fresh = new_run_id()  # judges starting a new run in this call share its id
    skipped = skipped_ids(eval_data, task)
    plans: list[JudgePlan] = []
    problems: list[JudgeConfigError] = []
    for judge in judges:
        try:
            method, endpoint, key_problem = _check_judge(judge, task)
            plan = _plan_judge(
                results_dir, judge, method, endpoint, task, rows, ids,
                run_id=run_id, fresh_run_id=fresh, settings=settings,
            )  # fmt: skip
            plan = dataclasses.replace(
                plan, skipped=skipped, base_url_from=judge_address(judge).variable
            )
            BatchLedger(plan.files).check_before_run(
                judge.id, plan.fingerprint, batch=plan.batch, resume=settings.resume
            )
            if key_problem is not None:  # a key only for calls: refused if it has rows to ask
                plan = dataclasses.replace(plan, keyless=True)
                _check_needs_no_key(plan, ids, key_problem)
            if settings.max_cost is not None and plan.todo and judge.llm_client != "mock":
                priced[judge.id] = _price_of(judge, prices, prices_file)
        except JudgeConfigError as exc:
            problems.append(exc)
        else:
            if plan.writes:  # a run folder linked out of the project: as the run would refuse it
                check_inside_project(plan.files.rows, root=plan.files.root)
            plans.append(plan)
    refused = [exc for exc in problems if exc.field == KEY_FIELD]
    if len(refused) < len(problems):  # (all refused: the dry run still prints the plan)
        raise combined_error(problems, field="judges")
    id_dtype = eval_data.ids.dtype
    return RunPlan(
        tuple(plans), tuple(refused), settings, task, id_dtype, tuple(rows), tuple(ids),
        prices=priced,
    )  # fmt: skip


def skipped_ids(eval_data: EvalData, task: EvalTask) -> frozenset[Any]:
    """The ids of the rows `task.skip_function` skips (none without one).

    Raises:
        TaskError: The function failed on a row (naming the row's id).
    """
    function = task.skip_function
    if function is None:
        return frozenset()
    skipped = set()
    column = eval_data.id_column
    for row in eval_data.data.iter_rows(named=True):  # the user's function, row by row
        try:
            skip = function(row)
        except Exception as exc:  # the user's code: its failure is named, with the row
            raise TaskError(
                f"EvalTask.skip_function raised {type(exc).__name__} ({exc}) on the row with id "
                f"{row[column]!r}; fix the function (it gets the row as a dict).",
                field="skip_function",
                row_id=row[column],
            ) from exc
        if skip:
            skipped.add(row[column])
    return frozenset(skipped)


def _price_of(judge: Judge, prices: Prices | None, prices_file: Path | None) -> Price:
    """The price of a judge's calls, for a run with a cost ceiling.

    Raises:
        JudgeConfigError: Neither the judge's id nor its model has a price.
    """
    price = prices.for_judge(judge.id, judge.model) if prices is not None else None
    if price is None:
        where = prices_file if prices_file is not None else "prices.yaml"
        found = "has no price for either" if prices is not None else "does not exist"
        raise JudgeConfigError(
            f"judge {judge.id!r}: a cost ceiling (--max-cost, max_cost=) needs the price of its "
            f"model {judge.model!r} (or of "
            f"the judge id), and {where} {found}; add a line such as `{judge.model}: "
            "{prompt: 0.15, completion: 0.6}` (US dollars per million tokens).",
            judge_id=judge.id,
            field="max_cost",
            path=prices_file,
        )
    return price


def check_listed_once(judges: Sequence[Judge]) -> None:
    """Raise JudgeConfigError naming the judges listed more than once."""
    twice = repeated(j.id for j in judges)
    if twice:
        raise JudgeConfigError(
            f"judges {twice} are listed twice; name each once.", field="judge_ids"
        )


def combined_error(problems: Sequence[MetaEvaluatorError], *, field: str) -> JudgeConfigError:
    """One error listing several problems, one line each, every one in `errors`.

    Each problem's own `errors` are kept; one without them is listed by its place: `(judge id,
    field)` for a judge's problem, else the field. A single `JudgeConfigError` is returned as
    it is, its `errors` filled in when empty.
    """
    listed = []
    for exc in problems:
        if exc.errors and not exc.judge_id:
            listed += exc.errors
        else:
            loc = (exc.judge_id, exc.field) if exc.judge_id else exc.field
            listed.append({"loc": loc, "msg": exc.message})
    if len(problems) == 1 and isinstance(problems[0], JudgeConfigError):
        if not problems[0].errors:
            problems[0].errors = listed
        return problems[0]
    return JudgeConfigError(
        "\n".join(exc.message for exc in problems),
        judge_id=problems[0].judge_id,
        field=field,
        errors=listed,
    )


def _rows_to_cover(
    eval_data: EvalData, shard: tuple[int, int] | None, run_id: str | None, columns: list[str]
) -> tuple[list[dict[str, Any]], list[Any]]:
    """The rows (their `columns` the data has) and ids a run covers: all, or part k of N.

    Raises:
        JudgeConfigError: A shard comes without a run_id (shards started apart would otherwise
            write to different runs, never merged).
    """
    frame = eval_data.data
    frame = frame.select(c for c in dict.fromkeys(columns) if c in frame.columns)
    ids = eval_data.ids.to_list()
    if shard is not None:
        k, count = shard
        if run_id is None:
            raise JudgeConfigError(
                f"shard {k}/{count} needs a run_id, the same for every shard of the run, so "
                "their results merge (for instance --run-id nightly-1 on every machine).",
                field="run_id",
            )
        keep = [index for index, row_id in enumerate(ids) if shard_of(row_id, count) == k - 1]
        frame, ids = frame[keep], [ids[index] for index in keep]
    # (a frame of no column has no rows: a prompt that reads no column gets empty rows)
    return (frame.to_dicts() if frame.width else [{} for _ in ids]), ids


def _check_needs_no_key(plan: JudgePlan, ids: Sequence[Any], problem: JudgeConfigError) -> None:
    """Raise the key's problem, with the rows the judge would ask, if it has any to ask.

    Rows in batches already submitted count: collecting them takes the key too.
    """
    asked, _ = plan.to_ask(ids)
    if not asked:
        return
    variable = key_variable(plan.judge) or "its key"
    raise JudgeConfigError(
        f"{problem.message.rstrip('.')}; it needs {variable} to ask {len(asked)} row(s) (a "
        "judge whose rows are all answered needs no key).",
        judge_id=problem.judge_id,
        field=KEY_FIELD,
    ) from problem


def _check_judge(
    judge: Judge, task: EvalTask
) -> tuple[AnsweringMethod, EndpointKey, JudgeConfigError | None]:
    """Everything about a judge that can fail before a call: method, Azure settings, key.

    The key's problem is returned, not raised: a judge with nothing to ask needs no key.
    """
    method = answering_method(judge, task)
    if method == "text" and not any(task.task_kind(t) == "single" for t in task.task_names):
        raise JudgeConfigError(
            f"judge {judge.id!r}: answering_method 'text' needs a single-choice task to match "
            "the answer to; use 'structured' or 'xml'.",
            judge_id=judge.id,
            field="answering_method",
        )
    multilabel = [t for t in task.task_names if task.task_kind(t) == "multilabel"]
    if method == "xml" and multilabel:
        raise JudgeConfigError(
            f"judge {judge.id!r}: answering_method 'xml' cannot carry the multi-label task(s) "
            f"{multilabel} (XML tags hold one value, as in meta-evaluator 0.3.3); use "
            "'structured'.",
            judge_id=judge.id,
            field="answering_method",
        )
    try:
        endpoint, _ = judge_endpoint(judge)  # reads the key once, to refuse an unreadable one
    except JudgeConfigError as exc:
        if exc.field != KEY_FIELD:
            raise
        return method, judge_endpoint(judge, key=False)[0], exc
    return method, endpoint, None


def _plan_judge(
    results_dir: Path,
    judge: Judge,
    method: AnsweringMethod,
    endpoint: EndpointKey,
    task: EvalTask,
    rows: list[dict[str, Any]],
    ids: list[Any],
    *,
    run_id: str | None,
    fresh_run_id: str,
    settings: RunSettings,
) -> JudgePlan:
    """Pick the judge's run and sort rows into kept and to-do.

    With `run_id`, that run is continued (or started). Without, the judge's latest unfinished
    run of the same configuration is continued; failing that, a new run starts, keeping the
    finished rows of the latest complete run of the same configuration, and when that run
    already covers every row, it is returned as it is (`done`), with no call and no write.
    A shard's own files in the run `run_id` are continued (or started).
    """
    resume, shard = settings.resume, settings.shard
    print_ = fingerprint(judge, task, settings.consistency)
    source: RunFiles | None = None
    shard_sources: list[RunFiles] = []
    if run_id is not None:
        files = RunFiles(results_dir, run_id, judge.id, shard=shard)
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
    # Before anything is read: a write by another process after this point shows at execution.
    snapshot = files.snapshot()
    state = source.read_state() if source is not None else None
    previous = previous_rows(source, shard_sources, task, ids)
    kept, todo = sort_rows(judge, method, task, rows, ids, previous, print_, settings)
    action: RunAction
    if run_id is None:
        action = "continue" if source is files else "new"
    elif not (files.state.is_file() or files.rows.is_file()):
        action = "start"
    else:
        action = "continue" if resume else "restart"
    seeded = False
    if source is files and not todo and complete_with(files, state, previous, ids):
        action = "done"  # the named run is complete with every row: nothing asked or written
    elif source is not None and source is not files:
        if not todo and complete_with(source, state, previous, ids):
            files, action = source, "done"  # the complete run already has every row
        else:
            seeded = True  # the kept rows are copied into the new run
    elif shard_sources:
        if not todo and len(previous) == len(ids):  # the shards already have every row
            files, action = RunFiles(results_dir, shard_sources[0].run_id, judge.id), "done"
        else:
            seeded = True  # the shards' rows are copied into the new, unsharded run
    batch = settings.batch and judge.llm_client != "mock"
    return JudgePlan(
        judge=judge,
        method=method,
        endpoint=endpoint,
        fingerprint=print_,
        files=files,
        action=action,
        source=source,
        source_run_id=source.run_id if source is not None else (
            shard_sources[0].run_id if shard_sources else None
        ),
        created_at=state.created_at if state and source is files else now_iso(),
        kept=kept,  # read-only by type (a proxy would make the plan impossible to pickle)
        todo=tuple(todo),
        seeded=seeded,
        batch=batch,
        waiting=frozenset(BatchLedger(files).pending_ids()) if batch else frozenset(),
        snapshot=snapshot,
    )  # fmt: skip
