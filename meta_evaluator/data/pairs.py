"""Pairwise preference data from files: AnnotatedPairs JSON (versions 1 and 2) and CSV.

AnnotatedPairs (inverse-cai / Feedback Forensics) holds comparisons (`id`, `prompt`, `text_a`,
`text_b`, or in version 2 `response_a`/`response_b` objects) with the votes of several
annotators; one is the default (reference) annotator, usually the human preference, and
`principle` annotators are AI annotators following one trait each. A CSV has one row per pair:
`comparison_id`, `text_a`, `text_b`, `preferred` and optional `prompt`, metadata columns and
further vote columns. Votes are normalised (`a` -> `text_a`; anything but text_a/text_b is
no vote); repeated comparison ids keep their first row (METRICS.md A.1, A.2).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from meta_evaluator.errors import ColumnError, DataFileError
from meta_evaluator.stats.preference import normalize_vote
from meta_evaluator.storage import check_lfs_pointer

__all__ = ["AnnotatorInfo", "PreferencePairs", "read_preference_pairs"]

_PRINCIPLE_PREFIX = re.compile(r"^\s*select the response that\s+", re.IGNORECASE)
_RESERVED = {"comparison_id", "id", "prompt", "text_a", "text_b", "preferred"}


@dataclass(frozen=True)
class AnnotatorInfo:
    """Who cast one column of votes."""

    key: str
    """A safe name for the annotator (also a task name for principles)."""
    kind: str
    """`reference`, `human`, `principle` or `other`."""
    description: str = ""


@dataclass(frozen=True)
class PreferencePairs:
    """Pairs (one row each) and the votes cast on them, aligned with the rows."""

    frame: pl.DataFrame
    """`comparison_id` (text), `text_a`, `text_b`, optional `prompt` and metadata columns."""
    votes: dict[str, list[str | None]]
    """Annotator key -> `text_a`/`text_b`/None per row."""
    annotators: dict[str, AnnotatorInfo]
    reference: str
    """Key of the reference annotator (the default annotator; `preferred` in a CSV)."""
    duplicates: int = 0
    """Rows dropped because their comparison id came earlier."""
    source: str = field(default="")


def read_preference_pairs(path: str | Path) -> PreferencePairs:
    """Read pairs and votes from an AnnotatedPairs `.json` file or a `.csv` file.

    Raises:
        DataFileError: The file is missing, not valid JSON/CSV, or not in either layout.
        ColumnError: A CSV lacks `comparison_id`, `text_a`, `text_b` or `preferred`.
    """
    path = Path(path)
    if not path.is_file():
        raise DataFileError(f"{path}: no such file; check the path.", path=path)
    check_lfs_pointer(path)
    if path.suffix.lower() == ".csv":
        return _read_csv(path)
    if path.suffix.lower() == ".json":
        return _read_json(path)
    raise DataFileError(
        f"{path}: preference pairs are read from .json (AnnotatedPairs) or .csv files.", path=path
    )


def _read_json(path: Path) -> PreferencePairs:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DataFileError(f"{path}: not a readable JSON file ({exc}).", path=path) from exc
    if not isinstance(document, dict) or not isinstance(document.get("comparisons"), list):
        raise DataFileError(
            f"{path}: not an AnnotatedPairs file: it needs 'comparisons' (a list), 'annotators' "
            "and 'metadata'.",
            path=path,
        )
    metadata = document.get("metadata") or {}
    info = document.get("annotators") or {}
    _require_mappings(str(path), path, metadata=metadata, annotators=info)
    version = str(metadata.get("version", "1.0"))
    v2 = version.split(".")[0] == "2"
    default = metadata.get("default_annotator")
    keys: dict[str, AnnotatorInfo] = {}
    taken: set[str] = set()
    for annotator_id, entry in info.items():
        entry = entry if isinstance(entry, dict) else {}
        kind = (
            "reference"
            if annotator_id == default
            else {"principle": "principle", "human": "human"}.get(entry.get("type", ""), "other")
        )
        label = entry.get("name") or entry.get("description") or annotator_id
        if kind == "principle":
            label = _PRINCIPLE_PREFIX.sub("", entry.get("description") or label)
        keys[annotator_id] = AnnotatorInfo(_unique(_slug(str(label)), taken), kind,
                                           str(entry.get("description", "")))  # fmt: skip
    if default is None or default not in keys:
        raise DataFileError(
            f"{path}: metadata.default_annotator must name one of the annotators "
            f"({list(info)[:5]}).",
            path=path,
        )
    rows: list[dict[str, Any]] = []
    votes: dict[str, list[str | None]] = {a.key: [] for a in keys.values()}
    seen: set[str] = set()
    duplicates = 0
    for index, comparison in enumerate(document["comparisons"]):
        where = f"{path}: comparisons[{index}]"
        if not isinstance(comparison, dict) or "id" not in comparison:
            raise DataFileError(f"{where}: a comparison needs an 'id'.", path=path)
        cid = str(comparison["id"])
        if cid in seen:
            duplicates += 1
            continue
        seen.add(cid)
        row: dict[str, Any] = {"comparison_id": cid}
        if v2:
            for side in ("a", "b"):
                response = comparison.get(f"response_{side}")
                if not isinstance(response, dict) or not isinstance(response.get("text"), str):
                    raise DataFileError(
                        f"{where}: response_{side} needs a 'text' string.", path=path
                    )
                for key, value in response.items():
                    row[f"{key}_{side}"] = _scalar(value)
        else:
            for side in ("text_a", "text_b"):
                if not isinstance(comparison.get(side), str):
                    raise DataFileError(f"{where}: {side} must be text.", path=path)
                row[side] = comparison[side]
        if comparison.get("prompt") is not None:
            row["prompt"] = _scalar(comparison["prompt"])
        extra = comparison.get("metadata") or {}
        annotations = comparison.get("annotations") or {}
        _require_mappings(where, path, metadata=extra, annotations=annotations)
        for key, value in extra.items():
            row.setdefault(str(key), _scalar(value))
        rows.append(row)
        for annotator_id, annotator in keys.items():
            entry = annotations.get(annotator_id)
            vote = entry.get("pref") if isinstance(entry, dict) else None
            votes[annotator.key].append(normalize_vote(vote))
    frame = pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()
    return PreferencePairs(
        _ordered(frame), votes, {a.key: a for a in keys.values()}, keys[default].key, duplicates,
        str(path),
    )  # fmt: skip


def _read_csv(path: Path) -> PreferencePairs:
    try:
        frame = pl.read_csv(path, infer_schema_length=0)  # every column as text
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise DataFileError(f"{path}: not a readable CSV file ({exc}).", path=path) from exc
    missing = [
        c for c in ("comparison_id", "text_a", "text_b", "preferred") if c not in frame.columns
    ]
    if missing:
        raise ColumnError(
            f"{path}: a preference CSV needs the columns comparison_id, text_a, text_b and "
            f"preferred; missing {missing} (columns: {frame.columns}).",
            path=path,
            column=missing[0],
        )
    before = frame.height
    frame = frame.unique("comparison_id", keep="first", maintain_order=True)
    vote_columns = [c for c in frame.columns if c not in _RESERVED and _looks_like_votes(frame[c])]
    taken = {"preferred"}
    annotators = {"preferred": AnnotatorInfo("preferred", "reference", "column preferred")}
    votes = {"preferred": [normalize_vote(v) for v in frame["preferred"].to_list()]}
    for column in vote_columns:
        key = _unique(_slug(column), taken)
        annotators[key] = AnnotatorInfo(key, "other", f"column {column}")
        votes[key] = [normalize_vote(v) for v in frame[column].to_list()]
    data = frame.drop(["preferred", *vote_columns])
    return PreferencePairs(
        _ordered(data), votes, annotators, "preferred", before - frame.height, str(path)
    )


def _looks_like_votes(column: pl.Series) -> bool:
    values = {str(v).strip().casefold() for v in column.drop_nulls().unique().to_list()}
    return bool(values) and bool(values & {"text_a", "text_b"}) and len(values) <= 10


def _ordered(frame: pl.DataFrame) -> pl.DataFrame:
    first = [c for c in ("comparison_id", "prompt", "text_a", "text_b") if c in frame.columns]
    return frame.select(first + [c for c in frame.columns if c not in first])


def _require_mappings(where: str, path: Path, **values: Any) -> None:
    """Refuse a section of the file (`metadata`, `annotators` ...) that is not a mapping."""
    for key, value in values.items():
        if not isinstance(value, dict):
            raise DataFileError(
                f"{where}: '{key}' must be a mapping, got {type(value).__name__}.", path=path
            )


def _scalar(value: Any) -> Any:
    return (
        value if value is None or isinstance(value, str | int | float | bool) else json.dumps(value)
    )


def _slug(text: str) -> str:
    """A name that is a safe file name and a task name: words joined by '_'."""
    words = re.findall(r"[A-Za-z0-9]+", text.casefold())
    slug = "_".join(words)[:56].strip("_") or "annotator"
    if (
        not slug[0].isalpha()
        or slug.upper() in {"CON", "PRN", "AUX", "NUL"}
        or (re.fullmatch(r"(com|lpt)[0-9]", slug))
    ):
        slug = f"a_{slug}"
    return slug


def _unique(slug: str, taken: set[str]) -> str:
    name, n = slug, 2
    while name in taken:
        name, n = f"{slug}_{n}", n + 1
    taken.add(name)
    return name
