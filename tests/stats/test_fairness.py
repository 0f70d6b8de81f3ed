"""`meta_evaluator.stats.fairness` against references written here with plain Python loops from
METRICS.md B.1-B.3, B.8 and E (aif360's `ClassificationMetric` formulas per variable), against
fairlearn (`fairlearn.metrics`) where its conventions agree with ours, and against hand-computed
tables."""

from __future__ import annotations

import doctest
import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest
from fairlearn import metrics as flm
from sklearn.metrics import confusion_matrix
from statsmodels.stats.proportion import proportion_confint

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats import fairness
from meta_evaluator.stats.fairness import (
    FAIRNESS_METRICS,
    average_across_datasets,
    group_metrics,
    group_rates,
    multigroup_metrics,
    privileged_mask,
)

TOL = 1e-12
SEEDS = range(40)
NAN = float("nan")
INF = float("inf")


# --------------------------------------------------------------------------- references --


def same(a: Any, b: Any) -> bool:
    """Equal up to TOL, with None == None, nan == nan and inf == inf."""
    if a is None or b is None:
        return a is None and b is None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= TOL


def missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def ref_mask(values: Sequence[Any], t: float | None, greater: bool) -> tuple[list[bool], Any]:
    """B.1 by loops: midrange (min + max) / 2 of the present values when t is None."""
    if t is None:
        present = [float(v) for v in values if not missing(v)]
        if not present:
            return [False] * len(values), None
        lo = hi = present[0]
        for v in present:
            lo, hi = min(lo, v), max(hi, v)
        t = (lo + hi) / 2
    out = []
    for v in values:
        if missing(v):
            out.append(False)
        elif greater:
            out.append(float(v) > t)
        else:
            out.append(float(v) < t)
    return out, t


def ref_rate(hits: int, total: int) -> float | None:
    return hits / total if total else None


def ref_variable(
    y_true: Sequence[bool] | None, y_pred: Sequence[bool], priv: Sequence[bool]
) -> dict[str, Any]:
    """aif360 `ClassificationMetric` per variable (U = unprivileged, P = privileged), by loops."""
    counts = {g: {"n": 0, "sel": 0, "pos": 0, "tp": 0, "neg": 0, "fp": 0} for g in "PU"}
    for i, p in enumerate(priv):
        c = counts["P" if p else "U"]
        c["n"] += 1
        c["sel"] += int(bool(y_pred[i]))
        if y_true is not None:
            if y_true[i]:
                c["pos"] += 1
                c["tp"] += int(bool(y_pred[i]))
            else:
                c["neg"] += 1
                c["fp"] += int(bool(y_pred[i]))
    out: dict[str, Any] = dict.fromkeys(FAIRNESS_METRICS)
    P, U = counts["P"], counts["U"]
    if P["n"] and U["n"]:
        r_p, r_u = P["sel"] / P["n"], U["sel"] / U["n"]
        out["statistical_parity_difference"] = r_u - r_p
        if r_p > 0:
            out["disparate_impact"] = r_u / r_p
        else:
            out["disparate_impact"] = INF if r_u > 0 else NAN
    if y_true is not None:
        tpr_p, tpr_u = ref_rate(P["tp"], P["pos"]), ref_rate(U["tp"], U["pos"])
        fpr_p, fpr_u = ref_rate(P["fp"], P["neg"]), ref_rate(U["fp"], U["neg"])
        if tpr_p is not None and tpr_u is not None:
            out["equal_opportunity_difference"] = tpr_u - tpr_p
            if fpr_p is not None and fpr_u is not None:
                out["average_odds_difference"] = ((fpr_u - fpr_p) + (tpr_u - tpr_p)) / 2
                out["average_abs_odds_difference"] = (abs(fpr_u - fpr_p) + abs(tpr_u - tpr_p)) / 2
    return out


def ref_mean(values: Sequence[Any]) -> float | None:
    """Mean over the defined values (None and nan skipped, inf kept)."""
    total, n = 0.0, 0
    for v in values:
        if v is not None and not math.isnan(v):
            total += v
            n += 1
    return total / n if n else None


def ref_group_metrics(
    y_true: Sequence[bool] | None,
    y_pred: Sequence[bool],
    features: Mapping[str, Sequence[Any]],
    thresholds: Mapping[str, tuple[float, bool]] | None,
) -> dict[str, Any]:
    per_variable: dict[str, dict[str, Any]] = {m: {} for m in FAIRNESS_METRICS}
    used, sizes = {}, {}
    for name, values in features.items():
        t, greater = (None, True) if thresholds is None else thresholds.get(name, (0.0, True))
        priv, t_used = ref_mask(values, t, greater)
        used[name] = [t_used, greater]
        sizes[name] = {"privileged": sum(priv), "unprivileged": len(priv) - sum(priv)}
        for metric, value in ref_variable(y_true, y_pred, priv).items():
            per_variable[metric][name] = value
    out: dict[str, Any] = {m: ref_mean(list(per_variable[m].values())) for m in FAIRNESS_METRICS}
    tp = fp = fn = tn = 0
    if y_true is not None:
        for t_, p_ in zip(y_true, y_pred, strict=True):
            tp += int(t_ and p_)
            fp += int(not t_ and p_)
            fn += int(t_ and not p_)
            tn += int(not t_ and not p_)
    n = tp + fp + fn + tn
    out["accuracy"] = (tp + tn) / n if n else None
    out["precision"] = tp / (tp + fp) if tp + fp else None
    out["recall"] = tp / (tp + fn) if tp + fn else None
    out.update(per_variable=per_variable, thresholds_used=used, group_sizes=sizes)
    return out


