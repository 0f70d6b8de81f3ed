"""MetricConfig, MetricsConfig and BootstrapConfig: what they accept, and how they refuse."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from meta_evaluator.errors import MetaEvaluatorError, MetricConfigError
from meta_evaluator.scores import BootstrapConfig, MetricConfig, MetricsConfig, TaskAggregationMode
from meta_evaluator.scores.metrics import (
    AccuracyScorer,
    AltTestScorer,
    CohensKappaScorer,
    KrippendorffAlphaScorer,
    TextSimilarityScorer,
)


def raises_config_error(fragment: str, **kwargs: Any) -> MetricConfigError:
    with pytest.raises(MetricConfigError) as info:
        MetricConfig(**kwargs)
    exc = info.value
    assert type(exc) is MetricConfigError
    assert isinstance(exc, MetaEvaluatorError)
    assert fragment in str(exc), str(exc)
    return exc


def test_single_takes_exactly_one_task() -> None:
    exc = raises_config_error(
        "single", scorer=AccuracyScorer(), task_names=["a", "b"], aggregation_name="single"
    )
    assert "['a', 'b']" in str(exc)


@pytest.mark.parametrize("mode", ["multitask", "multilabel"])
def test_multitask_and_multilabel_take_two_or_more(mode: str) -> None:
    raises_config_error(mode, scorer=AccuracyScorer(), task_names=["a"], aggregation_name=mode)


def test_no_task_at_all() -> None:
    exc = raises_config_error(
        "task_names", scorer=AccuracyScorer(), task_names=[], aggregation_name="single"
    )
    assert exc.field == "task_names"


def test_unknown_aggregation_name_names_the_field() -> None:
    exc = raises_config_error(
        "aggregation_name", scorer=AccuracyScorer(), task_names=["a"], aggregation_name="avg"
    )
    assert exc.field == "aggregation_name"


def test_unknown_annotator_aggregation_names_the_field() -> None:
    exc = raises_config_error(
        "annotator_aggregation",
        scorer=AccuracyScorer(),
        task_names=["a"],
        aggregation_name="single",
        annotator_aggregation="median",
    )
    assert exc.field == "annotator_aggregation"


def test_repeated_task_names() -> None:
    exc = raises_config_error(
        "task_names",
        scorer=AccuracyScorer(),
        task_names=["a", "b", "a"],
        aggregation_name="multitask",
    )
    assert "'a'" in str(exc)
    assert exc.field == "task_names"


@pytest.mark.parametrize("name", ["../x", "a/b", "", ".hidden", "CON", "x" * 200])
def test_unsafe_display_name(name: str) -> None:
    exc = raises_config_error(
        "display_name",
        scorer=AccuracyScorer(),
        task_names=["a"],
        aggregation_name="single",
        display_name=name,
    )
    assert exc.field == "display_name"


def test_scorer_must_be_a_scorer() -> None:
    exc = raises_config_error(
        "scorer", scorer="accuracy", task_names=["a"], aggregation_name="single"
    )
    assert exc.field == "scorer"


def test_unknown_keyword_is_rejected() -> None:
    raises_config_error(
        "bootstrp",
        scorer=AccuracyScorer(),
        task_names=["a"],
        aggregation_name="single",
        bootstrp=BootstrapConfig(),
    )


def test_several_problems_are_listed_at_once() -> None:
    with pytest.raises(MetricConfigError) as info:
        MetricConfig(
            scorer=AccuracyScorer(),
            task_names=["a"],
            aggregation_name="avg",
            annotator_aggregation="median",
            display_name="../x",
        )
    message = str(info.value)
    for field in ("aggregation_name", "annotator_aggregation", "display_name"):
        assert field in message
    assert len(info.value.errors) == 3


def test_task_strategy_alias_of_the_03_docs() -> None:
    old = MetricConfig(scorer=AccuracyScorer(), task_names=["a", "b"], task_strategy="multitask")
    assert old.aggregation_name == "multitask"
    assert old.aggregation_mode is TaskAggregationMode.MULTITASK
    new = MetricConfig(scorer=AccuracyScorer(), task_names=["a", "b"], aggregation_name="multitask")
    assert old.get_unique_name() == new.get_unique_name()
    raises_config_error(
        "single", scorer=AccuracyScorer(), task_names=["a", "b"], task_strategy="single"
    )


def test_defaults() -> None:
    config = MetricConfig(scorer=AccuracyScorer(), task_names=["a"], aggregation_name="single")
    assert config.annotator_aggregation == "individual_average"
    assert config.display_name is None
    assert config.bootstrap is None
    assert config.aggregation_mode is TaskAggregationMode.SINGLE


def test_frozen() -> None:
    config = MetricConfig(scorer=AccuracyScorer(), task_names=["a"], aggregation_name="single")
    with pytest.raises(Exception):  # noqa: B017 - pydantic's frozen-instance error
        config.task_names = ["b"]  # type: ignore[misc]


# ----- unique names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scorer", "tasks", "mode"),
    [
        (AccuracyScorer(), ["rejection"], "single"),
        (CohensKappaScorer(), ["b", "a"], "multitask"),
        (AltTestScorer(), ["harm", "rejection", "tone"], "multilabel"),
        (TextSimilarityScorer(), ["explanation"], "single"),
        (KrippendorffAlphaScorer(), ["z_task", "a_task"], "multitask"),
    ],
)
def test_unique_name(scorer: Any, tasks: list[str], mode: str) -> None:
    config = MetricConfig(scorer=scorer, task_names=tasks, aggregation_name=mode)
    digest = hashlib.md5("_".join(sorted(tasks)).encode()).hexdigest()[:8]
    expected = f"{scorer.scorer_name}_{len(tasks)}tasks_{digest}_{mode}"
    assert config.get_unique_name() == expected


def test_unique_name_ignores_task_order_and_display_name_wins() -> None:
    a = MetricConfig(scorer=AccuracyScorer(), task_names=["x", "y"], aggregation_name="multitask")
    b = MetricConfig(scorer=AccuracyScorer(), task_names=["y", "x"], aggregation_name="multitask")
    assert a.get_unique_name() == b.get_unique_name()
    named = MetricConfig(
        scorer=AccuracyScorer(), task_names=["x"], aggregation_name="single", display_name="mine"
    )
    assert named.get_unique_name() == "mine"


# ----- MetricsConfig -----------------------------------------------------------------------------


def test_two_metrics_writing_to_the_same_folder() -> None:
    one = MetricConfig(scorer=AccuracyScorer(), task_names=["a"], aggregation_name="single")
    two = MetricConfig(
        scorer=AccuracyScorer(),
        task_names=["a"],
        aggregation_name="single",
        annotator_aggregation="majority_vote",
    )
    with pytest.raises(MetricConfigError) as info:
        MetricsConfig(metrics=[one, two])
    assert type(info.value) is MetricConfigError
    message = str(info.value)
    assert "metrics[0]" in message
    assert "metrics[1]" in message
    assert one.get_unique_name() in message
    assert "display_name" in message


def test_same_display_name_for_the_same_scorer_collides() -> None:
    one = MetricConfig(
        scorer=AccuracyScorer(), task_names=["a"], aggregation_name="single", display_name="m"
    )
    two = MetricConfig(
        scorer=AccuracyScorer(), task_names=["b"], aggregation_name="single", display_name="m"
    )
    with pytest.raises(MetricConfigError, match="display_name"):
        MetricsConfig(metrics=[one, two])


def test_distinct_folders_are_fine() -> None:
    metrics = [
        MetricConfig(scorer=AccuracyScorer(), task_names=["a"], aggregation_name="single"),
        MetricConfig(
            scorer=AccuracyScorer(),
            task_names=["a"],
            aggregation_name="single",
            annotator_aggregation="majority_vote",
            display_name="acc_majority",
        ),
        MetricConfig(scorer=CohensKappaScorer(), task_names=["a"], aggregation_name="single"),
        # same display name, different scorer: different scores/<scorer_name>/ folders
        MetricConfig(
            scorer=TextSimilarityScorer(),
            task_names=["t"],
            aggregation_name="single",
            display_name="acc_majority",
        ),
    ]
    assert len(MetricsConfig(metrics=metrics).metrics) == 4


def test_metrics_config_needs_metrics() -> None:
    with pytest.raises(MetricConfigError, match="metrics") as info:
        MetricsConfig(metrics=[])
    assert info.value.field == "metrics"
    with pytest.raises(MetricConfigError, match="metrics"):
        MetricsConfig(metrics=["accuracy"])


# ----- BootstrapConfig ---------------------------------------------------------------------------


def test_bootstrap_defaults() -> None:
    config = BootstrapConfig()
    assert (config.n_resamples, config.confidence_level, config.seed) == (1000, 0.95, 0)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("n_resamples", 0),
        ("n_resamples", -5),
        ("n_resamples", 2.5),
        ("confidence_level", 0.0),
        ("confidence_level", 1.0),
        ("confidence_level", 1.5),
        ("confidence_level", -0.1),
        ("seed", "zero"),
    ],
)
def test_bootstrap_bounds(field: str, value: Any) -> None:
    with pytest.raises(MetricConfigError) as info:
        BootstrapConfig(**{field: value})
    assert type(info.value) is MetricConfigError
    assert field in str(info.value)
    assert info.value.field == field


@pytest.mark.parametrize(
    "values",
    [{"n_resamples": 1}, {"confidence_level": 0.5}, {"confidence_level": 0.999, "seed": 7}],
)
def test_bootstrap_accepts_the_edges_inside(values: dict[str, Any]) -> None:
    config = BootstrapConfig(**values)
    for key, value in values.items():
        assert getattr(config, key) == value


def test_bootstrap_given_as_a_dict_inside_metric_config() -> None:
    config = MetricConfig(
        scorer=AccuracyScorer(),
        task_names=["a"],
        aggregation_name="single",
        bootstrap={"n_resamples": 10},
    )
    assert config.bootstrap == BootstrapConfig(n_resamples=10)
    with pytest.raises(MetricConfigError, match=r"bootstrap(.|\n)*n_resamples") as info:
        MetricConfig(
            scorer=AccuracyScorer(),
            task_names=["a"],
            aggregation_name="single",
            bootstrap={"n_resamples": 0},
        )
    assert info.value.field == "bootstrap.n_resamples"  # the nested key itself
