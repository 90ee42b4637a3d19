"""The shape of the config file, declared once with pydantic, and its errors put into words.

Every section forbids unknown keys, so a typo (`gatway:`, `max_call:`) is refused with a
did-you-mean instead of silently falling back to defaults. Errors are rewritten from pydantic's
wording into the file's own terms: `collections.core: expected a mapping with members, got a list`.
Cross-references between sections (aliases, shapes, connections) are checked in settings.py.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
import types
import zoneinfo
from collections.abc import Sequence
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PlainValidator, ValidationError
from pydantic_core import PydanticCustomError

from routing import ROLES

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_TAG = re.compile(r"^[a-z][a-z0-9-]*$")
_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")

Role = Literal["general", "code", "light", "vision", "image"]
assert get_args(Role) == ROLES, "the roles here and in routing must be the same"


def _fail(kind: str, message: str, **ctx: Any) -> PydanticCustomError:
    return PydanticCustomError(kind, message, ctx)


def plain_name(value: str) -> bool:
    return bool(_NAME.match(value))


def _plain_name(value: str) -> str:
    if not plain_name(value):
        raise _fail(
            "name", "must be a plain name (letters, digits, '.', '_', '-'), got {v}", v=got(value)
        )
    return value


def _tag(value: str) -> str:
    if not _TAG.match(value):
        raise _fail("tag", "must be a lower-case word (a-z, 0-9, '-'), got {v}", v=got(value))
    return value


def _host_name(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return all(_LABEL.match(label) for label in host.rstrip(".").split("."))


def _host(value: str) -> str:
    """`name` or `name:port` (a name without a port matches on any port); IPv6 in brackets."""
    try:
        parts = urlsplit("//" + value)
        ok = parts.hostname and _host_name(parts.hostname) and not parts.path
        ok = ok and parts.username is None and not parts.query and (parts.port or True)
    except ValueError:
        ok = False
    if not ok:
        raise _fail("host", "must be a host name, optionally with :port, got {v}", v=got(value))
    return value


def _url(value: str, *, origin: bool) -> str:
    try:
        parts = urlsplit(value)
        ok = parts.scheme in ("http", "https") and parts.hostname and _host_name(parts.hostname)
        ok = ok and parts.username is None and (parts.port or True)
        if origin:
            ok = ok and not parts.path and not parts.query and not parts.fragment
    except ValueError:
        ok = False
    if ok:
        return value
    if origin:
        raise _fail(
            "origin",
            "must be an origin like http://localhost:3000 (no path), got {v}",
            v=got(value),
        )
    raise _fail("url", "must be an http:// or https:// URL with a host, got {v}", v=got(value))


def _time_zone(value: str) -> str:
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise _fail(
            "zone", "must be a time zone name such as UTC or Europe/Paris, got {v}", v=got(value)
        ) from None
    return value


def _workers(value: Any) -> int | str:
    if value == "auto" or (type(value) is int and value >= 1):
        return value  # type: ignore[no-any-return]
    raise _fail("workers", "expected a whole number of at least 1, or auto, got {v}", v=got(value))


def _store(value: Any) -> str:
    if isinstance(value, str):
        if value.startswith("sqlite:///") and len(value) > len("sqlite:///"):
            return value
        if value.startswith(("postgresql://", "postgres://")) and urlsplit(value).hostname:
            return value
    raise _fail(
        "store",
        "expected sqlite:///PATH or postgresql://user:pass@host:port/db, got {v}",
        v=got(value),
    )


def _state(value: Any) -> str:
    if isinstance(value, str) and value.startswith(("redis://", "rediss://")):
        if urlsplit(value).hostname:
            return value
    raise _fail("state", "expected redis://host:port/db, got {v}", v=got(value))


Name = Annotated[str, AfterValidator(_plain_name)]
Host = Annotated[str, AfterValidator(_host)]
Origin = Annotated[str, AfterValidator(lambda v: _url(v, origin=True))]
Url = Annotated[str, AfterValidator(lambda v: _url(v, origin=False))]
Positive = Annotated[int, Field(ge=1)]


class _Section(BaseModel):
    """Strict: `5` is not `"5"`, `true` is not `1`; a whole number is a valid float."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)
    what: ClassVar[str] = "a mapping"