def ref_multigroup(
    y_true: Sequence[bool] | None,
    y_pred: Sequence[bool],
    groups: Sequence[Any],
    agg: str = "worst_case",
    method: str = "between_groups",
) -> dict[str, Any]:
    """METRICS.md E adopted, by loops: undefined rates excluded, >= 2 groups per spread;
    `method="to_overall"` compares each group's selection rate with that of all items (a
    ratio above 1 inverted); `agg` combines the TPR and FPR parts of equalized odds by the
    worse one or the mean, None when either part is."""
    per: dict[str, dict[str, Any]] = {}
    for g in sorted(set(groups)):
        idx = [i for i, x in enumerate(groups) if x == g]
        sel = sum(bool(y_pred[i]) for i in idx) / len(idx)
        tpr = fpr = None
        if y_true is not None:
            pos = [i for i in idx if y_true[i]]
            neg = [i for i in idx if not y_true[i]]
            tpr = ref_rate(sum(bool(y_pred[i]) for i in pos), len(pos))
            fpr = ref_rate(sum(bool(y_pred[i]) for i in neg), len(neg))
        per[str(g)] = {"selection_rate": sel, "tpr": tpr, "fpr": fpr, "size": len(idx)}

    def spread(key: str) -> float | None:
        vals = [v[key] for v in per.values() if v[key] is not None]
        return max(vals) - min(vals) if len(vals) >= 2 else None

    def ratio(key: str) -> float | None:
        vals = [v[key] for v in per.values() if v[key] is not None]
        return min(vals) / max(vals) if len(vals) >= 2 and max(vals) > 0 else None

    def to_overall() -> tuple[float | None, float | None]:
        overall = sum(bool(v) for v in y_pred) / len(y_pred)
        rates = [v["selection_rate"] for v in per.values()]
        if len(rates) < 2:
            return None, None
        difference = max(abs(r - overall) for r in rates)
        if overall == 0:
            return difference, None
        return difference, min(min(r / overall, overall / r) if r else 0.0 for r in rates)

    def both(worse: Any, first: float | None, second: float | None) -> float | None:
        if first is None or second is None:
            return None
        return worse(first, second) if agg == "worst_case" else (first + second) / 2

    parity = (
        (spread("selection_rate"), ratio("selection_rate"))
        if method == "between_groups"
        else to_overall()
    )
    return {
        "demographic_parity_difference": parity[0],
        "demographic_parity_ratio": parity[1],
        "equalized_odds_difference": both(max, spread("tpr"), spread("fpr")),
        "equalized_odds_ratio": both(min, ratio("tpr"), ratio("fpr")),
        "equal_opportunity_difference": spread("tpr"),
        "equal_opportunity_ratio": ratio("tpr"),
        "per_group": per,
    }


