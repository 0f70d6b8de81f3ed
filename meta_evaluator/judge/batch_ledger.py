"""The batches a judge's run submitted to a provider's batch engine, one small JSON file each.

```
results/<run_id>/<judge_id>.batches/<key>.json
```

A record is written *before* the batch is submitted (`submitting`, with our own `key`), again as
soon as the provider names its id (`submitted`), and once its results are in the row store
(`collected`) or the provider refused it (`failed`). A run that is killed or stopped waiting
thus finds every batch it paid for, and reconnects to it instead of submitting again. Row `i` of
a record was sent under the custom id `<key>-<i>` (`<key>-<i>-<k>` for answer k of several).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args

from meta_evaluator.errors import JudgeConfigError, StateError
from meta_evaluator.judge.run_files import RunFiles
from meta_evaluator.storage import atomic_write_text, read_json

__all__ = ["BatchLedger", "BatchRecord", "batch_names", "known_batch_ids", "new_batch_key"]

RECORD_VERSION = 1

RecordStatus = Literal["submitting", "submitted", "collected", "failed", "abandoned"]
PENDING: tuple[RecordStatus, ...] = ("submitting", "submitted")


def new_batch_key() -> str:
    """Our own name of a batch: `b` and 10 hex digits (safe in every provider's custom ids)."""
    return "b" + secrets.token_hex(5)


@dataclass(frozen=True)
class BatchRecord:
    """One submitted batch: which rows it holds, what was sent, and where it stands."""

    key: str
    provider: str
    fingerprint: str
    submitted_at: str
    ids: list[Any]
    """The data ids of the batch's rows, in custom-id order."""
    prompt_hashes: list[str]
    """What was sent for each row (`prompt_hash` of its request)."""
    answers_per_row: int = 1
    status: RecordStatus = "submitting"
    batch_id: str | None = None
    input_file_id: str | None = None
    provider_status: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    finished_at: str | None = None
    message: str | None = None

    @property
    def pending(self) -> bool:
        """Whether the batch's results are still to be collected."""
        return self.status in PENDING

    def custom_id(self, row: int, answer: int = 0) -> str:
        """The custom id row `row` (answer `answer`) was sent under."""
        return f"{self.key}-{row}" if self.answers_per_row == 1 else f"{self.key}-{row}-{answer}"

    def locate(self, custom_id: str) -> tuple[int, int] | None:
        """(row, answer) of a custom id of this batch, or None for anyone else's."""
        prefix, _, rest = custom_id.partition("-")
        parts = rest.split("-")
        if prefix != self.key or len(parts) != (1 if self.answers_per_row == 1 else 2):
            return None
        if not all(part.isdigit() and part == str(int(part)) for part in parts):
            return None  # only the canonical numbers we send ("01", "+1" were never sent)
        row, answer = int(parts[0]), int(parts[1]) if len(parts) == 2 else 0
        if not (0 <= row < len(self.ids) and 0 <= answer < self.answers_per_row):
            return None
        return row, answer

    def update(self, **changes: Any) -> BatchRecord:
        """A copy with `changes`."""
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        """The file's content: the small fields first, the row lists last."""
        return {
            "schema_version": RECORD_VERSION,
            "key": self.key,
            "provider": self.provider,
            "batch_id": self.batch_id,
            "input_file_id": self.input_file_id,
            "status": self.status,
            "provider_status": self.provider_status,
            "counts": self.counts,
            "submitted_at": self.submitted_at,
            "finished_at": self.finished_at,
            "message": self.message,
            "fingerprint": self.fingerprint,
            "answers_per_row": self.answers_per_row,
            "ids": self.ids,
            "prompt_hashes": self.prompt_hashes,
        }


class BatchLedger:
    """The batch records of one judge in one run (of one shard, if sharded)."""

    def __init__(self, files: RunFiles) -> None:
        self.files = files
        self.folder = files.rows.parent / f"{files.stem}.batches"

    def path(self, key: str) -> Path:
        """The file of batch `key`."""
        return self.folder / f"{key}.json"

    def records(self) -> list[BatchRecord]:
        """Every record, oldest submission first.

        Raises:
            StateError: A file is not a batch record (edited or damaged).
        """
        if not self.folder.is_dir():
            return []
        found = [self._read(path) for path in sorted(self.folder.glob("*.json"))]
        return sorted(found, key=lambda record: (record.submitted_at, record.key))

    def pending(self) -> list[BatchRecord]:
        """The records whose results are still to be collected."""
        return [record for record in self.records() if record.pending]

    def pending_ids(self) -> set[Any]:
        """The data ids held by batches whose results are still to be collected."""
        return {row_id for record in self.pending() for row_id in record.ids}

    def check_before_run(
        self, judge_id: str, fingerprint: str, *, batch: bool, resume: bool
    ) -> None:
        """Refuse, before any call, a run that would pay for rows twice or mix configurations.

        Raises:
            JudgeConfigError: The run has batches still pending and this run is live (its rows
                would be asked again) or starts over (resume=False), or pending batches of
                another judge configuration.
        """
        pending = self.pending()
        if not pending:
            return
        rows = sum(len(record.ids) for record in pending)
        where = f"run {self.files.run_id!r} of judge {judge_id!r}"
        held = f"{rows} rows in {len(pending)} submitted batch(es) ({batch_names(pending)})"
        if not resume:
            raise JudgeConfigError(
                f"{where} has {held}, still running and billed; resume=False (--no-resume) would "
                "ask those rows again. Cancel them first (batch=True, cancel_batches=True; "
                "--batch --cancel-batches), or start another run_id.",
                judge_id=judge_id,
                field="resume",
            )
        if not batch:
            raise JudgeConfigError(
                f"{where} has {held}; run with batch=True (--batch) to collect them, or start "
                "another run_id.",
                judge_id=judge_id,
                field="batch",
            )
        other = [r for r in pending if r.fingerprint != fingerprint]
        if other:
            raise JudgeConfigError(
                f"{where} has batches submitted with another configuration of the judge "
                f"({batch_names(other)}); collect them with that configuration first, or start "
                "another run_id.",
                judge_id=judge_id,
                field="run_id",
            )

    def write(self, record: BatchRecord) -> None:
        """Write (or replace) the record's file atomically.

        Fields go one per line and each row list on one line, so even a batch of 100,000 rows
        is a short file to read and diff.
        """
        content = record.to_json()
        lists = {name: content.pop(name) for name in ("ids", "prompt_hashes")}
        text = json.dumps(content, indent=2, ensure_ascii=False, allow_nan=False)
        tail = "".join(
            f',\n  "{name}": {json.dumps(values, ensure_ascii=False, allow_nan=False)}'
            for name, values in lists.items()
        )
        atomic_write_text(self.path(record.key), text[: text.rindex("\n}")] + tail + "\n}\n")

    def _read(self, path: Path) -> BatchRecord:
        raw = read_json(path)
        try:
            if raw.get("schema_version") != RECORD_VERSION:
                raise ValueError(f"schema_version {raw.get('schema_version')!r}")
            ids, hashes = raw["ids"], raw["prompt_hashes"]
            if not isinstance(ids, list) or not isinstance(hashes, list):
                raise ValueError("ids and prompt_hashes must be lists")
            hashes = [str(h) for h in hashes]
            if len(ids) != len(hashes):
                raise ValueError("ids and prompt_hashes differ in length")
            status = raw["status"]
            if status not in get_args(RecordStatus):
                raise ValueError(f"status {status!r}")
            return BatchRecord(
                key=str(raw["key"]),
                provider=str(raw["provider"]),
                fingerprint=str(raw["fingerprint"]),
                submitted_at=str(raw["submitted_at"]),
                ids=ids,
                prompt_hashes=hashes,
                answers_per_row=int(raw.get("answers_per_row", 1)),
                status=status,
                batch_id=raw.get("batch_id"),
                input_file_id=raw.get("input_file_id"),
                provider_status=raw.get("provider_status"),
                counts={str(k): int(v) for k, v in (raw.get("counts") or {}).items()},
                finished_at=raw.get("finished_at"),
                message=raw.get("message"),
            )
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise StateError(
                f"{path}: is not a batch record ({exc}); restore it from version control. "
                "Deleting it forgets the batch (its rows would be submitted and paid again).",
                path=path,
            ) from exc


def known_batch_ids(results_dir: Path) -> set[str]:
    """Every provider batch id that a record in the project's results names.

    Any judge, run or shard: a lost batch is never matched to one of these.
    """
    known = set()
    for path in results_dir.glob("*/*.batches/*.json") if results_dir.is_dir() else []:
        try:
            raw = read_json(path)
        except StateError:
            continue  # a damaged record is reported where its own run reads it
        batch_id = raw.get("batch_id") if isinstance(raw, dict) else None
        if isinstance(batch_id, str):
            known.add(batch_id)
    return known


def batch_names(records: Sequence[BatchRecord]) -> str:
    """The records' batches as a message names them: the provider's ids, else our keys."""
    return ", ".join(record.batch_id or record.key for record in records)
