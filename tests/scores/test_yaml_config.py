"""Metrics in YAML: every built-in scorer by name, equal to the same MetricsConfig in Python."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from meta_evaluator.errors import MetricConfigError, ScoringError
from meta_evaluator.scores import BootstrapConfig, MetricConfig, MetricsConfig
from meta_evaluator.scores import metrics as builtin
from meta_evaluator.scores.metrics import (
    AccuracyScorer,
    AltTestScorer,
    CohensKappaScorer,
    KrippendorffAlphaScorer,
    PreferenceScorer,
    SemanticSimilarityScorer,
    TextSimilarityScorer,
)
from meta_evaluator.scores.yaml_config import SCORERS, read_metrics_yaml, scorer_by_name

EXAMPLE_METRICS = Path(__file__).parents[2] / "meta_evaluator" / "examples" / "pairwise"


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def describe(metric: MetricConfig) -> dict[str, Any]:
    """Everything that decides what a metric computes and where it writes, comparable by ==."""
    scorer = metric.scorer
    return {
        "scorer_type": type(scorer),
        "scorer_name": scorer.scorer_name,
        "attributes": {
            k: v for k, v in vars(scorer).items() if not k.startswith("_") and k != "logger"
        },
        "task_names": metric.task_names,
        "aggregation_name": metric.aggregation_name,
        "annotator_aggregation": metric.annotator_aggregation,
        "display_name": metric.display_name,
        "unique_name": metric.get_unique_name(),
        "bootstrap": None if metric.bootstrap is None else metric.bootstrap.model_dump(),
    }


EVERY_SCORER = """\
    metrics:
      - scorer: accuracy
        task_names: [rejection]
        aggregation_name: single
      - scorer: alt_test
        args: {epsilon: 0.15, multiplicative_epsilon: true, q_fdr: 0.1,
               min_instances_per_human: 10, min_humans_per_instance: 3,
               scoring_function: jaccard}
        task_names: [a, b]
        aggregation_name: multilabel
        display_name: alt_ab
      - scorer: cohens_kappa
        args: {weights: quadratic}
        task_names: [rejection]
        aggregation_name: single
        annotator_aggregation: majority_vote
        bootstrap: {n_resamples: 200, confidence_level: 0.9, seed: 7}
      - scorer: krippendorff_alpha
        args: {level_of_measurement: ordinal}
        task_names: [a, b]
        aggregation_name: multitask
      - scorer: preference
        args: {chance_agreement: 0.4, reference_task: preference, reference_annotator: crowd,
               group_by: topic, text_columns: [answer_1, answer_2], n_resamples: 50, seed: 3}
        task_names: [concise, polite]
        aggregation_name: multitask
        display_name: traits
        bootstrap: {}
      - scorer: semantic_similarity
        args: {model: embedder, base_url: "http://127.0.0.1:9/v1", api_key_env: EMB_KEY,
               batch_size: 8, max_concurrency: 2, max_retries: 1, timeout: 5}
        task_names: [explanation]
        aggregation_name: single
      - scorer: text_similarity
        task_names: [explanation]
        aggregation_name: single
        display_name: explanation_text
