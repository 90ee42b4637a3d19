"""Pydantic's validation errors put into the config file's own words.

`('collections', 'core')` + `model_type` becomes `collections.core: expected a mapping with
members, got a list`; an unknown key gets the closest known one as a did-you-mean.
"""

from __future__ import annotations

import re
import types
from collections.abc import Sequence
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from routing.refusals import closest

PLAIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def got(value: Any) -> str:
    """A value as the user wrote it in YAML, briefly."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:37] + "...")
    return f"a {type(value).__name__}"


def where(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif PLAIN_NAME.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out or "the config"


_WORDS = {
    "int_type": "expected a whole number",
    "int_from_float": "expected a whole number",
    "float_type": "expected a number",
    "finite_number": "expected a finite number",
    "bool_type": "expected true or false",
    "string_type": "expected text",
    "list_type": "expected a list",
    "tuple_type": "expected a list",
    "dict_type": "expected a mapping",
}


def describe(exc: ValidationError, root: Any, prefix: Sequence[str | int] = ()) -> list[str]:
    """Each of pydantic's errors as `path: what is wrong`, in the file's terms."""
    problems = []
    for error in exc.errors(include_url=False):
        loc, kind, value, ctx = error["loc"], error["type"], error["input"], error.get("ctx", {})
        if loc and loc[-1] == "[key]":
            problems.append(
                f"{where([*prefix, *loc[:-2]])}: names must be text, got {got(loc[-2])}"
            )
            continue
        path = where([*prefix, *loc])
        if kind == "extra_forbidden":
            known = list(_fields_of(_type_at(root, loc[:-1])))
            close = closest(str(loc[-1]), known)
            hint = f"did you mean {close!r}?" if close else "known: " + ", ".join(known)
            problems.append(f"{path}: unknown key; {hint}")
        elif kind == "missing":
            problems.append(f"{path}: is required")
        elif kind in ("model_type", "model_attributes_type"):
            what = getattr(_type_at(root, loc), "what", "a mapping")
            problems.append(f"{path}: expected {what}, got {got(value)}")
        elif kind in _WORDS:
            problems.append(f"{path}: {_WORDS[kind]}, got {got(value)}")
        elif kind == "literal_error":
            options = ctx["expected"].replace("'", "").replace(" or ", ", ")
            problems.append(f"{path}: expected one of {options}, got {got(value)}")
        elif kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
            bound = {
                "greater_than_equal": "at least {ge}",
                "greater_than": "more than {gt}",
                "less_than_equal": "at most {le}",
                "less_than": "less than {lt}",
            }[kind]
            limits = {k: int(v) if float(v).is_integer() else v for k, v in ctx.items()}
            problems.append(f"{path}: must be {bound.format(**limits)}, got {got(value)}")
        elif kind == "too_short":
            problems.append(f"{path}: must not be empty")
        elif kind == "too_long":
            problems.append(
                f"{path}: at most {ctx['max_length']} items, got {ctx['actual_length']}"
            )
        elif kind == "string_too_long":
            problems.append(f"{path}: at most {ctx['max_length']} characters, got {len(value)}")
        else:
            problems.append(f"{path}: {error['msg']}")
    return problems


def _strip(tp: Any) -> Any:
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            tp = get_args(tp)[0]
        elif origin in (Union, types.UnionType):
            options = [a for a in get_args(tp) if a is not type(None)]
            tp = options[0] if len(options) == 1 else tp
            if len(options) != 1:
                return tp
        else:
            return tp


def _type_at(root: Any, loc: Sequence[str | int]) -> Any:
    tp = _strip(root)
    for part in loc:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            field = tp.model_fields.get(str(part))
            tp = field.annotation if field else None
        elif get_origin(tp) in (list, tuple):
            tp = get_args(tp)[0]
        elif get_origin(tp) is dict:
            tp = get_args(tp)[1]
        else:
            return None
        tp = _strip(tp)
    return tp


def _fields_of(tp: Any) -> Sequence[str]:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return list(tp.model_fields)
    return []
