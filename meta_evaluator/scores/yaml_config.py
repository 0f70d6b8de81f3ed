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
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from meta_evaluator._util import shown
from meta_evaluator._validation import unknown_key
from meta_evaluator.errors import MetricConfigError, ScoringError
from meta_evaluator.scores.base_scorer import BaseScorer
from meta_evaluator.scores.config import BootstrapConfig, MetricConfig, MetricsConfig
from meta_evaluator.storage import raise_problems, read_yaml_list

__all__ = ["SCORERS", "read_metric_entries", "read_metrics_yaml", "scorer_by_name"]

_ENTRY_KEYS = (
    "scorer", "args", "task_names", "aggregation_name", "annotator_aggregation", "display_name",
    "bootstrap",
)  # fmt: skip


def _registry() -> dict[str, Callable[..., BaseScorer]]:
    from meta_evaluator.scores import metrics

    return {
        "accuracy": metrics.AccuracyScorer,
        "alt_test": metrics.AltTestScorer,
        # 0.3.3's ClassificationScorer, by the scorer_name it writes under scores/
        **{
            f"classification_{metric}": functools.partial(metrics.ClassificationScorer, metric)
            for metric in ("accuracy", "f1", "precision", "recall")
        },
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
    "accuracy", "alt_test", "classification_accuracy", "classification_f1",
    "classification_precision", "classification_recall", "cohens_kappa", "counterfactual",
    "fairness", "krippendorff_alpha", "multiple_choice", "position_bias", "preference",
    "self_consistency", "semantic_similarity",
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
    """Read and validate a metrics file; every problem is listed with its place, in one pass.

    Raises:
        MetricConfigError: The file is missing, not YAML, lacks a `metrics` list, or an entry
            is invalid (`metrics.yaml: metrics[1]: unknown scorer 'acuracy'; did you
            mean 'accuracy'?`).
    """
    file, entries, problems = read_yaml_list(
        path, "metrics", entry="metric", error=MetricConfigError
    )
    config, found = read_metric_entries(entries)
    raise_problems(file, problems + found, what="metrics", error=MetricConfigError)
    assert config is not None, "no problem, so a config"
    return config


def read_metric_entries(
    entries: list[Any], *, where: str = "metrics"
) -> tuple[MetricsConfig | None, list[dict[str, Any]]]:
    """The metrics of a list of entries, and one problem (`loc`, `msg`, `type`) per fault.

    For a metrics YAML file, and for the metrics written inline in a `project.yaml`. Every
    field of an entry is checked, also when its scorer is unknown. The config is None when
    there is a problem.
    """
    metrics: list[MetricConfig] = []
    problems: list[dict[str, Any]] = []
    for index, entry in enumerate(entries):
        metric = _read_entry(entry, f"{where}[{index}]", problems)
        if metric is not None:
            metrics.append(metric)
    if problems:
        return None, problems
    try:
        return MetricsConfig(metrics=metrics), []
    except MetricConfigError as exc:
        return None, [_problem(where, exc.message.replace("\n", f"\n{where}: "))]


def _read_entry(entry: Any, where: str, problems: list[dict[str, Any]]) -> MetricConfig | None:
    """One entry as a MetricConfig, or None after adding each of its problems to `problems`."""
    if not isinstance(entry, dict):
        problems.append(_problem(where, "must be a mapping with scorer, task_names, ..."))
        return None
    before = len(problems)
    for key in entry:
        if key not in _ENTRY_KEYS:
            problems.append(_problem(where, unknown_key(key, _ENTRY_KEYS)))
    scorer: BaseScorer | None = None
    args = entry.get("args") or {}
    if not isinstance(args, dict):
        problems.append(_problem(where, "args must be a mapping of constructor arguments"))
    else:
        try:
            scorer = scorer_by_name(entry.get("scorer", ""), args)
        except ScoringError as exc:
            problems.append(_problem(where, exc.message.replace("\n", f"\n{where}: ")))
    bootstrap = entry.get("bootstrap")
    if isinstance(bootstrap, dict):
        try:
            bootstrap = BootstrapConfig(**bootstrap)
        except MetricConfigError as exc:
            problems.append(_problem(where, exc.message.replace("\n", f"\n{where}: ")))
            bootstrap = None
    fields = {key: entry[key] for key in _ENTRY_KEYS[2:] if key in entry}  # missing: said so
    if "bootstrap" in fields:
        fields["bootstrap"] = bootstrap
    try:
        # Without its own scorer, the entry's other fields are checked with a stand-in one;
        # each problem is placed at its key.
        metric = MetricConfig(scorer=scorer or _stand_in(), **fields)
    except ScoringError as exc:
        problems += [
            _problem(where if p["loc"] == "(top level)" else f"{where}.{p['loc']}", p["msg"])
            for p in exc.errors
        ] or [_problem(where, exc.message.replace("\n", f"\n{where}: "))]
        return None
    return metric if len(problems) == before else None


def _stand_in() -> BaseScorer:
    from meta_evaluator.scores.metrics import AccuracyScorer

    return AccuracyScorer()


def _problem(where: str, message: str) -> dict[str, Any]:
    """One problem of a metrics entry, as `raise_problems` lists it."""
    return {"loc": where, "msg": message, "type": "metric"}
