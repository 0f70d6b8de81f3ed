"""The keys a run reuses a stored row by: its judge's fingerprint and, per row, its prompt hash.

`plan.fingerprint` digests what makes two runs' answers comparable; `prompt_hashes` gives each
data row's prompt hash as a run computes it before asking, and `prompt_texts` the prompt each
row is sent, before the answer instructions. Rows written by something other than a run (a
meta-evaluator 0.3.3 run, migrated) carry these keys where their prompt is the one a run would
send, so that `run` reuses them instead of asking again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from meta_evaluator.eval_task import EvalTask
from meta_evaluator.judge._prompting import RequestBuilder, answering_method
from meta_evaluator.judge.config import Judge

__all__ = ["prompt_hashes", "prompt_texts"]


def prompt_hashes(judge: Judge, task: EvalTask, rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Each data row's prompt hash, as a run of `judge` computes it to decide what to reuse.

    `rows` are data rows as mappings of column to value (the columns the prompt reads, or
    more); the judge's own answering method counts, else the task's.
    """
    builder = RequestBuilder(judge, task, answering_method(judge, task))
    return [builder.prompt_hash(row) for row in rows]


def prompt_texts(judge: Judge, task: EvalTask, rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Each data row's prompt as `judge` sends it, before the answer instructions.

    Example:
        >>> from meta_evaluator.judge import Prompt
        >>> task = EvalTask({"verdict": ["yes", "no"]}, ["prompt"], ["response"])
        >>> judge = Judge(id="j", llm_client="mock", model="m",
        ...               prompt=Prompt(id="p", prompt="Did {response} answer {prompt}?"))
        >>> prompt_texts(judge, task, [{"prompt": "2+2?", "response": None}])
        ['Did  answer 2+2??']
    """
    builder = RequestBuilder(judge, task, answering_method(judge, task))
    return [builder.prompt_text(row) for row in rows]
