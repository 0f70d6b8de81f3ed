"""Every name API.md documents imports from its documented path; every __all__ is exact."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import meta_evaluator

# (module, name) pairs from ../shared/API.md that exist so far; later issues extend this list.
DOCUMENTED = [
    ("meta_evaluator", "MetaEvaluator"),
    ("meta_evaluator", "__version__"),
    ("meta_evaluator", "errors"),
    ("meta_evaluator.data", "DataLoader"),
    ("meta_evaluator.data", "counterfactual_variants"),
    ("meta_evaluator.data", "position_swapped_variants"),
    ("meta_evaluator.data", "EvalData"),
    ("meta_evaluator.data", "SampleEvalData"),
    ("meta_evaluator.eval_task", "EvalTask"),
    ("meta_evaluator.eval_task", "MultiLabelSchema"),
    ("meta_evaluator.judge", "Judge"),
    ("meta_evaluator.judge", "Prompt"),
    ("meta_evaluator.scores", "BootstrapConfig"),
    ("meta_evaluator.scores", "MetricConfig"),
    ("meta_evaluator.scores", "MetricsConfig"),
    ("meta_evaluator.scores.base_scorer", "BaseScorer"),
    ("meta_evaluator.scores.base_scoring_result", "BaseScoringResult"),
    ("meta_evaluator.scores.compare", "IncompleteScoresWarning"),
    ("meta_evaluator.scores.enums", "TaskAggregationMode"),
    ("meta_evaluator.scores.metrics", "AccuracyScorer"),
    ("meta_evaluator.scores.metrics", "AltTestScorer"),
    ("meta_evaluator.scores.metrics", "CohensKappaScorer"),
    ("meta_evaluator.scores.metrics", "CounterfactualScorer"),
    ("meta_evaluator.scores.metrics", "FairnessScorer"),
    ("meta_evaluator.scores.metrics", "KrippendorffAlphaScorer"),
    ("meta_evaluator.scores.metrics", "MultipleChoiceScorer"),
    ("meta_evaluator.scores.metrics", "PositionBiasScorer"),
    ("meta_evaluator.scores.metrics", "SelfConsistencyScorer"),
    ("meta_evaluator.scores.metrics", "SemanticSimilarityScorer"),
    ("meta_evaluator.scores.metrics", "StereotypeScorer"),
    ("meta_evaluator.scores.metrics", "TextSimilarityScorer"),
    ("meta_evaluator.stats", "agreement"),
    ("meta_evaluator.stats", "alt_test"),
    ("meta_evaluator.stats", "bootstrap"),
    ("meta_evaluator.stats.agreement", "cohens_kappa"),
    ("meta_evaluator.stats.agreement", "fleiss_kappa"),
    ("meta_evaluator.stats.agreement", "krippendorff_alpha"),
    ("meta_evaluator.stats.alt_test", "alt_test"),
    ("meta_evaluator.stats.alt_test", "benjamini_yekutieli"),
    ("meta_evaluator.stats.alt_test", "one_sided_ttest"),
    ("meta_evaluator.stats.bootstrap", "paired_bootstrap"),
    ("meta_evaluator.stats", "fairness"),
    ("meta_evaluator.stats", "stereotype"),
    ("meta_evaluator.stats.counterfactual", "change_rates"),
    ("meta_evaluator.stats.fairness", "average_across_datasets"),
    ("meta_evaluator.stats.fairness", "group_metrics"),
    ("meta_evaluator.stats.fairness", "multigroup_metrics"),
    ("meta_evaluator.stats.multiple_choice", "rates"),
    ("meta_evaluator.stats.stereotype", "cat_scores"),
]

# Documented call signatures: (module, name) -> {parameter: default} (Parameter.empty = required).
_REQUIRED = inspect.Parameter.empty
DOCUMENTED_SIGNATURES: dict[tuple[str, str], dict[str, object]] = {
    ("meta_evaluator.scores.metrics", "AltTestScorer"): {
        "epsilon": 0.2,
        "multiplicative_epsilon": False,
        "q_fdr": 0.05,
        "min_instances_per_human": 30,
        "min_humans_per_instance": 2,
        "scoring_function": None,
    },
    ("meta_evaluator.scores.metrics", "CohensKappaScorer"): {"weights": None},
    ("meta_evaluator.scores.metrics", "KrippendorffAlphaScorer"): {
        "level_of_measurement": "nominal"
    },
    ("meta_evaluator.scores.metrics", "FairnessScorer"): {
        "sensitive_columns": _REQUIRED,
        "positive_label": _REQUIRED,
        "thresholds": None,
        "gold_column": None,
    },
    ("meta_evaluator.scores.metrics", "StereotypeScorer"): {
        "option_label_columns": ("option_1_label", "option_2_label", "option_3_label"),
        "bias_type_column": "bias_type",
        "context_type_column": "context_type",
    },
    ("meta_evaluator.scores.metrics", "CounterfactualScorer"): {
        "counterfactual_of_column": "counterfactual_of",
    },
    ("meta_evaluator.scores.metrics", "MultipleChoiceScorer"): {
        "options_column": "options",
        "gold_column": "answer",
        "language_column": None,
    },
    ("meta_evaluator.stats.fairness", "group_metrics"): {
        "y_true": _REQUIRED,
        "y_pred": _REQUIRED,
        "features": _REQUIRED,
        "thresholds": None,
    },
    ("meta_evaluator.stats.fairness", "multigroup_metrics"): {
        "y_true": _REQUIRED,
        "y_pred": _REQUIRED,
        "groups": _REQUIRED,
    },
    ("meta_evaluator.stats.fairness", "average_across_datasets"): {"metric_dicts": _REQUIRED},
    ("meta_evaluator.stats.stereotype", "cat_scores"): {
        "stereotype": _REQUIRED,
        "anti_stereotype": _REQUIRED,
        "neutral": _REQUIRED,
        "other": _REQUIRED,
    },
    ("meta_evaluator.stats.alt_test", "benjamini_yekutieli"): {"p_values": _REQUIRED, "q": 0.05},
    ("meta_evaluator.stats.alt_test", "one_sided_ttest"): {
        "differences": _REQUIRED,
        "value": _REQUIRED,
    },
    ("meta_evaluator.stats.agreement", "cohens_kappa"): {
        "a": _REQUIRED,
        "b": _REQUIRED,
        "weights": None,
    },
    ("meta_evaluator.stats.agreement", "fleiss_kappa"): {"table": _REQUIRED, "method": "fleiss"},
    ("meta_evaluator.stats.agreement", "krippendorff_alpha"): {
        "reliability_data": _REQUIRED,
        "level_of_measurement": "nominal",
    },
    ("meta_evaluator.stats.bootstrap", "paired_bootstrap"): {
        "statistic": _REQUIRED,
        "n_resamples": 1000,
        "confidence_level": 0.95,
        "seed": 0,
    },
}


@pytest.mark.parametrize(("module", "name"), DOCUMENTED)
def test_documented_name_imports(module: str, name: str) -> None:
    assert getattr(importlib.import_module(module), name) is not None


@pytest.mark.parametrize(("where", "expected"), list(DOCUMENTED_SIGNATURES.items()))
def test_documented_signature(where: tuple[str, str], expected: dict[str, object]) -> None:
    target = getattr(importlib.import_module(where[0]), where[1])
    parameters = inspect.signature(target).parameters
    for name, default in expected.items():
        assert name in parameters, f"{where[1]} has no parameter {name!r}"
        assert parameters[name].default == default, f"{where[1]}({name}=...)"
    if where[1] == "paired_bootstrap":
        assert list(parameters)[:2] == ["statistic", "samples"]
        assert parameters["samples"].kind is inspect.Parameter.VAR_POSITIONAL


def test_documented_configuration_defaults() -> None:
    from meta_evaluator.scores import BootstrapConfig, MetricConfig
    from meta_evaluator.scores.metrics import AccuracyScorer

    boot = BootstrapConfig()
    assert (boot.n_resamples, boot.confidence_level, boot.seed) == (1000, 0.95, 0)
    metric = MetricConfig(scorer=AccuracyScorer(), task_names=["t"], aggregation_name="single")
    assert metric.annotator_aggregation == "individual_average"
    assert metric.display_name is None
    assert metric.bootstrap is None


def test_documented_scorer_names() -> None:
    from meta_evaluator.scores import metrics

    names = {
        "AccuracyScorer": "accuracy",
        "CohensKappaScorer": "cohens_kappa",
        "AltTestScorer": "alt_test",
        "TextSimilarityScorer": "text_similarity",
        "SemanticSimilarityScorer": "semantic_similarity",
        "KrippendorffAlphaScorer": "krippendorff_alpha",
        "PositionBiasScorer": "position_bias",
        "SelfConsistencyScorer": "self_consistency",
    }
    for cls, name in names.items():
        assert getattr(metrics, cls)().scorer_name == name


def test_documented_model_eval_scorers() -> None:
    """Names, the documented arguments in order, and what compare needs from each scorer."""
    from meta_evaluator.scores import metrics

    fairness = metrics.FairnessScorer(["sex"], "yes")
    assert fairness.scorer_name == "fairness"
    assert fairness.min_human_annotators == 1  # the humans' majority is the reference
    assert metrics.FairnessScorer(["sex"], "yes", gold_column="gold").min_human_annotators == 0
    ordered = {
        "FairnessScorer": ["sensitive_columns", "positive_label", "thresholds", "gold_column"],
        "StereotypeScorer": ["option_label_columns", "bias_type_column", "context_type_column"],
        "CounterfactualScorer": ["counterfactual_of_column", "group_column"],
        "MultipleChoiceScorer": ["options_column", "gold_column", "language_column"],
    }
    for cls, expected in ordered.items():
        parameters = list(inspect.signature(getattr(metrics, cls)).parameters.values())
        assert [p.name for p in parameters[: len(expected)]] == expected, cls
        # arguments beyond API.md's (FairnessScorer's agg, method) are keyword-only
        extra = parameters[len(expected) :]
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in extra), cls
    names = {
        "StereotypeScorer": "stereotype",
        "CounterfactualScorer": "counterfactual",
        "MultipleChoiceScorer": "multiple_choice",
    }
    for cls, name in names.items():
        scorer = getattr(metrics, cls)()
        assert scorer.scorer_name == name
        assert scorer.min_human_annotators == 0, cls
        assert scorer.include_invalid is True, cls
    assert fairness.include_invalid is True


def test_stats_package_exposes_every_documented_module() -> None:
    """API.md: `stats.counterfactual.change_rates(...)`, `stats.multiple_choice.rates(...)`.

    Checked in a fresh interpreter: in this process another test may have imported the
    submodules already, which sets the attributes.
    """
    import subprocess
    import sys

    code = (
        "import meta_evaluator.stats as s; "
        "assert callable(s.counterfactual.change_rates); "
        "assert callable(s.multiple_choice.rates); "
        "assert {'counterfactual', 'multiple_choice'} <= set(s.__all__)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_documented_model_eval_statistics_run() -> None:
    from meta_evaluator.stats import counterfactual, fairness, multiple_choice, stereotype

    assert stereotype.cat_scores(20, 30, 20, 10)["icat"] == 50.0
    found = fairness.group_metrics([1, 0, 1, 0], [1, 1, 1, 0], {"sex": [1, 1, 0, 0]})
    assert found["statistical_parity_difference"] == -0.5
    spread = fairness.multigroup_metrics(None, [1, 0, 1, 1], ["a", "a", "b", "b"])
    assert spread["demographic_parity_difference"] == 0.5
    assert fairness.average_across_datasets([{"m": 1.0}, {"m": None}, {"m": 0.0}]) == {"m": 0.5}
    rates = counterfactual.change_rates([True], ["H"], [True], ["L"], [1])
    assert rates["change_rate_by_group"] == {"1": 1.0}
    assert multiple_choice.rates(["correct", "invalid"])["format_error_rate"] == 0.5


def test_base_scorer_contract() -> None:
    from meta_evaluator.scores.base_scorer import BaseScorer

    assert BaseScorer.min_human_annotators == 1
    parameters = list(inspect.signature(BaseScorer.compute_score_async).parameters)
    assert parameters == [
        "self",
        "judge_data",
        "human_data",
        "task_name",
        "judge_id",
        "aggregation_mode",
    ]
    aggregate = inspect.signature(BaseScorer.aggregate_results).parameters
    assert list(aggregate)[:3] == ["self", "results", "scores_dir"]
    assert aggregate["unique_name"].default == ""


def _isort_order(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then functions, each alphabetical."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


def public_modules() -> list[str]:
    names = ["meta_evaluator"]
    for info in pkgutil.walk_packages(meta_evaluator.__path__, "meta_evaluator."):
        if not any(part.startswith("_") for part in info.name.split(".")) and info.name != (
            "meta_evaluator.cli"
        ):
            names.append(info.name)
    return names


@pytest.mark.parametrize("module_name", public_modules())
def test_all_is_sorted_and_resolves(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{module_name} needs an __all__"
    assert list(exported) == sorted(exported, key=_isort_order), f"{module_name}.__all__ order"
    for name in exported:
        assert getattr(module, name, None) is not None, f"{module_name}.{name} is missing"


def test_packages_export_what_their_modules_define() -> None:
    """A public class defined in a package's modules is re-exported by the package."""
    for package in ("meta_evaluator.data", "meta_evaluator.eval_task", "meta_evaluator.judge"):
        module = importlib.import_module(package)
        for info in pkgutil.iter_modules(module.__path__, package + "."):
            if info.name.rsplit(".", 1)[-1].startswith("_"):
                continue
            inner = importlib.import_module(info.name)
            for name in getattr(inner, "__all__", []):
                if isinstance(getattr(inner, name), type):
                    assert name in module.__all__, f"{package} does not re-export {name}"
