"""OpenAI Responses (`POST /v1/responses`): the request read into an `Ask`, a `PanelRun` rendered
as a `response` object or as its typed event stream, errors as OpenAI's `{"error": {...}}`.

litellm's translator (gateway/upstream/translate/responses.py) reads `input` and `instructions`
as chat messages and writes the completed response; this module refuses first what a panel
cannot honour, so nothing a client asks for is dropped: stored conversations
(`previous_response_id`, `conversation`, `store: true` — the gateway keeps no responses, only
its own records), tools of any kind, file ids, files and audio.

Streaming: `response.created`, `response.in_progress`, the message item and its text part
opened, then an `output_text.delta` per seat in finish order (keep-alive comments while seats
think), the parts closed, and `response.completed` last with the whole response and `bench`.
Every event carries a rising `sequence_number`. When no seat answered: an `error` event, then
`response.failed`. Ids are the panel's: `resp_<panel>`, `msg_<panel>`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import Response

from gateway.errors import GatewayError, render
from gateway.formats.responses.events import Events, response_body
from gateway.formats.sse import reply_to
from gateway.panel import reply
from gateway.panel.run import Completion, KeepAlive, PanelEnded, PanelRun, SeatFinished

KEEP_ALIVE = b": keep-alive\n\n"


# -- read ---------------------------------------------------------------------------------------


# -- render -------------------------------------------------------------------------------------


async def render_run(run: PanelRun) -> Response:
    """The reply to a seated panel: the event stream when asked for, else the response."""

    def body(done: Completion) -> dict[str, Any]:
        return response_body(run.ask, done)

    return await reply_to(run, stream=stream, body=body, error=render_error)


def render_error(error: GatewayError) -> Response:
    return render(error)


async def stream(run: PanelRun) -> AsyncIterator[bytes]:
    events = Events(run)
    merged = run.ask.merged
    for opening in events.opening():
        yield opening
    if not merged:
        yield events.delta(reply.header_line(run.facts) + "\n")
    async for event in run.events():
        if isinstance(event, KeepAlive):
            yield KEEP_ALIVE
        elif isinstance(event, SeatFinished):
            if not merged:  # a merged reply streams the merge, not the seats
                yield events.delta(reply.section(event.seat) + "\n")
        elif isinstance(event, PanelEnded):
            if event.completion is None:
                assert event.error is not None
                for closing in events.failed(event.error):
                    yield closing
            else:
                if merged:
                    yield events.delta(event.completion.text)
                for closing in events.closing(event.completion):
                    yield closing
