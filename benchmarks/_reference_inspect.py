"""Runs inside inspect-ai's own venv (see judge_throughput.py --inspect-venv).

Usage: python _reference_inspect.py ROWS CONCURRENCY, with MOCK_BASE_URL (the fake server's
.../v1) and MOCK_API_KEY set; prints "wall_seconds cpu_seconds valid_rows" as its last line.

The workload matches judge_throughput.workload and the request matches ours: one user message
"Did {response} refuse {prompt}?" plus our "Answer with a JSON object ..." line, with the same
json_schema `response_format` (inspect's `ResponseSchema`), sent by inspect's generic
OpenAI-compatible provider (`openai-api/mock/gpt-4o-mini`). The task is a dataset of Samples,
the `generate()` solver and a trivial scorer that parses the JSON answer and checks the label
(the parsing our runner also does); valid rows are the samples that finished without error.
`max_connections` and `max_samples` are the concurrency, retries are inspect's default, the
log goes to a temporary directory, display is none. The Task and its Samples are built before
the clock; only the `eval(...)` call is timed (wall and this process's user+sys CPU), after a
one-sample warm-up eval: inspect imports its model provider and the OpenAI SDK lazily, about
1.5 s of CPU on the first call, and our figure also leaves out one-time imports. Valid rows are
counted after the clock stops (the returned log reads its samples back from the file).

What makes the comparison not quite like for like:
- inspect does more per sample than a judge runner: a TaskState, a transcript of events
  (model call with the full request and response, scoring), token usage, and an .eval log
  (zip) written as samples finish plus a sample buffer database; none of it can be turned off
  without leaving its defaults (log_realtime, log_samples ...), so all of it is in its CPU per
  row (about 20-30 ms a row here against our 0.2-0.7 ms; a cProfile of 400 rows puts roughly a
  sixth in the event transcript and its sqlite sample buffer, as much in the OpenAI SDK and
  httpx request path, the rest in pydantic models, copies of the state and the log).
- its eval() also sets up and tears down the model and the log inside the timed call, as our
  run_judges_async sets up its run (small next to 2000+ rows either way).
- its HTTP pool (the OpenAI SDK's httpx client as inspect builds it) is capped at 1000
  connections; for a higher concurrency judge_throughput.py raises INSPECT_HTTP_POOL_CONNECTIONS
  to it, so that the concurrency means the same as ours.
- with fail_on_error=False a failing sample is counted instead of aborting the run (the default
  would stop at the first error); on the fake server without faults no sample fails.
"""

import json
import sys
import tempfile
import time

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import GenerateConfig, ResponseSchema
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState, generate
from inspect_ai.util import JSONSchema

LABELS = ["rejection", "not rejection"]
SCHEMA = JSONSchema(
    type="object",
    properties={"rejection": JSONSchema(type="string", enum=LABELS)},
    required=["rejection"],
    additionalProperties=False,
)
SUFFIX = "\n\nAnswer with a JSON object with the keys: rejection."


@scorer(metrics=[mean()])
def label() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        value = json.loads(state.output.completion)["rejection"]
        if value not in LABELS:
            raise ValueError(f"not a label: {value!r}")
        return Score(value=1, answer=value)

    return score


def prompt(i: int) -> str:
    response = f"Answer {i}: " + ("I can't help." if i % 3 else "Sure.")
    return f"Did {response} refuse Question {i}: how do I do thing {i}??{SUFFIX}"


def task(rows: range) -> Task:
    """The rows as Samples, built before the clock starts (as ours loads its data first)."""
    schema = ResponseSchema(name="evaluation", json_schema=SCHEMA, strict=True)
    return Task(
        dataset=[Sample(input=prompt(i), id=str(i)) for i in rows],
        solver=generate(),
        scorer=label(),
        config=GenerateConfig(response_schema=schema),
    )


def run(task: Task, concurrency: int, log_dir: str) -> EvalLog:
    (log,) = eval(
        task,
        model="openai-api/mock/gpt-4o-mini",
        max_connections=concurrency,
        max_samples=concurrency,
        log_dir=log_dir,
        display="none",
        fail_on_error=False,
    )
    return log


n, concurrency = int(sys.argv[1]), int(sys.argv[2])
with tempfile.TemporaryDirectory() as logs:
    run(task(range(n, n + 1)), 1, logs)  # warm-up: inspect imports its provider lazily
    timed = task(range(n))
    wall, cpu = time.perf_counter(), time.process_time()
    log = run(timed, concurrency, logs)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    # read back from the log file (the returned log loads its samples lazily), so untimed
    valid = sum(1 for sample in log.samples or [] if sample.error is None)

print(f"{wall} {cpu} {valid}")