def assert_same_nested(got: Any, want: Any, where: str = "") -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), where
        for key in want:
            assert_same_nested(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same_nested(g, w, f"{where}[{i}]")
    elif isinstance(want, bool) or want is None:
        assert got is want or got == want, f"{where}: {got!r} != {want!r}"
    else:
        assert isinstance(got, int | float) and not isinstance(got, bool), where
        assert same(got, want), f"{where}: {got!r} != {want!r}"


# ------------------------------------------------------------------------ privileged_mask --


def test_midrange_rule_with_missing_and_equal_values() -> None:
    """METRICS.md B.1: t = (min + max) / 2 of the non-missing values (FAI3 calculate_medians);
    the value equal to t and the missing ones are unprivileged."""
    mask, t = privileged_mask([2, 10, None, NAN, 6, 7])
    assert t == 6.0
    assert mask.tolist() == [False, True, False, False, False, True]


def test_given_threshold_and_greater_than_false() -> None:
    """METRICS.md B.1: privileged iff value < t when greater_than is False; equality and NaN
    are unprivileged in both directions."""
    values = [-1.0, 0.0, 1.0, None, -0.5]
    below, t = privileged_mask(values, 0.0, greater_than=False)
    above, _ = privileged_mask(values, 0.0, greater_than=True)
    assert t == 0.0
    assert below.tolist() == [True, False, False, False, True]
    assert above.tolist() == [False, False, True, False, False]


def test_midrange_with_no_value_gives_no_threshold() -> None:
    """METRICS.md B.1: the midrange of no value is undefined (None); nobody is privileged."""
    mask, t = privileged_mask([None, NAN, None])
    assert t is None
    assert mask.tolist() == [False, False, False]


# --------------------------------------------------------------------------- group_metrics --

# Hand-computed table (8 items, two variables). sex > 0 (missing from the threshold map, so
# FAI3's default (0.0, True)): P = items 0-3. x < 0 (given): P = items 0, 2, 5, 7; x = 0 at
# items 3 and 6 is unprivileged.
Y_TRUE = [1, 1, 0, 0, 1, 1, 0, 0]
Y_PRED = [1, 1, 1, 0, 1, 0, 0, 0]
SEX = [1, 1, 1, 1, 0, 0, 0, 0]
X = [-1, 1, -2, 0, 3, -5, 0, -1]


def test_hand_computed_two_variables() -> None:
    """Hand computation (aif360 definitions, METRICS.md B.2/B.3):
    sex: P rate 3/4, TPR 2/2, FPR 1/2; U rate 1/4, TPR 1/2, FPR 0/2 -> SPD -0.5, DI 1/3,
    AOD ((0 - .5) + (.5 - 1)) / 2 = -0.5, AAOD 0.5, EOD -0.5.
    x: P (items 0,2,5,7) rate 2/4, TPR 1/2, FPR 1/2; U rate 2/4, TPR 2/2, FPR 0/2 -> SPD 0,
    DI 1, AOD ((0 - .5) + (1 - .5)) / 2 = 0, AAOD (.5 + .5) / 2 = 0.5, EOD 0.5.
    Averages: SPD -0.25, DI 2/3, AOD -0.25, AAOD 0.5, EOD 0. Overall: TP 3, FP 1, FN 1, TN 3
    -> accuracy 0.75, precision 0.75, recall 0.75."""
    m = group_metrics(Y_TRUE, Y_PRED, {"sex": SEX, "x": X}, {"x": (0.0, False)})
    assert m["per_variable"]["statistical_parity_difference"] == {"sex": -0.5, "x": 0.0}
    assert m["per_variable"]["disparate_impact"]["sex"] == pytest.approx(1 / 3, abs=TOL)
    assert m["per_variable"]["disparate_impact"]["x"] == 1.0
    assert m["per_variable"]["average_odds_difference"] == {"sex": -0.5, "x": 0.0}
    assert m["per_variable"]["average_abs_odds_difference"] == {"sex": 0.5, "x": 0.5}
    assert m["per_variable"]["equal_opportunity_difference"] == {"sex": -0.5, "x": 0.5}
    assert m["statistical_parity_difference"] == -0.25
    assert m["disparate_impact"] == pytest.approx(2 / 3, abs=TOL)
    assert m["average_odds_difference"] == -0.25
    assert m["average_abs_odds_difference"] == 0.5
    assert m["equal_opportunity_difference"] == 0.0
    assert (m["accuracy"], m["precision"], m["recall"]) == (0.75, 0.75, 0.75)
    assert m["thresholds_used"] == {"sex": [0.0, True], "x": [0.0, False]}
    assert m["group_sizes"] == {
        "sex": {"privileged": 4, "unprivileged": 4},
        "x": {"privileged": 4, "unprivileged": 4},
    }


def test_without_threshold_map_every_variable_uses_the_midrange() -> None:
    """METRICS.md B.1: no map -> midrange with greater_than True (x: (-5 + 3) / 2 = -1, so
    only 1, 0, 3, 0 are privileged)."""
    m = group_metrics(Y_TRUE, Y_PRED, {"sex": SEX, "x": X})
    assert m["thresholds_used"] == {"sex": [0.5, True], "x": [-1.0, True]}
    assert m["group_sizes"]["x"] == {"privileged": 4, "unprivileged": 4}
    want = ref_group_metrics([bool(v) for v in Y_TRUE], Y_PRED, {"sex": SEX, "x": X}, None)
    assert_same_nested(m, want)


def test_map_without_the_variable_gives_zero_threshold_not_midrange() -> None:
    """METRICS.md B.1: a variable missing from a supplied map gets (0.0, True): age 10..50 is
    then privileged everywhere (one empty group -> None), unlike the midrange 30."""
    age = [10, 20, 30, 40, 50, 20, 30, 40]
    with_map = group_metrics(Y_TRUE, Y_PRED, {"age": age, "sex": SEX}, {"sex": (0.5, True)})
    assert with_map["thresholds_used"]["age"] == [0.0, True]
    assert with_map["group_sizes"]["age"] == {"privileged": 8, "unprivileged": 0}
    assert with_map["per_variable"]["statistical_parity_difference"]["age"] is None
    without = group_metrics(Y_TRUE, Y_PRED, {"age": age, "sex": SEX})
    assert without["thresholds_used"]["age"] == [30.0, True]
    assert without["per_variable"]["statistical_parity_difference"]["age"] is not None


def test_empty_group_is_none_and_the_average_uses_defined_variables() -> None:
    """METRICS.md B.2 adopted / G.9: a constant variable (midrange = the value, all
    unprivileged) is None for every metric, and each average equals the other variable's value
    (FAI3 would skip or trap; a 0 would halve it)."""
    m = group_metrics(Y_TRUE, Y_PRED, {"sex": SEX, "const": [7] * 8})
    for metric in FAIRNESS_METRICS:
        assert m["per_variable"][metric]["const"] is None
        assert same(m[metric], m["per_variable"][metric]["sex"])
    assert m["statistical_parity_difference"] == -0.5
    assert m["group_sizes"]["const"] == {"privileged": 0, "unprivileged": 8}


def test_disparate_impact_follows_ieee_inf_and_nan() -> None:
    """METRICS.md B.2 adopted ("inf/nan per IEEE"): P rate 0 with U rate > 0 gives inf, which
    stays in the average and makes it inf; 0/0 gives nan, which counts as undefined. (Within
    one call a nan can only sit beside other nans or Nones: 0/0 needs no positive prediction
    at all, so every variable has rate 0 in both groups.)"""
    g = [1, 1, 0, 0]  # midrange 0.5: P = items 0, 1
    h = [1, 0, 1, 0]  # P = items 0, 2
    m = group_metrics(None, [0, 0, 1, 1], {"g": g, "h": h})
    # g: r_P = 0, r_U = 1 -> inf; h: r_P = 1/2, r_U = 1/2 -> 1
    assert m["per_variable"]["disparate_impact"] == {"g": INF, "h": 1.0}
    assert m["disparate_impact"] == INF
    assert m["per_variable"]["statistical_parity_difference"] == {"g": 1.0, "h": 0.0}
    assert m["statistical_parity_difference"] == 0.5

    m = group_metrics(None, [0, 0, 0, 0], {"g": g, "h": h, "const": [3, 3, 3, 3]})
    assert math.isnan(m["per_variable"]["disparate_impact"]["g"])
    assert math.isnan(m["per_variable"]["disparate_impact"]["h"])
    assert m["per_variable"]["disparate_impact"]["const"] is None
    assert m["disparate_impact"] is None
    assert m["statistical_parity_difference"] == 0.0


def test_nan_disparate_impact_is_skipped_when_averaging_datasets() -> None:
    """METRICS.md B.2/B.8 adopted: a nan disparate impact (0/0) is undefined, so averaged
    with a dataset whose DI is 0.5 it gives 0.5, not nan and not 0.25."""
    nan_run = group_metrics(None, [0, 0, 0, 0], {"g": [1, 1, 0, 0]})
    half_run = group_metrics(None, [1, 1, 1, 0], {"g": [1, 1, 0, 0]})  # 1/2 over 1
    assert math.isnan(nan_run["per_variable"]["disparate_impact"]["g"])
    assert half_run["disparate_impact"] == 0.5
    avg = average_across_datasets([nan_run, half_run])
    assert avg["disparate_impact"] == 0.5
    assert avg["statistical_parity_difference"] == (0.0 + -0.5) / 2


def test_rates_without_positives_or_negatives_are_undefined() -> None:
    """METRICS.md B.2 adopted (no FAI3 sentinel 1.0): TPR needs positives, FPR negatives.
    g: P = items 0, 1 hold no positive -> EOD, AOD, AAOD None; SPD = 1/2 - 1/2 = 0.
    h: P = items 0, 2 (truth 0, 1; pred 1, 1): TPR 1, FPR 1; U = items 1, 3 (truth 0, 1;
    pred 0, 0): TPR 0, FPR 0 -> EOD -1, AOD -1, AAOD 1; these are also the averages."""
    y_true, y_pred = [0, 0, 1, 1], [1, 0, 1, 0]
    m = group_metrics(y_true, y_pred, {"g": [1, 1, 0, 0], "h": [1, 0, 1, 0]})
    pv = m["per_variable"]
    assert pv["statistical_parity_difference"]["g"] == 0.0
    for metric in FAIRNESS_METRICS[2:]:
        assert pv[metric]["g"] is None
    assert (pv["equal_opportunity_difference"]["h"], pv["average_odds_difference"]["h"]) == (
        -1.0,
        -1.0,
    )
    assert pv["average_abs_odds_difference"]["h"] == 1.0
    assert (m["equal_opportunity_difference"], m["average_odds_difference"]) == (-1.0, -1.0)
    assert m["average_abs_odds_difference"] == 1.0


def test_fpr_undefined_leaves_equal_opportunity_defined() -> None:
    """METRICS.md B.2 adopted: P = items 0, 1 are all positives (TPR_P = 1/2, no FPR_P);
    U = items 2, 3 (truth 0, 1; pred 0, 1): TPR_U 1, FPR_U 0 -> EOD 0.5, AOD and AAOD None."""
    m = group_metrics([1, 1, 0, 1], [1, 0, 0, 1], {"g": [1, 1, 0, 0]})
    assert m["equal_opportunity_difference"] == 0.5
    assert m["average_odds_difference"] is None
    assert m["average_abs_odds_difference"] is None


def test_without_gold_labels_only_selection_metrics() -> None:
    """API.md / METRICS.md B.5: y_true None -> SPD and DI only (sex: 1/4 - 3/4, 1/4 / 3/4);
    the odds metrics and accuracy, precision, recall are None, per variable too."""
    m = group_metrics(None, Y_PRED, {"sex": SEX})
    assert m["statistical_parity_difference"] == -0.5
    assert m["disparate_impact"] == pytest.approx(1 / 3, abs=TOL)
    for metric in FAIRNESS_METRICS[2:]:
        assert m[metric] is None
        assert m["per_variable"][metric] == {"sex": None}
    assert (m["accuracy"], m["precision"], m["recall"]) == (None, None, None)


def test_precision_and_recall_none_on_zero_denominators() -> None:
    """METRICS.md B.3 adopted / G.13: TP + FP = 0 -> precision None (recall 0 is defined);
    TP + FN = 0 -> recall None (precision 0); no item -> all None."""
    m = group_metrics([1, 0, 1, 0], [0, 0, 0, 0], {"g": [1, 1, 0, 0]})
    assert (m["accuracy"], m["precision"], m["recall"]) == (0.5, None, 0.0)
    m = group_metrics([0, 0, 0, 0], [1, 0, 0, 0], {"g": [1, 1, 0, 0]})
    assert (m["accuracy"], m["precision"], m["recall"]) == (0.75, 0.0, None)
    m = group_metrics([], [], {"g": []})
    assert (m["accuracy"], m["precision"], m["recall"]) == (None, None, None)
    assert all(m[metric] is None for metric in FAIRNESS_METRICS)
    assert m["thresholds_used"] == {"g": [None, True]}
    assert m["group_sizes"] == {"g": {"privileged": 0, "unprivileged": 0}}


VALUES: list[Any] = [0, 1, 2, 3, 0.5, -1.5, None, NAN]


def _random_case(rng: random.Random) -> tuple[Any, Any, dict[str, Any], Any]:
    n = rng.randint(0, 40)
    names = [f"v{j}" for j in range(rng.randint(1, 3))]
    features: dict[str, Any] = {name: [rng.choice(VALUES) for _ in range(n)] for name in names}
    thresholds = None
    if rng.random() < 0.5:
        chosen = [name for name in names if rng.random() < 0.6]
        thresholds = {
            name: (rng.choice([-1.0, 0.0, 0.5, 1.0, 2.0]), rng.random() < 0.5) for name in chosen
        }
    p_positive = rng.choice([0.05, 0.4, 0.4, 0.8])  # 0.05: often no positive prediction
    y_pred = [rng.random() < p_positive for _ in range(n)]
    y_true = None if rng.random() < 0.25 else [rng.random() < 0.5 for _ in range(n)]
    return y_true, y_pred, features, thresholds


@pytest.mark.parametrize("seed", SEEDS)
def test_random_inputs_match_the_loop_reference(seed: int) -> None:
    """aif360 `ClassificationMetric` formulas per variable, B.1 grouping and B.2 averaging,
    all by plain loops (`ref_group_metrics`), within 1e-12; inputs as lists, 0/1 ints or
    numpy arrays give the same result."""
    rng = random.Random(seed)
    y_true, y_pred, features, thresholds = _random_case(rng)
    want = ref_group_metrics(y_true, y_pred, features, thresholds)
    assert_same_nested(group_metrics(y_true, y_pred, features, thresholds), want)
    as_ints = group_metrics(
        None if y_true is None else [int(v) for v in y_true],
        np.array(y_pred, dtype=np.int64),
        {k: np.array(v, dtype=np.float64) for k, v in features.items()},
        thresholds,
    )
    assert_same_nested(as_ints, want)


def test_random_inputs_cover_the_special_cases() -> None:
    """The seeds of the random test reach inf and nan DI, empty groups, undefined TPR and
    missing y_true, so the comparison above exercises each branch."""
    seen = set()
    for seed in SEEDS:
        y_true, y_pred, features, thresholds = _random_case(random.Random(seed))
        pv = ref_group_metrics(y_true, y_pred, features, thresholds)["per_variable"]
        for name in features:
            di = pv["disparate_impact"][name]
            seen.add(_kind(di))
            if y_true is None:
                seen.add("no_truth")
            elif pv["statistical_parity_difference"][name] is not None:
                eod = pv["equal_opportunity_difference"][name]
                seen.add("eod_none" if eod is None else "eod")
    assert seen == {"none", "nan", "inf", "finite", "no_truth", "eod_none", "eod"}


def _kind(value: float | None) -> str:
    if value is None:
        return "none"
    if math.isnan(value):
        return "nan"
    return "inf" if value == INF else "finite"


def _two_group_case(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = 50
    y_true = rng.random(n) < 0.5
    y_pred = rng.random(n) < 0.5
    feature = rng.integers(0, 2, n).astype(np.float64)
    mask = feature > 0.5
    for group in (mask, ~mask):  # both classes and a positive prediction in both groups
        assert y_true[group].any() and (~y_true[group]).any() and y_pred[group].any()
    return y_true, y_pred, feature


@pytest.mark.parametrize("seed", range(5))
def test_two_groups_match_fairlearn(seed: int) -> None:
    """fairlearn 0.10+ (METRICS.md B.2, E): for two groups, |SPD| =
    `demographic_parity_difference`, |EOD| = `equal_opportunity_difference`, our
    average_abs_odds_difference = `equalized_odds_difference(agg="mean")`, and
    min(DI, 1/DI) = `demographic_parity_ratio`."""
    y_true, y_pred, feature = _two_group_case(seed)
    m = group_metrics(y_true, y_pred, {"s": feature})
    kw = {"sensitive_features": feature}
    assert same(
        abs(m["statistical_parity_difference"]),
        flm.demographic_parity_difference(y_true, y_pred, **kw),
    )
    assert same(
        abs(m["equal_opportunity_difference"]),
        flm.equal_opportunity_difference(y_true, y_pred, **kw),
    )
    assert same(
        m["average_abs_odds_difference"],
        flm.equalized_odds_difference(y_true, y_pred, agg="mean", **kw),
    )
    di = m["disparate_impact"]
    assert same(min(di, 1 / di), flm.demographic_parity_ratio(y_true, y_pred, **kw))


# ---------------------------------------------------------------------- multigroup_metrics --


def test_multigroup_three_groups_one_without_positives() -> None:
    """Hand computation (METRICS.md E adopted, G.19): a: sel 1/3, TPR 1/2, FPR 0/1;
    b: sel 2/3, TPR 1/1, FPR 1/2; c: sel 1/2, no positive (TPR None), FPR 1/2.
    DPD 2/3 - 1/3, DPR 1/2, TPR spread (a, b) 1/2, FPR spread 1/2, EqOdds 1/2, EOR 1/2.
    fairlearn counts c's TPR as 0 and reports EOD 1 and ratio 0 instead."""
    groups = ["a", "a", "a", "b", "b", "b", "c", "c"]
    y_true = [1, 1, 0, 1, 0, 0, 0, 0]
    y_pred = [1, 0, 0, 1, 1, 0, 1, 0]
    m = multigroup_metrics(y_true, y_pred, groups)
    assert m["demographic_parity_difference"] == pytest.approx(1 / 3, abs=TOL)
    assert m["demographic_parity_ratio"] == 0.5
    assert m["equal_opportunity_difference"] == 0.5
    assert m["equal_opportunity_ratio"] == 0.5
    assert m["equalized_odds_difference"] == 0.5
    assert m["per_group"]["c"] == {"selection_rate": 0.5, "tpr": None, "fpr": 0.5, "size": 2}
    assert m["per_group"]["a"] == {"selection_rate": 1 / 3, "tpr": 0.5, "fpr": 0.0, "size": 3}
    assert list(m["per_group"]) == ["a", "b", "c"]
    kw = {"sensitive_features": groups}
    assert flm.equal_opportunity_difference(y_true, y_pred, **kw) == 1.0
    assert flm.equal_opportunity_ratio(y_true, y_pred, **kw) == 0.0
    assert same(
        flm.demographic_parity_difference(y_true, y_pred, **kw), m["demographic_parity_difference"]
    )


def test_multigroup_undefined_spreads_and_ratios() -> None:
    """METRICS.md E adopted: one group -> every spread None; max selection rate 0 -> ratio
    None (difference 0); FPR defined in one group only -> equalized odds None; no y_true ->
    TPR/FPR metrics None."""
    one = multigroup_metrics([1, 0], [1, 0], ["a", "a"])
    assert all(one[k] is None for k in one if k != "per_group")
    zero = multigroup_metrics([1, 0, 1, 0], [0, 0, 0, 0], ["a", "a", "b", "b"])
    assert zero["demographic_parity_difference"] == 0.0
    assert zero["demographic_parity_ratio"] is None
    assert zero["equal_opportunity_difference"] == 0.0
    assert zero["equal_opportunity_ratio"] is None
    # b holds positives only: FPR spread undefined, TPR spread 1 - 1/2
    only_pos = multigroup_metrics([1, 0, 1, 1], [1, 1, 0, 1], ["a", "a", "b", "b"])
    assert only_pos["equal_opportunity_difference"] == 0.5
    assert only_pos["equalized_odds_difference"] is None
    blind = multigroup_metrics(None, [1, 0, 1, 1], [0, 0, 1, 1])
    assert blind["demographic_parity_difference"] == 0.5
    assert blind["demographic_parity_ratio"] == 0.5
    for key in (
        "equalized_odds_difference",
        "equal_opportunity_difference",
        "equal_opportunity_ratio",
    ):
        assert blind[key] is None
    assert blind["per_group"]["0"] == {"selection_rate": 0.5, "tpr": None, "fpr": None, "size": 2}


@pytest.mark.parametrize("seed", range(4))
def test_multigroup_random_matches_fairlearn(seed: int) -> None:
    """fairlearn 0.10+ `demographic_parity_difference/ratio`, `equalized_odds_difference`
    (worst case), `equal_opportunity_difference/ratio` on 4 groups where every group has
    positives, negatives and positive predictions (so fairlearn's zero rates never occur)."""
    rng = np.random.default_rng(100 + seed)
    n = 80
    groups = rng.choice(np.array(["w", "x", "y", "z"]), n)
    y_true = rng.random(n) < 0.5
    y_pred = rng.random(n) < 0.5
    for g in "wxyz":
        group = groups == g
        assert y_true[group].any() and (~y_true[group]).any() and (y_pred & y_true)[group].any()
    m = multigroup_metrics(y_true, y_pred, groups)
    kw = {"sensitive_features": groups}
    for key, fn in (
        ("demographic_parity_difference", flm.demographic_parity_difference),
        ("demographic_parity_ratio", flm.demographic_parity_ratio),
        ("equalized_odds_difference", flm.equalized_odds_difference),
        ("equal_opportunity_difference", flm.equal_opportunity_difference),
        ("equal_opportunity_ratio", flm.equal_opportunity_ratio),
    ):
        assert same(m[key], fn(y_true, y_pred, **kw)), key


@pytest.mark.parametrize("seed", range(30))
def test_multigroup_random_matches_the_loop_reference(seed: int) -> None:
    """METRICS.md E adopted, by loops (`ref_multigroup`), including groups without positives
    or negatives and missing y_true, within 1e-12, for every agg and method."""
    rng = random.Random(seed)
    n = rng.randint(1, 30)
    groups = [rng.choice([0, 1, 2, 3]) for _ in range(n)]
    y_pred = [rng.random() < 0.4 for _ in range(n)]
    y_true = None if rng.random() < 0.2 else [rng.random() < 0.4 for _ in range(n)]
    for agg in ("worst_case", "mean"):
        for method in ("between_groups", "to_overall"):
            assert_same_nested(
                multigroup_metrics(y_true, y_pred, groups, agg=agg, method=method),  # type: ignore[arg-type]
                ref_multigroup(y_true, y_pred, groups, agg, method),
                f"{agg}/{method}",
            )


AGGS = ("worst_case", "mean")
METHODS = ("between_groups", "to_overall")


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("agg", AGGS)
@pytest.mark.parametrize("method", METHODS)
def test_multigroup_options_match_fairlearn(seed: int, agg: str, method: str) -> None:
    """fairlearn 0.15 `demographic_parity_difference/ratio(method=...)` and
    `equalized_odds_difference/ratio(agg=...)` on 3-5 random groups where every group has
    positives, negatives, and both TPR and FPR positive somewhere (every rate defined, so
    fairlearn's zeros for undefined rates never occur)."""
    rng = np.random.default_rng(300 + seed)
    k = 3 + seed % 3
    names = np.array([f"g{i}" for i in range(k)])
    n = 30 * k
    groups = names[rng.permutation(np.arange(n) % k)]
    y_true = rng.random(n) < 0.4 + 0.1 * (seed % 3)
    y_pred = rng.random(n) < np.where(y_true, 0.6, 0.3)
    for g in names:
        group = groups == g
        assert y_true[group].any() and (~y_true[group]).any()
    assert (y_pred & y_true).any() and (y_pred & ~y_true).any()
    m = multigroup_metrics(y_true, y_pred, groups, agg=agg, method=method)  # type: ignore[arg-type]
    kw = {"sensitive_features": groups}
    expected = {
        "demographic_parity_difference": flm.demographic_parity_difference(
            y_true, y_pred, method=method, **kw
        ),
        "demographic_parity_ratio": flm.demographic_parity_ratio(
            y_true, y_pred, method=method, **kw
        ),
        "equalized_odds_difference": flm.equalized_odds_difference(y_true, y_pred, agg=agg, **kw),
        "equalized_odds_ratio": flm.equalized_odds_ratio(y_true, y_pred, agg=agg, **kw),
    }
    for key, value in expected.items():
        assert m[key] == pytest.approx(float(value), abs=TOL), key
    # the options change what they should, and only that
    other = multigroup_metrics(y_true, y_pred, groups)
    for key in ("equal_opportunity_difference", "equal_opportunity_ratio", "per_group"):
        assert m[key] == other[key]


def test_multigroup_options_by_hand() -> None:
    """Three groups (a: 2 of 4 selected, b: 1 of 4, c: 4 of 4; all items 7/12).
    to_overall: DPD max(|1/2 - 7/12|, |1/4 - 7/12|, |1 - 7/12|) = 5/12; DPR min(6/7, 3/7,
    7/12) = 3/7 (between groups: 3/4 and 1/4). TPR a 1/2, b 1/2, c 1; FPR a 1/2, b 0, c 1:
    spreads 1/2 and 1, ratios 1/2 and 0; worst case 1 and 0, mean 3/4 and 1/4."""
    groups = ["a"] * 4 + ["b"] * 4 + ["c"] * 4
    y_true = [1, 1, 0, 0] * 3
    y_pred = [1, 0, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1]
    overall = multigroup_metrics(y_true, y_pred, groups, method="to_overall")
    assert overall["demographic_parity_difference"] == pytest.approx(5 / 12, abs=TOL)
    assert overall["demographic_parity_ratio"] == pytest.approx(3 / 7, abs=TOL)
    between = multigroup_metrics(y_true, y_pred, groups)
    assert between["demographic_parity_difference"] == pytest.approx(3 / 4, abs=TOL)
    assert between["demographic_parity_ratio"] == pytest.approx(1 / 4, abs=TOL)
    assert (between["equalized_odds_difference"], between["equalized_odds_ratio"]) == (1.0, 0.0)
    mean = multigroup_metrics(y_true, y_pred, groups, agg="mean")
    assert mean["equalized_odds_difference"] == pytest.approx(3 / 4, abs=TOL)
    assert mean["equalized_odds_ratio"] == pytest.approx(1 / 4, abs=TOL)


def test_multigroup_options_with_undefined_rates_by_hand() -> None:
    """METRICS.md E adopted, where fairlearn differs: group c has no positives (TPR
    undefined, left out; fairlearn counts 0). TPR a 1/2, b 1; FPR a 0, b 1/2, c 1.
    equalized odds worst case: max(1/2, 1) = 1, ratio min(1/2, 0) = 0; mean 3/4 and 1/4.
    fairlearn's TPR spread would be 1 - 0 = 1 and its mean difference (1 + 1) / 2 = 1.
    Nobody selected in one run: the to_overall ratio (overall 0) is None, its difference 0;
    one group only: every spread None, also to_overall."""
    groups = ["a", "a", "a", "b", "b", "b", "c", "c"]
    y_true = [1, 1, 0, 1, 0, 0, 0, 0]
    y_pred = [1, 0, 0, 1, 1, 0, 1, 1]
    worst = multigroup_metrics(y_true, y_pred, groups)
    assert worst["per_group"]["c"]["tpr"] is None
    assert (worst["equalized_odds_difference"], worst["equalized_odds_ratio"]) == (1.0, 0.0)
    mean = multigroup_metrics(y_true, y_pred, groups, agg="mean")
    assert mean["equalized_odds_difference"] == pytest.approx(3 / 4, abs=TOL)
    assert mean["equalized_odds_ratio"] == pytest.approx(1 / 4, abs=TOL)
    kw = {"sensitive_features": groups}
    assert flm.equalized_odds_difference(y_true, y_pred, agg="mean", **kw) == 1.0
    nobody = multigroup_metrics(None, [0, 0, 0, 0], ["a", "a", "b", "b"], method="to_overall")
    assert nobody["demographic_parity_difference"] == 0.0
    assert nobody["demographic_parity_ratio"] is None
    one = multigroup_metrics([1, 0], [1, 0], ["a", "a"], method="to_overall", agg="mean")
    assert all(one[k] is None for k in one if k != "per_group")
    # an FPR part undefined everywhere (no negatives): equalized odds None under both aggs
    positives = multigroup_metrics([1, 1, 1, 1], [1, 0, 1, 1], ["a", "a", "b", "b"], agg="mean")
    assert positives["equalized_odds_difference"] is None
    assert positives["equalized_odds_ratio"] is None


@pytest.mark.parametrize(("option", "value"), [("agg", "worst"), ("method", "overall")])
def test_multigroup_refuses_unknown_options(option: str, value: str) -> None:
    with pytest.raises(ScoringError, match=f"{option} must be one of"):
        multigroup_metrics([1, 0], [1, 0], ["a", "b"], **{option: value})  # type: ignore[arg-type]


# ----------------------------------------------------------------- average_across_datasets --


def test_average_across_datasets_skips_none() -> None:
    """METRICS.md B.8 adopted / G.12: the mean over the datasets where a metric is defined
    (spd: (0.2 + 0.4) / 2 = 0.3, not / 3 as FAI3's code); nan skipped, inf kept; a key defined
    nowhere is None; nested dicts, strings and bools are ignored; keys in first-seen order."""
    runs = [
        {"spd": 0.2, "di": None, "eod": None, "per_variable": {"spd": {"x": 1.0}}},
        {"spd": None, "di": INF, "eod": None, "flag": True, "note": "x"},
        {"spd": 0.4, "di": 2.0, "eod": NAN, "acc": np.float64(0.5)},
    ]
    avg = average_across_datasets(runs)
    assert list(avg) == ["spd", "di", "eod", "acc"]
    assert avg["spd"] == pytest.approx(0.3, abs=TOL)
    assert avg["di"] == INF
    assert avg["eod"] is None
    assert avg["acc"] == 0.5 and type(avg["acc"]) is float


def test_average_across_datasets_of_group_metrics_results() -> None:
    """METRICS.md B.8: averaging two `group_metrics` results by hand: SPD -0.25 (table above,
    with the x threshold) and -0.5 (sex alone) -> -0.375; EOD 0 and None -> 0."""
    first = group_metrics(Y_TRUE, Y_PRED, {"sex": SEX, "x": X}, {"x": (0.0, False)})
    second = group_metrics(None, Y_PRED, {"sex": SEX})
    avg = average_across_datasets([first, second])
    assert avg["statistical_parity_difference"] == -0.375
    assert avg["equal_opportunity_difference"] == 0.0
    assert avg["accuracy"] == 0.75
    assert "per_variable" not in avg and "thresholds_used" not in avg


# ------------------------------------------------------------------------ argument errors --


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"y_true": [1, 0]}, r"group_metrics: the inputs must have the same length; .*y_true"),
        ({"features": {"s": [1, 0]}}, r"features\['s'\] has 2"),
        ({"features": {}}, r"group_metrics: features must map at least one"),
        ({"features": {"s": ["a", "b", "c", "d"]}}, r"features\['s'\] must hold numbers"),
        ({"features": {"s": [1, INF, 0, 0]}}, r"features\['s'\] must hold finite numbers"),
        ({"y_pred": [1, 2, 0, 0]}, r"group_metrics: y_pred must hold bools or 0/1 .*; got 2 at"),
        ({"y_pred": [1, None, 0, 0]}, r"y_pred must hold bools or 0/1 .*; got None"),
        ({"y_true": [1, 0, "1", 0]}, r"y_true must hold bools or 0/1 .*; got '1'"),
        ({"y_true": [1, 0, NAN, 0]}, r"y_true must hold bools or 0/1 .*; got nan"),
        ({"thresholds": {"s": 0.5}}, r"thresholds\['s'\] must be \(threshold, greater_than\)"),
        ({"thresholds": {"s": (0.5,)}}, r"thresholds\['s'\] must be \(threshold, greater_than"),
        ({"thresholds": {"s": "ab"}}, r"thresholds\['s'\] must be \(threshold, greater_than"),
        ({"thresholds": {"s": ("0.5", True)}}, r"thresholds\['s'\]\[0\] must be a number"),
        ({"thresholds": {"s": (NAN, True)}}, r"thresholds\['s'\]\[0\] must be a number"),
        ({"thresholds": {"s": (INF, True)}}, r"thresholds\['s'\]\[0\] must be in"),
        ({"thresholds": {"s": (0.5, 1)}}, r"thresholds\['s'\]\[1\] must be True or False"),
        ({"thresholds": {"t": (0.5, True)}}, r"thresholds name \['t'\], which are not in"),
        ({"thresholds": [(0.5, True)]}, r"group_metrics: thresholds must map a variable"),
    ],
)
def test_group_metrics_argument_errors(kwargs: dict[str, Any], match: str) -> None:
    """STYLE.md S1: every bad argument raises ScoringError naming function and argument."""
    args: dict[str, Any] = {
        "y_true": [1, 0, 1, 0],
        "y_pred": [1, 1, 0, 0],
        "features": {"s": [1, 0, 1, 0]},
        "thresholds": None,
    }
    args.update(kwargs)
    with pytest.raises(ScoringError, match=match):
        group_metrics(**args)


