"""Anthropic Messages in route mode (gateway/route/start.py): the request (tools, tool_choice,
tool_use and tool_result blocks) is made plain (its hints, betas and system-role messages read
by gateway/formats/anthropic/hints.py), translated to OpenAI chat by litellm's adapter and
passed to one member; its reply comes back as a `message` with text and tool_use blocks, or
streamed as the Messages events (through litellm's stream wrapper), `ping` while the member is
silent, `bench` in `message_delta`, `model` the member that answered (its alias). An error after
the first event is an `event: error`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import Response, StreamingResponse

from gateway.errors import BadRequest, GatewayError, UpstreamError
from gateway.formats.anthropic.hints import plain
from gateway.formats.chat.route import Quiet, with_keepalive
from gateway.replies import JSONResponse
from gateway.request.bounds import whole
from gateway.route.ask import RouteAsk
from gateway.route.turn import RouteTurn
from gateway.upstream.translate.anthropic import events_of, message_of, to_openai_chat

_OURS = ("model", "stream", "bench", "with")


def read_route(body: dict[str, Any], headers: dict[str, str], collection: str) -> RouteAsk:
    if not isinstance(body.get("messages"), list) or not body["messages"]:
        raise BadRequest("`messages` must be a non-empty list.", param="messages")
    max_tokens = whole(body.get("max_tokens"))  # 56.0 is a whole number, as JSON's integer
    if max_tokens is None or max_tokens < 1:
        raise BadRequest("`max_tokens` must be a whole number of at least 1.", param="max_tokens")
    body = {**body, "max_tokens": max_tokens}
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest("`stream` must be true or false.", param="stream")
    read = plain(body, headers)
    wanted = {k: v for k, v in read.body.items() if k not in _OURS and v is not None}
    try:
        request = to_openai_chat({"model": body["model"], **wanted})
    except Exception as exc:  # the adapter's own complaint about a request it cannot read
        raise BadRequest(f"The request cannot be read: {exc}.") from None
    request.pop("model", None)
    return RouteAsk(
        body["model"], collection, request, stream, hints=read.hints, session=read.session
    )


async def render_route(turn: RouteTurn) -> Response:
    if turn.ask.stream:
        headers = {**turn.headers, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(turn), media_type="text/event-stream", headers=headers)
    await turn.finish_plain()
    body = message_of(turn.response)
    body["model"] = turn.alias
    body["bench"] = turn.bench
    return JSONResponse(body, headers=turn.headers)


async def stream(turn: RouteTurn) -> AsyncIterator[bytes]:
    events = events_of(turn.chunks(), turn.alias)
    try:
        async for event in with_keepalive(events, turn.runtime.config.gateway.keepalive_s):
            if isinstance(event, Quiet):
                yield _sse("ping", {"type": "ping"})
                continue
            event = json.loads(json.dumps(event, default=_plain))
            if event.get("type") == "message_delta":
                event["bench"] = turn.bench
            yield _sse(event.get("type", "event"), event)
    except (GatewayError, UpstreamError) as error:
        yield _sse(
            "error", {"type": "error", "error": {"type": "api_error", "message": error.message}}
        )
    except Exception as exc:
        message = str(exc) or type(exc).__name__
        yield _sse("error", {"type": "error", "error": {"type": "api_error", "message": message}})


def _plain(value: Any) -> Any:
    return value.model_dump(exclude_none=True) if hasattr(value, "model_dump") else str(value)


def _sse(kind: str, payload: dict[str, Any]) -> bytes:
    data = json.dumps(payload, separators=(",", ":")).encode()
    return b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n"
