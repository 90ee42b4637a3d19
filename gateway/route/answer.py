"""What a route turn's stream has said so far: its text, reasoning, tool calls, finish reason
and usage, gathered chunk by chunk.

One gathering serves three readers: the record (the whole answer, whoever wrote which part of
it), the continuation (the text a broken stream leaves for the next member to go on from, and
whether it broke inside a tool call), and a plain turn's reply, assembled from it. Its size is
counted as it grows, every relayed byte of it (gateway/route/size.py), so an answer over
`gateway.max_answer_bytes` stops being read there. Its usage is read as every usage is
(gateway/tokens.py): the chunk that carries it is relayed and recorded with counts, never an
upstream's string or a number no database column holds.
"""

from __future__ import annotations

import json
from typing import Any

from gateway.errors import UpstreamAnswerTooLarge
from gateway.route.size import relayed_bytes
from gateway.tokens import COUNTS, usage_view
from gateway.upstream.chunks import Chunk, Delta, ToolCallPart, Usage


class Answer:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.size = 0  # bytes counted so far (gateway/route/size.py)
        self.first: Chunk | None = None  # the first chunk: its id and time stamp every later one

    def read(self, chunk: Chunk) -> None:
        """Gather *chunk*; raise UpstreamAnswerTooLarge (keeping none of it) if it would take
        the answer past its limit."""
        grown = relayed_bytes(chunk)
        if self.size + grown > self.limit:
            raise UpstreamAnswerTooLarge(f"the answer was over the limit of {self.limit} bytes")
        self.size += grown
        if self.first is None:
            self.first = chunk
        if usage := chunk.usage:
            self.usage = counted(usage)
        for choice in chunk.choices:
            self.finish_reason = choice.finish_reason or self.finish_reason
            delta = choice.delta
            if text := delta.content:
                self.parts.append(text)
            if thought := _thought(delta):
                self.reasoning.append(thought)
            for part in delta.tool_calls or ():
                self._call_part(part)

    def _call_part(self, part: ToolCallPart) -> None:
        call = self.calls.setdefault(part.index or 0, {"id": None, "name": "", "arguments": ""})
        call["id"] = part.id or call["id"]
        call["name"] += part.function.name or ""
        call["arguments"] += part.function.arguments or ""

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def recorded(self) -> str:
        """The answer as its record keeps it: the text, else the tool calls as JSON."""
        text = self.text
        return text or (json.dumps(list(self.calls.values())) if self.calls else "")

    def forget(self) -> None:
        """Start again (a plain turn whose member broke off: nothing of it was sent, and the
        next member answers whole)."""
        self.parts, self.reasoning, self.calls = [], [], {}
        self.finish_reason, self.usage, self.size = None, None, 0

    def whole_calls(self) -> list[dict[str, Any]]:
        return [self.calls[index] for index in sorted(self.calls)]


def counted(usage: Usage) -> Usage:
    """*usage* with its counts read as counts: set on it in place (it is relayed as it is),
    unless they were counts already."""
    view = usage_view(usage)
    assert view is not None
    if all(getattr(usage, name) == view[name] for name in COUNTS):
        return usage
    for name in COUNTS:
        setattr(usage, name, view[name])
    return usage


def _thought(delta: Delta) -> str | None:
    """A delta's reasoning text, as litellm relays it (`reasoning_content`)."""
    thought = delta.reasoning_content
    return thought if isinstance(thought, str) and thought else None
