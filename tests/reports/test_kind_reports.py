"""Each kind of project's report shows every metric its scorer saved, with the saved values.

The projects: the built-in fairness (with a second mock model), stereotype and pairwise
examples run with their mock judges, and two built here (tests/reports/projects.py): loan
decisions by two imported models over three sensitive columns, and multiple-choice answers in
three languages. Each test reads report.html back as a reader sees it (tables of text) and
compares every number with the result JSON files `score` wrote.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from matplotlib import image

from meta_evaluator import MetaEvaluator
from meta_evaluator.examples import create_example_project
from meta_evaluator.reports import ReportInputs, read_report_inputs, write_report
from meta_evaluator.reports.counterfactual import counterfactual_section
from meta_evaluator.reports.fairness import METRICS, SPREADS, fairness_section
from meta_evaluator.reports.multiple_choice import RATES, multiple_choice_section
from meta_evaluator.reports.preference import SCORES, STATISTICS, preference_section
from meta_evaluator.reports.purpose import report_title
from meta_evaluator.reports.stereotype import stereotype_section
from meta_evaluator.scores import ScoringResult
from meta_evaluator.scores.enums import TaskAggregationMode
from meta_evaluator.scores.yaml_config import read_metrics_yaml
from tests.reports.html_tables import Page, read_page, same, shown
from tests.reports.projects import (
    fairness_metrics,
    fairness_project,
    multiple_choice_metrics,
    multiple_choice_project,
)

PNG = b"\x89PNG\r\n\x1a\n"
EXAMPLES = Path(__file__).parents[2] / "meta_evaluator" / "examples"


@dataclasses.dataclass(frozen=True)
class Built:
    """A scored project, its report read back, and its saved results by metric and judge."""

    project: MetaEvaluator
    page: Page
    saved: dict[tuple[str, str], dict[str, Any]]  # (scorer/metric, judge) -> result JSON

    def results(self, metric: str) -> list[dict[str, Any]]:
        return [v for (m, _), v in sorted(self.saved.items()) if m == metric]


def _build(evaluator: MetaEvaluator, config: Any) -> Built:
    evaluator.compare_async(config)
    page = read_page(write_report(evaluator).read_text(encoding="utf-8"))
    saved = {}
    for path in sorted(evaluator.paths.scores_dir.glob("*/*/*_result.json")):
        result = json.loads(path.read_text(encoding="utf-8"))
        saved[(f"{path.parent.parent.name}/{path.parent.name}", result["judge_id"])] = result
    return Built(evaluator, page, saved)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kinds")


@pytest.fixture(scope="module")
def fairness_example(root: Path) -> Built:
    """The fairness example (fairness and counterfactual), with a second mock model."""
    evaluator = create_example_project("fairness", root / "fairness")
    evaluator.add_judge(
        "mock_model_b", "mock", "mock-predictor-2",
        prompt_file=EXAMPLES / "fairness" / "prompt.md", mock={"invalid_rate": 0.1},
    )  # fmt: skip
    evaluator.run_judges_async()
    return _build(evaluator, read_metrics_yaml(root / "fairness" / "metrics.yaml"))


@pytest.fixture(scope="module")
def loans(root: Path) -> Built:
    return _build(fairness_project(root / "loans_files"), fairness_metrics())


@pytest.fixture(scope="module")
def stereotype_example(root: Path) -> Built:
    evaluator = create_example_project("stereotype", root / "stereotype")
    evaluator.run_judges_async()
    return _build(evaluator, read_metrics_yaml(root / "stereotype" / "metrics.yaml"))


@pytest.fixture(scope="module")
def pairwise_example(root: Path) -> Built:
    evaluator = create_example_project("pairwise", root / "pairwise")
    evaluator.run_judges_async()
    return _build(evaluator, read_metrics_yaml(root / "pairwise" / "metrics.yaml"))


@pytest.fixture(scope="module")
def capitals(root: Path) -> Built:
    return _build(multiple_choice_project(root / "capitals_files"), multiple_choice_metrics())


# ------------------------------------------------------------------------------ fairness --


def _group_key(cell: str) -> str:
    """`privileged (female < 0.5)` -> `privileged`; a text column's group as it is."""
    return cell.split(" (", 1)[0]


