"""Anthropic Messages: reading `/v1/messages` into an `Ask`, rendering a `PanelRun` as a
`message` or as its event stream, and errors as `{"type": "error", "error": {...}}`.

Read: the body is checked field by field (a field the gateway cannot honour is a 400 that says
so, never dropped), then translated by litellm's adapter (gateway/upstream/translate) into
OpenAI chat messages and sampling, which go through the same shared checks as a chat request.
Tools, tool use and tool results are route mode's (`:route`), not a panel's. `cache_control`
(top-level or on a block) is accepted and has no effect: a caching hint changes no answer.

Render: one text block holding the panel's markdown, `stop_reason: end_turn`, and `bench` in the
body. Streamed: `message_start`, `content_block_start`, one `text_delta` for the header and one
per seat's section the moment that seat finishes, `ping` while seats think, then
`content_block_stop`, `message_delta` (stop reason, usage and `bench`) and `message_stop`. An
error after the first byte is an `event: error`, so the SDK raises instead of hanging.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import Response

from gateway.errors import GatewayError
from gateway.formats.sse import reply_to
from gateway.panel import reply
from gateway.panel.run import Completion, KeepAlive, PanelEnded, PanelRun, SeatFinished
from gateway.replies import JSONResponse

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    413: "request_too_large",
    415: "invalid_request_error",
    429: "rate_limit_error",
    503: "overloaded_error",
}


# -- read ---------------------------------------------------------------------------------------


# -- render -------------------------------------------------------------------------------------


async def render_run(run: PanelRun) -> Response:
    """The reply to a seated panel: the event stream when asked for, else the message."""
    return await reply_to(run, stream=stream, body=message_body, error=render_error)


def error_body(error: GatewayError) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(error.status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": error.message}, **error.extra}


def render_error(error: GatewayError) -> Response:
    return JSONResponse(error_body(error), status_code=error.status, headers=error.headers)


def _usage(usage: dict[str, int]) -> dict[str, int]:
    return {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"]}


def _message(panel_id: str, model: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": f"msg_{panel_id}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }


def message_body(done: Completion) -> dict[str, Any]:
    body = _message(done.panel_id, done.model, [{"type": "text", "text": done.text}])
    return {**body, "stop_reason": "end_turn", "usage": _usage(done.usage), "bench": done.bench}


async def stream(run: PanelRun) -> AsyncIterator[bytes]:
    facts, merged = run.facts, run.ask.merged
    yield _event("message_start", message=_message(facts.panel_id, facts.requested_model, []))
    block = {"type": "text", "text": ""}
    yield _event("content_block_start", index=0, content_block=block)
    if not merged:
        yield _text(reply.header_line(facts) + "\n")
    async for event in run.events():
        if isinstance(event, KeepAlive):
            yield _event("ping")
        elif isinstance(event, SeatFinished):
            if not merged:  # a merged reply streams the merge, not the seats
                yield _text(reply.section(event.seat) + "\n")
        elif isinstance(event, PanelEnded):
            done = event.completion
            if done is None:
                assert event.error is not None
                yield _sse("error", error_body(event.error))
                return
            if merged:
                yield _text(done.text)
            yield _event("content_block_stop", index=0)
            delta = {"stop_reason": "end_turn", "stop_sequence": None}
            yield _event("message_delta", delta=delta, usage=_usage(done.usage), bench=done.bench)
            yield _event("message_stop")


def _text(text: str) -> bytes:
    return _event("content_block_delta", index=0, delta={"type": "text_delta", "text": text})


def _event(kind: str, **fields: Any) -> bytes:
    return _sse(kind, {"type": kind, **fields})


def _sse(kind: str, payload: dict[str, Any]) -> bytes:
    data = json.dumps(payload, separators=(",", ":")).encode()
    return b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n"
