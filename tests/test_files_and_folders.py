"""Files and folders the user does not expect: YAML alias bombs, symlinks out of the project,
a full or read-only disk, and git-lfs pointers where data should be.

Each failure must raise a typed error that names the path; a run stopped by the file system
exits with its own code (4) and resumes on the next run.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.cli import main
from meta_evaluator.errors import (
    JudgeConfigError,
    MetricConfigError,
    StateError,
)
from meta_evaluator.storage import read_yaml

JUDGE = "mock_refusal_judge"

# ----- YAML alias bombs -----------------------------------------------------------------------

# The classic "billion laughs": under 1 KB, 9**9 strings once every alias is expanded.
BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [
        f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]"
        for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
    ]
)


def test_the_bomb_is_small() -> None:
    assert len(BOMB.encode()) < 1024


def test_read_yaml_refuses_aliases(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB, encoding="utf-8")
    with pytest.raises(StateError, match="alias") as caught:
        read_yaml(path)
    assert caught.value.path == path
    assert "line 2" in str(caught.value)


def test_read_yaml_refuses_a_lone_anchor_and_alias(tmp_path: Path) -> None:
    path = tmp_path / "small.yaml"
    path.write_text("a: &x 1\nb: *x\n", encoding="utf-8")
    with pytest.raises(StateError, match="alias"):
        read_yaml(path)


def test_judges_yaml_bomb_fails_fast(tmp_path: Path) -> None:
    path = tmp_path / "judges.yaml"
    path.write_text(BOMB + "\njudges: *i\n", encoding="utf-8")
    evaluator = MetaEvaluator(tmp_path / "project")
    with pytest.raises(JudgeConfigError, match="alias") as caught:
        evaluator.load_judges_from_yaml(path)
    assert caught.value.path == path
    assert len(str(caught.value)) < 1000


def test_metrics_yaml_bomb_fails_fast(tmp_path: Path) -> None:
    from meta_evaluator.scores.yaml_config import read_metrics_yaml

    path = tmp_path / "metrics.yaml"
    path.write_text(BOMB + "\nmetrics: *i\n", encoding="utf-8")
    with pytest.raises(MetricConfigError, match="alias") as caught:
        read_metrics_yaml(path)
    assert caught.value.path == path
    assert len(str(caught.value)) < 1000


@dataclass(frozen=True)
class Exited:
    returncode: int
    stdout: str
    stderr: str


Main = Callable[..., Exited]


@pytest.fixture
def entry(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Main:
    """`meta-evaluator ARGS` through the console script's `main()`, in this process."""

    def call(*args: str | Path) -> Exited:
        monkeypatch.setattr(sys, "argv", ["meta-evaluator", *map(str, args)])
        capsys.readouterr()
        with pytest.raises(SystemExit) as stopped:
            main()
        out, err = capsys.readouterr()
        code = stopped.value.code
        return Exited(code if isinstance(code, int) else int(code is not None), out, err)

    return call


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from typer.testing import CliRunner

    from meta_evaluator.cli import app

    project = tmp_path_factory.mktemp("example") / "refusal"
    done = CliRunner().invoke(app, ["init", str(project), "--example", "refusal"])
    assert done.exit_code == 0, done.output
    return project


@pytest.fixture
def project(example: Path, tmp_path: Path) -> Path:
    """A private copy of the fresh refusal example (no runs yet)."""
    copy = tmp_path / "refusal"
    shutil.copytree(example, copy)
    return copy


def test_cli_score_with_a_metrics_bomb_exits_2(project: Path, entry: Main) -> None:
    bomb = project / "bomb.yaml"
    bomb.write_text(BOMB + "\nmetrics: *i\n", encoding="utf-8")
    done = entry("score", project, "--metrics", bomb)
    assert done.returncode == 2
    assert "alias" in done.stderr and str(bomb) in done.stderr
    assert "Traceback" not in done.stderr
