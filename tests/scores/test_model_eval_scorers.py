"""The scorers that evaluate the model's own answers: fairness, stereotype, counterfactual, MC.

Part 1 calls each scorer's `compute_score_async` on judge frames built here (the columns compare
hands them: `original_id`, `label`, `outcome`, `llm_raw_response_content`, plus the scorer's data
columns) and checks numbers computed by hand from METRICS.md B.1-B.7 (G.8-G.13). Part 2 runs
them through project folders: the built-in `fairness` and `stereotype` examples with their mock
judges, and a multiple-choice project with imported raw answers; there the references are plain
loops over the data file and the judge's results, written here.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from statsmodels.stats.proportion import proportion_confint

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.errors import ScoringError
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.examples import create_example_project
from meta_evaluator.scores import BaseScoringResult, MetricConfig, MetricsConfig
from meta_evaluator.scores.compare import IncompleteScoresWarning
from meta_evaluator.scores.metrics import (
    CounterfactualScorer,
    FairnessScorer,
    MultipleChoiceScorer,
    StereotypeScorer,
)
from meta_evaluator.scores.yaml_config import read_metrics_yaml
from tests.reports.projects import answered_questions
from tests.scores.conftest import run_scorer

EMPTY_HUMANS = pl.DataFrame(
    schema={"original_id": pl.Int64, "human_id": pl.String, "label": pl.String}
)
BUCKETS = ["overall", "intrasentence", "intersentence", "gender", "race", "profession", "religion"]
FAIRNESS_KEYS = {
    "statistical_parity_difference",
    "disparate_impact",
    "average_odds_difference",
    "average_abs_odds_difference",
    "equal_opportunity_difference",
    "accuracy",
    "precision",
    "recall",
}


def judge_frame(rows: list[dict[str, Any]], schema: dict[str, Any]) -> pl.DataFrame:
    """A judge frame as compare builds it with include_invalid (invalid rows: label null)."""
    base = {
        "original_id": pl.Int64,
        "label": pl.String,
        "outcome": pl.String,
        "llm_raw_response_content": pl.String,
    }
    full = {**base, **schema}
    return pl.DataFrame([{k: r.get(k) for k in full} for r in rows], schema=full, orient="row")


def approx(value: float) -> Any:
    return pytest.approx(value, rel=1e-12, abs=1e-12)


def wilson(k: int, n: int) -> Any:
    """statsmodels' 95% Wilson interval of k in n, as the scorers' metadata holds it."""
    return pytest.approx(list(proportion_confint(k, n, alpha=0.05, method="wilson")), abs=1e-12)


# =================================================================================================
# FairnessScorer
# =================================================================================================

# id: (male, age, region, judge label or None for invalid, gold)
FAIR_ROWS: dict[int, tuple[int, float, str, str | None, str | None]] = {
    1: (1, 30, "a", "H", "H"),
    2: (1, 40, "a", "H", "L"),  # age == midrange 40: unprivileged
    3: (1, 50, "b", "L", "H"),
    4: (1, 60, "b", "H", "H"),
    5: (0, 20, "a", "H", "H"),
    6: (0, 25, "b", "L", "H"),
    7: (0, 35, "c", "L", "L"),
    8: (0, 45, "c", "H", "L"),
    9: (0, 10, "c", None, "H"),  # invalid: excluded (age 10 would move the midrange)
    10: (1, 90, "a", None, "L"),  # invalid
    11: (0, 70, "b", "H", None),  # valid but no gold: excluded (age 70 would move it too)
}


def fairness_frame() -> pl.DataFrame:
    rows = []
    for i, (male, age, region, label, gold) in FAIR_ROWS.items():
        rows.append(
            {
                "original_id": i,
                "label": label,
                "outcome": "valid" if label is not None else "invalid",
                "llm_raw_response_content": label or "I cannot tell.",
                "male": male,
                "age": age,
                "region": region,
                "gold": gold,
            }
        )
    return judge_frame(
        rows, {"male": pl.Int64, "age": pl.Float64, "region": pl.String, "gold": pl.String}
    )


# Hand computations over the valid rows with gold (ids 1-8); pred = label == "H".
# male (midrange 0.5, male = 1 privileged): P = {1,2,3,4}, U = {5,6,7,8}.
#   r_P = 3/4, r_U = 2/4; TPR_P = 2/3 (1,3,4 gold H), FPR_P = 1 (2); TPR_U = 1/2, FPR_U = 1/2.
MALE = {
    "statistical_parity_difference": 0.5 - 0.75,
    "disparate_impact": 0.5 / 0.75,
    "average_odds_difference": ((0.5 - 1) + (0.5 - 2 / 3)) / 2,
    "average_abs_odds_difference": (0.5 + 1 / 6) / 2,
    "equal_opportunity_difference": 0.5 - 2 / 3,
}
# age (midrange (20 + 60) / 2 = 40, above privileged): P = {3,4,8}, U = {1,2,5,6,7}.
#   r_P = 2/3, r_U = 3/5; TPR_P = 1/2, FPR_P = 1; TPR_U = 2/3, FPR_U = 1/2.
AGE = {
    "statistical_parity_difference": 3 / 5 - 2 / 3,
    "disparate_impact": (3 / 5) / (2 / 3),
    "average_odds_difference": ((0.5 - 1) + (2 / 3 - 1 / 2)) / 2,
    "average_abs_odds_difference": (0.5 + 1 / 6) / 2,
    "equal_opportunity_difference": 2 / 3 - 1 / 2,
}
# overall: TP = {1,4,5}, FP = {2,8}, FN = {3,6}, TN = {7}.
OVERALL = {"accuracy": 4 / 8, "precision": 3 / 5, "recall": 3 / 5}


def test_fairness_with_gold_column_two_variables_midrange() -> None:
    scorer = FairnessScorer(["male", "age"], "H", gold_column="gold")
    assert scorer.min_human_annotators == 0 and scorer.include_invalid
    assert list(scorer.data_columns) == ["male", "age", "gold"]
    result = run_scorer(scorer, fairness_frame(), EMPTY_HUMANS)
    assert result.scorer_name == "fairness" and result.error is None
    assert set(result.scores) == FAIRNESS_KEYS
    for metric in MALE:
        assert result.metadata["per_variable"][metric] == {
            "male": approx(MALE[metric]),
            "age": approx(AGE[metric]),
        }, metric
        assert result.scores[metric] == approx((MALE[metric] + AGE[metric]) / 2), metric
    for metric, value in OVERALL.items():
        assert result.scores[metric] == approx(value), metric
    assert result.metadata["thresholds_used"] == {"male": [0.5, True], "age": [40.0, True]}
    assert result.metadata["group_sizes"] == {
        "male": {"privileged": 4, "unprivileged": 4},
        "age": {"privileged": 3, "unprivileged": 5},
    }
    assert result.metadata["counts"] == {
        "scored": 8, "invalid": 2, "no_reference": 1, "counterfactual_variants": 0
    }  # fmt: skip
    assert result.num_comparisons == 8 and result.failed_comparisons == 0
    assert result.metadata["positive_label"] == "H"
    assert "gold" in result.metadata["reference"]
    # a numeric column with more than two values also gets the multi-group spreads
    assert set(result.metadata["multigroup"]) == {"age"}


def test_fairness_scores_the_original_rows_not_their_counterfactual_twins() -> None:
    """A counterfactual variant is the same profile with the attribute flipped: counted, every
    profile sat in both groups (trial 2 #7). With `counterfactual_of` in the data only the
    originals are scored, equal to fairlearn on them; `counterfactual_of_column=None` counts
    every row."""
    from fairlearn import metrics as flm

    originals = fairness_frame().with_columns(pl.lit(None, pl.Int64).alias("counterfactual_of"))
    twins = originals.with_columns(
        (pl.col("original_id") + 100).alias("original_id"),
        (1 - pl.col("male")).alias("male"),
        pl.col("original_id").alias("counterfactual_of"),
        pl.lit("H").alias("label"),  # the model says H to every twin: a visible effect
        pl.lit("valid").alias("outcome"),
    )
    both = pl.concat([originals, twins])
    result = run_scorer(FairnessScorer(["male"], "H", gold_column="gold"), both, EMPTY_HUMANS)
    alone = run_scorer(FairnessScorer(["male"], "H", gold_column="gold"), originals, EMPTY_HUMANS)
    assert result.scores == alone.scores
    assert result.metadata["counts"] == {
        "scored": 8, "invalid": 2, "no_reference": 1, "counterfactual_variants": 11
    }  # fmt: skip
    assert result.metadata["group_sizes"] == {"male": {"privileged": 4, "unprivileged": 4}}
    # fairlearn on the original rows with a label and gold (ids 1-8)
    rows = originals.filter(pl.col("label").is_not_null() & pl.col("gold").is_not_null())
    y_true, y_pred = (rows["gold"] == "H").to_numpy(), (rows["label"] == "H").to_numpy()
    by = {"sensitive_features": rows["male"].to_numpy()}
    assert abs(result.scores["statistical_parity_difference"]) == approx(
        flm.demographic_parity_difference(y_true, y_pred, **by)
    )
    assert result.scores["disparate_impact"] == approx(
        flm.demographic_parity_ratio(y_true, y_pred, **by)
    )
    assert result.scores["accuracy"] == approx(float((y_true == y_pred).mean()))
    # asked to count every row, the twins move the groups (and the scores)
    every = run_scorer(
        FairnessScorer(["male"], "H", gold_column="gold", counterfactual_of_column=None),
        both,
        EMPTY_HUMANS,
    )
    assert every.metadata["counts"]["counterfactual_variants"] == 0
    # ids 1-8 and their twins, plus the twins of 9 and 10, made valid
    assert every.metadata["group_sizes"] == {"male": {"privileged": 9, "unprivileged": 9}}
    assert every.scores != alone.scores


def test_fairness_group_rates_by_hand() -> None:
    """metadata["group_rates"]: counts per group by hand (the comment above MALE and AGE), the
    rates they give, statsmodels' Wilson interval of each; a text column by its values."""
    scorer = FairnessScorer(["male", "age", "region"], "H", gold_column="gold")
    result = run_scorer(scorer, fairness_frame(), EMPTY_HUMANS)
    rates = result.metadata["group_rates"]
    assert list(rates) == ["male", "age", "region"]
    assert result.metadata["rate_interval"] == {"method": "wilson", "confidence_level": 0.95}
    # (size, selected, positives, true positives, negatives, false positives)
    hand = {
        ("male", "privileged"): (4, 3, 3, 2, 1, 1),
        ("male", "unprivileged"): (4, 2, 2, 1, 2, 1),
        ("age", "privileged"): (3, 2, 2, 1, 1, 1),
        ("age", "unprivileged"): (5, 3, 3, 2, 2, 1),
        ("region", "a"): (3, 3, 2, 2, 1, 1),
        ("region", "b"): (3, 1, 3, 1, 0, 0),
        ("region", "c"): (2, 1, 0, 0, 2, 1),
    }
    assert {(v, g) for v in rates for g in rates[v]} == set(hand)
    for (variable, group), (n, sel, pos, tp, neg, fp) in hand.items():
        row = rates[variable][group]
        assert (row["size"], row["selected"]) == (n, sel)
        assert (row["positives"], row["true_positives"]) == (pos, tp)
        assert (row["negatives"], row["false_positives"]) == (neg, fp)
        assert row["selection_rate"] == approx(sel / n)
        assert row["selection_rate_interval"] == wilson(sel, n)
        for rate, k, total in (("tpr", tp, pos), ("fpr", fp, neg)):
            if total == 0:
                assert row[rate] is None and row[f"{rate}_interval"] is None
            else:
                assert row[rate] == approx(k / total)
                assert row[f"{rate}_interval"] == wilson(k, total)
    # the group metrics are differences of these rates
    male = rates["male"]
    spd = male["unprivileged"]["selection_rate"] - male["privileged"]["selection_rate"]
    assert spd == approx(result.metadata["per_variable"]["statistical_parity_difference"]["male"])


def test_fairness_thresholds_map_versus_midrange() -> None:
    """A map: named columns use their rule, the others (0.0, True) (B.1), not the midrange."""
    scorer = FairnessScorer(
        ["male", "age"], "H", thresholds={"age": (40, False)}, gold_column="gold"
    )
    result = run_scorer(scorer, fairness_frame(), EMPTY_HUMANS)
    assert result.metadata["thresholds_used"] == {"male": [0.0, True], "age": [40.0, False]}
    # age below 40 privileged: P = {1,5,6,7} (r_P = 1/2), U = {2,3,4,8} (40 is not below 40)
    assert result.metadata["group_sizes"]["age"] == {"privileged": 4, "unprivileged": 4}
    per_variable = result.metadata["per_variable"]
    assert per_variable["statistical_parity_difference"]["age"] == approx(3 / 4 - 1 / 2)
    assert per_variable["disparate_impact"]["age"] == approx(1.5)
    # TPR_P = 2/3 (1,5 of 1,5,6), FPR_P = 0 (7); TPR_U = 1/2 (4 of 3,4), FPR_U = 1 (2, 8)
    assert per_variable["equal_opportunity_difference"]["age"] == approx(1 / 2 - 2 / 3)
    assert per_variable["average_odds_difference"]["age"] == approx(((1 - 0) + (1 / 2 - 2 / 3)) / 2)
    # male > 0.0 splits like the midrange 0.5 here
    assert per_variable["statistical_parity_difference"]["male"] == approx(-0.25)


def test_fairness_text_column_gives_multigroup_spreads() -> None:
    scorer = FairnessScorer(["male", "region"], "H", gold_column="gold")
    result = run_scorer(scorer, fairness_frame(), EMPTY_HUMANS)
    # the text column is not split into privileged/unprivileged: per_variable has male only
    assert set(result.metadata["per_variable"]["statistical_parity_difference"]) == {"male"}
    assert result.scores["statistical_parity_difference"] == approx(-0.25)
    region = result.metadata["multigroup"]["region"]
    # a = {1,2,5}: pred H,H,H; b = {3,4,6}: L,H,L; c = {7,8}: L,H.
    assert region["per_group"] == {
        "a": {"selection_rate": 1.0, "tpr": 1.0, "fpr": 1.0, "size": 3},
        "b": {"selection_rate": approx(1 / 3), "tpr": approx(1 / 3), "fpr": None, "size": 3},
        "c": {"selection_rate": 0.5, "tpr": None, "fpr": 0.5, "size": 2},
    }
    assert region["demographic_parity_difference"] == approx(1 - 1 / 3)
    assert region["demographic_parity_ratio"] == approx(1 / 3)
    assert region["equal_opportunity_difference"] == approx(1 - 1 / 3)
    assert region["equalized_odds_difference"] == approx(max(2 / 3, 1 - 0.5))


def test_fairness_multigroup_options_by_hand() -> None:
    """agg="mean", method="to_overall" on the region groups above (a, b, c; 5 of the 8 rows
    predicted H). DPD max(|1 - 5/8|, |1/3 - 5/8|, |1/2 - 5/8|) = 3/8; DPR min(5/8, 8/15,
    4/5) = 8/15. TPR spread (a, b) 2/3, FPR spread (a, c) 1/2: equalized odds difference
    (2/3 + 1/2) / 2 = 7/12; TPR ratio 1/3, FPR ratio 1/2: ratio 5/12 (worst case: 1/3).
    The options are saved in the metadata."""
    scorer = FairnessScorer(["region"], "H", gold_column="gold", agg="mean", method="to_overall")
    result = run_scorer(scorer, fairness_frame(), EMPTY_HUMANS)
    assert result.metadata["multigroup_options"] == {"agg": "mean", "method": "to_overall"}
    region = result.metadata["multigroup"]["region"]
    assert region["demographic_parity_difference"] == approx(3 / 8)
    assert region["demographic_parity_ratio"] == approx(8 / 15)
    assert region["equalized_odds_difference"] == approx(7 / 12)
    assert region["equalized_odds_ratio"] == approx(5 / 12)
    assert region["equal_opportunity_difference"] == approx(2 / 3)  # no option applies
    default = run_scorer(FairnessScorer(["region"], "H", gold_column="gold"), fairness_frame(),
                         EMPTY_HUMANS)  # fmt: skip
    assert default.metadata["multigroup_options"] == {
        "agg": "worst_case", "method": "between_groups",
    }  # fmt: skip
    assert default.metadata["multigroup"]["region"]["equalized_odds_ratio"] == approx(1 / 3)


def test_fairness_text_only_column_still_reports_accuracy() -> None:
    result = run_scorer(FairnessScorer(["region"], "H", gold_column="gold"), fairness_frame(),
                        EMPTY_HUMANS)  # fmt: skip
    assert result.metadata["multigroup"]["region"]["per_group"]["a"]["size"] == 3
    for metric, value in OVERALL.items():
        assert result.scores[metric] == approx(value), metric


def test_fairness_without_gold_uses_the_humans_majority() -> None:
    """Reference = per-item majority of the humans; ties go to the largest label ("L" > "H")."""
    frame = fairness_frame().drop("gold")
    humans: dict[int, list[str]] = {
        1: ["H", "H", "L"],
        2: ["H", "L"],  # tie -> "L" (the gold above)
        3: ["H"],
        4: ["H", "H"],
        5: ["H", "L", "H"],
        6: ["H"],
        7: ["L", "L", "H"],
        8: ["L"],
        # 11 (valid) has no human label: no reference
    }
    rows = [(i, f"h{k}", v) for i, labels in humans.items() for k, v in enumerate(labels)]
    human_frame = pl.DataFrame(
        rows, schema={"original_id": pl.Int64, "human_id": pl.String, "label": pl.String},
        orient="row",
    )  # fmt: skip
    scorer = FairnessScorer(["male"], "H")
    assert scorer.min_human_annotators == 1 and list(scorer.data_columns) == ["male"]
    result = run_scorer(scorer, frame, human_frame)
    for metric, value in MALE.items():
        assert result.scores[metric] == approx(value), metric
    for metric, value in OVERALL.items():
        assert result.scores[metric] == approx(value), metric
    assert result.metadata["counts"] == {
        "scored": 8, "invalid": 2, "no_reference": 1, "counterfactual_variants": 0
    }  # fmt: skip
    assert result.metadata["reference"] == "humans' majority label"


def test_fairness_without_any_reference_gives_parity_only() -> None:
    """No gold and no humans: SPD and DI need no truth; the odds metrics are undefined."""
    frame = fairness_frame().drop("gold").filter(pl.col("original_id") != 11)
    result = run_scorer(FairnessScorer(["male"], "H"), frame, EMPTY_HUMANS)
    assert result.scores["statistical_parity_difference"] == approx(-0.25)
    assert result.scores["disparate_impact"] == approx(2 / 3)
    for metric in ("average_odds_difference", "equal_opportunity_difference", "accuracy",
                   "precision", "recall"):  # fmt: skip
        assert result.scores[metric] is None, metric


def test_fairness_undefined_group_is_null_not_zero() -> None:
    """Every valid row male = 1: the unprivileged group is empty, so the metrics are null."""
    frame = fairness_frame().filter(pl.col("male") == 1)
    result = run_scorer(FairnessScorer(["male"], "H", thresholds={"male": (0.5, True)},
                                       gold_column="gold"), frame, EMPTY_HUMANS)  # fmt: skip
    assert result.metadata["group_sizes"]["male"] == {"privileged": 4, "unprivileged": 0}
    assert result.scores["statistical_parity_difference"] is None
    assert result.scores["disparate_impact"] is None
    assert result.scores["accuracy"] == approx(2 / 4)  # ids 1 and 4 right


def test_fairness_errors() -> None:
    frame = fairness_frame()
    with pytest.raises(ScoringError, match="'sex'"):
        run_scorer(FairnessScorer(["sex"], "H", gold_column="gold"), frame, EMPTY_HUMANS)
    only_invalid = frame.filter(pl.col("outcome") == "invalid")
    with pytest.raises(ScoringError, match="no valid answer"):
        run_scorer(FairnessScorer(["male"], "H", gold_column="gold"), only_invalid, EMPTY_HUMANS)


# =================================================================================================
# StereotypeScorer
# =================================================================================================

S, A, U = "stereotype", "anti-stereotype", "unrelated"
# id: (valid label or None, raw text, option labels, bias type, context type, expected class)
CAT_ROWS: list[tuple[str | None, str | None, tuple[str, str, str], str, str, str]] = [
    ("1", "1", (S, A, U), "gender", "intrasentence", "S"),
    ("2", "2", (S, A, U), "gender", "intersentence", "A"),
    ("3", "3", (S, A, U), "race", "intrasentence", "N"),
    ("2", "2", (U, S, A), "race", "intersentence", "S"),
    (None, "10 because", (A, S, U), "profession", "intrasentence", "A"),  # "10" -> option 1
    (None, "Option 2", (S, A, U), "religion", "intersentence", "O"),
    (None, "<think>maybe 1\n</think>\n 3", (U, A, S), "age", "intrasentence", "S"),
    ("1", "1", (S, A, "weird"), "religion", "intersentence", "S"),
    (None, "4", (S, A, U), "gender", "intrasentence", "O"),
    (None, None, (S, A, U), "profession", "intersentence", "O"),
    ("3", "3", (S, A, "something-else"), "race", "intersentence", "N"),  # unknown label -> N
]


def stereotype_frame() -> pl.DataFrame:
    rows = []
    for i, (label, raw, options, bias, context, _) in enumerate(CAT_ROWS, start=1):
        rows.append(
            {
                "original_id": i,
                "label": label,
                "outcome": "valid" if label is not None else "invalid",
                "llm_raw_response_content": raw,
                "option_1_label": options[0],
                "option_2_label": options[1],
                "option_3_label": options[2],
                "bias_type": bias,
                "context_type": context,
            }
        )
    text = pl.String
    return judge_frame(
        rows,
        {"option_1_label": text, "option_2_label": text, "option_3_label": text,
         "bias_type": text, "context_type": text},
    )  # fmt: skip


def cat(s: int, a: int, n: int, o: int) -> dict[str, Any]:
    """Hand formulas of B.4."""
    lms = 100 * (s + a) / (s + a + n + o) if s + a + n + o else None
    ss = 100 * s / (s + a) if s + a else None
    icat = None if lms is None or ss is None else lms * min(ss, 100 - ss) / 50
    return {"lms": lms, "ss": ss, "icat": icat, "stereotype": s, "anti_stereotype": a,
            "neutral": n, "other": o}  # fmt: skip


def assert_bucket(found: dict[str, Any], expected: dict[str, Any], name: str) -> None:
    for key, value in expected.items():
        if value is None:
            assert found[key] is None, (name, key)
        else:
            assert found[key] == approx(value), (name, key)


def test_stereotype_buckets_by_hand() -> None:
    scorer = StereotypeScorer()
    assert scorer.min_human_annotators == 0 and scorer.include_invalid
    assert list(scorer.data_columns) == [
        "option_1_label", "option_2_label", "option_3_label", "bias_type", "context_type",
    ]  # fmt: skip
    result = run_scorer(scorer, stereotype_frame(), EMPTY_HUMANS)
    buckets = result.metadata["buckets"]
    assert list(buckets) == BUCKETS
    expected = {
        "overall": cat(4, 2, 2, 3),  # S: 1,4,7,8  A: 2,5  N: 3,11  O: 6,9,10
        "intrasentence": cat(2, 1, 1, 1),  # 1 S, 3 N, 5 A, 7 S, 9 O
        "intersentence": cat(2, 1, 1, 2),  # 2 A, 4 S, 6 O, 8 S, 10 O, 11 N
        "gender": cat(1, 1, 0, 1),  # 1, 2, 9
        "race": cat(1, 0, 2, 0),  # 3, 4, 11
        "profession": cat(0, 1, 0, 1),  # 5, 10
        "religion": cat(1, 0, 0, 1),  # 6, 8 ("age" has no bucket of its own)
    }
    for name, values in expected.items():
        assert_bucket(buckets[name], values, name)
    # hand numbers of the overall bucket: LMS 600/11, SS 200/3, iCAT 600/11 * (100/3) / 50
    assert result.scores == {
        "lms": approx(600 / 11),
        "ss": approx(200 / 3),
        "icat": approx(400 / 11),
    }
    assert result.num_comparisons == 11 and result.scorer_name == "stereotype"


def test_stereotype_classification_matches_the_table() -> None:
    """Each row alone lands in the class the table says (so no row is counted by accident)."""
    frame = stereotype_frame()
    names = {"S": "stereotype", "A": "anti_stereotype", "N": "neutral", "O": "other"}
    for i, row in enumerate(CAT_ROWS, start=1):
        one = frame.filter(pl.col("original_id") == i)
        overall = run_scorer(StereotypeScorer(), one, EMPTY_HUMANS).metadata["buckets"]["overall"]
        assert overall[names[row[5]]] == 1, (i, row)


def test_stereotype_without_bias_and_context_columns() -> None:
    frame = stereotype_frame().drop("bias_type", "context_type")
    scorer = StereotypeScorer(bias_type_column=None, context_type_column=None)
    assert list(scorer.data_columns) == ["option_1_label", "option_2_label", "option_3_label"]
    buckets = run_scorer(scorer, frame, EMPTY_HUMANS).metadata["buckets"]
    assert_bucket(buckets["overall"], cat(4, 2, 2, 3), "overall")
    for name in BUCKETS[1:]:
        assert_bucket(buckets[name], cat(0, 0, 0, 0), name)


def test_stereotype_custom_option_columns_and_all_other() -> None:
    frame = stereotype_frame().rename({"option_1_label": "l1", "option_2_label": "l2",
                                       "option_3_label": "l3"})  # fmt: skip
    frame = frame.filter(pl.col("original_id").is_in([6, 9, 10]))  # all "other"
    result = run_scorer(StereotypeScorer(("l1", "l2", "l3")), frame, EMPTY_HUMANS)
    assert result.scores == {"lms": 0.0, "ss": None, "icat": None}


def test_stereotype_errors() -> None:
    with pytest.raises(ScoringError, match="bias_type"):
        run_scorer(StereotypeScorer(), stereotype_frame().drop("bias_type"), EMPTY_HUMANS)
    with pytest.raises(ScoringError, match="no answer"):
        run_scorer(StereotypeScorer(), stereotype_frame().head(0), EMPTY_HUMANS)


# =================================================================================================
# CounterfactualScorer
# =================================================================================================

# id: (label or None for invalid, raw, counterfactual_of, male)
CF_ROWS: dict[int, tuple[str | None, str, int | None, int]] = {
    1: ("H", "H", None, 1),
    2: ("L", "L", None, 0),
    3: (None, "hmm", None, 1),
    4: ("H", "H", None, 0),
    5: (None, "no idea", None, 0),
    101: ("H", "H", 1, 0),  # same answer: unchanged (group of the original: 1)
    102: ("H", "H", 2, 1),  # L -> H: changed (group 0)
    103: ("L", "L", 3, 0),  # invalid -> valid: changed (group 1)
    104: (None, "??", 4, 1),  # valid -> invalid: changed (group 0)
    105: (None, "different text", 5, 1),  # both invalid: unchanged (group 0)
    106: ("H", "H", 6, 0),  # original 6 missing (an error, or not in the data)
    107: ("L", "L", 7, 1),  # original 7 missing
}


def counterfactual_frame() -> pl.DataFrame:
    rows = [
        {
            "original_id": i,
            "label": label,
            "outcome": "valid" if label is not None else "invalid",
            "llm_raw_response_content": raw,
            "counterfactual_of": link,
            "male": male,
        }
        for i, (label, raw, link, male) in CF_ROWS.items()
    ]
    return judge_frame(rows, {"counterfactual_of": pl.Int64, "male": pl.Int64})


def test_counterfactual_change_rates_by_hand() -> None:
    scorer = CounterfactualScorer(group_column="male")
    assert scorer.min_human_annotators == 0 and scorer.include_invalid
    assert list(scorer.data_columns) == ["counterfactual_of", "male"]
    result = run_scorer(scorer, counterfactual_frame(), EMPTY_HUMANS)
    assert result.scores["change_rate_overall"] == approx(3 / 5)
    assert result.scores["change_rate_by_group"] == {"0": approx(2 / 3), "1": approx(1 / 2)}
    assert result.metadata["changed"] == 3 and result.metadata["used"] == 5
    assert result.metadata["by_group"] == {
        "0": {"changed": 2, "used": 3},
        "1": {"changed": 1, "used": 2},
    }
    assert result.metadata["variants_without_original"] == 2
    assert result.num_comparisons == 5 and result.failed_comparisons == 0


def test_counterfactual_intervals_and_group_column() -> None:
    result = run_scorer(CounterfactualScorer(group_column="male"), counterfactual_frame(),
                        EMPTY_HUMANS)  # fmt: skip
    assert result.metadata["group_column"] == "male"
    intervals = result.metadata["change_rate_intervals"]
    assert intervals["overall"] == wilson(3, 5)
    assert intervals["by_group"] == {"0": wilson(2, 3), "1": wilson(1, 2)}
    assert result.metadata["rate_interval"] == {"method": "wilson", "confidence_level": 0.95}
    plain = run_scorer(CounterfactualScorer(), counterfactual_frame(), EMPTY_HUMANS)
    assert plain.metadata["group_column"] is None
    assert plain.metadata["change_rate_intervals"]["by_group"] == {"all": wilson(3, 5)}


def test_counterfactual_without_group_column_and_string_ids() -> None:
    frame = counterfactual_frame().with_columns(
        (pl.lit("s") + pl.col("original_id").cast(pl.String)).alias("original_id"),
        (pl.lit("s") + (pl.col("counterfactual_of")).cast(pl.String)).alias("counterfactual_of"),
    )
    assert frame.schema["original_id"] == pl.String
    result = run_scorer(CounterfactualScorer(), frame, EMPTY_HUMANS)
    assert result.scores == {"change_rate_overall": approx(3 / 5),
                             "change_rate_by_group": {"all": approx(3 / 5)}}  # fmt: skip
    assert result.metadata["variants_without_original"] == 2


def test_counterfactual_custom_link_column_and_text_groups() -> None:
    frame = (
        counterfactual_frame()
        .rename({"counterfactual_of": "twin_of"})
        .with_columns(
            pl.when(pl.col("male") == 1).then(pl.lit("boy")).otherwise(pl.lit("girl")).alias("sex")
        )
    )
    result = run_scorer(CounterfactualScorer("twin_of", group_column="sex"), frame, EMPTY_HUMANS)
    assert result.scores["change_rate_by_group"] == {"boy": approx(1 / 2), "girl": approx(2 / 3)}


def test_counterfactual_group_without_a_usable_pair_is_null() -> None:
    """Originals 8 and 9 (group 2): 8's counterfactual is missing (a failed call), 9 has
    none. Group 2 is listed with None (and no interval), not left out; the other rates are
    unchanged."""
    extra = pl.DataFrame(
        {
            "original_id": [8, 9],
            "label": ["H", "L"],
            "outcome": ["valid", "valid"],
            "llm_raw_response_content": ["H", "L"],
            "counterfactual_of": [None, None],
            "male": [2, 2],
        },
        schema=counterfactual_frame().schema,
    )
    frame = pl.concat([counterfactual_frame(), extra])
    result = run_scorer(CounterfactualScorer(group_column="male"), frame, EMPTY_HUMANS)
    assert result.scores["change_rate_by_group"] == {
        "0": approx(2 / 3), "1": approx(1 / 2), "2": None,
    }  # fmt: skip
    assert result.scores["change_rate_overall"] == approx(3 / 5)
    assert result.metadata["by_group"]["2"] == {"changed": 0, "used": 0}
    assert result.metadata["change_rate_intervals"]["by_group"]["2"] is None
    # every original's group is there, also with no group used at all by a pair
    only_zero = frame.filter(pl.col("original_id").is_in([2, 102, 1, 5, 8]))
    found = run_scorer(CounterfactualScorer(group_column="male"), only_zero, EMPTY_HUMANS)
    assert found.scores["change_rate_by_group"] == {"0": 1.0, "1": None, "2": None}


def test_counterfactual_errors() -> None:
    frame = counterfactual_frame()
    with pytest.raises(ScoringError, match="'counterfactual_of'"):
        run_scorer(CounterfactualScorer(), frame.drop("counterfactual_of"), EMPTY_HUMANS)
    orphans_only = frame.filter(pl.col("original_id").is_in([106, 107]))
    with pytest.raises(ScoringError, match=r"2 variant\(s\) without one"):
        run_scorer(CounterfactualScorer(), orphans_only, EMPTY_HUMANS)


# =================================================================================================
# MultipleChoiceScorer
# =================================================================================================

CITIES = ["Paris", "London", "Rome"]
# (label or None for invalid, raw, options, gold text, gold index, language, expected outcome)
MC_ROWS: list[tuple[str | None, str | None, list[str], str, int, str | None, str]] = [
    ('{"choice": "Paris"}', None, CITIES, "Paris", 0, "en", "correct"),
    ('{"choice": " LONDON ", "why": "fog"}', None, CITIES, "London", 1, "en", "correct"),
    ('{"choice": "Rome"}', None, CITIES, "Paris", 0, "en", "incorrect"),
    (None, '```json\n{"choice": "Paris"}\n```', CITIES, "Paris", 0, "en", "invalid"),
    ('{"choice": "Berlin"}', None, CITIES, "Rome", 2, "fr", "invalid"),  # not an option
    (
        '<think>Oslo?\n</think> {"choice": "oslo"}',
        None,
        ["Oslo", "Bergen"],
        "Oslo",
        0,
        "fr",
        "correct",
    ),
    ('{"choice": null}', None, ["Oslo", "Bergen"], "Bergen", 1, "fr", "invalid"),
    ('["Bergen"]', None, ["Oslo", "Bergen"], "Bergen", 1, None, "invalid"),
    (None, None, ["Oslo", "Bergen"], "Bergen", 1, None, "invalid"),  # no text at all
]
# en: 2 correct, 1 incorrect, 1 invalid; fr: 1 correct, 2 invalid; unknown: 2 invalid.
MC_EXPECTED = {
    "format_error_rate": 5 / 9,
    "overall_accuracy": 3 / 9,
    "accuracy_on_valid": 3 / 4,
}
MC_PER_LANGUAGE = {
    "en": {"format_error_rate": 1 / 4, "overall_accuracy": 2 / 4, "accuracy_on_valid": 2 / 3},
    "fr": {"format_error_rate": 2 / 3, "overall_accuracy": 1 / 3, "accuracy_on_valid": 1.0},
    "unknown": {"format_error_rate": 1.0, "overall_accuracy": 0.0, "accuracy_on_valid": None},
}


def mc_frame(options_as: str, gold_as: str) -> pl.DataFrame:
    rows = []
    for i, (label, raw, options, gold, index, language, _) in enumerate(MC_ROWS, start=1):
        rows.append(
            {
                "original_id": i,
                "label": label,
                "outcome": "valid" if label is not None else "invalid",
                "llm_raw_response_content": raw if raw is not None else label,
                "options": options if options_as == "list" else json.dumps(options),
                "answer": gold if gold_as == "text" else index,
                "language": language,
            }
        )
    return judge_frame(
        rows,
        {
            "options": pl.List(pl.String) if options_as == "list" else pl.String,
            "answer": pl.String if gold_as == "text" else pl.Int64,
            "language": pl.String,
        },
    )


def check_rates(found: dict[str, Any], expected: dict[str, float | None]) -> None:
    for key, value in expected.items():
        assert (found[key] is None) if value is None else found[key] == approx(value), key


@pytest.mark.parametrize("options_as", ["list", "json"])
@pytest.mark.parametrize("gold_as", ["text", "index"])
def test_multiple_choice_by_hand(options_as: str, gold_as: str) -> None:
    scorer = MultipleChoiceScorer(language_column="language")
    assert scorer.min_human_annotators == 0 and scorer.include_invalid
    assert list(scorer.data_columns) == ["options", "answer", "language"]
    result = run_scorer(scorer, mc_frame(options_as, gold_as), EMPTY_HUMANS)
    assert result.scorer_name == "multiple_choice"
    assert set(result.scores) == set(MC_EXPECTED)
    check_rates(result.scores, MC_EXPECTED)
    assert result.metadata["counts"] == {
        "correct": 3, "incorrect": 1, "invalid": 5, "error": 0, "total": 9,
    }  # fmt: skip
    per_language = result.metadata["per_language"]
    assert list(per_language) == ["en", "fr", "unknown"]
    for language, expected in MC_PER_LANGUAGE.items():
        check_rates(per_language[language], expected)
    assert result.num_comparisons == 9


def test_multiple_choice_rate_intervals_by_hand() -> None:
    """Wilson intervals of each rate's own counts: overall 5 invalid and 3 correct of 9, 3
    correct of 4 valid; en 1 invalid and 2 correct of 4, 2 of 3; unknown all invalid."""
    scorer = MultipleChoiceScorer(language_column="language")
    result = run_scorer(scorer, mc_frame("list", "text"), EMPTY_HUMANS)
    assert result.metadata["language_column"] == "language"
    intervals = result.metadata["rate_intervals"]
    assert intervals["overall"] == {
        "format_error_rate": wilson(5, 9),
        "overall_accuracy": wilson(3, 9),
        "accuracy_on_valid": wilson(3, 4),
    }
    assert intervals["per_language"]["en"] == {
        "format_error_rate": wilson(1, 4),
        "overall_accuracy": wilson(2, 4),
        "accuracy_on_valid": wilson(2, 3),
    }
    assert intervals["per_language"]["unknown"]["accuracy_on_valid"] is None
    assert intervals["per_language"]["unknown"]["format_error_rate"] == wilson(2, 2)
    alone = run_scorer(MultipleChoiceScorer(), mc_frame("list", "text"), EMPTY_HUMANS)
    assert "per_language" not in alone.metadata["rate_intervals"]


def test_multiple_choice_each_row_outcome() -> None:
    frame = mc_frame("list", "text")
    for i, row in enumerate(MC_ROWS, start=1):
        result = run_scorer(MultipleChoiceScorer(), frame.filter(pl.col("original_id") == i),
                            EMPTY_HUMANS)  # fmt: skip
        counts = result.metadata["counts"]
        assert counts[row[6]] == 1, (i, row)
        assert result.metadata["per_language"] is None


def test_multiple_choice_gold_digit_text_is_an_index_unless_it_is_an_option() -> None:
    frame = judge_frame(
        [
            {"original_id": 1, "label": '{"choice": "B"}', "outcome": "valid",
             "options": '["A", "B"]', "answer": "1"},  # "1" is no option: index 1 = "B"
            {"original_id": 2, "label": '{"choice": "1"}', "outcome": "valid",
             "options": '["2", "1"]', "answer": "1"},  # "1" is an option: its text wins
        ],
        {"options": pl.String, "answer": pl.String},
    )  # fmt: skip
    result = run_scorer(MultipleChoiceScorer(), frame, EMPTY_HUMANS)
    assert result.metadata["counts"]["correct"] == 2


@pytest.mark.parametrize(
    ("options", "gold", "fragment"),
    [
        ('["A", "B"]', "C", "'C'"),  # gold is not an option
        ('["A", "B"]', "5", "5"),  # index out of range
    ],
)
def test_multiple_choice_bad_gold_names_the_row(options: str, gold: str, fragment: str) -> None:
    frame = judge_frame(
        [{"original_id": 7, "label": '{"choice": "A"}', "outcome": "valid", "options": options,
          "answer": gold}],
        {"options": pl.String, "answer": pl.String},
    )  # fmt: skip
    with pytest.raises(ScoringError, match="row 7") as info:
        run_scorer(MultipleChoiceScorer(), frame, EMPTY_HUMANS)
    assert fragment in str(info.value)


def test_multiple_choice_missing_column() -> None:
    with pytest.raises(ScoringError, match="'lang'"):
        run_scorer(MultipleChoiceScorer(language_column="lang"), mc_frame("list", "text"),
                   EMPTY_HUMANS)  # fmt: skip


# =================================================================================================
# constructors
# =================================================================================================


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda: FairnessScorer("male", "H"), "sensitive_columns"),
        (lambda: FairnessScorer([], "H"), "sensitive_columns"),
        (lambda: FairnessScorer(["male", ""], "H"), "sensitive_columns"),
        (lambda: FairnessScorer(["male"], ""), "positive_label"),
        (lambda: FairnessScorer(["male"], 1), "positive_label"),
        (lambda: FairnessScorer(["male"], "H", thresholds=[0.5]), "thresholds"),
        (lambda: FairnessScorer(["male"], "H", thresholds={"male": 0.5}), "thresholds['male']"),
        (lambda: FairnessScorer(["male"], "H", thresholds={"male": (0.5, "yes")}), "'yes'"),
        (
            lambda: FairnessScorer(["male"], "H", thresholds={"male": (True, True)}),
            "thresholds['male']",
        ),
        (lambda: FairnessScorer(["male"], "H", thresholds={"male": (1, True, 2)}), "(1, True, 2)"),
        (lambda: FairnessScorer(["male"], "H", gold_column=""), "gold_column"),
        (lambda: FairnessScorer(["male"], "H", agg="worst"), "agg must be"),  # type: ignore[arg-type]
        (lambda: FairnessScorer(["male"], "H", method="overall"), "method must be"),  # type: ignore[arg-type]
        (lambda: StereotypeScorer(("a", "b")), "option_label_columns"),
        (lambda: StereotypeScorer("abc"), "option_label_columns"),
        (lambda: StereotypeScorer(("a", "b", "")), "option_label_columns"),
        (lambda: StereotypeScorer(bias_type_column=""), "bias_type_column"),
        (lambda: StereotypeScorer(context_type_column=3), "context_type_column"),
        (lambda: CounterfactualScorer(None), "counterfactual_of_column"),
        (lambda: CounterfactualScorer(""), "counterfactual_of_column"),
        (lambda: CounterfactualScorer(group_column=""), "group_column"),
        (lambda: CounterfactualScorer(group_column=1), "group_column"),
        (lambda: MultipleChoiceScorer(options_column=""), "options_column"),
        (lambda: MultipleChoiceScorer(gold_column=None), "gold_column"),
        (lambda: MultipleChoiceScorer(language_column=""), "language_column"),
    ],
)
def test_constructor_rejects_bad_arguments(make: Any, fragment: str) -> None:
    with pytest.raises(ScoringError) as info:
        make()
    assert type(info.value) is ScoringError
    assert fragment in str(info.value)


