"""OpenAI chat completions: reading the request into an `Ask`, rendering a `PanelRun` as a
`chat.completion` or as its chunk stream, and errors as OpenAI's `{"error": {...}}`.

Streaming: the 200 and a first chunk go out as soon as the panel is seated; then a header chunk;
then one content chunk per seat in finish order; keep-alive comments while seats think; a last
chunk with `finish_reason`, `usage` and the whole `bench`; then `[DONE]`. An error after the
first byte is an in-stream `{"error": ...}` event, so a client raises instead of hanging. A
client that hangs up stops the stream, not the seats (the panel is the app's task).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import Response

from gateway import reply
from gateway.asking import (
    Ask,
    chat_messages,
    collection_named,
    nominees_of,
    one_choice,
    reply_asked,
    reply_merged,
    sampling_of,
    shape_asked,
)
from gateway.config_schema import GatewaySettings
from gateway.errors import BadRequest, GatewayError, render
from gateway.formats.replies import reply_to
from gateway.formats.route_chat import read_route, render_route
from gateway.panel import Completion, KeepAlive, PanelEnded, PanelRun, SeatFinished
from gateway.reply import PanelFacts
from gateway.settings import Config

KEEP_ALIVE = b": keep-alive\n\n"
DONE = b"data: [DONE]\n\n"
__all__ = ["check", "read", "read_route", "render_error", "render_route", "render_run", "stream"]
_TOOLS = ("function_call", "functions", "parallel_tool_calls", "tool_choice", "tools")


# -- read ---------------------------------------------------------------------------------------


def check(body: dict[str, Any], settings: GatewaySettings) -> dict[str, Any]:
    """A parsed chat-completions body, checked, as the fields a panel reads: every one bounded
    (messages, stop, logit_bias, ...), the rest dropped. Pure, so it may run in the body
    reader's child process (gateway/bodies.py); nothing that needs the catalog is done here."""
    collection_named(body.get("model"))
    messages = chat_messages(body.get("messages"), settings.max_messages)
    one_choice(body)
    for field in _TOOLS:
        if body.get(field) is not None:
            raise BadRequest(
                f"`{field}` is not supported on a panel; ask bench/<collection>:route for a "
                "tool-calling turn.",
                param=field,
            )
    sampling = sampling_of(body)
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest("`stream` must be true or false.", param="stream")
    return {
        "model": body["model"],
        "messages": messages,
        "sampling": sampling,
        "stream": stream,
        "with": nominees_of(body.get("with"), None),
        "reply": reply_asked(body.get("bench")),
    }


def read(body: dict[str, Any], headers: dict[str, str], config: Config) -> Ask:
    """A checked chat-completions body (and the X-Panel-* headers, lower-cased) as an Ask."""
    model = body["model"]
    collection, merged_by_name = collection_named(model)
    shape = shape_asked(headers, collection, config)
    nominees = nominees_of(list(body["with"]), headers.get("x-panel-with"))
    merged = merged_by_name or reply_merged(body["reply"], collection, config)
    return Ask.of(
        requested_model=model,
        collection=collection,
        shape=shape,
        nominees=nominees,
        messages=body["messages"],
        sampling=body["sampling"],
        stream=body["stream"],
        merged=merged,
    )


# -- render -------------------------------------------------------------------------------------


async def render_run(run: PanelRun) -> Response:
    """The reply to a seated panel: the SSE stream when asked for, else the completion."""
    return await reply_to(run, stream=stream, body=completion_body, error=render_error)


def render_error(error: GatewayError) -> Response:
    return render(error)


def completion_body(done: Completion) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{done.panel_id}",
        "object": "chat.completion",
        "created": int(done.created),
        "model": done.model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": done.text},
            }
        ],
        "usage": done.usage,
        "bench": done.bench,
    }


async def stream(run: PanelRun) -> AsyncIterator[bytes]:
    chunk = _Chunks(run.facts)
    merged = run.ask.merged
    yield chunk.delta({"role": "assistant", "content": ""})
    if not merged:
        yield chunk.delta({"content": reply.header_line(run.facts) + "\n"})
    async for event in run.events():
        if isinstance(event, KeepAlive):
            yield KEEP_ALIVE
        elif isinstance(event, SeatFinished):
            if not merged:  # a merged reply streams the merge, not the seats
                yield chunk.delta({"content": reply.section(event.seat) + "\n"})
        elif isinstance(event, PanelEnded):
            if event.completion is None:
                assert event.error is not None
                yield _data(event.error.body())
            else:
                if merged:
                    yield chunk.delta({"content": event.completion.text})
                yield chunk.last(event.completion.usage, event.completion.bench)
            yield DONE


class _Chunks:
    def __init__(self, facts: PanelFacts) -> None:
        self.base = {
            "id": f"chatcmpl-{facts.panel_id}",
            "object": "chat.completion.chunk",
            "created": int(facts.created),
            "model": facts.requested_model,
        }

    def delta(self, delta: dict[str, Any]) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": None}
        return _data({**self.base, "choices": [choice]})

    def last(self, usage: dict[str, int], bench: dict[str, Any]) -> bytes:
        choice = {"index": 0, "delta": {}, "finish_reason": "stop"}
        return _data({**self.base, "choices": [choice], "usage": usage, "bench": bench})


def _data(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"
