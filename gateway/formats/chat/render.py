"""OpenAI chat completions, rendered: a `PanelRun` as a `chat.completion` or as its chunk stream
(through the stream writer chat shares with legacy completions, formats/sse.py), and errors as
OpenAI's `{"error": {...}}`.

Streaming: the 200 and a first chunk go out as soon as the panel is seated; then a header chunk;
then one content chunk per seat in finish order; keep-alive comments while seats think; a last
chunk with `finish_reason`, `usage` and the whole `bench`; then `[DONE]`. An error after the
first byte is an in-stream `{"error": ...}` event, so a client raises instead of hanging. A
client that hangs up stops the stream, not the seats (the panel is the app's task).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import Response

from gateway.errors import GatewayError, render
from gateway.formats.sse import data, panel_stream, reply_to
from gateway.panel.reply import PanelFacts
from gateway.panel.run import Completion, PanelRun


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


def stream(run: PanelRun) -> AsyncIterator[bytes]:
    return panel_stream(run, _Chunks(run.facts))


class _Chunks:
    def __init__(self, facts: PanelFacts) -> None:
        self.base = {
            "id": f"chatcmpl-{facts.panel_id}",
            "object": "chat.completion.chunk",
            "created": int(facts.created),
            "model": facts.requested_model,
        }

    def first(self) -> bytes:
        return self._delta({"role": "assistant", "content": ""})

    def text(self, text: str) -> bytes:
        return self._delta({"content": text})

    def _delta(self, delta: dict[str, Any]) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": None}
        return data({**self.base, "choices": [choice]})

    def last(self, usage: dict[str, int], bench: dict[str, Any]) -> bytes:
        choice = {"index": 0, "delta": {}, "finish_reason": "stop"}
        return data({**self.base, "choices": [choice], "usage": usage, "bench": bench})
