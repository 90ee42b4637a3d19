"""Ollama's `/api/chat` in route mode (gateway/route/start.py): `tools` pass on as they are
(Ollama's tools are OpenAI's), an assistant message's `tool_calls` and each `tool` message
become OpenAI chat's, and the member's reply comes back as Ollama's `message` with its `tool_calls`.

Ollama's tool calls carry no ids, and its client drops any it is given, so a `tool` message is
paired with the call it answers here: by `tool_call_id` when a client sends one, else the first
unanswered call of its `tool_name`, else the first unanswered call. The calls get ids from their
place in the conversation (`call_<message>_<call>`), the same every turn as the agent resends
its history. A call left unanswered before the next message is refused (OpenAI would refuse it
upstream, as a member's failure).

Streamed (NDJSON, as Ollama streams unless `"stream": false`): a line per text delta as the
member sends it, one line with the whole tool calls (Ollama sends calls whole, never in pieces),
then the `done` line with `bench`; an empty line while the member is silent; after the first
line an error is an `{"error": ...}` line, which the client raises.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from ollama import ChatResponse, Message
from starlette.responses import Response, StreamingResponse

from gateway.errors import BadRequest
from gateway.formats.chat.route import Quiet
from gateway.formats.ollama.read import checked_messages, sampling_fields, with_images
from gateway.formats.ollama.render import NDJSON, iso
from gateway.request.checks import sampling_of
from gateway.route.ask import RouteAsk
from gateway.route.pieces import Assembly, Call, Text, error_text, tokens_of
from gateway.route.turn import RouteTurn

_FIELDS = frozenset({"model", "messages", "tools", "format", "options", "stream", "keep_alive",
                     "think", "bench"})  # fmt: skip
_MESSAGE_FIELDS = frozenset({"role", "content", "images", "thinking", "tool_calls", "tool_name",
                             "tool_call_id"})  # fmt: skip
_ROLES = ("system", "user", "assistant", "tool")
_WHY = {
    "with": "a route turn goes to one member, not to nominated seats",
    "logprobs": "a member's log probabilities cannot be passed back in Ollama's shape",
    "top_logprobs": "a member's log probabilities cannot be passed back in Ollama's shape",
}


# -- read ---------------------------------------------------------------------------------------


def read_route(
    body: dict[str, Any], headers: dict[str, str], collection: str, kind: str
) -> RouteAsk:
    if kind != "chat":
        raise BadRequest(
            "Route mode is on /api/chat: /api/generate carries no tools or tool results; send "
            "the prompt as a user message to /api/chat.",
            param="model",
        )
    for name in body:
        if name not in _FIELDS:
            why = _WHY.get(name, "it is not a field of /api/chat")
            raise BadRequest(f"`{name}` cannot be used in route mode: {why}.", param=name)
    if body.get("think") not in (None, False):
        raise BadRequest("`think`: a member's thinking cannot be passed back.", param="think")
    stream = body.get("stream", True)
    if not isinstance(stream, bool):
        raise BadRequest("`stream` must be true or false.", param="stream")
    keep_alive = body.get("keep_alive")  # a local runtime's setting: nothing to keep alive
    if keep_alive is not None and not isinstance(keep_alive, str | int | float):
        raise BadRequest("`keep_alive` must be a duration or a number.", param="keep_alive")
    request = sampling_of(sampling_fields(body.get("options"), body.get("format")))
    request["messages"] = _messages(body.get("messages"))
    tools = _tools(body.get("tools"))
    if tools:
        request["tools"] = tools
    return RouteAsk(body["model"], collection, request, stream)


def _messages(messages: Any) -> list[dict[str, Any]]:
    converted: list[dict[str, Any]] = []
    pending: list[tuple[str, str]] = []  # (id, name) of the calls not yet answered
    for i, (where, message) in enumerate(checked_messages(messages, _MESSAGE_FIELDS)):
        role, content = message.get("role"), message.get("content") or ""
        if role not in _ROLES:
            raise BadRequest(f"`{where}.role` must be one of {', '.join(_ROLES)}.", param=where)
        if not isinstance(content, str):
            raise BadRequest(f"`{where}.content` must be a string.", param=where)
        if role == "tool":
            if message.get("images") or message.get("tool_calls"):
                raise BadRequest(f"`{where}`: a tool result takes text only.", param=where)
            answered = _answered(pending, message, where)
            converted.append({"role": "tool", "tool_call_id": answered, "content": content})
            continue
        if pending:
            call_id, name = pending[0]
            raise BadRequest(
                f"`{where}`: the tool call {name!r} ({call_id}) before it has no result; send a "
                "`tool` message for each call first.",
                param=where,
            )
        if message.get("tool_name") is not None or message.get("tool_call_id") is not None:
            raise BadRequest(f"`{where}`: only a `tool` message names a tool.", param=where)
        entry: dict[str, Any] = {
            "role": role,
            "content": with_images(content, message.get("images"), f"{where}.images"),
        }
        calls = message.get("tool_calls")
        if calls:
            if role != "assistant" or not isinstance(calls, list):
                raise BadRequest(f"`{where}.tool_calls`: an assistant's list.", param=where)
            entry["tool_calls"] = [
                _call(call, f"{where}.tool_calls[{j}]", f"call_{i}_{j}")
                for j, call in enumerate(calls)
            ]
            entry["content"] = entry["content"] or None
            pending = [(c["id"], c["function"]["name"]) for c in entry["tool_calls"]]
        converted.append(entry)
    return converted


def _call(call: Any, where: str, default_id: str) -> dict[str, Any]:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise BadRequest(f"`{where}` must be an object with a function and its name.", param=where)
    arguments = function.get("arguments", {})
    if not isinstance(arguments, dict):
        raise BadRequest(f"`{where}.function.arguments` must be an object.", param=where)
    given = call.get("id")
    return {
        "id": given if isinstance(given, str) and given else default_id,
        "type": "function",
        "function": {"name": function["name"], "arguments": json.dumps(arguments)},
    }


def _answered(pending: list[tuple[str, str]], message: dict[str, Any], where: str) -> str:
    """The id of the call a `tool` message answers (taken off *pending*)."""
    by_id, by_name = message.get("tool_call_id"), message.get("tool_name")
    for field, value in (("tool_call_id", by_id), ("tool_name", by_name)):
        if value is not None and not isinstance(value, str):
            raise BadRequest(f"`{where}.{field}` must be a string.", param=where)
    for k, (call_id, name) in enumerate(pending):
        if call_id == by_id or (by_id is None and by_name in (None, name)):
            del pending[k]
            return call_id
    named = f" {by_name!r}" if by_name else ""
    raise BadRequest(
        f"`{where}` is a tool result that answers no tool call{named} of the assistant message "
        "before it.",
        param=where,
    )


def _tools(tools: Any) -> list[dict[str, Any]]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise BadRequest("`tools` must be a list.", param="tools")
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if (
            not isinstance(function, dict)
            or tool.get("type", "function") != "function"
            or not isinstance(function.get("name"), str)
            or not isinstance(function.get("parameters", {}), dict)
        ):
            raise BadRequest(
                f"`tools[{i}]` must be a function tool with a name (and its parameters an object).",
                param=f"tools[{i}]",
            )
    return [{**tool, "type": "function"} for tool in tools]


# -- render -------------------------------------------------------------------------------------


async def render_route(turn: RouteTurn) -> Response:
    if turn.ask.stream:
        return StreamingResponse(stream(turn), media_type=NDJSON, headers=turn.headers)
    await turn.finish_plain()
    choice = turn.response.choices[0]
    message = choice.message
    calls = [
        Call(i, c.id, c.function.name or "", c.function.arguments or "")
        for i, c in enumerate(getattr(message, "tool_calls", None) or [])
    ]
    usage = tokens_of(getattr(turn.response, "usage", None))
    line = _line(turn, message.content or "", calls, done=(choice.finish_reason, usage))
    return Response(line, media_type="application/json", headers=turn.headers)


async def stream(turn: RouteTurn) -> AsyncIterator[bytes]:
    assembly = Assembly(f"call_{turn.call.replace('.', '_')}")
    try:
        async for together in turn.relayed(batched=True):
            if isinstance(together, Quiet):
                yield _line(turn, "")
                continue
            lines = [  # what one read from the member brought: one write
                _line(turn, piece.text)
                for chunk in together
                for piece in assembly.read(chunk)
                if isinstance(piece, Text)
            ]
            if lines:
                yield b"".join(lines)
    except Exception as exc:  # an upstream failure after the first line
        yield json.dumps({"error": error_text(turn, exc)}).encode() + b"\n"
        return
    if assembly.calls:
        yield _line(turn, "", assembly.whole_calls())
    usage = tokens_of(assembly.usage)
    yield _line(turn, "", done=(assembly.finish_reason, usage))


def _line(
    turn: RouteTurn,
    text: str,
    calls: list[Call] | None = None,
    *,
    done: tuple[str | None, tuple[int, int]] | None = None,
) -> bytes:
    """One reply object in the `ollama` package's type; the `done` one carries `bench`."""
    fields: dict[str, Any] = {
        "model": turn.alias,
        "created_at": iso(turn.runtime.clock()),
        "done": done is not None,
    }
    if done is not None:
        reason, (prompt, completion) = done
        fields.update(
            done_reason="length" if reason == "length" else "stop",
            total_duration=max(0, int((time.monotonic() - turn.began) * 1e9)),
            load_duration=0,
            prompt_eval_count=prompt,
            eval_count=completion,
        )
    tool_calls = [
        Message.ToolCall(function=Message.ToolCall.Function(name=c.name, arguments=c.args()))
        for c in calls or ()
    ]
    message = Message(role="assistant", content=text, tool_calls=tool_calls or None)
    typed = ChatResponse(message=message, **fields).model_dump(mode="json", exclude_none=True)
    if done is not None:
        typed["bench"] = turn.bench
    return json.dumps(typed, separators=(",", ":")).encode() + b"\n"
