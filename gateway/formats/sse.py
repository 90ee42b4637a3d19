"""What the SSE formats share: the reply to a seated panel (the event stream when the client
asked for one, else the run awaited and rendered whole, or its failure in the format's error
shape), and the one stream writer OpenAI chat and legacy completions both use: a header chunk, a
chunk per seat in finish order, keep-alive comments while seats think, a last chunk with
`usage` and `bench`, then `[DONE]`. The two differ only in a chunk's shape (`Chunks`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Protocol

from starlette.responses import Response, StreamingResponse

from gateway.panel import reply
from gateway.panel.run import KeepAlive, PanelEnded, SeatFinished
from gateway.replies import JSONResponse

if TYPE_CHECKING:
    from gateway.errors import GatewayError
    from gateway.panel.run import Completion, PanelRun

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
KEEP_ALIVE = b": keep-alive\n\n"
DONE = b"data: [DONE]\n\n"


async def reply_to(
    run: PanelRun,
    *,
    stream: Callable[[PanelRun], AsyncIterator[bytes]],
    body: Callable[[Completion], dict[str, Any]],
    error: Callable[[GatewayError], Response],
) -> Response:
    if run.ask.stream:
        headers = {**run.headers, **SSE_HEADERS}
        return StreamingResponse(stream(run), media_type="text/event-stream", headers=headers)
    await run.run()
    failed = run.failure()
    if failed is not None:
        return error(failed)
    return JSONResponse(body(run.completion()), headers=run.headers)


class Chunks(Protocol):
    """One format's chunks: its first (chat's role chunk; None for none), a text, and the last."""

    def first(self) -> bytes | None: ...

    def text(self, text: str) -> bytes: ...

    def last(self, usage: dict[str, int], bench: dict[str, Any]) -> bytes: ...


async def panel_stream(run: PanelRun, chunks: Chunks) -> AsyncIterator[bytes]:
    """A panel run as OpenAI-style SSE: an error after the first byte is an in-stream
    `{"error": ...}` event, so a client raises instead of hanging."""
    merged = run.ask.merged
    first = chunks.first()
    if first is not None:
        yield first
    if not merged:
        yield chunks.text(reply.header_line(run.facts) + "\n")
    async for event in run.events():
        if isinstance(event, KeepAlive):
            yield KEEP_ALIVE
        elif isinstance(event, SeatFinished):
            if not merged:  # a merged reply streams the merge, not the seats
                yield chunks.text(reply.section(event.seat) + "\n")
        elif isinstance(event, PanelEnded):
            if event.completion is None:
                assert event.error is not None
                yield data(event.error.body())
            else:
                if merged:
                    yield chunks.text(event.completion.text)
                yield chunks.last(event.completion.usage, event.completion.bench)
            yield DONE


def data(payload: dict[str, Any]) -> bytes:
    """One SSE `data:` event of compact JSON."""
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"
