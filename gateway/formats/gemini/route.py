"""Gemini's `generateContent` and `streamGenerateContent` in route mode (gateway/route/start.py):
`functionDeclarations` become the member's tools, `toolConfig` its tool choice, `functionCall`
and `functionResponse` parts its tool calls and results (through litellm's adapter,
gateway/upstream/translate/gemini.py), and the member's reply comes back as a candidate whose
parts hold its text and its `functionCall`s, each with the member's call id.

Gemini clients may send function calls and responses without ids (google-genai's automatic
function calling does), so every call gets one here: its own when it has one, else one from its
place (`call_<content>_<part>`); a response answers the call of the content just before it
with its id, else the first unanswered one of its name. A call left unanswered, or a response
that answers nothing, is refused: OpenAI would refuse it upstream, as a member's failure.

Streamed, text is relayed as the member sends it and the calls come whole in the last chunk
(Gemini sends a call whole, never in pieces), with `finishReason` and `usageMetadata`; an empty
text chunk while the member is silent; after the first chunk an error is an `{"error": ...}`
element, which the client raises. Gemini has no place for `bench`: it is in the headers
(`X-Bench-Conversation`, `X-Bench-Model`), and `responseId` is the turn's call, to judge.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import Response

from gateway.errors import BadRequest, PanelFailed
from gateway.formats.chat.route import Quiet
from gateway.formats.gemini.hints import camel_keys, model_parts, safety_hints
from gateway.formats.gemini.read import (
    generation_config,
    inline_image,
    system_text,
    with_config,
)
from gateway.formats.gemini.render import error_body, streamed
from gateway.formats.gemini.tools import tool_choice, tools_of
from gateway.replies import JSONResponse
from gateway.request.checks import sampling_of
from gateway.request.hints import Hints, joined
from gateway.route.ask import RouteAsk
from gateway.route.pieces import Assembly, Text, args_of, error_text, tokens_of
from gateway.route.turn import RouteTurn
from gateway.upstream.translate.gemini import to_chat

_FIELDS = frozenset(
    {"contents", "systemInstruction", "generationConfig", "tools", "toolConfig", "bench",
     "safetySettings"}
)  # fmt: skip
_REFUSED = {
    "cachedContent": "cached content is stored with Google; send the contents themselves",
}
_FINISH = {"length": "MAX_TOKENS", "content_filter": "SAFETY"}  # else STOP, as Gemini ends calls


# -- read ---------------------------------------------------------------------------------------


def read_route(
    body: dict[str, Any], headers: dict[str, str], collection: str, model: str, *, stream: bool
) -> RouteAsk:
    body = camel_keys(body)
    for name in body:
        if name in _REFUSED:
            raise BadRequest(f"`{name}`: {_REFUSED[name]}.", param=name)
    found = safety_hints(body.get("safetySettings"), Hints())
    found = found.drop(*(name for name in body if name not in _FIELDS))
    contents, ids = _contents(body.get("contents"))
    system = system_text(body.get("systemInstruction"))
    config, config_found = generation_config(body.get("generationConfig"))
    tools, hosted = tools_of(body.get("tools"))
    choice, tools = tool_choice(body.get("toolConfig"), tools)
    try:
        translated = to_chat(contents, system, config, tools=tools, call_ids=ids)
    except ValueError as exc:
        raise BadRequest(f"`contents` could not be read: {exc}.", param="contents") from None
    with_config(translated, config)
    request = {**sampling_of(translated), "messages": translated["messages"]}
    if translated.get("tools"):
        request["tools"] = translated["tools"]
        if choice is not None:
            request["tool_choice"] = choice
    found = joined(found.drop(*hosted), config_found)
    return RouteAsk(model, collection, request, stream, hints=found)


def _contents(contents: Any) -> tuple[list[dict[str, Any]], tuple[list[str], list[str]]]:
    """The contents checked and cleaned for the adapter, and the ids of every functionCall and
    every functionResponse part in order."""
    if isinstance(contents, dict):
        contents = [contents]
    if not isinstance(contents, list) or not contents:
        raise BadRequest("`contents` must be a non-empty list.", param="contents")
    cleaned: list[dict[str, Any]] = []
    calls: list[str] = []
    responses: list[str] = []
    pending: list[tuple[str, str]] = []  # the calls of the content before: answer them here
    for i, content in enumerate(contents):
        where = f"contents[{i}]"
        if not isinstance(content, dict):
            raise BadRequest(f"`{where}` must be an object.", param=where)
        content = camel_keys(content)
        if set(content) - {"role", "parts"}:
            raise BadRequest(f"`{where}` takes only role and parts.", param=where)
        role = content.get("role", "user")
        if role not in ("user", "model"):
            raise BadRequest(f"`{where}.role` must be user or model.", param=f"{where}.role")
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            raise BadRequest(f"`{where}.parts` must be a non-empty list.", param=where)
        parts = model_parts(parts)
        if not parts:
            continue  # a turn of thoughts only: nothing a member reads
        waiting, pending = pending, []
        kept = []
        for j, part in enumerate(parts):
            here = f"{where}.parts[{j}]"
            part = camel_keys(part) if isinstance(part, dict) else part
            kind = next(iter(part)) if isinstance(part, dict) and len(part) == 1 else None
            if kind == "text" and isinstance(part["text"], str):
                kept.append(part)
            elif kind == "inlineData":
                inline_image(part["inlineData"], f"{here}.inlineData")
                kept.append(part)
            elif kind == "functionCall" and role == "model":
                call_id, call = _call(part["functionCall"], here, f"call_{i}_{j}")
                calls.append(call_id)
                pending.append((call_id, call["name"]))
                kept.append({"functionCall": call})
            elif kind == "functionResponse" and role == "user":
                response_id, response = _response(part["functionResponse"], here, waiting)
                responses.append(response_id)
                kept.append({"functionResponse": response})
            else:
                raise BadRequest(f"`{here}`: {_why_not(kind, role)}.", param=here)
        if waiting:
            call_id, name = waiting[0]
            raise BadRequest(
                f"`contents[{i - 1}]`: the functionCall {name!r} ({call_id}) has no "
                f"functionResponse in `{where}`; answer every call in the next user content.",
                param=where,
            )
        cleaned.append({"role": role, "parts": kept})
    return cleaned, (calls, responses)


def _why_not(kind: str | None, role: str) -> str:
    if kind == "functionCall":
        return "a functionCall is the model's: it belongs in a content whose role is model"
    if kind == "functionResponse":
        return "a functionResponse belongs in a content whose role is user"
    if kind == "fileData":
        return "uploaded files cannot reach a member; send the image bytes as inlineData"
    if kind in ("executableCode", "codeExecutionResult"):
        return "code execution is a Gemini tool that runs on Google's side"
    return (
        "a part must be exactly one of text, inlineData (an image), functionCall or "
        "functionResponse"
    )


def _call(value: Any, where: str, default_id: str) -> tuple[str, dict[str, Any]]:
    call = camel_keys(value) if isinstance(value, dict) else None
    if call is None or set(call) - {"id", "name", "args"}:
        raise BadRequest(f"`{where}.functionCall` takes id, name and args.", param=where)
    name, args, given = call.get("name"), call.get("args", {}), call.get("id")
    if not isinstance(name, str) or not name:
        raise BadRequest(f"`{where}.functionCall.name` must be a name.", param=where)
    if not isinstance(args, dict):
        raise BadRequest(f"`{where}.functionCall.args` must be an object.", param=where)
    if given is not None and (not isinstance(given, str) or not given):
        raise BadRequest(f"`{where}.functionCall.id` must be a string.", param=where)
    return given or default_id, {"name": name, "args": args}


def _response(value: Any, where: str, waiting: list[tuple[str, str]]) -> tuple[str, dict[str, Any]]:
    """The id of the call a functionResponse answers (taken off *waiting*), and the part."""
    response = camel_keys(value) if isinstance(value, dict) else None
    if response is None:
        raise BadRequest(f"`{where}.functionResponse` must be an object.", param=where)
    for field in response:
        if field not in ("id", "name", "response"):
            raise BadRequest(
                f"`{where}.functionResponse.{field}` cannot be passed on to a member; a function's "
                "response is its name and a `response` object.",
                param=where,
            )
    name, result, given = response.get("name"), response.get("response"), response.get("id")
    if not isinstance(name, str) or not name:
        raise BadRequest(f"`{where}.functionResponse.name` must be a name.", param=where)
    if not isinstance(result, dict):
        raise BadRequest(f"`{where}.functionResponse.response` must be an object.", param=where)
    if given is not None and not isinstance(given, str):
        raise BadRequest(f"`{where}.functionResponse.id` must be a string.", param=where)
    for k, (call_id, called) in enumerate(waiting):
        if call_id == given or (given is None and called == name):
            del waiting[k]
            return call_id, {"name": name, "response": result}
    raise BadRequest(
        f"`{where}`: the functionResponse for {name!r} answers no functionCall of the model's "
        "content just before it.",
        param=where,
    )


# -- render -------------------------------------------------------------------------------------


async def render_route(turn: RouteTurn, *, sse: bool) -> Response:
    if turn.ask.stream:
        return streamed(_pieces(turn), sse=sse, headers=turn.headers)
    await turn.finish_plain()
    choice = turn.response.choices[0]
    message = choice.message
    parts: list[dict[str, Any]] = [{"text": message.content}] if message.content else []
    for call in getattr(message, "tool_calls", None) or []:
        parts.append(_call_part(call.id, call.function.name, call.function.arguments))
    usage = tokens_of(getattr(turn.response, "usage", None))
    body = _chunk(turn, parts, end=(choice.finish_reason, usage))
    return JSONResponse(body, headers=turn.headers)


async def _pieces(turn: RouteTurn) -> AsyncIterator[dict[str, Any]]:
    assembly = Assembly(f"call_{turn.call.replace('.', '_')}")
    try:
        async for chunk in turn.relayed():
            if isinstance(chunk, Quiet):
                yield _chunk(turn, [])
                continue
            for piece in assembly.read(chunk):
                if isinstance(piece, Text):
                    yield _chunk(turn, [{"text": piece.text}])
    except Exception as exc:  # an upstream failure after the first chunk
        yield error_body(PanelFailed(error_text(turn, exc)))
        return
    calls = [_call_part(c.id, c.name, c.arguments) for c in assembly.whole_calls()]
    yield _chunk(turn, calls, end=(assembly.finish_reason, tokens_of(assembly.usage)))


def _call_part(call_id: str, name: str | None, arguments: str | None) -> dict[str, Any]:
    return {"functionCall": {"id": call_id, "name": name or "", "args": args_of(arguments)}}


def _chunk(
    turn: RouteTurn,
    parts: list[dict[str, Any]],
    *,
    end: tuple[str | None, tuple[int, int]] | None = None,
) -> dict[str, Any]:
    """A reply chunk; the last (*end*: the finish reason and the tokens) says why it ended."""
    content = {"role": "model", "parts": parts or [{"text": ""}]}
    candidate: dict[str, Any] = {"content": content, "index": 0}
    body: dict[str, Any] = {"candidates": [candidate]}
    if end is not None:
        reason, (prompt, completion) = end
        candidate["finishReason"] = _FINISH.get(reason or "", "STOP")
        body["usageMetadata"] = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": completion,
            "totalTokenCount": prompt + completion,
        }
    body["modelVersion"] = turn.alias
    body["responseId"] = turn.call
    return body
