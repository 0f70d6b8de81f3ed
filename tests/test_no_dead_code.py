"""No function, class or method of the command line's modules is left without a caller.

A vulture-style look, kept as a test: each name defined in `cli.py`, `_cli_*.py` and the
progress display they drive (`judge/_progress.py`) must be used somewhere in the package
besides its definition; typer commands, registered by their decorator, and Python's own
hooks (`__enter__`, ...) count as used.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "meta_evaluator"
WATCHED = [
    *sorted(PACKAGE.glob("_cli_*.py")),
    PACKAGE / "cli.py",
    PACKAGE / "judge" / "_progress.py",
]


def defined(tree: ast.Module) -> list[str]:
    """The functions, classes and methods a module defines, its typer commands left out."""
    names = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        registered = any(
            isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr in
            ("command", "callback")
            for d in node.decorator_list
        )  # fmt: skip
        if not registered and not node.name.startswith("__"):
            names.append(node.name)
    return names


def test_every_name_of_the_command_line_has_a_use() -> None:
    words: Counter[str] = Counter()
    for path in PACKAGE.rglob("*.py"):
        words.update(re.findall(r"\w+", path.read_text(encoding="utf-8")))
    unused = [
        f"{module.relative_to(PACKAGE)}: {name}"
        for module in WATCHED
        for name in defined(ast.parse(module.read_text(encoding="utf-8")))
        if words[name] < 2  # its definition only
    ]
    assert unused == []
