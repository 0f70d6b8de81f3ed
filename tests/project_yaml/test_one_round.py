"""project.yaml: every mistake in one round of fixes, each check run as far as what it needs allows.

The files are the ones a new user wrote (reviews, three annotators) with every mistake they
made; before, fixing them took five rounds, each showing what the last one had hidden.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from meta_evaluator.errors import ProjectFileError
from meta_evaluator.project_yaml import read_project_yaml

REVIEWS = """\
rid,review,reply
r1,"The app crashes on login.","Sorry about that! Please update to 2.3."
r2,"Love the new dark mode.","Thanks, glad you like it!"
r3,"How do I export my data?","Go to Settings > Export."
r4,"Charged twice this month.","We have refunded the second charge."
"""

MISTAKES = """\
data:
  file: reviews.csv
  id_colum: rid
task:
  task_schema:
    helpful: [helpful, unhelpful]
  response_columns: [replies]
  required_tasks: [helpfulness]
judges:
  - id: offline
    llm_client: mok
    model: m1
    prompt_file: prompts/helpful.md
    temperature: 5
  - id: offline2
    llm_client: mock
    model: m1
    prompt: "Is {answer} helpful?"
annotations:
  - {path: ana.csv, annotator_id: ana}
  - {path: ben.csv, annotator_id: ../ben}
  - {path: chen.csv, annotator_id: chen}
metrics:
  - {scorer: acuracy, task_names: [helpful], aggregation_name: single}
  - {scorer: cohens_kappa, task_names: [helpful], aggregation_name: singel}
"""


def folder(tmp_path: Path, project: str) -> Path:
    """The user's folder: the data, ana's and ben's labels (no chen.csv, no prompt file)."""
    (tmp_path / "reviews.csv").write_text(REVIEWS)
    (tmp_path / "ana.csv").write_text("original_id,helpful\nr1,helpful\nr2,unhelpful\n")
    (tmp_path / "ben.csv").write_text("rid,helpfull\nr1,helpful\nr2,helpful\nr9,helpful\n")
    path = tmp_path / "project.yaml"
    path.write_text(textwrap.dedent(project))
    return path


def problems_of(path: Path) -> list[tuple[str, str]]:
    with pytest.raises(ProjectFileError) as caught:
        read_project_yaml(path)
    lines = str(caught.value).splitlines()
    assert (
        lines[0] == f"{path}: {len(caught.value.errors)} problem(s) in the project configuration:"
    )
    assert len(lines) == len(caught.value.errors) + 1  # one line each, the file named
    assert all(line.startswith(f"{path}: ") for line in lines[1:])
    return [(p["loc"], p["msg"]) for p in caught.value.errors]


def test_every_mistake_of_the_new_user_in_one_error(tmp_path: Path) -> None:
    path = folder(tmp_path, MISTAKES)
    found = problems_of(path)
    expected = [
        ("data.id_colum", "did you mean 'id_column'?"),
        ("task.task_schema", "did you mean 'task_schemas'?"),
        ("annotations[1].annotator_id", "'../ben' is not a safe file name"),
        # the task read with `task_schemas` as meant: what the misspelt key hid
        ("task.required_tasks", "names unknown task(s) ['helpfulness']; tasks are ['helpful']"),
        # the data loaded with `id_column: rid` as meant: the columns, then the placeholders
        ("task.response_columns", "['replies'] not in the data's columns"),
        ("judges[0].prompt_file", "cannot read the prompt file (no such file"),
        ("judges[0].llm_client", "'mok' is not known (did you mean 'mock'?)"),
        ("judges[0].temperature", "less than or equal to 2, got 5"),
        ("judges[1].prompt", "prompt placeholder(s) ['{answer}'] name no column"),
        # ben's file is checked though his id is unusable: its id column, task column and ids
        ("annotations[1].id_column", "It has the data's id column 'rid'"),
        ("annotations[1].path", "no column for the required task(s) ['helpful']"),
        ("annotations[1].path", "1 id(s) are not in the project's data: ['r9']"),
        ("annotations[2].path", "chen.csv: no such file"),
        ("metrics[0]", "unknown scorer 'acuracy'"),
        ("metrics[1].aggregation_name", "got 'singel'"),
    ]
    assert [loc for loc, _ in found] == [loc for loc, _ in expected]
    for (loc, message), (_, fragment) in zip(found, expected, strict=True):
        assert fragment in message, (loc, message)
    assert "task.task_schemas" not in dict(found)  # its "Field required" is the typo's line