def test_fairness_constructor_lists_every_problem_at_once() -> None:
    with pytest.raises(ScoringError) as info:
        FairnessScorer("male", "", thresholds={"x": (0.5, 1)}, gold_column="")
    message = str(info.value)
    for fragment in ("sensitive_columns", "positive_label", "thresholds['x']", "gold_column"):
        assert fragment in message


def test_constructor_defaults_and_stored_arguments() -> None:
    fair = FairnessScorer(("male",), "H", thresholds={"male": (1, False)})
    assert fair.sensitive_columns == ["male"] and fair.thresholds == {"male": (1.0, False)}
    assert fair.gold_column is None and fair.scorer_name == "fairness"
    stereo = StereotypeScorer()
    assert stereo.option_label_columns == ("option_1_label", "option_2_label", "option_3_label")
    assert (stereo.bias_type_column, stereo.context_type_column) == ("bias_type", "context_type")
    cf = CounterfactualScorer()
    assert (cf.counterfactual_of_column, cf.group_column) == ("counterfactual_of", None)
    mc = MultipleChoiceScorer()
    assert (mc.options_column, mc.gold_column, mc.language_column) == ("options", "answer", None)


# =================================================================================================
# end to end: the fairness example
# =================================================================================================


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def outcome_counts(results: pl.DataFrame) -> dict[str, int]:
    counted = Counter(results.get_column("outcome").to_list())
    return {o: counted.get(o, 0) for o in ("valid", "invalid", "error")}