def test_threshold_lists_from_json_are_accepted() -> None:
    """`thresholds_used` is reported as [t, greater_than] lists; feeding it back (as read from
    JSON) gives the same grouping."""
    m = group_metrics(Y_TRUE, Y_PRED, {"sex": SEX, "x": X}, {"x": (0.0, False)})
    again = group_metrics(Y_TRUE, Y_PRED, {"sex": SEX, "x": X}, m["thresholds_used"])
    assert again["per_variable"] == m["per_variable"]


def test_other_argument_errors() -> None:
    """STYLE.md S1: privileged_mask, multigroup_metrics and average_across_datasets name the
    function and the argument at fault."""
    with pytest.raises(ScoringError, match=r"privileged_mask: threshold must be a number"):
        privileged_mask([1, 2], "1")  # type: ignore[arg-type]
    with pytest.raises(ScoringError, match=r"privileged_mask: greater_than must be True or"):
        privileged_mask([1, 2], 1.0, "yes")  # type: ignore[arg-type]
    with pytest.raises(ScoringError, match=r"privileged_mask: values must be one value per"):
        privileged_mask([[1, 2], [3, 4]])
    with pytest.raises(
        ScoringError,
        match=r"multigroup_metrics: groups has a missing value .*"
        r"position 1",
    ):
        multigroup_metrics(None, [1, 0, 1], ["a", None, "b"])
    with pytest.raises(ScoringError, match=r"multigroup_metrics: groups has a missing value"):
        multigroup_metrics(None, [1, 0], [1.0, NAN])
    with pytest.raises(ScoringError, match=r"multigroup_metrics: groups .* same name twice"):
        multigroup_metrics(None, [1, 0], [1, "1"])
    with pytest.raises(ScoringError, match=r"multigroup_metrics: the inputs must have the same"):
        multigroup_metrics([1, 0, 1], [1, 0], ["a", "b"])
    with pytest.raises(ScoringError, match=r"average_across_datasets: metric_dicts is empty"):
        average_across_datasets([])
    with pytest.raises(ScoringError, match=r"average_across_datasets: metric_dicts\[1\] must"):
        average_across_datasets([{"a": 1.0}, 3.0])  # type: ignore[list-item]
    with pytest.raises(ScoringError, match=r"average_across_datasets: metric_dicts must be a"):
        average_across_datasets({"a": 1.0})  # type: ignore[arg-type]


