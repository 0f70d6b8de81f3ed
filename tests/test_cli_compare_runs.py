"""`meta-evaluator compare-runs`: the table, `--json`, the file every call writes, the errors.

Through the console script's `main()` in this process (`entry`), on projects whose runs are
imported label files (tests/scores/test_run_comparison.py builds them).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Main
from tests.scores.test_run_comparison import IDS, _write, make_project


def test_the_table_lists_the_flips_and_the_change(tmp_path: Path, entry: Main) -> None:
    evaluator = make_project(tmp_path)
    done = entry("compare-runs", evaluator.project_dir, "mon", "tue")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Runs mon -> tue, judge j, task verdict (the judge configuration differs)"
    assert lines[1] == "Rows compared: 6 (labelled by both; 0 only by mon, 0 only by tue)"
    assert lines[2] == (
        "Flipped: 3 of 6 rows (1 toward the humans' majority, 2 away, 0 wrong both times)"
    )
    assert lines[3].split() == ["id", "mon", "tue", "humans", "direction"]
    assert [line.split() for line in lines[4:7]] == [
        ["12", "yes", "no", "yes", "away"],
        ["13", "no", "yes", "no", "away"],
        ["14", "no", "yes", "yes", "toward"],
    ]
    accuracy = next(line for line in lines if line.startswith("accuracy (humans' majority)"))
    assert accuracy.split()[3:6] == ["0.667", "0.500", "-0.167"]
    assert "McNemar's exact test" in done.stdout and "p = 1" in done.stdout
    saved = evaluator.project_dir / "reports" / "compare-runs" / "mon__tue.json"
    assert lines[-1] == f"Saved to {saved}"
    assert json.loads(saved.read_text(encoding="utf-8"))["flipped"] == [12, 13, 14]


def test_json_prints_what_is_saved(tmp_path: Path, entry: Main) -> None:
    evaluator = make_project(tmp_path, ids=[f"c{i}" for i in IDS])
    done = entry("compare-runs", evaluator.project_dir, "mon", "tue", "--json")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    saved = evaluator.project_dir / "reports" / "compare-runs" / "mon__tue.json"
    assert printed == json.loads(saved.read_text(encoding="utf-8"))
    assert printed["flipped"] == ["c12", "c13", "c14"]  # string ids stay strings
    assert [c["direction"] for c in printed["changes"]] == ["away", "away", "toward"]
    assert {s["name"] for s in printed["scores"]} == {
        "accuracy_majority_vote", "cohens_kappa_majority_vote", "accuracy_individual_average",
    }  # fmt: skip
    assert printed["run_a"]["run_id"] == "mon" and printed["bootstrap"]["n_resamples"] == 1000


def test_judge_and_task_options(tmp_path: Path, entry: Main) -> None:
    evaluator = make_project(tmp_path, extra_task={"tone": ["calm", "rude"]})
    source = _write(tmp_path / "k.csv", IDS, "verdict", ["no"] * 6)
    evaluator.add_external_judge_results(source, "k", run_id="tue", tasks=["verdict"])
    done = entry("compare-runs", evaluator.project_dir, "mon", "tue", "--judge", "j",
                 "--task", "verdict", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["key"] == "mon__tue__j__verdict"
    two = entry("compare-runs", evaluator.project_dir, "mon:j", "tue:k", "--task", "verdict")
    assert two.returncode == 0, two.stderr
    assert two.stdout.startswith("Runs mon:j -> tue:k, task verdict")
    assert (evaluator.project_dir / "reports/compare-runs/mon+j__tue+k__verdict.json").is_file()


def test_without_humans_the_figures_say_why(tmp_path: Path, entry: Main) -> None:
    evaluator = make_project(tmp_path, humans=False)
    done = entry("compare-runs", evaluator.project_dir, "mon", "tue")
    assert done.returncode == 0, done.stderr
    assert "Flipped: 3 of 6 rows (no direction: no human labels were given)" in done.stdout
    assert "unrated" in done.stdout
    assert "n/a: no human labels were given" in done.stdout
    assert "McNemar's exact test: n/a (no human labels were given)" in done.stdout


def test_a_long_list_of_flips_is_cut_in_the_table_only(tmp_path: Path, entry: Main) -> None:
    ids = list(range(1, 61))
    evaluator = make_project(tmp_path, ids=ids, humans=False, runs=(["yes"] * 60, ["no"] * 60))
    done = entry("compare-runs", evaluator.project_dir, "mon", "tue")
    assert done.returncode == 0, done.stderr
    assert "  ... and 10 more (all of them: --json, or " in done.stdout
    assert sum(line.rstrip().endswith("unrated") for line in done.stdout.splitlines()) == 50
    printed = json.loads(
        entry("compare-runs", evaluator.project_dir, "mon", "tue", "--json").stdout
    )
    assert printed["flipped"] == ids


def _fails(done: object, code: int, *said: str) -> None:
    assert done.returncode == code, (done.stdout, done.stderr)  # type: ignore[attr-defined]
    err = done.stderr  # type: ignore[attr-defined]
    assert "Traceback" not in err
    for text in said:
        assert text in err, err


def test_errors_name_what_exists(tmp_path: Path, entry: Main) -> None:
    evaluator = make_project(tmp_path)
    root = evaluator.project_dir
    _fails(entry("compare-runs", root, "mon", "wed"), 2,
           "run_b: no run 'wed'", "runs there: ['mon', 'tue']")  # fmt: skip
    _fails(entry("compare-runs", root, "mon:gpt", "tue"), 2,
           "run 'mon' has no judge 'gpt'; its judges: ['j']")  # fmt: skip
    _fails(entry("compare-runs", root, "mon", "tue", "--judge", "gpt"), 2, "its judges: ['j']")
    _fails(entry("compare-runs", root, "mon", "tue", "--task", "note"), 2,
           "'note' is free text")  # fmt: skip
    _fails(entry("compare-runs", root, "mon", "tue", "--task", "tone"), 2,
           "no task 'tone'; its tasks: ['verdict', 'note']")  # fmt: skip
    _fails(entry("compare-runs", root, "../x", "tue"), 2, "run_a")
    source = _write(tmp_path / "k.csv", IDS, "verdict", ["no"] * 6)
    evaluator.add_external_judge_results(source, "k", run_id="tue", tasks=["verdict"])
    _fails(entry("compare-runs", root, "mon", "tue"), 2,
           "run 'tue' holds the judges ['j', 'k']; name one with --judge J")  # fmt: skip
    source = _write(tmp_path / "sat.csv", IDS[:2], "verdict", ["no", "no"])
    evaluator.add_external_judge_results(source, "j", run_id="sat", tasks=["verdict"])
    source = _write(tmp_path / "sun.csv", IDS[2:], "verdict", ["no"] * 4)
    evaluator.add_external_judge_results(source, "j", run_id="sun", tasks=["verdict"])
    _fails(entry("compare-runs", root, "sat", "sun"), 2, "have no row in common")
    _fails(entry("compare-runs", tmp_path / "nowhere", "sat", "sun"), 2, "no such folder")
    assert not (root / "reports" / "compare-runs" / "sat__sun.json").exists()


def test_a_folder_linked_out_of_the_project_exits_4(tmp_path: Path, entry: Main) -> None:
    evaluator = make_project(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (evaluator.project_dir / "reports").mkdir(exist_ok=True)
    (evaluator.project_dir / "reports" / "compare-runs").symlink_to(outside)
    _fails(entry("compare-runs", evaluator.project_dir, "mon", "tue"), 4, "compare-runs")
    assert list(outside.iterdir()) == []


def test_every_run_is_named_however_long_the_list(tmp_path: Path, entry: Main) -> None:
    """The runs that exist are the answer to a mistyped run: none is cut off (trial #5)."""
    evaluator = make_project(tmp_path)
    runs = [f"run_20261128_16081{i}_b0567a" for i in range(5)] + ["sc5"]
    for run in runs:
        source = _write(tmp_path / f"{run}.csv", IDS, "verdict", ["no"] * 6)
        evaluator.add_external_judge_results(source, "j", run_id=run, tasks=["verdict"])
    done = entry("compare-runs", evaluator.project_dir, "mon", "nope")
    expected = repr(sorted(["mon", "tue", *runs]))
    assert len(expected) > 80
    _fails(done, 2, f"runs there: {expected}.")


def test_a_run_compared_with_itself_is_refused(tmp_path: Path, entry: Main) -> None:
    """`compare-runs p r2 r2` said nothing and saved r2__r2.json (trial #10)."""
    root = make_project(tmp_path).project_dir
    for b in ("mon", "mon:j"):
        _fails(entry("compare-runs", root, "mon", b), 2,
               f"run_b: '{b}' is the same run as run_a 'mon' (judge 'j')")  # fmt: skip
    assert not (root / "reports" / "compare-runs").exists()
    assert entry("compare-runs", root, "mon", "tue").returncode == 0
