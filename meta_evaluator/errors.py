"""Every exception meta-evaluator raises for a mistake in its input, in one tree.

```
MetaEvaluatorError                  base of everything below; catch it to catch us
├── DataError (ValueError)          evaluation data that cannot be used
│   ├── DataFileError               a data file is missing, empty, unreadable or not its kind
│   ├── ColumnError                 a column is missing, duplicated, of the wrong type or null
│   ├── IdError                     ids that are null, empty, repeated or of mixed types
│   └── SamplingError               a sample that cannot be drawn as asked
├── TaskError (ValueError)          an EvalTask that is inconsistent, or does not fit the data
├── JudgeConfigError (ValueError)   a judge configuration (Python or YAML) that cannot be used
├── UnsafeNameError (ValueError)    an id that is not a safe file name (`../x`, `a/b`, `CON`)
├── JudgeRunError                   judges stopped: calls refused (401, 404) or endpoint unreachable
├── CostCeilingError                a run stopped at its cost ceiling (max_cost): rows left to do
├── ScoringError (ValueError)       labels that cannot be scored, or a metric given bad arguments
│   └── MetricConfigError           a MetricConfig / MetricsConfig that cannot be used
├── QueryError (ValueError)         a results viewer request with a parameter it cannot use
├── ProjectError                    the project folder as a whole
│   ├── ProjectExistsError          load=False on a folder that already holds a project
│   ├── ProjectNotFoundError        load=True on a folder that holds no project
│   ├── StateError (ValueError)     main_state.json is corrupt, foreign or from a newer version
│   │   └── PricesError             prices.yaml is not a mapping of names to prices
│   ├── ProjectFileError (ValueError)  project.yaml (or a task file) cannot be used
│   ├── AlreadySetError             data/task/judge added twice without overwrite=True
│   └── NothingToCompareError       drift asked of a judge with one complete run (not yet two)
└── StorageError (OSError)          a file could not be read or written
    ├── DiskFullError               the disk or the user's quota is full (ENOSPC, EFBIG, EDQUOT)
    ├── PermissionDeniedError       no permission, or a read-only file system (EACCES, EROFS)
    ├── OutsideProjectError         a write would follow a symlink out of the project folder
    └── LfsPointerError             a git-lfs pointer file where the data should be
```

Every error carries the place at fault as attributes (`path`, `column`, `row_id`, `field`,
`judge_id`; `None` when not relevant) and a message in three parts: what failed, where, and how
to fix it. Where the fix is a Python call (`load=False`, `add_eval_task`), `problem` holds the
message without it and `needs` what the project lacks, so the command line gives its command
instead (`meta-evaluator add-task DIR task.yaml`); where it is a Python argument (`task=...`),
`cli_advice` holds the flag to give instead (`--task T`). Warnings we issue derive from
`MetaEvaluatorWarning`; `warn_deprecated` says that a name still works but is going, with both
versions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, Literal

__all__ = [
    "AlreadySetError",
    "ColumnError",
    "CostCeilingError",
    "DataError",
    "DataFileError",
    "DiskFullError",
    "IdError",
    "JudgeConfigError",
    "JudgeRunError",
    "LfsPointerError",
    "MetaEvaluatorDeprecationWarning",
    "MetaEvaluatorError",
    "MetaEvaluatorWarning",
    "MetricConfigError",
    "NothingToCompareError",
    "OutsideProjectError",
    "PermissionDeniedError",
    "PricesError",
    "ProjectError",
    "ProjectExistsError",
    "ProjectFileError",
    "ProjectNotFoundError",
    "QueryError",
    "SamplingError",
    "ScoringError",
    "StateError",
    "StorageError",
    "TaskError",
    "UnsafeNameError",
]


MESSAGE_LINE_LIMIT = 1000
"""The most characters a line of an error message keeps; the rest is cut, saying how much."""


def bounded_message(message: str) -> str:
    """`message` as an error may show it: keys hidden, each line cut to `MESSAGE_LINE_LIMIT`.

    Messages quote what the user gave (a label, a placeholder, a YAML value); whatever its size
    or content, the message stays readable, cheap to print and free of anything shaped like a
    provider's key (`meta_evaluator.api_keys.redact_keys`).
    """
    from meta_evaluator.api_keys import redact_keys

    lines = []
    for line in redact_keys(message).split("\n"):
        if len(line) > MESSAGE_LINE_LIMIT:
            cut = len(line) - MESSAGE_LINE_LIMIT
            line = f"{line[:MESSAGE_LINE_LIMIT]}... ({cut} more characters not shown)"
        lines.append(line)
    return "\n".join(lines)


Needed = Literal["data", "task", "annotations", "results", "state"]
"""What a project may lack for a call: its data, its task, human annotations, a judge's run,
or its `main_state.json` (a script that wrote results but never called `save_state()`)."""


class MetaEvaluatorError(Exception):
    """Base of every error meta-evaluator raises for bad input; catch it to handle them all.

    The message says what failed, where and how to fix it; the attributes name the place so a
    program can act on it without parsing text. Where one input had several problems (a config
    file, a model), `errors` lists each as a dict with `loc` and `msg`. Every message passes
    through `bounded_message`: no line is longer than `MESSAGE_LINE_LIMIT`, and nothing shaped
    like an API key is shown.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        column: str | None = None,
        row_id: Any = None,
        field: str | None = None,
        judge_id: str | None = None,
        errors: Sequence[dict[str, Any]] = (),
        problem: str | None = None,
        needs: Needed | None = None,
        project_dir: str | Path | None = None,
        cli_advice: str | None = None,
    ) -> None:
        message = bounded_message(message)
        super().__init__(message)
        self.message = message
        self.errors = list(errors)
        self.problem = bounded_message(problem) if problem is not None else None
        """What failed and where, without the advice of `message`, which speaks to Python callers
        (`load=True`, `add_eval_task`): the command line gives its own (`meta-evaluator init
        DIR`). None when the message has no such advice."""
        self.needs = needs
        """What the project lacks, which the advice adds (None: an error of another kind)."""
        self.project_dir = Path(project_dir) if project_dir is not None else None
        """The project folder the error is about, when known."""
        self.cli_advice = cli_advice
        """The fix as the command line says it (`choose one with --task T`), where `message`
        names a Python argument (`task=...`): the command line prints `problem` with it. None
        when the message fits both."""
        self.path = Path(path) if path is not None else None
        self.column = column
        self.row_id = row_id
        self.field = field
        self.judge_id = judge_id


