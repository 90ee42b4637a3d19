"""A streamed chat chunk, in one typed shape whichever reader read it.

Both readers hand route mode and the formats the same `Chunk`: the direct reader parses each
SSE event straight into one (gateway/upstream/direct/sse_reader.py), litellm's reader turns
each of litellm's `ModelResponseStream` objects into one (gateway/upstream/litellm/stream.py).
Why not litellm's object for both: building one costs more CPU than everything else a relayed
chunk needs together, and an `Any` is what route mode read before, unchecked. Route mode reads a
chunk's choices, deltas, tool-call parts and usage by attribute, may rewrite a delta's text (a
continued stream, a masked secret), and renders it with `model_dump()`; these dataclasses do
exactly that, with litellm's field names, defaults and key order, so a client gets the same
bytes either way (the differential test in tests/upstream holds the two readers to it). What
litellm does to a delta is done here too: `reasoning` read as `reasoning_content`, a tool-call
part given its `type` and `index`.

`TurnStream` is what a route turn reads: the chunks of one member's reply, as they come.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from gateway.tokens import COUNTS, usage_view

_DELTA_OWN = frozenset(
    {"content", "role", "function_call", "tool_calls", "audio", "images", "annotations",
     "reasoning_content", "reasoning", "thinking_blocks", "reasoning_items",
     "provider_specific_fields"}
)  # fmt: skip
# the keys a Delta holds as fields: with `kept`, every other key is passed on as it came
_DELTA_HELD = frozenset(
    {"content", "role", "function_call", "tool_calls", "reasoning_content", "thinking_blocks"}
)
_CHUNK_OWN = frozenset({"id", "created", "model", "object", "choices", "usage"})


@dataclass(slots=True)
class Function:
    name: str | None = None
    arguments: str | None = None

    def dump(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.arguments is not None:
            out["arguments"] = self.arguments
        if self.name is not None:
            out["name"] = self.name
        return out


@dataclass(slots=True)
class ToolCallPart:
    """One piece of a tool call; the parts with one `index` make one call."""

    id: str | None
    function: Function
    type: str = "function"
    index: int = 0

    @classmethod
    def read(cls, raw: dict[str, Any], index: int) -> ToolCallPart:
        function = raw.get("function")
        found = raw.get("index")
        return cls(
            raw.get("id"),
            Function(function.get("name"), function.get("arguments"))
            if isinstance(function, dict)
            else Function(),
            raw.get("type") or "function",
            found if isinstance(found, int) else index,
        )

    def dump(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.id is not None:
            out["id"] = self.id
        out["function"] = self.function.dump()
        out["type"] = self.type
        out["index"] = self.index
        return out


@dataclass(slots=True)
class Delta:
    content: str | None = None
    role: str | None = None
    function_call: Any = None
    tool_calls: list[ToolCallPart] | None = None
    reasoning_content: str | None = None
    thinking_blocks: Any = None
    extra: dict[str, Any] | None = None  # what the provider added, passed on as it came

    @classmethod
    def read(cls, raw: dict[str, Any], kept: bool = False) -> Delta:
        """The delta in *raw* as a provider sent it (what litellm drops, dropped too), or
        (*kept*) as litellm renders it (every key it kept, kept)."""
        parts = raw.get("tool_calls")
        calls: list[ToolCallPart] | None = None
        if isinstance(parts, list):
            counted = 0
            calls = []
            for part in parts:
                if isinstance(part, dict):
                    calls.append(ToolCallPart.read(part, counted))
                    if not isinstance(part.get("index"), int):
                        counted += 1
        thought = raw.get("reasoning_content")
        extra = None
        own = _DELTA_HELD if kept else _DELTA_OWN
        if len(raw) > 2 or not raw.keys() <= own:
            extra = {k: v for k, v in raw.items() if k not in own and v is not None} or None
        return cls(
            raw.get("content"),
            raw.get("role"),
            raw.get("function_call"),
            calls,
            thought if thought is not None else raw.get("reasoning"),
            raw.get("thinking_blocks"),
            extra,
        )

    def dump(self) -> dict[str, Any]:
        """In litellm's order: its declared fields, then what the provider added, then the
        OpenAI ones."""
        out: dict[str, Any] = {}
        if self.reasoning_content is not None:
            out["reasoning_content"] = self.reasoning_content
        if self.thinking_blocks is not None:
            out["thinking_blocks"] = self.thinking_blocks
        if self.extra:
            out.update(self.extra)
        if self.content is not None:
            out["content"] = self.content
        if self.role is not None:
            out["role"] = self.role
        if self.function_call is not None:
            out["function_call"] = self.function_call
        if self.tool_calls is not None:
            out["tool_calls"] = [part.dump() for part in self.tool_calls]
        return out


@dataclass(slots=True)
class Choice:
    index: int = 0
    delta: Delta = field(default_factory=Delta)
    finish_reason: str | None = None
    logprobs: Any = None

    @classmethod
    def read(cls, raw: dict[str, Any], kept: bool = False) -> Choice:
        index = raw.get("index")
        delta = raw.get("delta")
        return cls(
            index if isinstance(index, int) else 0,
            Delta.read(delta if isinstance(delta, dict) else {}, kept),
            raw.get("finish_reason"),
            raw.get("logprobs"),
        )

    def dump(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.finish_reason is not None:
            out["finish_reason"] = self.finish_reason
        out["index"] = self.index
        out["delta"] = self.delta.dump()
        if self.logprobs is not None:
            out["logprobs"] = self.logprobs
        return out


@dataclass(slots=True)
class Usage:
    """A stream's usage, as litellm hands it on: the three counts first, then the details."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def read(cls, raw: dict[str, Any], model: str = "") -> Usage:
        view = usage_view(raw, model)  # the counts, read as every usage is (gateway/tokens.py)
        assert view is not None
        details = {
            k: dict(sorted(v.items())) if isinstance(v, dict) else v
            for k, v in raw.items()
            if k not in COUNTS and v is not None
        }
        counts = (view["prompt_tokens"], view["completion_tokens"], view["total_tokens"])
        return cls(*counts, details)

    def model_dump(self, exclude_none: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "completion_tokens": self.completion_tokens,
            "prompt_tokens": self.prompt_tokens,
            "total_tokens": self.total_tokens,
        }
        for name in ("completion_tokens_details", "prompt_tokens_details"):
            if (found := self.details.get(name)) is not None:
                out[name] = {k: v for k, v in found.items() if v is not None}
        out.update({k: v for k, v in self.details.items() if k not in out})
        return out