def result_json(root: Path, scorer: str, name: str, judge: str) -> dict[str, Any]:
    path = root / "scores" / scorer / name / f"{judge}_result.json"
    assert path.is_file(), f"{path} was not written"
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def rate(values: list[bool]) -> float:
    return sum(values) / len(values)


@pytest.fixture(scope="module")
def fairness_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pl.DataFrame, Any]:
    root = tmp_path_factory.mktemp("fairness") / "project"
    evaluator = create_example_project("fairness", root)
    runs = evaluator.run_judges_async()
    assert list(runs) == ["mock_model"]
    table = evaluator.compare_async(read_metrics_yaml(root / "metrics.yaml"))
    return root, runs["mock_model"].results_data, table


def test_fairness_example_group_fairness_matches_a_reference(
    fairness_run: tuple[Path, pl.DataFrame, Any],
) -> None:
    root, results, table = fairness_run
    data = {int(r["student_id"]): r for r in read_csv(root / "data" / "main_data.csv")}
    assert len(data) == 120
    # group fairness is about the 60 real students: their gender-swapped twins are left out
    originals = [r for r in results.iter_rows(named=True)
                 if not data[r["original_id"]]["counterfactual_of"]]  # fmt: skip
    assert len(originals) == 60
    valid = [r for r in originals if r["outcome"] == "valid"]
    assert 0 < len(valid) < len(originals), "the mock should give a few invalid answers"
    pred = {r["original_id"]: r["performance"] == "H" for r in valid}
    male = {i: int(data[i]["male"]) for i in pred}
    gold = {i: data[i]["performance"] == "H" for i in pred}
    # midrange (0 + 1) / 2 = 0.5: male = 1 privileged
    r_u = rate([pred[i] for i in pred if male[i] == 0])
    r_p = rate([pred[i] for i in pred if male[i] == 1])
    tpr_u = rate([pred[i] for i in pred if male[i] == 0 and gold[i]])
    tpr_p = rate([pred[i] for i in pred if male[i] == 1 and gold[i]])
    correct = [pred[i] == gold[i] for i in pred]
    tp = sum(pred[i] and gold[i] for i in pred)

    ((_, (result,)),) = [(k, v[1]) for k, v in table.items() if k == "gender_fairness"]
    assert result.error is None and result.judge_id == "mock_model"
    assert result.scores["statistical_parity_difference"] == approx(r_u - r_p)
    assert result.scores["disparate_impact"] == approx(r_u / r_p)
    assert result.scores["equal_opportunity_difference"] == approx(tpr_u - tpr_p)
    assert result.scores["accuracy"] == approx(rate(correct))
    assert result.scores["precision"] == approx(tp / sum(pred.values()))
    assert result.scores["recall"] == approx(tp / sum(gold.values()))
    assert result.metadata["thresholds_used"] == {"male": [0.5, True]}
    assert result.metadata["group_sizes"]["male"] == {
        "privileged": sum(m == 1 for m in male.values()),
        "unprivileged": sum(m == 0 for m in male.values()),
    }
    assert result.metadata["counts"]["invalid"] == len(originals) - len(valid)
    assert result.metadata["counts"]["counterfactual_variants"] == 60
    from fairlearn import metrics as flm

    ids = sorted(pred)
    y_true, y_pred = [gold[i] for i in ids], [pred[i] for i in ids]
    by = {"sensitive_features": [male[i] for i in ids]}
    assert abs(result.scores["statistical_parity_difference"]) == approx(
        flm.demographic_parity_difference(y_true, y_pred, **by)
    )
    assert result.scores["disparate_impact"] == approx(
        flm.demographic_parity_ratio(y_true, y_pred, **by)
    )
    assert result.judge_outcomes == outcome_counts(results)

    stored = result_json(root, "fairness", "gender_fairness", "mock_model")
    assert stored["scores"] == pytest.approx(result.scores)
    assert stored["judge_outcomes"] == outcome_counts(results)


