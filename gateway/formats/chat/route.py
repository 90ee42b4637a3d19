"""OpenAI chat in route mode (gateway/route/start.py): the request passes on as it is, but for
its hint fields (`reasoning_effort`, `store`, `metadata`, ...), each given to a member whose
provider takes it and otherwise named in `X-Bench-Dropped` (gateway/request/hints.py), as is any
field the gateway does not know; the member's reply comes back as it is, with `model` the
member that answered (its alias) and `bench` added.

Streamed, every chunk the member sends is relayed as it arrives (tool-call deltas included, so
the SDK assembles them as it would from the provider), a `: keep-alive` comment while the member
is silent, then one last chunk with no choices that carries `bench`, then `[DONE]`. An error
after the first chunk is an in-stream `{"error": ...}` event: the client raises, it never takes a
broken-off turn for a whole one.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import Response, StreamingResponse

from gateway.errors import BadRequest, GatewayError
from gateway.replies import JSONResponse
from gateway.request.checks import SAMPLING, one_choice
from gateway.request.hints import CHAT_HINTS, chat_hints
from gateway.route.ask import RouteAsk
from gateway.route.keepalive import Quiet, with_keepalive
from gateway.route.turn import RouteTurn

KEEP_ALIVE = b": keep-alive\n\n"
DONE = b"data: [DONE]\n\n"
# Passed on untouched besides the sampling fields; the hint fields go where they are taken.
PASSED = ("tools", "tool_choice", "functions", "function_call")
_OURS = ("model", "messages", "stream", "stream_options", "bench", "with", "n")
_KNOWN = frozenset({*_OURS, *PASSED, *SAMPLING, *CHAT_HINTS})
# Quiet and with_keepalive serve every route format; they live in gateway/route/keepalive.py.
__all__ = ["Quiet", "read_route", "render_route", "stream", "with_keepalive"]


def read_route(body: dict[str, Any], headers: dict[str, str], collection: str) -> RouteAsk:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("`messages` must be a non-empty list.", param="messages")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise BadRequest(f"`messages[{i}]` must be an object with a role.", param="messages")
    one_choice(body)
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest("`stream` must be true or false.", param="stream")
    request = {k: body[k] for k in (*SAMPLING, *PASSED) if body.get(k) is not None}
    request.pop("reasoning_effort", None)  # a hint, below
    request["messages"] = messages
    options = body.get("stream_options")
    usage = isinstance(options, dict) and bool(options.get("include_usage"))
    hints = chat_hints(body).drop(*(field for field in body if field not in _KNOWN))
    return RouteAsk(body["model"], collection, request, stream, {"include_usage": usage}, hints)


async def render_route(turn: RouteTurn) -> Response:
    if turn.ask.stream:
        headers = {**turn.headers, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(turn), media_type="text/event-stream", headers=headers)
    await turn.finish_plain()
    body = turn.response.model_dump(exclude_none=True)
    body["model"] = turn.alias
    body["bench"] = turn.bench
    return JSONResponse(body, headers=turn.headers)


async def stream(turn: RouteTurn) -> AsyncIterator[bytes]:
    model = turn.alias
    usage_asked = turn.ask.options.get("include_usage", False)
    base: dict[str, Any] = {}
    try:
        async for together in turn.relayed(batched=True):
            if isinstance(together, Quiet):
                yield KEEP_ALIVE
                continue
            events = []
            for chunk in together:  # what one read brought: one write
                payload = chunk.model_dump(exclude_none=True)
                payload["model"] = model
                base = {k: payload[k] for k in ("id", "object", "created", "model") if k in payload}
                if not payload.get("choices") and not usage_asked:
                    continue  # the usage chunk the gateway asked for, not the client
                if not usage_asked:
                    payload.pop("usage", None)
                events.append(_data(payload))
            if events:
                yield b"".join(events)
    except GatewayError as error:
        yield _data(error.body())
        yield DONE
        return
    except Exception as exc:  # an upstream failure after the first chunk
        message = getattr(exc, "message", None) or type(exc).__name__
        yield _data({"error": {"message": message, "type": "upstream_error", "code": 502}})
        yield DONE
        return
    yield _data({**base, "object": "chat.completion.chunk", "choices": [], "bench": turn.bench})
    yield DONE


def _data(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"
