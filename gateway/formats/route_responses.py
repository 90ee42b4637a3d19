"""OpenAI Responses in route mode (gateway/route.py): `input` items (function_call and
function_call_output included) and function `tools` become OpenAI chat for one member, and its
reply comes back as a `response` whose `output` holds its message and `function_call` items.

Streamed, the events are sent once the member's reply is whole (`response.created` first, a
`: keep-alive` comment while it works): the text is not yet relayed piece by piece in this
format. An error after `response.created` is an `error` event and `response.failed`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import JSONResponse, Response, StreamingResponse

from gateway.errors import BadRequest
from gateway.formats.route_chat import Quiet, with_keepalive
from gateway.route import RouteAsk, RouteTurn
from gateway.upstream.translate import responses as translate

_SAMPLING = {"temperature": "temperature", "top_p": "top_p", "max_output_tokens": "max_tokens",
             "user": "user", "parallel_tool_calls": "parallel_tool_calls"}  # fmt: skip


def read_route(body: dict[str, Any], collection: str) -> RouteAsk:
    input_, instructions = body.get("input"), body.get("instructions")
    if not isinstance(input_, str | list) or not input_:
        raise BadRequest("`input` must be a string or a non-empty list of items.", param="input")
    if body.get("previous_response_id") is not None:
        raise BadRequest("`previous_response_id`: the gateway stores no responses.")
    try:
        messages = translate.messages_of(input_, instructions)
    except translate.Unreadable as exc:
        raise BadRequest(f"`input` could not be read: {exc}", param="input") from None
    request: dict[str, Any] = {"messages": messages}
    for theirs, ours in _SAMPLING.items():
        if body.get(theirs) is not None:
            request[ours] = body[theirs]
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        raise BadRequest("`tools` must be a list.", param="tools")
    if tools:
        request["tools"] = [_tool(tool, i) for i, tool in enumerate(tools)]
    if body.get("tool_choice") is not None:
        request["tool_choice"] = _choice(body["tool_choice"])
    text = body.get("text")
    if isinstance(text, dict) and (asked := translate.response_format_of(text)) is not None:
        request["response_format"] = asked
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest("`stream` must be true or false.", param="stream")
    echo = {k: body[k] for k in translate.ECHOED if body.get(k) is not None}
    return RouteAsk(body["model"], collection, request, stream, {"echo": {**echo, "input": input_}})


def _tool(tool: Any, i: int) -> dict[str, Any]:
    if not isinstance(tool, dict) or tool.get("type") != "function" or "name" not in tool:
        raise BadRequest(
            f"`tools[{i}]` must be a function tool; hosted tools cannot run through the gateway.",
            param=f"tools[{i}]",
        )
    function = {k: tool[k] for k in ("name", "description", "parameters", "strict") if k in tool}
    return {"type": "function", "function": function}


def _choice(choice: Any) -> Any:
    if isinstance(choice, dict) and choice.get("type") == "function":
        return {"type": "function", "function": {"name": choice.get("name")}}
    return choice


def _body(turn: RouteTurn, chat: dict[str, Any]) -> dict[str, Any]:
    ids = turn.call.replace(".", "_")
    body = translate.response_of(chat, turn.ask.options["echo"], f"resp_{ids}", f"msg_{ids}")
    body["model"] = turn.ask.requested_model
    body["bench"] = turn.bench
    return body


async def render_route(turn: RouteTurn) -> Response:
    if turn.ask.stream:
        headers = {**turn.headers, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(turn), media_type="text/event-stream", headers=headers)
    await turn.finish_plain()
    return JSONResponse(_body(turn, turn.response.model_dump()), headers=turn.headers)


async def stream(turn: RouteTurn) -> AsyncIterator[bytes]:
    sequence = iter(range(1_000_000))

    def event(kind: str, **fields: Any) -> bytes:
        payload = {"type": kind, "sequence_number": next(sequence), **fields}
        return f"event: {kind}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n".encode()

    ids = turn.call.replace(".", "_")
    opening = {"id": f"resp_{ids}", "object": "response", "model": turn.ask.requested_model,
               "status": "in_progress", "output": [], "created_at": 0}  # fmt: skip
    yield event("response.created", response=opening)
    chunks: list[Any] = []
    try:
        async for chunk in with_keepalive(turn.chunks(), turn.runtime.config.gateway.keepalive_s):
            if isinstance(chunk, Quiet):
                yield b": keep-alive\n\n"
            else:
                chunks.append(chunk)
        body = _body(turn, translate.assembled(chunks))
    except Exception as exc:
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        yield event("error", code="server_error", message=message, param=None)
        failed = {
            **opening,
            "status": "failed",
            "error": {"code": "server_error", "message": message},
        }
        yield event("response.failed", response=failed)
        return
    for index, item in enumerate(body["output"]):
        yield event("response.output_item.added", output_index=index, item=item)
        yield event("response.output_item.done", output_index=index, item=item)
    yield event("response.completed", response=body)