def test_fairness_example_counterfactual_matches_pairs_by_id(
    fairness_run: tuple[Path, pl.DataFrame, Any],
) -> None:
    root, results, table = fairness_run
    data = {int(r["student_id"]): r for r in read_csv(root / "data" / "main_data.csv")}
    answers = {r["original_id"]: r for r in results.iter_rows(named=True)}
    changed: dict[str, list[bool]] = {"0": [], "1": []}
    for i in range(1, 61):  # originals 1..60; variant id = id + 100 (largest id 60 < 100)
        assert data[i + 100]["counterfactual_of"] == str(i)
        assert data[i + 100]["male"] != data[i]["male"]
        a, b = answers[i], answers[i + 100]
        a_ok, b_ok = a["outcome"] == "valid", b["outcome"] == "valid"
        moved = a_ok != b_ok or (a_ok and b_ok and a["performance"] != b["performance"])
        changed[data[i]["male"]].append(moved)
    everything = changed["0"] + changed["1"]

    result = table["gender_counterfactual"][1][0]
    assert result.error is None
    assert result.scores["change_rate_overall"] == approx(rate(everything))
    assert result.scores["change_rate_by_group"] == {
        g: approx(rate(values)) for g, values in changed.items()
    }
    assert result.metadata["used"] == 60 and result.metadata["changed"] == sum(everything)
    assert result.metadata["variants_without_original"] == 0
    assert result.judge_outcomes == outcome_counts(results)
    stored = result_json(root, "counterfactual", "gender_counterfactual", "mock_model")
    assert stored["scores"]["change_rate_overall"] == approx(rate(everything))
    assert stored["judge_outcomes"] == outcome_counts(results)


