"""Writing a project's own `project.yaml`, from a `ProjectFile` (paths inside the project)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from meta_evaluator.project_yaml.schema import ProjectFile
from meta_evaluator.storage import atomic_write_text

__all__ = ["HEADER", "dump_project_yaml", "write_project_yaml"]

HEADER = (
    "# This project's project.yaml (docs/project-yaml.md), kept by meta-evaluator: `init --from`\n"
    "# and `init --data` write it, `add-task`, `add-judges`, `import-annotations` and\n"
    "# `import-results` add to it. Its paths are inside the project; `meta-evaluator run` reads\n"
    "# its judges each time, and `init NEW --from THIS_FILE` builds the same project again.\n"
)


_FIRST = ("path", "annotator_id", "judge_id")
"""The keys a labels entry starts with, whatever the schema's order."""


def dump_project_yaml(model: ProjectFile) -> dict[str, Any]:
    """The file's content as plain data: sections in schema order, defaults left out."""
    raw = model.model_dump(mode="json", exclude_defaults=True)
    if model.drift is not None:  # its limits as written, even those equal to the defaults
        raw["drift"] = model.drift.model_dump(mode="json", exclude_unset=True)
    for section in ("annotations", "results"):
        if section in raw:
            raw[section] = [
                {
                    **{k: e[k] for k in _FIRST if k in e},
                    **{k: v for k, v in e.items() if k not in _FIRST},
                }
                for e in raw[section]
            ]
    return raw


def write_project_yaml(path: Path, model: ProjectFile, *, root: Path) -> None:
    """Write `model` to `path` atomically, under the header saying what the file is.

    Raises:
        OutsideProjectError: The file would be written through a link out of `root`.
        DiskFullError, PermissionDeniedError, StorageError: The write failed.
    """
    import yaml

    text = yaml.safe_dump(dump_project_yaml(model), sort_keys=False, allow_unicode=True)
    atomic_write_text(path, HEADER + text, root=root)
