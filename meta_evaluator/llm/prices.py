"""What a call costs: the project's `prices.yaml`, read and checked in one place.

`prices.yaml` maps a model name (or a judge id, which wins over its model) to US dollars per
million tokens:

```yaml
gpt-4o-mini: {prompt: 0.15, completion: 0.6}
claude-3-5-haiku-latest: {prompt: 0.8, completion: 4.0, batch_prompt: 0.4, batch_completion: 2.0}
```

`prompt` and `completion` are required; `batch_prompt` and `batch_completion` price the rows a
provider batch answered (half the live price when absent). The report's cost column and the
runner's cost ceiling (`max_cost`) both price tokens through `Price`, so they cannot disagree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meta_evaluator.errors import PricesError
from meta_evaluator.storage import read_yaml, yaml_mapping

__all__ = ["PICO", "PRICE_KEYS", "Price", "Prices", "read_prices"]

PRICE_KEYS = ("prompt", "completion", "batch_prompt", "batch_completion")
"""The keys of one price; the first two are required."""

PICO = 10**12
"""Integer units per US dollar in `Price.units`: picodollars, so that sums are exact."""


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens of one model (or judge).

    Example:
        >>> price = Price(prompt=0.15, completion=0.6)
        >>> round(price.cost(1_000_000, 500_000), 6)
        0.45
        >>> price.units(1, 1)  # picodollars for one prompt and one completion token
        750000
    """

    prompt: float
    """US dollars per million prompt (input) tokens."""
    completion: float
    """US dollars per million completion (output) tokens."""
    batch_prompt: float | None = None
    """The same for rows a provider batch answered; None: half of `prompt`."""
    batch_completion: float | None = None
    """The same for rows a provider batch answered; None: half of `completion`."""
    _per_token: tuple[int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # USD per million tokens = 10**6 picodollars per token; rounded to whole picodollars.
        per_token = (round(self.prompt * 10**6), round(self.completion * 10**6))
        object.__setattr__(self, "_per_token", per_token)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """US dollars for the tokens at the live price."""
        return (prompt_tokens * self.prompt + completion_tokens * self.completion) / 1e6

    def units(self, prompt_tokens: int, completion_tokens: int) -> int:
        """Picodollars (`PICO` per dollar) for the tokens at the live price: exact integer sums.

        The runner's spend tracker adds these, so a ceiling of k calls' cost admits exactly k
        calls, without floating-point drift; a price finer than 10**-6 dollars per million
        tokens is rounded.
        """
        per_prompt, per_completion = self._per_token
        return prompt_tokens * per_prompt + completion_tokens * per_completion

    def batch(self) -> Price:
        """The price of rows a provider batch answered (half the live price unless given)."""
        prompt = self.batch_prompt if self.batch_prompt is not None else self.prompt / 2
        completion = (
            self.batch_completion if self.batch_completion is not None else self.completion / 2
        )
        return Price(prompt, completion)


@dataclass(frozen=True)
class Prices:
    """The prices of a project's `prices.yaml`, by model name or judge id."""

    path: Path
    """The file they were read from (named in every message about a price)."""
    table: Mapping[str, Price] = field(default_factory=dict)
    """Model name or judge id -> price."""

    def for_judge(self, judge_id: str, model: str | None) -> Price | None:
        """The judge's own price if listed, else its model's; None when neither is."""
        found = self.table.get(judge_id)
        if found is None and model is not None:
            found = self.table.get(model)
        return found


def read_prices(path: str | Path) -> Prices | None:
    """Read and check a `prices.yaml`; None when there is no such file.

    Every problem is reported at once, one line each with its place (`gpt-4o.completion:
    must be a number >= 0, got 'cheap'`).

    Raises:
        PricesError: The file is not a mapping of names to prices, or a price is not a mapping
            of `prompt` and `completion` (and optionally `batch_prompt`, `batch_completion`)
            to numbers >= 0. `path` is the file, `field` the first place at fault, `errors`
            every problem.
        StateError: The file is not valid YAML. StorageError: it cannot be read.
    """
    file = Path(path)
    if not file.is_file():
        return None
    expected = (
        "must map a model name or judge id to {prompt: ..., completion: ...} US dollars per "
        "million tokens; got"
    )
    raw = yaml_mapping(read_yaml(file), file, expected=expected, error=PricesError)
    problems: list[dict[str, Any]] = []
    table: dict[str, Price] = {}
    for name, entry in raw.items():
        price = _price(str(name), entry, problems)
        if price is not None:
            table[str(name)] = price
    if problems:
        lines = "\n".join(f"{file}: {p['loc']}: {p['msg']}" for p in problems)
        raise PricesError(
            f"{file} has {len(problems)} problem(s) (prices are US dollars per million "
            f"tokens, e.g. `gpt-4o-mini: {{prompt: 0.15, completion: 0.6}}`):\n{lines}",
            path=file,
            field=problems[0]["loc"],
            errors=problems,
        )
    return Prices(file, table)


def _price(name: str, entry: Any, problems: list[dict[str, Any]]) -> Price | None:
    """One entry of the file as a `Price`, or None with its problems appended."""
    if not isinstance(entry, dict):
        problems.append(
            {"loc": name, "msg": f"must be a mapping with prompt and completion, got {entry!r:.40}"}
        )
        return None
    before = len(problems)
    values: dict[str, float] = {}
    for key, value in entry.items():
        if key not in PRICE_KEYS:
            problems.append(
                {"loc": f"{name}.{key}", "msg": f"unknown key; the keys are {list(PRICE_KEYS)}"}
            )
        elif (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
        ):
            problems.append(
                {"loc": f"{name}.{key}", "msg": f"must be a number >= 0, got {value!r:.40}"}
            )
        else:
            values[key] = float(value)
    for key in PRICE_KEYS[:2]:
        if key not in entry:
            problems.append(
                {"loc": f"{name}.{key}", "msg": "missing (US dollars per million tokens)"}
            )
    return Price(**values) if len(problems) == before else None