@dataclass(slots=True)
class Chunk:
    """One `chat.completion.chunk`."""

    id: str | None
    created: int | None
    model: str  # as litellm names it: the model asked for, not the one the provider says
    choices: list[Choice] = field(default_factory=list)
    usage: Usage | None = None
    extra: dict[str, Any] | None = None  # what the provider added (`system_fingerprint`, ...)
    object: str = "chat.completion.chunk"

    @classmethod
    def read(cls, raw: dict[str, Any], model: str, kept: bool = False) -> Chunk:
        """A chunk from its JSON (*raw*), named for *model*; *kept*: *raw* is litellm's
        rendering of its own chunk, every field of which is passed on."""
        choices = raw.get("choices")
        usage = raw.get("usage")
        extra = None
        if len(raw) > len(_CHUNK_OWN) or not raw.keys() <= _CHUNK_OWN:
            extra = {k: v for k, v in raw.items() if k not in _CHUNK_OWN and v is not None} or None
        return cls(
            raw.get("id"),
            raw.get("created"),
            model,
            [Choice.read(c, kept) for c in choices if isinstance(c, dict)] if choices else [],
            Usage.read(usage, model) if isinstance(usage, dict) else None,
            extra,
        )

    def model_dump(self, exclude_none: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.id is not None:
            out["id"] = self.id
        if self.created is not None:
            out["created"] = self.created
        out["model"] = self.model
        out["object"] = self.object
        extra = self.extra
        if extra and (fingerprint := extra.get("system_fingerprint")) is not None:
            out["system_fingerprint"] = fingerprint
        out["choices"] = [choice.dump() for choice in self.choices]
        if self.usage is not None:
            out["usage"] = self.usage.model_dump()
        if extra:
            out.update({k: v for k, v in extra.items() if k != "system_fingerprint"})
        return out


class TurnStream(Protocol):
    """One member's streamed reply, opened: its chunks as they come, each reader's failures
    raised as they are (gateway/upstream/relay.py's `chunks_of` maps them); `aclose` drops
    the connection rather than draining it."""

    def __aiter__(self) -> AsyncIterator[Chunk]: ...

    def in_hand(self) -> bool:
        """Is the next chunk read already (no wait for the network)?"""
        ...

    def headers(self) -> dict[str, str]:
        """The provider's response headers, lower-cased."""
        ...

    async def aclose(self) -> None: ...
