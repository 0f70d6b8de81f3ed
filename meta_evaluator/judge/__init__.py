"""Judges: their configuration, the two stages of a run, and the run folder they write.

A run is planned (`plan_run` → an immutable `RunPlan`: per judge the rows to ask and to reuse,
every problem found at once), then executed, each answer becoming a frozen `ResultRow`.
`RunSettings` holds every run option, for the facade and the CLI alike.

The run folder (`results/<run_id>/`) belongs to the judges that write it: `run_files` says where
each judge's files live and which run is latest, `row_store` appends rows as they arrive, and
`batch_ledger` records the provider batches a run submitted.

Names that need the HTTP stack (the plan, its summary) load on first use, so importing the
package (as the project does) stays light.
"""

from typing import TYPE_CHECKING, Any

from meta_evaluator.judge.batch_ledger import BatchLedger, BatchRecord
from meta_evaluator.judge.config import Judge, LLMClientName, MockSettings, Prompt
from meta_evaluator.judge.endpoint_check import EndpointCheck
from meta_evaluator.judge.row_store import RowStore
from meta_evaluator.judge.run_files import RunFiles, RunLock, RunState
from meta_evaluator.judge.settings import RunOptions, RunSettings
from meta_evaluator.judge.yaml_config import read_judges_yaml

if TYPE_CHECKING:
    from meta_evaluator.judge._dry_run import JudgeSummary, RunSummary
    from meta_evaluator.judge.plan import JudgePlan, RunPlan, fingerprint, plan_run
    from meta_evaluator.judge.result_row import JudgeOutcome, ResultRow

__all__ = [
    "BatchLedger",
    "BatchRecord",
    "EndpointCheck",
    "Judge",
    "JudgeOutcome",
    "JudgePlan",
    "JudgeSummary",
    "LLMClientName",
    "MockSettings",
    "Prompt",
    "ResultRow",
    "RowStore",
    "RunFiles",
    "RunLock",
    "RunOptions",
    "RunPlan",
    "RunSettings",
    "RunState",
    "RunSummary",
    "fingerprint",
    "plan_run",
    "read_judges_yaml",
]

_LAZY = {
    "JudgeOutcome": "meta_evaluator.judge.result_row",
    "ResultRow": "meta_evaluator.judge.result_row",
    "JudgePlan": "meta_evaluator.judge.plan",
    "RunPlan": "meta_evaluator.judge.plan",
    "fingerprint": "meta_evaluator.judge.plan",
    "plan_run": "meta_evaluator.judge.plan",
    "JudgeSummary": "meta_evaluator.judge._dry_run",
    "RunSummary": "meta_evaluator.judge._dry_run",
}


def __getattr__(name: str) -> Any:
    """Load the names that need the HTTP stack on first use."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'meta_evaluator.judge' has no attribute {name!r}")
