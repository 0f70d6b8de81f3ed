"""The report: self-contained HTML and tables that say what the saved scores say."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.errors import StateError
from meta_evaluator.reports import load_scores, write_report
from tests.reports.projects import scored_example


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> MetaEvaluator:
    """The pairwise example, run with its mock judge and scored with its metrics.yaml."""
    return scored_example("pairwise", tmp_path_factory.mktemp("report") / "pairwise")


def test_report_files_are_written(scored: MetaEvaluator, tmp_path: Path) -> None:
    page = write_report(scored, tmp_path)
    assert page == tmp_path / "report.html"
    for name in ("report.html", "scores.csv", "scores.md", "judges.csv", "judges.md"):
        assert (tmp_path / name).is_file(), name


def test_html_is_self_contained_with_every_plot(scored: MetaEvaluator, tmp_path: Path) -> None:
    text = write_report(scored, tmp_path).read_text(encoding="utf-8")
    plots = sorted(scored.paths.scores_dir.glob("*/*/*.png"))
    assert plots, "the example draws plots"
    assert text.count("src='data:image/png;base64,") == len(plots)
    assert not re.search(r"(src|href)=['\"]https?://", text), "nothing loads from the network"
    assert "<script" not in text


def test_scores_table_equals_the_saved_results(scored: MetaEvaluator, tmp_path: Path) -> None:
    write_report(scored, tmp_path)
    with (tmp_path / "scores.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    saved = {
        (
            p.parent.parent.name + "/" + p.parent.name,
            json.loads(p.read_text())["judge_id"],
        ): json.loads(p.read_text())
        for p in scored.paths.scores_dir.glob("*/*/*_result.json")
    }
    assert len(rows) == len(saved)
    for row in rows:
        result = saved[(row["metric"], row["judge"])]
        assert float(row["score"]) == pytest.approx(result["scores"]["strength"], abs=1e-12)
        low, high = result["confidence_intervals"]["strength"]
        assert float(row["low"]) == pytest.approx(low) and float(row["high"]) == pytest.approx(high)


def test_judge_table_counts_outcomes_and_tokens(scored: MetaEvaluator, tmp_path: Path) -> None:
    write_report(scored, tmp_path)
    table = pl.read_csv(tmp_path / "judges.csv")
    judges = scored.load_all_judge_results()
    # the pairs' own trait votes are not a judge: not in the judges table
    assert table["judge"].to_list() == ["mock_trait_judge"]
    assert sorted(judges) == ["annotated_pairs", "mock_trait_judge"]
    for judge_id, results in judges.items():
        if judge_id == "annotated_pairs":
            continue
        row = table.filter(pl.col("judge") == judge_id).row(0, named=True)
        assert row["run_id"] == results.run_id
        counts = results.counts()
        assert (row["valid"], row["invalid"], row["error"]) == (
            counts["valid"],
            counts["invalid"],
            counts["error"],
        )
        frame = results.results_data
        tokens = (
            frame["llm_prompt_tokens"].sum()
            if frame["llm_prompt_tokens"].null_count() < frame.height
            else None
        )
        assert row["prompt_tokens"] == tokens


def test_the_pairs_votes_are_no_judge_and_get_no_empty_blocks(
    scored: MetaEvaluator, tmp_path: Path
) -> None:
    """The pairwise example: the trait votes imported with the pairs are scored by the traits
    metric (their strength is the example's point), but not counted as a judge, and the
    disagreement section lists only judge-task pairs that have rows to compare."""
    page = write_report(scored, tmp_path).read_text(encoding="utf-8")
    assert "; 1 judge; the trait votes imported with the pairs: annotated_pairs;" in page
    assert "No row has both" not in page
    blocks = re.findall(r"<h3>(\w+) on (\w+) <span", page)
    assert blocks == [("mock_trait_judge", "preference")]
    assert (
        "Not shown: the tasks no human labelled (gives_a_concrete_example, is_more_concise, "
        "is_more_polite, uses_a_bulleted_list)." in page
    )
    scores = pl.read_csv(tmp_path / "scores.csv")
    assert sorted(scores["judge"].to_list()) == ["annotated_pairs", "mock_trait_judge"]


def test_costs_from_prices_yaml(scored: MetaEvaluator, tmp_path: Path) -> None:
    prices = scored.project_dir / "prices.yaml"
    prices.write_text("mock-traits-1: {prompt: 0.15, completion: 0.6}\n", encoding="utf-8")
    try:
        write_report(scored, tmp_path)
    finally:
        prices.unlink()
    row = (
        pl.read_csv(tmp_path / "judges.csv")
        .filter(pl.col("judge") == "mock_trait_judge")
        .row(0, named=True)
    )
    expected = (row["prompt_tokens"] * 0.15 + row["completion_tokens"] * 0.6) / 1e6
    assert row["cost_usd"] == pytest.approx(expected, rel=1e-12)


def test_bad_prices_yaml_is_a_state_error(scored: MetaEvaluator, tmp_path: Path) -> None:
    prices = scored.project_dir / "prices.yaml"
    prices.write_text("mock-traits-1: cheap\n", encoding="utf-8")
    try:
        with pytest.raises(StateError, match=r"prices\.yaml"):
            write_report(scored, tmp_path)
    finally:
        prices.unlink()


def test_report_of_an_empty_project_says_so(tmp_path: Path) -> None:
    evaluator = MetaEvaluator(tmp_path / "empty")
    evaluator.save_state()
    text = write_report(evaluator).read_text(encoding="utf-8")
    assert "No scores yet" in text and "No judge results yet" in text
    assert load_scores(tmp_path / "empty" / "scores") == {}


def test_unknown_price_key_is_a_state_error(scored: MetaEvaluator, tmp_path: Path) -> None:
    prices = scored.project_dir / "prices.yaml"
    prices.write_text("mock-traits-1: {prompt: 0.15, completoin: 0.6}\n", encoding="utf-8")
    try:
        with pytest.raises(StateError, match=r"completoin"):
            write_report(scored, tmp_path)
    finally:
        prices.unlink()


def _tokens_frame(batch_ids: list[str | None]) -> pl.DataFrame:
    n = len(batch_ids)
    return pl.DataFrame(
        {
            "outcome": ["valid"] * n,
            "llm_prompt_tokens": [100 * (i + 1) for i in range(n)],
            "llm_completion_tokens": [10 * (i + 1) for i in range(n)],
            "llm_call_duration_seconds": [None] * n,
            "batch_id": batch_ids,
        },
        schema_overrides={"llm_call_duration_seconds": pl.Float64, "batch_id": pl.String},
    )


def test_rows_answered_in_a_batch_cost_the_batch_price() -> None:
    from meta_evaluator.llm.prices import Price
    from meta_evaluator.reports._tables import judge_rows

    frame = _tokens_frame([None, "batch_1", "batch_1", None])  # prompt 100..400, completion 10..40
    live_prompt, live_completion = 100 + 400, 10 + 40
    batch_prompt, batch_completion = 200 + 300, 20 + 30
    default = judge_rows({"j": frame}, {"j": Price(2.0, 8.0)})[0]
    assert default["cost_usd"] == pytest.approx(
        (live_prompt * 2.0 + live_completion * 8.0 + batch_prompt * 1.0 + batch_completion * 4.0)
        / 1e6,
        rel=1e-12,
    )
    given = judge_rows(
        {"j": frame},
        {"j": Price(2.0, 8.0, batch_prompt=0.5, batch_completion=3.0)},
    )[0]
    assert given["cost_usd"] == pytest.approx(
        (live_prompt * 2.0 + live_completion * 8.0 + batch_prompt * 0.5 + batch_completion * 3.0)
        / 1e6,
        rel=1e-12,
    )
    # Results written before batch_id existed have no such column: every row is live.
    old = judge_rows({"j": frame.drop("batch_id")}, {"j": Price(2.0, 8.0)})[0]
    assert old["cost_usd"] == pytest.approx((1000 * 2.0 + 100 * 8.0) / 1e6, rel=1e-12)


def test_rows_answered_from_the_response_cache_cost_nothing() -> None:
    from meta_evaluator.llm.prices import Price
    from meta_evaluator.reports._tables import judge_rows

    frame = _tokens_frame([None, None, "batch_1", None]).with_columns(
        cached=pl.Series([True, False, False, True])
    )  # prompt 100..400, completion 10..40; rows 1 and 4 from the cache
    row = judge_rows({"j": frame}, {"j": Price(2.0, 8.0)})[0]
    assert row["prompt_tokens"] == 1000  # counted...
    assert row["cost_usd"] == pytest.approx(  # ...but only the calls made are priced
        (200 * 2.0 + 20 * 8.0 + 300 * 1.0 + 30 * 4.0) / 1e6, rel=1e-12
    )
    every = judge_rows({"j": frame.with_columns(cached=pl.lit(True))}, {"j": Price(2.0, 8.0)})[0]
    assert every["cost_usd"] == 0.0
