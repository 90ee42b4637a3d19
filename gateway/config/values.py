"""The values a config file holds, each checked as it is written: names, hosts, origins, URLs,
networks, time zones, worker counts, store and state URLs; and the strict base of every section.

A value's error is in the file's words (`must be a host name, optionally with :port, got ...`):
config_words.py puts pydantic's own errors so, and these checks raise theirs already so.
"""

from __future__ import annotations

import ipaddress
import re
import zoneinfo
from typing import Annotated, Any, ClassVar, Literal, get_args
from urllib.parse import SplitResult, urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from gateway.config.words import PLAIN_NAME, got
from routing import ROLES

_TAG = re.compile(r"^[a-z][a-z0-9-]*$")
_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")

Role = Literal["general", "code", "light", "vision", "image"]
assert get_args(Role) == ROLES, "the roles here and in routing must be the same"


def fail(kind: str, message: str, **ctx: Any) -> PydanticCustomError:
    return PydanticCustomError(kind, message, ctx)


def plain_name(value: str) -> bool:
    return bool(PLAIN_NAME.match(value))


def _plain_name(value: str) -> str:
    if not plain_name(value):
        raise fail(
            "name", "must be a plain name (letters, digits, '.', '_', '-'), got {v}", v=got(value)
        )
    return value


def tag(value: str) -> str:
    if not _TAG.match(value):
        raise fail("tag", "must be a lower-case word (a-z, 0-9, '-'), got {v}", v=got(value))
    return value


def _host_name(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return all(_LABEL.match(label) for label in host.rstrip(".").split("."))


def _parts(url: str) -> SplitResult | None:
    """*url* split, if its host is a host name or an address and its port a port; else None."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError when not a port
    except ValueError:
        return None
    host = parts.hostname
    return parts if host and _host_name(host) and parts.username is None else None


def _host(value: str) -> str:
    """`name` or `name:port` (a name without a port matches on any port); IPv6 in brackets."""
    parts = _parts("//" + value)
    if parts is None or parts.path or parts.query or parts.fragment:
        raise fail("host", "must be a host name, optionally with :port, got {v}", v=got(value))
    return value


def _url(value: str, *, origin: bool) -> str:
    parts = _parts(value)
    if parts is None or parts.scheme not in ("http", "https"):
        ok = False
    else:
        ok = not (origin and (parts.path or parts.query or parts.fragment))
    if ok:
        return value
    if origin:
        raise fail(
            "origin",
            "must be an origin like http://localhost:3000 (no path), got {v}",
            v=got(value),
        )
    raise fail("url", "must be an http:// or https:// URL with a host, got {v}", v=got(value))


def time_zone(value: str) -> str:
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise fail(
            "zone", "must be a time zone name such as UTC or Europe/Paris, got {v}", v=got(value)
        ) from None
    return value


def worker_count(value: Any) -> int | str:
    if value == "auto":
        return "auto"
    if type(value) is int and value >= 1:  # (not a bool, not a float)
        return value
    raise fail("workers", "expected a whole number of at least 1, or auto, got {v}", v=got(value))


def store_url(value: Any) -> str:
    if isinstance(value, str):
        if value.startswith("sqlite:///") and len(value) > len("sqlite:///"):
            return value
        if value.startswith(("postgresql://", "postgres://")) and urlsplit(value).hostname:
            return value
    raise fail(
        "store",
        "expected sqlite:///PATH or postgresql://user:pass@host:port/db, got {v}",
        v=got(value),
    )


def state_url(value: Any) -> str:
    if isinstance(value, str) and value.startswith(("redis://", "rediss://")):
        if urlsplit(value).hostname:
            return value
    raise fail("state", "expected redis://host:port/db, got {v}", v=got(value))


def listing_value(value: Any) -> bool | str:
    """A connection's `listing`: true, false, or the URL of its listing."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _url(value, origin=False)
    raise fail("listing", "expected true, false or the listing's URL, got {v}", v=got(value))


def _network(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise fail(
            "trusted_proxies", "expected an IP address or network (10.0.0.0/8), got {v}", v=value
        ) from None
    return value


Name = Annotated[str, AfterValidator(_plain_name)]
Network = Annotated[str, AfterValidator(_network)]
Host = Annotated[str, AfterValidator(_host)]
Origin = Annotated[str, AfterValidator(lambda v: _url(v, origin=True))]
Url = Annotated[str, AfterValidator(lambda v: _url(v, origin=False))]
Positive = Annotated[int, Field(ge=1)]
Reader = Literal["auto", "litellm", "direct"]
IGNORED = "A LiteLLM proxy's own section: pasted configs keep it, and the bench ignores it."


class Section(BaseModel):
    """Strict: `5` is not `"5"`, `true` is not `1`; a whole number is a valid float."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)
    what: ClassVar[str] = "a mapping"
