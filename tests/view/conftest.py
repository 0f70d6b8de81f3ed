"""The viewer's tests' shared pieces: the refusal example with a mock judge's run, small
projects with labels imported from files, an ASGI client, and plain-Python expectations
computed from the project's own files (independently of the row table)."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import polars as pl
import pytest

from meta_evaluator import MetaEvaluator, examples
from meta_evaluator.data import DataLoader
from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.examples import create_example_project
from meta_evaluator.view import ViewerApp

#: The address the in-process app is reached at (loopback, as `serve` binds by default).
BASE = "http://127.0.0.1:8765"
JUDGE = "mock_refusal_judge"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


FLAKY = "flaky"
PROMPT = Path(examples.__file__).parent / "refusal" / "prompt.md"


@pytest.fixture(scope="module")
def refusal_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The refusal example (40 rows, int ids, ana/ben/chen) with its mock judge run once, and
    a second mock judge, `flaky`, whose calls fail now and then (error and invalid rows)."""
    folder = tmp_path_factory.mktemp("template") / "refusal"
    evaluator = create_example_project("refusal", folder)
    evaluator.add_judge(
        FLAKY,
        "mock",
        "mock-flaky-1",
        prompt_file=PROMPT,
        mock={"error_rate": 0.2, "invalid_rate": 0.1},
    )
    evaluator.save_state(data_format="csv")
    results = evaluator.run_judges_async()
    assert results[FLAKY].counts()["error"] > 0
    return folder


@pytest.fixture
def refusal(refusal_template: Path, tmp_path: Path) -> Path:
    """A fresh copy of the refusal example with its judge's run."""
    folder = tmp_path / "refusal"
    shutil.copytree(refusal_template, folder)
    return folder


def app_for(project: Path, **options: Any) -> ViewerApp:
    """A new viewer of the project as saved."""
    return ViewerApp(MetaEvaluator(project, load=True), **options)


@asynccontextmanager
async def client(app: ViewerApp, base: str = BASE) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=base) as http:
        yield http


# --- small projects ----------------------------------------------------------------------------


def small_project(
    folder: Path,
    ids: list[Any],
    texts: list[str],
    judge: list[Any],
    humans: dict[str, list[Any]],
    *,
    multilabel: bool = False,
) -> Path:
    """A saved project: `texts` shown, one task (`verdict`: yes/no, or multi-label topics
    a/b/c), the judge's labels imported as judge `imp`, each human's from a file."""
    frame = pl.DataFrame({"qid": ids, "text": texts, "note": [f"note {i}" for i in ids]})
    evaluator = MetaEvaluator(folder, load=False)
    evaluator.add_data(DataLoader.load_from_dataframe("small", frame, "qid"))
    schema: Any = MultiLabelSchema(outcomes=["a", "b", "c"]) if multilabel else ["yes", "no"]
    evaluator.add_eval_task(
        EvalTask(task_schemas={"verdict": schema}, prompt_columns=None, response_columns=["text"])
    )
    evaluator.save_state()
    dtype = pl.List(pl.String) if multilabel else pl.String
    for owner, labels in [("imp", judge), *humans.items()]:
        path = folder.parent / f"{folder.name}-{owner}.parquet"
        present = [(i, v) for i, v in zip(ids, labels, strict=True) if v is not None]
        pl.DataFrame(
            {"original_id": [i for i, _ in present], "verdict": [v for _, v in present]},
            schema={"original_id": frame.schema["qid"], "verdict": dtype},
        ).write_parquet(path)
        if owner == "imp":
            evaluator.add_external_judge_results(path, "imp")
        else:
            evaluator.add_external_annotation_results(path, owner)
    return folder


# --- expectations, from the project's files in plain Python -------------------------------------


def majority(labels: list[Any]) -> Any:
    """The most frequent label, ties to the largest (METRICS.md F), None without labels."""
    present = [v for v in labels if v is not None]
    if not present:
        return None
    return max(Counter(present).items(), key=lambda item: (item[1], item[0]))[0]


def expected_rows(project: Path, judge: str, task: str) -> dict[Any, dict[str, Any]]:
    """Per id: the judge's label, outcome, humans' labels, majority and flags."""
    evaluator = MetaEvaluator(project, load=True)
    assert evaluator.data is not None
    judged = {
        r["original_id"]: r
        for r in evaluator.load_all_judge_results()[judge].results_data.to_dicts()
    }
    humans = {
        h: {
            r["original_id"]: r[task]
            for r in results.results_data.to_dicts()
            if r["outcome"] == "valid" or r["status"] == "partial"
        }
        for h, results in evaluator.load_all_human_results().items()
    }
    rows = {}
    for row_id in evaluator.data.ids.to_list():
        answer = judged.get(row_id, {})
        usable = answer.get("outcome") == "valid" or answer.get("status") == "partial"
        label = answer.get(task) if usable else None
        given = {h: labels.get(row_id) for h, labels in humans.items()}
        voted = majority(list(given.values()))
        present = {v for v in given.values() if v is not None}
        flags = []
        if label is not None and voted is not None and label != voted:
            flags.append("disagree")
        if len(present) > 1:
            flags.append("humans_split")
        if answer.get("outcome") == "invalid":
            flags.append("invalid")
        if answer.get("outcome") == "error":
            flags.append("error")
        rows[row_id] = {
            "judge_label": label,
            "outcome": answer.get("outcome"),
            "human_labels": given,
            "human_majority": voted,
            "flags": flags,
        }
    return rows
