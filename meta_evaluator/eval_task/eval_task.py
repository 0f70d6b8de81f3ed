"""EvalTask: which columns a judge sees and which questions it answers, with their labels."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, PrivateAttr, ValidationInfo, field_validator, model_validator

from meta_evaluator._util import repeated, shown
from meta_evaluator._validation import ConfigModel
from meta_evaluator.errors import TaskError
from meta_evaluator.eval_task.labels import normalize_label

if TYPE_CHECKING:
    from meta_evaluator.data import EvalData

__all__ = [
    "NOT_SELECTED",
    "AnsweringMethod",
    "EvalTask",
    "MultiLabelSchema",
    "TaskKind",
    "answer_key",
]

AnsweringMethod = Literal["structured", "xml", "text"]
SkipFunction = Callable[[dict[str, Any]], bool]
"""A row (column → value) → whether judges skip it (`EvalTask.skip_function`)."""
TaskKind = Literal["single", "multilabel", "free_text"]

# The columns judge and human results tables have besides one column per task (API.md, "Judge
# results"); results/ builds its tables from this list, and a task may not take one of the names.
RESULT_COLUMNS = (
    "original_id",
    "judge_id",
    "annotator_id",
    "run_id",
    "outcome",
    "status",
    "error_message",
    "llm_raw_response_content",
    "llm_prompt_tokens",
    "llm_completion_tokens",
    "llm_call_duration_seconds",
    "attempts",
    "timestamp",
)
# Judge results also carry these (results/judge_results.py), so no task may take them either.
JUDGE_ROW_COLUMNS = ("fingerprint", "prompt_hash", "batch_id", "cached", "sample_labels")
RESERVED_NAMES = frozenset({*RESULT_COLUMNS, *JUDGE_ROW_COLUMNS, "human_id"})
_TASK_NAME_LIMIT = 64
_NOT_IN_KEY = re.compile(r"[^A-Za-z0-9_.-]")
_ANSWERING_ALIASES = {"instructor": "structured"}
NOT_SELECTED = "FALSE"
"""The word meta-evaluator 0.3.3 writes in a multi-label vector's slot that is not chosen; no
outcome may be called so (any case), or a stored vector would read two ways."""


def answer_key(task_name: str) -> str:
    """The name a task goes by where a judge answers: JSON keys, XML tags, the output schema.

    Providers take only `[A-Za-z0-9_.-]{1,64}` as a JSON schema property (Anthropic's tools,
    some OpenAI-compatible servers), so every other character becomes `_`, as meta-evaluator
    0.3.3 did; results, files and scores keep the task's own name.

    Example:
        >>> answer_key("harm types")
        'harm_types'
    """
    return _NOT_IN_KEY.sub("_", task_name)[:_TASK_NAME_LIMIT]


def resolve_answering_method(method: Any) -> Any:
    """Resolve answering-method aliases, in this one place: `instructor` (0.3) → `structured`."""
    return _ANSWERING_ALIASES.get(method, method) if isinstance(method, str) else method


class MultiLabelSchema(ConfigModel):
    """A task whose answer is any subset of `outcomes` (pick all that apply).

    Example:
        >>> MultiLabelSchema(outcomes=["violence", "fraud", "self-harm"]).outcomes
        ['violence', 'fraud', 'self-harm']
    """

    error_class = TaskError

    outcomes: list[str]
    """The labels that may be chosen (at least two), each at most once; matched
    case-insensitively. `FALSE` is not one: meta-evaluator 0.3.3 writes it in the slots of a
    stored vector that are not chosen."""

    @field_validator("outcomes")
    @classmethod
    def _check_outcomes(cls, outcomes: list[str]) -> list[str]:
        checked = _check_labels(outcomes, minimum=2)
        if any(normalize_label(o) == normalize_label(NOT_SELECTED) for o in checked):
            raise ValueError(
                f"{NOT_SELECTED!r} cannot be an outcome: meta-evaluator 0.3.3 writes it in the "
                "slots of a multi-label vector that are not chosen, so a stored answer would "
                "read two ways; name the outcome otherwise"
            )
        return checked


class EvalTask(ConfigModel):
    """What a judge is asked: the data columns it sees and the tasks it answers.

    `task_schemas` maps each task name to a list of at least two allowed labels (single choice),
    a `MultiLabelSchema` (any subset of its outcomes) or `None` (free text).

    Example:
        >>> task = EvalTask(
        ...     task_schemas={"rejection": ["rejection", "not rejection"], "why": None},
        ...     prompt_columns=["prompt"],
        ...     response_columns=["response"],
        ... )
        >>> task.get_required_tasks()
        ['rejection']
    """

    error_class = TaskError

    task_schemas: dict[str, list[str] | MultiLabelSchema | None]
    """Task name → allowed labels (single choice), `MultiLabelSchema`, or `None` (free text)."""

    prompt_columns: list[str] | None = None
    """Columns holding the input the evaluated model saw; `None` when judging bare text."""

    response_columns: list[str] = Field(min_length=1)
    """Columns holding the text to judge (at least one)."""

    answering_method: AnsweringMethod = "structured"
    """How judges answer: JSON schema / tool call, XML tags, or plain text matched to a label.
    `"instructor"` (from the original docs) is read as `"structured"`."""

    structured_outputs_fallback: bool = False
    """Retry with `xml` when a server rejects structured output, instead of failing the judge.
    Not for a task with a multi-label task, which XML tags cannot carry (0.3.3 left XML out of
    its fallback too): there a refused structured output stops the judge (`fallback_method`)."""

    required_tasks: list[str] | None = None
    """Tasks a row needs for its answer to be valid; `None` (or `[]`, as in meta-evaluator 0.3)
    means every task with labels."""

    annotation_prompt: str = "Please evaluate the following response:"
    """The instruction shown to human annotators above each row."""

    _skip_function: SkipFunction | None = PrivateAttr(default=None)

    def __init__(
        self,
        task_schemas: Any = None,
        prompt_columns: Any = None,
        response_columns: Any = None,
        answering_method: Any = "structured",
        **options: Any,
    ) -> None:
        """Validate every field at once; all problems are listed in one `TaskError`.

        Raises:
            TaskError: A task name, label list, column list or option is invalid.
        """
        skip_function = options.pop("skip_function", None)
        values: dict[str, Any] = {**options, "answering_method": answering_method}
        for key, value in (
            ("task_schemas", task_schemas),
            ("prompt_columns", prompt_columns),
            ("response_columns", response_columns),
        ):
            if value is not None or key == "prompt_columns":
                values[key] = value
        super().__init__(**values)
        self.skip_function = skip_function

    @property
    def skip_function(self) -> SkipFunction | None:
        """Rows for which it returns true are not asked: each becomes a `skipped` row.

        meta-evaluator 0.3.3's option, applied when judges run: it gets a data row as a dict
        (column → value) and returns whether to skip it. A function cannot be saved, so it is
        not part of `main_state.json` (`save_state` warns so); after loading a project, set it
        again (`evaluator.eval_task.skip_function = f`). Not part of a judge's fingerprint: a
        row skipped once is asked by a later run without it.
        """
        return self._skip_function

    @skip_function.setter
    def skip_function(self, function: SkipFunction | None) -> None:
        self._set_skip_function(function)

    def _set_skip_function(self, function: SkipFunction | None) -> None:
        if function is not None and not callable(function):
            raise TaskError(
                f"skip_function must be a function of a row (dict) returning a bool, or None; "
                f"got {type(function).__name__}.",
                field="skip_function",
            )
        self._skip_function = function

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "skip_function":  # the one attribute of a frozen task that may be set
            self._set_skip_function(value)
            return
        super().__setattr__(name, value)

    def __eq__(self, other: object) -> bool:
        """Equal fields (the skip function, which is never saved, does not count)."""
        if not isinstance(other, EvalTask):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    def __hash__(self) -> int:
        return hash(self.model_dump_json())

    @field_validator("task_schemas", mode="before")
    @classmethod
    def _check_task_schemas(cls, schemas: Any) -> dict[str, list[str] | MultiLabelSchema | None]:
        if not isinstance(schemas, dict) or not schemas:
            raise ValueError(
                "must be a non-empty dict of task name to labels, MultiLabelSchema or None"
            )
        checked: dict[str, list[str] | MultiLabelSchema | None] = {}
        for name, schema in schemas.items():
            _check_task_name(name)
            if schema is None:
                checked[name] = None
            elif isinstance(schema, MultiLabelSchema):
                checked[name] = schema
            elif isinstance(schema, dict) and set(schema) == {"outcomes"}:
                checked[name] = MultiLabelSchema(outcomes=schema["outcomes"])
            elif isinstance(schema, list | tuple):
                try:
                    checked[name] = _check_labels(list(schema), minimum=2)
                except ValueError as exc:
                    raise ValueError(f"task {shown(name)}: {exc}") from None
            else:
                raise ValueError(
                    f"task {shown(name)}: expected a list of labels, "
                    "MultiLabelSchema(outcomes=[...]) or None, got "
                    f"{type(schema).__name__} {shown(schema)}"
                )
        keys: dict[str, str] = {}
        for name in checked:
            other = keys.setdefault(answer_key(name), name)
            if other != name:
                raise ValueError(
                    f"tasks {shown(other)} and {shown(name)} would both be answered as "
                    f"{answer_key(name)!r} (a judge's answer keys hold only letters, digits and "
                    "_.-); rename one"
                )
        return checked

    @field_validator("answering_method", mode="before")
    @classmethod
    def _resolve_alias(cls, method: Any) -> Any:
        return resolve_answering_method(method)

    @field_validator("prompt_columns", "response_columns")
    @classmethod
    def _check_columns(cls, columns: list[str] | None, info: ValidationInfo) -> list[str] | None:
        if columns is None:
            return None
        for column in columns:
            if not column.strip():
                raise ValueError("column names must be non-empty")
        twice = repeated(columns)
        if twice:
            raise ValueError(f"names column(s) {twice} more than once")
        # Fields validate in declaration order, so prompt_columns is known here.
        both = sorted(set(info.data.get("prompt_columns") or []) & set(columns))
        if info.field_name == "response_columns" and both:
            raise ValueError(
                f"column(s) {both} are both prompt and response columns; list each once"
            )
        return columns

    @field_validator("required_tasks")
    @classmethod
    def _check_required(cls, required: list[str] | None, info: ValidationInfo) -> list[str] | None:
        if not required:
            return None  # [] reads as the default, as in 0.3: a valid answer needs some label
        tasks = list(info.data.get("task_schemas") or {})
        unknown = [t for t in required if t not in tasks]
        if unknown and tasks:
            raise ValueError(f"names unknown task(s) {unknown}; tasks are {tasks}")
        twice = repeated(required)
        if twice:
            raise ValueError(f"names {twice} more than once")
        return required

    @model_validator(mode="after")
    def _multilabel_needs_structured(self) -> EvalTask:
        multilabel = [n for n, s in self.task_schemas.items() if isinstance(s, MultiLabelSchema)]
        if self.answering_method == "xml" and multilabel:
            raise ValueError(
                f"answering_method 'xml' cannot carry the multi-label task(s) {multilabel} (XML "
                "tags hold one value, as in meta-evaluator 0.3.3); use 'structured'"
            )
        return self

    @property
    def fallback_method(self) -> AnsweringMethod | None:
        """The method asked for when a server refuses structured output, or None.

        `xml` when `structured_outputs_fallback` is on and no task is multi-label.
        """
        if not self.structured_outputs_fallback:
            return None
        if any(isinstance(s, MultiLabelSchema) for s in self.task_schemas.values()):
            return None
        return "xml"

    @property
    def task_names(self) -> list[str]:
        """The task names, in the order given."""
        return list(self.task_schemas)

    def get_task_names(self) -> list[str]:
        """The task names, in the order given (the original API's spelling)."""
        return self.task_names

    def get_required_tasks(self) -> list[str]:
        """Tasks a valid answer must contain: `required_tasks`, or every task with labels."""
        if self.required_tasks is not None:
            return list(self.required_tasks)
        return [name for name, schema in self.task_schemas.items() if schema is not None]

    def task_kind(self, task_name: str) -> TaskKind:
        """`"single"`, `"multilabel"` or `"free_text"` for a task.

        Raises:
            TaskError: There is no such task.
        """
        schema = self._schema(task_name)
        if schema is None:
            return "free_text"
        return "multilabel" if isinstance(schema, MultiLabelSchema) else "single"

    def allowed_labels(self, task_name: str) -> list[str] | None:
        """The labels a task accepts, or `None` for free text.

        Raises:
            TaskError: There is no such task.
        """
        schema = self._schema(task_name)
        if schema is None:
            return None
        return list(schema.outcomes if isinstance(schema, MultiLabelSchema) else schema)

    def columns_shown(self) -> list[str]:
        """Prompt columns then response columns: what a judge and an annotator see."""
        return [*(self.prompt_columns or []), *self.response_columns]

    def validate_against(self, data: EvalData) -> None:
        """Check that `data` has every column the task shows and that none of them is null.

        Raises:
            TaskError: A column is missing (naming the columns that exist), or holds nulls
                (naming the ids of the rows at fault).
        """
        import polars as pl

        from meta_evaluator.data.checks import closest, list_some

        frame = data.data
        where = f"{data.source}: " if data.source else ""
        for role, columns in (
            ("prompt column", self.prompt_columns or []),
            ("response column", self.response_columns),
        ):
            for column in columns:
                if column not in frame.columns:
                    raise TaskError(
                        f"{where}EvalTask {role} {column!r} is not a column of data "
                        f"{data.name!r} (columns: {list_some(frame.columns)})."
                        f"{closest(column, frame.columns)} Rename the column or fix the task.",
                        path=data.source,
                        column=column,
                        field=role.replace(" ", "_") + "s",
                    )
        for column in self.columns_shown():
            missing = frame.filter(pl.col(column).is_null()).get_column(data.id_column)
            if missing.len():
                ids = missing.to_list()
                raise TaskError(
                    f"{where}column {column!r} of data {data.name!r} is null in {len(ids)} row(s) "
                    f"(ids {list_some(ids)}); a judge would see nothing there. Fill or drop "
                    "those rows.",
                    path=data.source,
                    column=column,
                    row_id=ids[0],
                )

    def _schema(self, task_name: str) -> list[str] | MultiLabelSchema | None:
        if task_name not in self.task_schemas:
            raise TaskError(
                f"no task {task_name!r}; tasks are {self.task_names}.", field="task_name"
            )
        return self.task_schemas[task_name]


def _check_task_name(name: Any) -> None:
    if (
        not isinstance(name, str)
        or not name.strip()
        or name != name.strip()
        or len(name) > _TASK_NAME_LIMIT
        or not name.isprintable()
    ):
        raise ValueError(
            f"task name {shown(name)} must be printable text of 1 to {_TASK_NAME_LIMIT} "
            "characters, without white space at either end: it names a results column"
        )
    if name in RESERVED_NAMES:
        raise ValueError(
            f"task name {name!r} is reserved for a results column; choose another, "
            f"such as {name + '_task'!r}"
        )


def _check_labels(labels: Sequence[Any], *, minimum: int) -> list[str]:
    for label in labels:
        if isinstance(label, bool):  # YAML reads an unquoted yes/no/on/off as a boolean
            raise ValueError(
                f"labels must be non-empty strings, got {shown(label)}; in YAML, quote yes, "
                "no, on, off, true and false ('yes') to keep them text"
            )
        if not isinstance(label, str) or not label.strip():
            raise ValueError(f"labels must be non-empty strings, got {shown(label)}")
    if len(labels) < minimum:
        raise ValueError(
            f"needs at least {minimum} labels, got {len(labels)}: {shown(list(labels))}"
        )
    seen: dict[str, str] = {}
    for label in labels:
        key = normalize_label(label)
        if key in seen:
            raise ValueError(
                f"labels {shown(seen[key])} and {shown(label)} are the same once case and "
                "spacing are ignored; answers are matched that way, so keep one"
            )
        seen[key] = label
    return list(labels)
