"""project.yaml: the schema, and every problem of a file (and of what it names) in one error."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
from pydantic import BaseModel

from meta_evaluator.errors import ProjectFileError
from meta_evaluator.project_yaml import (
    AnnotationsEntry,
    DataSection,
    ProjectFile,
    ResultsEntry,
    SampleSection,
    dump_project_yaml,
    parse_project_yaml,
    read_project_judges,
    read_project_yaml,
    read_task_yaml,
    write_project_yaml,
)

CONFIGS = Path(__file__).parents[2] / "configs"
MODELS: list[type[BaseModel]] = [
    ProjectFile, DataSection, SampleSection, AnnotationsEntry, ResultsEntry,
]  # fmt: skip


@pytest.fixture
def configs(tmp_path: Path) -> Path:
    """A copy of configs/ to break."""
    copy = tmp_path / "configs"
    shutil.copytree(CONFIGS, copy)
    return copy


def write(folder: Path, text: str, name: str = "project.yaml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_the_shipped_example_reads_whole() -> None:
    spec = read_project_yaml(CONFIGS / "project.yaml")
    assert spec.data is not None and len(spec.data) == 32
    assert spec.data.id_column == "ticket_id" and spec.data.ids.dtype.is_integer()
    assert spec.task is not None and spec.task.task_names == ["resolved", "tone"]
    assert [j.id for j in spec.all_judges] == ["mock_support_judge", "mock_brief_judge"]
    assert [s.file for s in spec.judges] == [None, CONFIGS / "support-judges.yaml"]
    assert [a.owner_id for a in spec.annotations] == ["ana", "ben", "chen"]
    assert [(r.owner_id, r.entry.id_column) for r in spec.results] == [
        ("keyword_rule", "ticket_id")
    ]
    assert spec.metrics is not None and [m.get_unique_name() for m in spec.metrics.metrics] == [
        "resolved_accuracy",
        "resolved_kappa",
        "both_tasks_accuracy",
        "resolved_alpha",
    ]
    judge = spec.all_judges[0]
    assert judge.prompt.placeholders == ["product", "customer_message", "agent_reply"]
    assert judge.mock is not None and judge.mock.invalid_rate == 0.05


def test_every_key_is_documented_and_the_models_are_strict() -> None:
    for model in MODELS:
        assert model.model_config.get("frozen") and model.model_config.get("extra") == "forbid"
        for name, field in model.model_fields.items():
            assert field.description and len(field.description) > 15, (model.__name__, name)


def test_every_problem_of_the_file_at_once(configs: Path) -> None:
    """Problems of the schema and of what the paths lead to, in every section, in one error."""
    path = write(
        configs,
        """\
        data:
          file: data/support_tickets.csv
          id_colum: ticket_id
        task:
          task_schemas: {resolved: [resolved, not resolved]}
          response_columns: [agent_reply]
          answering_metod: xml
        judges:
          - {id: inline, llm_client: mock, model: m, prompt: 'Judge {agent_reply}', temperature: 3}
          - support-judges.yaml
          - {id: mock_brief_judge, llm_client: mock, model: m, prompt: 'x'}
          - missing-judges.yaml
        annotations:
          - {path: annotations/ana.csv, annotator_id: ana, taks: [resolved]}
          - {path: annotations/nobody.csv, annotator_id: ben}
        metrics:
          - {scorer: acuracy, task_names: [resolved], aggregation_name: single}
        colour: 1
        """,
    )
    with pytest.raises(ProjectFileError) as caught:
        read_project_yaml(path)
    exc = caught.value
    assert exc.path == path and exc.field == "data.id_colum"
    assert [(p["loc"], p["msg"]) for p in exc.errors] == [
        ("data.id_colum", "unknown key 'id_colum'; did you mean 'id_column'?"),
        ("task.answering_metod", "unknown key 'answering_metod'; did you mean 'answering_method'?"),
        ("annotations[0].taks", "unknown key 'taks'; did you mean 'tasks'?"),
        (
            "colour",
            "unknown key 'colour'; known keys: annotations, data, drift, judges, metrics, results, "
            "task",
        ),
        ("judges[0].temperature", "Input should be less than or equal to 2, got 3"),
        (
            "judges[2]",
            "judge id 'mock_brief_judge' is also given by judges[1] (support-judges.yaml)",
        ),
        ("judges[3]", exc.errors[6]["msg"]),
        # a missing file needs no other section: found with the keys that are wrong
        (
            "annotations[1].path",
            f"{configs / 'annotations/nobody.csv'}: no such file; check the path.",
        ),
        ("metrics[0]", "unknown scorer 'acuracy'; did you mean 'accuracy'?"),
    ]
    assert exc.errors[6]["msg"].startswith(f"{configs / 'missing-judges.yaml'}: no such file")
    lines = str(exc).splitlines()
    assert lines[0] == f"{path}: 9 problem(s) in the project configuration:"
    assert all(line.startswith(f"{path}: ") for line in lines[1:])


def test_the_paths_lead_to_usable_files(configs: Path) -> None:
    """Once the keys are right: the data, the task's columns, placeholders, labels, metrics."""
    path = write(
        configs,
        """\
        data: {file: data/support_tickets.csv, id_column: ticket_id}
        task:
          task_schemas: {resolved: [resolved, not resolved], tone: [polite, curt]}
          prompt_columns: [customer]
          response_columns: [agent_reply, answer]
        judges:
          - {id: j, llm_client: mock, model: m, prompt: 'Judge {agent_reply} for {custmer}'}
        annotations:
          - {path: annotations/ana.csv, annotator_id: ana, tasks: [resolution]}
          - {path: annotations/ben.csv, annotator_id: ben, id_column: ticket}
          - {path: annotations/none.csv, annotator_id: chen}
          - {path: annotations/ana.csv, annotator_id: ../x}
        results:
          - {path: results/keyword_rule.csv, judge_id: keyword_rule}
        metrics:
          - {scorer: accuracy, task_names: [resolve], aggregation_name: single}
        """,
    )
    with pytest.raises(ProjectFileError) as caught:
        read_project_yaml(path)
    found = {p["loc"]: p["msg"] for p in caught.value.errors}
    assert list(found) == [
        "annotations[3].annotator_id",  # the schema's problems first: a name of a file
        "task.prompt_columns",
        "task.response_columns",
        "judges[0].prompt",
        "annotations[0].tasks",  # the other entries are checked all the same
        "annotations[1].id_column",
        "annotations[2].path",
        "results[0].id_column",
        "metrics[0].task_names",
    ]
    assert "'../x' is not a safe file name" in found["annotations[3].annotator_id"]
    assert "['customer'] not in the data's columns" in found["task.prompt_columns"]
    assert "['answer']" in found["task.response_columns"]
    assert "{custmer}" in found["judges[0].prompt"]
    assert "resolution" in found["annotations[0].tasks"]
    assert "no such file" in found["annotations[2].path"]
    assert "'resolve'" in found["metrics[0].task_names"]