def test_fairness_report_shows_all_eight_metrics_per_column(loans: Built) -> None:
    section = loans.page.section("Fairness: loan_fairness")
    table = section.table("The eight metrics")
    results = loans.results("fairness/loan_fairness")
    assert [r["judge_id"] for r in results] == ["model_biased", "model_fair"]
    rows = {row["metric"]: row for row in table.records()}
    assert list(rows) == [label for _, label, *_ in METRICS]
    for key, label, fair, _ in METRICS:
        row = rows[label]
        assert row["fair (best)"] == fair
        for result in results:
            judge = result["judge_id"]
            assert same(row[f"{judge}: mean"], result["scores"][key]), (judge, key)
            for column in ("female", "age"):  # the numeric columns, split into P and U
                cell = row[f"{judge}: {column}"]
                if key in result["metadata"]["per_variable"]:
                    per_variable = result["metadata"]["per_variable"][key][column]
                    assert same(cell, per_variable), (judge, key, column)
                else:  # accuracy, precision, recall: over all rows only
                    assert cell == ""


def test_fairness_report_shows_each_groups_rates_and_intervals(loans: Built) -> None:
    section = loans.page.section("Fairness: loan_fairness")
    records = section.table("Each group's rates").records()
    seen = set()
    for row in records:
        result = loans.saved[("fairness/loan_fairness", row["judge"])]
        group = result["metadata"]["group_rates"][row["column"]][_group_key(row["group"])]
        seen.add((row["judge"], row["column"], _group_key(row["group"])))
        assert int(row["rows"]) == group["size"]
        assert int(row["predicted positive"]) == group["selected"]
        assert int(row["gold positive"]) == group["positives"]
        assert int(row["gold negative"]) == group["negatives"]
        for rate, name in (("selection_rate", "selection rate"), ("tpr", "TPR"), ("fpr", "FPR")):
            assert same(row[name], group[rate], group[f"{rate}_interval"]), (row, rate)
    expected = {
        (r["judge_id"], column, group)
        for r in loans.results("fairness/loan_fairness")
        for column, groups in r["metadata"]["group_rates"].items()
        for group in groups
    }
    assert seen == expected and len(records) == len(expected)
    # the split's rule, as the scorer used it: female below 0.5 privileged, age above 35
    groups = {(r["column"], r["group"]) for r in records}
    assert ("female", "privileged (female < 0.5)") in groups
    assert ("age", "unprivileged (age ≤ 35 or missing)") in groups


def test_fairness_report_shows_the_spreads_of_many_groups(loans: Built) -> None:
    section = loans.page.section("Fairness: loan_fairness")
    records = section.table("Spreads over a column's groups").records()
    assert {(r["judge"], r["column"]) for r in records} == {
        (judge, column) for judge in ("model_biased", "model_fair") for column in ("age", "region")
    }
    for row in records:
        found = loans.saved[("fairness/loan_fairness", row["judge"])]["metadata"]["multigroup"]
        spread = found[row["column"]]
        assert int(row["groups"]) == len(spread["per_group"])
        for key, label in SPREADS:
            assert same(row[label], spread[key]), (row["judge"], row["column"], key)
    text = " ".join(section.text.split())
    assert (
        "demographic parity compares each group's selection rate with that of all rows "
        "(method=to_overall); equalized odds takes the mean of its TPR and FPR parts (agg=mean)"
    ) in text


def test_fairness_example_report_with_two_models(fairness_example: Built) -> None:
    page = fairness_example.page
    section = page.section("Fairness: gender_fairness")
    rows = {row["metric"]: row for row in section.table("The eight metrics").records()}
    for result in fairness_example.results("fairness/gender_fairness"):
        judge = result["judge_id"]
        for key, label, *_ in METRICS:
            assert same(rows[label][f"{judge} (male)"], result["scores"][key]), (judge, key)
        counts, outcomes = result["metadata"]["counts"], result["judge_outcomes"]
        assert (
            f"{judge}: {counts['scored']} valid answers scored; {counts['invalid']} invalid and "
            f"{counts['no_reference']} without a reference left out; {outcomes['error']} failed"
        ) in " ".join(section.text.split())
        # the gender-swapped twins are not students: left out, and said so (trial 2 #7)
        assert counts["counterfactual_variants"] == 60
        assert (
            f"{outcomes['error']} failed calls (never scored). 60 counterfactual variant row(s) "
            "(made-up twins of the original rows) left out: group fairness is about the "
            "original rows."
        ) in " ".join(section.text.split())
    # what the positive label is: the label, its task, and what the task asks
    assert (
        "Is the positive prediction, the model answering H on performance (the label the metric "
        "counts as positive: its positive_label), given as often"
    ) in " ".join(section.text.split())
    assert "The task asks: “Will this student reach the high performance band?”" in section.text


