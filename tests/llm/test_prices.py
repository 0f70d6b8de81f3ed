"""`prices.yaml`: read once for the report and the cost ceiling, every problem named."""

from __future__ import annotations

from pathlib import Path

import pytest

from meta_evaluator.errors import PricesError, StateError
from meta_evaluator.llm.prices import PICO, Price, read_prices


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prices.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_no_file_is_no_prices(tmp_path: Path) -> None:
    assert read_prices(tmp_path / "prices.yaml") is None


def test_a_judge_id_wins_over_its_model(tmp_path: Path) -> None:
    prices = read_prices(
        write(
            tmp_path,
            "gpt-4o-mini: {prompt: 0.15, completion: 0.6}\n"
            "strict_judge: {prompt: 1, completion: 2, batch_prompt: 0.25, batch_completion: 1}\n",
        )
    )
    assert prices is not None and prices.path == tmp_path / "prices.yaml"
    assert prices.for_judge("any", "gpt-4o-mini") == Price(0.15, 0.6)
    assert prices.for_judge("strict_judge", "gpt-4o-mini") == Price(1.0, 2.0, 0.25, 1.0)
    assert prices.for_judge("any", "other-model") is None
    assert prices.for_judge("any", None) is None


def test_every_problem_is_named_with_file_and_key(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "a: cheap\n"
        "b: {prompt: 0.1, completoin: 0.6}\n"
        "c: {prompt: -1, completion: .nan}\n"
        "d: {prompt: true, completion: '3'}\n",
    )
    with pytest.raises(PricesError) as caught:
        read_prices(path)
    error = caught.value
    assert isinstance(error, StateError)  # what the report raised before
    assert error.path == path and error.field == "a"
    assert [p["loc"] for p in error.errors] == [
        "a", "b.completoin", "b.completion", "c.prompt", "c.completion", "d.prompt",
        "d.completion",
    ]  # fmt: skip
    message = str(error)
    assert f"{path}: b.completoin: unknown key" in message
    assert f"{path}: b.completion: missing" in message
    assert f"{path}: c.prompt: must be a number >= 0, got -1" in message
    assert "7 problem(s)" in message


@pytest.mark.parametrize("text", ["- gpt-4o\n", "just text\n"])
def test_a_file_that_is_not_a_mapping_is_refused(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(PricesError, match=r"must map a model name or judge id") as caught:
        read_prices(path)
    assert caught.value.path == path


def test_an_empty_file_has_no_prices(tmp_path: Path) -> None:
    prices = read_prices(write(tmp_path, ""))
    assert prices is not None and dict(prices.table) == {}


def test_cost_in_dollars_and_exact_units_agree() -> None:
    price = Price(prompt=2.5, completion=10.0)
    assert price.cost(1_000_000, 0) == 2.5
    assert price.cost(1234, 567) == pytest.approx((1234 * 2.5 + 567 * 10.0) / 1e6, rel=1e-15)
    assert price.units(1234, 567) == 1234 * 2_500_000 + 567 * 10_000_000
    assert price.units(1234, 567) / PICO == pytest.approx(price.cost(1234, 567), rel=1e-15)
    # Units add exactly: a ceiling of three calls' cost holds three calls, not two.
    assert sum(Price(0.1, 0.2).units(1, 1) for _ in range(3)) == 3 * Price(0.1, 0.2).units(1, 1)


def test_the_batch_price_is_half_unless_given() -> None:
    assert Price(2.0, 8.0).batch() == Price(1.0, 4.0)
    assert Price(2.0, 8.0, batch_prompt=0.5, batch_completion=3.0).batch() == Price(0.5, 3.0)