class GatewaySettings(_Section):
    what: ClassVar[str] = "a mapping of gateway settings"

    max_calls: int = Field(5, ge=1, le=10)
    max_explorers: int = Field(2, ge=0, le=2)
    reserves: int = Field(2, ge=0, le=5)
    seat_timeout_s: float = Field(300.0, ge=0)
    require_keys: bool = False
    cooldown_default_s: float = Field(60.0, ge=0)
    cooldown_max_s: float = Field(3600.0, ge=0)
    max_body_bytes: int = Field(20_000_000, ge=0)
    keepalive_s: float = Field(10.0, ge=0)
    drain_timeout_s: float = Field(30.0, ge=0)  # on SIGTERM: how long running panels may take
    # Stream each seat's upstream call? Streaming gives first-token times and catches cut
    # streams, but costs litellm ~2.5x the CPU per call: "auto" streams only for streamed panels.
    stream_seats: Literal["auto", "always", "never"] = "auto"
    workers: Annotated[int | str, PlainValidator(_workers)] = "auto"
    allowed_hosts: list[Host] = []
    allowed_origins: list[Origin] = []
    public_url: Url | None = None
    max_answer_bytes: int = Field(4_000_000, ge=1)
    max_panels_in_flight: int = Field(256, ge=1)
    max_seats_in_flight: int = Field(2048, ge=1)
    max_messages: int = Field(1000, ge=1)
    route_explore: float = Field(0.25, ge=0, le=1)
    first_token_s: float = Field(90.0, gt=0)
    route_tries: int = Field(3, ge=1, le=10)
    quota_day_tz: Annotated[str, AfterValidator(_time_zone)] = "UTC"
    pace_wait_s: float = Field(0.0, ge=0)


class ConnectionSpec(_Section):
    what: ClassVar[str] = "a mapping of rpm, rpd, preferred, cool_together"

    rpm: Positive | None = None
    rpd: Positive | None = None
    preferred: bool = False
    cool_together: bool = False


class BenchFacts(_Section):
    what: ClassVar[str] = "a mapping of the bench's facts (connection, role, ...)"

    connection: str | None = None
    role: Role = "general"
    family: str = ""
    context_window: Positive | None = None
    ad_hoc: bool = False
    rpm: Positive | None = None
    rpd: Positive | None = None


class LitellmParams(_Section):
    """Handed to litellm as-is: any key passes, but `model` is needed to know what to call."""

    model_config = ConfigDict(extra="allow")
    what: ClassVar[str] = "a mapping of litellm parameters with model"

    model: str


class ModelEntry(_Section):
    what: ClassVar[str] = "a mapping with model_name and litellm_params"

    model_name: Name
    litellm_params: LitellmParams
    bench: BenchFacts | None = None
    model_info: dict[str, Any] | None = None  # LiteLLM's own; accepted so its configs paste in


def _distinct(members: list[str]) -> list[str]:
    twice = sorted({m for m in members if members.count(m) > 1})
    if twice:
        raise _fail("twice", "lists {names} more than once", names=", ".join(map(repr, twice)))
    return members


class CollectionSpec(_Section):
    what: ClassVar[str] = "a mapping with members"

    members: Annotated[list[str], AfterValidator(_distinct)] = []
    description: str = Field("", max_length=300)
    tags: list[Annotated[str, AfterValidator(_tag)]] = Field([], max_length=8)
    shape: str | None = None
    reply: Literal["panel", "merged", "route"] = "panel"
    merger: str | None = None


class FileSections(_Section):
    """The top level. Sections holding several items are checked item by item in settings.py,
    so one bad item does not hide the cross-reference problems of the others."""

    what: ClassVar[str] = "a mapping with model_list and collections"

    model_list: list[Any] = Field(min_length=1)
    connections: dict[Any, Any] | None = None
    shapes: dict[Any, Any] | None = None
    collections: dict[Any, Any] = Field(min_length=1)
    gateway: GatewaySettings | None = None
    store: Annotated[str, PlainValidator(_store)] = "sqlite:///data/records.db"
    state: Annotated[str | None, PlainValidator(_state)] = None


Shape = Annotated[list[Role], Field(min_length=1)]


# -- errors in words ------------------------------------------------------------------------------


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
        elif _NAME.match(part):
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
            close = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else "known: " + ", ".join(known)
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