class DataError(MetaEvaluatorError, ValueError):
    """Evaluation data that cannot be used; fix the file or frame named in the message."""


class DataFileError(DataError):
    """A data file is missing, empty, unreadable or not in the format its loader reads.

    Fix the path, or call the loader that matches the file's content.
    """


class ColumnError(DataError):
    """A named column is missing, duplicated, of an unusable type or holds nulls.

    The message lists the columns that exist; rename the column or change the configuration.
    """


class IdError(DataError):
    """The id column holds nulls, empty strings, duplicates or values of more than one type.

    Give every row a unique, non-empty id of one type, or let the loader assign ids.
    """


class SamplingError(DataError):
    """A sample cannot be drawn as asked (bad percentage, unknown column, nothing left)."""


class TaskError(MetaEvaluatorError, ValueError):
    """An EvalTask is inconsistent in itself or does not fit the project's data.

    Fix the task schema, or the data columns the message names.
    """


class JudgeConfigError(MetaEvaluatorError, ValueError):
    """A judge configuration cannot be used; every problem found is listed, one per line.

    `errors` keeps the individual problems (location and message) for programs.
    """


class UnsafeNameError(MetaEvaluatorError, ValueError):
    """An id used as a file or folder name is not one safe path component.

    Use letters, digits, `_`, `-` and `.`, starting with a letter or digit.
    """


class JudgeRunError(MetaEvaluatorError):
    """Judges stopped during a run while the others finished and were saved.

    A judge stops when its endpoint refuses the requests themselves (HTTP 400/401/403/404/422),
    when it is never reached (its first calls all fail to connect: refused, no such host, no
    answer to connect in time, a failed TLS handshake), or
    when its key cannot be read (variable not set, stray characters): retrying cannot help, so
    it makes no further call. The message names each judge and the cause (status, `host:port`,
    variable); `errors` lists them with `loc` (judge id, field) and `msg`; `results` holds every
    judge's rows as the run left them. Fix the key, model name or URL (or start the server) and
    run again: rows already done are reused, rows not asked are asked.
    """

    def __init__(
        self,
        message: str,
        *,
        results: Mapping[str, Any] | None = None,
        judge_id: str | None = None,
        field: str | None = None,
        errors: Sequence[dict[str, Any]] = (),
    ) -> None:
        super().__init__(message, judge_id=judge_id, field=field, errors=errors)
        self.results: dict[str, Any] = dict(results or {})
        """Each judge's `JudgeResults` by judge id, stopped judges' unfinished runs included."""