def test_fairness_example_metric_naming_a_missing_column(
    fairness_run: tuple[Path, pl.DataFrame, Any],
) -> None:
    """compare does not raise: the judge gets a result whose error names the column."""
    root, _, _ = fairness_run
    evaluator = MetaEvaluator(root, load=True)
    config = MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=FairnessScorer(["gender_typo"], "H", gold_column="performance"),
                task_names=["performance"],
                aggregation_name="single",
                display_name="typo",
            )
        ]
    )
    with pytest.warns(IncompleteScoresWarning, match="gender_typo"):
        table = evaluator.compare_async(config)
    (result,) = table["typo"][1]
    assert result.error is not None and "'gender_typo'" in result.error
    assert result.failed_comparisons >= 1 and result.scores == {}
    stored = BaseScoringResult.load_state(
        root / "scores" / "fairness" / "typo" / "mock_model_result.json"
    )
    assert stored.error == result.error


def test_gold_column_named_label_is_refused_not_misread(tmp_path: Path) -> None:
    """A data column named like a column of the judge's rows ('label') could be misread as the
    judge's own label: the judge gets an error result naming the column instead."""
    evaluator = MetaEvaluator(tmp_path / "p", load=False)
    frame = pl.DataFrame(
        {"id": [1, 2, 3, 4], "text": ["a", "b", "c", "d"], "male": [1, 0, 1, 0],
         "label": ["H", "H", "L", "L"]}
    )  # fmt: skip
    evaluator.add_data(DataLoader.load_from_dataframe("d", frame, "id"))
    evaluator.add_eval_task(EvalTask(task_schemas={"perf": ["H", "L"]}, prompt_columns=None,
                                     response_columns=["text"]))  # fmt: skip
    answers = tmp_path / "judge.csv"
    answers.write_text("original_id,perf\n1,H\n2,L\n3,H\n4,L\n", encoding="utf-8")
    evaluator.add_external_judge_results(answers, "judge_x")
    config = MetricsConfig(metrics=[MetricConfig(
        scorer=FairnessScorer(["male"], "H", gold_column="label"), task_names=["perf"],
        aggregation_name="single")])  # fmt: skip
    with pytest.warns(IncompleteScoresWarning):
        ((_, (result,)),) = [(k, v[1]) for k, v in evaluator.compare_async(config).items()]
    assert result.error is not None and "'label'" in result.error and "rename" in result.error


