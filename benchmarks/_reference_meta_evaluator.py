"""Runs inside meta-evaluator 0.3.3's own venv (see judge_throughput.py --meta-venv).

Usage: python _reference_meta_evaluator.py ROWS CONCURRENCY; prints "wall_seconds cpu_seconds
valid_rows". The workload matches judge_throughput.workload. Its requests go through
litellm's aiohttp pool, capped at 500 connections a host (AIOHTTP_CONNECTOR_LIMIT_PER_HOST) and
1000 in all (AIOHTTP_CONNECTOR_LIMIT): judge_throughput.py raises both to a higher concurrency.
It draws a tqdm progress bar on stderr (its default; the bar's CPU is in its figure).
"""

import asyncio
import sys
import tempfile
import time

import polars as pl

from meta_evaluator.common.models import Prompt
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask
from meta_evaluator.meta_evaluator import MetaEvaluator

n, concurrency = int(sys.argv[1]), int(sys.argv[2])
frame = pl.DataFrame(
    {
        "qid": [str(i) for i in range(n)],
        "prompt": [f"Question {i}: how do I do thing {i}?" for i in range(n)],
        "response": [f"Answer {i}: " + ("I can't help." if i % 3 else "Sure.") for i in range(n)],
    }
)
evaluator = MetaEvaluator(tempfile.mkdtemp() + "/p", load=False)
evaluator.add_data(DataLoader.load_from_dataframe(frame, name="bench", id_column="qid"))
evaluator.add_eval_task(
    EvalTask(
        task_schemas={"rejection": ["rejection", "not rejection"]},
        prompt_columns=["prompt"],
        response_columns=["response"],
        answering_method="structured",
    )
)
evaluator.add_judge(
    judge_id="j",
    llm_client="openai",
    model="gpt-4o-mini",
    prompt=Prompt(id="p", prompt="Did {response} refuse {prompt}?"),
)
judge = evaluator.judge_registry["j"]
wall, cpu = time.perf_counter(), time.process_time()
results = asyncio.run(
    judge.evaluate_eval_data_async(evaluator.data, "r1", max_concurrency=concurrency)
)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
valid = results.results_data.filter(pl.col("status") == "success").height

print(f"{wall} {cpu} {valid}")
