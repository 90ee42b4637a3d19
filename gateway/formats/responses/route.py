"""OpenAI Responses in route mode (gateway/route/start.py): `input` items (function_call and
function_call_output included) and function `tools` become OpenAI chat for one member, and its
reply comes back as a `response` whose `output` holds its message and `function_call` items.

Streamed, the member's pieces are relayed as they come: its text as `response.output_text.delta`
events of a `message` item, each tool call as a `function_call` item whose arguments grow by
`response.function_call_arguments.delta`; a `: keep-alive` comment while the member is silent;
then `response.completed` with the whole response (its items the ones streamed, same ids). An
error after the first piece is an `error` event and `response.failed`, never a completed
response.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import Response, StreamingResponse

from gateway.errors import BadRequest
from gateway.formats.chat.route import Quiet
from gateway.formats.responses import hints
from gateway.replies import JSONResponse
from gateway.route.ask import RouteAsk
from gateway.route.pieces import (
    Arguments,
    Assembly,
    Call,
    CallStarted,
    Piece,
    Text,
    error_text,
)
from gateway.route.turn import RouteTurn
from gateway.upstream.chunks import Chunk
from gateway.upstream.translate import responses as translate

_SAMPLING = {"temperature": "temperature", "top_p": "top_p", "max_output_tokens": "max_tokens",
             "user": "user"}  # fmt: skip


def read_route(body: dict[str, Any], headers: dict[str, str], collection: str) -> RouteAsk:
    input_, instructions = body.get("input"), body.get("instructions")
    if not isinstance(input_, str | list) or not input_:
        raise BadRequest("`input` must be a string or a non-empty list of items.", param="input")
    for field in ("previous_response_id", "conversation", "prompt"):
        if body.get(field) is not None:
            raise BadRequest(
                f"`{field}`: the gateway stores no responses; send the whole conversation in "
                "`input`.",
                param=field,
            )
    try:
        messages = translate.messages_of(input_, instructions)
    except translate.Unreadable as exc:
        raise BadRequest(f"`input` could not be read: {exc}", param="input") from None
    request: dict[str, Any] = {"messages": [_system(m) for m in messages]}
    for theirs, ours in _SAMPLING.items():
        if body.get(theirs) is not None:
            request[ours] = body[theirs]
    found = hints.dropped_items(input_, hints.hints_of(body))
    tools, namespaces, found = hints.tools_of(body.get("tools"), found)
    if tools:
        request["tools"] = tools
        if body.get("tool_choice") is not None:
            request["tool_choice"] = hints.choice_of(body["tool_choice"], namespaces)
    elif body.get("parallel_tool_calls") is not None:  # a provider refuses it without tools
        found = found.withdraw("parallel_tool_calls")
    text = body.get("text")
    if isinstance(text, dict) and (asked := translate.response_format_of(text)) is not None:
        request["response_format"] = asked
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest("`stream` must be true or false.", param="stream")
    echo = {k: body[k] for k in translate.ECHOED if body.get(k) is not None}
    options = {"echo": {**echo, "input": input_}, "namespaces": namespaces}
    session = hints.session_of(body)
    return RouteAsk(body["model"], collection, request, stream, options, found, session)


def _system(message: dict[str, Any]) -> dict[str, Any]:
    """A `developer` message is the system text, in every provider's words."""
    return {**message, "role": "system"} if message.get("role") == "developer" else message


def _body(turn: RouteTurn, chat: dict[str, Any]) -> dict[str, Any]:
    ids = turn.call.replace(".", "_")
    body = translate.response_of(chat, turn.ask.options["echo"], f"resp_{ids}", f"msg_{ids}")
    namespaces: hints.Namespaces = turn.ask.options["namespaces"]
    body["output"] = [namespaces.item(item) for item in body["output"]]
    body["model"] = turn.alias
    body["bench"] = turn.bench
    return body


async def render_route(turn: RouteTurn) -> Response:
    if turn.ask.stream:
        headers = {**turn.headers, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(turn), media_type="text/event-stream", headers=headers)
    await turn.finish_plain()
    return JSONResponse(_body(turn, turn.response.model_dump()), headers=turn.headers)