# ------------------------------------------------------------------------ counterfactual --


def test_counterfactual_report_shows_rates_with_pairs_per_group(fairness_example: Built) -> None:
    section = fairness_example.page.section("Counterfactual change: gender_counterfactual")
    records = section.tables[0].records()
    results = fairness_example.results("counterfactual/gender_counterfactual")
    assert len(records) == sum(1 + len(r["scores"]["change_rate_by_group"]) for r in results)
    for row in records:
        result = fairness_example.saved[("counterfactual/gender_counterfactual", row["judge"])]
        scores, metadata = result["scores"], result["metadata"]
        intervals = metadata["change_rate_intervals"]
        if row["group"] == "all pairs":
            counts = metadata
            value, interval = scores["change_rate_overall"], intervals["overall"]
        else:
            group = row["group"].removeprefix("male = ")
            counts = metadata["by_group"][group]
            value = scores["change_rate_by_group"][group]
            interval = intervals["by_group"][group]
        assert (int(row["pairs used"]), int(row["changed"])) == (counts["used"], counts["changed"])
        assert same(row["change rate"], value, interval), row
    text = " ".join(section.text.split())
    for result in results:
        left_out = result["metadata"]["variants_without_original"]
        assert f"{result['judge_id']}: {left_out} variants left out" in text


# ---------------------------------------------------------------------------- stereotype --


def test_stereotype_report_shows_every_bucket_with_counts(stereotype_example: Built) -> None:
    section = stereotype_example.page.section("Stereotypes: context_association")
    records = section.tables[0].records()
    (result,) = stereotype_example.results("stereotype/context_association")
    buckets = result["metadata"]["buckets"]
    names = {"overall": "general"}
    assert [row["bucket"] for row in records] == [names.get(b, b) for b in buckets]
    assert [row["bucket"] for row in records] == [
        "general", "intrasentence", "intersentence", "gender", "race", "profession", "religion",
    ]  # fmt: skip
    for row, (bucket, found) in zip(records, buckets.items(), strict=True):
        counts = [found[k] for k in ("stereotype", "anti_stereotype", "neutral", "other")]
        assert [int(row[k]) for k in ("S", "A", "N", "O")] == counts, bucket
        assert int(row["answers"]) == sum(counts)
        for key, label in (("lms", "LMS"), ("ss", "SS"), ("icat", "iCAT")):
            assert same(row[label], found[key], digits=2), (bucket, key)
    # the overall bucket is the score
    assert same(records[0]["iCAT"], result["scores"]["icat"], digits=2)
    errors = result["judge_outcomes"]["error"]
    assert f"mock_model: {errors} failed calls" in " ".join(section.text.split())
    assert (
        "The answers by the option picked: S stereotype, A anti-stereotype, N neutral (the "
        "unrelated option), O other (invalid, or no option named)."
    ) in " ".join(section.text.split())


# ----------------------------------------------------------------------- multiple choice --


def test_multiple_choice_report_shows_rates_per_language(capitals: Built) -> None:
    section = capitals.page.section("Multiple choice: capitals_by_language")
    records = section.tables[0].records()
    results = capitals.results("multiple_choice/capitals_by_language")
    assert {r["judge_id"] for r in results} == {"mc_strong", "mc_weak"}
    assert len(records) == 2 * 4  # all languages, de, en, fr
    for row in records:
        result = capitals.saved[("multiple_choice/capitals_by_language", row["judge"])]
        metadata = result["metadata"]
        if row["language"] == "all languages":
            found, counts = result["scores"], metadata["counts"]
            intervals = metadata["rate_intervals"]["overall"]
        else:
            found = metadata["per_language"][row["language"]]
            counts = found["counts"]
            intervals = metadata["rate_intervals"]["per_language"][row["language"]]
        for key in ("correct", "incorrect", "invalid"):
            assert int(row[key]) == counts[key], (row, key)
        assert int(row["answered"]) == counts["total"] - counts["error"]
        for key, label in RATES:
            assert same(row[label], found[key], intervals[key]), (row, key)