"""


def python_config() -> MetricsConfig:
    return MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=AccuracyScorer(), task_names=["rejection"], aggregation_name="single"
            ),
            MetricConfig(
                scorer=AltTestScorer(
                    epsilon=0.15,
                    multiplicative_epsilon=True,
                    q_fdr=0.1,
                    min_instances_per_human=10,
                    min_humans_per_instance=3,
                    scoring_function="jaccard",
                ),
                task_names=["a", "b"],
                aggregation_name="multilabel",
                display_name="alt_ab",
            ),
            MetricConfig(
                scorer=CohensKappaScorer(weights="quadratic"),
                task_names=["rejection"],
                aggregation_name="single",
                annotator_aggregation="majority_vote",
                bootstrap=BootstrapConfig(n_resamples=200, confidence_level=0.9, seed=7),
            ),
            MetricConfig(
                scorer=KrippendorffAlphaScorer(level_of_measurement="ordinal"),
                task_names=["a", "b"],
                aggregation_name="multitask",
            ),
            MetricConfig(
                scorer=PreferenceScorer(
                    0.4,
                    reference_task="preference",
                    reference_annotator="crowd",
                    group_by="topic",
                    text_columns=("answer_1", "answer_2"),
                    n_resamples=50,
                    seed=3,
                ),
                task_names=["concise", "polite"],
                aggregation_name="multitask",
                display_name="traits",
                bootstrap=BootstrapConfig(),
            ),
            MetricConfig(
                scorer=SemanticSimilarityScorer(
                    "embedder",
                    base_url="http://127.0.0.1:9/v1",
                    api_key_env="EMB_KEY",
                    batch_size=8,
                    max_concurrency=2,
                    max_retries=1,
                    timeout=5,
                ),
                task_names=["explanation"],
                aggregation_name="single",
            ),
            MetricConfig(
                scorer=TextSimilarityScorer(),
                task_names=["explanation"],
                aggregation_name="single",
                display_name="explanation_text",
            ),
        ]
    )


def test_every_builtin_scorer_with_args_equals_the_python_config(tmp_path: Path) -> None:
    config = read_metrics_yaml(write(tmp_path / "metrics.yaml", EVERY_SCORER))
    assert isinstance(config, MetricsConfig)
    expected = python_config()
    assert [describe(m) for m in config.metrics] == [describe(m) for m in expected.metrics]
    # the agreement and preference scorers; the model-evaluation ones need data columns and
    # are covered by test_every_exported_scorer_can_be_named
    assert {m.scorer.scorer_name for m in config.metrics} <= set(SCORERS)
    assert len(config.metrics) >= 7


def test_yaml_values_reach_the_scorers(tmp_path: Path) -> None:
    """Spot checks that do not go through `describe`, so a wrong helper cannot hide a bug."""
    config = read_metrics_yaml(write(tmp_path / "metrics.yaml", EVERY_SCORER))
    alt, kappa, preference = config.metrics[1].scorer, config.metrics[2], config.metrics[4]
    assert (
        isinstance(alt, AltTestScorer) and alt.epsilon == 0.15 and alt.min_humans_per_instance == 3
    )
    assert kappa.annotator_aggregation == "majority_vote"
    assert kappa.bootstrap == BootstrapConfig(n_resamples=200, confidence_level=0.9, seed=7)
    assert isinstance(preference.scorer, PreferenceScorer)
    assert preference.scorer.text_columns == ("answer_1", "answer_2")
    assert preference.scorer.data_columns == ("topic",)
    assert preference.bootstrap == BootstrapConfig()
    assert config.metrics[0].get_unique_name().startswith("accuracy_1tasks_")
    assert config.metrics[0].bootstrap is None


def test_the_pairwise_example_metrics_file(tmp_path: Path) -> None:
    config = read_metrics_yaml(EXAMPLE_METRICS / "metrics.yaml")
    (metric,) = config.metrics
    expected = MetricConfig(
        scorer=PreferenceScorer(
            reference_task="preference", reference_annotator="crowd_preference", group_by="topic"
        ),
        task_names=[
            "is_more_concise",
            "gives_a_concrete_example",
            "uses_a_bulleted_list",
            "is_more_polite",
        ],
        aggregation_name="multitask",
        display_name="traits",
        bootstrap=BootstrapConfig(n_resamples=1000, seed=0),
    )
    assert describe(metric) == describe(expected)


def test_every_exported_scorer_can_be_named(tmp_path: Path) -> None:
    """A scorer added to scores.metrics but not to the YAML registry fails here."""
    required = {"FairnessScorer": {"sensitive_columns": ["gender"], "positive_label": "yes"}}
    for class_name in builtin.__all__:
        cls = getattr(builtin, class_name)
        args = required.get(class_name, {})
        name = cls(**args).scorer_name
        assert name in SCORERS
        assert type(scorer_by_name(name, args)) is cls


def test_scorer_by_name_with_args() -> None:
    scorer = scorer_by_name("cohens_kappa", {"weights": "linear"})
    assert isinstance(scorer, CohensKappaScorer) and scorer.weights == "linear"
    assert isinstance(scorer_by_name("accuracy", None), AccuracyScorer)


def test_scorer_by_name_errors() -> None:
    with pytest.raises(MetricConfigError, match=r"unknown scorer 'kappa'") as unknown:
        scorer_by_name("kappa")
    assert unknown.value.field == "scorer"
    with pytest.raises(MetricConfigError, match=r"'cohens_kappa'.*'power'") as bad_arg:
        scorer_by_name("cohens_kappa", {"power": 2})
    assert bad_arg.value.field == "args"
    with pytest.raises(ScoringError, match="weights must be None, 'linear' or 'quadratic'") as bad:
        scorer_by_name("cohens_kappa", {"weights": "cubic"})
    assert type(bad.value) is ScoringError


def test_close_match_suggestion() -> None:
    with pytest.raises(MetricConfigError, match=r"did you mean 'accuracy'\?"):
        scorer_by_name("acuracy")
    with pytest.raises(MetricConfigError, match=r"scorers are accuracy, alt_test"):
        scorer_by_name("zzzzzz")


# ----- errors in a file ------------------------------------------------------------------------

EVERY_MISTAKE = """\
    metrics:
      - scorer: acuracy
        task_names: [a]
        aggregation_name: single
      - scorer: accuracy
        task_name: [a]
        aggregation_name: single
      - scorer: alt_test
        args: {epsilonn: 0.1}
        task_names: [a]
        aggregation_name: single
      - scorer: alt_test
        args: {epsilon: 2}
        task_names: [a]
        aggregation_name: single
      - scorer: accuracy
        task_names: [a, b]
        aggregation_name: single
      - just a string
      - scorer: accuracy
        task_names: [a]
        aggregation_name: single
        display_name: fine