def test_fixed_as_told_the_file_reads(tmp_path: Path) -> None:
    """Each message's advice, taken: no second round."""
    fixed = (
        MISTAKES.replace("id_colum:", "id_column:")
        .replace("task_schema:", "task_schemas:")
        .replace("[replies]", "[reply]")
        .replace("[helpfulness]", "[helpful]")
        .replace("llm_client: mok", "llm_client: mock")
        .replace("temperature: 5", "temperature: 0.5")
        .replace("{answer}", "{reply}")
        .replace("../ben}", "ben, id_column: rid}")
        .replace("acuracy", "accuracy")
        .replace("singel", "single")
    )
    path = folder(tmp_path, fixed)
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "helpful.md").write_text("Is {reply} helpful for {review}?")
    (tmp_path / "chen.csv").write_text("original_id,helpful\nr1,helpful\n")
    (tmp_path / "ben.csv").write_text("rid,helpful\nr1,helpful\nr2,helpful\n")
    spec = read_project_yaml(path)
    assert [a.owner_id for a in spec.annotations] == ["ana", "ben", "chen"]


def test_a_second_judge_with_the_same_id_and_a_label_file_without_the_task(
    tmp_path: Path,
) -> None:
    """bad2.yaml: the duplicate id of an invalid judge, and ana's column, in the first round."""
    path = folder(
        tmp_path,
        """\
        data: {file: reviews.csv, id_column: rid}
        task:
          task_schemas: {ok: ["yes", "no"]}
          response_columns: [reply]
          answering_metod: xml
        judges:
          - {id: j1, llm_client: mock, model: m1, prompt: "Is {reply} ok?"}
          - {id: j1, llm_client: opena, model: gpt-4o-mini, prompt: "Is {reply} ok?"}
        annotations:
          - {path: ana.csv, annotator_id: ana}
        """,
    )
    found = problems_of(path)
    assert [loc for loc, _ in found] == [
        "task.answering_metod",
        "judges[1].llm_client",
        "judges[1]",
        "annotations[0].path",
    ]
    assert found[2][1] == "judge id 'j1' is also given by judges[0]"
    assert "no column for the required task(s) ['ok']" in found[3][1]


def test_what_needs_the_data_waits_for_it_and_nothing_is_guessed(tmp_path: Path) -> None:
    """Without data: the labels' files and task columns are checked, never their ids.

    A key that resembles no key (`rows`) leaves the data unread; a misspelt `required_tasks`
    entry keeps the tasks it names rightly, so no task is required that the user left out.
    """
    path = folder(
        tmp_path,
        """\
        data: {file: reviews.csv, id_column: rid, rows: 10}
        task:
          task_schemas: {helpful: [helpful, unhelpful], tone: [kind, curt]}
          response_columns: [reply]
          required_tasks: [helpful, tonne]
        judges:
          - {id: j, llm_client: mock, model: m1, prompt: "Is {answer} helpful?"}
        annotations:
          - {path: ana.csv, annotator_id: ana}
          - {path: ben.csv, annotator_id: ben}
          - {path: chen.csv, annotator_id: chen}
        """,
    )
    found = problems_of(path)
    assert [loc for loc, _ in found] == [
        "data.rows",
        "task.required_tasks",
        "judges[0].prompt",  # against the task's columns, the data's being unknown
        "annotations[1].id_column",
        "annotations[1].path",
        "annotations[2].path",
    ]
    assert "['{answer}'] name no column (columns: ['reply'])" in found[2][1]
    assert "It has the data's id column" not in found[3][1]  # no data: no hint, no ids
    assert "no column for the required task(s) ['helpful'] " in found[4][1]  # not 'tone'
    assert "no such file" in found[5][1]


def test_a_key_left_out_is_still_said_beside_a_misspelt_one(tmp_path: Path) -> None:
    path = folder(tmp_path, "task:\n  task_schema: {helpful: [helpful, unhelpful]}\n")
    found = dict(problems_of(path))
    assert sorted(found) == ["task.response_columns", "task.task_schema"]
    assert found["task.response_columns"] == "Field required"
