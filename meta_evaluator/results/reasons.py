"""Why a judge's rows ended in an error, counted: for the end of a run and for `score`."""

from __future__ import annotations

import polars as pl

__all__ = ["error_reasons", "summarize_errors"]

_REASON_CHARS = 160


def error_reasons(rows: pl.DataFrame) -> list[tuple[str, int]]:
    """Each distinct reason of the error rows with its count, most frequent first.

    The reason is the row's `error_message` (its `status` when it has none); ties are broken by
    the reason's text, so the order never depends on the rows' order.
    """
    if rows.is_empty() or "outcome" not in rows.columns:
        return []
    errors = rows.filter(pl.col("outcome") == "error")
    if errors.is_empty():
        return []
    message = pl.col("error_message") if "error_message" in errors.columns else pl.lit(None)
    status = pl.col("status") if "status" in errors.columns else pl.lit(None)
    reasons = errors.select(
        pl.coalesce(
            message.cast(pl.String), status.cast(pl.String), pl.lit("no reason recorded")
        ).alias("reason")
    )
    counted = reasons.group_by("reason").len().sort(["len", "reason"], descending=[True, False])
    return [(str(reason), int(count)) for reason, count in counted.iter_rows()]


def summarize_errors(rows: pl.DataFrame, *, top: int = 3, sep: str = ": ") -> str | None:
    """`400 errors: 400× connection refused at 127.0.0.1:9`: the count and the top reasons.

    None when no row is an error. Reasons beyond `top` are summed into one last part; `sep`
    goes between the count and the reasons.
    """
    reasons = error_reasons(rows)
    if not reasons:
        return None
    total = sum(count for _, count in reasons)
    parts = [f"{count}× {_short(reason)}" for reason, count in reasons[:top]]
    rest = reasons[top:]
    if rest:
        others = sum(count for _, count in rest)
        parts.append(f"{others}× for {len(rest)} other reason{'s' if len(rest) > 1 else ''}")
    return f"{total} error{'s' if total != 1 else ''}{sep}" + "; ".join(parts)


def _short(reason: str) -> str:
    text = " ".join(reason.split())
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1] + "…"
