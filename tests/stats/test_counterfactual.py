"""`meta_evaluator.stats.counterfactual.change_rates` against a reference written here from the
text of METRICS.md B.6 (FAI3 `llm_fairness.rs calculate_counter_factual_metrics`), and hand
cases."""

from __future__ import annotations

import doctest
import random
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from meta_evaluator.errors import ScoringError
from meta_evaluator.stats import counterfactual
from meta_evaluator.stats.counterfactual import change_rates

SEEDS = range(10)
GROUP_VALUES: list[Any] = [0, 1, 1.0, "female", None]


# --------------------------------------------------------------------------- reference --


def reference(
    ov: list[Any],
    op: list[Any],
    cv: list[Any],
    cp: list[Any],
    groups: list[Any],
    all_groups: tuple[Any, ...] | list[Any] = (),
) -> dict[str, Any]:
    """METRICS.md B.6 read literally: keep the pairs whose two calls both succeeded; a kept
    pair changed iff the validity flags differ or both are valid with different predictions;
    rates are changed/used overall and per group (key str(group)), None for 0/0; every group
    of `groups` or `all_groups` is listed."""
    kept = [i for i in range(len(ov)) if ov[i] is not None and cv[i] is not None]

    def is_changed(i: int) -> bool:
        if ov[i] != cv[i]:
            return True
        return ov[i] is True and cv[i] is True and op[i] != cp[i]

    def rate(members: list[int]) -> float | None:
        if not members:
            return None
        return float(Fraction(sum(is_changed(i) for i in members), len(members)))

    names = sorted({str(g) for g in [*groups, *all_groups]})
    members = {name: [i for i in kept if str(groups[i]) == name] for name in names}
    return {
        "change_rate_overall": rate(kept),
        "change_rate_by_group": {name: rate(members[name]) for name in names},
        "changed": sum(is_changed(i) for i in kept),
        "used": len(kept),
        "excluded": len(ov) - len(kept),
        "by_group": {
            name: {"changed": sum(is_changed(i) for i in members[name]), "used": len(members[name])}
            for name in names
        },
    }


def random_pairs(seed: int) -> tuple[list[Any], ...]:
    """Random pairs: flags True/False/None; valid answers H/L, invalid ones free text."""
    rng = random.Random(seed)
    n = rng.randrange(0, 80)
    ov = [rng.choice([True, True, False, None]) for _ in range(n)]
    cv = [rng.choice([True, True, False, None]) for _ in range(n)]
    op = [rng.choice("HL") if v else rng.choice(["?", "maybe", None]) for v in ov]
    cp = [rng.choice("HL") if v else rng.choice(["?", "maybe", None]) for v in cv]
    groups = [rng.choice(GROUP_VALUES) for _ in range(n)]
    return ov, op, cv, cp, groups


# --------------------------------------------------------------------------- tests --


@pytest.mark.parametrize("seed", SEEDS)
def test_matches_reference_on_random_pairs(seed: int) -> None:
    """Reference: `reference` above, written from METRICS.md B.6; compared exactly."""
    ov, op, cv, cp, groups = random_pairs(seed)
    assert change_rates(ov, op, cv, cp, groups) == reference(ov, op, cv, cp, groups)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_group_given_is_listed_none_without_a_used_pair(seed: int) -> None:
    """`all_groups` (say every original's group) adds groups without any pair, or whose
    pairs all failed: listed with rate None and counts 0, the rest as without it."""
    ov, op, cv, cp, groups = random_pairs(seed)
    extra = ["nobody", 0, "female", 7.5]
    found = change_rates(ov, op, cv, cp, groups, all_groups=extra)
    assert found == reference(ov, op, cv, cp, groups, extra)
    for name in ("nobody", "7.5"):
        assert found["change_rate_by_group"][name] is None
        assert found["by_group"][name] == {"changed": 0, "used": 0}
    plain = change_rates(ov, op, cv, cp, groups)
    assert {k: v for k, v in found["change_rate_by_group"].items() if k in plain[
        "change_rate_by_group"]} == plain["change_rate_by_group"]  # fmt: skip


@pytest.mark.parametrize("seed", SEEDS)
def test_order_of_pairs_does_not_matter(seed: int) -> None:
    """Reference: B.6 rates are counts over pairs, so shuffling the pairs changes nothing."""
    columns = random_pairs(seed)
    order = list(range(len(columns[0])))
    random.Random(seed + 100).shuffle(order)
    shuffled = [[column[i] for i in order] for column in columns]
    assert change_rates(*shuffled) == change_rates(*columns)


