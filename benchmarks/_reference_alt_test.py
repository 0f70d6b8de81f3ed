"""Runs inside meta-evaluator 0.3.3's own venv (see scoring.py, section 4).

Usage: python _reference_alt_test.py REPEATS DATA_DIR [DATA_DIR ...]
Each DATA_DIR holds judge.parquet (original_id, label) and humans.parquet (original_id,
human_id, label), written by scoring.py. For each, times 0.3.3's
AltTestScorer().compute_score_async(judge_data, human_data, task_name, judge_id,
aggregation_mode) REPEATS times (frames read before the clock starts; one untimed warm-up call
on the first 100 items pays the one-time imports) and prints one JSON line: the seconds of
each run, the scores and the per-annotator (llm, human) advantage probabilities.
"""

import asyncio
import json
import sys
import time
from pathlib import Path

import polars as pl
from meta_evaluator.scores.metrics.agreement.alt_test import AltTestScorer

from meta_evaluator.scores.enums import TaskAggregationMode


def score(judge_data: pl.DataFrame, human_data: pl.DataFrame):
    scorer = AltTestScorer()  # 0.3.3 defaults: epsilon 0.2, q_fdr 0.05, 30 instances per human
    return asyncio.run(
        scorer.compute_score_async(
            judge_data, human_data, "task", "judge", TaskAggregationMode.SINGLE
        )
    )


repeats = int(sys.argv[1])
warmed = False
for folder in map(Path, sys.argv[2:]):
    judge_data = pl.read_parquet(folder / "judge.parquet")
    human_data = pl.read_parquet(folder / "humans.parquet")
    if not warmed:
        head = judge_data.head(100)
        score(head, human_data.filter(pl.col("original_id").is_in(head["original_id"].implode())))
        warmed = True
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = score(judge_data, human_data)
        seconds.append(time.perf_counter() - start)
    print(
        json.dumps(
            {
                "folder": folder.name,
                "seconds": seconds,
                "winning_rate": result.scores["winning_rate"],
                "advantage_probability": result.scores["advantage_probability"],
                "per_annotator": {
                    str(h): list(v)
                    for h, v in result.metadata["human_advantage_probabilities"].items()
                },
                "failed_comparisons": result.failed_comparisons,
            }
        ),
        flush=True,
    )
