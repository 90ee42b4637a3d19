"""OpenAI legacy completions (`POST /v1/completions`): a `prompt` read as one user message, the
panel rendered as a `text_completion` (or its SSE chunks, then `[DONE]`), errors as OpenAI's.

The fields a panel cannot honour are refused, not dropped: several prompts, `echo`, `suffix`,
`best_of` over 1, `logprobs` and `n` other than 1. `bench` is in the body, and in the last chunk
of a stream with `usage`, as in chat.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import Response

from gateway.errors import GatewayError, render
from gateway.formats.sse import data, panel_stream, reply_to
from gateway.panel.reply import PanelFacts
from gateway.panel.run import Completion, PanelRun
from gateway.route.turn import RouteTurn


async def render_run(run: PanelRun) -> Response:
    """The reply to a seated panel: the SSE stream when asked for, else the completion."""
    return await reply_to(run, stream=stream, body=completion_body, error=render_error)


def render_error(error: GatewayError) -> Response:
    return render(error)


def completion_body(done: Completion) -> dict[str, Any]:
    return {
        "id": f"cmpl-{done.panel_id}",
        "object": "text_completion",
        "created": int(done.created),
        "model": done.model,
        "choices": [{"index": 0, "text": done.text, "logprobs": None, "finish_reason": "stop"}],
        "usage": done.usage,
        "bench": done.bench,
    }


def stream(run: PanelRun) -> AsyncIterator[bytes]:
    return panel_stream(run, _Chunks(run.facts))


class _Chunks:
    def __init__(self, facts: PanelFacts) -> None:
        self.base = {
            "id": f"cmpl-{facts.panel_id}",
            "object": "text_completion",
            "created": int(facts.created),
            "model": facts.requested_model,
        }

    def first(self) -> None:
        return None  # a text completion has no role chunk

    def text(self, text: str) -> bytes:
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": None}
        return data({**self.base, "choices": [choice]})

    def last(self, usage: dict[str, int], bench: dict[str, Any]) -> bytes:
        choice = {"index": 0, "text": "", "logprobs": None, "finish_reason": "stop"}
        return data({**self.base, "choices": [choice], "usage": usage, "bench": bench})


async def render_route(turn: RouteTurn) -> Response:
    """Never reached: `read_route` refuses route mode in this format."""
    raise AssertionError("legacy completions carry no route turn")
