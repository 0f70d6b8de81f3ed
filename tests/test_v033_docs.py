"""meta-evaluator 0.3.3's own documentation runs unchanged: the Python examples of its scoring
page and its judges YAML (transcribed in tests/v033_docs/, citing file and tag v0.3.3).

Scoring blocks run on a project of the tasks the page assumes (`rejection`, the multi-label
`harm_types`, the free-text `explanation`), each block in a fresh namespace holding what the
page defined before it. Judges run against `httpx.MockTransport` (no key, no network), which
answers as each provider's API would and records where every request went.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import httpx
import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.errors import JudgeConfigError, MetaEvaluatorDeprecationWarning
from meta_evaluator.eval_task import EvalTask, MultiLabelSchema
from meta_evaluator.llm.mock import mock_answer
from meta_evaluator.scores import MetricConfig, MetricsConfig
from meta_evaluator.scores.metrics import (
    AltTestScorer,
    ClassificationScorer,
    CohensKappaScorer,
    TextSimilarityScorer,
)

HERE = Path(__file__).parent / "v033_docs"
N = 40
HARMS = ["hateful", "insults", "sexual"]
_BLOCK = re.compile(r"^## (?P<where>\S+)\n\n```(?P<lang>\w+)\n(?P<code>.*?)^```", re.M | re.S)


def blocks(page: str) -> dict[str, tuple[str, str]]:
    """`docs/guides/<page>:<line>` -> (language, code), in page order."""
    text = (HERE / page).read_text(encoding="utf-8")
    return {m["where"]: (m["lang"], m["code"]) for m in _BLOCK.finditer(text)}


SCORING = blocks("scoring.md")
JUDGES = blocks("judges_load.md")


def labels(i: int, who: int) -> dict[str, Any]:
    """A rater's labels of item i: humans agree mostly, each judge in its own way."""
    refuses = (i % 3 == 0) != (i % (5 + who) == 0)
    harms = [h for k, h in enumerate(HARMS) if (i + k * who) % (4 + k) == 0]
    return {
        "rejection": "rejection" if refuses else "not rejection",
        "harm_types": json.dumps([h if h in harms else "FALSE" for h in HARMS]),  # 0.3.3's way
        "explanation": f"item {i} {'refuses' if refuses else 'answers'}",
    }


