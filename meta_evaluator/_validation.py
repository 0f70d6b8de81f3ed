"""Turn a pydantic ValidationError into one readable message, one problem per line (P1)."""

from __future__ import annotations

import difflib
import re
import typing
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from meta_evaluator._util import shown
from meta_evaluator.errors import JudgeConfigError, MetaEvaluatorError

__all__ = ["ConfigModel", "closest_key", "describe_errors", "location", "unknown_key"]

# Fields whose rejected values are never repeated in a message: they may hold credentials.
_SENSITIVE = re.compile(r"key|token|secret|password|auth|header|url|cookie", re.IGNORECASE)


def location(loc: Iterable[str | int], *, root: str = "") -> str:
    """`judges[1].max_concurrency` from pydantic's `("judges", 1, "max_concurrency")`."""
    text = root
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            name = str(part)
            name = name if len(name) <= 40 else name[:37] + "..."  # an unknown key may be huge
            text += f".{name}" if text else name
    return text or "(top level)"


def unknown_key(
    key: object, known: Iterable[str], synonyms: Mapping[str, str] | None = None
) -> str:
    """`unknown key 'max_concurency'; did you mean 'max_concurrency'?` for a configuration file.

    The closest known key is named when one is close, else a synonym the file's kind uses for
    another key (`file` for `path`), else every known key.
    """
    names = sorted(known)
    message = f"unknown key {shown(key)}"
    match = closest_key(key, names, synonyms)
    if match is not None:
        return f"{message}; did you mean {match!r}?"
    return f"{message}; known keys: {', '.join(names)}" if names else message


def closest_key(
    key: object, known: Iterable[str], synonyms: Mapping[str, str] | None = None
) -> str | None:
    """The known key an unknown one most likely means (`unknown_key`'s "did you mean"), or None."""
    match = difflib.get_close_matches(str(key), sorted(known), n=1)
    if match:
        return match[0]
    return synonyms.get(str(key)) if synonyms else None


def describe_errors(
    exc: ValidationError,
    *,
    root: str = "",
    known_fields: Iterable[str] | type[BaseModel] = (),
) -> tuple[str, list[dict[str, Any]]]:
    """Return one line per problem (`root.where: what; got X`) and the problems as dicts.

    The dicts' `loc` is relative to the model (`max_concurrency`, `prompt.id`), so a caller
    that nests the model (a YAML list, the state file) can prefix its own location.

    Unknown keys name the closest known field, when one is close (`did you mean 'x'?`); given
    the model itself as `known_fields`, an unknown key of a nested model is matched with that
    model's fields.
    """
    model: type[BaseModel] | None = None
    if isinstance(known_fields, type):
        model, known = known_fields, list(known_fields.model_fields)
    else:
        known = list(known_fields)
    lines: list[str] = []
    problems: list[dict[str, Any]] = []
    for error in exc.errors(include_url=False):
        loc = tuple(p for p in error["loc"] if not (isinstance(p, str) and "[" in p))
        where = location(loc, root=root)
        nested = error.get("ctx", {}).get("error")
        if isinstance(nested, MetaEvaluatorError) and nested.errors:
            # A nested configuration model (a judge's prompt, a project's data section) was
            # invalid: its own problems, each placed inside this model.
            for inner in nested.errors:
                inner_loc = str(inner["loc"])
                joined = inner_loc if inner_loc.startswith("[") else "." + inner_loc
                lines.append(f"{where}{joined}: {inner['msg']}")
                problems.append({**inner, "loc": location(loc) + joined})
            continue
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "extra_forbidden" and loc:
            at = _model_at(model, loc[:-1])
            fields = list(at.model_fields) if at is not None else known
            message = unknown_key(str(loc[-1]), fields, getattr(at, "key_synonyms", None))
        elif (
            error["type"] not in ("missing", "value_error")
            and "input" in error
            and not _SENSITIVE.search(where)
        ):
            message += f", got {shown(error['input'])}"
        lines.append(f"{where}: {message}")
        problems.append({"loc": location(loc), "msg": message, "type": error["type"]})
    return "\n".join(lines), problems


def _model_at(model: type[BaseModel] | None, loc: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The model found at `loc` inside `model`, if there is one."""
    for part in loc:
        if model is None:
            return None
        if isinstance(part, int):
            continue  # an item of a list: the same annotation holds the item's model
        field = model.model_fields.get(part)
        model = _model_in(field.annotation) if field is not None else None
    return model


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation (`X | None`, `list[X]`), if there is one."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in typing.get_args(annotation):
        found = _model_in(argument)
        if found is not None:
            return found
    return None


class ConfigModel(BaseModel):
    """A frozen, strict configuration model whose invalid input raises our own error class.

    Subclasses set `error_class`, and may name themselves in messages through `_error_root`
    (`judge 'gpt4'`); every problem is listed, and kept in the error's `errors`.
    """

    # Inputs are never echoed in pydantic's own error text either: they may be secrets.
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    error_class: ClassVar[type[MetaEvaluatorError]] = MetaEvaluatorError
    key_synonyms: ClassVar[dict[str, str]] = {}
    """Unknown key → the key meant, where the two are not alike (`file` for `path`)."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise self._translate(exc, data) from exc

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        """Validate `obj` (a dict) into the model, raising our error class when it is invalid."""
        if isinstance(obj, dict) and not args and not kwargs:
            return cls(**obj)
        try:
            return super().model_validate(obj, *args, **kwargs)
        except ValidationError as exc:
            raise cls._translate(exc, obj if isinstance(obj, dict) else {}) from exc

    @classmethod
    def model_validate_json(
        cls, json_data: str | bytes | bytearray, *args: Any, **kwargs: Any
    ) -> Self:
        """Validate a JSON document into the model, raising our error class when it is invalid."""
        import json

        try:
            obj = json.loads(json_data)
        except (ValueError, RecursionError) as exc:
            raise cls.error_class(f"{cls.__name__}: not valid JSON ({exc}).") from exc
        return cls.model_validate(obj, *args, **kwargs)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with `update` applied, validated like a new model (pydantic's own skips that).

        Raises:
            MetaEvaluatorError: Of the model's `error_class`, when the update is invalid.
        """
        if not update:
            return super().model_copy(deep=deep)
        return type(self)(**{**self.model_dump(), **update})

    @classmethod
    def _error_root(cls, data: dict[str, Any]) -> str:
        """How messages name the model being built."""
        return cls.__name__

    @classmethod
    def _translate(cls, exc: ValidationError, data: dict[str, Any]) -> MetaEvaluatorError:
        root = cls._error_root(data)
        lines, problems = describe_errors(exc, root=root, known_fields=cls)
        message = f"{root} is invalid ({len(problems)} problem(s)):\n{lines}"
        field = problems[0]["loc"] if problems else None
        judge_id = data.get("id") if issubclass(cls.error_class, JudgeConfigError) else None
        return cls.error_class(
            message,
            errors=problems,
            field=field,
            judge_id=judge_id if isinstance(judge_id, str) else None,
        )