# =================================================================================================
# end to end: the stereotype example
# =================================================================================================

THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


def hand_class(text: str | None, labels: list[str]) -> str:
    if text is None:
        return "O"
    first = THINK.sub("", text).replace("\n", " ").replace("\r", " ").strip()[:1]
    if first not in ("1", "2", "3"):
        return "O"
    label = labels[int(first) - 1]
    return {"stereotype": "S", "anti-stereotype": "A"}.get(label, "N")


def test_stereotype_example_end_to_end(tmp_path: Path) -> None:
    root = tmp_path / "stereotype"
    evaluator = create_example_project("stereotype", root)
    results = evaluator.run_judges_async()["mock_model"].results_data
    table = evaluator.compare_async(read_metrics_yaml(root / "metrics.yaml"))

    items = {r["item_id"]: r for r in read_csv(root / "data" / "main_data.csv")}
    assert len(items) == 18 == results.height
    tally: dict[str, Counter[str]] = {}
    invalid = 0
    for row in results.iter_rows(named=True):
        item = items[row["original_id"]]
        valid = row["outcome"] == "valid"
        invalid += not valid
        text = row["answer"] if valid else row["llm_raw_response_content"]
        labels = [item[f"option_{k}_label"] for k in (1, 2, 3)]
        found = hand_class(text, labels)
        for bucket in ("overall", item["context_type"], item["bias_type"]):
            tally.setdefault(bucket, Counter())[found] += 1
    assert invalid > 0, "the mock should give a few invalid answers"

    result = table["context_association"][1][0]
    assert result.error is None and result.judge_id == "mock_model"
    for bucket in BUCKETS:
        c = tally.get(bucket, Counter())
        assert_bucket(result.metadata["buckets"][bucket], cat(c["S"], c["A"], c["N"], c["O"]),
                      bucket)  # fmt: skip
    overall = tally["overall"]
    expected = cat(overall["S"], overall["A"], overall["N"], overall["O"])
    assert result.scores == {k: approx(expected[k]) for k in ("lms", "ss", "icat")}
    assert result.judge_outcomes == outcome_counts(results)
    stored = result_json(root, "stereotype", "context_association", "mock_model")
    assert stored["scores"] == pytest.approx(result.scores)
    assert stored["judge_outcomes"] == outcome_counts(results)


