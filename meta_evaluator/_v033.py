"""The facade's arguments as meta-evaluator 0.3.3 scripts pass them, translated in one place.

`MetaEvaluator` wires these in; each function takes what a 0.3.3 script gave and returns what
our own methods take, or raises the error that says what to do instead. Names that keep their
meaning resolve silently (`file_path=` is `path=`); names we retire warn with
`MetaEvaluatorDeprecationWarning` (`retired`), naming the version, the removal and the
replacement. docs/migrating-from-0.3.md lists every idiom.
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from meta_evaluator.errors import (
    JudgeConfigError,
    MetaEvaluatorDeprecationWarning,
    MetaEvaluatorWarning,
    MetricConfigError,
)
from meta_evaluator.eval_task import EvalTask

__all__ = [
    "DEPRECATED_SINCE",
    "REMOVED_IN",
    "RunExtras",
    "compare_arguments",
    "retired",
    "run_options",
    "scratch_folder",
    "warn_unsaved_skip_function",
]

DEPRECATED_SINCE = "0.1.0"
"""Our first version: every 0.3.3 name it keeps only for old scripts is deprecated since then."""
REMOVED_IN = "1.0"
"""The version that removes them."""


def retired(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that `old` (a 0.3.3 name) still works but goes in `REMOVED_IN`; use `new`."""
    warnings.warn(
        f"{old} (meta-evaluator 0.3) is deprecated since meta-evaluator {DEPRECATED_SINCE} and "
        f"will be removed in {REMOVED_IN}; {new}.",
        MetaEvaluatorDeprecationWarning,
        stacklevel=stacklevel,
    )


def compare_arguments(
    metrics_config: Any, judge_results: Any, human_results: Any
) -> tuple[Any, Any, Any]:
    """`compare_async`'s arguments in our order: (metrics_config, judge_results, human_results).

    0.3.3's `compare_async(judge_results, human_results)` took the results positionally (the
    metrics came from `add_metrics_config`): a mapping first is taken for the judge results,
    and the next argument for the human ones.

    Raises:
        MetricConfigError: Results were given both positionally and by name.
    """
    if not isinstance(metrics_config, Mapping):
        return metrics_config, judge_results, human_results
    if human_results is not None:
        raise MetricConfigError(
            "compare_async: the results were given twice; pass compare_async(judge_results, "
            "human_results) (0.3.3's order, with add_metrics_config) or compare_async(config, "
            "judge_results, human_results).",
            field="human_results",
        )
    return None, metrics_config, judge_results


@dataclass(frozen=True)
class RunExtras:
    """What a 0.3.3 run asked beyond our run options."""

    save_results: bool = True
    """False: the run's files go to a scratch folder, deleted once the results are returned."""
    results_format: Literal["json", "csv", "parquet"] | None = None
    """Also write each judge's rows as `results/<run_id>/<judge_id>.results.<format>`."""


def run_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], RunExtras]:
    """`run_judges_async`'s options without 0.3.3's keywords, and what those asked.

    `skip_duplicates` is `resume` (True: judges whose complete run of the same configuration
    covers every row are returned as they are, no call; False: every row is asked again) and
    warns; `save_results` and `results_format` are honoured (`RunExtras`).

    Raises:
        JudgeConfigError: A keyword has a value of the wrong kind, or `skip_duplicates` and
            `resume` disagree (every problem listed).
    """
    ours = dict(options)
    problems: list[str] = []
    if "skip_duplicates" in ours:
        skip = ours.pop("skip_duplicates")
        if not isinstance(skip, bool):
            problems.append(f"skip_duplicates must be True or False; got {skip!r}")
        elif "resume" in ours and ours["resume"] != skip:
            problems.append(
                f"skip_duplicates={skip} and resume={ours['resume']} disagree; give resume alone"
            )
        else:
            retired(
                "run_judges_async(skip_duplicates=...)",
                "use resume= (True, the default, returns a judge's complete run of the same "
                "configuration without a call; False asks every row again)",
                stacklevel=5,
            )
            ours["resume"] = skip
    save = ours.pop("save_results", True)
    if not isinstance(save, bool):
        problems.append(f"save_results must be True or False; got {save!r}")
    fmt = ours.pop("results_format", None)
    if fmt not in (None, "json", "csv", "parquet"):
        problems.append(f"results_format must be 'json', 'csv' or 'parquet'; got {fmt!r}")
    if problems:
        raise JudgeConfigError(
            "run options are invalid:\n" + "\n".join(problems),
            field="options",
            errors=[{"loc": "options", "msg": p} for p in problems],
        )
    return ours, RunExtras(save_results=save is not False, results_format=fmt)


@contextlib.contextmanager
def scratch_folder(root: Path) -> Iterator[Path]:
    """A folder inside the project `root` for a run that saves nothing; deleted afterwards.

    It is inside the project because a run writes only there (a link out is refused).
    """
    folder = root / f".meta-evaluator-unsaved-{secrets.token_hex(4)}"
    folder.mkdir(parents=True)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def warn_unsaved_skip_function(task: EvalTask | None) -> None:
    """Say, when saving, that the task's `skip_function` is not saved (0.3.3 did not either)."""
    if task is not None and task.skip_function is not None:
        warnings.warn(
            "EvalTask.skip_function is not saved in main_state.json (a function cannot be); "
            "after loading the project, set it again: evaluator.eval_task.skip_function = ...",
            MetaEvaluatorWarning,
            stacklevel=3,
        )
