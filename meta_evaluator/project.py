"""MetaEvaluator: the project folder, and the one object users call to work with it.

```
my_project/
  main_state.json   data + task + judge registry (no secrets), versioned schema
  data/             the evaluation data as saved
  judges/           one YAML per judge (optional)
  results/          judge results, written row by row while a run goes on
  annotations/      human annotation results
  scores/           scores per scorer and judge (+ plots)
  reports/          report.html and tables
```
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Unpack

import polars as pl

from meta_evaluator import _project_data
from meta_evaluator._state import STATE_FILE, DataState, dump_state, parse_state
from meta_evaluator._util import listed, shown
from meta_evaluator.data import EvalData
from meta_evaluator.data.persist import DataFormat
from meta_evaluator.errors import (
    AlreadySetError,
    DataError,
    JudgeConfigError,
    MetaEvaluatorError,
    ProjectError,
    ProjectExistsError,
    ProjectNotFoundError,
    StateError,
    TaskError,
    UnsafeNameError,
    warn_deprecated,
)
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.eval_task.eval_task import RESERVED_NAMES
from meta_evaluator.judge import Judge, Prompt, read_judges_yaml
from meta_evaluator.storage import check_inside_project, check_safe_name, read_json, write_json

if TYPE_CHECKING:
    import httpx

    from meta_evaluator.judge import RunPlan, RunSettings
    from meta_evaluator.judge.endpoint_check import EndpointCheck
    from meta_evaluator.judge.settings import RunOptions
    from meta_evaluator.reports.score_report import ScoreReport
    from meta_evaluator.results import JudgeResults
    from meta_evaluator.results.human_results import HumanAnnotationResults
    from meta_evaluator.scores import BootstrapConfig, MetricsConfig
    from meta_evaluator.scores.compare import ScoreTable, ScoringColumns
    from meta_evaluator.scores.drift import DriftCheck, DriftThresholds
    from meta_evaluator.scores.label_plan import LabelPlanReport
    from meta_evaluator.scores.run_comparison import RunComparison

__all__ = ["MetaEvaluator", "ProjectPaths"]

logger = logging.getLogger(__name__)


class ProjectPaths:
    """Where each kind of file lives inside a project folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.state_file = root / STATE_FILE
        self.data_dir = root / "data"
        self.judges_dir = root / "judges"
        self.results_dir = root / "results"
        self.annotations_dir = root / "annotations"
        self.scores_dir = root / "scores"
        self.reports_dir = root / "reports"

    def with_results(self, results_dir: Path) -> ProjectPaths:
        """These paths with the results folder elsewhere (a run that saves nothing)."""
        paths = ProjectPaths(self.root)
        paths.results_dir = results_dir
        return paths

    def made_without_state(self) -> list[str]:
        """The folders of a project's output (`results/`, `annotations/`, `scores/`) present.

        In a folder without `main_state.json` they show a script that wrote its results but
        never called `save_state()`.
        """
        return [
            f"{path.name}/"
            for path in (self.results_dir, self.annotations_dir, self.scores_dir)
            if path.is_dir()
        ]

    def check_inside(self) -> None:
        """Refuse to write while `main_state.json` or a folder written to links out of the project.

        A `MetaEvaluator` calls it before it writes: until the first save no `main_state.json`
        marks the folder as a project, so a write deeper down could not find the project by it.
        `judges/` is only read (prompts), so it may link elsewhere.

        Raises:
            OutsideProjectError: One of them is a symbolic link to a place outside `root`.
        """
        for path in (
            self.state_file,
            self.data_dir,
            self.results_dir,
            self.annotations_dir,
            self.scores_dir,
            self.reports_dir,
        ):
            check_inside_project(path, root=self.root)


