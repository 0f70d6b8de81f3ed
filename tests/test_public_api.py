"""Every name API.md documents imports from its documented path; every __all__ is exact."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import meta_evaluator

# (module, name) pairs from ../shared/API.md that exist so far; later issues extend this list.
DOCUMENTED = [
    ("meta_evaluator", "MetaEvaluator"),
    ("meta_evaluator", "__version__"),
    ("meta_evaluator", "errors"),
    ("meta_evaluator.data", "DataLoader"),
    ("meta_evaluator.data", "EvalData"),
    ("meta_evaluator.data", "SampleEvalData"),
    ("meta_evaluator.eval_task", "EvalTask"),
    ("meta_evaluator.eval_task", "MultiLabelSchema"),
    ("meta_evaluator.judge", "Judge"),
    ("meta_evaluator.judge", "Prompt"),
]


@pytest.mark.parametrize(("module", "name"), DOCUMENTED)
def test_documented_name_imports(module: str, name: str) -> None:
    assert getattr(importlib.import_module(module), name) is not None


def _isort_order(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then functions, each alphabetical."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


def public_modules() -> list[str]:
    names = ["meta_evaluator"]
    for info in pkgutil.walk_packages(meta_evaluator.__path__, "meta_evaluator."):
        if not any(part.startswith("_") for part in info.name.split(".")) and info.name != (
            "meta_evaluator.cli"
        ):
            names.append(info.name)
    return names


@pytest.mark.parametrize("module_name", public_modules())
def test_all_is_sorted_and_resolves(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{module_name} needs an __all__"
    assert list(exported) == sorted(exported, key=_isort_order), f"{module_name}.__all__ order"
    for name in exported:
        assert getattr(module, name, None) is not None, f"{module_name}.{name} is missing"


def test_packages_export_what_their_modules_define() -> None:
    """A public class defined in a package's modules is re-exported by the package."""
    for package in ("meta_evaluator.data", "meta_evaluator.eval_task", "meta_evaluator.judge"):
        module = importlib.import_module(package)
        for info in pkgutil.iter_modules(module.__path__, package + "."):
            if info.name.rsplit(".", 1)[-1].startswith("_"):
                continue
            inner = importlib.import_module(info.name)
            for name in getattr(inner, "__all__", []):
                if isinstance(getattr(inner, name), type):
                    assert name in module.__all__, f"{package} does not re-export {name}"
