"""The config reference page, made from the schema so it cannot drift from what is checked.

`python -m gateway.config.reference > docs/config-reference.md` writes it; a test fails when
the page and the schema differ. Every key of every section is listed with its type, default
and meaning (its Field's description); a section added to the file's top level (a model whose
fields are keys) gets its own table without a change here.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from gateway.config.schema import (
    BenchFacts,
    CollectionSpec,
    ConnectionSpec,
    FileSections,
    ModelEntry,
)
from routing import DEFAULT_SHAPES

INTRO = """\
# Config reference

Every key of the config file (`config/bench.yaml`, or the file given to `--config`), with its
type, its default and what it means. `bench-gateway check-config` checks a file against exactly
this, and prints every setting as it will be used. The user guide shows whole configs:
[guide.md](guide.md#from-the-demo-to-real-providers).

Values are strict: `5` is not `"5"`, `true` is not `1`. A key this page does not list is refused,
with the closest one it does list. Secrets are written `os.environ/NAME` (read from the
environment at start, never written back); `${NAME}` is refused with that advice.

<!-- Made by `python -m gateway.config.reference > docs/config-reference.md`: edit the
descriptions in gateway/config/ (schema.py, serving.py), not this page. -->
"""

# (heading, the model, how its keys are written in the file, a sentence before the table)
_PARTS: list[tuple[str, type[BaseModel], str, str]] = [
    ("The top level", FileSections, "{key}",
     "`model_list` and `collections` are needed; every other section may be left out."),
    ("A model (`model_list[]`)", ModelEntry, "{key}",
     "Each item of `model_list`, in LiteLLM's shape, so a LiteLLM proxy config pastes in."),
    ("A model's facts (`bench:`)", BenchFacts, "bench.{key}",
     "What the bench knows about a model beside what litellm calls."),
    ("A connection (`connections.<name>`)", ConnectionSpec, "connections.<name>.{key}",
     "What several models share upstream: an account, a host. A model is on the connection "
     "its `bench.connection` names; unset, on its api_base's host, else on its provider."),
    ("A collection (`collections.<name>`)", CollectionSpec, "collections.<name>.{key}",
     "What a client asks for as `bench/<name>`. A name is a plain name (letters, digits, "
     "`.`, `_`, `-`)."),
]  # fmt: skip
_DONE = {"model_list", "collections", "connections", "shapes"}


def page() -> str:
    out = [INTRO]
    for heading, model, written, before in _PARTS:
        out.append(_table(heading, model, written, before))
    out.append(_shapes())
    for key, field in FileSections.model_fields.items():
        inner = _model_of(field.annotation)
        if key not in _DONE and inner is not None:
            before = " ".join((inner.__doc__ or field.description or "").split())
            before = before.replace(" (below)", "")
            out.append(_table(f"`{key}:`", inner, f"{key}.{{key}}", before))
    return "\n".join(out).rstrip() + "\n"


def _table(heading: str, model: type[BaseModel], written: str, before: str) -> str:
    rows = [f"## {heading}", "", before, "", "| key | type | default | meaning |",
            "| --- | --- | --- | --- |"]  # fmt: skip
    for key, field in model.model_fields.items():
        rows.append(
            f"| `{written.format(key=key)}` | {_cell(_type(field))} | {_default(field)} "
            f"| {_cell(field.description or '')} |"
        )
    return "\n".join(rows) + "\n"


def _shapes() -> str:
    rows = ["## Shapes (`shapes:`)", "",
            "A shape says which roles a panel seats (`bench.role` of its models). These are "
            "built in; `shapes: {name: [role, ...]}` adds your own or replaces one. A "
            "collection's `shape` is its panels' default; a request's `X-Panel-Shape` "
            "header wins.", "",
            "| shape | roles seated |", "| --- | --- |"]  # fmt: skip
    rows += [f"| `{name}` | {', '.join(roles)} |" for name, roles in DEFAULT_SHAPES.items()]
    return "\n".join(rows) + "\n"


def _type(field: FieldInfo) -> str:
    extra = field.json_schema_extra
    written = extra.get("written") if isinstance(extra, dict) else None
    if isinstance(written, str):
        return written
    return _named(field.annotation, field.metadata)


def _named(tp: Any, metadata: list[Any]) -> str:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(tp) if a is not type(None)]
        return " or ".join(_named(a, metadata) for a in options)
    if origin is Literal:
        return "one of " + ", ".join(f"`{v}`" for v in get_args(tp))
    if origin is list:
        return f"a list of {_named(get_args(tp)[0], [])}"
    if tp is bool:
        return "true or false"
    if tp is int:
        return "a whole number" + _bounds(metadata)
    if tp is float:
        return "a number" + _bounds(metadata)
    if tp is str:
        return "text" + _length(metadata)
    args = get_args(tp)
    if args:  # Annotated[...]: the type under its checks, with their bounds
        return _named(args[0], [*args[1:], *metadata])
    return "a mapping" if isinstance(tp, type) and issubclass(tp, BaseModel) else "any"


def _bounds(metadata: list[Any]) -> str:
    said = []
    for item in metadata:
        for attr, word in (("ge", "at least"), ("gt", "more than"), ("le", "at most"),
                           ("lt", "less than")):  # fmt: skip
            value = getattr(item, attr, None)
            if value is not None:
                said.append(f"{word} {value}")
        for inner in getattr(item, "metadata", []):  # a Field(...) inside Annotated
            said += [s.strip() for s in _bounds([inner]).split(",") if s.strip()]
    return f", {', '.join(said)}" if said else ""


def _length(metadata: list[Any]) -> str:
    for item in metadata:
        value = getattr(item, "max_length", None)
        if value is not None:
            return f", at most {value} characters"
        if getattr(item, "min_length", None) == 1:
            return ", not empty"
    return ""


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.default
    if value is PydanticUndefined:
        return "-"
    if isinstance(value, bool) or value is None:
        return {True: "`true`", False: "`false`", None: "none"}[value]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if value == "":
        return '`""`'
    if isinstance(value, list):
        return "`[]`" if not value else f"`{value}`"
    if isinstance(value, int):
        return f"`{value:,}`".replace(",", "_") if value >= 100_000 else f"`{value}`"
    return f"`{value}`"


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if get_origin(annotation) in (Union, types.UnionType):
        options = [a for a in get_args(annotation) if a is not type(None)]
        annotation = options[0] if len(options) == 1 else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


if __name__ == "__main__":
    sys.stdout.write(page())
