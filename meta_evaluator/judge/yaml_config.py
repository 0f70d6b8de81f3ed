"""Reading judges from a YAML file; every problem in the file is reported at once.

```yaml
judges:
  - id: gpt_4o_mini_judge
    llm_client: openai            # openai | azure_openai | anthropic | mock
    model: gpt-4o-mini
    prompt_file: ./prompt.md      # relative to this file; or `prompt:` with the template inline
    base_url: http://127.0.0.1:8000/v1
    api_key_env: OPENAI_API_KEY   # the variable's name, never the key
```

One pass finds everything: unknown keys (with the closest known one), a prompt file that
cannot be read, every invalid field of every entry (also of an entry whose prompt is missing),
ids repeated in the file, and, when the caller knows them, placeholders that name no column
and ids already registered.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from meta_evaluator._util import listed, shown
from meta_evaluator._validation import unknown_key
from meta_evaluator.errors import JudgeConfigError
from meta_evaluator.judge.config import Judge, Prompt
from meta_evaluator.storage import raise_problems, read_yaml_list

__all__ = ["ENTRY_KEYS", "read_judge_entries", "read_judges_yaml"]

ENTRY_KEYS = frozenset({*Judge.model_fields, "prompt_file"})
"""The keys a judge entry may hold: the `Judge` fields, and `prompt_file`."""

_STAND_IN = Prompt(id="stand_in", prompt="stand-in")
"""Checks an entry's other fields while its own prompt cannot be used."""


def read_judges_yaml(
    path: str | Path,
    *,
    columns: Collection[str] | None = None,
    taken: Collection[str] = (),
) -> list[Judge]:
    """Read and validate every judge in a YAML file.

    Each entry holds the `Judge` fields, with the prompt given either inline (`prompt:`, a
    template string) or as `prompt_file:` (relative to the YAML file).

    Args:
        path: The YAML file.
        columns: The columns a prompt's placeholders may name (the project's data, else its
            task's); None leaves placeholders unchecked.
        taken: Judge ids that may not be used (already registered).

    Raises:
        JudgeConfigError: The file is missing or not YAML, lacks a `judges` list, or any entry
            is invalid; every problem is listed as `file: judges[i].field: problem`.
    """
    file, entries, problems = read_yaml_list(path, "judges", entry="judge", error=JudgeConfigError)
    judges, found = read_judge_entries(entries, base=file.parent, columns=columns, taken=taken)
    try:
        raise_problems(file, problems + found, what="judge", error=JudgeConfigError)
    except JudgeConfigError as exc:  # the first judge named, for programs acting on it
        exc.judge_id = next((p["judge_id"] for p in found if "judge_id" in p), None)
        raise
    return judges


def read_judge_entries(
    entries: list[Any],
    *,
    base: Path,
    where: str = "judges",
    columns: Collection[str] | None = None,
    taken: Collection[str] = (),
) -> tuple[list[Judge], list[dict[str, Any]]]:
    """The valid judges of a list of entries, and one problem (`loc`, `msg`, `type`) per fault.

    For a YAML file of judges, and for the judges written inline in a `project.yaml`.

    Args:
        entries: The entries, as read from YAML.
        base: The folder prompt files are relative to (the YAML file's).
        where: The list's location in its file (`judges`).
        columns: The columns placeholders may name; None leaves them unchecked.
        taken: Judge ids that may not be used.
    """
    problems: list[dict[str, Any]] = []
    judges: list[Judge] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        judge = _read_entry(entry, index, base, problems, where=where, columns=columns)
        given = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(given, str):
            continue
        at = f"{where}[{index}].id"
        if given in seen:  # an invalid entry's id too: one round of fixes, not two
            message = f"id {shown(given)} is also used by {where}[{seen[given]}]"
            problems.append({"loc": at, "msg": message, "type": "duplicate"})
            continue
        seen[given] = index
        if judge is None:
            continue
        if judge.id in taken:
            message = (
                f"judge {shown(judge.id)} is already registered; pass on_duplicate='overwrite' "
                "to replace it or 'skip' to keep it"
            )
            problems.append({"loc": at, "msg": message, "type": "taken", "judge_id": judge.id})
            continue
        judges.append(judge)
    return judges, problems


