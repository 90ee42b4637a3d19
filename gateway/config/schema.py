"""The shape of the config file, declared once with pydantic: types, bounds, closed sets.

Every section forbids unknown keys, so a typo (`gatway:`, `max_call:`) is refused with a
did-you-mean instead of silently falling back to defaults. Values are strict (`"5"` is not a
number, `1` is not `true`) because YAML's guesses are how such mistakes are made. Errors are put
into the file's words by config_words.py; cross-references between sections (aliases, shapes,
connections) are checked in catalog.py.
"""

from __future__ import annotations

import ipaddress
import re
import zoneinfo
from typing import Annotated, Any, ClassVar, Literal, get_args
from urllib.parse import SplitResult, urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PlainValidator
from pydantic_core import PydanticCustomError

from gateway.config.words import PLAIN_NAME, got
from routing import ROLES

_TAG = re.compile(r"^[a-z][a-z0-9-]*$")
_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")

Role = Literal["general", "code", "light", "vision", "image"]
assert get_args(Role) == ROLES, "the roles here and in routing must be the same"


def _fail(kind: str, message: str, **ctx: Any) -> PydanticCustomError:
    return PydanticCustomError(kind, message, ctx)


def plain_name(value: str) -> bool:
    return bool(PLAIN_NAME.match(value))


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
        raise _fail("host", "must be a host name, optionally with :port, got {v}", v=got(value))
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
    if value == "auto":
        return "auto"
    if type(value) is int and value >= 1:  # (not a bool, not a float)
        return value
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


