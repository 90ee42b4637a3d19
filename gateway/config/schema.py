"""The shape of the config file, declared once with pydantic: types, bounds, closed sets.

Every section forbids unknown keys, so a typo (`gatway:`, `max_call:`) is refused with a
did-you-mean instead of silently falling back to defaults. Values are strict (`"5"` is not a
number, `1` is not `true`) because YAML's guesses are how such mistakes are made. Errors are put
into the file's words by config_words.py; cross-references between sections (aliases, shapes,
connections) are checked in catalog.py.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, ConfigDict, Field, PlainValidator

from gateway.config.serving import GatewaySettings, LifecycleSettings, SuiteSettings
from gateway.config.values import (
    IGNORED,
    Name,
    Positive,
    Reader,
    Role,
    Section,
    fail,
    listing_value,
    plain_name,
    state_url,
    store_url,
    tag,
)

__all__ = ["GatewaySettings", "LifecycleSettings", "SuiteSettings", "plain_name"]


class ConnectionSpec(Section):
    what: ClassVar[str] = "a mapping of rpm, rpd, preferred, cool_together, listing"

    rpm: Positive | None = Field(
        default=None,
        description="Requests a minute, shared by every model on the connection.",
    )
    rpd: Positive | None = Field(
        default=None,
        description=(
            "Requests a day (the day in `gateway.quota_day_tz`), shared by every model "
            "on the connection."
        ),
    )
    preferred: bool = Field(
        default=False,
        description=(
            "A tie-break only: between models of equal standing, those on a preferred "
            "connection are seated first (a paid plan, a faster host)."
        ),
    )
    cool_together: bool = Field(
        default=False,
        description=(
            "A 429 on one of its models cools them all (one account's limit, not a model's)."
        ),
    )
    listing: Annotated[bool | str | None, PlainValidator(listing_value)] = Field(
        default=None,
        description=(
            "Read its provider's model listing (`GET /models`): unset, where the provider is "
            "known to serve one (OpenRouter, Groq, NVIDIA, Mistral, ...); true, at "
            "{api_base}/models; false, never; or the listing's own URL."
        ),
        json_schema_extra={"written": "true, false or a URL"},
    )


class BenchFacts(Section):
    what: ClassVar[str] = "a mapping of the bench's facts (connection, role, ...)"

    connection: str | None = Field(
        default=None,
        description=(
            "The connection the model is on (a name under `connections:`). Unset: the "
            "host of its api_base, else its provider (`groq/...` is on `groq`)."
        ),
        json_schema_extra={"written": "a connection's name"},
    )
    role: Role = Field(
        default="general",
        description=(
            "What the model is for; a shape seats members by role (`review` seats "
            "general and code models)."
        ),
    )
    family: str = Field(
        default="",
        description=(
            "Models of one family are not seated twice on a panel, for independent "
            "opinions. Unset: its served name, normalised (`vendor/Inkling:free` is "
            "`inkling`)."
        ),
    )
    context_window: Positive | None = Field(
        default=None,
        description=(
            "Tokens the model takes; a prompt it cannot hold is not sent to it. Unset: "
            "litellm's figure, else learned from the provider's refusals."
        ),
    )
    ad_hoc: bool = Field(
        default=False,
        description=(
            "Seated only when a request names it (`with` in the body, or "
            "`X-Panel-With`), never as an explorer or a reserve."
        ),
    )
    rpm: Positive | None = Field(
        default=None, description="This model's own requests a minute (beside its connection's)."
    )
    rpd: Positive | None = Field(
        default=None, description="This model's own requests a day (beside its connection's)."
    )
    vision: bool = Field(
        default=False, description="It reads images, though its role is not vision."
    )


class LitellmParams(Section):
    """Handed to litellm as-is: any key passes, but `model` is needed to know what to call."""

    model_config = ConfigDict(extra="allow")
    what: ClassVar[str] = "a mapping of litellm parameters with model"

    model: str


class ModelEntry(Section):
    what: ClassVar[str] = "a mapping with model_name and litellm_params"

    model_name: Name = Field(
        description=(
            "The model's alias on the bench: what collections, records and verdicts name."
        ),
        json_schema_extra={"written": "a plain name (letters, digits, '.', '_', '-')"},
    )
    litellm_params: LitellmParams = Field(
        description=(
            "Handed to litellm as written: `model` (litellm's provider string, "
            "`groq/llama-3.3-70b-versatile`), `api_base`, `api_key: os.environ/NAME`, "
            "and any other litellm parameter. A LiteLLM proxy's `rpm` becomes "
            "`bench.rpm`; its `tpm` is ignored."
        ),
        json_schema_extra={"written": "a mapping with model"},
    )
    bench: BenchFacts | None = Field(
        default=None,
        description="The bench's own facts about the model (below).",
        json_schema_extra={"written": "a mapping"},
    )
    model_info: dict[str, Any] | None = Field(
        default=None,
        description=(
            "LiteLLM's own (accepted so its configs paste in); `supports_vision: true` "
            "is read as `bench.vision`."
        ),
        json_schema_extra={"written": "a mapping"},
    )
    upstream_reader: Reader | None = Field(
        default=None,
        description="This model's reader, else `gateway.upstream_reader`.",
    )


def _distinct(members: list[str]) -> list[str]:
    twice = sorted({m for m in members if members.count(m) > 1})
    if twice:
        raise fail("twice", "lists {names} more than once", names=", ".join(map(repr, twice)))
    return members


class CollectionSpec(Section):
    what: ClassVar[str] = "a mapping with members"

    members: Annotated[list[str], AfterValidator(_distinct)] = Field(
        default=[],
        description="The models seated first, by model_name.",
        json_schema_extra={"written": "a list of model names, each once"},
    )
    description: str = Field(
        default="", max_length=300, description="Shown in `/v1/models` and the dashboard."
    )
    tags: list[Annotated[str, AfterValidator(tag)]] = Field(
        default=[],
        max_length=8,
        description="Up to 8 lower-case words, for finding collections.",
        json_schema_extra={"written": "a list of words"},
    )
    shape: str | None = Field(
        default=None,
        description=(
            "The roles its panels seat (a built-in shape or one under `shapes:`); a "
            "request's `X-Panel-Shape` wins. Unset: `general`."
        ),
        json_schema_extra={"written": "a shape's name"},
    )
    reply: Literal["panel", "merged", "route"] = Field(
        default="panel",
        description=(
            "What `bench/<name>` answers with: every answer side by side (`panel`), one "
            "answer merged from them (`merged`), or one member per turn (`route`). The "
            "suffixes `:merged` and `:route` ask for the others."
        ),
    )
    merger: str | None = Field(
        default=None,
        description="The model that writes a merged answer. Unset: the best by verdicts.",
        json_schema_extra={"written": "a model name"},
    )


class FileSections(Section):
    """The top level. Sections holding several items are checked item by item (sections.py),
    so one bad item does not hide the cross-reference problems of the others."""

    what: ClassVar[str] = "a mapping with model_list and collections"

    model_list: list[Any] = Field(
        min_length=1,
        description="The models, in LiteLLM's shape (below).",
        json_schema_extra={"written": "a list of models"},
    )
    connections: dict[Any, Any] | None = Field(
        default=None,
        description="What several models share upstream (below), by name.",
        json_schema_extra={"written": "a mapping"},
    )
    shapes: dict[Any, Any] | None = Field(
        default=None,
        description=("Shapes of your own, each a list of roles, beside the built-in ones (below)."),
        json_schema_extra={"written": "a mapping of name: [role, ...]"},
    )
    collections: dict[Any, Any] = Field(
        min_length=1,
        description="What clients ask for as `bench/<name>` (below).",
        json_schema_extra={"written": "a mapping"},
    )
    gateway: GatewaySettings | None = Field(
        default=None,
        description="How the gateway serves (below).",
        json_schema_extra={"written": "a mapping"},
    )
    lifecycle: LifecycleSettings | None = Field(
        default=None,
        description="How the bench keeps itself (below).",
        json_schema_extra={"written": "a mapping"},
    )
    suite: SuiteSettings | None = Field(
        default=None,
        description="The suite of known-answer tasks (below).",
        json_schema_extra={"written": "a mapping"},
    )
    store: Annotated[str, PlainValidator(store_url)] = Field(
        default="sqlite:///data/records.db",
        description=(
            "Where the records are kept: a SQLite file (relative to the config file) or "
            "PostgreSQL, for several replicas. May be written os.environ/NAME."
        ),
        json_schema_extra={"written": "sqlite:///PATH or postgresql://user:pass@host:port/db"},
    )
    state: Annotated[str | None, PlainValidator(state_url)] = Field(
        default=None,
        description=(
            "Where the live state (cooldowns, rpm windows, rotation) is kept for "
            "several replicas. Unset: in the gateway, shared by its workers."
        ),
        json_schema_extra={"written": "redis://host:port/db"},
    )
    # A LiteLLM proxy config pastes in whole: its proxy-wide sections mean nothing to the bench
    # and are ignored (check-config says so), while a misspelt section of ours is still refused.
    litellm_settings: Any = Field(
        default=None, description=IGNORED, json_schema_extra={"written": "anything"}
    )
    general_settings: Any = Field(
        default=None,
        description=IGNORED + " A `master_key` is refused: use `gateway.require_keys`.",
        json_schema_extra={"written": "anything"},
    )
    router_settings: Any = Field(
        default=None, description=IGNORED, json_schema_extra={"written": "anything"}
    )
    environment_variables: Any = Field(
        default=None, description=IGNORED, json_schema_extra={"written": "anything"}
    )


LITELLM_SECTIONS = (
    "litellm_settings",
    "general_settings",
    "router_settings",
    "environment_variables",
)

Shape = Annotated[list[Role], Field(min_length=1)]