def _read_entry(
    entry: Any,
    index: int,
    base: Path,
    problems: list[dict[str, Any]],
    *,
    where: str = "judges",
    columns: Collection[str] | None = None,
) -> Judge | None:
    """One entry as a Judge, or None after adding each of its problems to `problems`."""
    where = f"{where}[{index}]"
    if not isinstance(entry, dict):
        problems.append(
            {"loc": where, "msg": f"must be a mapping, got {shown(entry)}", "type": "type"}
        )
        return None
    before = len(problems)
    fields = {}
    for key, value in entry.items():
        if key in ENTRY_KEYS:
            fields[key] = value
        else:
            problems.append(
                {"loc": f"{where}.{key}", "msg": unknown_key(key, ENTRY_KEYS), "type": "extra"}
            )
    prompt_file = fields.pop("prompt_file", None)
    prompt_at = f"{where}.prompt_file" if prompt_file is not None else f"{where}.prompt"
    prompt: Any = _STAND_IN  # while the entry's own prompt cannot be used
    if prompt_file is not None and "prompt" in fields:
        problems.append(
            {"loc": where, "msg": "give prompt or prompt_file, not both", "type": "conflict"}
        )
        del fields["prompt"]
    elif prompt_file is not None and not isinstance(prompt_file, str):
        problems.append(
            {"loc": f"{where}.prompt_file", "msg": "must be a file path", "type": "type"}
        )
    elif prompt_file is not None:
        try:
            prompt = Prompt.from_file(base / prompt_file)
        except JudgeConfigError as exc:
            problems.append({"loc": f"{where}.prompt_file", "msg": exc.message, "type": "file"})
    elif isinstance(fields.get("prompt"), str):
        prompt = {"id": f"{fields.get('id', index)}_prompt", "prompt": fields.pop("prompt")}
    elif "prompt" in fields:
        prompt = fields.pop("prompt")  # a mapping {id, prompt}: the Judge checks it
    else:
        problems.append(
            {"loc": where, "msg": "needs prompt_file (or an inline prompt)", "type": "missing"}
        )
    judge_id = fields.get("id") if isinstance(fields.get("id"), str) else None
    if columns is not None:
        _check_placeholders(prompt, columns, prompt_at, judge_id, problems)
    try:
        judge = Judge(**fields, prompt=prompt)
    except JudgeConfigError as exc:
        for problem in exc.errors:
            problems.append({**problem, "loc": f"{where}.{problem['loc']}"})
        return None
    return judge if len(problems) == before else None


def _check_placeholders(
    prompt: Any,
    columns: Collection[str],
    at: str,
    judge_id: str | None,
    problems: list[dict[str, Any]],
) -> None:
    """Add a problem when the entry's prompt names columns that do not exist.

    Checked whatever the entry's other fields hold, so a wrong temperature does not hide a
    wrong placeholder; a prompt that is itself invalid is the Judge's problem.
    """
    if isinstance(prompt, dict):
        try:
            prompt = Prompt(**prompt)
        except JudgeConfigError:
            return
    if not isinstance(prompt, Prompt) or prompt is _STAND_IN:
        return
    unknown = [p for p in prompt.placeholders if p not in columns]
    if not unknown:
        return
    placeholders = shown(["{" + u + "}" for u in unknown])
    who = f"judge {judge_id!r}: " if judge_id is not None else ""
    problems.append(
        {
            "loc": at,
            "msg": f"{who}prompt placeholder(s) {placeholders} name no column (columns: "
            f"{listed(columns)}); fix the prompt or the data",
            "type": "placeholder",
            **({"judge_id": judge_id} if judge_id is not None else {}),
        }
    )
