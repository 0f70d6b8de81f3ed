"""Group fairness of binary predictions: privileged versus unprivileged, and many groups.

Two views (METRICS.md B and E). `group_metrics` follows FAI3 and aif360: each sensitive
variable splits the items into a privileged group P (value above, or below, a threshold) and an
unprivileged group U (the rest, missing values included), and the signed differences U - P are
averaged over the variables. `multigroup_metrics` follows fairlearn: any number of groups and
absolute spreads of per-group rates (max - min, or each group against all items), with
fairlearn's `agg` and `method` options. Positive means True (or 1), in the gold labels
and in the predictions alike.

Undefined values are `None` (an empty group, a rate without positives or negatives), never 0;
the one exception is disparate impact, which keeps IEEE semantics for its division (P's rate 0:
`inf`, 0/0: `nan`; METRICS.md B.2).

References: Bellamy et al., "AI Fairness 360" (2018), arXiv:1810.01943; Weerts et al.,
"Fairlearn: Assessing and Improving Fairness of AI Systems" (2023), arXiv:2303.16626;
Hardt, Price & Srebro, "Equality of Opportunity in Supervised Learning" (2016),
arXiv:1610.02413; METRICS.md B.1-B.3, B.8, E and G.8, G.9, G.12, G.13, G.19.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.checks import (
    check_choice,
    check_interval,
    check_same_length,
    encode_labels,
)
from meta_evaluator.stats.proportions import wilson_intervals

__all__ = [
    "FAIRNESS_METRICS",
    "MULTIGROUP_METRICS",
    "Aggregation",
    "Comparison",
    "average_across_datasets",
    "group_metrics",
    "group_rates",
    "multigroup_metrics",
    "privileged_mask",
]

#: The per-variable metrics of `group_metrics`, in the order they are reported.
FAIRNESS_METRICS = (
    "statistical_parity_difference",
    "disparate_impact",
    "average_odds_difference",
    "average_abs_odds_difference",
    "equal_opportunity_difference",
)

#: How equalized odds combines the spreads (or ratios) of TPR and FPR (fairlearn's `agg`).
Aggregation = Literal["worst_case", "mean"]
#: What demographic parity compares a group's selection rate with (fairlearn's `method`).
Comparison = Literal["between_groups", "to_overall"]

#: The spreads of `multigroup_metrics`, in the order they are reported.
MULTIGROUP_METRICS = (
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "equalized_odds_difference",
    "equalized_odds_ratio",
    "equal_opportunity_difference",
    "equal_opportunity_ratio",
)

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]
ArrayOrSequence = Sequence[Any] | npt.NDArray[Any]


def privileged_mask(
    values: ArrayOrSequence, threshold: float | None = None, greater_than: bool = True
) -> tuple[BoolArray, float | None]:
    """Which items belong to the privileged group of one sensitive variable.

    Formula: privileged_i = value_i > t (greater_than) or value_i < t (otherwise). Without a
    threshold, t = (min + max) / 2 over the non-missing values (FAI3's `calculate_medians`,
    which is a midrange, not a median). An item whose value equals t, or is missing, is
    unprivileged in both directions.

    Args:
        values: The variable's value per item: finite numbers (bools count as 0/1), None or NaN
            for a missing value.
        threshold: t, a finite number; None for the midrange rule.
        greater_than: True when values above t are privileged, False when values below are.

    Returns:
        (mask, t): a boolean array, True for privileged items, and the threshold used.

    Undefined: t is None when the midrange rule meets no value (every item unprivileged).

    Raises:
        ScoringError: A value that is not a finite number or missing, a threshold that is not a
            finite number, or greater_than not a bool.

    References:
        FAI3 `metrics_calculation.rs`; METRICS.md B.1.

    Example:
        >>> mask, t = privileged_mask([0, 1, None, 0.5, 1])
        >>> mask.tolist(), t
        ([False, True, False, False, True], 0.5)
    """
    function = "privileged_mask"
    x = _numbers(function, "values", values)
    _check_direction(function, "greater_than", greater_than)
    if threshold is not None:
        _check_threshold(function, "threshold", threshold)
        threshold = float(threshold)
    return _split(x, threshold, bool(greater_than))


def _split(
    x: FloatArray, threshold: float | None, greater_than: bool
) -> tuple[BoolArray, float | None]:
    """`privileged_mask` on checked values (NaN = missing)."""
    if threshold is None:
        present = x[~np.isnan(x)]
        if present.size == 0:
            return np.zeros(x.size, dtype=bool), None
        threshold = float((present.min() + present.max()) / 2)
    mask = x > threshold if greater_than else x < threshold
    return mask, threshold


def group_metrics(
    y_true: ArrayOrSequence | None,
    y_pred: ArrayOrSequence,
    features: Mapping[str, ArrayOrSequence],
    thresholds: Mapping[str, tuple[float, bool]] | None = None,
) -> dict[str, Any]:
    """Group fairness of predictions per sensitive variable (U - P), averaged over variables.

    Formula: for each variable, with P and U its privileged and unprivileged items
    (`privileged_mask`), r_G = P(y_pred = 1 | G), TPR_G = P(y_pred = 1 | y_true = 1, G),
    FPR_G = P(y_pred = 1 | y_true = 0, G):
    statistical_parity_difference = r_U - r_P; disparate_impact = r_U / r_P;
    average_odds_difference = ((FPR_U - FPR_P) + (TPR_U - TPR_P)) / 2 (signed, aif360);
    average_abs_odds_difference = (|FPR_U - FPR_P| + |TPR_U - TPR_P|) / 2 (FAI3's code);
    equal_opportunity_difference = TPR_U - TPR_P. Each reported value is the arithmetic mean
    of the per-variable values over the variables where it is defined. accuracy =
    (TP + TN) / n, precision = TP / (TP + FP), recall = TP / (TP + FN), over all items.

    Args:
        y_true: Gold labels (bools or 0/1), one per item; None when there are none (then only
            statistical_parity_difference and disparate_impact are computed).
        y_pred: Predictions (bools or 0/1), same length.
        features: One entry per sensitive variable: its values per item, same length (finite
            numbers; None or NaN is missing and therefore unprivileged). At least one.
        thresholds: `{variable: (t, greater_than)}`. When given, a variable it does not name
            gets (0.0, True) (FAI3's rule); when None, every variable uses the midrange rule.

    Returns:
        A dict with the five metrics above (fair values: differences 0, disparate impact 1;
        differences lie in [-1, 1], the absolute one in [0, 1], disparate impact in [0, inf]),
        `accuracy`, `precision`, `recall` (in [0, 1]), `per_variable` (`{metric: {variable:
        value}}` for the five metrics), `thresholds_used` (`{variable: [t, greater_than]}`)
        and `group_sizes` (`{variable: {"privileged": n, "unprivileged": n}}`).

    Undefined: a per-variable value is None when one group is empty, or (odds and opportunity
    metrics) when a rate it needs has no positives (TPR) or no negatives (FPR) in a group, and
    always without y_true. Disparate impact with r_P = 0 is `inf` (r_U > 0) or `nan` (r_U = 0)
    per IEEE; a `nan` is left out of the average, an `inf` makes it `inf`. An average is None
    when no variable is defined. accuracy, precision and recall are None on a zero denominator
    and without y_true.

    Raises:
        ScoringError: Lengths differ, labels that are not bools or 0/1, no feature, a feature
            value that is not a finite number or missing, or a malformed or unknown threshold.

    References:
        Bellamy et al. (2018), arXiv:1810.01943 (aif360 `ClassificationMetric`); FAI3
        `metrics_calculation.rs`; METRICS.md B.1-B.3, G.8, G.9, G.13.

    Example:
        >>> m = group_metrics([1, 0, 1, 0], [1, 1, 1, 0], {"sex": [1, 1, 0, 0]})
        >>> m["statistical_parity_difference"], m["disparate_impact"], m["thresholds_used"]
        (-0.5, 0.5, {'sex': [0.5, True]})
    """
    function = "group_metrics"
    if not isinstance(features, Mapping) or not features:
        raise ScoringError(
            f"{function}: features must map at least one sensitive variable to its values; "
            f"got {features!r}."
        )
    lengths: dict[str, Any] = {"y_pred": y_pred}
    if y_true is not None:
        lengths["y_true"] = y_true
    lengths.update({f"features[{name!r}]": values for name, values in features.items()})
    check_same_length(function, **lengths)
    rules = _threshold_rules(function, features, thresholds)
    predicted = _binary(function, "y_pred", y_pred)
    truth = None if y_true is None else _binary(function, "y_true", y_true)

    names = list(features)
    masks, used = [], {}
    for name in names:
        t, greater = rules[name]
        x = _numbers(function, f"features[{name!r}]", features[name])
        mask, t_used = _split(x, t, greater)
        masks.append(mask)
        used[name] = [t_used, greater]
    privileged = np.vstack(masks)
    unprivileged = ~privileged

    n_p = privileged.sum(axis=1)
    n_u = unprivileged.sum(axis=1)
    both_groups = (n_p > 0) & (n_u > 0)
    rate_p = _ratio((privileged & predicted).sum(axis=1), n_p)
    rate_u = _ratio((unprivileged & predicted).sum(axis=1), n_u)
    with np.errstate(divide="ignore", invalid="ignore"):
        impact = rate_u / rate_p
    per_variable: dict[str, dict[str, float | None]] = {
        "statistical_parity_difference": _named(names, rate_u - rate_p),
        "disparate_impact": {
            name: float(impact[i]) if both_groups[i] else None for i, name in enumerate(names)
        },
    }
    overall: dict[str, float | None] = {"accuracy": None, "precision": None, "recall": None}
    if truth is None:
        for metric in FAIRNESS_METRICS[2:]:
            per_variable[metric] = dict.fromkeys(names)
    else:
        tpr_p, fpr_p = _odds(privileged, truth, predicted)
        tpr_u, fpr_u = _odds(unprivileged, truth, predicted)
        per_variable["average_odds_difference"] = _named(
            names, ((fpr_u - fpr_p) + (tpr_u - tpr_p)) / 2
        )
        per_variable["average_abs_odds_difference"] = _named(
            names, (np.abs(fpr_u - fpr_p) + np.abs(tpr_u - tpr_p)) / 2
        )
        per_variable["equal_opportunity_difference"] = _named(names, tpr_u - tpr_p)
        overall = _overall(truth, predicted)

    out: dict[str, Any] = {
        metric: _mean_defined(per_variable[metric].values()) for metric in FAIRNESS_METRICS
    }
    out.update(overall)
    out["per_variable"] = per_variable
    out["thresholds_used"] = used
    out["group_sizes"] = {
        name: {"privileged": int(n_p[i]), "unprivileged": int(n_u[i])}
        for i, name in enumerate(names)
    }
    return out


def multigroup_metrics(
    y_true: ArrayOrSequence | None,
    y_pred: ArrayOrSequence,
    groups: ArrayOrSequence,
    *,
    agg: Aggregation = "worst_case",
    method: Comparison = "between_groups",
) -> dict[str, Any]:
    """Spreads of selection rate, TPR and FPR across any number of groups (fairlearn's view).

    Formula: per group g, selection_rate_g = P(y_pred = 1 | g), TPR_g = P(y_pred = 1 |
    y_true = 1, g), FPR_g = P(y_pred = 1 | y_true = 0, g); over the groups where a rate is
    defined, spread(rate) = max - min and ratio(rate) = min / max.
    demographic_parity_difference = spread(selection rate) (`method="between_groups"`) or
    max_g |selection_rate_g - s| with s the selection rate of all items (`"to_overall"`);
    demographic_parity_ratio = ratio(selection rate) (`"between_groups"`) or min_g of
    selection_rate_g / s, inverted where above 1 (`"to_overall"`);
    equalized_odds_difference = max(spread(TPR), spread(FPR)) (`agg="worst_case"`) or their
    mean (`agg="mean"`); equalized_odds_ratio = min(ratio(TPR), ratio(FPR)) (`"worst_case"`)
    or their mean (`"mean"`); equal_opportunity_difference = spread(TPR);
    equal_opportunity_ratio = ratio(TPR). As fairlearn's functions of these names with the
    same `agg` and `method` (the equalized odds and equal opportunity metrics between groups).

    Args:
        y_true: Gold labels (bools or 0/1), one per item; None when there are none (then only
            the selection-rate metrics are computed).
        y_pred: Predictions (bools or 0/1), same length.
        groups: The group of each item (any hashable labels; str(label) names it in the
            result), same length, none missing.
        agg: How equalized odds combines its TPR and FPR parts: "worst_case" or "mean".
        method: What demographic parity compares each group's selection rate with:
            "between_groups" (the other groups) or "to_overall" (all items').

    Returns:
        A dict with the six metrics above (differences in [0, 1], 0 is fair; ratios in
        [0, 1], 1 is fair) and `per_group`: `{str(group): {"selection_rate", "tpr", "fpr",
        "size"}}`, groups in sorted order.

    Undefined: a group's TPR is None without positives and its FPR without negatives, and it
    is left out of the spreads (fairlearn counts it as 0; METRICS.md G.19). A spread or ratio
    is None with fewer than two defined groups (also "to_overall"), a ratio also when its
    denominator (the max, or the overall selection rate) is 0, and an equalized odds metric
    when either of its parts is None. Without y_true every TPR/FPR metric is None.

    Raises:
        ScoringError: Lengths differ, labels that are not bools or 0/1, a missing group (None
            or NaN), two groups with the same name, or an unknown agg or method.

    References:
        Weerts et al. (2023), arXiv:2303.16626 (fairlearn `demographic_parity_difference`,
        `equalized_odds_difference`, ...); Hardt, Price & Srebro (2016), arXiv:1610.02413;
        METRICS.md E and G.19.

    Example:
        >>> m = multigroup_metrics([1, 0, 1, 0, 1, 1], [1, 0, 0, 0, 1, 1], ["a", "a", "b", "b",
        ...                        "c", "c"])
        >>> m["demographic_parity_difference"], m["equal_opportunity_difference"]
        (1.0, 1.0)
        >>> m["per_group"]["c"]
        {'selection_rate': 1.0, 'tpr': 1.0, 'fpr': None, 'size': 2}
        >>> multigroup_metrics(None, [1, 0, 1, 1], ["a", "a", "b", "b"],
        ...                    method="to_overall")["demographic_parity_difference"]
        0.25
    """
    function = "multigroup_metrics"
    check_choice(function, "agg", agg, get_args(Aggregation))
    check_choice(function, "method", method, get_args(Comparison))
    truth, predicted, codes, names = _grouped(function, y_true, y_pred, groups)
    k = len(names)
    size = np.bincount(codes, minlength=k)
    selection = _ratio(np.bincount(codes[predicted], minlength=k), size)
    tpr = fpr = np.full(k, np.nan)
    if truth is not None:
        positives = np.bincount(codes[truth], minlength=k)
        negatives = np.bincount(codes[~truth], minlength=k)
        tpr = _ratio(np.bincount(codes[truth & predicted], minlength=k), positives)
        fpr = _ratio(np.bincount(codes[~truth & predicted], minlength=k), negatives)
    if method == "between_groups":
        parity = (_spread(selection), _min_over_max(selection))
    else:
        parity = _to_overall(selection, float(predicted.mean()) if predicted.size else np.nan)
    combine = max if agg == "worst_case" else _half_sum
    odds_ratio_combine = min if agg == "worst_case" else _half_sum
    return {
        "demographic_parity_difference": parity[0],
        "demographic_parity_ratio": parity[1],
        "equalized_odds_difference": _both(combine, _spread(tpr), _spread(fpr)),
        "equalized_odds_ratio": _both(odds_ratio_combine, _min_over_max(tpr), _min_over_max(fpr)),
        "equal_opportunity_difference": _spread(tpr),
        "equal_opportunity_ratio": _min_over_max(tpr),
        "per_group": {
            name: {
                "selection_rate": _value(selection[i]),
                "tpr": _value(tpr[i]),
                "fpr": _value(fpr[i]),
                "size": int(size[i]),
            }
            for i, name in enumerate(names)
        },
    }


def group_rates(
    y_true: ArrayOrSequence | None,
    y_pred: ArrayOrSequence,
    groups: ArrayOrSequence,
    *,
    confidence_level: float = 0.95,
) -> dict[str, dict[str, Any]]:
    """Per group: its counts, selection rate, TPR and FPR, each with a Wilson interval.

    What the group metrics are differences and spreads of, shown group by group, with how
    sure each rate is on the group's few items.

    Formula: per group g with n_g items: selected_g = #(y_pred = 1), selection_rate_g =
    selected_g / n_g; positives_g = #(y_true = 1), true_positives_g = #(y_true = 1, y_pred =
    1), tpr_g = true_positives_g / positives_g; negatives_g = #(y_true = 0),
    false_positives_g = #(y_true = 0, y_pred = 1), fpr_g = false_positives_g / negatives_g.
    Each `<rate>_interval` is the Wilson score interval of that numerator and denominator
    (`stats.proportions.wilson_intervals`).

    Args:
        y_true: Gold labels (bools or 0/1), one per item; None when there are none (then only
            the selection rate is computed).
        y_pred: Predictions (bools or 0/1), same length.
        groups: The group of each item (any hashable labels; str(label) names it), same
            length, none missing. For the privileged split of `group_metrics`, pass
            "privileged" / "unprivileged" from `privileged_mask`.
        confidence_level: Of the intervals, in (0, 1).

    Returns:
        `{str(group): {"size", "selected", "selection_rate", "selection_rate_interval",
        "positives", "true_positives", "tpr", "tpr_interval", "negatives",
        "false_positives", "fpr", "fpr_interval"}}`, groups sorted as `multigroup_metrics`
        sorts them; rates in [0, 1], intervals `[low, high]`.

    Undefined: a rate and its interval are None on a zero denominator (TPR of a group
    without positives, FPR without negatives); without y_true the gold counts are None too.

    Raises:
        ScoringError: Lengths differ, labels that are not bools or 0/1, a missing group, two
            groups with the same name, or confidence_level outside (0, 1).

    References:
        Hardt, Price & Srebro (2016), arXiv:1610.02413; Wilson (1927),
        doi:10.1080/01621459.1927.10502953; METRICS.md B.2 and E.

    Example:
        >>> r = group_rates([1, 0, 1, 1], [1, 1, 0, 1], ["b", "b", "a", "a"])
        >>> r["a"]["selection_rate"], r["a"]["tpr"], r["a"]["fpr"]
        (0.5, 0.5, None)
        >>> [round(x, 4) for x in r["b"]["selection_rate_interval"]]
        [0.3424, 1.0]
    """
    function = "group_rates"
    check_interval(function, "confidence_level", confidence_level, 0.0, 1.0)
    truth, predicted, codes, names = _grouped(function, y_true, y_pred, groups)

    def count(mask: BoolArray) -> list[int]:
        return [int(c) for c in np.bincount(codes[mask], minlength=len(names))]

    size = count(np.ones(codes.size, dtype=bool))
    found: dict[str, list[Any]] = {"size": size, "selected": count(predicted)}
    found.update(_rate_columns("selection_rate", found["selected"], size, confidence_level))
    for key in ("positives", "true_positives", "negatives", "false_positives"):
        found[key] = [None] * len(names)
    found.update(_rate_columns("tpr", None, None, confidence_level, len(names)))
    found.update(_rate_columns("fpr", None, None, confidence_level, len(names)))
    if truth is not None:
        found["positives"], found["true_positives"] = count(truth), count(truth & predicted)
        found["negatives"], found["false_positives"] = count(~truth), count(~truth & predicted)
        found.update(
            _rate_columns("tpr", found["true_positives"], found["positives"], confidence_level)
        )
        found.update(
            _rate_columns("fpr", found["false_positives"], found["negatives"], confidence_level)
        )
    order = (
        "size", "selected", "selection_rate", "selection_rate_interval", "positives",
        "true_positives", "tpr", "tpr_interval", "negatives", "false_positives", "fpr",
        "fpr_interval",
    )  # fmt: skip
    return {name: {key: found[key][i] for key in order} for i, name in enumerate(names)}


def _rate_columns(
    rate: str,
    top: list[int] | None,
    bottom: list[int] | None,
    confidence_level: float,
    k: int = 0,
) -> dict[str, list[Any]]:
    """`rate` and `<rate>_interval` per group from counts (None throughout without counts)."""
    if top is None or bottom is None:
        return {rate: [None] * k, f"{rate}_interval": [None] * k}
    low, high = wilson_intervals(top, bottom, confidence_level=confidence_level)
    return {
        rate: [t / b if b else None for t, b in zip(top, bottom, strict=True)],
        f"{rate}_interval": [
            None if math.isnan(lo) else [float(lo), float(hi)]
            for lo, hi in zip(low, high, strict=True)
        ],
    }


def average_across_datasets(metric_dicts: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """Mean of each metric over the datasets (or runs) where it is defined.

    Formula: for each key, mean = sum(v_d) / |D_key|, where D_key are the dicts whose value for
    the key is a defined number (not None, not NaN; `inf` is kept and gives `inf`).

    Args:
        metric_dicts: One mapping of metric name to value per dataset, e.g. `group_metrics`
            results. Values that are not numbers or None (nested dicts such as
            `per_variable`, strings, bools) are ignored.

    Returns:
        `{metric: mean}` for every key that holds a number or None in at least one dict, in
        order of first appearance.

    Undefined: None for a metric that no dataset defines. A missing value is skipped, never
    counted as 0 (FAI3's code divides by the number of datasets; METRICS.md G.12).

    Raises:
        ScoringError: metric_dicts is empty or holds something that is not a mapping.

    References:
        FAI3 `llm_fairness.rs calculate_average_fairness_metrics`; METRICS.md B.8, G.12.

    Example:
        >>> average_across_datasets([{"spd": 0.25, "di": None}, {"spd": 0.75, "di": 0.5}])
        {'spd': 0.5, 'di': 0.5}
    """
    function = "average_across_datasets"
    if isinstance(metric_dicts, Mapping) or not isinstance(metric_dicts, Sequence):
        raise ScoringError(
            f"{function}: metric_dicts must be a sequence of mappings; got "
            f"{type(metric_dicts).__name__}."
        )
    if not metric_dicts:
        raise ScoringError(f"{function}: metric_dicts is empty; give one mapping per dataset.")
    found: dict[str, list[float]] = {}
    for position, metrics in enumerate(metric_dicts):
        if not isinstance(metrics, Mapping):
            raise ScoringError(
                f"{function}: metric_dicts[{position}] must be a mapping; got "
                f"{type(metrics).__name__}."
            )
        for key, value in metrics.items():
            if value is None:
                found.setdefault(key, [])
            elif _is_number(value):
                defined = found.setdefault(key, [])
                if not math.isnan(value):
                    defined.append(float(value))
    return {key: (sum(values) / len(values) if values else None) for key, values in found.items()}


# ------------------------------------------------------------------------------ helpers --


def _shown(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _is_number(value: Any) -> bool:
    """A real number that is not a bool (Python or numpy)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _grouped(
    function: str, y_true: ArrayOrSequence | None, y_pred: ArrayOrSequence, groups: ArrayOrSequence
) -> tuple[BoolArray | None, BoolArray, npt.NDArray[np.int64], list[str]]:
    """Checked inputs of the rates per group: gold labels, predictions, group codes, names.

    The gold labels are None when none are given; the names are sorted, as the codes count.
    """
    lengths: dict[str, Any] = {"y_pred": y_pred, "groups": groups}
    if y_true is not None:
        lengths["y_true"] = y_true
    check_same_length(function, **lengths)
    predicted = _binary(function, "y_pred", y_pred)
    truth = None if y_true is None else _binary(function, "y_true", y_true)
    codes, names = _group_codes(function, groups)
    return truth, predicted, codes, names


def _group_codes(function: str, groups: ArrayOrSequence) -> tuple[npt.NDArray[np.int64], list[str]]:
    """Each item's group code and the groups' names (sorted); raise on a missing or clash."""
    (codes,), categories = encode_labels(groups)
    if (codes < 0).any():
        position = int(np.flatnonzero(codes < 0)[0])
        raise ScoringError(
            f"{function}: groups has a missing value (None or NaN) at position {position}; "
            "drop the item or give it a group of its own."
        )
    names = [str(c) for c in categories]
    if len(set(names)) < len(names):
        raise ScoringError(
            f"{function}: groups {categories!r} give the same name twice as strings; "
            "use labels whose str() differ."
        )
    return codes, names


def _binary(function: str, name: str, values: ArrayOrSequence) -> BoolArray:
    """Labels as a boolean array; raise naming the first value that is not a bool or 0/1."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise ScoringError(f"{function}: {name} must be one label per item (a flat sequence).")
    if array.dtype == np.bool_:
        return array
    if array.dtype.kind in "iuf":
        bad = ~((array == 0) | (array == 1))
    else:
        bad = np.array(
            [
                not (isinstance(v, bool | np.bool_) or (_is_number(v) and v in (0, 1)))
                for v in array
            ],
            dtype=bool,
        )
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ScoringError(
            f"{function}: {name} must hold bools or 0/1 (True = positive); got "
            f"{_shown(array[i])!r} at position {i}."
        )
    return (array == 1) if array.dtype.kind in "iuf" else np.array([bool(v) for v in array])


def _numbers(function: str, name: str, values: ArrayOrSequence) -> FloatArray:
    """Feature values as floats with NaN for missing; raise on text or infinite values."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise ScoringError(f"{function}: {name} must be one value per item (a flat sequence).")
    if array.dtype.kind not in "biuf":
        allowed = (numbers.Real, np.bool_, type(None))
        bad = [i for i, v in enumerate(array) if not isinstance(v, allowed)]
        if bad:
            raise ScoringError(
                f"{function}: {name} must hold numbers or None; got "
                f"{_shown(array[bad[0]])!r} at position {bad[0]}."
            )
    x = array.astype(np.float64)
    infinite = np.isinf(x)
    if infinite.any():
        i = int(np.flatnonzero(infinite)[0])
        raise ScoringError(
            f"{function}: {name} must hold finite numbers or None; got {float(x[i])!r} at "
            f"position {i}."
        )
    return x


def _check_threshold(function: str, name: str, value: Any) -> None:
    check_interval(function, name, value, -math.inf, math.inf)


def _check_direction(function: str, name: str, value: Any) -> None:
    if not isinstance(value, bool | np.bool_):
        raise ScoringError(f"{function}: {name} must be True or False; got {value!r}.")


def _threshold_rules(
    function: str,
    features: Mapping[str, Any],
    thresholds: Mapping[str, Any] | None,
) -> dict[str, tuple[float | None, bool]]:
    """(t, greater_than) per variable by the B.1 rules; t None means the midrange rule."""
    if thresholds is None:
        return {name: (None, True) for name in features}
    if not isinstance(thresholds, Mapping):
        raise ScoringError(
            f"{function}: thresholds must map a variable to (threshold, greater_than); got "
            f"{thresholds!r}."
        )
    unknown = [key for key in thresholds if key not in features]
    if unknown:
        raise ScoringError(
            f"{function}: thresholds name {unknown!r}, which are not in features "
            f"({list(features)!r})."
        )
    rules: dict[str, tuple[float | None, bool]] = {}
    for name in features:
        rule = thresholds.get(name, (0.0, True))
        if isinstance(rule, str | bytes) or not isinstance(rule, Sequence) or len(rule) != 2:
            raise ScoringError(
                f"{function}: thresholds[{name!r}] must be (threshold, greater_than); got {rule!r}."
            )
        _check_threshold(function, f"thresholds[{name!r}][0]", rule[0])
        _check_direction(function, f"thresholds[{name!r}][1]", rule[1])
        rules[name] = (float(rule[0]), bool(rule[1]))
    return rules


def _ratio(top: npt.NDArray[Any], bottom: npt.NDArray[Any]) -> FloatArray:
    """Elementwise top / bottom, NaN where bottom is 0."""
    out = np.full(np.shape(top), np.nan)
    np.divide(top, bottom, out=out, where=bottom > 0)
    return out


def _odds(
    group: BoolArray, truth: BoolArray, predicted: BoolArray
) -> tuple[FloatArray, FloatArray]:
    """TPR and FPR of each row of `group` (variables x items), NaN where undefined."""
    hit = predicted & group
    tpr = _ratio((hit & truth).sum(axis=1), (group & truth).sum(axis=1))
    fpr = _ratio((hit & ~truth).sum(axis=1), (group & ~truth).sum(axis=1))
    return tpr, fpr


def _overall(truth: BoolArray, predicted: BoolArray) -> dict[str, float | None]:
    tp = int(np.count_nonzero(truth & predicted))
    fp = int(np.count_nonzero(~truth & predicted))
    fn = int(np.count_nonzero(truth & ~predicted))
    tn = truth.size - tp - fp - fn
    return {
        "accuracy": (tp + tn) / truth.size if truth.size else None,
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
    }


def _value(value: Any) -> float | None:
    return None if np.isnan(value) else float(value)


def _named(names: list[str], values: FloatArray) -> dict[str, float | None]:
    return {name: _value(values[i]) for i, name in enumerate(names)}


def _mean_defined(values: Any) -> float | None:
    """Mean of the values that are neither None nor NaN (inf kept); None if there are none."""
    defined = [v for v in values if v is not None and not math.isnan(v)]
    return sum(defined) / len(defined) if defined else None


def _to_overall(values: FloatArray, overall: float) -> tuple[float | None, float | None]:
    """Max |v - overall| and min v / overall, inverted above 1 (fairlearn's "to_overall").

    Over the defined values, with at least two of them; the ratio is None when overall is 0.
    """
    defined = values[~np.isnan(values)]
    if defined.size < 2:
        return None, None
    difference = float(np.abs(defined - overall).max())
    if overall == 0:
        return difference, None
    ratios = defined / overall
    with np.errstate(divide="ignore"):  # a rate of 0: its ratio is 0, 1 / 0 never the min
        return difference, float(np.minimum(ratios, 1 / ratios).min())


def _both(
    combine: Callable[[float, float], float], first: float | None, second: float | None
) -> float | None:
    """`combine(first, second)`, None when either is None."""
    return None if first is None or second is None else float(combine(first, second))


def _half_sum(first: float, second: float) -> float:
    return (first + second) / 2


def _spread(values: FloatArray) -> float | None:
    defined = values[~np.isnan(values)]
    return float(defined.max() - defined.min()) if defined.size >= 2 else None


def _min_over_max(values: FloatArray) -> float | None:
    defined = values[~np.isnan(values)]
    if defined.size < 2 or defined.max() == 0:
        return None
    return float(defined.min() / defined.max())
