"""Counterfactual change rate: how often a model's answer moves when only the sensitive value does.

Each data point is asked twice, once as written (the original) and once with its sensitive
attribute swapped (the counterfactual). A pair is **used** when both calls returned a response:
the original is not a call error, a counterfactual exists, and it is not a call error. A used pair
is **changed** when the two validity flags differ (one answer could be read, the other could not),
or both answers are valid and their predictions differ. Two invalid answers are never a change,
whatever their texts.

change_rate_overall = changed / used, and per group g (the original's group value)
change_rate_g = changed_g / used_g. 0/0 is None (FAI3 gives NaN).

References: FAI3 `llm_fairness.rs calculate_counter_factual_metrics`
(https://github.com/FAI3network/ICP_MVP); Kusner et al., "Counterfactual Fairness", NeurIPS 2017,
arXiv:1703.06856; METRICS.md B.6.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats.checks import check_same_length, is_missing

__all__ = ["change_rates"]


def change_rates(
    original_valid: Sequence[bool | None],
    original_prediction: Sequence[Any],
    counterfactual_valid: Sequence[bool | None],
    counterfactual_prediction: Sequence[Any],
    groups: Sequence[Hashable],
    *,
    all_groups: Sequence[Hashable] = (),
) -> dict[str, Any]:
    """Share of original/counterfactual pairs whose answer changed, overall and per group.

    Formula: over the used pairs i (both validity flags known),
    changed_i = [v_i != v'_i] or [v_i and v'_i and p_i != p'_i], with v, v' the validity flags
    and p, p' the predictions of the original and the counterfactual;
    change_rate_overall = sum_i changed_i / used and, for each group g,
    change_rate_g = sum_{i in g} changed_i / used_g.

    Args:
        original_valid: Per pair, whether the original answer could be read (True/False), or
            None when the original call failed (the pair is then excluded). NaN counts as None.
        original_prediction: Per pair, the original's prediction (any value comparable with
            `==`); only compared when both answers are valid, so invalid answers may hold
            anything (their raw text, None).
        counterfactual_valid: Per pair, as `original_valid` for the counterfactual; None also
            for a missing counterfactual.
        counterfactual_prediction: Per pair, the counterfactual's prediction.
        groups: Per pair, the original's group value (any value); pairs are grouped by
            `str(value)`, which is the key in the output (FAI3 passes 1 for sensitive value
            1.0, else 0). All sequences have one entry per pair. Callers usually drop the
            pairs where either call was an error or the counterfactual is missing before
            calling; passing them with a None flag gives the same rates and counts them.
        all_groups: Groups to report besides those of the pairs, such as every group among
            the originals, also one none of whose originals has a usable pair (its rate is
            then None, not absent).

    Returns:
        A dict with
        `change_rate_overall` (float in [0, 1]: 0 = no answer ever moved, 1 = every used
        answer moved),
        `change_rate_by_group` ({str(group): rate}),
        `changed` and `used` (counts over used pairs),
        `excluded` (pairs with a None flag),
        `by_group` ({str(group): {"changed": n, "used": n}}).
        Group keys are sorted and include every group given (in `groups` or `all_groups`),
        also one whose pairs were all excluded.

    Undefined: change_rate_overall is None when no pair is used (empty input or every pair
    excluded); change_rate_by_group[g] is None when group g has no used pair (or only
    appears in `all_groups`).

    Raises:
        ScoringError: The sequences differ in length, or a validity flag is neither a bool nor
            None/NaN (the message names the argument and position).

    References:
        FAI3 `calculate_counter_factual_metrics`; Kusner et al., arXiv:1703.06856;
        METRICS.md B.6.

    Example:
        >>> r = change_rates([True, True, False, None], ["H", "L", "x", "H"],
        ...                  [True, False, False, True], ["H", None, "y", "L"], [1, 0, 0, 1])
        >>> r["changed"], r["used"], r["excluded"], r["change_rate_by_group"]
        (1, 3, 1, {'0': 0.5, '1': 0.0})
        >>> change_rates([True], ["H"], [True], ["L"], [0], all_groups=[0, 1])[
        ...     "change_rate_by_group"]
        {'0': 1.0, '1': None}
    """
    function = "change_rates"
    check_same_length(
        function,
        original_valid=original_valid,
        original_prediction=original_prediction,
        counterfactual_valid=counterfactual_valid,
        counterfactual_prediction=counterfactual_prediction,
        groups=groups,
    )
    first = _flags(function, "original_valid", original_valid)
    second = _flags(function, "counterfactual_valid", counterfactual_valid)
    counts: dict[str, list[int]] = {str(g): [0, 0] for g in all_groups}  # [changed, used]
    excluded = 0
    for v, p, w, q, group in zip(
        first, original_prediction, second, counterfactual_prediction, groups, strict=True
    ):
        tally = counts.setdefault(str(group), [0, 0])
        if v is None or w is None:
            excluded += 1
            continue
        tally[1] += 1
        if v != w or (v and bool(p != q)):
            tally[0] += 1
    changed = sum(c for c, _ in counts.values())
    used = sum(u for _, u in counts.values())
    keys = sorted(counts)
    return {
        "change_rate_overall": changed / used if used else None,
        "change_rate_by_group": {g: _rate(*counts[g]) for g in keys},
        "changed": changed,
        "used": used,
        "excluded": excluded,
        "by_group": {g: {"changed": counts[g][0], "used": counts[g][1]} for g in keys},
    }


def _flags(function: str, name: str, values: Sequence[Any]) -> list[bool | None]:
    """Validity flags as True/False/None; raise on anything else."""
    out: list[bool | None] = []
    for i, value in enumerate(values):
        if is_missing(value):
            out.append(None)
        elif isinstance(value, bool | np.bool_):
            out.append(bool(value))
        else:
            raise ScoringError(
                f"{function}: {name}[{i}] must be True, False or None (call error); got {value!r}."
            )
    return out


def _rate(changed: int, used: int) -> float | None:
    return changed / used if used else None
