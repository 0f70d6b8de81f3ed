"""The metrics a 0.3.3 project was scored with, read back from its `scores/` folder.

0.3.3 kept its `MetricsConfig` in the script, not in the project; each metric left a folder
`scores/<scorer_name>/<metric folder>/` whose result files name the scorer, the task, the
aggregation and how the humans were combined. Those become the entries of a `metrics.yaml`
(the scorers' default arguments: 0.3.3 did not save them), so `meta-evaluator score` scores
the migrated project again, into the same folder names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from meta_evaluator.errors import StateError, StorageError
from meta_evaluator.scores.yaml_config import SCORERS
from meta_evaluator.storage import read_json

__all__ = ["ScoredMetrics", "scored_metrics"]


@dataclass(frozen=True)
class ScoredMetrics:
    """The metric entries found in 0.3.3's `scores/`, and the metric folders left out, with why."""

    entries: tuple[dict[str, Any], ...]
    left_out: tuple[str, ...]
    """`scorer/folder: why`, one per metric folder not turned into an entry."""


def scored_metrics(scores: Path, task_names: list[str]) -> ScoredMetrics:
    """The entries of a metrics file for the metrics whose folders are under `scores`."""
    entries, left_out = [], []
    for folder in sorted(p for p in scores.glob("*/*") if p.is_dir()):
        where = f"{folder.parent.name}/{folder.name}"
        found = [_fields(path) for path in sorted(folder.glob("*_result.json"))]
        fields = [f for f in found if f is not None]
        if not fields:
            left_out.append(f"{where}: no result file 0.3.3 wrote")
            continue
        scorer = fields[0]["scorer"]
        tasks = list(dict.fromkeys(f["task"] for f in fields))
        if scorer not in SCORERS:
            left_out.append(f"{where}: scorer {scorer!r} is not one a metrics file can name")
        elif any(task not in task_names for task in tasks):
            left_out.append(f"{where}: task(s) {tasks} are not all the project's task names")
        else:
            entries.append(
                {
                    "scorer": scorer,
                    "task_names": tasks,
                    "aggregation_name": fields[0]["mode"],
                    "annotator_aggregation": fields[0]["humans"],
                    "display_name": folder.name,
                }
            )
    return ScoredMetrics(tuple(entries), tuple(left_out))


def _fields(path: Path) -> dict[str, str] | None:
    """What a 0.3.3 result file says of its metric, or None when it does not read as one."""
    try:
        raw = read_json(path)
    except (StorageError, StateError):  # not a result of 0.3.3: left out, and said
        return None
    if not isinstance(raw, dict) or (not raw.get("scores") and "error" in str(raw.get("metadata"))):
        return None  # (a judge 0.3.3 could not score: its task_name is "error")
    scorer, task, mode = raw.get("scorer_name"), raw.get("task_name"), raw.get("aggregation_mode")
    if not all(isinstance(value, str) for value in (scorer, task, mode)):
        return None
    metadata = raw.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    said = " ".join(str(value) for value in metadata.values())
    humans = "majority_vote" if "majority" in said else "individual_average"
    return {"scorer": str(scorer), "task": str(task), "mode": str(mode), "humans": humans}
