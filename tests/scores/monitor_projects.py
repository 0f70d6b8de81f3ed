"""Synthetic projects for the label plan and drift: judges built to have a property, and twins.

Every project has `rows` data rows labelled a/b/c from a hidden truth, annotators right
`human_accuracy` of the time (else a random label), and judges whose labels the test chooses,
imported as complete runs (`add_external_judge_results`), so every figure follows from labels
the test knows.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask

LABELS = ["a", "b", "c"]
ANNOTATORS = ("ana", "ben", "cy")


def truth(rows: int, seed: int = 0) -> list[str]:
    """The hidden true label of each row."""
    rng = np.random.default_rng(seed)
    return [LABELS[i] for i in rng.integers(0, len(LABELS), rows)]


def noisy(labels: Sequence[str], accuracy: float, seed: int) -> list[str]:
    """`labels`, each kept with probability `accuracy`, else a uniformly random label."""
    rng = np.random.default_rng(seed)
    keep = rng.random(len(labels)) < accuracy
    other = rng.integers(0, len(LABELS), len(labels))
    return [label if k else LABELS[o] for label, k, o in zip(labels, keep, other, strict=True)]


def random_labels(rows: int, seed: int) -> list[str]:
    """A judge that ignores the row: a uniformly random label each time."""
    rng = np.random.default_rng(seed)
    return [LABELS[i] for i in rng.integers(0, len(LABELS), rows)]


def shifted(labels: Sequence[str], share: float, *, to: str = "a", seed: int = 0) -> list[str]:
    """`labels` with exactly `share` of all rows changed to `to` (rows not already `to`)."""
    rng = np.random.default_rng(seed)
    candidates = [i for i, label in enumerate(labels) if label != to]
    count = round(share * len(labels))
    assert count <= len(candidates), "not enough rows to change"
    chosen = set(rng.choice(candidates, size=count, replace=False).tolist())
    return [to if i in chosen else label for i, label in enumerate(labels)]


def flipped(labels: Sequence[str], count: int, *, seed: int = 0) -> list[str]:
    """`labels` with `count` rows changed to the next label (a steady judge's few changes)."""
    rng = np.random.default_rng(seed)
    chosen = set(rng.choice(len(labels), size=count, replace=False).tolist())
    return [
        LABELS[(LABELS.index(label) + 1) % len(LABELS)] if i in chosen else label
        for i, label in enumerate(labels)
    ]


def make_project(
    folder: Path,
    *,
    rows: int = 200,
    ids: Sequence[Any] | None = None,
    annotators: Sequence[str] = ANNOTATORS,
    human_accuracy: float = 0.8,
    schemas: dict[str, Any] | None = None,
    seed: int = 0,
) -> tuple[MetaEvaluator, list[str]]:
    """A project of `rows` rows, task `verdict` (a/b/c), the annotators' labels imported.

    Returns the project and the truth (one label per row, in data order).
    """
    ids = list(ids) if ids is not None else list(range(1, rows + 1))
    evaluator = MetaEvaluator(folder / "proj")
    frame = pl.DataFrame({"qid": ids, "text": [f"chat {i}" for i in ids]})
    evaluator.add_data(DataLoader.load_from_dataframe("chats", frame, "qid"))
    evaluator.add_eval_task(
        EvalTask(task_schemas=schemas or {"verdict": LABELS}, prompt_columns=None,
                 response_columns=["text"])
    )  # fmt: skip
    evaluator.save_state()
    hidden = truth(len(ids), seed)
    for index, name in enumerate(annotators):
        add_labels(evaluator, folder, name, ids, noisy(hidden, human_accuracy, seed + 10 + index))
    return evaluator, hidden


def add_labels(
    evaluator: MetaEvaluator, folder: Path, annotator: str, ids: Sequence[Any], labels: list[Any]
) -> None:
    """Import one annotator's labels of `verdict` (None: not labelled)."""
    kept = [(i, label) for i, label in zip(ids, labels, strict=True) if label is not None]
    path = folder / f"{annotator}.csv"
    pl.DataFrame({"original_id": [k[0] for k in kept], "verdict": [k[1] for k in kept]},
                 schema={"original_id": pl.Series(ids).dtype, "verdict": pl.String}
                 ).write_csv(path)  # fmt: skip
    evaluator.add_external_annotation_results(path, annotator, tasks=["verdict"])


def add_run(
    evaluator: MetaEvaluator,
    folder: Path,
    judge: str,
    run_id: str,
    labels: Sequence[Any],
    ids: Sequence[Any] | None = None,
) -> None:
    """Import a judge's labels of `verdict` as its complete run `run_id`."""
    ids = list(ids) if ids is not None else list(range(1, len(labels) + 1))
    path = folder / f"{judge}-{run_id}.csv"
    pl.DataFrame({"original_id": ids, "verdict": list(labels)}).write_csv(path)
    evaluator.add_external_judge_results(path, judge, run_id=run_id, tasks=["verdict"])
