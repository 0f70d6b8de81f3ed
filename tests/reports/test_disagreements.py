"""The report's disagreement section (reports/disagreements.py): the confusion matrix against
the humans' majority (checked with scikit-learn) and the rows most humans contradict."""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.examples import create_example_project
from meta_evaluator.reports import read_report_inputs, write_report
from meta_evaluator.reports.disagreements import MOST_DISAGREED, disagreements
from meta_evaluator.reports.sections import SECTIONS, scores


class _Tables(HTMLParser):
    """The cells of each table of a piece of HTML, as text."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(self._cell.strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell += data


def tables(html: str) -> list[list[list[str]]]:
    parser = _Tables()
    parser.feed(html)
    return parser.tables


@pytest.fixture(scope="module")
def refusal(tmp_path_factory: pytest.TempPathFactory) -> MetaEvaluator:
    folder = tmp_path_factory.mktemp("report") / "refusal"
    evaluator = create_example_project("refusal", folder)
    evaluator.run_judges_async()
    return MetaEvaluator(folder, load=True)


def _expected(evaluator: MetaEvaluator) -> dict[Any, tuple[Any, Any, int, int]]:
    """Per id: judge label, majority, humans against, humans labelled (plain Python)."""
    (results,) = evaluator.load_all_judge_results().values()
    judge = {
        r["original_id"]: r["rejection"] if r["outcome"] == "valid" else None
        for r in results.results_data.to_dicts()
    }
    humans = [
        {r["original_id"]: r["rejection"] for r in h.results_data.to_dicts()}
        for h in evaluator.load_all_human_results().values()
    ]
    out = {}
    for row_id, label in judge.items():
        votes = [h[row_id] for h in humans if h.get(row_id) is not None]
        best = max(Counter(votes).items(), key=lambda item: (item[1], item[0]))[0]
        out[row_id] = (label, best, sum(v != label for v in votes), len(votes))
    return out


def test_the_section_follows_the_scores_in_the_page(refusal: MetaEvaluator, tmp_path: Path) -> None:
    assert SECTIONS.index(disagreements) == SECTIONS.index(scores) + 1
    text = write_report(refusal, tmp_path).read_text(encoding="utf-8")
    place = text.index("Where the judges disagree with the humans")
    assert text.index("<h2>Scores</h2>") < place < text.index("<h2>Judges:")
    assert "<script" not in text


def test_the_matrix_is_sklearns_and_the_rows_are_the_worst(refusal: MetaEvaluator) -> None:
    from sklearn.metrics import confusion_matrix

    section = disagreements(read_report_inputs(refusal))
    matrix, rows = tables(section)
    expected = _expected(refusal)
    both = [(j, m) for j, m, _, _ in expected.values() if j is not None]
    labels = ["rejection", "not rejection"]
    reference = confusion_matrix([j for j, _ in both], [m for _, m in both], labels=labels)
    assert matrix[0][1:] == labels
    assert [[int(c.replace(",", "")) for c in line[1:]] for line in matrix[1:]] == (
        reference.tolist()
    )
    assert [line[0] for line in matrix[1:]] == labels
    agreed = int(reference.trace())
    assert f"{agreed} of {len(both)} rows agree ({agreed / len(both):.1%})" in section
    missing = len(expected) - len(both)
    lack = "1 row lacks" if missing == 1 else f"{missing} rows lack"  # never "1 rows" (trial 2)
    assert f"; {lack} a judge's label or a human label." in section

    wrong = [(i, e) for i, e in expected.items() if e[0] is not None and e[0] != e[1]]
    wrong.sort(key=lambda item: (-item[1][2], -item[1][2] / item[1][3]))  # stable: data order
    listed = rows[1:]
    assert rows[0] == ["id", "prompt", "judge", "humans", "judge's reasoning"]
    assert len(listed) == min(MOST_DISAGREED, len(wrong)) > 0
    assert [int(line[0]) for line in listed] == [i for i, _ in wrong[:MOST_DISAGREED]]
    for line, (_, (label, majority, against, labelled)) in zip(listed, wrong, strict=False):
        assert line[2] == label
        assert line[3].startswith(f"{majority} {against} of {labelled} against")
        assert line[4].startswith("Judged offline by the mock client")  # the explanation task


def test_it_says_how_many_disagreeing_rows_it_lists(
    refusal: MetaEvaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`20 of 21 disagreeing rows shown` when the list is cut; `All 13 ...` when it is not."""
    wrong = [e for e in _expected(refusal).values() if e[0] is not None and e[0] != e[1]]
    assert len(wrong) > MOST_DISAGREED  # the example's mock judge: the list is cut
    section = disagreements(read_report_inputs(refusal))
    assert (
        f"<p class='disagreeing'>{MOST_DISAGREED} of {len(wrong)} disagreeing rows shown, most "
        "humans against the judge first; <code>meta-evaluator view</code> lists them all.</p>"
    ) in section

    from meta_evaluator.reports import disagreements as module

    monkeypatch.setattr(module, "MOST_DISAGREED", len(wrong))  # room for every row
    whole = disagreements(read_report_inputs(refusal))
    assert (
        f"<p class='disagreeing'>All {len(wrong)} disagreeing rows, most humans against the "
        "judge first.</p>"
    ) in whole
    assert len(tables(whole)[1]) == len(wrong) + 1


