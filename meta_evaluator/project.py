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

import logging
from pathlib import Path
from typing import Any, Literal

from meta_evaluator._state import (
    SCHEMA_VERSION,
    STATE_FILE,
    DataState,
    ProjectState,
    SampleState,
    parse_state,
)
from meta_evaluator._version import __version__
from meta_evaluator.data import EvalData, SampleEvalData
from meta_evaluator.data.persist import DataFormat, dtype_name, read_frame, write_frame
from meta_evaluator.errors import (
    AlreadySetError,
    DataError,
    JudgeConfigError,
    ProjectError,
    ProjectExistsError,
    ProjectNotFoundError,
    StateError,
    TaskError,
    UnsafeNameError,
)
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge import Judge, Prompt
from meta_evaluator.storage import check_safe_name, read_json, write_json

__all__ = ["MetaEvaluator", "ProjectPaths"]

logger = logging.getLogger(__name__)

_DATA_FORMATS: tuple[DataFormat, ...] = ("parquet", "csv", "json")


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

    def __init__(self, project_dir: str | Path = ".", load: bool = False) -> None:
        """Create or open the project in `project_dir`.

        Raises:
            ProjectExistsError: `load=False` and the folder already holds a project.
            ProjectNotFoundError: `load=True` and the folder holds no project.
            ProjectError: The path is a file, not a folder.
            StateError: `main_state.json` is corrupt, foreign or from a newer version.
        """
        if not isinstance(project_dir, str | Path) or not str(project_dir):
            raise ProjectError(
                f"project_dir must be a folder path, got {project_dir!r}.", field="project_dir"
            )
        self._paths = ProjectPaths(Path(project_dir))
        self._data: EvalData | None = None
        self._eval_task: EvalTask | None = None
        self._judges: dict[str, Judge] = {}
        root = self._paths.root
        if root.exists() and not root.is_dir():
            raise ProjectError(
                f"{root}: is a file, not a project folder; choose a folder path.", path=root
            )
        if load:
            self._load()
        else:
            self._create()

    # ----- the folder -------------------------------------------------------------------------

    @property
    def project_dir(self) -> Path:
        """The project folder."""
        return self._paths.root

    @property
    def paths(self) -> ProjectPaths:
        """Where each kind of file lives in the project folder."""
        return self._paths

    def _create(self) -> None:
        state = self._paths.state_file
        if state.exists():
            raise ProjectExistsError(
                f"{self._paths.root}: already holds a project ({STATE_FILE} exists); open it "
                "with MetaEvaluator(..., load=True) or choose another folder.",
                path=state,
            )
        self._write_state(self._state(include_task=True, data_state=None))
        logger.info("created project %s", self._paths.root)

    def _load(self) -> None:
        root, state_file = self._paths.root, self._paths.state_file
        if not root.is_dir():
            raise ProjectNotFoundError(
                f"{root}: no such folder; check the path, or pass load=False to create a project.",
                path=root,
            )
        if not state_file.is_file():
            raise ProjectNotFoundError(
                f"{root}: holds no project ({STATE_FILE} is missing); check the path, or pass "
                "load=False to create a project there.",
                path=state_file,
            )
        state = parse_state(read_json(state_file), state_file)
        for key, judge in state.judges.items():
            if key != judge.id:
                raise StateError(
                    f"{state_file}: judges.{key} holds a judge whose id is {judge.id!r}; make "
                    "the key and the id equal.",
                    path=state_file,
                    field=f"judges.{key}",
                )
        if state.data is not None:
            self._data = self._read_data(state.data)
        self._eval_task = state.eval_task
        if self._data is not None and self._eval_task is not None:
            self._eval_task.validate_against(self._data)
        self._judges = dict(state.judges)
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
        if on_duplicate not in (None, "skip", "overwrite"):
            raise JudgeConfigError(
                f"on_duplicate must be None, 'skip' or 'overwrite', got {on_duplicate!r}.",
                field="on_duplicate",
                judge_id=judge_id,
            )
        if judge_id in self._judges:
            if on_duplicate == "skip":
                return self._judges[judge_id]
            if not (overwrite or on_duplicate == "overwrite"):
                raise JudgeConfigError(
                    f"judge {judge_id!r} is already registered; pass on_duplicate='overwrite' "
                    "to replace it or 'skip' to keep it.",
                    field="judge_id",
                    judge_id=judge_id,
                )
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
        judge = Judge.build(
            id=judge_id, llm_client=llm_client, model=model, prompt=prompt, **settings
        )
        self._check_placeholders(judge)
        self._judges[judge_id] = judge
        return judge

    def _check_placeholders(self, judge: Judge) -> None:
        known: list[str] = []
        if self._data is not None:
            known = self._data.columns
        elif self._eval_task is not None:
            known = self._eval_task.columns_shown()
        else:
            return
        unknown = [p for p in judge.prompt.placeholders if p not in known]
        if unknown:
            raise JudgeConfigError(
                f"judge {judge.id!r}: prompt placeholder(s) {['{' + u + '}' for u in unknown]} "
                f"name no column (columns: {known}); fix the prompt or the data.",
                field="prompt",
                judge_id=judge.id,
            )

    # ----- saving -----------------------------------------------------------------------------

    def save_state(
        self,
        include_task: bool = True,
        include_data: bool = True,
        data_format: DataFormat | None = "parquet",
        data_filename: str | None = None,
    ) -> None:
        """Write the data file and `main_state.json`, each atomically; no secrets are written.

        Args:
            include_task: Save the task.
            include_data: Save the data (to `data/<data_filename>`).
            data_format: `parquet` (keeps every type), `csv` or `json` (types restored from the
                state on load).
            data_filename: The data file's name; default `main_data.<format>`; its extension
                must match the format.

        Raises:
            DataError: `data_format` is unknown or the file name does not fit it.
            UnsafeNameError: `data_filename` is not a safe file name.
            ColumnError: CSV was asked for but a column is nested.
            StorageError: A file could not be written.
        """
        data_state = None
        if include_data and self._data is not None:
            data_format = data_format or "parquet"
            if data_format not in _DATA_FORMATS:
                raise DataError(
                    f"data_format must be one of {list(_DATA_FORMATS)}, got {data_format!r}.",
                    field="data_format",
                )
            filename = data_filename or f"main_data.{data_format}"
            check_safe_name(filename, field="data_filename")
            if Path(filename).suffix != f".{data_format}":
                raise DataError(
                    f"data_filename {filename!r} must end in '.{data_format}' for data_format "
                    f"{data_format!r}.",
                    field="data_filename",
                )
            write_frame(self._data.data, self._paths.data_dir / filename, data_format)
            data_state = self._data_state(self._data, filename, data_format)
        old = self._saved_data_file()
        self._write_state(self._state(include_task=include_task, data_state=data_state))
        if old is not None and (data_state is None or old != data_state.file):
            (self._paths.data_dir / old).unlink(missing_ok=True)

    def _saved_data_file(self) -> str | None:
        try:
            raw = read_json(self._paths.state_file)
        except (StateError, OSError):
            return None
        data = raw.get("data") if isinstance(raw, dict) else None
        file = data.get("file") if isinstance(data, dict) else None
        return file if isinstance(file, str) else None

    @staticmethod
    def _data_state(data: EvalData, filename: str, data_format: DataFormat) -> DataState:
        frame = data.data
        sample = None
        if isinstance(data, SampleEvalData):
            sample = SampleState(
                sample_name=data.sample_name,
                stratification_columns=data.stratification_columns,
                sample_percentage=data.sample_percentage,
                seed=data.seed,
                original_size=data.original_size,
            )
        return DataState(
            name=data.name,
            id_column=data.id_column,
            file=filename,
            format=data_format,
            num_rows=frame.height,
            columns={c: dtype_name(d) for c, d in frame.schema.items()},
            sample=sample,
        )

    def _state(self, *, include_task: bool, data_state: DataState | None) -> ProjectState:
        return ProjectState(
            schema_version=SCHEMA_VERSION,
            meta_evaluator_version=__version__,
            data=data_state,
            eval_task=self._eval_task if include_task else None,
            judges=dict(sorted(self._judges.items())),
        )

    def _write_state(self, state: ProjectState) -> None:
        write_json(self._paths.state_file, state.model_dump(mode="json"))

    def _read_data(self, state: DataState) -> EvalData:
        state_file = self._paths.state_file
        try:
            check_safe_name(state.file, field="data.file")
        except UnsafeNameError as exc:
            raise StateError(f"{state_file}: {exc.message}", path=state_file) from exc
        path = self._paths.data_dir / state.file
        frame = read_frame(path, state.format, state.columns)
        if frame.height != state.num_rows:
            raise StateError(
                f"{path}: holds {frame.height} rows, but {STATE_FILE} says {state.num_rows}; the "
                "file was changed outside meta-evaluator. Restore it, or add the data again and "
                "save the state.",
                path=path,
            )
        if state.sample is None:
            return EvalData(state.name, frame, state.id_column, source=str(path))
        return SampleEvalData(
            state.name,
            frame,
            state.id_column,
            source=str(path),
            **state.sample.model_dump(),
        )

    def __repr__(self) -> str:
        return (
            f"MetaEvaluator(project_dir={str(self._paths.root)!r}, "
            f"data={self._data.name if self._data else None!r}, "
            f"tasks={self._eval_task.task_names if self._eval_task else None}, "
            f"judges={sorted(self._judges)})"
        )