@pytest.mark.parametrize(
    ("data", "loc", "fragment"),
    [
        ("{file: data/nothing.csv}", "data.file", "no such file"),
        ("{file: data/support_tickets.csv, id_column: product}", "data.id_column", "product"),
        ("{file: data/support_tickets.txt}", "data.format", "names no format"),
        (
            "{file: data/support_tickets.csv, sample: {columns: [region], sample_percentage: 0.5}}",
            "data.sample",
            "region",
        ),
        ("{file: data/support_tickets.csv, format: parquet}", "data.file", "not"),
    ],
)
def test_data_problems(configs: Path, data: str, loc: str, fragment: str) -> None:
    (configs / "data" / "support_tickets.txt").write_text("a\n1\n")
    with pytest.raises(ProjectFileError) as caught:
        read_project_yaml(write(configs, f"data: {data}\n"))
    assert caught.value.errors[0]["loc"] == loc
    assert fragment in caught.value.errors[0]["msg"]


def test_data_that_cannot_be_read_leaves_the_placeholders_unchecked(configs: Path) -> None:
    """Not against the task's shown columns: the data's other columns are unknown (trial #4)."""
    text = (configs / "project.yaml").read_text(encoding="utf-8")
    assert "{product}" in (configs / "prompts" / "support.md").read_text(encoding="utf-8")
    path = write(configs, text.replace("data/support_tickets.csv", "data/missing.csv"), "m.yaml")
    with pytest.raises(ProjectFileError) as caught:
        read_project_yaml(path)
    assert [(p["loc"], p["msg"]) for p in caught.value.errors] == [
        ("data.file", f"{configs / 'data/missing.csv'}: no such file; check the path.")
    ]
    # Without a data section the task's shown columns are what the prompts may name.
    no_data = text.split("\ntask:", 1)[1].split("\nannotations:", 1)[0]
    with pytest.raises(ProjectFileError) as caught:
        read_project_yaml(write(configs, "task:" + no_data, "n.yaml"))
    assert "['{product}'] name no column" in caught.value.errors[0]["msg"]