class MetaEvaluator:
    """A project folder holding data, a task, judges, their results, annotations and scores.

    `MetaEvaluator(dir, load=False)` creates a project (the folder may exist, but must not hold
    one yet); `MetaEvaluator(dir, load=True)` opens an existing one.

    Example:
        >>> import tempfile
        >>> evaluator = MetaEvaluator(tempfile.mkdtemp() + "/demo")
        >>> evaluator.data is None
        True
    """

    def __init__(self, project_dir: str | Path = "my_project", load: bool = False) -> None:
        """Create or open the project in `project_dir`.

        Creating writes nothing. The data, task and judges (`add_data`, `add_eval_task`,
        `add_judge`) are kept in memory until `save_state` writes them to `main_state.json`;
        what a call produces is written at once: judge runs (`run_judges_async`) and imported
        labels (`add_external_judge_results`, `add_external_annotation_results`,
        `add_preference_pairs`) under `results/` and `annotations/`, scores (`compare_async`)
        under `scores/`. Only a folder with `main_state.json` opens with `load=True` (and with
        the commands), so a script ends with `save_state()`.

        Raises:
            ProjectExistsError: `load=False` and the folder already holds a project.
            ProjectNotFoundError: `load=True` and the folder holds no project.
            ProjectError: The path is not a usable folder path (a file, a NUL byte, too long).
            StateError: `main_state.json` is corrupt, foreign, from a newer version, or no
                longer matches the data file.
        """
        if not isinstance(project_dir, str | Path) or not str(project_dir):
            raise ProjectError(
                f"project_dir must be a folder path, got {project_dir!r}.", field="project_dir"
            )
        self._paths = ProjectPaths(Path(project_dir))
        self._data: EvalData | None = None
        self._eval_task: EvalTask | None = None
        self._judges: dict[str, Judge] = {}
        self._metrics_config: MetricsConfig | None = None
        # What main_state.json holds now, as this object last read or wrote it.
        self._saved_data: DataState | None = None
        self._saved_task: EvalTask | None = None
        root = self._paths.root
        try:
            is_file = root.exists() and not root.is_dir()
            has_state = self._paths.state_file.is_file()
        except (OSError, ValueError) as exc:
            raise ProjectError(
                f"{str(root)!r}: is not a usable folder path ({exc}).", field="project_dir"
            ) from exc
        if is_file:
            raise ProjectError(
                f"{root}: is a file, not a project folder; choose a folder path.", path=root
            )
        if load:
            self._load()
        elif has_state:
            problem = f"{root}: already holds a project ({STATE_FILE} exists)"
            raise ProjectExistsError(
                f"{problem}; open it with MetaEvaluator(..., load=True) or choose another folder.",
                path=self._paths.state_file,
                problem=problem,
                project_dir=root,
            )

    # ----- the folder -------------------------------------------------------------------------

    @classmethod
    def load_state(
        cls, project_dir: str | Path, load_data: bool = True, load_task: bool = True
    ) -> MetaEvaluator:
        """Open an existing project, as meta-evaluator 0.3.3 did: `MetaEvaluator(dir, load=True)`.

        `load_data=False` (`load_task=False`) leaves the data (the task) out of the returned
        object; the folder keeps them, and `save_state(include_data=False)` keeps the saved
        data (`include_task=False`, the task) as it is.

        Raises:
            ProjectNotFoundError, StateError: As `MetaEvaluator(project_dir, load=True)` (a
                folder of 0.3.3 says to run `meta-evaluator migrate` first).
        """
        evaluator = cls(project_dir, load=True)
        if not load_data:
            evaluator._data = None
        if not load_task:
            evaluator._eval_task = None
        return evaluator

    @property
    def project_dir(self) -> Path:
        """The project folder."""
        return self._paths.root

    @property
    def paths(self) -> ProjectPaths:
        """Where each kind of file lives in the project folder."""
        return self._paths

    def _load(self) -> None:
        root, state_file = self._paths.root, self._paths.state_file
        if not root.is_dir():
            problem = f"{root}: no such folder"
            raise ProjectNotFoundError(
                f"{problem}; check the path, or pass load=False to create a project.",
                path=root,
                problem=problem,
                project_dir=root,
            )
        if not state_file.is_file():
            made = self._paths.made_without_state()
            if made:
                problem = (
                    f"{root}: holds no project ({STATE_FILE} is missing) although it has "
                    f"{', '.join(made)}: the script that made them never called save_state()"
                )
                raise ProjectNotFoundError(
                    f"{problem}; add `evaluator.save_state()` at the end of that script and run "
                    "it again, so its data, task and judges are saved with them.",
                    path=state_file,
                    problem=problem,
                    project_dir=root,
                    needs="state",
                )
            problem = f"{root}: holds no project ({STATE_FILE} is missing)"
            raise ProjectNotFoundError(
                f"{problem}; check the path, or pass load=False to create a project there.",
                path=state_file,
                problem=problem,
                project_dir=root,
            )
        state = parse_state(read_json(state_file), state_file)
        loaded = None
        if state.data is not None:
            loaded = _project_data.read(self._paths.data_dir, state.data, state_file)
            self._data = loaded.data
        if self._data is not None and state.eval_task is not None:
            state.eval_task.validate_against(self._data)
        problems = _placeholder_problems(state.judges.values(), self._data, state.eval_task)
        if problems:
            raise StateError(
                f"{state_file}: " + "\n".join(problems), path=state_file, field="judges"
            )
        if loaded is not None:  # checked: the rows are read again when a step needs them
            loaded.data.release_rows(loaded.reload)
        self._eval_task = state.eval_task
        self._judges = dict(state.judges)
        self._saved_data, self._saved_task = state.data, state.eval_task
        logger.info("loaded project %s", root)

    # ----- data and task ----------------------------------------------------------------------

    @property
    def data(self) -> EvalData | None:
        """The evaluation data, or `None` before `add_data`."""
        return self._data

    @property
    def eval_task(self) -> EvalTask | None:
        """The evaluation task, or `None` before `add_eval_task`."""
        return self._eval_task

    @property
    def judge_registry(self) -> dict[str, Judge]:
        """Judge id → Judge (a copy: change judges with `add_judge`)."""
        return dict(self._judges)

    def add_data(self, eval_data: EvalData, overwrite: bool = False) -> None:
        """Set the evaluation data; checked against the task when one is set.

        Raises:
            DataError: `eval_data` is not an EvalData.
            AlreadySetError: Data is set and `overwrite` is False.
            TaskError: The task's columns are missing from the data or hold nulls.
        """
        if not isinstance(eval_data, EvalData):
            raise DataError(
                f"add_data expects an EvalData (from DataLoader), got {type(eval_data).__name__}.",
                field="eval_data",
            )
        if self._data is not None and not overwrite:
            raise AlreadySetError(
                f"{self._paths.root}: the project already has data {self._data.name!r}; pass "
                "overwrite=True to replace it.",
                path=self._paths.root,
                field="data",
            )
        if self._eval_task is not None:
            self._eval_task.validate_against(eval_data)
        self._raise_for_placeholders(self._judges.values(), eval_data, self._eval_task)
        self._data = eval_data

    def add_eval_task(self, eval_task: EvalTask, overwrite: bool = False) -> None:
        """Set the evaluation task; checked against the data when data is set.

        Raises:
            TaskError: `eval_task` is not an EvalTask, or its columns are missing from the data
                or hold nulls.
            AlreadySetError: A task is set and `overwrite` is False.
        """
        if not isinstance(eval_task, EvalTask):
            raise TaskError(
                f"add_eval_task expects an EvalTask, got {type(eval_task).__name__}.",
                field="eval_task",
            )
        if self._eval_task is not None and not overwrite:
            raise AlreadySetError(
                f"{self._paths.root}: the project already has a task; pass overwrite=True to "
                "replace it.",
                path=self._paths.root,
                field="eval_task",
            )
        if self._data is not None:
            eval_task.validate_against(self._data)
        self._raise_for_placeholders(self._judges.values(), self._data, eval_task)
        self._eval_task = eval_task

    # ----- judges -----------------------------------------------------------------------------

    def add_judge(
        self,
        judge_id: str,
        llm_client: str,
        model: str,
        prompt: str | Prompt | None = None,
        *,
        prompt_file: str | Path | None = None,
        on_duplicate: Literal["skip", "overwrite"] | None = None,
        overwrite: bool = False,
        **settings: Any,
    ) -> Judge:
        """Register a judge; its prompt's placeholders must name columns of the data or task.

        Args:
            judge_id: The judge's id (a safe file name: letters, digits, `_`, `-`, `.`).
            llm_client: `openai`, `azure_openai`, `anthropic` or `mock`.
            model: The model name.
            prompt: A template string with `{column}` placeholders, or a `Prompt`.
            prompt_file: Read the template from this file instead.
            on_duplicate: For an id already registered: `"skip"` keeps the old judge,
                `"overwrite"` replaces it, `None` raises.
            overwrite: Same as `on_duplicate="overwrite"`.
            **settings: Other `Judge` fields: base_url, api_key_env, api_version, temperature,
                max_tokens, answering_method, max_concurrency, extra_headers.

        Returns:
            The registered judge (the old one when skipped).

        Raises:
            UnsafeNameError: `judge_id` is not a safe file name.
            JudgeConfigError: A setting is invalid, both or neither of prompt and prompt_file
                are given, a placeholder names no known column, or the id is taken.
        """
        check_safe_name(judge_id, field="judge_id")
        clash = sorted({"id", "llm_client", "model", "prompt"} & set(settings))
        if clash:
            raise JudgeConfigError(
                f"judge {judge_id!r}: {clash} are given by add_judge's own arguments; pass them "
                "once.",
                judge_id=judge_id,
                field=clash[0],
            )
        policy = self._duplicate_policy(on_duplicate, overwrite)
        if judge_id in self._judges and policy == "skip":
            return self._judges[judge_id]
        if (prompt is None) == (prompt_file is None):
            raise JudgeConfigError(
                f"judge {judge_id!r}: give exactly one of prompt and prompt_file.",
                field="prompt",
                judge_id=judge_id,
            )
        if prompt_file is not None:
            prompt = Prompt.from_file(prompt_file)
        elif isinstance(prompt, str):
            prompt = {"id": f"{judge_id}_prompt", "prompt": prompt}  # type: ignore[assignment]
        judge = Judge(id=judge_id, llm_client=llm_client, model=model, prompt=prompt, **settings)
        self._register([judge], policy)
        return self._judges[judge_id]

    def load_judges_from_yaml(
        self,
        yaml_file: str | Path,
        on_duplicate: Literal["skip", "overwrite"] | None = None,
        async_mode: bool | None = None,
    ) -> list[Judge]:
        """Register every judge of a YAML file, or none of them if any entry is invalid.

        Args:
            yaml_file: The YAML file (see `meta_evaluator.judge.yaml_config`); prompt files are
                relative to it.
            on_duplicate: For ids already registered: `"skip"`, `"overwrite"`, or `None` (raise).
            async_mode: Accepted for scripts written for meta-evaluator 0.3; it has no effect
                (every run is asynchronous) and warns.

        Returns:
            The judges of the file, as registered.

        Raises:
            JudgeConfigError: The file or any entry is invalid, a placeholder names no column,
                or an id is taken and `on_duplicate` is None; every problem is listed.
        """
        if async_mode is not None:
            warn_deprecated(
                "load_judges_from_yaml(async_mode=...)",
                "every run is asynchronous: drop the argument",
                kind="an argument",
            )
        policy = self._duplicate_policy(on_duplicate, False)
        # One pass: the file's own problems, ids taken and unknown placeholders, all listed.
        judges = read_judges_yaml(
            yaml_file, columns=self._known_columns(), taken=self._judges if policy is None else ()
        )
        self._register(judges, policy, source=Path(yaml_file))
        return [self._judges[j.id] for j in judges]

    def add_judges(
        self, judges: Iterable[Judge], *, on_duplicate: Literal["skip", "overwrite"] | None = None
    ) -> list[Judge]:
        """Register judges already built (`Judge` objects), all or none of them.

        For judges read from files elsewhere (a `project.yaml`): their ids and placeholders are
        checked as `add_judge` checks them.

        Raises:
            JudgeConfigError: An entry is not a Judge, an id is taken and `on_duplicate` is
                None, or a placeholder names no column; every problem is listed.
        """
        listed = list(judges)
        wrong = [type(j).__name__ for j in listed if not isinstance(j, Judge)]
        if wrong:
            raise JudgeConfigError(
                f"add_judges expects Judge objects, got {wrong}.", field="judges"
            )
        self._register(listed, self._duplicate_policy(on_duplicate, False))
        return [self._judges[j.id] for j in listed]

    def _known_columns(self) -> list[str] | None:
        """The columns a prompt may name: the data's, else the task's; None before either."""
        if self._data is not None:
            return self._data.columns
        return self._eval_task.columns_shown() if self._eval_task is not None else None

    @staticmethod
    def _duplicate_policy(on_duplicate: str | None, overwrite: bool) -> str | None:
        if on_duplicate not in (None, "skip", "overwrite"):
            raise JudgeConfigError(
                f"on_duplicate must be None, 'skip' or 'overwrite', got {on_duplicate!r}.",
                field="on_duplicate",
            )
        return "overwrite" if overwrite else on_duplicate

    def _register(
        self, judges: list[Judge], policy: str | None, *, source: Path | None = None
    ) -> None:
        """Add judges all at once, after checking ids and placeholders of every one."""
        prefix = f"{source}: " if source else ""
        taken = [
            f"{prefix}judge {j.id!r} is already registered; pass on_duplicate='overwrite' to "
            "replace it or 'skip' to keep it."
            for j in judges
            if j.id in self._judges and policy is None
        ]
        if taken:
            raise JudgeConfigError("\n".join(taken), path=source, judge_id=judges[0].id, field="id")
        self._raise_for_placeholders(judges, self._data, self._eval_task, source=source)
        for judge in judges:
            if judge.id in self._judges and policy == "skip":
                continue
            self._judges[judge.id] = judge

    @staticmethod
    def _raise_for_placeholders(
        judges: Iterable[Judge],
        data: EvalData | None,
        task: EvalTask | None,
        *,
        source: Path | None = None,
    ) -> None:
        problems = _placeholder_problems(judges, data, task)
        if problems:
            prefix = f"{source}: " if source else ""
            first = next(iter(j for j in judges if _unknown_placeholders(j, data, task)))
            raise JudgeConfigError(
                "\n".join(prefix + p for p in problems),
                path=source,
                judge_id=first.id,
                field="prompt",
            )

    # ----- running judges ---------------------------------------------------------------------

    def plan_run(
        self,
        judge_ids: str | list[str] | None = None,
        run_id: str | None = None,
        *,
        settings: RunSettings | None = None,
        **options: Unpack[RunOptions],
    ) -> RunPlan:
        """What `run_judges_async` with the same arguments would do; calls and writes nothing.

        The plan names, per judge, the run it writes or continues, the rows it reuses and the
        rows it asks, and the judges refused (rows to ask, and a key that cannot be read: a
        judge with nothing to ask needs no key); `plan.summary()` adds
        the calls and estimated tokens (what `meta-evaluator run --dry-run` prints). A run makes
        its plan the same way (or executes this one: `run_judges_async(plan=plan)`), so both
        report the same problems.

        Args:
            judge_ids: The judges to run; all registered judges by default.
            run_id: The run to write (or continue); a new id by default.
            settings: The run's settings; `options` are applied on top of them.
            **options: Any field of `RunSettings`, by name (see `run_judges_async`).

        Raises:
            ProjectError: The project has no data or no task yet.
            JudgeConfigError: An unknown judge id or option, a bad value, or a judge that cannot
                run: every problem at once (`errors` lists them).
        """
        from meta_evaluator.judge.plan import combined_error, plan_run

        data, task = self._data_and_task()
        problems: list[MetaEvaluatorError] = []  # the call's own problems, all at once
        judges: list[Judge] = []
        settings = _run_settings(settings, options, problems)
        try:
            judges = self._selected_judges(judge_ids)
        except JudgeConfigError as exc:
            problems.append(exc)
        if run_id is not None:
            try:
                check_safe_name(run_id, field="run_id")
            except UnsafeNameError as exc:
                problems.append(exc)
        if len(problems) == 1 and not isinstance(problems[0], JudgeConfigError):
            problem = problems[0]  # an unsafe run_id keeps its own class
            problem.errors = problem.errors or [{"loc": problem.field, "msg": problem.message}]
            raise problem
        if problems or settings is None:
            raise combined_error(problems, field="run")  # each problem listed in errors
        self._paths.check_inside()
        return plan_run(
            self._paths.results_dir, judges, data, task, run_id=run_id, settings=settings,
            prices_file=self.project_dir / "prices.yaml",
        )  # fmt: skip

    def run_judges_async(
        self,
        judge_ids: str | list[str] | None = None,
        run_id: str | None = None,
        *,
        plan: RunPlan | None = None,
        settings: RunSettings | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        **options: Unpack[RunOptions],
    ) -> dict[str, JudgeResults]:
        """Run judges over the data and return each judge's rows; call it without await.

        Works in scripts and inside a running event loop (a notebook); `arun_judges` is the
        awaitable twin. Every finished row is saved at once under `results/<run_id>/`; a run
        that dies is continued by calling again (same `run_id`, or none: a judge's latest
        unfinished run continues), reusing rows already done with the same judge fingerprint.

        Args:
            judge_ids: The judges to run; all registered judges by default.
            run_id: The run to write (or continue); a new id by default.
            plan: A plan made by `plan_run`, to execute as it is (then give no judge_ids,
                run_id, settings or options). It is refused if a judge's run changed since.
            settings: The run's settings (`RunSettings`); `options` are applied on top.
            transport: An httpx transport to send through (tests, proxies).
            **options: The fields of `RunSettings`, each documented there:
                `max_concurrency=16` (requests in flight per judge; a judge's own setting
                wins), `adaptive_concurrency=True` (adapt them per endpoint under that ceiling:
                cut on 429/503/529, grow while healthy, pace by rate-limit headers),
                `max_retries=3` (retries after the first attempt), `timeout=60.0`
                (seconds for one attempt, connect to last byte), `resume=True`, `retry=()`
                (outcomes of rows already in the run to ask again: "invalid", "error"),
                `requests_per_minute`, `tokens_per_minute` (budgets shared by all judges on one
                endpoint and key), `backoff_base=1.0`, `backoff_cap=30.0`, `consistency=1`
                (answers per row; above 1, the majority vote per task), `shard=(k, N)` (part
                k of N of the rows, under a shared `run_id`), `batch=False` (ask through the
                provider's batch engine; submitted batches are recorded in the run folder and
                reconnected to on the next batch run), `batch_poll_interval=30.0`,
                `batch_wait=None` (0 only submits), `cancel_batches=False`, `max_cost=None`
                (US dollars all judges' calls may cost, priced by the project's `prices.yaml`;
                no call starts once spent plus in flight would pass it), `cache=True` (answer
                a request sent before, by any run on this machine, from the response cache),
                `cache_dir=None` (the user cache folder), `cache_max_mb=1024`,
                `progress="auto"` (a bar on a terminal; off one, or with `CI=true`, log lines
                per judge every `progress_every=10.0` percent or `progress_seconds=30.0`;
                `"bar"`, `"lines"`, `"off"`). meta-evaluator 0.3.3's keywords work too:
                `skip_duplicates` (is `resume`; warns), `save_results=False` (the run's files go
                to a scratch folder, deleted once the results are returned) and
                `results_format` (`json`, `csv`, `parquet`: also
                `results/<run_id>/<judge_id>.results.<format>`).

        Raises:
            ProjectError: The project has no data or no task yet.
            JudgeConfigError: An unknown judge id or option, bad settings, or a judge that cannot
                run, raised before any call (every problem at once).
            JudgeRunError: Some judges were stopped while the others ran and were saved: a
                judge's key variable is unset or its key holds stray characters (it makes no
                call), its endpoint refused its requests, or was never reached. `errors` names
                each stopped judge; `results` holds every judge's rows.
            CostCeilingError: The run reached `max_cost`: calls in flight finished, rows not
                asked stay to do (`remaining`); `results` holds every judge's rows.
            PricesError: With `max_cost`, the project's `prices.yaml` cannot be used.
        """
        from meta_evaluator._async import run_sync

        return run_sync(
            lambda: self.arun_judges(
                judge_ids, run_id, plan=plan, settings=settings, transport=transport, **options
            )
        )

    def run_judges(
        self,
        judge_ids: str | list[str] | None = None,
        run_id: str | None = None,
        *,
        plan: RunPlan | None = None,
        settings: RunSettings | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        **options: Unpack[RunOptions],
    ) -> dict[str, JudgeResults]:
        """meta-evaluator 0.3.3's synchronous run: `run_judges_async`, same arguments, results.

        Judges run side by side, not one by one as in 0.3.3; the rows are the same.
        """
        return self.run_judges_async(
            judge_ids, run_id, plan=plan, settings=settings, transport=transport, **options
        )

    async def arun_judges(
        self,
        judge_ids: str | list[str] | None = None,
        run_id: str | None = None,
        *,
        plan: RunPlan | None = None,
        settings: RunSettings | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        **options: Unpack[RunOptions],
    ) -> dict[str, JudgeResults]:
        """The awaitable twin of `run_judges_async` (same arguments): plan, then execute."""
        from meta_evaluator._v033 import run_options
        from meta_evaluator.judge.runner import execute
        from meta_evaluator.results.judge_results import results_of_run

        options, extras = run_options(options)  # type: ignore[assignment]  # 0.3.3's keywords
        if plan is not None and (not extras.save_results or extras.results_format):
            raise JudgeConfigError(
                "a plan is executed as it was made, into the project's results: give "
                "save_results and results_format to run_judges_async without plan=.",
                field="plan",
            )
        if not extras.save_results:
            with self._results_elsewhere():
                return await self.arun_judges(
                    judge_ids, run_id, plan=plan, settings=settings, transport=transport,
                    **options,
                )  # fmt: skip
        if plan is None:
            plan = self.plan_run(judge_ids, run_id, settings=settings, **options)
        elif judge_ids is not None or run_id is not None or settings is not None or options:
            raise JudgeConfigError(
                "a plan is executed as it was made: give plan= alone, or plan again with "
                "plan_run(...) to change judges, run_id or settings.",
                field="plan",
            )
        results = await results_of_run(execute(plan, transport=transport))
        for judge_plan in plan.judges:  # 0.3.3's llm_client and model_used
            result = results.get(judge_plan.judge_id)
            if result is not None:
                result.llm_client, result.model_used = (
                    judge_plan.judge.llm_client,
                    judge_plan.judge.model,
                )
        if extras.results_format is not None:  # 0.3.3's results_format: a copy in that format
            from meta_evaluator.results.export import export_results

            export_results(results, plan.task, self._paths.results_dir, extras.results_format)
        return results

    @contextlib.contextmanager
    def _said_of_this_project(self) -> Iterator[None]:
        """An error saying what the project lacks (`needs`) is given the project's folder.

        The layers below know the data and task they were handed, not the folder; the command
        line names the folder in the command it advises (`meta-evaluator add-task DIR ...`).
        """
        try:
            yield
        except MetaEvaluatorError as exc:
            if exc.needs is not None and exc.project_dir is None:
                exc.project_dir = self._paths.root
            raise

    @contextlib.contextmanager
    def _results_elsewhere(self) -> Iterator[None]:
        """Runs write to a scratch folder deleted afterwards (0.3.3's save_results=False)."""
        from meta_evaluator._v033 import scratch_folder

        saved = self._paths
        with scratch_folder(saved.root) as folder:
            self._paths = saved.with_results(folder / "results")
            try:
                yield
            finally:
                self._paths = saved

    def check_endpoints(
        self,
        judge_ids: str | list[str] | None = None,
        *,
        timeout: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> list[EndpointCheck]:
        """Send one cheap request to each endpoint the judges use, and say what each answered.

        The request lists the provider's models: no tokens are spent, and a wrong key shows as
        HTTP 401. Judges sharing an endpoint and key share one check; a judge whose key cannot
        be read fails its check without a request; the offline mock always passes. Call it
        without await, like `run_judges_async`.

        Args:
            judge_ids: The judges whose endpoints to check; all registered judges by default.
            timeout: Seconds for one check request, connect to last byte.
            transport: An httpx transport to send through (tests, proxies).

        Returns:
            One `EndpointCheck` per endpoint (ok, and what it answered: `ok`, `HTTP 401 ...`,
            `connection refused at host:port`), in the order the judges first name them.

        Raises:
            JudgeConfigError: An unknown judge id.
        """
        from meta_evaluator._async import run_sync
        from meta_evaluator.judge.endpoint_check import check_endpoints

        judges = self._selected_judges(judge_ids)
        return run_sync(lambda: check_endpoints(judges, timeout=timeout, transport=transport))

    def _data_and_task(self) -> tuple[EvalData, EvalTask]:
        """The project's data and task, or a ProjectError naming what is missing."""
        if self._data is None or self._eval_task is None:
            missing = "data" if self._data is None else "an evaluation task"
            raise ProjectError(
                f"{self._paths.root}: the project has no {missing} yet; add it before running "
                "judges.",
                path=self._paths.root,
                field="data" if self._data is None else "eval_task",
            )
        return self._data, self._eval_task

    def _selected_judges(self, judge_ids: str | Iterable[str] | None) -> list[Judge]:
        """The registered judges named by `judge_ids` (all by default), in that order.

        One id alone is one judge, as the original docs wrote it.
        """
        if isinstance(judge_ids, str):
            judge_ids = [judge_ids]
        elif judge_ids is not None and not isinstance(judge_ids, Iterable):
            raise JudgeConfigError(
                f"judge_ids must be a list of judge ids, got {type(judge_ids).__name__}.",
                field="judge_ids",
            )
        ids = list(self._judges) if judge_ids is None else list(judge_ids)
        unknown = [j for j in ids if j not in self._judges]
        if unknown or not ids:
            raise JudgeConfigError(
                f"no registered judge {unknown or '(none given)'}; judges are "
                f"{sorted(self._judges)}.",
                field="judge_ids",
            )
        return [self._judges[j] for j in ids]

    def add_external_judge_results(
        self,
        path: str | Path | None = None,
        judge_id: str | None = None,
        *,
        run_id: str | None = None,
        id_column: str = "original_id",
        tasks: list[str] | None = None,
        **v033: Any,
    ) -> JudgeResults:
        """Import labels a judge produced elsewhere (CSV, JSON, JSON Lines, Parquet) as a run.

        The file needs `id_column` with ids of this project's data and one column per required
        task; labels are checked like a judge's answers. The import becomes the judge's latest
        complete run, which `load_all_judge_results` returns. Every task the file has a column
        for is imported; `tasks` limits the import to some tasks (the others stay empty and are
        not required).

        meta-evaluator 0.3.3's keywords work too: `file_path=` (the path), `data_format=`
        (`csv`, `json`, `jsonl`, `parquet`; else from the extension), `llm_client=` and
        `model_used=` (kept with the run, read back as the results' `llm_client` and
        `model_used`), and the counts `succeeded_count=`, `skipped_count=`, `partial_count=`,
        `llm_error_count=`, `parsing_error_count=`, `other_error_count=`, `total_count=`,
        which are checked against the rows (a disagreement warns; the rows win).

        Raises:
            ProjectError: The project has no data or task yet.
            DataError: An argument is missing, given twice, unknown or of the wrong kind.
            DataFileError, ColumnError, IdError, TaskError: The file does not fit the project.
        """
        from meta_evaluator._v033 import check_counts, import_arguments
        from meta_evaluator.results.external import import_judge_results

        given = import_arguments("judge", path, judge_id, v033)

        if self._data is None or self._eval_task is None:
            raise ProjectError(
                f"{self._paths.root}: add data and a task before importing judge results.",
                path=self._paths.root,
            )
        if run_id is not None:
            check_safe_name(run_id, field="run_id")
        self._paths.check_inside()
        result = import_judge_results(
            given.path,
            given.owner_id,
            data=self._data,
            task=self._eval_task,
            results_dir=self._paths.results_dir,
            run_id=run_id,
            id_column=id_column,
            tasks=tasks,
            data_format=given.data_format,
            llm_client=given.llm_client,
            model=given.model_used,
        )
        check_counts({k: getattr(result, k) for k in given.counts}, given.counts, given.path)
        return result

    def load_all_judge_results(self) -> dict[str, JudgeResults]:
        """The latest complete run of every judge with results in the project, by judge id.

        A sharded run counts once all its shards are complete; its shards' rows come back as
        one result set, in data order.
        """
        from meta_evaluator.results.judge_results import latest_results, with_models

        ids = self._data.ids if self._data is not None else None
        results = latest_results(self._paths.results_dir, ids)
        return with_models(results, self._judges, self._paths.results_dir)

    def add_external_annotation_results(
        self,
        path: str | Path | None = None,
        annotator_id: str | None = None,
        *,
        run_id: str | None = None,
        id_column: str = "original_id",
        tasks: list[str] | None = None,
        **v033: Any,
    ) -> HumanAnnotationResults:
        """Import one human annotator's labels (CSV, JSON, JSON Lines, Parquet).

        The file needs `id_column` with ids of this project's data and one column per required
        task; every task it has a column for is imported (as 0.3.3 did), or only those of
        `tasks` when given (each needs a column). Labels are checked against the task, and rows
        that fail are kept as invalid (never scored). The import becomes the annotator's latest
        set, which `load_all_human_results` returns. Saved under
        `annotations/<run_id>/<annotator_id>.parquet`.

        meta-evaluator 0.3.3's keywords work too: `file_path=`, `data_format=`, and the counts
        `succeeded_count=`, `error_count=`, `total_count=` (checked against the rows).

        Raises:
            ProjectError: The project has no data or task yet.
            UnsafeNameError: The annotator id is not a safe file name.
            DataError: An argument is missing, given twice, unknown or of the wrong kind.
            DataFileError, ColumnError, IdError, TaskError: The file does not fit the project.
        """
        from meta_evaluator._v033 import check_counts, import_arguments
        from meta_evaluator.results.human_results import import_annotations

        given = import_arguments("annotator", path, annotator_id, v033)

        if self._data is None or self._eval_task is None:
            raise ProjectError(
                f"{self._paths.root}: add data and a task before importing annotations.",
                path=self._paths.root,
            )
        self._paths.check_inside()
        result = import_annotations(
            given.path,
            given.owner_id,
            data=self._data,
            task=self._eval_task,
            annotations_dir=self._paths.annotations_dir,
            run_id=run_id,
            id_column=id_column,
            tasks=tasks,
            data_format=given.data_format,
        )
        check_counts({k: getattr(result, k) for k in given.counts}, given.counts, given.path)
        return result

    def add_preference_pairs(
        self,
        path: str | Path,
        *,
        preference_task: str = "preference",
        trait_judge_id: str = "annotated_pairs",
        overwrite: bool = False,
        swap_positions: bool = False,
    ) -> dict[str, Any]:
        """Bring pairwise preference data into the project: pairs, task, human votes, traits.

        Reads an AnnotatedPairs JSON file (versions 1 and 2) or a CSV (`comparison_id`,
        `text_a`, `text_b`, `preferred`, optional `prompt`, metadata and vote columns). The pairs
        become the data (ids = comparison ids); without a task yet, the task gets
        `preference_task` plus one task per principle annotator, each with the labels
        `text_a`, `text_b`, `tie`. The reference and other non-principle annotators become
        human annotators of `preference_task`; principle annotators become the tasks of one
        imported judge, `trait_judge_id`, ready for `PreferenceScorer(reference_task=...)`.
        That set of votes is not a judge (`results.pair_votes`): it is scored only by metrics
        on its trait tasks, never by position-bias or debiased-preference metrics (its votes
        were cast on the original order only), and the report does not count it as a judge.

        With `swap_positions`, each pair also gets a twin with `text_a` and `text_b` swapped,
        and every other pair of columns `X_a` / `X_b` (`model_a` / `model_b`) with them
        (`data.position_swapped_variants`; its `swapped_of` column names the pair), so the
        judges run on both orders, for `PositionBiasScorer` and
        `PreferenceScorer(debias_positions=True)`; the votes imported are the pairs' own.

        Returns:
            What was imported: `pairs`, `duplicates_dropped`, `annotators`, `traits` (and
            `swapped_rows` with `swap_positions`).

        Raises:
            DataFileError, ColumnError: The file cannot be read as pairs.
            AlreadySetError: The project has data already and overwrite is False.
            TaskError: The project's task lacks the preference task or a trait task.
            DataError: `swap_positions` is not a bool.
        """
        from meta_evaluator.data import DataLoader
        from meta_evaluator.data.pairs import read_preference_pairs
        from meta_evaluator.results.external import import_judge_frame
        from meta_evaluator.results.human_results import import_annotation_frame
        from meta_evaluator.results.pair_votes import pair_votes_source

        if not isinstance(swap_positions, bool):
            raise DataError(
                f"add_preference_pairs: swap_positions must be True or False; got "
                f"{swap_positions!r}.",
                field="swap_positions",
            )
        pairs = read_preference_pairs(path)
        check_safe_name(trait_judge_id, field="trait_judge_id")
        self._paths.check_inside()
        # Names first: a trait task must not clash with the preference task or a results
        # column, and every annotator id must be a safe file name.
        renamed = {
            key: (f"{key}_trait" if key == preference_task or key in RESERVED_NAMES else key)
            for key, info in pairs.annotators.items()
            if info.kind == "principle"
        }
        traits = list(renamed.values())
        humans = [k for k, a in pairs.annotators.items() if a.kind != "principle"]
        for key in humans:
            check_safe_name(key, field="annotator_id")
        stem = Path(path).stem
        name = stem if stem and _is_safe(stem) else "pairs"
        data = DataLoader.load_from_dataframe(name, pairs.frame, id_column="comparison_id")
        if swap_positions:
            from meta_evaluator.data import position_swapped_variants

            columns = data.data.columns
            sides = [
                (c, c.removesuffix("_a") + "_b")
                for c in columns
                if c.endswith("_a") and c != "text_a" and c.removesuffix("_a") + "_b" in columns
            ]
            data = position_swapped_variants(data, side_columns=sides, name=name)
        if self._data is not None and not overwrite:
            raise AlreadySetError(
                f"{self._paths.root}: the project has data already; pass overwrite=True to "
                "replace it with these pairs.",
                path=self._paths.root,
            )
        labels = ["text_a", "text_b", "tie"]
        task = self._eval_task
        if task is None:
            task = EvalTask(
                task_schemas={preference_task: labels, **dict.fromkeys(traits, labels)},
                prompt_columns=["prompt"] if "prompt" in pairs.frame.columns else None,
                response_columns=["text_a", "text_b"],
                required_tasks=[preference_task],
            )
        missing = [t for t in [preference_task, *traits] if t not in task.task_names]
        if missing:
            raise TaskError(
                f"{path}: the project's task has no task(s) {missing} for these pairs; add them "
                "to the EvalTask or start from a project without a task.",
                path=path,
                field="task_schemas",
            )
        task.validate_against(data)
        self.add_data(data, overwrite=overwrite)
        if self._eval_task is None:
            self.add_eval_task(task)
        assert self._data is not None
        ids = pairs.frame.get_column("comparison_id")
        source = pair_votes_source(path)  # tells the trait votes apart from a judge's labels
        for key in humans:
            frame = pl.DataFrame({"original_id": ids, preference_task: pairs.votes[key]})
            import_annotation_frame(
                frame, key, source=source, where=path, data=self._data, task=task,
                annotations_dir=self._paths.annotations_dir, tasks=[preference_task],
            )  # fmt: skip
        if traits:
            frame = pl.DataFrame(
                {"original_id": ids, **{renamed[k]: pairs.votes[k] for k in renamed}}
            )
            import_judge_frame(
                frame, trait_judge_id, source=source, where=path, data=self._data, task=task,
                results_dir=self._paths.results_dir, tasks=traits,
            )  # fmt: skip
        found: dict[str, Any] = {
            "pairs": pairs.frame.height,
            "duplicates_dropped": pairs.duplicates,
            "annotators": humans,
            "traits": traits,
        }
        if swap_positions:
            found["swapped_rows"] = len(data) - pairs.frame.height
        return found

    def load_all_human_results(self) -> dict[str, HumanAnnotationResults]:
        """The latest set of labels of every annotator in the project, by annotator id."""
        from meta_evaluator.results.human_results import latest_annotations

        return latest_annotations(self._paths.annotations_dir)

    def launch_annotator(
        self,
        port: int | None = None,
        host: str = "127.0.0.1",
        *,
        token: str | None = None,
        use_ngrok: bool = False,
        traffic_policy_file: str | None = None,
    ) -> None:
        """Serve the annotation page for this project's data and task until Ctrl-C.

        Annotators open the printed address, give their id and label each row (one control per
        task; number keys pick options, Enter saves). Every label is saved at once under
        `annotations/web/`; an annotator resumes where they stopped. The page binds to loopback
        by default; to let others reach it, pass their `host` and a `token` they must present.

        meta-evaluator 0.3.3's `use_ngrok=True` (and `traffic_policy_file`) is refused: no
        tunnel is bundled; run your own in front of the page, or pass `host` and `token`.

        Raises:
            ProjectError: No data or task yet; a non-loopback host without a token
                (`field="token"`); a port out of range, in use or needing privileges
                (`field="port"`); a host that does not resolve or is not this machine's
                (`field="host"`); ngrok asked for (`field="use_ngrok"`).
        """
        from meta_evaluator._v033 import annotator_host
        from meta_evaluator.annotate import serve

        host = annotator_host(host, use_ngrok, traffic_policy_file)

        self._paths.check_inside()
        serve(self, host=host, port=port, token=token)

    def launch_viewer(
        self,
        port: int | None = None,
        host: str = "127.0.0.1",
        *,
        token: str | None = None,
        annotate_url: str | None = None,
    ) -> None:
        """Serve the results viewer for this project until Ctrl-C (it only reads).

        Every row of each judge's latest complete run beside each annotator's label and the
        humans' majority: filters (judge ≠ humans, humans split, invalid, error, a label
        pair, text), a confusion matrix whose cells list their rows, a page per row, and the
        same as JSON under `/api/` (docs/viewer.md). The viewer binds to loopback by default;
        to let others reach it, pass their `host` and a `token` they must present.
        `annotate_url`, the address of the annotation page (`launch_annotator`), makes the
        row page link to label the row there.

        Raises:
            ProjectError: No data or task yet, or no judge with a complete run; a non-loopback
                host without a token (`field="token"`); a port out of range, in use or
                needing privileges (`field="port"`); a host that does not resolve or is not
                this machine's (`field="host"`); an `annotate_url` that is no http(s) address
                (`field="annotate_url"`).
        """
        from meta_evaluator.view import serve

        serve(self, host=host, port=port, token=token, annotate_url=annotate_url)

    # ----- scoring ----------------------------------------------------------------------------

    def add_metrics_config(self, metrics_config: MetricsConfig, overwrite: bool = False) -> None:
        """Keep `metrics_config` for `compare_async()` calls that give none (0.3 style).

        Raises:
            MetricConfigError: `metrics_config` is not a MetricsConfig.
            AlreadySetError: A configuration is kept already and `overwrite` is False.
        """
        from meta_evaluator.scores import MetricsConfig

        if not isinstance(metrics_config, MetricsConfig):
            from meta_evaluator.errors import MetricConfigError

            raise MetricConfigError(
                f"add_metrics_config: expected a MetricsConfig, got "
                f"{type(metrics_config).__name__}."
            )
        if self._metrics_config is not None and not overwrite:
            raise AlreadySetError(
                "add_metrics_config: a metrics configuration is set already; pass "
                "overwrite=True to replace it.",
                path=self._paths.root,
                field="metrics_config",
            )
        self._metrics_config = metrics_config

    @property
    def score_report(self) -> ScoreReport:
        """The judges x metrics table of the scores saved for `add_metrics_config`'s metrics.

        `.print()`, `.save("score_report.html", format="html")` (or `csv`, `txt`, into
        `scores/`), `.generate()` (a polars DataFrame), as in meta-evaluator 0.3.3.

        Raises:
            MetricConfigError: No metrics configuration was added.
        """
        from meta_evaluator.errors import MetricConfigError
        from meta_evaluator.reports.score_report import ScoreReport

        if self._metrics_config is None:
            raise MetricConfigError(
                "score_report: no metrics; call add_metrics_config(config) (then "
                "compare_async()) first.",
                field="metrics_config",
            )
        return ScoreReport(self._paths.scores_dir, self._metrics_config)

    def compare_async(
        self,
        metrics_config: MetricsConfig | None = None,
        judge_results: dict[str, JudgeResults] | None = None,
        human_results: dict[str, HumanAnnotationResults] | None = None,
    ) -> ScoreTable:
        """Score every judge against the humans with every metric; call it without await.

        Works in scripts and inside a running event loop; `acompare` is the awaitable twin.
        Results go to `scores/<scorer_name>/<unique_name>/<judge_id>_result.json`, plots beside
        them.

        Args:
            metrics_config: The metrics (default: the one given to `add_metrics_config`).
            judge_results: By judge id (default: `load_all_judge_results()`).
            human_results: By annotator id (default: `load_all_human_results()`).
                `compare_async(judge_results, human_results)`, 0.3.3's order after
                `add_metrics_config`, works too.

        Returns:
            unique metric name -> (metric config, one result per judge).

        Raises:
            MetricConfigError: No metrics, an unknown task, or a scorer that cannot score a
                task's labels (before anything is written).
            ScoringError: No judge results or no human annotations.
        """
        from meta_evaluator._async import run_sync

        return run_sync(self.acompare, metrics_config, judge_results, human_results)

    async def acompare(
        self,
        metrics_config: MetricsConfig | None = None,
        judge_results: dict[str, JudgeResults] | None = None,
        human_results: dict[str, HumanAnnotationResults] | None = None,
    ) -> ScoreTable:
        """The awaitable twin of `compare_async`."""
        from meta_evaluator._v033 import compare_arguments
        from meta_evaluator.errors import MetricConfigError
        from meta_evaluator.scores import MetricsConfig
        from meta_evaluator.scores.compare import compare, scoring_columns

        metrics_config, judge_results, human_results = compare_arguments(
            metrics_config, judge_results, human_results
        )
        config = metrics_config if metrics_config is not None else self._metrics_config
        if config is None:
            raise MetricConfigError(
                "compare_async: no metrics; pass a MetricsConfig or call add_metrics_config."
            )
        self._paths.check_inside()
        task = self._eval_task
        # Only the columns scoring reads: a million rows' raw answers would double the memory.
        wanted = None
        if isinstance(config, MetricsConfig) and task is not None:
            wanted = scoring_columns(config, task)
        # Loaded here, the results are handed over, not kept: compare lets each go when done.
        with self._said_of_this_project():
            return await compare(
                config,
                judge_results if judge_results is not None else self._judges_to_score(wanted),
                human_results if human_results is not None else self._humans_to_score(wanted),
                scores_dir=self._paths.scores_dir,
                task=self._eval_task,
                data=self._data,
            )

    def compare_runs(
        self,
        run_a: str,
        run_b: str,
        *,
        judge_id: str | None = None,
        task: str | None = None,
        bootstrap: BootstrapConfig | None = None,
    ) -> RunComparison:
        """What changed from run A to run B: the rows whose label flipped, and the agreement.

        Each flipped row says whether it moved toward the humans' majority label or away; the
        accuracy and Cohen's kappa of both runs against the humans are compared with a paired
        bootstrap interval and McNemar's exact test (docs/scoring.md). Without human labels the
        flips are still listed and those figures are None, saying why. The record is also saved
        as `reports/compare-runs/<key>.json`, which the report shows.

        Args:
            run_a: The first run's id, or `run_id:judge_id` to name its judge.
            run_b: The second run, likewise (another judge compares two models).
            judge_id: The judge of a run given without one (needed when it holds several).
            task: The task compared (default: the only task with labels).
            bootstrap: How the intervals are drawn (default `BootstrapConfig()`: 1,000
                resamples, 95 %, seed 0).

        Raises:
            ProjectError: An unknown run (the runs there are listed), a judge not in a run (its
                judges are listed), several judges and none named, an unfinished run, or the
                same run of the same judge twice.
            UnsafeNameError: A run or judge id is not a safe file name.
            TaskError: No such labelled task, several and none named, or a run without it.
            ScoringError: The runs share no labelled row, or `bootstrap` is not a
                BootstrapConfig.
            StorageError: The record cannot be written.
        """
        from meta_evaluator.scores.run_comparison import COMPARISONS_FOLDER, compare_runs

        if judge_id is not None:
            check_safe_name(judge_id, field="judge_id")
        with self._said_of_this_project():
            comparison = compare_runs(
                self._paths.results_dir, self._paths.annotations_dir, self._eval_task, run_a,
                run_b, judge_id=judge_id, task=task, bootstrap=bootstrap,
                ids=self._data.ids if self._data is not None else None,
            )  # fmt: skip
        self._paths.check_inside()
        target = self._paths.reports_dir / COMPARISONS_FOLDER / f"{comparison.key}.json"
        write_json(target, comparison.to_json(), root=self._paths.root)
        return comparison

    # ----- planning labels and watching for drift ------------------------------------------

    def plan_labels(
        self,
        *,
        judge_id: str | None = None,
        task: str | None = None,
        epsilon: float | None = None,
        power: float = 0.8,
        simulations: int = 200,
        seed: int = 0,
    ) -> LabelPlanReport:
        """How many human labels the alt-test needs: its power for designs of items x annotators.

        The pilot is the project itself: the judge's latest complete labels of a single-choice
        task and every annotator's labels of the same rows, resampled per design
        (`stats.label_budget.plan_labels`, docs/scoring.md). The alt-test's settings are those
        of the project's alt-test metric for the task (`add_metrics_config`, else project.yaml
        or metrics.yaml), else epsilon 0.2; `epsilon` wins. Saved as `reports/label_plan.json`
        with its plot `reports/label_plan.png`, which the report shows.

        Args:
            judge_id: The judge (default: the only judge with a complete run).
            task: The task (default: the only task with labels).
            epsilon: The alt-test's epsilon, in [0, 1).
            power: The power a design must reach, in (0, 1).
            simulations: Studies simulated per design (>= 10).
            seed: Of every draw (>= 0): the same seed gives the same plan.

        Raises:
            TaskError: No data or task, an unknown task, or one that is not single-choice.
            ProjectError: No judge with a complete run, an unknown judge (those with one are
                listed), or several and none named.
            UnsafeNameError: `judge_id` is not a safe file name.
            ScoringError: Fewer than two annotators labelled the task, or a setting out of
                range.
            MetricConfigError, ProjectFileError: The project's metrics cannot be read.
            StorageError: The plan cannot be written.
        """
        from meta_evaluator.project_yaml import read_project_metrics
        from meta_evaluator.scores.label_plan import (
            LABEL_PLAN_FILE,
            LABEL_PLAN_PLOT,
            alt_test_settings,
            check_plan_options,
            plan_pilot,
            read_pilot,
        )
        from meta_evaluator.scores.monitor_plots import label_plan_chart

        check_plan_options(power=power, simulations=simulations, seed=seed, epsilon=epsilon)
        if judge_id is not None:
            check_safe_name(judge_id, field="judge_id")
        with self._said_of_this_project():
            pilot = read_pilot(
                self._paths.results_dir, self._paths.annotations_dir, self._data, self._eval_task,
                judge_id=judge_id, task=task,
            )  # fmt: skip
        metrics = None
        if epsilon is None:
            metrics = self._metrics_config or read_project_metrics(self._paths.root)
        settings = alt_test_settings(metrics, pilot.task, epsilon=epsilon)
        report = plan_pilot(pilot, settings, power=power, simulations=simulations, seed=seed)
        self._paths.check_inside()
        reports = self._paths.reports_dir
        write_json(reports / LABEL_PLAN_FILE, report.to_json(), root=self._paths.root)
        label_plan_chart(report, reports / LABEL_PLAN_PLOT)
        return report

    def drift(
        self,
        judge_id: str,
        *,
        baseline: str | None = None,
        against: str | None = None,
        task: str | None = None,
        thresholds: DriftThresholds | None = None,
        bootstrap: BootstrapConfig | None = None,
    ) -> DriftCheck:
        """Has the judge changed? Its label shift and agreement change between two runs.

        Compares two complete runs of the judge over the same rows: the label shift
        (`stats.drift.label_shift`: chi-square, Stuart-Maxwell, PSI, share changed) and the
        change in agreement with the humans with a paired bootstrap interval (as
        `compare_runs`), each held against the thresholds (docs/scoring.md). The check is
        appended to `reports/drift_history.jsonl` (safely under several processes) and the
        history's plot `reports/drift_history.png` redrawn; the report shows both.

        Args:
            judge_id: The judge.
            baseline: A run id, or "first" (default: the judge's first complete run).
            against: A run id, or "latest" (default: the judge's latest complete run).
            task: The task compared (default: the only task with labels).
            thresholds: The limits (default: the `drift:` section of the project's
                project.yaml, else `DriftThresholds()`).
            bootstrap: How the interval is drawn (default `BootstrapConfig()`).

        Returns:
            The check; `check.exceeded` names the thresholds exceeded (`check.drifted`).

        Warns:
            DamagedHistoryWarning: Lines of the history are not drift checks (they are kept).

        Raises:
            ProjectError: The judge has no complete run or one only (what exists is named), an
                unknown or unfinished run, or the same run twice.
            UnsafeNameError: The judge or a run id is not a safe file name.
            TaskError: No such labelled task, or several and none named.
            ScoringError: The runs share no labelled row.
            MetricConfigError, ProjectFileError: The thresholds cannot be read.
            StorageError: The history cannot be written.
        """
        from meta_evaluator.project_yaml import read_drift_thresholds
        from meta_evaluator.scores.drift import check_drift
        from meta_evaluator.scores.drift_history import (
            DRIFT_HISTORY_FILE,
            DRIFT_HISTORY_PLOT,
            DamagedHistoryWarning,
            DriftHistory,
            append_check,
        )
        from meta_evaluator.scores.monitor_plots import drift_chart

        limits = thresholds if thresholds is not None else read_drift_thresholds(self._paths.root)
        with self._said_of_this_project():
            check = check_drift(
                self._paths.results_dir, self._paths.annotations_dir, self._eval_task, judge_id,
                baseline=baseline, against=against, task=task, thresholds=limits,
                bootstrap=bootstrap, ids=self._data.ids if self._data is not None else None,
            )  # fmt: skip
        self._paths.check_inside()
        path = self._paths.reports_dir / DRIFT_HISTORY_FILE

        def plot(history: DriftHistory) -> None:
            drift_chart(history.checks, self._paths.reports_dir / DRIFT_HISTORY_PLOT)

        history = append_check(path, check, root=self._paths.root, then=plot)
        damage = history.damage_report(path)
        if damage is not None:
            warnings.warn(damage, DamagedHistoryWarning, stacklevel=2)
        return check

    def _judges_to_score(self, wanted: ScoringColumns | None) -> dict[str, JudgeResults]:
        """The judges' latest complete results, read as scoring needs them; warns of the rest."""
        from meta_evaluator.results.judge_results import latest_results

        ids = self._data.ids if self._data is not None else None
        results = latest_results(
            self._paths.results_dir,
            ids,
            columns=wanted.judges if wanted else None,
            categories=wanted.categories if wanted else (),
        )
        self._warn_unscored(results)
        return results

    def _humans_to_score(self, wanted: ScoringColumns | None) -> dict[str, HumanAnnotationResults]:
        """Every annotator's labels, read as scoring needs them."""
        from meta_evaluator.results.human_results import latest_annotations

        return latest_annotations(
            self._paths.annotations_dir,
            columns=wanted.humans if wanted else None,
            categories=wanted.categories if wanted else (),
        )

    def _warn_unscored(self, judge_results: dict[str, JudgeResults]) -> None:
        """Warn (IncompleteScoresWarning) of each registered judge whose runs are unfinished.

        A judge stopped by a dead endpoint (or interrupted) keeps its run unfinished, so that a
        later run resumes it; it is left out of the scores, and said so. A judge never run is
        not warned of here (a script may score imported results only); `score` names it too.
        """
        from meta_evaluator.results.unfinished import unscored_judges
        from meta_evaluator.scores.compare import IncompleteScoresWarning

        rows = len(self._data) if self._data is not None else None
        unscored = [
            judge
            for judge in unscored_judges(
                self._paths.results_dir, self._judges, judge_results, rows=rows
            )
            if judge.run_id is not None
        ]
        if unscored:
            warnings.warn(
                f"{len(unscored)} judge(s) have no complete run to score (run them again, with "
                "retry=['error'] when they have error rows):\n"
                + "\n".join(f"judge {u.judge_id!r} not scored: {u.reason}" for u in unscored),
                IncompleteScoresWarning,
                stacklevel=2,
            )

    # ----- saving -----------------------------------------------------------------------------

    def save_state(
        self,
        include_task: bool = True,
        include_data: bool = True,
        data_format: DataFormat | None = None,
        data_filename: str | None = None,
    ) -> None:
        """Write the data file and `main_state.json` as one change; no secrets are written.

        The data goes to a pending file first, then the state is replaced, then the pending file
        takes its name. A failure before the state is replaced leaves the project as it was; a
        crash after it is completed by the next load (the state holds the data's digest).

        Args:
            include_task: Save the current task; False keeps the task the state already holds.
            include_data: Save the current data (to `data/<data_filename>`); False keeps the
                data the state already holds, file included.
            data_format: `parquet` (keeps every type), `csv` or `json` (types restored from the
                state on load); default: the format the project's data was saved in before
                (so a CSV project stays CSV), else parquet.
            data_filename: The data file's name; default `main_data.<format>`; its extension
                must match the format.

        Raises:
            DataError: `data_format` is unknown or the file name does not fit it.
            UnsafeNameError: `data_filename` is not a safe file name.
            ColumnError: CSV was asked for but a column is nested.
            OutsideProjectError: A folder of the project links out of it.
            StorageError: A file could not be written.
        """
        self._paths.check_inside()  # the first save has no main_state.json to find the root by
        data_dir = self._paths.data_dir
        data_state = self._saved_data
        staged = None
        if include_data and self._data is not None:
            previous = self._saved_data.format if self._saved_data is not None else None
            fmt = data_format or previous or "parquet"
            filename = _project_data.check_target(data_dir, fmt, data_filename)
            staged = _project_data.stage(self._data, data_dir, filename, fmt, root=self._paths.root)
            data_state = staged
        task = self._eval_task if include_task else self._saved_task
        if include_task:
            from meta_evaluator._v033 import warn_unsaved_skip_function

            warn_unsaved_skip_function(task)
        try:
            state = dump_state(data_state, task, self._judges)
            write_json(self._paths.state_file, state, root=self._paths.root)
        except BaseException:
            if staged is not None:
                _project_data.discard(data_dir, staged.file)
            raise
        old = self._saved_data
        self._saved_data, self._saved_task = data_state, task
        if staged is not None:
            _project_data.commit(data_dir, staged.file)
            if old is not None and old.file != staged.file:
                (data_dir / old.file).unlink(missing_ok=True)

    def __repr__(self) -> str:
        return (
            f"MetaEvaluator(project_dir={str(self._paths.root)!r}, "
            f"data={self._data.name if self._data else None!r}, "
            f"tasks={self._eval_task.task_names if self._eval_task else None}, "
            f"judges={sorted(self._judges)})"
        )


def _is_safe(name: str) -> bool:
    try:
        check_safe_name(name, field="name")
    except UnsafeNameError:
        return False
    return True


def _unknown_placeholders(judge: Judge, data: EvalData | None, task: EvalTask | None) -> list[str]:
    """Placeholders of a judge's prompt that name no column (of the data, else of the task)."""
    if data is not None:
        known = data.columns
    elif task is not None:
        known = task.columns_shown()
    else:
        return []
    return [p for p in judge.prompt.placeholders if p not in known]


def _placeholder_problems(
    judges: Iterable[Judge], data: EvalData | None, task: EvalTask | None
) -> list[str]:
    problems = []
    for judge in judges:
        unknown = _unknown_placeholders(judge, data, task)
        if unknown:
            known = data.columns if data is not None else task.columns_shown() if task else []
            placeholders = shown(["{" + u + "}" for u in unknown])
            problems.append(
                f"judge {judge.id!r}: prompt placeholder(s) {placeholders} "
                f"name no column (columns: {listed(known)}); fix the prompt or the data."
            )
    return problems


def _run_settings(
    settings: RunSettings | None, options: Mapping[str, Any], problems: list[MetaEvaluatorError]
) -> RunSettings | None:
    """`settings` with `options` applied (or the options alone).

    None, with the problem added to `problems`, when they are not valid.
    """
    from meta_evaluator.judge import RunSettings

    try:
        if settings is None:
            return RunSettings(**options)
        if isinstance(settings, RunSettings):
            return settings.model_copy(update=dict(options))
        raise JudgeConfigError(
            f"settings must be a RunSettings, got {type(settings).__name__}; pass options by "
            "name (max_concurrency=...) or RunSettings(...).",
            field="settings",
        )
    except JudgeConfigError as exc:
        problems.append(exc)
        return None
