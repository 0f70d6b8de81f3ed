"""A key given where a variable's name belongs is refused everywhere, and never repeated.

Every way a judge or an embedding scorer gets its `api_key_env` (Python, judges YAML,
`main_state.json`, metrics YAML) refuses a value that looks like a key; neither the message,
the error list, the traceback, the logs nor the project folder holds any 6-character piece of
it. A key read from the environment with stray characters is refused before any request.
"""

from __future__ import annotations

import json
import logging
import traceback
from pathlib import Path

import httpx
import polars as pl
import pytest
import respx

from meta_evaluator import MetaEvaluator
from meta_evaluator.data import DataLoader
from meta_evaluator.errors import JudgeConfigError, MetaEvaluatorError, ScoringError, StateError
from meta_evaluator.judge import Judge, Prompt
from meta_evaluator.judge.yaml_config import read_judges_yaml
from meta_evaluator.scores.metrics import SemanticSimilarityScorer
from meta_evaluator.scores.yaml_config import read_metrics_yaml
from tests.scores.conftest import frames, run_scorer
from tests.secret_values import ACCEPTED, BAD_KEYS, PREFIXLESS, REFUSED, assert_not_echoed

CASES = list(REFUSED.items())
IDS = list(REFUSED)


def everything_said(exc: MetaEvaluatorError, caplog: pytest.LogCaptureFixture) -> list[str]:
    """What a user or a log could see of an error: message, error list, traceback, logs."""
    return [
        str(exc),
        exc.message,
        repr(exc.errors),
        "".join(traceback.format_exception(exc)),
        caplog.text,
    ]


def assert_refused_quietly(
    exc: MetaEvaluatorError, value: str, caplog: pytest.LogCaptureFixture
) -> None:
    assert "api_key_env" in str(exc) and "NAME of an environment variable" in str(exc)
    assert exc.field is not None and exc.field.endswith("api_key_env")
    assert_not_echoed(value, *everything_said(exc, caplog))


def project(tmp_path: Path) -> MetaEvaluator:
    evaluator = MetaEvaluator(tmp_path / "p")
    frame = pl.DataFrame({"qid": [1, 2], "response": ["a", "b"]})
    evaluator.add_data(DataLoader.load_from_dataframe("d", frame, "qid"))
    return evaluator


