"""A section of the config file, checked item by item.

Each item is validated on its own and its problems are collected rather than raised, so one bad
item does not hide the others' problems, nor the cross-references checked after (settings.py).
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError

from gateway.config.schema import Shape
from gateway.config.slips import slipped
from gateway.config.words import describe, got, where

_SHAPE = TypeAdapter(Shape)


def check(model: Any, value: Any, loc: tuple[str | int, ...], problems: list[str]) -> Any:
    """*value* validated as *model* (a pydantic class, or Shape), or None with its problems.
    Keys written one level too far out are named so, not as the unknown keys they then are."""
    slip = slipped(value, model)
    if slip is not None:
        problems.append(f"{where((*loc, slip[0]))}: {slip[1]}")
        return None
    try:
        if model is Shape:
            return _SHAPE.validate_python(value)
        return model.model_validate(value)
    except ValidationError as exc:
        problems.extend(describe(exc, model, loc))
        return None


def items(raw: Any, section: str, problems: list[str]) -> list[tuple[str, Any]]:
    """A mapping section's (name, value) pairs whose names are plain text; the rest named."""
    if not isinstance(raw, dict):
        return []  # the wrong type is already reported by FileSections
    found = []
    for name, value in raw.items():
        if isinstance(name, str) and name:
            found.append((name, value))
        else:
            problems.append(f"{section}: names must be text, got {got(name)}")
    return found


def names(raw: Any) -> set[str]:
    """The names a mapping section writes, whatever their values."""
    return {name for name in raw if isinstance(name, str)} if isinstance(raw, dict) else set()