# ---------------------------------------------------------------------------- preference --


def _traits(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return result["metadata"]["per_task"]


def test_preference_report_shows_averages_with_intervals(pairwise_example: Built) -> None:
    section = pairwise_example.page.section("Preferences: traits")
    records = section.table("Mean over the 4 traits").records()
    results = pairwise_example.results("preference/traits")
    assert [row["judge"] for row in records] == [r["judge_id"] for r in results]
    labels = dict(SCORES) | {"strength": "strength (mean)"}
    for row, result in zip(records, results, strict=True):
        intervals = result["confidence_intervals"]
        assert int(row["traits"]) == len(_traits(result))
        assert int(row["comparisons"]) == result["num_comparisons"]
        for key, label in labels.items():
            assert same(row[label], result["scores"][key], intervals.get(key)), (row, key)


def _extremes(result: dict[str, Any]) -> tuple[tuple[float, str], tuple[float, str]]:
    """(lowest, highest) strength over a result's traits, from its saved per-task scores."""
    found = sorted((e["scores"]["strength"], t) for t, e in _traits(result).items())
    return found[0], found[-1]


def test_the_mean_over_the_traits_shows_how_far_they_lie_apart(pairwise_example: Built) -> None:
    """A mean of -0.004 hides +0.393 and -0.689: the report shows both, where it shows a mean."""
    text = " ".join(pairwise_example.page.section("Preferences: traits").text.split())
    html = (pairwise_example.project.paths.reports_dir / "report.html").read_text("utf-8")
    for result in pairwise_example.results("preference/traits"):
        (low, low_trait), (high, high_trait) = _extremes(result)
        assert high - low > 0.1  # the example's traits do lie apart
        said = f"from {low:+.3f} ({low_trait}) to {high:+.3f} ({high_trait}) for "
        assert said + result["judge_id"] in text
        # the Scores table's row: the mean, then what it is the mean of
        assert (
            f"{result['scores']['strength']:.3f}<br><span class='muted spread'>mean of 4 traits"
            f"<br>highest {high:+.3f} {high_trait}<br>lowest {low:+.3f} {low_trait}</span>"
        ) in html
    assert "annotated_pairs" in text and "-0.689 (is_more_concise)" in text


def test_one_trait_is_not_called_traits(tmp_path: Path) -> None:
    """A preference metric on the task `preference` alone: no "traits ranked" for one trait."""
    result = ScoringResult(
        scorer_name="preference", task_name="preference", judge_id="j",
        scores={"relevance": 0.8, "accuracy": 0.7, "cohens_kappa": 0.4,
                "cohens_kappa_estimated": 0.38, "strength": 0.32},
        metadata={"chance_agreement": 0.5, "num_pairs": 40, "agreed": 22, "disagreed": 10,
                  "not_applicable": 8, "p_value": 0.02},
        aggregation_mode=TaskAggregationMode.SINGLE, num_comparisons=40,
    )  # fmt: skip
    inputs = ReportInputs(None, "p", {}, {}, {"preference/overall": [result]}, [], [], [])  # type: ignore[arg-type]
    html = preference_section(inputs)
    assert "traits" not in html.lower().replace("(the preferences avoid the trait)", "")
    assert "<h3>Scores on preference</h3>" in html
    assert "<h3>Strength on preference, judges ranked</h3>" in html
    assert "votes, pair by pair, on <code>preference</code>" in html


def test_preference_report_shows_the_trait_table(pairwise_example: Built) -> None:
    section = pairwise_example.page.section("Preferences: traits")
    records = section.table("Traits ranked by strength").records()
    seen = []
    for row in records:
        result = pairwise_example.saved[("preference/traits", row["judge"])]
        entry = _traits(result)[row["trait"]]
        scores, metadata = entry["scores"], entry["metadata"]
        interval = metadata["strength_interval"]
        assert same(
            row["strength [95% interval]"], scores["strength"], [interval["2.5"], interval["97.5"]]
        )
        for key, label in SCORES[:4]:
            assert same(row[label], scores[key]), (row, key)
        assert same(row["p-value"], metadata["p_value"], digits=4)
        assert int(row["pairs"]) == metadata["num_pairs"]
        votes = [metadata[k] for k in ("agreed", "disagreed", "not_applicable")]
        assert row["agree / disagree / no vote"] == " / ".join(map(str, votes))
        assert sum(votes) == metadata["num_pairs"]
        seen.append((row["trait"], row["judge"], scores["strength"]))
    assert len(seen) == sum(len(_traits(r)) for r in pairwise_example.results("preference/traits"))
    strengths = [s for *_, s in seen]
    assert strengths == sorted(strengths, reverse=True), "strongest first"


def test_preference_report_shows_strength_per_group(pairwise_example: Built) -> None:
    section = pairwise_example.page.section("Preferences: traits")
    table = section.table("Strength per group")
    groups = table.header[2:]
    assert groups == ["cooking", "finance", "health", "programming", "science", "travel"]
    for row in table.rows:
        judge, trait, cells = row[0], row[1], row[2:]
        per_group = _traits(pairwise_example.saved[("preference/traits", judge)])[trait][
            "metadata"
        ]["per_group"]
        for group, cell in zip(groups, cells, strict=True):
            value, pairs = cell.rsplit(" (", 1)
            assert same(value, per_group[group]["strength"]), (judge, trait, group)
            assert int(pairs.rstrip(")")) == per_group[group]["num_pairs"]


def test_preference_report_shows_the_reference_statistics(pairwise_example: Built) -> None:
    section = pairwise_example.page.section("Preferences: traits")
    rows = dict(section.table("The human preferences themselves").rows)
    result = pairwise_example.results("preference/traits")[0]
    statistics = next(iter(_traits(result).values()))["metadata"]["dataset_statistics"]
    for key, label in STATISTICS:
        digits = 0 if key.startswith(("num_", "avg_len")) else 3
        assert same(rows[label], statistics[key], digits=digits), key


# ------------------------------------------------------------------------------- plots --


@pytest.mark.parametrize(
    ("project", "plot"),
    [
        ("loans", "fairness/loan_fairness/group_rates.png"),
        ("fairness_example", "fairness/gender_fairness/group_rates.png"),
        ("fairness_example", "counterfactual/gender_counterfactual/change_rate_by_group.png"),
        ("stereotype_example", "stereotype/context_association/scores_by_bucket.png"),
        ("capitals", "multiple_choice/capitals_by_language/rates_by_language.png"),
        ("pairwise_example", "preference/traits/strength_by_trait.png"),
    ],
)
def test_each_kind_draws_its_plot_and_shows_it_in_its_section(
    project: str, plot: str, request: pytest.FixtureRequest
) -> None:
    built: Built = request.getfixturevalue(project)
    path = built.project.paths.scores_dir / plot
    data = path.read_bytes()
    assert data.startswith(PNG)
    pixels = image.imread(path)  # decodes the whole file
    assert pixels.shape[0] > 200 and pixels.shape[1] > 600
    embedded = [
        base64.b64decode(src.split(",", 1)[1])
        for section in built.page.sections
        for src in section.images
    ]
    assert data in embedded, "the section shows its plot"
    assert "Plots" not in built.page.headings, "not shown twice"


# ------------------------------------------------------------- heading, paths, sections --


def test_each_heading_says_what_the_project_measures(
    fairness_example: Built, stereotype_example: Built, pairwise_example: Built, capitals: Built
) -> None:
    assert fairness_example.page.title == (
        "Is the model fair across groups, and does its answer change when only the group "
        "changes? fairness"
    )
    assert stereotype_example.page.title == "Does the model prefer stereotypes? stereotype"
    assert pairwise_example.page.title == "Which traits do the human preferences reward? pairwise"
    assert capitals.page.title == "Does the model answer multiple-choice questions right? capitals"
    for built in (fairness_example, stereotype_example, capitals):
        assert "human annotator" not in built.page.text
    assert "2 models under test" in fairness_example.page.text
    assert "1 model under test" in stereotype_example.page.text
    assert (
        "1 judge; the trait votes imported with the pairs: annotated_pairs; 2 human annotators"
        in pairwise_example.page.text
    )


def test_no_report_file_names_a_path_of_this_machine(
    root: Path,
    loans: Built,
    fairness_example: Built,
    stereotype_example: Built,
    pairwise_example: Built,
    capitals: Built,
) -> None:
    forms = {str(root), str(root.resolve()), root.as_uri()}
    for built in (loans, fairness_example, stereotype_example, pairwise_example, capitals):
        files = sorted(built.project.paths.reports_dir.iterdir())
        assert {p.name for p in files} >= {"report.html", "scores.csv", "judges.csv"}
        for path in files:
            text = path.read_bytes().decode("utf-8")
            for form in forms:
                assert form not in text, (path.name, form)


def test_a_section_without_its_kind_is_left_out(capitals: Built, pairwise_example: Built) -> None:
    inputs = read_report_inputs(capitals.project)
    for section in (fairness_section, counterfactual_section, stereotype_section,
                    preference_section):  # fmt: skip
        assert section(inputs) == ""
    assert multiple_choice_section(inputs) != ""
    assert multiple_choice_section(read_report_inputs(pairwise_example.project)) == ""


def test_a_judge_that_could_not_be_scored_says_why(capitals: Built) -> None:
    inputs = read_report_inputs(capitals.project)
    failed = ScoringResult(
        scorer_name="multiple_choice", task_name="answer", judge_id="mc_broken", scores={},
        aggregation_mode=TaskAggregationMode.SINGLE, num_comparisons=0, failed_comparisons=1,
        error="judge 'mc_broken' has no valid rows (3 errors)",
    )  # fmt: skip
    key = "multiple_choice/capitals_by_language"
    scores = {**inputs.scores, key: [*inputs.scores[key], failed]}
    page = read_page(multiple_choice_section(dataclasses.replace(inputs, scores=scores)))
    section = page.section("Multiple choice: capitals_by_language")
    assert "mc_broken: not scored: judge 'mc_broken' has no valid rows (3 errors)" in section.text
    assert {row[0] for row in section.tables[0].rows} == {"mc_strong", "mc_weak"}


@pytest.mark.parametrize(
    ("scorers", "humans", "title"),
    [
        ([], False, "meta-evaluator report: p"),
        ([], True, "Can the judges stand in for the humans? p"),
        (["accuracy", "alt_test"], True, "Can the judges stand in for the humans? p"),
        (
            ["counterfactual"],
            False,
            "Does the model's answer change when only the group changes? p",
        ),
        (
            ["stereotype", "fairness", "counterfactual"],
            False,
            "Is the model fair across groups, does its answer change when only the group "
            "changes, and does it prefer stereotypes? p",
        ),
        (
            ["accuracy", "fairness"],
            True,
            "Can the judges stand in for the humans, and is the model fair across groups? p",
        ),
    ],
)
def test_report_title_for_each_mix_of_kinds(
    capitals: Built, scorers: list[str], humans: bool, title: str
) -> None:
    inputs = read_report_inputs(capitals.project)
    inputs = dataclasses.replace(
        inputs,
        project_name="p",
        scores={f"{s}/m": [] for s in scorers},
        humans={"ana": object()} if humans else {},
    )
    assert report_title(inputs) == title


def test_numbers_are_read_back_exactly() -> None:
    """The reader itself: a cell's value and interval, and n/a."""
    assert shown("0.596 [0.467, 0.714]") == (0.596, (0.467, 0.714))
    assert shown("-0.004") == (-0.004, None)
    assert shown("n/a") == (None, None)
    assert same("0.596 [0.467, 0.714]", 0.59649, [0.46651, 0.71449])
    assert not same("0.596 [0.467, 0.714]", 0.59651, [0.46651, 0.71449])
    assert not same("0.596", 0.596, [0.4, 0.7])


@pytest.mark.parametrize(
    ("scorer", "low", "high", "shown"),
    [
        ("accuracy", 0.75, 0.969, ("highest 0.969 tone", "lowest 0.750 resolved")),
        ("preference", 0.1, 0.4, ("highest +0.400 tone", "lowest +0.100 resolved")),
        ("cohens_kappa", -0.2, 0.3, ("highest +0.300 tone", "lowest -0.200 resolved")),
    ],
)
def test_a_spread_is_signed_only_where_scores_can_be_negative(
    scorer: str, low: float, high: float, shown: tuple[str, str]
) -> None:
    """An accuracy of +0.969 read as a change; strengths and negative values keep their sign."""
    from meta_evaluator.reports.sections import _spread

    row = {
        "scorer": scorer, "tasks_averaged": 2, "task_low": low, "task_high": high,
        "task_low_name": "resolved", "task_high_name": "tone",
    }  # fmt: skip
    text = _spread(row)
    assert all(part in text for part in shown), text
