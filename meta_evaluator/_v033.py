"""The facade's arguments as meta-evaluator 0.3.3 scripts pass them, translated in one place.

`MetaEvaluator` wires these in; each function takes what a 0.3.3 script gave and returns what
our own methods take, or raises the error that says what to do instead. Names that keep their
meaning resolve silently (`file_path=` is `path=`); names we retire warn with
`MetaEvaluatorDeprecationWarning` (`retired`), naming the version, the removal and the
replacement. docs/migrating-from-0.3.md lists every idiom.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from meta_evaluator.errors import MetaEvaluatorDeprecationWarning, MetricConfigError

__all__ = ["DEPRECATED_SINCE", "REMOVED_IN", "compare_arguments", "retired"]

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
