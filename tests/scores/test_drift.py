"""`MetaEvaluator.drift`: two runs of a judge checked against the thresholds.

A judge whose labels shift on half the rows drifts (PSI > 0.25); its steady twin, run again
with a few labels changed, does not. The figures are checked against hand counts and scipy.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest
from scipy.stats import chi2_contingency

from meta_evaluator.errors import (
    MetricConfigError,
    NothingToCompareError,
    ProjectError,
    ProjectFileError,
    UnsafeNameError,
)
from meta_evaluator.scores import BootstrapConfig
from meta_evaluator.scores.drift import DriftThresholds
from tests.scores.monitor_projects import (
    LABELS,
    add_run,
    flipped,
    make_project,
    noisy,
    shifted,
)

FAST = BootstrapConfig(n_resamples=200)


def _majority(humans: list[list[str]]) -> list[str]:
    """The humans' majority per row, a tie to the largest label."""
    out = []
    for row in zip(*humans, strict=True):
        votes = Counter(row)
        out.append(max(votes.items(), key=lambda kv: (kv[1], kv[0]))[0])
    return out


def test_a_judge_whose_labels_shift_on_half_the_rows_drifts(tmp_path: Path) -> None:
    evaluator, truth = make_project(tmp_path, rows=200)
    before = noisy(truth, 0.9, seed=3)
    after = shifted(before, 0.5, to="a", seed=4)
    add_run(evaluator, tmp_path, "j", "mon", before)
    add_run(evaluator, tmp_path, "j", "tue", after)
    check = evaluator.drift("j", bootstrap=FAST)
    assert (check.baseline.run_id, check.against.run_id) == ("mon", "tue")
    assert check.rows == 200 and check.shift.changed == 100 and check.shift.changed_share == 0.5
    counts_before = [before.count(label) for label in LABELS]
    counts_after = [after.count(label) for label in LABELS]
    assert check.shift.labels == LABELS
    assert (check.shift.counts_before, check.shift.counts_after) == (counts_before, counts_after)
    p = [c / 200 for c in counts_before]
    q = [c / 200 for c in counts_after]
    psi = sum((b - a) * math.log(b / a) for a, b in zip(p, q, strict=True))
    assert check.shift.psi == pytest.approx(psi) and check.shift.psi > 0.25
    reference = chi2_contingency([counts_before, counts_after], correction=False)
    assert check.shift.chi_square == pytest.approx(reference.statistic)
    assert check.shift.stuart_maxwell_p_value is not None
    assert check.shift.stuart_maxwell_p_value < 1e-6
    assert check.exceeded == ("max_psi", "max_changed_share", "max_agreement_drop")
    assert check.drifted
    # the agreement: accuracy against the humans' majority, by hand (make_project's humans)
    humans = [noisy(truth, 0.8, seed=10 + index) for index in range(3)]
    majority = _majority(humans)
    watched = check.watched()
    assert watched is not None and watched.name == "accuracy_majority_vote"
    assert watched.a == pytest.approx(sum(map(str.__eq__, before, majority)) / 200)
    assert watched.b == pytest.approx(sum(map(str.__eq__, after, majority)) / 200)
    assert watched.low is not None and watched.high is not None and watched.high < 0
    same = evaluator.compare_runs("mon", "tue", bootstrap=FAST)
    assert same.scores == check.agreement  # the same comparison as compare-runs
    psi_check = next(c for c in check.checks if c.name == "max_psi")
    assert (psi_check.limit, psi_check.exceeded) == (0.1, True)


def test_its_steady_twin_does_not(tmp_path: Path) -> None:
    evaluator, truth = make_project(tmp_path, rows=200)
    before = noisy(truth, 0.9, seed=3)
    add_run(evaluator, tmp_path, "j", "mon", before)
    add_run(evaluator, tmp_path, "j", "tue", flipped(before, 4, seed=1))  # 2% changed
    check = evaluator.drift("j", bootstrap=FAST)
    assert check.shift.changed_share == 0.02
    assert check.shift.psi is not None and check.shift.psi < 0.01
    assert check.exceeded == () and not check.drifted
    assert all(not c.exceeded and c.reason is None for c in check.checks)


def test_the_same_labels_again_change_nothing(tmp_path: Path) -> None:
    evaluator, truth = make_project(tmp_path, rows=60)
    add_run(evaluator, tmp_path, "j", "mon", truth)
    add_run(evaluator, tmp_path, "j", "tue", truth)
    check = evaluator.drift("j", bootstrap=FAST)
    assert (check.shift.changed, check.shift.psi) == (0, 0.0)
    assert check.shift.stuart_maxwell is None  # nothing changed: nothing to test
    assert check.exceeded == ()


def test_runs_are_chosen_by_completion_first_and_latest(tmp_path: Path) -> None:
    evaluator, truth = make_project(tmp_path, rows=60)
    for run in ("zeta", "alpha", "mid"):  # completed in this order; names sort otherwise
        add_run(evaluator, tmp_path, "j", run, truth)
    check = evaluator.drift("j", bootstrap=FAST)
    assert (check.baseline.run_id, check.against.run_id) == ("zeta", "mid")
    check = evaluator.drift("j", baseline="alpha", bootstrap=FAST)
    assert (check.baseline.run_id, check.against.run_id) == ("alpha", "mid")
    check = evaluator.drift("j", baseline="first", against="alpha", bootstrap=FAST)
    assert (check.baseline.run_id, check.against.run_id) == ("zeta", "alpha")
    check = evaluator.drift("j", baseline="mid", against="zeta", bootstrap=FAST)
    assert (check.baseline.run_id, check.against.run_id) == ("mid", "zeta")


