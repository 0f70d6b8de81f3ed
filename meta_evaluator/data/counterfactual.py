"""Counterfactual variants of evaluation data: the same rows with a sensitive attribute swapped.

One run over the originals and their variants lets `CounterfactualScorer` measure how often
the model's answer changes when only the attribute does (METRICS.md B.6).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from meta_evaluator.data.eval_data import EvalData
from meta_evaluator.data.loader import DataLoader
from meta_evaluator.data.variants import joined_variants, variant_ids
from meta_evaluator.errors import ColumnError, DataError

__all__ = ["counterfactual_variants"]


def counterfactual_variants(
    eval_data: EvalData,
    attribute_column: str,
    swaps: Mapping[Any, Any],
    *,
    text_columns: Sequence[str] = (),
    text_swaps: Mapping[str, str] | None = None,
    link_column: str = "counterfactual_of",
    name: str | None = None,
) -> EvalData:
    """The rows of `eval_data` plus, for each row whose attribute is in `swaps`, a variant.

    A variant takes `swaps[value]` in `attribute_column`, and in each of `text_columns` every
    whole word of `text_swaps` (default: the string keys of `swaps`) replaced at once by its
    counterpart, keeping capitalisation (`He` -> `She`). `link_column` names the original's id
    on a variant and is null on originals. Variant ids keep the id type: `<id>_cf` for text
    ids; for integer ids, the id plus the first power of ten above every id (`7` -> `107`
    when ids stay below 100).

    Example:
        >>> import polars as pl
        >>> from meta_evaluator.data import DataLoader
        >>> data = DataLoader.load_from_dataframe("d", pl.DataFrame(
        ...     {"id": [1, 2], "gender": ["male", "female"], "text": ["He codes.", "She codes."]}
        ... ), id_column="id")
        >>> both = counterfactual_variants(
        ...     data, "gender", {"male": "female", "female": "male"}, text_columns=["text"],
        ...     text_swaps={"he": "she", "she": "he"})
        >>> both.data["text"].to_list(), both.data["counterfactual_of"].to_list()
        (['He codes.', 'She codes.', 'She codes.', 'He codes.'], [None, None, 1, 2])

    Raises:
        ColumnError: A named column is missing, or `link_column` exists already.
        DataError: `swaps` is empty, or a variant id would collide with an existing id.
    """
    frame = eval_data.data
    id_column = eval_data.id_column
    for column in [attribute_column, *text_columns]:
        if column not in frame.columns:
            raise ColumnError(
                f"counterfactual_variants: no column {column!r} in the data (columns: "
                f"{frame.columns}).",
                column=column,
            )
    if link_column in frame.columns:
        raise ColumnError(
            f"counterfactual_variants: the data has a column {link_column!r} already; pass "
            "another link_column.",
            column=link_column,
        )
    if not swaps:
        raise DataError("counterfactual_variants: swaps is empty; map each value to its swap.")
    words = dict(text_swaps) if text_swaps is not None else {
        str(k): str(v) for k, v in swaps.items() if isinstance(k, str)
    }  # fmt: skip
    swapper = _word_swapper(words)
    chosen = frame.filter(pl.col(attribute_column).is_in(list(swaps)))
    variants = chosen.with_columns(
        pl.col(attribute_column).replace_strict(
            list(swaps), list(swaps.values()), return_dtype=frame.schema[attribute_column]
        ),
        *(pl.col(c).map_elements(swapper, return_dtype=pl.String) for c in text_columns),
        pl.col(id_column).alias(link_column),
        variant_ids(frame.get_column(id_column), chosen.get_column(id_column), "_cf").alias(
            id_column
        ),
    )
    combined = joined_variants(
        frame, variants, id_column=id_column, link_column=link_column, suffix="_cf",
        where="counterfactual_variants", what="a variant id", noun="variants",
    )  # fmt: skip
    return DataLoader.load_from_dataframe(
        name or f"{eval_data.name}_counterfactual", combined, id_column=id_column
    )


def _word_swapper(words: Mapping[str, str]) -> Any:
    if not words:
        return lambda text: text
    lookup = {k.casefold(): v for k, v in words.items()}
    pattern = re.compile(
        r"\b(" + "|".join(re.escape(k) for k in sorted(words, key=len, reverse=True)) + r")\b",
        re.IGNORECASE,
    )

    def swap(text: str | None) -> str | None:
        if text is None:
            return None

        def one(match: re.Match[str]) -> str:
            found = match.group(0)
            new = lookup[found.casefold()]
            if found.isupper() and len(found) > 1:
                return new.upper()
            if found[0].isupper():
                return new[:1].upper() + new[1:]
            return new

        return pattern.sub(one, text)

    return swap
