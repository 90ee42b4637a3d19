"""A member's streamed chat chunks read as the pieces a route format relays.

Chat relays the member's chunks as they are and Anthropic through litellm's stream wrapper; the
formats that speak neither (Ollama, Gemini, Responses) read them here instead: each text delta
as it comes, each tool call as it starts and its arguments as they grow, and at the end the
whole calls, the finish reason and the usage. Tool calls are keyed by their `index`, as the
OpenAI stream does; a call whose first delta carries no id is given one, so every call a client
sees can be answered by id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from gateway.route.turn import RouteTurn
from gateway.tokens import counts
from gateway.upstream.chunks import Chunk, ToolCallPart, Usage


@dataclass
class Call:
    """One tool call as assembled so far."""

    index: int
    id: str
    name: str = ""
    arguments: str = ""

    def args(self) -> dict[str, Any]:
        """The arguments as an object (the formats that carry them parsed); a model's broken
        JSON is an empty object, as litellm's own adapters read it."""
        return args_of(self.arguments)


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class CallStarted:
    call: Call


@dataclass(frozen=True)
class Arguments:
    call: Call
    delta: str


Piece = Text | CallStarted | Arguments


class Assembly:
    """Reads one streamed turn's chunks in order; *ids* prefixes the id of a call sent without
    one (`<ids>_<index>`)."""

    def __init__(self, ids: str) -> None:
        self.ids = ids
        self.calls: dict[int, Call] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None

    def read(self, chunk: Chunk) -> list[Piece]:
        pieces: list[Piece] = []
        self.usage = chunk.usage or self.usage
        for choice in chunk.choices:
            self.finish_reason = choice.finish_reason or self.finish_reason
            delta = choice.delta
            if delta.content:
                pieces.append(Text(delta.content))
            for part in delta.tool_calls or ():
                pieces.extend(self._call_part(part))
        return pieces

    def _call_part(self, part: ToolCallPart) -> list[Piece]:
        index = part.index or 0
        name = part.function.name or ""
        arguments = part.function.arguments or ""
        pieces: list[Piece] = []
        call = self.calls.get(index)
        if call is None:
            call = Call(index, part.id or f"{self.ids}_{index}", name)
            self.calls[index] = call
            pieces.append(CallStarted(call))
        else:
            call.name += name
        if arguments:
            call.arguments += arguments
            pieces.append(Arguments(call, arguments))
        return pieces

    def whole_calls(self) -> list[Call]:
        return [self.calls[index] for index in sorted(self.calls)]


def args_of(arguments: str | None) -> dict[str, Any]:
    try:
        parsed = json.loads(arguments or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def tokens_of(usage: Usage | None) -> tuple[int, int]:
    """(prompt, completion) tokens of a litellm usage, 0 when unknown (gateway/tokens.py)."""
    return counts(usage)


def error_text(turn: RouteTurn, exc: BaseException) -> str:
    """What the client is told of a failure after the first piece (secrets scrubbed)."""
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return turn.runtime.scrub_error(message) or "the member's reply broke off"
