"""Parsing the text of a JSON or YAML file safely: no alias bombs, no runaway nesting.

`storage.read_json` and `storage.read_yaml`, the readers of every JSON and YAML file of a
project, parse here. A malformed file raises `StateError` naming the file and the place; so
does one whose lists or mappings nest more than `MAX_DEPTH` levels deep, which would otherwise
exhaust Python's recursion (`RecursionError`) in the parser or in whoever walks the value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from meta_evaluator._util import shown
from meta_evaluator.errors import StateError

__all__ = ["MAX_DEPTH", "parse_json", "parse_yaml"]

MAX_DEPTH = 100
"""How deeply lists and mappings may nest in a JSON or YAML file we read (ours need under 10)."""


def _too_deep(path: str | Path) -> StateError:
    return StateError(
        f"{path}: lists or mappings nested more than {MAX_DEPTH} levels deep; no file of a "
        "project needs that many, so the file is damaged or not ours. Restore it from version "
        "control or fix it by hand.",
        path=path,
    )


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether lists and dicts nest in `value` more than `limit` levels (without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def parse_json(text: str, path: str | Path) -> Any:
    """The value of the JSON `text` read from `path` (named in errors).

    Raises:
        StateError: The text is not valid JSON, or nests more than `MAX_DEPTH` levels deep.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StateError(
            f"{path}: not valid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg}); "
            "restore the file from version control or fix it by hand.",
            path=path,
        ) from exc
    except RecursionError:  # json's own parser recurses: far deeper than MAX_DEPTH
        raise _too_deep(path) from None
    if isinstance(value, (dict, list)) and _deeper_than(value, MAX_DEPTH):
        raise _too_deep(path)
    return value


def parse_yaml(text: str, path: str | Path) -> Any:
    """The value of the YAML `text` read from `path`, as `storage.read_yaml` describes.

    Raises:
        StateError: The text is not valid YAML (with line and column), uses an alias, gives a
            key twice, or nests more than `MAX_DEPTH` levels deep.
    """
    import yaml

    try:
        return yaml.load(text, Loader=_unique_key_loader())  # a SafeLoader: no objects
    except RecursionError:  # not expected below MAX_DEPTH; a stack-hungry caller, say
        raise _too_deep(path) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise StateError(
            f"{path}: not valid YAML{where} ({problem}); fix the file.", path=path
        ) from exc


def _unique_key_loader() -> type[Any]:
    """A SafeLoader refusing aliases, nesting deeper than `MAX_DEPTH` and a key given twice."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            # An alias makes a 1 KB file expand to gigabytes (billion laughs) once anything
            # walks it; no configuration of ours needs one, so refuse it before it is built.
            if self.check_event(yaml.events.AliasEvent):
                event = self.peek_event()  # type: ignore[no-untyped-call]
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"alias {shown('*' + str(event.anchor))} is not allowed (YAML aliases are "
                    "refused); write the value out in full",
                    event.start_mark,
                )
            nested = self.check_event(yaml.events.CollectionStartEvent)
            if nested and self.depth >= MAX_DEPTH:  # the composer recurses once per level
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"lists or mappings nested more than {MAX_DEPTH} levels deep; no file of "
                    "a project needs that many",
                    self.peek_event().start_mark,  # type: ignore[no-untyped-call]
                )
            self.depth += nested
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= nested

        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {shown(key)} appears twice", key_node.start_mark
                    )
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return UniqueKeyLoader
