"""The agreement summary of the annotation page: humans against each other, per task."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from meta_evaluator.errors import ScoringError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.stats.agreement import cohens_kappa, krippendorff_alpha

__all__ = ["agreement_sections"]


def agreement_sections(humans: Mapping[str, Any], task: EvalTask) -> list[tuple[str, str]]:
    """Per single-choice task: Krippendorff's alpha over all annotators and pairwise kappa.

    Shown once two or more annotators labelled the same rows; undefined values read "n/a".
    """
    e = html.escape
    sections = []
    for name in task.task_names:
        if task.task_kind(name) != "single":
            continue
        labels: dict[str, dict[Any, Any]] = {}
        for annotator, results in humans.items():
            frame = results.valid_rows()
            if name in frame.columns:
                pairs = frame.select("original_id", name).drop_nulls().iter_rows()
                found = dict(pairs)
                if found:
                    labels[annotator] = found
        if len(labels) < 2:
            continue
        annotators = sorted(labels)
        shared = any(
            set(labels[a]) & set(labels[b])
            for i, a in enumerate(annotators) for b in annotators[i + 1 :]
        )  # fmt: skip
        if not shared:
            continue  # agreement needs two annotators on the same rows
        units = sorted({i for found in labels.values() for i in found}, key=str)
        table = [[labels[a].get(u) for u in units] for a in annotators]
        try:
            alpha = krippendorff_alpha(table, "nominal")
        except ScoringError:
            alpha = None
        rows = []
        for i, a in enumerate(annotators):
            for b in annotators[i + 1 :]:
                common = [u for u in units if u in labels[a] and u in labels[b]]
                if not common:
                    continue
                try:
                    kappa = cohens_kappa(
                        [labels[a][u] for u in common], [labels[b][u] for u in common]
                    )
                except ScoringError:
                    kappa = None
                rows.append(f"<tr><td>{e(a)}</td><td>{e(b)}</td><td>{len(common)}</td>"
                            f"<td>{_fmt(kappa)}</td></tr>")  # fmt: skip
        body = (
            f"<p>Krippendorff's alpha (nominal) over {len(annotators)} annotators and "
            f"{len(units)} rows: <b>{_fmt(alpha)}</b></p>"
            "<table><tr><th>annotator</th><th>annotator</th><th>rows both labelled</th>"
            f"<th>Cohen's kappa</th></tr>{''.join(rows)}</table>"
        )
        sections.append((name, body))
    return sections


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
