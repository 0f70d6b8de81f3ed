"""Judges: their configuration and YAML files, their endpoints, and the run folder they write.

The run folder (`results/<run_id>/`) belongs to the judges that write it: `run_files` says where
each judge's files live and which run is latest, `row_store` appends rows as they arrive, and
`batch_ledger` records the provider batches a run submitted.
"""

from meta_evaluator.judge.batch_ledger import BatchLedger, BatchRecord
from meta_evaluator.judge.config import Judge, LLMClientName, MockSettings, Prompt
from meta_evaluator.judge.endpoint_check import EndpointCheck
from meta_evaluator.judge.row_store import RowStore
from meta_evaluator.judge.run_files import RunFiles, RunLock, RunState
from meta_evaluator.judge.yaml_config import read_judges_yaml

__all__ = [
    "BatchLedger",
    "BatchRecord",
    "EndpointCheck",
    "Judge",
    "LLMClientName",
    "MockSettings",
    "Prompt",
    "RowStore",
    "RunFiles",
    "RunLock",
    "RunState",
    "read_judges_yaml",
]
