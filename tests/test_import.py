"""`import meta_evaluator` stays light: heavy or optional modules load on first use."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["polars", "pydantic", "numpy", "scipy", "matplotlib", "httpx", "anyio", "typer", "yaml"]


def loaded_after(statement: str) -> list[str]:
    script = (
        f"import json, sys\n{statement}\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    return list(json.loads(out.stdout))


def test_import_meta_evaluator_loads_nothing_heavy() -> None:
    loaded = loaded_after("import meta_evaluator")
    assert [m for m in HEAVY if m in loaded] == []


def test_errors_and_version_are_light() -> None:
    loaded = loaded_after("from meta_evaluator import errors, __version__")
    assert [m for m in HEAVY if m in loaded] == []


def test_project_loads_no_plotting_http_or_cli() -> None:
    loaded = loaded_after("from meta_evaluator import MetaEvaluator")
    assert "polars" in loaded  # proves the lazy attribute really imported the project
    assert [m for m in ("matplotlib", "scipy", "httpx", "anyio", "typer") if m in loaded] == []


def test_data_loading_needs_no_pydantic() -> None:
    """Loading data is polars only; configuration models (pydantic) load with the project."""
    loaded = loaded_after("import meta_evaluator.data")
    assert "polars" in loaded
    assert [m for m in ("pydantic", "yaml", "httpx", "matplotlib", "typer") if m in loaded] == []
