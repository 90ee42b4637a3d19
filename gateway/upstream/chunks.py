"""A streamed chat chunk read straight off the wire, in the shape litellm hands it on.

Why not litellm's own `ModelResponseStream`: building one costs more CPU than everything else a
relayed chunk needs together. Route mode reads a chunk's choices, deltas, tool-call parts and
usage by attribute, may rewrite a delta's text (a continued stream), and renders it with
`model_dump(exclude_none=True)`; these small classes do exactly that, with litellm's field
names, defaults and key order, so a client gets the same bytes either way (the differential
test in tests/upstream holds the two paths to it). What litellm does to a delta is done here
too: `reasoning` read as `reasoning_content`, a tool-call part given its `type` and `index`.
Where a format's adapter needs litellm's object itself (Anthropic's stream wrapper),
`as_litellm` builds it then.
"""

from __future__ import annotations

from typing import Any

import litellm

from gateway.tokens import usage_view

_DELTA_OWN = frozenset(
    {"content", "role", "function_call", "tool_calls", "audio", "images", "annotations",
     "reasoning_content", "reasoning", "thinking_blocks", "reasoning_items",
     "provider_specific_fields"}
)  # fmt: skip
_CHUNK_OWN = frozenset({"id", "created", "model", "object", "choices", "usage"})


class Function:
    __slots__ = ("name", "arguments")

    def __init__(self, name: str | None, arguments: str | None) -> None:
        self.name, self.arguments = name, arguments

    def dump(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.arguments is not None:
            out["arguments"] = self.arguments
        if self.name is not None:
            out["name"] = self.name
        return out


class ToolCallPart:
    __slots__ = ("id", "function", "type", "index")

    def __init__(self, raw: dict[str, Any], index: int) -> None:
        self.id: str | None = raw.get("id")
        function = raw.get("function")
        self.function = (
            Function(function.get("name"), function.get("arguments"))
            if isinstance(function, dict)
            else Function(None, None)
        )
        self.type: str = raw.get("type") or "function"
        found = raw.get("index")
        self.index: int = found if isinstance(found, int) else index

    def dump(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.id is not None:
            out["id"] = self.id
        out["function"] = self.function.dump()
        out["type"] = self.type
        out["index"] = self.index
        return out


class Delta:
    __slots__ = ("content", "role", "function_call", "tool_calls", "reasoning_content",
                 "thinking_blocks", "extra")  # fmt: skip

    def __init__(self, raw: dict[str, Any]) -> None:
        self.content: str | None = raw.get("content")
        self.role: str | None = raw.get("role")
        self.function_call: Any = raw.get("function_call")
        parts = raw.get("tool_calls")
        self.tool_calls: list[ToolCallPart] | None = None
        if isinstance(parts, list):
            counted = 0
            self.tool_calls = []
            for part in parts:
                if isinstance(part, dict):
                    self.tool_calls.append(ToolCallPart(part, counted))
                    if not isinstance(part.get("index"), int):
                        counted += 1
        thought = raw.get("reasoning_content")
        self.reasoning_content: str | None = (
            thought if thought is not None else raw.get("reasoning")
        )
        self.thinking_blocks: Any = raw.get("thinking_blocks")
        self.extra: dict[str, Any] | None = None
        if len(raw) > 2 or not raw.keys() <= _DELTA_OWN:
            others = {k: v for k, v in raw.items() if k not in _DELTA_OWN and v is not None}
            self.extra = others or None

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


class Choice:
    __slots__ = ("index", "delta", "finish_reason", "logprobs")

    def __init__(self, raw: dict[str, Any]) -> None:
        index = raw.get("index")
        self.index: int = index if isinstance(index, int) else 0
        delta = raw.get("delta")
        self.delta = Delta(delta if isinstance(delta, dict) else {})
        self.finish_reason: str | None = raw.get("finish_reason")
        self.logprobs: Any = raw.get("logprobs")

    def dump(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.finish_reason is not None:
            out["finish_reason"] = self.finish_reason
        out["index"] = self.index
        out["delta"] = self.delta.dump()
        if self.logprobs is not None:
            out["logprobs"] = self.logprobs
        return out


class Usage:
    """A stream's usage, as litellm hands it on: the three counts first, then the details."""

    __slots__ = ("prompt_tokens", "completion_tokens", "total_tokens", "details")

    def __init__(self, raw: dict[str, Any], model: str = "") -> None:
        view = usage_view(raw, model)  # the counts, read as every usage is (gateway/tokens.py)
        assert view is not None
        self.prompt_tokens: int = view["prompt_tokens"]
        self.completion_tokens: int = view["completion_tokens"]
        self.total_tokens: int = view["total_tokens"]
        self.details: dict[str, Any] = {
            k: dict(sorted(v.items())) if isinstance(v, dict) else v
            for k, v in raw.items()
            if k not in ("prompt_tokens", "completion_tokens", "total_tokens") and v is not None
        }

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


class Chunk:
    """One `chat.completion.chunk`."""

    __slots__ = ("id", "created", "model", "object", "choices", "usage", "extra")

    def __init__(self, raw: dict[str, Any], model: str) -> None:
        self.id: str | None = raw.get("id")
        self.created: int | None = raw.get("created")
        self.model = model  # as litellm names it: the model asked for, not the one that says
        self.object: str = "chat.completion.chunk"
        choices = raw.get("choices")
        self.choices = [Choice(c) for c in choices if isinstance(c, dict)] if choices else []
        usage = raw.get("usage")
        self.usage: Usage | None = Usage(usage, model) if isinstance(usage, dict) else None
        self.extra: dict[str, Any] | None = None
        if len(raw) > len(_CHUNK_OWN) or not raw.keys() <= _CHUNK_OWN:
            others = {k: v for k, v in raw.items() if k not in _CHUNK_OWN and v is not None}
            self.extra = others or None

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

    def as_litellm(self) -> litellm.ModelResponseStream:
        """litellm's own object for this chunk, for an adapter that needs it."""
        return litellm.ModelResponseStream(**self.model_dump())


def litellm_chunk(chunk: Any) -> Any:
    """*chunk* as litellm's object (a direct reader's chunk is made one; litellm's is as is)."""
    return chunk.as_litellm() if isinstance(chunk, Chunk) else chunk
