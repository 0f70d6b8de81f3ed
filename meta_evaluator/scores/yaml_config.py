"""A metrics configuration in YAML, mirroring `MetricsConfig` (scorer by name, with arguments).

```yaml
metrics:
  - scorer: alt_test              # a scorer_name: accuracy, cohens_kappa, alt_test, ...
    args: {epsilon: 0.15}         # the scorer's constructor arguments
    task_names: [rejection]
    aggregation_name: single
    annotator_aggregation: individual_average
    display_name: refusal_alt_test
    bootstrap: {n_resamples: 1000, seed: 0}
```
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from meta_evaluator._util import shown
from meta_evaluator.errors import MetricConfigError, ScoringError
from meta_evaluator.scores.base_scorer import BaseScorer
from meta_evaluator.scores.config import BootstrapConfig, MetricConfig, MetricsConfig
from meta_evaluator.storage import raise_problems, read_yaml_list

__all__ = ["SCORERS", "read_metrics_yaml", "scorer_by_name"]

_ENTRY_KEYS = (
    "scorer", "args", "task_names", "aggregation_name", "annotator_aggregation", "display_name",
    "bootstrap",
)  # fmt: skip


def _registry() -> dict[str, type[BaseScorer]]:
    from meta_evaluator.scores import metrics

    return {
        "accuracy": metrics.AccuracyScorer,
        "alt_test": metrics.AltTestScorer,
        "cohens_kappa": metrics.CohensKappaScorer,
        "counterfactual": metrics.CounterfactualScorer,
        "fairness": metrics.FairnessScorer,
        "krippendorff_alpha": metrics.KrippendorffAlphaScorer,
        "multiple_choice": metrics.MultipleChoiceScorer,
        "position_bias": metrics.PositionBiasScorer,
        "preference": metrics.PreferenceScorer,
        "self_consistency": metrics.SelfConsistencyScorer,
        "semantic_similarity": metrics.SemanticSimilarityScorer,
        "stereotype": metrics.StereotypeScorer,
        "text_similarity": metrics.TextSimilarityScorer,
    }


SCORERS = (
    "accuracy", "alt_test", "cohens_kappa", "counterfactual", "fairness", "krippendorff_alpha",
    "multiple_choice", "position_bias", "preference", "self_consistency", "semantic_similarity",
    "stereotype", "text_similarity",
)  # fmt: skip
"""The scorer names a YAML file may use."""


def scorer_by_name(name: str, args: dict[str, Any] | None = None) -> BaseScorer:
    """A built-in scorer from its `scorer_name` and constructor arguments.

    Raises:
        MetricConfigError: An unknown name, or arguments the scorer does not take.
        ScoringError: Arguments the scorer takes but rejects.
    """
    registry = _registry()
    if not isinstance(name, str) or name not in registry:
        close = difflib.get_close_matches(str(name), registry, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; scorers are {', '.join(registry)}"
        raise MetricConfigError(f"unknown scorer {shown(name)}{hint}", field="scorer")
    try:
        return registry[name](**(args or {}))
    except TypeError as exc:
        raise MetricConfigError(f"scorer {shown(name)}: {exc}", field="args") from exc


def read_metrics_yaml(path: str | Path) -> MetricsConfig:
    """Read and validate a metrics file; every problem is listed with its place.

    Raises:
        MetricConfigError: The file is missing, not YAML, lacks a `metrics` list, or an entry
            is invalid (`metrics.yaml: metrics[1].scorer: unknown scorer 'acuracy'; did you
            mean 'accuracy'?`).
    """
    file, entries, problems = read_yaml_list(
        path, "metrics", entry="metric", error=MetricConfigError
    )
    metrics: list[MetricConfig] = []
    for index, entry in enumerate(entries):
        where = f"metrics[{index}]"
        if not isinstance(entry, dict):
            problems.append(_problem(where, "must be a mapping with scorer, task_names, ..."))
            continue
        for key in entry:
            if key not in _ENTRY_KEYS:
                close = difflib.get_close_matches(str(key), _ENTRY_KEYS, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                problems.append(_problem(where, f"unknown key {shown(key)}{hint}"))
        try:
            args = entry.get("args") or {}
            if not isinstance(args, dict):
                raise MetricConfigError("args must be a mapping of constructor arguments")
            scorer = scorer_by_name(entry.get("scorer", ""), args)
            bootstrap = entry.get("bootstrap")
            metrics.append(
                MetricConfig(
                    scorer=scorer,
                    task_names=entry.get("task_names"),
                    aggregation_name=entry.get("aggregation_name"),
                    annotator_aggregation=entry.get("annotator_aggregation", "individual_average"),
                    display_name=entry.get("display_name"),
                    bootstrap=BootstrapConfig(**bootstrap)
                    if isinstance(bootstrap, dict)
                    else bootstrap,
                )
            )
        except ScoringError as exc:
            problems.append(_problem(where, exc.message.replace("\n", f"\n{where}: ")))
    raise_problems(file, problems, what="metrics", error=MetricConfigError)
    try:
        return MetricsConfig(metrics=metrics)
    except MetricConfigError as exc:
        raise MetricConfigError(f"{file}: {exc.message}", path=file) from exc


def _problem(where: str, message: str) -> dict[str, Any]:
    """One problem of a metrics entry, as `raise_problems` lists it."""
    return {"loc": where, "msg": message, "type": "metric"}
