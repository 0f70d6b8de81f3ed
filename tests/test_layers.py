"""The layer contract of pyproject.toml ([tool.importlinter]; docs/architecture.md).

`make test` runs `lint-imports` before pytest (`make layers`); these tests make a plain
`pytest` enforce it too, and check that no module of the package escapes the contract.
"""

from __future__ import annotations

import pkgutil
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import meta_evaluator

ROOT = Path(__file__).resolve().parents[1]


def contracts() -> list[dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    found: list[dict[str, object]] = config["tool"]["importlinter"]["contracts"]
    return found


def test_the_layer_contract_is_kept() -> None:
    pytest.importorskip("importlinter")
    lint = Path(sys.executable).with_name("lint-imports")
    command = [str(lint)] if lint.exists() else [sys.executable, "-m", "importlinter.cli"]
    done = subprocess.run(
        [*command, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"Contracts: \d+ kept, 0 broken", done.stdout), done.stdout


def test_every_module_of_the_package_is_in_a_contract() -> None:
    named: set[str] = set()
    for contract in contracts():
        for key in ("layers", "source_modules"):
            for entry in contract.get(key, []):  # type: ignore[attr-defined]
                named.update(re.split(r"\s*[|:]\s*", str(entry)))
    modules = {
        f"meta_evaluator.{info.name}" for info in pkgutil.iter_modules(meta_evaluator.__path__)
    }
    assert modules - named == set(), "add these to a contract in pyproject.toml"
