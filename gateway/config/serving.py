"""The `gateway:` and `lifecycle:` sections: how the gateway serves, and how the bench keeps
itself. Each key's meaning is its Field's description, so check-config's readers and the config
reference (docs/config-reference.md, made by gateway/config/reference.py) say the same.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import AfterValidator, Field, PlainValidator

from gateway.config.values import (
    Host,
    Network,
    Origin,
    Reader,
    Section,
    Url,
    time_zone,
    worker_count,
)


class GatewaySettings(Section):
    what: ClassVar[str] = "a mapping of gateway settings"

    max_calls: int = Field(
        default=5,
        ge=1,
        le=10,
        description="Seats on a panel: the collection's members first, then explorers.",
    )
    max_explorers: int = Field(
        default=2,
        ge=0,
        le=2,
        description=(
            "Of those seats, how many go to explorers: models from outside the "
            "collection that have been seated least, so every model keeps being tried."
        ),
    )
    reserves: int = Field(
        default=2,
        ge=0,
        le=5,
        description=(
            "Models held back per panel to take the chair of a seat that is rate "
            "limited or fails at once (a refused request or a timeout is not handed "
            "on)."
        ),
    )
    seat_timeout_s: float = Field(
        default=300.0,
        ge=0,
        description=(
            "How long a seat's call may take; past it the seat ends as `timeout`. Route "
            "mode's last member left waits this long too."
        ),
    )
    require_keys: bool = Field(
        default=False,
        description=(
            "Every request needs a key made by `bench-gateway keys create NAME`, sent "
            "as `Authorization: Bearer` or `x-api-key`. Needed to serve beyond "
            "loopback."
        ),
    )
    blind_judging: bool = Field(
        default=False,
        description=(
            "The dashboard shows seats as Seat A, B, C... with no model named until "
            "each is judged, and records such verdicts as blind."
        ),
    )
    cooldown_default_s: float = Field(
        default=60.0,
        ge=0,
        description="How long a 429 that states no wait cools its model.",
    )
    cooldown_max_s: float = Field(
        default=3600.0,
        ge=0,
        description=(
            "The longest wait a provider's 429 or headers are believed for (a daily "
            "limit waits for the next quota day instead)."
        ),
    )
    max_body_bytes: int = Field(
        default=20_000_000,
        ge=0,
        description="A request body larger than this is refused (413).",
    )
    body_timeout_s: float = Field(
        default=30.0,
        gt=0,
        description=(
            "A request's body must have arrived this long after its head, else 408 and "
            "the connection is closed."
        ),
    )
    keepalive_s: float = Field(
        default=10.0,
        ge=0,
        description=(
            "A streamed reply with nothing new for this long sends a keep-alive, so "
            "clients and proxies do not give up on a slow panel."
        ),
    )
    drain_timeout_s: float = Field(
        default=30.0,
        ge=0,
        description="On SIGTERM or Ctrl-C: how long running panels may take to finish.",
    )
    stream_seats: Literal["auto", "always", "never"] = Field(
        default="auto",
        description=(
            "Stream each panel seat's upstream call? A panel sends a seat's section "
            "only when the seat has finished, so streaming gains it nothing but CPU: "
            "`auto` and `never` do not stream panel seats, even for streamed panels; "
            "`always` streams them, for first-token times."
        ),
    )
    workers: Annotated[int | str, PlainValidator(worker_count)] = Field(
        default="auto",
        description=(
            "Processes serving on the one port; `auto` is one per core. `serve --workers` wins."
        ),
        json_schema_extra={"written": "a whole number of at least 1, or auto"},
    )
    allowed_hosts: list[Host] = Field(
        default=[],
        description=(
            "Host names the gateway answers to besides loopback (the `Host` header); "
            "others are refused."
        ),
        json_schema_extra={"written": "a list of host names, each optionally with :port"},
    )
    allowed_origins: list[Origin] = Field(
        default=[],
        description=(
            "Web origins whose pages may call the gateway (CORS is answered for these only)."
        ),
        json_schema_extra={"written": "a list of origins like http://localhost:3000"},
    )
    public_url: Url | None = Field(
        default=None,
        description=(
            "The URL clients reach the gateway by, behind a reverse proxy; its host is answered to."
        ),
        json_schema_extra={"written": "an http:// or https:// URL"},
    )
    trusted_proxies: list[Network] = Field(
        default=[],
        description=(
            "Proxies whose X-Forwarded-For and X-Forwarded-Proto are believed. None by "
            "default, so a client's address is the one its connection came from (the "
            "sign-in throttle counts by it) whatever headers it sends."
        ),
        json_schema_extra={"written": "a list of addresses or networks (10.0.0.0/8)"},
    )
    max_answer_bytes: int = Field(
        default=4_000_000,
        ge=1,
        description="A seat whose answer is longer ends as an error (reading stops there).",
    )
    max_panels_in_flight: int = Field(
        default=256,
        ge=1,
        description=(
            "Per worker: past this many panels at once, a panel is refused with 503 and "
            "Retry-After, nobody seated."
        ),
    )
    max_seats_in_flight: int = Field(
        default=2048,
        ge=1,
        description="Per worker: the same bound, counted in seats.",
    )
    max_messages: int = Field(
        default=1000,
        ge=1,
        description="A request with more messages than this is refused by name.",
    )
    panel_turns_max: int = Field(
        default=20,
        ge=1,
        description=(
            "A conversation carrying more than this many of a panel's own replies is refused "
            "(400, naming `:route`): an agent waiting for a tool call a panel never makes would "
            "ask again and again. 20 is far past a person's back-and-forth with a panel."
        ),
    )
    route_explore: float = Field(
        default=0.25,
        ge=0,
        le=1,
        description=(
            "Route mode: the share of new conversations given to a member other than "
            "the best by verdicts, so every member keeps being tried."
        ),
    )
    first_token_s: float = Field(
        default=10.0,
        gt=0,
        description=(
            "Route mode: the wait for a member's first piece (text, a tool call, or "
            "reasoning) before the turn goes to the next member."
        ),
    )
    route_tries: int = Field(
        default=3,
        ge=1,
        le=10,
        description="Route mode: how many members a turn is tried on before it fails.",
    )
    route_wait_s: float = Field(
        default=3.0,
        ge=0,
        le=60,
        description=(
            "Route mode: a 429 on the conversation's member stating a wait this short "
            "is waited out and the member asked again, once; a longer one fails over at "
            "once. 0: always fail over at once."
        ),
    )
    stall_s: float = Field(
        default=30.0,
        gt=0,
        description=(
            "Route mode: a member's stream silent this long mid-answer has stalled, and "
            "is continued on the next member."
        ),
    )
    route_stream_max_s: float = Field(
        default=600.0,
        gt=0,
        description="Route mode: a stream still going after this long ends with an error.",
    )
    quota_day_tz: Annotated[str, AfterValidator(time_zone)] = Field(
        default="UTC",
        description=(
            "The time zone whose midnight starts a new quota day (for `rpd` caps and daily limits)."
        ),
        json_schema_extra={"written": "a time zone name such as UTC or Europe/Paris"},
    )
    pace_wait_s: float = Field(
        default=0.0,
        ge=0,
        description=(
            "A member at its rpm cap whose next slot frees within this long is waited "
            "for rather than replaced by a reserve. 0: replaced at once."
        ),
    )
    spill_dir: str = Field(
        default="data/spill",
        min_length=1,
        description=(
            "While the store cannot take seat rows (PostgreSQL down, a full disk), they "
            "wait in a file per worker in this folder (relative to the config file) and "
            "are written once it can."
        ),
        json_schema_extra={"written": "a folder"},
    )
    spill_max_mb: float = Field(
        default=1024.0,
        gt=0,
        description=(
            "Per worker: past this much waiting in spill_dir, new panels are refused "
            "(503) until it is written."
        ),
    )
    upstream_reader: Reader = Field(
        default="auto",
        description=(
            "Who reads the answers of OpenAI-compatible providers: the gateway itself "
            "(`direct`, at a fraction of the CPU), litellm (`litellm`), or `auto`: "
            "direct where litellm treats the provider as OpenAI-compatible, litellm "
            "otherwise. A model's own `upstream_reader` wins."
        ),
    )


class LifecycleSettings(Section):
    """How the bench keeps itself: when a failing model is benched, when it is tried again,
    when a withdrawn one is retired and asked again."""

    what: ClassVar[str] = "a mapping of lifecycle settings"

    failures_to_bench: int = Field(
        default=3,
        ge=1,
        description=(
            "Transient failures in a row (5xx, timeouts, empty answers) that bench a "
            "model. A refused key (401) or an entitlement failure benches it at once."
        ),
    )
    backoff_min_s: float = Field(
        default=5.0,
        ge=0,
        description="How long after being benched a model is first tried again.",
    )
    backoff_max_s: float = Field(
        default=60.0,
        ge=0,
        description="Each failed trial doubles the wait, up to this.",
    )
    confirm_after_s: float = Field(
        default=600.0,
        ge=0,
        description=(
            "A model that says it is gone (404) or no longer free is retired only once "
            "the gateway's own probe confirms it this long later."
        ),
    )
    reprobe_s: float = Field(
        default=86400.0,
        gt=0,
        description="How often a retired model is asked again.",
    )
    auto_retire: bool = Field(
        default=True,
        description="false: gone or paywalled models are benched, never retired.",
    )
    expiry_warn_days: float = Field(
        default=7.0,
        ge=0,
        description=(
            "A model whose provider's listing states an end date this close is named as an action."
        ),
    )
    listing_s: float = Field(
        default=21600.0,
        ge=0,
        description="How often a connection's model listing (`GET /models`) is read; 0: never.",
    )


class SuiteSettings(Section):
    """The suite of known-answer tasks: where the user's own tasks are, how much of a model's
    limits it may take, how often it runs by itself, and what onboarding asks."""

    what: ClassVar[str] = "a mapping of suite settings"

    dir: str | None = Field(
        default=None,
        description=(
            "A folder of your own task files, relative to the config's folder; a task there "
            "replaces a shipped one of the same id."
        ),
        json_schema_extra={"written": "a folder"},
    )
    share: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="The most of a model's rpm and rpd the suite may take.",
    )
    schedule_s: float = Field(
        default=0.0,
        ge=0,
        description="How often the suite runs by itself, new and stalest models first; 0: never.",
    )
    quick: int = Field(
        default=8,
        ge=1,
        description="The quick set's size (spread over bugs, clean code and claims).",
    )
    prior_weight: float = Field(
        default=5.0,
        ge=0,
        description=(
            "A model's suite accuracy on a shape counts as this many verdicts when the router "
            "ranks it, until real verdicts take over."
        ),
    )
    onboard: bool = Field(
        default=True,
        description=(
            "A model new to a running bench (in a reloaded config) gets the suite's quick set "
            "and its follow-up after its probe (docs/suite.md)."
        ),
    )
