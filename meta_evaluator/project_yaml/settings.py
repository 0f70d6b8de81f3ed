"""What commands read of a project's own settings each time: its metrics, its drift thresholds.

A project's settings are its `project.yaml` (the `metrics:` and `drift:` sections), else, for
metrics, its `metrics.yaml`; a project made from Python alone may have neither, and then the
defaults hold.
"""

from __future__ import annotations

from pathlib import Path

from meta_evaluator.errors import MetricConfigError
from meta_evaluator.project_yaml.reader import PROJECT_FILE, parse_project_yaml
from meta_evaluator.scores import MetricsConfig
from meta_evaluator.scores.drift import DriftThresholds
from meta_evaluator.scores.yaml_config import read_metric_entries, read_metrics_yaml
from meta_evaluator.storage import raise_problems

__all__ = ["METRICS_FILE", "read_drift_thresholds", "read_project_metrics"]

METRICS_FILE = "metrics.yaml"
"""The metrics file of a project without metrics in its `project.yaml`."""


def read_project_metrics(root: Path) -> MetricsConfig | None:
    """The project's metrics: its `project.yaml`'s, else its `metrics.yaml`; None without either.

    Raises:
        MetricConfigError: The metrics (inline or in their file) have problems, all listed.
        ProjectFileError: The project's `project.yaml` is invalid.
    """
    project_file = root / PROJECT_FILE
    if project_file.is_file():
        file, model = parse_project_yaml(project_file)
        if isinstance(model.metrics, str):
            return read_metrics_yaml(file.parent / model.metrics)
        if model.metrics is not None:
            config, problems = read_metric_entries(model.metrics)
            raise_problems(file, problems, what="metrics", error=MetricConfigError)
            assert config is not None, "no problem, so a config"
            return config
    metrics_file = root / METRICS_FILE
    return read_metrics_yaml(metrics_file) if metrics_file.is_file() else None


def read_drift_thresholds(root: Path) -> DriftThresholds:
    """The `drift:` section of the project's `project.yaml`; the defaults without one.

    Raises:
        ProjectFileError: The project's `project.yaml` is invalid (its `drift:` section too).
    """
    project_file = root / PROJECT_FILE
    if project_file.is_file():
        _, model = parse_project_yaml(project_file)
        if model.drift is not None:
            return model.drift
    return DriftThresholds()
