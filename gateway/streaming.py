"""Streaming a panel as OpenAI chat-completion chunks, each seat's section the moment it exists.

The 200 and a first chunk go out as soon as the panel is seated; then a header chunk; then one
content chunk per seat in finish order; keep-alive comments while seats think; a last chunk with
`finish_reason`, `usage` and the whole `bench`; then `[DONE]`. An error after the first byte is an
in-stream `{"error": ...}` event, so a client raises instead of hanging. The panel itself runs as
an app-owned task: a client that hangs up stops the stream, not the seats.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import StreamingResponse

from gateway import panels, reply
from gateway.asking import ChatAsk
from gateway.errors import GatewayError
from gateway.fanout import Fanout, SeatResult
from gateway.reply import PanelFacts
from gateway.runtime import Runtime

log = logging.getLogger("bench.streaming")

KEEP_ALIVE = b": keep-alive\n\n"
DONE = b"data: [DONE]\n\n"
_END = object()


def stream_panel(runtime: Runtime, facts: PanelFacts, ask: ChatAsk, fanout: Fanout):
    finished: asyncio.Queue[Any] = asyncio.Queue()
    if not ask.merged:
        fanout.on_finish = finished.put_nowait
    task = panels.start(runtime, facts, panels.run(runtime, facts, ask, fanout))
    task.add_done_callback(lambda _: finished.put_nowait(_END))
    events = _events(runtime, facts, ask, task, finished)
    headers = {**panels.headers(facts), "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(events, media_type="text/event-stream", headers=headers)


async def _events(
    runtime: Runtime,
    facts: PanelFacts,
    ask: ChatAsk,
    task: asyncio.Task,
    finished: asyncio.Queue,
) -> AsyncIterator[bytes]:
    chunk = _Chunks(facts)
    yield chunk.delta({"role": "assistant", "content": ""})
    if not ask.merged:
        yield chunk.delta({"content": reply.header_line(facts) + "\n"})
    keepalive = runtime.config.gateway.keepalive_s
    while True:
        try:
            item = await asyncio.wait_for(finished.get(), timeout=keepalive)
        except TimeoutError:
            yield KEEP_ALIVE
            continue
        if item is _END:
            break
        assert isinstance(item, SeatResult)
        yield chunk.delta({"content": reply.section(item) + "\n"})
    try:
        outcome = task.result()
        if not reply.answered(outcome.seats):
            raise panels.failure(runtime, facts, outcome.seats)
    except GatewayError as error:
        yield _data(error.body())
        yield DONE
        return
    except Exception:
        log.exception("panel %s failed while streaming", facts.panel_id)
        yield _data(
            {
                "error": {
                    "message": "The panel failed unexpectedly.",
                    "type": "server_error",
                    "param": None,
                    "code": None,
                }
            }
        )
        yield DONE
        return
    body = panels.completion(facts, outcome)
    if ask.merged:
        yield chunk.delta({"content": body["choices"][0]["message"]["content"]})
    yield chunk.last(body["usage"], body["bench"])
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
