"""The facade's arguments as meta-evaluator 0.3.3 scripts pass them, translated in one place.

`MetaEvaluator` wires these in; each function takes what a 0.3.3 script gave and returns what
our own methods take, or raises the error that says what to do instead. Names that keep their
meaning resolve silently (`file_path=` is `path=`); names we retire warn with
`MetaEvaluatorDeprecationWarning` (`retired`), naming the version, the removal and the
replacement. docs/migrating-from-0.3.md lists every idiom.
"""

from __future__ import annotations

import contextlib
import difflib
import secrets
import shutil
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from meta_evaluator.errors import (
    DataError,
    JudgeConfigError,
    MetaEvaluatorWarning,
    MetricConfigError,
    ProjectError,
    warn_deprecated,
)
from meta_evaluator.eval_task import EvalTask

__all__ = [
    "ImportArguments",
    "RunExtras",
    "annotator_host",
    "check_counts",
    "compare_arguments",
    "import_arguments",
    "retired",
    "run_options",
    "scratch_folder",
    "warn_unsaved_skip_function",
]


def retired(old: str, new: str) -> None:
    """Warn that `old` (an argument of 0.3.3) still works but is going (`warn_deprecated`)."""
    warn_deprecated(old, new, kind="an argument")


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


JUDGE_COUNTS = (
    "total_count", "succeeded_count", "skipped_count", "partial_count", "llm_error_count",
    "parsing_error_count", "other_error_count",
)  # fmt: skip
"""The counts 0.3.3's `add_external_judge_results(**metadata)` recorded (and never checked)."""
ANNOTATION_COUNTS = ("total_count", "succeeded_count", "error_count")
"""The counts of 0.3.3's `add_external_annotation_results(**metadata)`."""


@dataclass(frozen=True)
class ImportArguments:
    """An import's arguments, as 0.3.3 or we name them, resolved."""

    path: str | Path
    owner_id: str
    data_format: Literal["csv", "json", "jsonl", "parquet"] | None = None
    llm_client: str | None = None
    model_used: str | None = None
    counts: Mapping[str, int] = field(default_factory=dict)


def import_arguments(
    kind: Literal["judge", "annotator"],
    path: str | Path | None,
    owner_id: str | None,
    options: Mapping[str, Any],
) -> ImportArguments:
    """Resolve `add_external_*_results`' 0.3.3 keywords with ours.

    They are `file_path=`, `data_format=`, `llm_client=` and `model_used=` (a judge's), and
    the counts 0.3.3 recorded.

    Raises:
        DataError: The file is given twice or not at all, the owner id is missing, a keyword is
            unknown (naming the closest), or a count or format has a value of the wrong kind.
    """
    given = dict(options)
    owner = "judge_id" if kind == "judge" else "annotator_id"
    problems: list[str] = []
    file_path = given.pop("file_path", None)
    if (path is None) == (file_path is None):
        problems.append("give the file once: as the first argument (path) or as file_path=")
    if owner_id is None:
        problems.append(f"{owner} is missing")
    fmt = given.pop("data_format", None)
    if fmt not in (None, "csv", "json", "jsonl", "parquet"):
        problems.append(f"data_format must be 'csv', 'json', 'jsonl' or 'parquet'; got {fmt!r}")
    client = given.pop("llm_client", None) if kind == "judge" else None
    model = given.pop("model_used", None) if kind == "judge" else None
    for name, value in (("llm_client", client), ("model_used", model)):
        if value is not None and not isinstance(value, str):
            problems.append(f"{name} must be text; got {value!r}")
    known = JUDGE_COUNTS if kind == "judge" else ANNOTATION_COUNTS
    counts = {}
    for key, value in given.items():
        if key not in known:
            close = difflib.get_close_matches(key, [*known, "file_path", "data_format"], n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            problems.append(
                f"unknown keyword {key!r}; {hint}the counts 0.3.3 took are {', '.join(known)}"
            )
        elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
            problems.append(f"{key} must be a whole number >= 0; got {value!r}")
        else:
            counts[key] = value
    if problems:
        what = (
            "add_external_judge_results" if kind == "judge" else "add_external_annotation_results"
        )
        raise DataError(
            f"{what}: " + "; ".join(problems) + ".",
            field=next(iter(given), owner if owner_id is None else "file_path"),
        )
    assert owner_id is not None
    return ImportArguments(
        path=path if path is not None else file_path,
        owner_id=owner_id,
        data_format=fmt,
        llm_client=client,
        model_used=model,
        counts=counts,
    )


def check_counts(found: Mapping[str, int], given: Mapping[str, int], where: str | Path) -> None:
    """Warn when counts a 0.3.3 script gave disagree with the rows as checked.

    0.3.3 recorded them as given; here every row is checked against the task, and the counts
    come from that, so a disagreement is said (the given counts are not kept).
    """
    wrong = [f"{k}={v} (the rows give {found[k]})" for k, v in given.items() if found[k] != v]
    if wrong:
        warnings.warn(
            f"{where}: the counts given disagree with the rows as checked against the task: "
            f"{'; '.join(wrong)}. The counts come from the rows; the given ones are not kept.",
            MetaEvaluatorWarning,
            stacklevel=3,
        )


def annotator_host(host: Any, use_ngrok: bool, traffic_policy_file: str | None) -> str:
    """The host to serve the annotation page on, refusing 0.3.3's ngrok tunnel.

    0.3.3 took `launch_annotator(port, use_ngrok, traffic_policy_file)`: a bool where the host
    goes is its `use_ngrok`.

    Raises:
        ProjectError: A tunnel was asked for (`field="use_ngrok"`), saying what to do instead.
    """
    if isinstance(host, bool):
        host, use_ngrok = "127.0.0.1", host or use_ngrok
    if use_ngrok or traffic_policy_file is not None:
        raise ProjectError(
            "launch_annotator(use_ngrok=True) is not supported: meta-evaluator 0.3's ngrok "
            "tunnel is not bundled (it would put the page on the internet through a third "
            "party). To let annotators elsewhere reach it, pass host='0.0.0.0' and a token "
            "they must present (launch_annotator(host=..., token=...), or `meta-evaluator "
            "annotate --host ... --token ...`), or run your own tunnel (ngrok http PORT) in "
            "front of the page.",
            field="use_ngrok",
        )
    return str(host)