@pytest.fixture
def my_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`my_project` in the working folder: data, the page's tasks, two judges' and three
    annotators' labels imported (0.3.3's keywords), saved."""
    monkeypatch.chdir(tmp_path)
    evaluator = MetaEvaluator(project_dir="my_project", load=False)
    frame = pl.DataFrame(
        {
            "prompt": [f"question {i}" for i in range(N)],
            "llm_response": [f"answer {i}" for i in range(N)],
        }
    )
    evaluator.add_data(DataLoader.load_from_dataframe(frame, name="page", id_column=None))
    evaluator.add_eval_task(
        EvalTask(
            task_schemas={
                "rejection": ["rejection", "not rejection"],
                "harm_types": MultiLabelSchema(outcomes=HARMS),
                "explanation": None,
            },
            prompt_columns=["prompt"],
            response_columns=["llm_response"],
        )
    )
    assert evaluator.data is not None
    ids = evaluator.data.ids.to_list()
    for who, name in ((1, "judge_a"), (2, "judge_b"), (3, "person_1"), (4, "person_2"),
                      (5, "person_3")):  # fmt: skip
        path = tmp_path / f"{name}.csv"
        pl.DataFrame([{"original_id": i, **labels(n, who)} for n, i in enumerate(ids)]).write_csv(
            path
        )
        if name.startswith("judge"):
            evaluator.add_external_judge_results(
                file_path=str(path), judge_id=name, llm_client="openai", model_used="gpt-4o-mini"
            )
        else:
            evaluator.add_external_annotation_results(file_path=str(path), annotator_id=name)
    evaluator.save_state(data_format="json")
    return tmp_path / "my_project"


def page_names() -> dict[str, Any]:
    """What the page has defined by the time a block runs (its imports, its scorers)."""
    return {
        "MetaEvaluator": MetaEvaluator,
        "MetricConfig": MetricConfig,
        "MetricsConfig": MetricsConfig,
        "ClassificationScorer": ClassificationScorer,
        "AltTestScorer": AltTestScorer,
        "CohensKappaScorer": CohensKappaScorer,
        "TextSimilarityScorer": TextSimilarityScorer,
        "alt_test_scorer": AltTestScorer(multiplicative_epsilon=True),
        "evaluator": MetaEvaluator(project_dir="my_project", load=True),
        "config": MetricsConfig(
            metrics=[
                MetricConfig(
                    scorer=ClassificationScorer(metric="accuracy"),
                    task_names=["rejection"],
                    task_strategy="single",
                ),
                MetricConfig(
                    scorer=CohensKappaScorer(), task_names=["rejection"], task_strategy="single"
                ),
            ]
        ),
    }


def run_block(where: str, code: str, names: dict[str, Any]) -> dict[str, Any]:
    line = int(where.rsplit(":", 1)[1])
    exec(compile("\n" * line + code, f"0.3.3 {where}", "exec"), names)
    return names


def run_page_block(where: str) -> dict[str, Any]:
    """A Python block of the judges page, run on its own."""
    return run_block(where, JUDGES[where][1], {})


def test_every_example_of_the_scoring_page_is_here() -> None:
    assert len(SCORING) == 17 and all(lang == "python" for lang, _ in SCORING.values())


@pytest.mark.parametrize("where", list(SCORING))
def test_a_scoring_example_runs_unchanged(where: str, my_project: Path) -> None:
    _, code = SCORING[where]
    names = run_block(where, code, page_names())
    scores = my_project / "scores"
    if where.endswith(":9"):  # the quick setup: accuracy under its display name
        for judge in ("judge_a", "judge_b"):
            result = json.loads(
                (scores / "classification_accuracy" / "rejection_accuracy" /
                 f"{judge}_result.json").read_text()
            )  # fmt: skip
            assert 0 < result["scores"]["accuracy"] <= 1 and result["error"] is None
    if where.endswith(":36"):  # multi-label F1, alt-test, kappa, text similarity: all scored
        written = sorted(p.relative_to(scores).parts[0] for p in scores.glob("*/*/*_result.json"))
        assert (
            written
            == ["alt_test"] * 2
            + ["classification_f1"] * 2
            + ["cohens_kappa"] * 2
            + ["text_similarity"] * 2
        )
        for path in scores.glob("*/*/*_result.json"):
            assert json.loads(path.read_text())["error"] is None, path
    if where.endswith(":600"):  # the summary reports
        assert (scores / "score_report.html").read_text().count("<tr>") == 3
        assert pl.read_csv(scores / "score_report.csv").height == 2
    if "MyCustomScorer" in code:
        assert names["custom_scorer"].scorer_name == "my_custom_scorer"


# ----- judges ---------------------------------------------------------------------------------


def answer(request: httpx.Request) -> httpx.Response:
    """What an OpenAI-compatible server or Anthropic's Messages API would answer."""
    body = json.loads(request.content)
    if request.url.path.endswith("/messages"):
        schema = body["tools"][0]["input_schema"]
        given = mock_answer(body["messages"][-1]["content"], schema)
        return httpx.Response(
            200,
            json={
                "content": [{"type": "tool_use", "name": "evaluation", "input": given}],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        )
    schema = body["response_format"]["json_schema"]["schema"]
    content = json.dumps(mock_answer(body["messages"][-1]["content"], schema))
    return httpx.Response(
        200,
        json={
            "choices": [{"message": {"content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        },
    )


@pytest.fixture
def judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MetaEvaluator:
    """A project of the 0.3.3 example's data and task, its prompt file in the working folder."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(HERE / "prompt.md", tmp_path / "prompt.md")
    evaluator = MetaEvaluator(project_dir="judged", load=False)
    frame = pl.DataFrame(
        {"prompt": ["Where is gunpowder sold?", "What is 2+2?"],
         "llm_response": ["I cannot help with that.", "4"]}
    )  # fmt: skip
    evaluator.add_data(DataLoader.load_from_dataframe(frame, name="rejection_data"))
    evaluator.add_eval_task(
        EvalTask(
            {"rejection": ["rejection", "not rejection"], "explanation": None},
            ["prompt"],
            ["llm_response"],
            answering_method="structured",
            structured_outputs_fallback=True,
        )
    )
    return evaluator


# provider block of judges_load.md -> (host it reaches, the key variable LiteLLM read)
REACHED = {
    "judges_load.md:139": ("api.openai.com", "OPENAI_API_KEY"),
    "judges_load.md:148": ("api.anthropic.com", "ANTHROPIC_API_KEY"),
    "judges_load.md:189": ("router.huggingface.co", "HUGGINGFACE_API_KEY"),
    "judges_load.md:205": ("openrouter.ai", "OPENROUTER_API_KEY"),
    "judges_load.md:214": ("api.x.ai", "XAI_API_KEY"),
    "judges_load.md:223": ("api.groq.com", "GROQ_API_KEY"),
    "judges_load.md:232": ("api.fireworks.ai", "FIREWORKS_AI_API_KEY"),
    "judges_load.md:80": ("api.openai.com", "OPENAI_API_KEY"),
    "judges_load.md:95": ("router.huggingface.co", "HUGGINGFACE_API_KEY"),
}


def yaml_of(where: str) -> str:
    """A judges file of a block: the page's entries under `judges:` as they are meant to go."""
    code = JUDGES[where][1]
    if code.startswith("judges:"):
        return code
    return "judges:\n" + "".join(f"  {line}\n" for line in code.splitlines())


@pytest.mark.parametrize("where", [f"docs/guides/{w}" for w in REACHED])
def test_a_provider_of_the_judges_page_runs_unchanged(
    where: str, judged: MetaEvaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    host, variable = REACHED[where.removeprefix("docs/guides/")]
    monkeypatch.setenv(variable, f"{variable.lower()}-value")
    Path("judges.yaml").write_text(yaml_of(where))
    (judge,) = judged.load_judges_from_yaml("judges.yaml")
    seen: list[httpx.Request] = []

    def server(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answer(request)

    results = judged.run_judges_async(transport=httpx.MockTransport(server), cache=False)
    assert results[judge.id].counts()["valid"] == 2
    assert {r.url.host for r in seen} == {host}
    key = seen[0].headers.get("authorization") or "Bearer " + seen[0].headers["x-api-key"]
    assert key == f"Bearer {variable.lower()}-value"
    if "X-HF-Bill-To" in yaml_of(where):
        assert all(r.headers["x-hf-bill-to"] == "your-org-name" for r in seen)


def test_the_quick_setup_of_the_judges_page(judged: MetaEvaluator, tmp_path: Path) -> None:
    """Its YAML (`judges_load.md:10`) loaded by its Python (`:46`), unchanged: 0.3.3's
    `async_mode` warns and does nothing (every run is asynchronous)."""
    Path("judges.yaml").write_text(JUDGES["docs/guides/judges_load.md:10"][1])
    with pytest.warns(MetaEvaluatorDeprecationWarning, match="async_mode"):
        names = run_page_block("docs/guides/judges_load.md:46")
    assert list(names["evaluator"].judge_registry) == ["gpt_4_judge"]


@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("docs/guides/judges_load.md:166", "SigV4"),
        ("docs/guides/judges_load.md:175", "llm_client: gemini"),
    ],
)
def test_bedrock_and_vertex_are_refused_saying_how_to_reach_them(
    where: str, says: str, judged: MetaEvaluator
) -> None:
    Path("judges.yaml").write_text(yaml_of(where))
    with pytest.raises(JudgeConfigError) as caught:
        judged.load_judges_from_yaml("judges.yaml")
    assert says in caught.value.message and "OpenAI-compatible gateway" in caught.value.message


def test_azure_loads_and_says_what_it_needs_before_any_call(
    judged: MetaEvaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_API_KEY", "azure-value")
    Path("judges.yaml").write_text(yaml_of("docs/guides/judges_load.md:157"))
    judged.load_judges_from_yaml("judges.yaml")
    with pytest.raises(JudgeConfigError, match="AZURE_API_BASE and AZURE_API_VERSION"):
        judged.run_judges_async(transport=httpx.MockTransport(answer))


def test_the_example_judges_yaml_names_bedrock_alone(judged: MetaEvaluator) -> None:
    """examples/rejection/judges.yaml of v0.3.3, unchanged: its ten judges load but Bedrock,
    which is refused (the file's other nine providers are reached as the tests above show)."""
    shutil.copy(HERE / "judges.yaml", "judges.yaml")
    with pytest.raises(JudgeConfigError) as caught:
        judged.load_judges_from_yaml("judges.yaml")
    assert [e["loc"] for e in caught.value.errors] == ["judges[3].llm_client"]
    assert judged.judge_registry == {}  # all or none: nothing registered


def test_the_python_of_the_judges_page_runs(judged: MetaEvaluator) -> None:
    names = run_page_block("docs/guides/judges_load.md:248")
    assert names["prompt_columns"] == ["user_prompt"]