# ------------------------------------------------------------------------- group rates --


@pytest.mark.parametrize("seed", range(4))
def test_group_rates_match_fairlearn_sklearn_and_statsmodels(seed: int) -> None:
    """Per group: rates equal fairlearn's `MetricFrame` of `selection_rate`,
    `true_positive_rate`, `false_positive_rate`; counts equal scikit-learn's confusion matrix of
    the group's items; each interval equals statsmodels' `proportion_confint(method="wilson")`
    of the same counts."""
    rng = np.random.default_rng(200 + seed)
    n = 90
    groups = rng.choice(np.array(["w", "x", "y"]), n)
    y_true = rng.random(n) < 0.4
    y_pred = rng.random(n) < 0.6
    found = group_rates(y_true, y_pred, groups)
    frame = flm.MetricFrame(
        metrics={
            "selection_rate": flm.selection_rate,
            "tpr": flm.true_positive_rate,
            "fpr": flm.false_positive_rate,
        },
        y_true=y_true,
        y_pred=y_pred,
        sensitive_features=groups,
    ).by_group
    assert sorted(found) == ["w", "x", "y"]
    for g, row in found.items():
        members = groups == g
        tn, fp, fn, tp = confusion_matrix(y_true[members], y_pred[members], labels=[0, 1]).ravel()
        assert (row["size"], row["selected"]) == (members.sum(), tp + fp)
        assert (row["positives"], row["true_positives"]) == (tp + fn, tp)
        assert (row["negatives"], row["false_positives"]) == (tn + fp, fp)
        for rate, k, total in (
            ("selection_rate", tp + fp, members.sum()),
            ("tpr", tp, tp + fn),
            ("fpr", fp, tn + fp),
        ):
            assert row[rate] == pytest.approx(frame.loc[g, rate], abs=TOL), (g, rate)
            low, high = proportion_confint(int(k), int(total), alpha=0.05, method="wilson")
            assert row[f"{rate}_interval"] == pytest.approx([low, high], abs=TOL), (g, rate)