def _network(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise _fail(
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


class _Section(BaseModel):
    """Strict: `5` is not `"5"`, `true` is not `1`; a whole number is a valid float."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)
    what: ClassVar[str] = "a mapping"


class GatewaySettings(_Section):
    what: ClassVar[str] = "a mapping of gateway settings"

    max_calls: int = Field(default=5, ge=1, le=10)
    max_explorers: int = Field(default=2, ge=0, le=2)
    reserves: int = Field(default=2, ge=0, le=5)
    seat_timeout_s: float = Field(default=300.0, ge=0)
    require_keys: bool = False
    # The dashboard shows seats as Seat A, B, C... with no model named until each is judged, and
    # records such verdicts with `"blind": true` (contract §13, Judging).
    blind_judging: bool = False
    cooldown_default_s: float = Field(default=60.0, ge=0)
    cooldown_max_s: float = Field(default=3600.0, ge=0)
    max_body_bytes: int = Field(default=20_000_000, ge=0)
    # A request body must have arrived this long after its head (else 408, connection closed).
    body_timeout_s: float = Field(default=30.0, gt=0)
    keepalive_s: float = Field(default=10.0, ge=0)
    # On SIGTERM: how long running panels may take to finish.
    drain_timeout_s: float = Field(default=30.0, ge=0)
    # Stream each panel seat's upstream call? A panel sends a seat's section only when the seat
    # has finished, so streaming gains it nothing but litellm's CPU per chunk (~2.5x a plain
    # call's, and ~0.7 ms per chunk on the event loop): "auto" and "never" do not stream panel
    # seats, even for streamed panels; "always" streams them, for first-token times.
    stream_seats: Literal["auto", "always", "never"] = "auto"
    workers: Annotated[int | str, PlainValidator(_workers)] = "auto"
    allowed_hosts: list[Host] = []
    allowed_origins: list[Origin] = []
    public_url: Url | None = None
    # Proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (addresses or networks):
    # none by default, so a client's own address is the one the connection came from (the
    # sign-in throttle counts by it) whatever headers it sends.
    trusted_proxies: list[Network] = []
    # A seat whose answer is longer ends as an error (reading stops there).
    max_answer_bytes: int = Field(default=4_000_000, ge=1)
    # Per worker; beyond either, a panel is refused with 503 and Retry-After, nobody seated.
    max_panels_in_flight: int = Field(default=256, ge=1)
    max_seats_in_flight: int = Field(default=2048, ge=1)
    max_messages: int = Field(default=1000, ge=1)
    # A conversation carrying more than this many of a panel's own replies is refused (400,
    # naming `:route`): an agent that waits for a tool call a panel never makes asks again and
    # again (hundreds of panels a minute). 20 is far past a person's back-and-forth with a panel.
    panel_turns_max: int = Field(default=20, ge=1)
    route_explore: float = Field(default=0.25, ge=0, le=1)
    # Route mode: the wait for a member's first piece (text, a tool call, or reasoning) before
    # the turn goes to the next; the last member left waits seat_timeout_s (docs/reliability.md)
    first_token_s: float = Field(default=10.0, gt=0)
    route_tries: int = Field(default=3, ge=1, le=10)
    # Route mode: a 429 on the conversation's member stating a wait this short (and shorter than
    # its wait for a first piece) is waited out and the member asked again, once; a longer one
    # fails over at once. 0: always fail over at once.
    route_wait_s: float = Field(default=3.0, ge=0, le=60)
    # Route mode: a member's stream silent this long mid-answer has stalled (it is continued on
    # the next member); a route stream still going after route_stream_max_s ends with an error.
    stall_s: float = Field(default=30.0, gt=0)
    route_stream_max_s: float = Field(default=600.0, gt=0)
    quota_day_tz: Annotated[str, AfterValidator(_time_zone)] = "UTC"
    pace_wait_s: float = Field(default=0.0, ge=0)
    # While the store cannot take seat rows (PostgreSQL down; a SQLite file on a full disk,
    # deleted or replaced), they wait in a file per worker in this folder (relative to the
    # config file), up to spill_max_mb per worker; past that, new panels are refused (503)
    # until they are written. (On another disk than a SQLite store, it outlasts a full one.)
    spill_dir: str = Field(default="data/spill", min_length=1)
    spill_max_mb: float = Field(default=1024.0, gt=0)
    # Who reads the answers of OpenAI-compatible providers: the gateway itself (`direct`: litellm
    # builds the request, the gateway sends it and parses the answer, at a fraction of the CPU),
    # litellm (`litellm`), or `auto`: direct where litellm treats the provider as OpenAI-
    # compatible, litellm otherwise. A model's own `upstream_reader` overrides this one.
    upstream_reader: Reader = "auto"


class LifecycleSettings(_Section):
    """How the bench keeps itself (contract §18): when a failing model is benched, when it is
    tried again, when a withdrawn one is retired and asked again."""

    what: ClassVar[str] = "a mapping of lifecycle settings"

    failures_to_bench: int = Field(default=3, ge=1)  # transient failures in a row
    backoff_min_s: float = Field(default=5.0, ge=0)  # a benched model's first trial
    backoff_max_s: float = Field(default=60.0, ge=0)  # each failed trial doubles, up to this
    confirm_after_s: float = Field(default=600.0, ge=0)  # gone/paywalled: the second look
    reprobe_s: float = Field(default=86400.0, gt=0)  # a retired model asked again
    auto_retire: bool = True  # false: gone/paywalled models are benched, never retired
    expiry_warn_days: float = Field(default=7.0, ge=0)
    listing_s: float = Field(default=21600.0, gt=0)


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
    vision: bool = False  # reads images though its role is not vision


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
    upstream_reader: Reader | None = None  # this model's, else gateway.upstream_reader


def _distinct(members: list[str]) -> list[str]:
    twice = sorted({m for m in members if members.count(m) > 1})
    if twice:
        raise _fail("twice", "lists {names} more than once", names=", ".join(map(repr, twice)))
    return members


class CollectionSpec(_Section):
    what: ClassVar[str] = "a mapping with members"

    members: Annotated[list[str], AfterValidator(_distinct)] = []
    description: str = Field(default="", max_length=300)
    tags: list[Annotated[str, AfterValidator(_tag)]] = Field(default=[], max_length=8)
    shape: str | None = None
    reply: Literal["panel", "merged", "route"] = "panel"
    merger: str | None = None


class FileSections(_Section):
    """The top level. Sections holding several items are checked item by item (sections.py),
    so one bad item does not hide the cross-reference problems of the others."""

    what: ClassVar[str] = "a mapping with model_list and collections"

    model_list: list[Any] = Field(min_length=1)
    connections: dict[Any, Any] | None = None
    shapes: dict[Any, Any] | None = None
    collections: dict[Any, Any] = Field(min_length=1)
    gateway: GatewaySettings | None = None
    lifecycle: LifecycleSettings | None = None
    store: Annotated[str, PlainValidator(_store)] = "sqlite:///data/records.db"
    state: Annotated[str | None, PlainValidator(_state)] = None
    # A LiteLLM proxy config pastes in whole: its proxy-wide sections mean nothing to the bench
    # and are ignored (check-config says so), while a misspelt section of ours is still refused.
    litellm_settings: Any = None
    general_settings: Any = None
    router_settings: Any = None
    environment_variables: Any = None


LITELLM_SECTIONS = (
    "litellm_settings",
    "general_settings",
    "router_settings",
    "environment_variables",
)

Shape = Annotated[list[Role], Field(min_length=1)]
