"""Judges: their configuration, the two stages of a run, and the run folder they write.

A run is planned (`plan_run` → an immutable `RunPlan`: per judge the rows to ask and to reuse,
every problem found at once), then executed, each answer becoming a frozen `ResultRow`.
`RunSettings` holds every run option, for the facade and the CLI alike.

The run folder (`results/<run_id>/`) belongs to the judges that write it: `run_files` says where
each judge's files live and which run is latest, `row_store` appends rows as they arrive, and
`batch_ledger` records the provider batches a run submitted.

Every name loads on first use (the plan and its summary need the HTTP stack), so importing the
package, or one of its modules, stays light.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from meta_evaluator.judge._dry_run import JudgeSummary, RunSummary
    from meta_evaluator.judge.addresses import Address, AddressVariables, judge_address
    from meta_evaluator.judge.batch_ledger import BatchLedger, BatchRecord
    from meta_evaluator.judge.config import Judge, LLMClientName, MockSettings, Prompt
    from meta_evaluator.judge.endpoint_check import EndpointCheck
    from meta_evaluator.judge.plan import JudgePlan, RunPlan, fingerprint, plan_run
    from meta_evaluator.judge.providers import Provider
    from meta_evaluator.judge.result_row import JudgeOutcome, ResultRow
    from meta_evaluator.judge.row_keys import prompt_hashes, prompt_texts
    from meta_evaluator.judge.row_store import RowStore
    from meta_evaluator.judge.run_files import CompleteRun, RunFiles, RunLock, RunState
    from meta_evaluator.judge.settings import RunOptions, RunSettings
    from meta_evaluator.judge.yaml_config import read_judges_yaml

__all__ = [
    "Address",
    "AddressVariables",
    "BatchLedger",
    "BatchRecord",
    "CompleteRun",
    "EndpointCheck",
    "Judge",
    "JudgeOutcome",
    "JudgePlan",
    "JudgeSummary",
    "LLMClientName",
    "MockSettings",
    "Prompt",
    "Provider",
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
    "judge_address",
    "plan_run",
    "prompt_hashes",
    "prompt_texts",
    "read_judges_yaml",
]

_LAZY = {
    "Address": "addresses",
    "AddressVariables": "addresses",
    "BatchLedger": "batch_ledger",
    "BatchRecord": "batch_ledger",
    "CompleteRun": "run_files",
    "EndpointCheck": "endpoint_check",
    "Judge": "config",
    "JudgeOutcome": "result_row",
    "JudgePlan": "plan",
    "JudgeSummary": "_dry_run",
    "LLMClientName": "config",
    "MockSettings": "config",
    "Prompt": "config",
    "Provider": "providers",
    "ResultRow": "result_row",
    "RowStore": "row_store",
    "RunFiles": "run_files",
    "RunLock": "run_files",
    "RunOptions": "settings",
    "RunPlan": "plan",
    "RunSettings": "settings",
    "RunState": "run_files",
    "RunSummary": "_dry_run",
    "fingerprint": "plan",
    "judge_address": "addresses",
    "plan_run": "plan",
    "prompt_hashes": "row_keys",
    "prompt_texts": "row_keys",
    "read_judges_yaml": "yaml_config",
}
"""Where each name lives: every name loads on first use, so importing one module of the
package (the command line reads `settings`) loads only that module."""


def __getattr__(name: str) -> Any:
    """Load a name of the package on first use (`_LAZY`)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'meta_evaluator.judge' has no attribute {name!r}")