class Output:
    """A streamed turn's output items, opened as the member's pieces come (its text as a
    `message`, each tool call as a `function_call`), and the numbered events that say so. An
    item is done when the next one opens, or at the end."""

    def __init__(self, turn: RouteTurn) -> None:
        self.ids = turn.call.replace(".", "_")
        self.sequence = 0
        self.items: list[dict[str, Any]] = []
        self.current: int | None = None  # the output index being written
        self.texts: dict[int, list[str]] = {}  # output index -> its text so far
        self.calls: dict[int, Call] = {}  # output index -> the tool call it is
        self.namespaces: hints.Namespaces = turn.ask.options["namespaces"]
        self.opening = {
            "id": f"resp_{self.ids}",
            "object": "response",
            "created_at": int(turn.runtime.clock()),
            "model": turn.alias,
            "status": "in_progress",
            "output": [],
        }

    def event(self, kind: str, **fields: Any) -> bytes:
        payload = {"type": kind, "sequence_number": self.sequence, **fields}
        self.sequence += 1
        return f"event: {kind}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n".encode()

    def relay(self, piece: Piece) -> list[bytes]:
        if isinstance(piece, Arguments):
            index = next(i for i, call in self.calls.items() if call is piece.call)
            where = {"item_id": self.items[index]["id"], "output_index": index}
            kind = "response.function_call_arguments.delta"
            return [self.event(kind, **where, delta=piece.delta)]
        if isinstance(piece, Text) and self.current in self.texts:
            return [self._delta(self.current, piece.text)]
        events = self.close()
        index = self.current = len(self.items)
        if isinstance(piece, CallStarted):
            call = self.calls[index] = piece.call
            item = {"type": "function_call", "id": f"fc_{call.id}", "call_id": call.id}
            item = {**item, "name": call.name, "arguments": "", "status": "in_progress"}
            self.items.append(self.namespaces.item(item))
            events.append(self._added(index))
            return events
        message_id = f"msg_{self.ids}" + (f"_{index}" if index else "")
        item = {"type": "message", "id": message_id, "role": "assistant"}
        self.items.append({**item, "status": "in_progress", "content": []})
        self.texts[index] = []
        events.append(self._added(index))
        kind = "response.content_part.added"
        events.append(self.event(kind, **self._where(index), part=_part("")))
        events.append(self._delta(index, piece.text))
        return events

    def close(self) -> list[bytes]:
        """The events that end the item being written (none when there is none)."""
        index, self.current = self.current, None
        if index is None:
            return []
        item = self.items[index]
        if index in self.texts:
            part = _part("".join(self.texts.pop(index)))
            where = self._where(index)
            events = [
                self.event("response.output_text.done", **where, text=part["text"], logprobs=[]),
                self.event("response.content_part.done", **where, part=part),
            ]
            item.update(status="completed", content=[part])
        else:
            call = self.calls[index]
            item.update(name=call.name, arguments=call.arguments, status="completed")
            item.update(self.namespaces.item(item))
            where = {"item_id": item["id"], "output_index": index}
            kind = "response.function_call_arguments.done"
            events = [self.event(kind, **where, arguments=call.arguments)]
        events.append(self.event("response.output_item.done", output_index=index, item=item))
        return events

    def _added(self, index: int) -> bytes:
        item = self.items[index]
        return self.event("response.output_item.added", output_index=index, item=item)

    def _delta(self, index: int, text: str) -> bytes:
        self.texts[index].append(text)
        kind = "response.output_text.delta"
        return self.event(kind, **self._where(index), delta=text, logprobs=[])

    def _where(self, index: int) -> dict[str, Any]:
        return {"item_id": self.items[index]["id"], "output_index": index, "content_index": 0}


def _part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": []}


async def stream(turn: RouteTurn) -> AsyncIterator[bytes]:
    out = Output(turn)
    yield out.event("response.created", response=out.opening)
    yield out.event("response.in_progress", response=out.opening)
    assembly = Assembly(f"call_{out.ids}")
    chunks: list[Chunk] = []
    try:
        async for chunk in turn.relayed():
            if isinstance(chunk, Quiet):
                yield b": keep-alive\n\n"
                continue
            chunks.append(chunk)
            for piece in assembly.read(chunk):
                for event in out.relay(piece):
                    yield event
        body = _body(turn, translate.assembled(chunks))
    except Exception as exc:  # an upstream failure after the first piece
        message = error_text(turn, exc)
        yield out.event("error", code="server_error", message=message, param=None)
        failed = {**out.opening, "status": "failed"}
        failed["error"] = {"code": "server_error", "message": message}
        yield out.event("response.failed", response=failed)
        return
    for event in out.close():
        yield event
    body["output"] = out.items
    yield out.event("response.completed", response=body)