class CostCeilingError(MetaEvaluatorError):
    """The run stopped starting calls at its cost ceiling (`max_cost`, `--max-cost`).

    Calls in flight were finished and every finished row is saved; the rows not asked yet are
    left to do (they are not error rows). `spent` is what the run's calls cost (US dollars, at
    the prices of `prices.yaml`), `max_cost` the ceiling, `remaining` the rows not asked per
    judge id, `results` every judge's rows as the run left them. Run again with a higher
    `max_cost`: finished rows are reused and only the rest are asked. The command line exits
    with 5.
    """

    def __init__(
        self,
        message: str,
        *,
        results: Mapping[str, Any] | None = None,
        spent: float = 0.0,
        max_cost: float = 0.0,
        remaining: Mapping[str, int] | None = None,
    ) -> None:
        super().__init__(message, field="max_cost")
        self.results: dict[str, Any] = dict(results or {})
        """Each judge's `JudgeResults` by judge id (unfinished runs included)."""
        self.spent = spent
        """US dollars the run's calls cost, as estimated from their tokens and the prices."""
        self.max_cost = max_cost
        """The ceiling, in US dollars."""
        self.remaining: dict[str, int] = dict(remaining or {})
        """Rows not asked, by judge id."""


class ScoringError(MetaEvaluatorError, ValueError):
    """Labels that cannot be scored at all, or a metric function given arguments it cannot use.

    The message names the judge, task or argument and the counts found (for example no id of the
    judge's results aligns with a human annotation); fix the input it names. A metric that is
    merely undefined (0/0) is not an error: it is `None` in the result.
    """


class MetricConfigError(ScoringError):
    """A `MetricConfig` or `MetricsConfig` cannot be used; every problem is listed, one per line.

    For example `single` with two tasks, an unknown annotator aggregation, or two metrics that
    would write to the same scores folder.
    """


class QueryError(MetaEvaluatorError, ValueError):
    """A request to the results viewer (`meta-evaluator view`) with a parameter it cannot use.

    `field` names the parameter, `allowed` the values it takes (empty when it takes a range
    or free text, which the message states); the viewer answers 400 with both.
    """

    def __init__(self, message: str, *, field: str, allowed: Sequence[str] = ()) -> None:
        super().__init__(message, field=field)
        self.allowed: list[str] = list(allowed)
        """The values the parameter takes (empty for a number range or free text)."""


class ProjectError(MetaEvaluatorError):
    """The project folder as a whole cannot be used as asked."""


class ProjectExistsError(ProjectError, FileExistsError):
    """`MetaEvaluator(dir, load=False)` on a folder that already holds a project.

    Pass `load=True` to open it, or choose another folder.
    """


class ProjectNotFoundError(ProjectError, FileNotFoundError):
    """`MetaEvaluator(dir, load=True)` on a folder that holds no project.

    Check the path, or pass `load=False` to create a project there.
    """


class StateError(ProjectError, ValueError):
    """`main_state.json` is corrupt, was written by another tool, or by a newer version.

    Every problem is listed with its location in the file; restore the file from version control
    or upgrade meta-evaluator.
    """


class PricesError(StateError):
    """The project's `prices.yaml` cannot be used: every problem is listed, with its place.

    It must map a model name (or judge id) to `prompt` and `completion` US dollars per million
    tokens (numbers >= 0; optionally `batch_prompt`, `batch_completion`). `path` is the file,
    `field` the first entry and key at fault (`gpt-4o.completion`), `errors` every problem.
    Fix the file as the message says.
    """


class ProjectFileError(ProjectError, ValueError):
    """A `project.yaml` (the whole project in one file) cannot be used.

    Every problem of the file is listed at once, one line each with its place
    (`project.yaml: judges[1].temperature: ...`), a close key named for an unknown one; `path` is
    the file, `field` the first place at fault, `errors` every problem. Fix the file as the
    message says (docs/project-yaml.md describes every key).
    """


class AlreadySetError(ProjectError):
    """Data, a task or a judge was added to a project that already has one.

    Pass `overwrite=True` to replace it.
    """


class NothingToCompareError(ProjectError):
    """Drift was asked of a judge with one complete run: nothing to compare yet, no mistake.

    A scheduler's first night. `run_id` is that run; the command line says so and exits 0.
    """

    def __init__(self, message: str, *, run_id: str, **context: Any) -> None:
        super().__init__(message, **context)
        self.run_id = run_id
        """The judge's one complete run."""


class StorageError(MetaEvaluatorError, OSError):
    """A file in the project could not be read or written; nothing was half-written.

    The message names the file and the cause (permissions, disk full, a folder in the way).
    """


class DiskFullError(StorageError):
    """A write failed because the disk, or the user's quota, is full (ENOSPC, EFBIG, EDQUOT).

    Nothing was half-written: rows finished before the fault are kept and a later run reuses
    them. Free space on the disk holding the path named in the message, then run again. The
    command line exits with 4.
    """


class PermissionDeniedError(StorageError):
    """A file or folder of the project may not be read or written (EACCES, EPERM, EROFS).

    The folder is read-only, owned by another user, or on a read-only file system. Fix the
    permissions of the path named in the message (or run as its owner), then run again; rows
    already written are kept. The command line exits with 4.
    """