@pytest.mark.parametrize(("case", "value"), CASES, ids=IDS)
def test_judge_refuses_a_key_as_api_key_env(
    case: str, value: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with pytest.raises(JudgeConfigError) as caught:
        Judge(
            id="j", llm_client="openai", model="m", prompt=Prompt(id="p", prompt="x"),
            api_key_env=value,
        )  # fmt: skip
    assert_refused_quietly(caught.value, value, caplog)
    assert caught.value.judge_id == "j"


@pytest.mark.parametrize(("case", "value"), CASES, ids=IDS)
def test_add_judge_refuses_and_the_state_file_never_holds_it(
    case: str, value: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    evaluator = project(tmp_path)
    with pytest.raises(JudgeConfigError) as caught:
        evaluator.add_judge("j", "openai", "gpt", "Judge {response}", api_key_env=value)
    assert_refused_quietly(caught.value, value, caplog)
    evaluator.save_state()
    for file in (tmp_path / "p").rglob("*"):
        if file.is_file():
            assert_not_echoed(value, file.read_bytes().decode("utf-8", "replace"))


@pytest.mark.parametrize(("case", "value"), CASES, ids=IDS)
def test_judges_yaml_refuses_a_key_as_api_key_env(
    case: str, value: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    file = tmp_path / "judges.yaml"
    entry = {"id": "j", "llm_client": "openai", "model": "m", "prompt": "x", "api_key_env": value}
    file.write_text(json.dumps({"judges": [entry]}), encoding="utf-8")  # JSON is YAML
    with pytest.raises(JudgeConfigError) as caught:
        read_judges_yaml(file)
    assert_refused_quietly(caught.value, value, caplog)
    assert "judges[0].api_key_env" in str(caught.value)


@pytest.mark.parametrize(("case", "value"), CASES, ids=IDS)
def test_a_state_file_holding_a_key_is_refused_without_echo(
    case: str, value: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A project saved by a version that let the key through cannot be loaded until fixed."""
    caplog.set_level(logging.DEBUG)
    evaluator = project(tmp_path)
    evaluator.add_judge("j", "openai", "gpt", "Judge {response}", api_key_env="OPENAI_API_KEY")
    evaluator.save_state()
    state_file = tmp_path / "p" / "main_state.json"
    state = json.loads(state_file.read_text(encoding="utf-8"))
    state["judges"]["j"]["api_key_env"] = value
    state_file.write_text(json.dumps(state), encoding="utf-8")
    with pytest.raises(StateError) as caught:
        MetaEvaluator(tmp_path / "p", load=True)
    exc = caught.value
    assert "judges.j.api_key_env" in str(exc) and "NAME of an environment variable" in str(exc)
    assert_not_echoed(value, *everything_said(exc, caplog))


@pytest.mark.parametrize("name", ACCEPTED)
def test_real_variable_names_pass_every_entry(name: str, tmp_path: Path) -> None:
    evaluator = project(tmp_path)
    evaluator.add_judge("j", "openai", "gpt", "Judge {response}", api_key_env=name)
    evaluator.save_state()
    again = MetaEvaluator(tmp_path / "p", load=True)
    assert again.judge_registry["j"].api_key_env == name
    assert SemanticSimilarityScorer(api_key_env=name).api_key_env == name


@pytest.mark.parametrize(("case", "value"), CASES, ids=IDS)
def test_semantic_similarity_refuses_a_key_as_api_key_env(
    case: str, value: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ScoringError) as caught:
        SemanticSimilarityScorer(base_url="http://127.0.0.1:9/v1", api_key_env=value)
    assert "api_key_env" in str(caught.value)
    assert "NAME of an environment variable" in str(caught.value)
    assert_not_echoed(value, *everything_said(caught.value, caplog))


def test_metrics_yaml_refuses_a_key_as_api_key_env(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    value = REFUSED["groq"]
    file = tmp_path / "metrics.yaml"
    entry = {
        "scorer": "semantic_similarity",
        "args": {"base_url": "http://127.0.0.1:9/v1", "api_key_env": value},
        "task_names": ["t"],
        "aggregation_name": "single",
    }
    file.write_text(json.dumps({"metrics": [entry]}), encoding="utf-8")
    with pytest.raises(ScoringError) as caught:
        read_metrics_yaml(file)
    assert "metrics[0]" in str(caught.value) and "api_key_env" in str(caught.value)
    assert_not_echoed(value, *everything_said(caught.value, caplog))


# ----- the key's value ---------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "problem"), BAD_KEYS)
def test_semantic_similarity_refuses_a_key_with_stray_characters_before_any_request(
    value: str, problem: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMB_TEST_KEY", value)
    router = respx.Router(assert_all_called=False)
    route = router.post("https://embed.test/v1/embeddings").mock(return_value=httpx.Response(500))
    scorer = SemanticSimilarityScorer(
        "emb", base_url="https://embed.test/v1", api_key_env="EMB_TEST_KEY",
        transport=httpx.MockTransport(router.async_handler),
    )  # fmt: skip
    jf, hf = frames({1: "a", 2: "b"}, {"alice": {1: "a", 2: "c"}}, "int")
    with pytest.raises(ScoringError) as caught:
        run_scorer(scorer, jf, hf)
    message = str(caught.value)
    assert "semantic_similarity" in message and "EMB_TEST_KEY" in message and problem in message
    assert_not_echoed(value.strip(), message)
    assert route.call_count == 0


# ----- a key pasted elsewhere ----------------------------------------------------------------

# The refused values that carry a provider's prefix; hex or base62 runs without one (Azure,
# Mistral) are too much like the ids and hashes messages must still show.
PREFIXED = {case: value for case, value in REFUSED.items() if case not in PREFIXLESS}


@pytest.mark.parametrize(("case", "value"), list(PREFIXED.items()), ids=list(PREFIXED))
def test_a_key_pasted_as_a_judge_entry_is_not_quoted(
    case: str, value: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    yaml_file = tmp_path / "judges.yaml"
    yaml_file.write_text(json.dumps({"judges": [value]}), encoding="utf-8")
    with pytest.raises(JudgeConfigError) as caught:
        read_judges_yaml(yaml_file)
    assert "judges[0]: must be a mapping" in str(caught.value)
    assert_not_echoed(value, *everything_said(caught.value, caplog))
    evaluator = project(tmp_path)
    evaluator.save_state()
    state_file = tmp_path / "p" / "main_state.json"
    state = json.loads(state_file.read_text(encoding="utf-8"))
    state["judges"] = {"j": value}
    state_file.write_text(json.dumps(state), encoding="utf-8")
    with pytest.raises(StateError) as stated:
        MetaEvaluator(tmp_path / "p", load=True)
    assert "judges.j" in str(stated.value)
    assert_not_echoed(value, *everything_said(stated.value, caplog))


def test_ids_and_hashes_are_still_quoted() -> None:
    from meta_evaluator._util import shown

    for value in ("abc0487faa7afa0b7a153ca4a3aaef3c", "q-10", "sk-1", "hf_token", "skill-42"):
        assert shown(value) == repr(value)
    assert shown("gsk_" + "a1B2" * 50) == "'<hidden: looks like an API key>'"