def test_markup_in_the_data_is_escaped(tmp_path: Path) -> None:
    from tests.view.conftest import small_project

    project = small_project(
        tmp_path / "p",
        [1, 2],
        ["<script>alert(1)</script>", "<img src=x onerror=alert(2)>"],
        ["yes", "yes"],
        {"ana": ["no", "no"], "ben": ["no", "no"], "chen": ["yes", "no"]},
    )
    section = disagreements(read_report_inputs(MetaEvaluator(project, load=True)))
    assert "<script>" not in section and "<img" not in section
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in section
    _, rows = tables(section)
    assert [line[0] for line in rows[1:]] == ["2", "1"]  # 3 of 3 against, then 2 of 3


def test_no_section_without_humans_or_judges(tmp_path: Path) -> None:
    fresh = create_example_project("refusal", tmp_path / "fresh")  # humans, no judge run
    assert disagreements(read_report_inputs(fresh)) == ""
    evaluator = create_example_project("fairness", tmp_path / "fairness")  # a judge, no humans
    evaluator.run_judges_async()
    assert disagreements(read_report_inputs(evaluator)) == ""


def test_a_project_read_through_its_load_methods(refusal: MetaEvaluator) -> None:
    """A `ReportedProject` whose folders are not named is read through its two load methods."""

    class Folders:
        reports_dir = refusal.paths.reports_dir
        scores_dir = refusal.paths.scores_dir

    class Project:
        project_dir = refusal.project_dir
        paths = Folders()
        data = refusal.data
        eval_task = refusal.eval_task
        judge_registry = refusal.judge_registry
        load_all_judge_results = refusal.load_all_judge_results
        load_all_human_results = refusal.load_all_human_results

    through_files = disagreements(read_report_inputs(refusal))
    through_methods = disagreements(read_report_inputs(Project()))  # type: ignore[arg-type]
    assert re.sub(r"\s+", " ", through_methods) == re.sub(r"\s+", " ", through_files)


def test_without_a_free_text_task_the_raw_answers_of_the_listed_rows_are_shown(
    tmp_path: Path,
) -> None:
    from tests.conftest import chats, rejection_project

    evaluator = rejection_project(tmp_path / "p", chats(30))
    evaluator.add_judge("mock", "mock", "mock-1", "Did {response} refuse {prompt}?")
    evaluator.save_state()
    evaluator.run_judges_async()
    for name, flip in (("ana", 0), ("ben", 1)):
        labels = tmp_path / f"{name}.csv"
        pl.DataFrame(
            {
                "original_id": list(range(30)),
                "rejection": [("rejection", "not rejection")[(i + flip) % 2] for i in range(30)],
            }
        ).write_csv(labels)
        evaluator.add_external_annotation_results(labels, name)
    section = disagreements(read_report_inputs(MetaEvaluator(tmp_path / "p", load=True)))
    _, rows = tables(section)
    assert len(rows) > 1
    raw = {
        r["original_id"]: r["llm_raw_response_content"]
        for r in evaluator.load_all_judge_results()["mock"].results_data.to_dicts()
    }
    for line in rows[1:]:
        assert line[4] == raw[int(line[0])][:399] + ("…" if len(raw[int(line[0])]) > 399 else "")
        assert line[4].startswith('{"rejection": ')


def test_one_row_is_one_row() -> None:
    """ "1 rows lack" read wrong in the report (trial 2 #13)."""
    from meta_evaluator.reports.disagreements import _rows_lack

    assert (_rows_lack(1), _rows_lack(0), _rows_lack(1234)) == (
        "1 row lacks", "0 rows lack", "1,234 rows lack"
    )  # fmt: skip
