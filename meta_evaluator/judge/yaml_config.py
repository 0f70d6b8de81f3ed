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
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from meta_evaluator._util import shown
from meta_evaluator.errors import JudgeConfigError
from meta_evaluator.judge.config import Judge, Prompt
from meta_evaluator.storage import raise_problems, read_yaml_list

__all__ = ["read_judges_yaml"]


def read_judges_yaml(path: str | Path) -> list[Judge]:
    """Read and validate every judge in a YAML file.

    Each entry holds the `Judge` fields, with the prompt given either inline (`prompt:`, a
    template string) or as `prompt_file:` (relative to the YAML file).

    Raises:
        JudgeConfigError: The file is missing or not YAML, lacks a `judges` list, or any entry
            is invalid; every problem is listed as `file: judges[i].field: problem`.
    """
    file, entries, problems = read_yaml_list(path, "judges", entry="judge", error=JudgeConfigError)
    judges: list[Judge] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        judge = _read_entry(entry, index, file, problems)
        if judge is None:
            continue
        if judge.id in seen:
            problems.append(
                {
                    "loc": f"judges[{index}].id",
                    "msg": f"id {shown(judge.id)} is also used by judges[{seen[judge.id]}]",
                    "type": "duplicate",
                }
            )
            continue
        seen[judge.id] = index
        judges.append(judge)
    raise_problems(file, problems, what="judge", error=JudgeConfigError)
    return judges


def _read_entry(entry: Any, index: int, file: Path, problems: list[dict[str, Any]]) -> Judge | None:
    where = f"judges[{index}]"
    if not isinstance(entry, dict):
        problems.append(
            {"loc": where, "msg": f"must be a mapping, got {shown(entry)}", "type": "type"}
        )
        return None
    fields = dict(entry)
    prompt_file = fields.pop("prompt_file", None)
    if prompt_file is not None and "prompt" in fields:
        problems.append(
            {"loc": where, "msg": "give prompt or prompt_file, not both", "type": "conflict"}
        )
        return None
    if prompt_file is not None and not isinstance(prompt_file, str):
        problems.append(
            {"loc": f"{where}.prompt_file", "msg": "must be a file path", "type": "type"}
        )
        return None
    if prompt_file is not None:
        prompt_path = file.parent / str(prompt_file)
        try:
            fields["prompt"] = Prompt.from_file(prompt_path)
        except JudgeConfigError as exc:
            problems.append({"loc": f"{where}.prompt_file", "msg": exc.message, "type": "file"})
            return None
    elif isinstance(fields.get("prompt"), str):
        fields["prompt"] = {"id": f"{fields.get('id', index)}_prompt", "prompt": fields["prompt"]}
    elif "prompt" not in fields:
        problems.append(
            {"loc": where, "msg": "needs prompt_file (or an inline prompt)", "type": "missing"}
        )
        return None
    try:
        return Judge(**fields)
    except JudgeConfigError as exc:
        for problem in exc.errors:
            problems.append({**problem, "loc": f"{where}.{problem['loc']}"})
        return None
