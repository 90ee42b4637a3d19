"""An OpenAI-compatible SSE answer read off the wire: each `data:` line parsed once, as it
arrives, into a typed chunk (gateway/upstream/chunks.py).

Why: litellm's stream wrapper costs ~0.2 ms of CPU per chunk (an SDK event parser, a pydantic
object built and rebuilt, logging hooks); reading the lines and parsing their JSON costs a
tenth of that. What litellm does to a stream besides is done here the way it does it: the usage
the gateway asks for (`include_usage`) comes last, on a chunk of its own, with the reasoning and
text split litellm adds, or counted by litellm's token counter when the provider reported none;
a failure (an `{"error": ...}` event, a line that is not JSON, a cut connection, an end before
the finish, a read that times out) is raised as the exception litellm raises for it
(gateway/upstream/direct/wire_errors.py).

Everything one network read brought is parsed at once: `in_hand` says that the next chunk is
ready without a wait, so route mode sends those chunks in one write.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

import aiohttp
import litellm
import orjson

from gateway.upstream.chunks import Chunk, Usage
from gateway.upstream.direct import wire_errors
from gateway.upstream.direct.wire import Target

_DONE = b"[DONE]"


class DirectStream:
    """An open streamed answer, iterated as chunks; `aclose` drops its connection."""

    def __init__(
        self,
        response: aiohttp.ClientResponse,
        target: Target,
        messages: list[dict[str, Any]],
        timeout: float,
    ) -> None:
        self._response = response
        self._response_headers = {k.lower(): v for k, v in response.headers.items()}
        self._target = target
        self._messages = messages
        self._timeout = timeout
        self._ready: deque[Chunk] = deque()
        self._rest = b""
        self._ended = False
        self._failed: Exception | None = None
        self._usage: dict[str, Any] | None = None
        self._finished = False
        self._sent = False
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._only_text = True
        self._first: dict[str, Any] | None = None  # the first event: its id and time

    def __aiter__(self) -> DirectStream:
        return self

    def headers(self) -> dict[str, str]:
        return dict(self._response_headers)

    def in_hand(self) -> bool:
        """Is the next chunk read already (no wait for the network)?"""
        return bool(self._ready)

    async def __anext__(self) -> Chunk:
        while not self._ready:
            if self._failed is not None:
                failed, self._failed = self._failed, None
                self._ended = True
                raise failed
            if self._ended:
                raise StopAsyncIteration
            await self._read()
        self._sent = True
        return self._ready.popleft()

    async def _read(self) -> None:
        try:
            async with asyncio.timeout(self._timeout):
                data = await self._response.content.readany()
        except TimeoutError:
            self._failed = wire_errors.timed_out(self._target, self._timeout)
            return
        except (aiohttp.ClientError, OSError):  # (an answer over its cap is raised as it is)
            self._failed = self._broken(wire_errors.cut(self._target))
            return
        if not data:
            self._feed(b"\n")  # a last line without its newline is still a line
            self._end()
            return
        self._feed(data)

    def _feed(self, data: bytes) -> None:
        lines = (self._rest + data).split(b"\n")
        self._rest = lines.pop()
        for line in lines:
            if self._ended or self._failed is not None:
                return
            if not line.startswith(b"data:"):
                continue  # comments, event names, blank separators
            payload = line[5:].strip()
            if payload == _DONE:
                self._end()
                return
            if payload:
                self._event(line, payload)

    def _event(self, line: bytes, payload: bytes) -> None:
        try:
            raw = orjson.loads(payload)
        except orjson.JSONDecodeError:
            self._failed = self._broken(wire_errors.unreadable(line.rstrip(b"\r"), payload))
            return
        if not isinstance(raw, dict):
            return
        if raw.get("error"):
            self._failed = self._broken(wire_errors.error_event(self._target, raw))
            return
        usage = raw.get("usage")
        if isinstance(usage, dict):
            self._usage = usage  # handed on last, on a chunk of its own, as litellm does
            raw = {k: v for k, v in raw.items() if k != "usage"}
        if not raw.get("choices"):
            if self._usage is not None and self._first is None:
                self._first = raw
            return
        chunk = Chunk.read(raw, self._target.model)
        if self._first is None:
            self._first = raw
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content:
                self._text.append(delta.content)
            if delta.reasoning_content:
                self._reasoning.append(delta.reasoning_content)
            if delta.tool_calls or delta.function_call or delta.reasoning_content or delta.extra:
                self._only_text = False
            if choice.finish_reason:
                self._finished = True
        self._ready.append(chunk)

    def _end(self) -> None:
        if self._ended or self._failed is not None:
            return
        if not self._finished:
            self._failed = self._broken(wire_errors.ended_early())
            return
        self._ended = True
        first = self._first or {}
        last: dict[str, Any] = {"id": first.get("id"), "created": first.get("created")}
        stated, model = self._usage, self._target.model
        usage = Usage.read(stated, model) if stated is not None else self._counted()
        self._add_split(usage)
        chunk = Chunk.read(last, self._target.model)
        chunk.usage = usage
        self._ready.append(chunk)

    def _counted(self) -> Usage:
        """The usage litellm counts itself when the provider reported none."""
        model = self._target.model
        try:
            prompt = litellm.token_counter(model=model, messages=self._messages)
        except Exception:
            prompt = 0
        text = "".join(self._text)
        completion = litellm.token_counter(model=model, text=text, count_response_tokens=True)
        reasoning = self._reasoning_tokens()
        completion += reasoning or 0
        return Usage.read({"prompt_tokens": prompt, "completion_tokens": completion})

    def _reasoning_tokens(self) -> int | None:
        if self._only_text:
            return 0
        if not self._reasoning:
            return None
        return int(litellm.token_counter(text="".join(self._reasoning), count_response_tokens=True))

    def _add_split(self, usage: Usage) -> None:
        """litellm's split of the completion tokens into reasoning and text."""
        reasoning = self._reasoning_tokens()
        if reasoning is None:
            return
        capped = min(max(0, reasoning), usage.completion_tokens)
        details = usage.details.get("completion_tokens_details")
        if not isinstance(details, dict):
            split = {"reasoning_tokens": capped, "text_tokens": usage.completion_tokens - capped}
            usage.details["completion_tokens_details"] = split
        elif details.get("reasoning_tokens") is None:
            details["reasoning_tokens"] = capped
            if details.get("text_tokens") is None:
                details["text_tokens"] = usage.completion_tokens - capped
            usage.details["completion_tokens_details"] = dict(sorted(details.items()))

    def _broken(self, original: Exception) -> Exception:
        return wire_errors.in_stream(self._target, original, self._sent, "".join(self._text))

    async def aclose(self) -> None:
        """Stop reading: the connection is closed rather than drained."""
        self._ended = True
        self._response.close()
