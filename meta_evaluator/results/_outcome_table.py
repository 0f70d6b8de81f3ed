"""What a judge's run and an annotator's set share: rows with an `outcome`, read alike."""

from __future__ import annotations

from typing import ClassVar

import polars as pl

__all__ = ["OutcomeTable"]


class OutcomeTable:
    """Rows with an `outcome` column, and meta-evaluator 0.3.3's names for reading them.

    `JudgeResults` and `HumanAnnotationResults` keep their frame in `_frame` and list the
    outcomes their rows can have in `OUTCOMES`, valid first.
    """

    OUTCOMES: ClassVar[tuple[str, ...]]
    _frame: pl.DataFrame

    @property
    def results_data(self) -> pl.DataFrame:
        """Every row (a copy)."""
        return self._frame.clone()

    def counts(self) -> dict[str, int]:
        """Rows per outcome, every outcome listed."""
        found = dict(self._frame.group_by("outcome").len().iter_rows())
        return {o: int(found.get(o, 0)) for o in self.OUTCOMES}

    def valid_rows(self) -> pl.DataFrame:
        """The rows whose outcome is valid."""
        return self._frame.filter(pl.col("outcome") == "valid")

    def __len__(self) -> int:
        return self._frame.height

    # ----- meta-evaluator 0.3.3's names for the same things -----------------------------------

    @property
    def data(self) -> pl.DataFrame:
        """`results_data` (0.3.3's name)."""
        return self.results_data

    def get_successful_results(self) -> pl.DataFrame:
        """The valid rows (0.3.3's name of `valid_rows`)."""
        return self.valid_rows()

    @property
    def total_count(self) -> int:
        """Rows of the run or set."""
        return self._frame.height

    @property
    def succeeded_count(self) -> int:
        """Valid rows (0.3.3's `success`)."""
        return self._count(pl.col("outcome") == "valid")

    def _count(self, condition: pl.Expr) -> int:
        return int(self._frame.select(condition.fill_null(False).sum()).item())