def test_validity_flip_is_a_change() -> None:
    """Reference: B.6, "the two validity flags differ" -> changed, in either direction."""
    r = change_rates([True, False], ["H", "garbage"], [False, True], ["garbage", "H"], [0, 0])
    assert (r["changed"], r["used"], r["change_rate_overall"]) == (2, 2, 1.0)


def test_two_invalid_answers_with_different_texts_are_no_change() -> None:
    """Reference: B.6, "Two invalid answers with different texts are not a change"."""
    r = change_rates([False], ["I cannot say"], [False], ["Unsure"], [1])
    assert (r["changed"], r["used"], r["change_rate_overall"]) == (0, 1, 0.0)


def test_both_valid_same_prediction_is_no_change_different_is_one() -> None:
    """Reference: B.6, both valid: changed iff the predictions differ."""
    r = change_rates([True, True], ["H", "H"], [True, True], ["H", "L"], ["a", "b"])
    assert r["change_rate_by_group"] == {"a": 0.0, "b": 1.0}
    assert r["by_group"] == {"a": {"changed": 0, "used": 1}, "b": {"changed": 1, "used": 1}}
    assert r["change_rate_overall"] == 0.5


def test_groups_keyed_by_string_value_and_fai3_binarisation() -> None:
    """Reference: hand count; FAI3's B.6 grouping (sensitive == 1.0 -> 1 else 0) passed in."""
    sensitive = [1.0, 0.0, 1.0, 2.0, 1.0]
    groups = [1 if s == 1.0 else 0 for s in sensitive]
    ov = [True, True, True, True, False]
    cv = [True, True, False, True, False]
    op = ["H", "L", "H", "H", "x"]
    cp = ["L", "L", "?", "H", "y"]
    r = change_rates(ov, op, cv, cp, groups)
    # group 1: pairs 0 (H->L, changed), 2 (valid->invalid, changed), 4 (both invalid, not)
    # group 0: pairs 1 (L->L), 3 (H->H): no change
    assert r["by_group"] == {"0": {"changed": 0, "used": 2}, "1": {"changed": 2, "used": 3}}
    assert r["change_rate_by_group"] == {"0": 0.0, "1": 2 / 3}
    assert (r["changed"], r["used"], r["excluded"]) == (2, 5, 0)
    assert r["change_rate_overall"] == 0.4


def test_empty_input_gives_none_rates() -> None:
    """Reference: B.6 adopted, 0/0 -> null."""
    assert change_rates([], [], [], [], []) == {
        "change_rate_overall": None,
        "change_rate_by_group": {},
        "changed": 0,
        "used": 0,
        "excluded": 0,
        "by_group": {},
    }


def test_none_validity_is_an_error_pair_and_excluded() -> None:
    """Reference: B.6, a pair is used only when neither call is an error and the
    counterfactual exists; here the whole of group "b" is excluded, so its rate is None."""
    r = change_rates(
        [True, None, True, True],
        ["H", None, "H", "H"],
        [True, True, None, False],
        ["L", "L", None, "?"],
        ["a", "a", "b", "a"],
    )
    assert (r["changed"], r["used"], r["excluded"]) == (2, 2, 2)
    assert r["change_rate_by_group"] == {"a": 1.0, "b": None}
    assert r["by_group"]["b"] == {"changed": 0, "used": 0}


def test_nan_validity_counts_as_error_and_numpy_bools_are_flags() -> None:
    """Reference: hand count; NaN is a missing flag as None is, numpy bools are bools."""
    ov = list(np.array([True, False, True]))
    assert isinstance(ov[0], np.bool_)
    cv: list[Any] = [True, float("nan"), True]
    r = change_rates(ov, ["H", "x", "H"], cv, ["H", "", "L"], [0, 0, 0])
    assert (r["changed"], r["used"], r["excluded"]) == (1, 2, 1)


def test_length_mismatch_raises() -> None:
    """Reference: STYLE.md S1, lengths checked through `check_same_length`."""
    with pytest.raises(ScoringError, match=r"change_rates: .*groups has 1"):
        change_rates([True, True], ["H", "H"], [True, True], ["H", "H"], [0])


@pytest.mark.parametrize("flag", ["yes", 1, 0.0])
def test_non_boolean_flag_raises_naming_argument_and_position(flag: Any) -> None:
    """Reference: STYLE.md S1, the error names function, argument and value."""
    with pytest.raises(ScoringError, match=r"change_rates: counterfactual_valid\[1\]"):
        change_rates([True, True], ["H", "H"], [True, flag], ["H", "H"], [0, 0])


def test_docstring_examples() -> None:
    """Reference: the module's own doctests (STYLE.md rule 16)."""
    result = doctest.testmod(counterfactual)
    assert result.failed == 0
    assert result.attempted > 0