"""


def test_every_problem_is_listed_with_file_and_place(tmp_path: Path) -> None:
    path = write(tmp_path / "bad_metrics.yaml", EVERY_MISTAKE)
    with pytest.raises(MetricConfigError) as info:
        read_metrics_yaml(path)
    exc = info.value
    assert type(exc) is MetricConfigError and exc.path == path
    message = str(exc)
    lines = message.splitlines()
    assert lines[0] == f"{path}: 7 problem(s) in the metrics configuration:"
    expected = [
        f"{path}: metrics[0]: unknown scorer 'acuracy'; did you mean 'accuracy'?",
        f"{path}: metrics[1]: unknown key 'task_name'; did you mean 'task_names'?",
        f"{path}: metrics[2]: scorer 'alt_test': ",  # unknown constructor argument
        f"{path}: metrics[3]: AltTestScorer: epsilon must be in [0, 1); got 2.",
        f"{path}: metrics[5]: must be a mapping",
    ]
    for start in expected:
        assert any(line.startswith(start) for line in lines), (start, message)
    assert "'epsilonn'" in message
    # the missing task_names of metrics[1] and the two tasks of a single metric in metrics[4]
    assert "metrics[1].task_names: Field required" in message
    assert "metrics[4]: aggregation 'single' takes exactly one task" in message
    assert "metrics[6]" not in message  # the valid entry is not blamed


def test_unknown_top_level_key(tmp_path: Path) -> None:
    path = write(
        tmp_path / "m.yaml",
        """\
        metrics:
          - {scorer: accuracy, task_names: [a], aggregation_name: single}
        metric_defaults: {bootstrap: {}}
        """,
    )
    with pytest.raises(MetricConfigError, match="metric_defaults: unknown top-level key"):
        read_metrics_yaml(path)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ("[0.1]", "args must be a mapping"),
        ("{epsilon: '0.1'}", "epsilon must be a number"),
        ("{scoring_function: cosine}", "scoring_function must be None or one of"),
    ],
)
def test_bad_args(tmp_path: Path, args: str, fragment: str) -> None:
    path = write(
        tmp_path / "m.yaml",
        f"metrics:\n  - {{scorer: alt_test, args: {args}, task_names: [a], "
        "aggregation_name: single}\n",
    )
    with pytest.raises(MetricConfigError) as info:
        read_metrics_yaml(path)
    assert fragment in str(info.value) and "metrics[0]" in str(info.value)
    assert info.value.path == path


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        ("aggregation_name: singel", "aggregation_name"),
        ("annotator_aggregation: majority", "annotator_aggregation"),
        ("bootstrap: {n_resamples: 0}", "n_resamples"),
        ("bootstrap: [1]", "bootstrap"),
        ("display_name: ../escape", "display_name"),
    ],
)
def test_bad_entry_values(tmp_path: Path, entry: str, fragment: str) -> None:
    base = "scorer: accuracy\n    task_names: [a]\n    "
    if not entry.startswith("aggregation_name"):
        base += "aggregation_name: single\n    "
    path = write(tmp_path / "m.yaml", f"metrics:\n  - {base}{entry}\n")
    with pytest.raises(MetricConfigError) as info:
        read_metrics_yaml(path)
    message = str(info.value)
    assert "metrics[0]" in message and fragment in message and str(path) in message


@pytest.mark.parametrize(
    "text",
    ["", "metric: []\n", "- scorer: accuracy\n", "metrics: {scorer: accuracy}\n"],
    ids=["empty", "no-metrics", "a-list", "metrics-not-a-list"],
)
def test_missing_metrics_list(tmp_path: Path, text: str) -> None:
    path = write(tmp_path / "m.yaml", text)
    with pytest.raises(MetricConfigError) as info:
        read_metrics_yaml(path)
    assert info.value.path == path and info.value.field == "metrics"
    assert "'metrics:'" in str(info.value) and str(path) in str(info.value)


def test_empty_metrics_list(tmp_path: Path) -> None:
    path = write(tmp_path / "m.yaml", "metrics: []\n")
    with pytest.raises(MetricConfigError, match="at least 1") as info:
        read_metrics_yaml(path)
    assert info.value.path == path and str(path) in str(info.value)


def test_two_metrics_writing_to_one_folder(tmp_path: Path) -> None:
    path = write(
        tmp_path / "m.yaml",
        """\
        metrics:
          - {scorer: accuracy, task_names: [a], aggregation_name: single, display_name: same}
          - {scorer: accuracy, task_names: [b], aggregation_name: single, display_name: same}
        """,
    )
    with pytest.raises(MetricConfigError, match="metrics\\[0\\] and metrics\\[1\\]") as info:
        read_metrics_yaml(path)
    assert str(path) in str(info.value) and info.value.path == path


def test_invalid_yaml(tmp_path: Path) -> None:
    path = write(tmp_path / "m.yaml", "metrics: [\n  - scorer: accuracy\n")
    with pytest.raises(MetricConfigError) as info:
        read_metrics_yaml(path)
    assert type(info.value) is MetricConfigError and info.value.path == path
    assert str(path) in str(info.value) and "YAML" in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(MetricConfigError) as info:
        read_metrics_yaml(tmp_path / "nowhere.yaml")
    assert info.value.path == tmp_path / "nowhere.yaml" and "nowhere.yaml" in str(info.value)


@pytest.mark.parametrize("scorer", ["[accuracy]", "{name: accuracy}"])
def test_scorer_that_is_not_a_name(tmp_path: Path, scorer: str) -> None:
    path = write(
        tmp_path / "m.yaml",
        f"metrics:\n  - {{scorer: {scorer}, task_names: [a], aggregation_name: single}}\n",
    )
    with pytest.raises(MetricConfigError, match=r"metrics\[0\]"):
        read_metrics_yaml(path)


def test_problems_are_also_listed_in_errors(tmp_path: Path) -> None:
    path = write(tmp_path / "bad_metrics.yaml", EVERY_MISTAKE)
    with pytest.raises(MetricConfigError) as info:
        read_metrics_yaml(path)
    assert len(info.value.errors) == 7
    assert info.value.errors[0]["loc"].startswith("metrics[0]")


def test_metrics_file_must_be_a_path() -> None:
    with pytest.raises(MetricConfigError, match="the metrics file must be a path, got int 3") as e:
        read_metrics_yaml(3)  # type: ignore[arg-type]
    assert e.value.field == "path"


def test_an_unknown_scorer_does_not_hide_the_entrys_other_problems(tmp_path: Path) -> None:
    """One pass: before, the other fields of an entry with an unknown scorer were checked only
    once the scorer was fixed."""
    path = write(
        tmp_path / "m.yaml",
        """\
        metrics:
          - scorer: acuracy
            task_names: []
            aggregation_name: singel
            bootstrap: {n_resamples: 0}
        """,
    )
    with pytest.raises(MetricConfigError) as info:
        read_metrics_yaml(path)
    message = str(info.value)
    assert message.splitlines()[0] == f"{path}: 4 problem(s) in the metrics configuration:"
    assert "metrics[0]: unknown scorer 'acuracy'; did you mean 'accuracy'?" in message
    assert "n_resamples" in message
    assert f"{path}: metrics[0].task_names: List should have at least 1 item" in message
    assert f"{path}: metrics[0].aggregation_name: Input should be 'single'" in message
