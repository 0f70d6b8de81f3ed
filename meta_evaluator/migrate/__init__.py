"""`meta-evaluator migrate DIR`: a project folder of meta-evaluator 0.3.3 made one of ours.

Its state, data, judges, judge results and annotations are converted (every stored label
checked again by the label rule; a judge's runs given the keys `run` reuses rows by, wherever
their rows are what our run would ask: `_reuse`); its files are kept aside in
`DIR/migrated-from-0.3.3/`, with the report of what changed (`migration.json`) and the judges
that could not be carried over (`judges-not-migrated.yaml`, ready to fix and load). The swap
is atomic (`_swap`): the folder is a 0.3.3 project until the new `main_state.json` replaces
the old one, and a stopped migration is undone by the next one (a kill at any moment loses none
of 0.3.3's files).

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> try:
    ...     migrate_project(folder)
    ... except Exception as exc:
    ...     print(type(exc).__name__)
    ProjectNotFoundError
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from meta_evaluator.errors import ProjectError, ProjectNotFoundError, StateError
from meta_evaluator.locks import ProjectLock
from meta_evaluator.migrate._build import Built, build_project
from meta_evaluator.migrate._read import is_v033_state
from meta_evaluator.migrate._swap import BACKUP, STAGING, has_journal, put_in_place, recover
from meta_evaluator.storage import read_json

__all__ = ["BACKUP", "MigrationReport", "is_v033_state", "migrate_project"]

STATE_FILE = "main_state.json"


@dataclass(frozen=True)
class MigrationReport:
    """What a migration did (or, with `dry_run`, would do)."""

    folder: Path
    backup: Path
    """Where 0.3.3's files are kept (not written by a dry run)."""
    built: Built
    dry_run: bool
    recovered: str | None = None
    """What was found of an earlier migration that had stopped, if anything."""

    def lines(self) -> list[str]:
        """The report as lines of text, for the console."""
        built = self.built
        done = "Would migrate" if self.dry_run else "Migrated"
        out = [f"{done} the meta-evaluator 0.3.3 project in {self.folder}."]
        if self.recovered:
            out.append(f"  Note: {self.recovered}.")
        if built.data_name is not None:
            out.append(f"  data: {built.data_name!r}, {built.data_rows} rows ({built.data_format})")
        if built.tasks:
            out.append(f"  tasks: {', '.join(built.tasks)}")
        out.append(f"  judges: {', '.join(built.judges) or 'none'}")
        for judge_id, reason in built.judges_not_kept.items():
            said = reason.splitlines()[-1].removeprefix(f"judge {judge_id!r}.")
            out.append(f"  judge {judge_id!r} NOT carried over: {said}")
        for run in built.runs:
            counts = ", ".join(f"{n} {o}" for o, n in run.counts.items() if n)
            changed = (
                f"; {run.changed} row(s) changed outcome under the label rule"
                if run.changed
                else ""
            )
            out.append(f"  results: judge {run.judge_id!r}, run {run.run_id!r}: {counts}{changed}")
            why = run.not_reused or f"`run` reuses its {run.reused} rows (the judge is unchanged)"
            out.append(f"    {why}")
        for labelled in built.annotations:
            counts = ", ".join(f"{n} {o}" for o, n in labelled.counts.items() if n)
            out.append(
                f"  annotations: {labelled.annotator_id!r}, set {labelled.run_id!r}: {counts}"
            )
        out += [f"  Note: {note}." for note in built.notes]
        if not self.dry_run:
            out.append(f"  0.3.3's files are kept in {self.backup}")
            if built.not_kept_yaml:
                out.append(
                    f"  Judges not carried over: fix {self.backup / 'judges-not-migrated.yaml'} "
                    "and load it (load_judges_from_yaml)."
                )
        return out


def migrate_project(folder: str | Path, *, dry_run: bool = False) -> MigrationReport:
    """Convert the meta-evaluator 0.3.3 project in `folder` into one of ours, in place.

    Args:
        folder: The project folder 0.3.3 wrote (its `main_state.json`, `data/`, `results/`,
            `annotations/`, `scores/`).
        dry_run: Build and check everything, say what would be done, change nothing.

    Returns:
        What was migrated, and what could not be.

    Raises:
        ProjectNotFoundError: The folder holds no `main_state.json`.
        ProjectError: It is a project of this version already, or an earlier migration's
            backup folder is in the way; another `meta-evaluator run` holds its lock; with
            `dry_run`, an earlier migration was stopped half-way (only a real one undoes it).
        StateError: A 0.3.3 file does not read as 0.3.3 wrote it.
        DataError, TaskError: The data or task does not pass our checks (named).
        StorageError: A file could not be written; the folder is as it was.
    """
    root = Path(folder)
    state_file = root / STATE_FILE
    if not state_file.is_file():
        raise ProjectNotFoundError(
            f"{root}: holds no {STATE_FILE}; give the folder of a meta-evaluator 0.3.3 project.",
            path=root,
        )
    with ProjectLock(root):
        recovered = None if dry_run else recover(root)
        raw = read_json(state_file)
        if not is_v033_state(raw):
            if isinstance(raw, dict) and "schema_version" in raw:
                raise ProjectError(
                    f"{root}: is a project of this version already; there is nothing to migrate.",
                    path=state_file,
                )
            raise StateError(
                f"{state_file}: is not a main_state.json of meta-evaluator 0.3.3.", path=state_file
            )
        staging = root / STAGING
        if dry_run and has_journal(root):  # its undo needs the journal: a dry run keeps it
            raise ProjectError(
                f"{root}: an earlier migration was stopped half-way (its journal is in "
                f"{staging}); a dry run changes nothing, so it cannot undo it. Run "
                f"`meta-evaluator migrate {root}` without --dry-run: it undoes the stopped "
                "migration first, then migrates.",
                path=staging,
            )
        backup = root / BACKUP
        if backup.exists() and not dry_run:
            raise ProjectError(
                f"{backup}: is in the way (the files of an earlier migration?); move it "
                "elsewhere, then migrate again.",
                path=backup,
            )
        shutil.rmtree(staging, ignore_errors=True)  # no journal: nothing of 0.3.3's in it
        try:
            built = build_project(root, staging / "new")
            report = MigrationReport(root, backup, built, dry_run, recovered)
            if dry_run:
                return report
            extra = {"migration.json": json.dumps(_record(report), indent=2) + "\n"}
            if built.not_kept_yaml:
                extra["judges-not-migrated.yaml"] = built.not_kept_yaml
            put_in_place(root, extra)
        finally:
            if staging.exists() and not has_journal(root):
                shutil.rmtree(staging, ignore_errors=True)  # nothing moved yet: nothing to undo
    return report


def _record(report: MigrationReport) -> dict[str, object]:
    """The report as JSON for `migration.json`."""
    return {
        "migrated_from": "meta-evaluator 0.3.3",
        "report": report.lines(),
        "built": json.loads(json.dumps(asdict(report.built), default=str)),
    }