def test_a_sample_is_drawn(configs: Path) -> None:
    path = write(
        configs,
        "data:\n  file: data/support_tickets.csv\n  id_column: ticket_id\n"
        "  sample: {columns: [product], sample_percentage: 0.5, seed: 7}\n",
    )
    spec = read_project_yaml(path)
    assert spec.data is not None and len(spec.data) == 16
    frame = spec.data.data
    assert frame.group_by("product").len().get_column("len").to_list() == [4, 4, 4, 4]
    assert read_project_yaml(path).data == spec.data  # the same seed, the same rows


def test_labels_need_data_and_task(configs: Path) -> None:
    path = write(configs, "annotations:\n  - {path: annotations/ana.csv, annotator_id: ana}\n")
    with pytest.raises(ProjectFileError, match="annotations: labels need the data and task"):
        read_project_yaml(path)


def test_an_annotator_twice_and_entries_of_the_wrong_kind(configs: Path) -> None:
    path = write(
        configs,
        """\
        annotations:
          - {path: annotations/ana.csv, annotator_id: ana}
          - {path: annotations/ben.csv, annotator_id: ana}
        results:
          - {path: results/keyword_rule.csv, annotator_id: x, judge_id: k}
          - {file: results/keyword_rule.csv, judge_id: k2}
        judges:
          - 3
          - {id: ok, llm_client: mock, model: m, prompt: x, max_concurency: 2}
        metrics: {scorer: accuracy}
        """,
    )
    with pytest.raises(ProjectFileError) as caught:
        parse_project_yaml(path)
    found = [(p["loc"], p["msg"]) for p in caught.value.errors]
    assert found[0][0] == "annotations" and "'ana' is also given by [0]" in found[0][1]
    assert found[1] == (
        "results[0].annotator_id",
        "unknown key 'annotator_id'; did you mean 'judge_id'?",
    )
    assert found[2] == ("results[1].path", "Field required")
    assert found[3] == ("results[1].file", "unknown key 'file'; did you mean 'path'?")
    assert found[4][0] == "judges" and "entries [0]" in found[4][1]
    assert found[5][0] == "metrics" and "list of metric entries" in found[5][1]
    # read in depth, the judge entries that are mappings are checked too
    with pytest.raises(ProjectFileError) as caught:
        read_project_yaml(path)
    assert "judges[1].max_concurency: unknown key 'max_concurency'; did you mean" in str(
        caught.value
    )


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("data: [\n", "not valid YAML"),
        ("- data\n", "must be a mapping of sections"),
        ("data: {file: a.csv}\ndata: {file: b.csv}\n", "appears twice"),
    ],
)
def test_unreadable_files(tmp_path: Path, text: str, fragment: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ProjectFileError, match=fragment) as caught:
        read_project_yaml(path)
    assert caught.value.path == path


def test_an_empty_file_is_an_empty_project(tmp_path: Path) -> None:
    spec = read_project_yaml(write(tmp_path, "# nothing yet\n"))
    assert spec.data is None and spec.task is None and spec.judges == () and spec.metrics is None
    with pytest.raises(ProjectFileError, match="no such file"):
        read_project_yaml(tmp_path / "nowhere.yaml")