def test_group_rates_of_the_privileged_split_agree_with_group_metrics() -> None:
    """The rates behind `group_metrics` (U - P): SPD and EOD rebuilt from the privileged and
    unprivileged rows of `group_rates` equal `group_metrics`' own."""
    mask, _ = privileged_mask(SEX)
    split = ["privileged" if m else "unprivileged" for m in mask]
    rates = group_rates(Y_TRUE, Y_PRED, split)
    m = group_metrics(Y_TRUE, Y_PRED, {"sex": SEX})
    p, u = rates["privileged"], rates["unprivileged"]
    assert same(u["selection_rate"] - p["selection_rate"], m["statistical_parity_difference"])
    assert same(u["tpr"] - p["tpr"], m["equal_opportunity_difference"])
    assert (p["size"], u["size"]) == tuple(m["group_sizes"]["sex"].values())


def test_group_rates_undefined_and_without_gold() -> None:
    """A group without positives has TPR and its interval None (fairlearn would say 0); without
    y_true every gold count and TPR/FPR is None, the selection rate stays."""
    rates = group_rates([0, 0, 1, 0], [1, 0, 1, 1], ["a", "a", "b", "b"])
    assert rates["a"]["positives"] == 0
    assert rates["a"]["tpr"] is None and rates["a"]["tpr_interval"] is None
    assert rates["a"]["fpr"] == 0.5
    blind = group_rates(None, [1, 0, 1, 1], [1, 1, 2, 2], confidence_level=0.9)
    assert blind["2"]["selection_rate"] == 1.0
    assert blind["2"]["selection_rate_interval"] == pytest.approx(
        list(proportion_confint(2, 2, alpha=0.1, method="wilson")), abs=TOL
    )
    for key in ("positives", "true_positives", "tpr", "tpr_interval", "negatives", "fpr"):
        assert blind["1"][key] is None


def test_group_rates_argument_errors() -> None:
    with pytest.raises(ScoringError, match=r"group_rates: groups has a missing value"):
        group_rates(None, [1, 0], ["a", None])
    with pytest.raises(ScoringError, match=r"group_rates: the inputs must have the same length"):
        group_rates([1], [1, 0], ["a", "b"])
    with pytest.raises(ScoringError, match=r"group_rates: y_pred must hold bools or 0/1"):
        group_rates(None, [2, 0], ["a", "b"])
    with pytest.raises(ScoringError, match=r"group_rates: confidence_level must be in"):
        group_rates(None, [1, 0], ["a", "b"], confidence_level=0)


def test_docstring_examples_run() -> None:
    """STYLE.md anti-pattern 16: every example in the module's docstrings runs as shown."""
    result = doctest.testmod(fairness)
    assert result.failed == 0
    assert result.attempted > 0