def test_thresholds_come_from_project_yaml(tmp_path: Path) -> None:
    evaluator, truth = make_project(tmp_path, rows=200)
    before = noisy(truth, 0.9, seed=3)
    add_run(evaluator, tmp_path, "j", "mon", before)
    add_run(evaluator, tmp_path, "j", "tue", shifted(before, 0.5, seed=4))
    settings = evaluator.project_dir / "project.yaml"
    settings.write_text(
        "drift:\n  max_psi: 5.0\n  max_changed_share: null\n  max_agreement_drop: 0.9\n"
        "  agreement: cohens_kappa_majority_vote\n"
    )
    check = evaluator.drift("j", bootstrap=FAST)
    assert check.exceeded == ()
    assert check.thresholds == DriftThresholds(
        max_psi=5.0, max_changed_share=None, max_agreement_drop=0.9,
        agreement="cohens_kappa_majority_vote",
    )  # fmt: skip
    share = next(c for c in check.checks if c.name == "max_changed_share")
    assert (share.limit, share.value, share.reason) == (None, 0.5, "not set")
    watched = check.watched()
    assert watched is not None and watched.name == "cohens_kappa_majority_vote"
    drop = next(c for c in check.checks if c.name == "max_agreement_drop")
    assert watched.difference is not None and drop.value == pytest.approx(-watched.difference)
    # given from Python, the thresholds win over the file
    strict = DriftThresholds(max_psi=0.0)
    assert evaluator.drift("j", thresholds=strict, bootstrap=FAST).exceeded[0] == "max_psi"
    settings.write_text("drift:\n  max_pis: 0.2\n  max_changed_share: 2\n")
    with pytest.raises(ProjectFileError) as error:
        evaluator.drift("j", bootstrap=FAST)
    assert "drift.max_pis: unknown key 'max_pis'; did you mean 'max_psi'?" in str(error.value)
    assert "drift.max_changed_share" in str(error.value)


def test_without_humans_the_agreement_is_not_checked(tmp_path: Path) -> None:
    evaluator, truth = make_project(tmp_path, rows=60, annotators=())
    add_run(evaluator, tmp_path, "j", "mon", truth)
    add_run(evaluator, tmp_path, "j", "tue", flipped(truth, 3))
    check = evaluator.drift("j", bootstrap=FAST)
    drop = next(c for c in check.checks if c.name == "max_agreement_drop")
    assert drop.value is None and not drop.exceeded
    assert drop.reason == "no human labels were given" == check.human_reason
    assert check.humans == ()


def test_rows_only_one_run_labelled_are_counted_apart(tmp_path: Path) -> None:
    evaluator, truth = make_project(tmp_path, rows=60)
    add_run(evaluator, tmp_path, "j", "mon", truth)
    add_run(evaluator, tmp_path, "j", "tue", truth[:50], ids=list(range(1, 51)))
    check = evaluator.drift("j", bootstrap=FAST)
    assert (check.rows, check.only_in_baseline, check.only_in_against) == (50, 10, 0)


def test_errors_name_what_exists(tmp_path: Path) -> None:
    evaluator, truth = make_project(tmp_path, rows=30)
    with pytest.raises(ProjectError, match=r"judge 'j' has no complete run.*no judge has one yet"):
        evaluator.drift("j")
    add_run(evaluator, tmp_path, "j", "mon", truth)
    with pytest.raises(ProjectError, match=r"judges with one: \['j'\]"):
        evaluator.drift("gpt")
    with pytest.raises(NothingToCompareError, match=r"one complete run \('mon'\)") as one:
        evaluator.drift("j")
    assert one.value.run_id == "mon" and one.value.judge_id == "j"
    assert "run_id='NEW', cache=False" in one.value.message  # a new run: the same id resumes
    add_run(evaluator, tmp_path, "j", "tue", truth)
    with pytest.raises(ProjectError, match=r"against: no run 'wed'.*runs there: \['mon', 'tue'\]"):
        evaluator.drift("j", against="wed")
    with pytest.raises(ProjectError, match="both 'tue'"):
        evaluator.drift("j", baseline="tue")
    with pytest.raises(ProjectError, match="baseline: name a run of judge 'j' by its id alone"):
        evaluator.drift("j", baseline="mon:k")
    with pytest.raises(UnsafeNameError):
        evaluator.drift("../j")
    with pytest.raises(MetricConfigError, match="thresholds must be a DriftThresholds"):
        evaluator.drift("j", thresholds={"max_psi": 0.1})  # type: ignore[arg-type]
    with pytest.raises(
        MetricConfigError,
        match=r"(?s)drift is invalid.*drift.max_psi: Input should be greater than or equal to 0",
    ):
        DriftThresholds(max_psi=-1)