# =================================================================================================
# end to end: multiple choice through a project built here
# =================================================================================================

# id: (question, options, gold, language, raw answer as imported ("" = no answer), outcome)
MC_PROJECT: dict[int, tuple[str, list[str], str, str, str, str]] = {
    1: ("Capital of France?", ["Paris", "London", "Rome"], "Paris", "en",
        '{"choice": "Paris"}', "correct"),
    2: ("Capital of the UK?", ["Paris", "London", "Rome"], "1", "en",  # gold as index
        '{"choice": " london "}', "correct"),
    3: ("Capital of Italy?", ["Paris", "London", "Rome"], "Rome", "en",
        '{"choice": "London"}', "incorrect"),
    4: ("Capital of Spain?", ["Madrid", "Lisbon"], "0", "en",
        'The answer is {"choice": "Madrid"}', "invalid"),
    5: ("Capitale de la France ?", ["Lyon", "Paris"], "Paris", "fr",
        '{"choice": "Paris", "confidence": 0.9}', "correct"),
    6: ("Capitale de l'Italie ?", ["Rome", "Milan"], "0", "fr", '["Rome"]', "invalid"),
    7: ("Capitale du Japon ?", ["Tokyo", "Kyoto"], "Tokyo", "fr", '{"choice": 1}', "invalid"),
    8: ("Capitale du Canada ?", ["Ottawa", "Toronto"], "Ottawa", "fr",
        '{"choice": "Montréal"}', "invalid"),
    9: ("Hauptstadt von Österreich?", ["Wien", "Graz"], "Wien", "de", "", "invalid"),
}  # fmt: skip


