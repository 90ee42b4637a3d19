"""OpenAI legacy completions (`POST /v1/completions`): a `prompt` read as one user message, the
panel rendered as a `text_completion` (or its SSE chunks, then `[DONE]`), errors as OpenAI's.

The fields a panel cannot honour are refused, not dropped: several prompts, `echo`, `suffix`,
`best_of` over 1, `logprobs` and `n` other than 1. `bench` is in the body, and in the last chunk
of a stream with `usage`, as in chat.
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
from gateway.panel import Completion, KeepAlive, PanelEnded, PanelRun, SeatFinished
from gateway.reply import PanelFacts
from gateway.settings import Config

KEEP_ALIVE = b": keep-alive\n\n"
DONE = b"data: [DONE]\n\n"


# -- read ---------------------------------------------------------------------------------------


def check(body: dict[str, Any], settings: GatewaySettings) -> dict[str, Any]:
    """A parsed completions body, checked, as the fields a panel reads, each bounded (the
    prompt as one chat message, the sampling through the checks chat's get). Pure, so it may
    run in the body reader's child process (gateway/bodies.py)."""
    model = body.get("model")
    collection_named(model)
    prompt = _prompt(body.get("prompt"))
    one_choice(body)
    if body.get("echo"):
        raise BadRequest(
            "`echo` cannot be honoured: a panel's text is not a continuation.", param="echo"
        )
    if body.get("suffix"):
        raise BadRequest("`suffix` (insertion) cannot be honoured on a panel.", param="suffix")
    best_of = body.get("best_of")
    if best_of is not None and (isinstance(best_of, bool) or best_of != 1):
        raise BadRequest(
            "`best_of` must be 1 on a panel: every seat's answer is shown.", param="best_of"
        )
    if body.get("logprobs") is not None:
        raise BadRequest("`logprobs` cannot be honoured on a panel.", param="logprobs")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest("`stream` must be true or false.", param="stream")
    return {
        "model": model,
        "messages": chat_messages([{"role": "user", "content": prompt}], settings.max_messages),
        "sampling": sampling_of(body),
        "stream": stream,
        "with": nominees_of(body.get("with"), None),
        "reply": reply_asked(body.get("bench")),
    }


def read(body: dict[str, Any], headers: dict[str, str], config: Config) -> Ask:
    """A checked completions body (and the X-Panel-* headers, lower-cased) as an Ask."""
    model = body["model"]
    collection, merged_by_name = collection_named(model)
    return Ask.of(
        requested_model=model,
        collection=collection,
        shape=shape_asked(headers, collection, config),
        nominees=nominees_of(list(body["with"]), headers.get("x-panel-with")),
        messages=body["messages"],
        sampling=body["sampling"],
        stream=body["stream"],
        merged=merged_by_name or reply_merged(body["reply"], collection, config),
    )


def _prompt(prompt: Any) -> str:
    """A string, or a list of exactly one string (several prompts would be several panels)."""
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise BadRequest(
            "`prompt` must be a string (or a list of one string): one prompt is one panel.",
            param="prompt",
        )
    return prompt


# -- render -------------------------------------------------------------------------------------


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


async def stream(run: PanelRun) -> AsyncIterator[bytes]:
    chunk = _Chunks(run.facts)
    merged = run.ask.merged
    if not merged:
        yield chunk.text(reply.header_line(run.facts) + "\n")
    async for event in run.events():
        if isinstance(event, KeepAlive):
            yield KEEP_ALIVE
        elif isinstance(event, SeatFinished):
            if not merged:  # a merged reply streams the merge, not the seats
                yield chunk.text(reply.section(event.seat) + "\n")
        elif isinstance(event, PanelEnded):
            if event.completion is None:
                assert event.error is not None
                yield _data(event.error.body())
            else:
                if merged:
                    yield chunk.text(event.completion.text)
                yield chunk.last(event.completion.usage, event.completion.bench)
            yield DONE


class _Chunks:
    def __init__(self, facts: PanelFacts) -> None:
        self.base = {
            "id": f"cmpl-{facts.panel_id}",
            "object": "text_completion",
            "created": int(facts.created),
            "model": facts.requested_model,
        }

    def text(self, text: str) -> bytes:
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": None}
        return _data({**self.base, "choices": [choice]})

    def last(self, usage: dict[str, int], bench: dict[str, Any]) -> bytes:
        choice = {"index": 0, "text": "", "logprobs": None, "finish_reason": "stop"}
        return _data({**self.base, "choices": [choice], "usage": usage, "bench": bench})


def _data(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"
