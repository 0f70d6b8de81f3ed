"""Copying the files a `project.yaml` names into the project, and saying where they are now.

For `meta-evaluator init --from` and the commands that add a file to a project
(`meta_evaluator._cli_project`). A file already inside the project stays where it is; a file of
another content in the way gets another name (`name-2.csv`), unless it is one the copy replaces
(the earlier copy of a judges file `add-judges --overwrite` replaces whole); every copy is atomic
and never written through a link out of the project.
"""

from __future__ import annotations

import filecmp
import shutil
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

from meta_evaluator._util import shown
from meta_evaluator.errors import JudgeConfigError, MetaEvaluatorError
from meta_evaluator.project_yaml import ProjectFile, ProjectSpec, dump_project_yaml
from meta_evaluator.storage import atomic_write, os_error, read_yaml, write_yaml

__all__ = ["INPUTS", "Copier"]

INPUTS = "inputs"
"""The folder of a project holding the files it was built from, as given."""


class Copier:
    """Copies files into the project, and says where they are, relative to it."""

    def __init__(self, root: Path, base: Path) -> None:
        self.root = root
        self.base = base
        """The folder paths of the source file are relative to."""

    def inside(self, path: Path) -> str | None:
        """`path` relative to the project (posix), or None when it is outside."""
        try:
            return Path(path).resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return None

    def copy(self, source: Path, rel: str, *, replace: Collection[Path] = ()) -> str:
        """Copy `source` to `rel` in the project (another name if a different file is there).

        A file of `replace` (paths in the project) in the way is written over instead.

        Returns:
            Where the file is in the project: `rel`, the other name, or where `source` already
            is when it is inside the project.
        """
        already = self.inside(source)
        if already is not None:
            return already
        target = self._free(self.root / rel, source, replace)
        if not (target.exists() and filecmp.cmp(target, source, shallow=False)):
            try:
                with source.open("rb") as read, atomic_write(target, "wb", root=self.root) as out:
                    shutil.copyfileobj(read, out, 1 << 20)
            except OSError as exc:
                raise os_error(source, exc, "read") from exc
        return target.relative_to(self.root).as_posix()

    def _free(self, target: Path, source: Path, replace: Collection[Path] = ()) -> Path:
        """`target`, or `stem-2.ext`, ...: the first absent, of `source`'s bytes, or replaced.

        A file of `replace` (in the project) counts as free: the copy is to write over it.
        """
        replaced = {path.resolve() for path in replace}
        number = 1
        candidate = target
        while (
            candidate.exists()
            and not filecmp.cmp(candidate, source, shallow=False)
            and candidate.resolve() not in replaced
        ):
            number += 1
            candidate = target.with_name(f"{target.stem}-{number}{target.suffix}")
        return candidate

    def judges_file(self, file: Path, *, replace: Collection[Path] = ()) -> str:
        """Copy a judges YAML into `judges/` with its prompt files; where it is now.

        Kept byte for byte (its comments too) when each prompt path is plain (inside the
        YAML's folder) and free in `judges/`; otherwise the prompts go to `judges/prompts/` and
        the copy names them there. A judges file of `replace` in the way of the copy is written
        over (prompt files never are).
        """
        already = self.inside(file)
        if already is not None:
            return already
        raw = read_yaml(file)
        entries = [e for e in raw["judges"] if isinstance(e, dict) and "prompt_file" in e]
        judges_dir = self.root / "judges"
        prompts = [(e, Path(str(e["prompt_file"]))) for e in entries]
        plain = all(
            not p.is_absolute()
            and ".." not in p.parts
            and self._free(judges_dir / p, file.parent / p) == judges_dir / p
            for _, p in prompts
        )
        if plain:
            for _, prompt in prompts:
                self.copy(file.parent / prompt, f"judges/{prompt.as_posix()}")
            return self.copy(file, f"judges/{file.name}", replace=replace)
        for entry, prompt in prompts:
            rel = self.copy(file.parent / prompt, f"judges/prompts/{prompt.name}")
            entry["prompt_file"] = Path(rel).relative_to("judges").as_posix()
        target = self._free(judges_dir / file.name, file, replace)
        write_yaml(target, raw, root=self.root)
        return target.relative_to(self.root).as_posix()

    def replaced_judges_files(
        self, file: Path, ids: Collection[str], named: Sequence[str | dict[str, Any]]
    ) -> list[Path]:
        """The project's judges files that `file`, giving the judges `ids`, replaces whole.

        For `add-judges --overwrite`: the YAML files of `judges/` and those project.yaml names
        (`named`, its `judges:` entries) that give one of `ids`, so that no judge is given by
        two files; each resolved, and inside the project. A file that cannot be read is left to
        `run`, which says what is wrong.

        Raises:
            JudgeConfigError: Such a file also gives a judge `file` does not (it cannot go
                whole), or lies outside the project (it is never removed from here); it is
                named with those judges.
        """
        own = Path(file).resolve()
        candidates = {p.resolve() for p in (self.root / "judges").glob("*.yaml")}
        candidates |= {(self.root / e).resolve() for e in named if isinstance(e, str)}
        replaced: list[Path] = []
        for path in sorted(candidates - {own}):
            if path.name.startswith(".") or not path.is_file():
                continue
            try:
                raw = read_yaml(path)
            except MetaEvaluatorError:
                continue
            entries = raw.get("judges") if isinstance(raw, dict) else None
            if not isinstance(entries, list):
                continue
            given = {str(e["id"]) for e in entries if isinstance(e, dict) and "id" in e}
            if not given & set(ids):
                continue
            if self.inside(path) is None:  # a shared file, or one a link in judges/ points at
                raise JudgeConfigError(
                    f"{file}: --overwrite would replace {path}, which gives "
                    f"{shown(sorted(given & set(ids)))} but lies outside the project {self.root}; "
                    "it is never changed from here: edit it there, or remove its entry from "
                    "project.yaml (or its link from judges/) and add the file again.",
                    path=file,
                    field="id",
                )
            others = sorted(given - set(ids))
            if others:
                where = self.inside(path) or str(path)
                raise JudgeConfigError(
                    f"{file}: --overwrite replaces the project's copy {where} whole, which also "
                    f"gives {shown(others)}, not in {Path(file).name}; add them to {file}, or "
                    f"edit {where} in the project instead.",
                    path=file,
                    field="id",
                )
            replaced.append(path)
        return replaced

    def outside(self, spec: ProjectSpec) -> list[Path]:
        """The files `spec` names that lie outside the project."""
        return [path for path in self._named(spec) if self.inside(path) is None]

    def _named(self, spec: ProjectSpec) -> Iterator[Path]:
        if spec.data_file is not None:
            yield spec.data_file
        for entry in spec.model.judges:
            if isinstance(entry, str):
                file = self.base / entry
                yield file
                raw = read_yaml(file)
                for judge in raw["judges"]:
                    if isinstance(judge, dict) and "prompt_file" in judge:
                        yield file.parent / str(judge["prompt_file"])
            elif "prompt_file" in entry:
                yield self.base / str(entry["prompt_file"])
        for source in (*spec.annotations, *spec.results):
            yield source.file
        if spec.metrics_file is not None:
            yield spec.metrics_file

    def copy_all(self, spec: ProjectSpec) -> ProjectFile:
        """Copy in what `spec` names; the project's own `ProjectFile`, paths inside it."""
        raw = dump_project_yaml(spec.model)
        if spec.data_file is not None:
            raw["data"]["file"] = self.copy(spec.data_file, f"{INPUTS}/data/{spec.data_file.name}")
        judges: list[Any] = []
        for entry in raw.get("judges", []):
            if isinstance(entry, str):
                judges.append(self.judges_file(self.base / entry))
            elif "prompt_file" in entry:
                prompt = self.base / str(entry["prompt_file"])
                judges.append(
                    {**entry, "prompt_file": self.copy(prompt, f"judges/prompts/{prompt.name}")}
                )
            else:
                judges.append(entry)
        if judges:
            raw["judges"] = judges
        for section, sources in (("annotations", spec.annotations), ("results", spec.results)):
            for entry, source in zip(raw.get(section, []), sources, strict=True):
                entry["path"] = self.copy(
                    source.file, f"{INPUTS}/{section}/{source.owner_id}{source.file.suffix}"
                )
        if spec.metrics_file is not None:
            raw["metrics"] = self.copy(spec.metrics_file, "metrics.yaml")
        return ProjectFile(**raw)