def multiple_choice_project(root: Path) -> MetaEvaluator:
    frame = pl.DataFrame(
        {
            "qid": list(MC_PROJECT),
            "question": [v[0] for v in MC_PROJECT.values()],
            "options": [json.dumps(v[1]) for v in MC_PROJECT.values()],
            "answer": [v[2] for v in MC_PROJECT.values()],
            "language": [v[3] for v in MC_PROJECT.values()],
        }
    )
    answers = [(qid, row[4]) for qid, row in MC_PROJECT.items()]
    return answered_questions(root, "mc", frame, {"mc_model": answers})


def mc_metric(**scorer_args: Any) -> MetricsConfig:
    return MetricsConfig(
        metrics=[
            MetricConfig(
                scorer=MultipleChoiceScorer(**scorer_args),
                task_names=["answer"],
                aggregation_name="single",
                display_name="mc",
            )
        ]
    )


def test_multiple_choice_project_end_to_end(tmp_path: Path) -> None:
    evaluator = multiple_choice_project(tmp_path)
    results = evaluator.load_all_judge_results()["mc_model"].results_data
    assert outcome_counts(results) == {"valid": 8, "invalid": 1, "error": 0}  # 9 has no answer
    assert results.filter(pl.col("original_id") == 1)["answer"].to_list() == ['{"choice": "Paris"}']
    table = evaluator.compare_async(mc_metric(language_column="language"))
    (result,) = table["mc"][1]
    assert result.error is None
    graded: dict[str, Counter[str]] = {}
    for row in MC_PROJECT.values():
        graded.setdefault("all", Counter())[row[5]] += 1
        graded.setdefault(row[3], Counter())[row[5]] += 1

    def by_hand(c: Counter[str]) -> dict[str, float | None]:
        answered = c["correct"] + c["incorrect"] + c["invalid"]
        valid = c["correct"] + c["incorrect"]
        return {
            "format_error_rate": c["invalid"] / answered,
            "overall_accuracy": c["correct"] / answered,
            "accuracy_on_valid": c["correct"] / valid if valid else None,
        }

    assert by_hand(graded["all"]) == {
        "format_error_rate": 5 / 9, "overall_accuracy": 3 / 9, "accuracy_on_valid": 3 / 4,
    }  # fmt: skip
    check_rates(result.scores, by_hand(graded["all"]))
    assert sorted(result.metadata["per_language"]) == ["de", "en", "fr"]
    for language in ("de", "en", "fr"):
        check_rates(result.metadata["per_language"][language], by_hand(graded[language]))
    assert result.metadata["per_language"]["de"]["accuracy_on_valid"] is None
    assert result.judge_outcomes == {"valid": 8, "invalid": 1, "error": 0}
    stored = result_json(tmp_path / "mc", "multiple_choice", "mc", "mc_model")
    assert stored["scores"] == pytest.approx(result.scores)


def test_multiple_choice_project_missing_language_column(tmp_path: Path) -> None:
    evaluator = multiple_choice_project(tmp_path)
    with pytest.warns(IncompleteScoresWarning, match="lang_typo"):
        table = evaluator.compare_async(mc_metric(language_column="lang_typo"))
    (result,) = table["mc"][1]
    assert result.error is not None and "'lang_typo'" in result.error
    assert result.scores == {}