def test_metrics_from_a_file_with_its_problems_placed_at_the_entry(configs: Path) -> None:
    (configs / "metrics.yaml").write_text(
        "metrics:\n  - {scorer: accuracy, task_names: [tone], aggregation_name: single}\n"
        "  - {scorer: accuracy, task_names: [nope], aggregation_name: singel}\n"
    )
    path = write(
        configs,
        "data: {file: data/support_tickets.csv, id_column: ticket_id}\n"
        "task: {task_schemas: {tone: [polite, curt]}, response_columns: [agent_reply]}\n"
        "metrics: metrics.yaml\n",
    )
    with pytest.raises(ProjectFileError) as caught:
        read_project_yaml(path)
    (problem,) = caught.value.errors
    assert problem["loc"] == "metrics"
    assert problem["msg"] == (
        f"{configs / 'metrics.yaml'}: metrics[1].aggregation_name: Input should be 'single', "
        "'multitask' or 'multilabel', got 'singel'"
    )
    (configs / "metrics.yaml").write_text(
        "metrics:\n  - {scorer: accuracy, task_names: [nope], aggregation_name: single}\n"
    )
    with pytest.raises(ProjectFileError, match=r"metrics\.yaml: metrics\[0\]\.task_names: "):
        read_project_yaml(path)


def test_the_judges_alone(configs: Path) -> None:
    sources = read_project_judges(CONFIGS / "project.yaml", columns=None)
    assert [[j.id for j in s.judges] for s in sources] == [
        ["mock_support_judge"],
        ["mock_brief_judge"],
    ]
    with pytest.raises(
        ProjectFileError, match=r"judges\[0\]\.prompt_file: judge 'mock_support_judge'"
    ):
        read_project_judges(CONFIGS / "project.yaml", columns=["product"])


def test_the_task_of_a_task_file_or_a_project_file(configs: Path) -> None:
    from_project = read_task_yaml(CONFIGS / "project.yaml")
    assert from_project.required_tasks == ["resolved"]
    path = write(configs, "task:\n  task_schemas: {a: [x, y]}\n  response_columns: [r]\n", "t.yaml")
    assert read_task_yaml(path).task_names == ["a"]
    write(configs, "tsk: {}\n", "t.yaml")
    with pytest.raises(ProjectFileError) as caught:
        read_task_yaml(path)
    assert [p["loc"] for p in caught.value.errors] == ["tsk", "task"]
    assert "did you mean 'task'?" in str(caught.value)


def test_written_back_it_reads_the_same(tmp_path: Path) -> None:
    _, model = parse_project_yaml(CONFIGS / "project.yaml")
    copy = tmp_path / "project.yaml"
    write_project_yaml(copy, model, root=tmp_path)
    text = copy.read_text()
    assert text.startswith("# This project's project.yaml")
    assert "annotation_prompt" in text and "prompt_columns" in text
    assert "structured_outputs_fallback" not in text  # defaults are left out
    assert parse_project_yaml(copy)[1] == model
    assert list(dump_project_yaml(model)) == [
        "data",
        "task",
        "judges",
        "annotations",
        "results",
        "metrics",
        "drift",
    ]


def test_the_drift_section(tmp_path: Path) -> None:
    """Its keys checked with the rest; written back as given; read by `drift` each time."""
    from meta_evaluator.project_yaml import read_drift_thresholds
    from meta_evaluator.scores.drift import DriftThresholds

    path = tmp_path / "project.yaml"
    path.write_text("drift: {max_psi: 0.2, max_changed_share: null}\n")
    _, model = parse_project_yaml(path)
    assert model.drift == DriftThresholds(max_psi=0.2, max_changed_share=None)
    assert dump_project_yaml(model) == {"drift": {"max_psi": 0.2, "max_changed_share": None}}
    assert read_drift_thresholds(tmp_path) == model.drift
    assert read_drift_thresholds(tmp_path / "elsewhere") == DriftThresholds()
    path.write_text("drift: {max_pis: 0.2, max_agreement_drop: -1, agreement: f1}\nmetrics: 3\n")
    with pytest.raises(ProjectFileError) as caught:
        parse_project_yaml(path)
    problems = [(p["loc"], p["msg"].split(";")[0].split(",")[0]) for p in caught.value.errors]
    assert sorted(problems) == [
        ("drift.agreement", "Input should be 'accuracy_majority_vote'"),
        ("drift.max_agreement_drop", "Input should be greater than or equal to 0"),
        ("drift.max_pis", "unknown key 'max_pis'"),
        ("metrics", "must be a list of metric entries (mappings with scorer"),
    ]
