"""MetricConfig and MetricsConfig: which scorer runs on which tasks, and how."""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from meta_evaluator._validation import ConfigModel
from meta_evaluator.errors import MetricConfigError
from meta_evaluator.scores.base_scorer import AnnotatorAggregation, BaseScorer
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.storage import check_safe_name

__all__ = ["AnnotatorAggregation", "BootstrapConfig", "MetricConfig", "MetricsConfig"]


class BootstrapConfig(ConfigModel):
    """Paired percentile bootstrap over items, for a confidence interval on every score."""

    error_class: ClassVar[type[MetricConfigError]] = MetricConfigError

    n_resamples: int = Field(default=1000, ge=1)
    """Number of resamples of the items (judge and human labels of an item stay together)."""
    confidence_level: float = Field(default=0.95, gt=0.0, lt=1.0)
    """Central coverage of the interval, in (0, 1)."""
    seed: int = 0
    """Seed of the resampling: the same seed gives the same intervals."""


class MetricConfig(ConfigModel):
    """One scorer applied to one or more tasks of the project.

    `single` needs exactly one task; `multitask` (each task scored, then averaged) and
    `multilabel` (tasks combined into one label list) need two or more.
    """

    model_config = ConfigDict(
        frozen=True, extra="forbid", hide_input_in_errors=True, arbitrary_types_allowed=True
    )
    error_class: ClassVar[type[MetricConfigError]] = MetricConfigError

    scorer: BaseScorer
    """The scorer instance (built-in or a subclass of BaseScorer)."""
    task_names: list[str] = Field(min_length=1)
    """The tasks scored, as named in the EvalTask."""
    aggregation_name: Literal["single", "multitask", "multilabel"]
    """How the tasks are combined: the value of `aggregation_mode` (a TaskAggregationMode), the
    one name used inside; `task_strategy=` (meta-evaluator 0.3) is accepted as an alias."""
    annotator_aggregation: AnnotatorAggregation = "individual_average"
    """individual_average: judge vs each human, averaged; majority_vote: judge vs the per-item
    majority label (ties to the lexicographically largest label)."""
    display_name: str | None = None
    """Folder name of the metric under scores/<scorer_name>/ (default: derived, see unique name)."""
    bootstrap: BootstrapConfig | None = None
    """When set, every score gets a confidence interval."""

    def __init__(self, **data: Any) -> None:
        if "task_strategy" in data and "aggregation_name" not in data:
            data["aggregation_name"] = data.pop("task_strategy")  # the one alias of 0.3's name
        super().__init__(**data)

    @field_validator("scorer")
    @classmethod
    def _safe_scorer_name(cls, value: BaseScorer) -> BaseScorer:
        name = getattr(value, "scorer_name", None)
        if not isinstance(name, str):
            raise ValueError(
                "the scorer has no scorer_name; call super().__init__(scorer_name=...)"
            )
        check_safe_name(name, field="scorer_name")  # it names the folder under scores/
        return value

    @field_validator("task_names")
    @classmethod
    def _distinct_tasks(cls, value: list[str]) -> list[str]:
        repeated = sorted({t for t in value if value.count(t) > 1})
        if repeated:
            raise ValueError(f"tasks named more than once: {repeated}")
        return value

    @field_validator("display_name")
    @classmethod
    def _safe_display_name(cls, value: str | None) -> str | None:
        if value is not None:
            check_safe_name(value, field="display_name")
        return value

    @model_validator(mode="after")
    def _task_count(self) -> MetricConfig:
        n = len(self.task_names)
        single = self.aggregation_mode is TaskAggregationMode.SINGLE
        if single and n != 1:
            raise ValueError(
                f"aggregation 'single' takes exactly one task, got {n} ({self.task_names}); "
                "use 'multitask' or 'multilabel' for several"
            )
        if not single and n < 2:
            raise ValueError(
                f"aggregation {self.aggregation_name!r} takes two or more tasks, got "
                f"{self.task_names}; use 'single' for one"
            )
        return self

    @property
    def aggregation_mode(self) -> TaskAggregationMode:
        """`aggregation_name` as a TaskAggregationMode (what scorers and results carry)."""
        return TaskAggregationMode(self.aggregation_name)

    def get_unique_name(self) -> str:
        """The metric's folder name: `display_name`, or scorer, task count, hash and mode."""
        if self.display_name:
            return self.display_name
        digest = hashlib.md5("_".join(sorted(self.task_names)).encode()).hexdigest()[:8]
        return (
            f"{self.scorer.scorer_name}_{len(self.task_names)}tasks_{digest}_"
            f"{self.aggregation_name}"
        )

    @classmethod
    def _error_root(cls, data: dict[str, Any]) -> str:
        scorer = data.get("scorer")
        name = getattr(scorer, "scorer_name", None)
        return f"MetricConfig({name})" if isinstance(name, str) else "MetricConfig"


class MetricsConfig(ConfigModel):
    """The metrics to compute; each writes to its own folder, so their names must differ."""

    error_class: ClassVar[type[MetricConfigError]] = MetricConfigError

    metrics: list[MetricConfig] = Field(min_length=1)
    """The metrics, computed in this order."""

    def add_metric(
        self,
        scorer: BaseScorer,
        task_names: list[str],
        task_strategy: str | None = None,
        annotator_aggregation: AnnotatorAggregation = "individual_average",
        display_name: str | None = None,
        **options: Any,
    ) -> MetricConfig:
        """Append a metric (meta-evaluator 0.3.3's way to grow a configuration); return it.

        The arguments are `MetricConfig`'s (`task_strategy` is `aggregation_name`, which
        `options` may give instead, with `bootstrap`); the metric is checked with the others.

        Raises:
            MetricConfigError: The metric is invalid, or would write to another's folder.
        """
        fields: dict[str, Any] = {
            "scorer": scorer,
            "task_names": task_names,
            "annotator_aggregation": annotator_aggregation,
            "display_name": display_name,
            **options,
        }
        if task_strategy is not None:
            fields["task_strategy"] = task_strategy
        metric = MetricConfig(**fields)
        MetricsConfig(metrics=[*self.metrics, metric])  # the folders must stay distinct
        self.metrics.append(metric)  # the list, not the field: 0.3.3's scripts keep the object
        return metric

    @model_validator(mode="after")
    def _distinct_folders(self) -> MetricsConfig:
        seen: dict[tuple[str, str], int] = {}
        for i, metric in enumerate(self.metrics):
            key = (metric.scorer.scorer_name, metric.get_unique_name())
            if key in seen:
                raise ValueError(
                    f"metrics[{seen[key]}] and metrics[{i}] would both write to "
                    f"scores/{key[0]}/{key[1]}/; give one a display_name"
                )
            seen[key] = i
        return self