class OutsideProjectError(StorageError):
    """A write into the project would land outside it, through a symbolic link.

    A file or folder of the project (`results/`, `scores/`, `reports/`, `annotations/`, a row
    file) is a symlink to somewhere outside the project folder, and meta-evaluator never writes
    through one. Replace the link with a real folder (or move the project onto the other disk).
    The command line exits with 4.
    """


class LfsPointerError(StorageError):
    """A data or results file is a git-lfs pointer: its content was never downloaded.

    The repository was cloned without git-lfs, so the file holds three lines starting
    `version https://git-lfs...` instead of the data. Run `git lfs pull` in the repository.
    """


class MetaEvaluatorWarning(UserWarning):
    """Base of the warnings meta-evaluator issues."""


class MetaEvaluatorDeprecationWarning(MetaEvaluatorWarning, DeprecationWarning):
    """A name or argument of meta-evaluator 0.3.3, kept for its scripts, that will be removed.

    The message says where the name comes from (meta-evaluator 0.3.3), the version that removes
    it and what replaces it; `since` (our version that took it in for compatibility) and
    `expected_removal` hold the two versions of this package (None when not given).
    """

    def __init__(
        self, message: str, *, since: str | None = None, expected_removal: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.since = since
        """The version that deprecated the name."""
        self.expected_removal = expected_removal
        """The version expected to remove it."""


DEPRECATED_SINCE = "0.1.0"
"""Our first version, which keeps meta-evaluator 0.3.3's names only for its scripts."""
REMOVED_IN = "1.0"
"""The version of this package expected to remove those names."""
ORIGIN = "meta-evaluator 0.3.3"
"""Where the names kept for compatibility come from. This package's versions start again
below it (0.1.0), so a warning names the origin, never "deprecated since 0.1.0", which would
read as if 0.3.3 came after."""


def warn_deprecated(
    old: str,
    replacement: str,
    *,
    kind: str = "a name",
    since: str = DEPRECATED_SINCE,
    removed_in: str = REMOVED_IN,
    stacklevel: int | None = None,
) -> None:
    """Warn (`MetaEvaluatorDeprecationWarning`) that `old`, from 0.3.3, goes in `removed_in`.

    `kind` says what `old` is ("an import path", "an argument"); `replacement` what to use
    instead ("use `from meta_evaluator import MetaEvaluator`"). `since` is kept on the warning,
    not written in its text. The warning points at the user's line: the first caller outside
    meta-evaluator, the import machinery and the event loop (unless `stacklevel` says otherwise).

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     warn_deprecated("`x()`", "use `y()`", kind="a function")
        >>> print(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
        `x()` is a function of meta-evaluator 0.3.3, kept for compatibility and to be
        removed in meta-evaluator 1.0; use `y()`.
    """
    import warnings

    if stacklevel is None:
        stacklevel = _outside_level()
    warnings.warn(
        MetaEvaluatorDeprecationWarning(
            f"{old} is {kind} of {ORIGIN}, kept for compatibility and to be removed in "
            f"meta-evaluator {removed_in}; {replacement}.",
            since=since,
            expected_removal=removed_in,
        ),
        stacklevel=stacklevel,
    )


def _outside_level() -> int:
    """The `stacklevel`, for `warn_deprecated`'s warning, of the user's frame.

    That is the first frame neither ours, nor the import system's, nor the event loop's (2
    when there is none: a worker thread's stack ends first).
    """
    import os
    import sys

    internal = [os.path.dirname(__file__)]
    for name in ("asyncio", "anyio", "concurrent", "contextlib", "threading"):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            internal.append(os.path.dirname(path) if path.endswith("__init__.py") else path)
    frame: FrameType | None = sys._getframe(3)  # the caller of warn_deprecated's caller
    level = 3
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith("<frozen importlib"):  # warnings skips these frames itself
            frame = frame.f_back
            continue
        if not name.startswith(tuple(internal)):
            return level
        frame, level = frame.f_back, level + 1
    return 2


def moved_names(module: str, moved: dict[str, str]) -> Any:
    """A module `__getattr__` serving names that moved (0.3.3's import paths), with a warning.

    `moved` maps a name to its new home (`{"MetaEvaluator": "meta_evaluator"}`); the name is
    imported from there when first asked for (and kept), and `warn_deprecated` names both
    paths, once.
    """

    def __getattr__(name: str) -> Any:
        if name not in moved:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        import importlib
        import sys

        home = moved[name]
        warn_deprecated(
            f"`from {module} import {name}`",
            f"use `from {home} import {name}`",
            kind="an import path",
        )
        value = getattr(importlib.import_module(home), name)
        # kept, so that `from module import name` (which looks twice) warns once
        sys.modules[module].__dict__[name] = value
        return value

    return __getattr__
