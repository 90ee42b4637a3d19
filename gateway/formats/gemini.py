"""Gemini's API (`generateContent`, `streamGenerateContent`, `countTokens`, the model list), so
`google-genai` and the Gemini CLI can ask a panel.

The collection is in the path (`models/bench/core:generateContent` or `models/core:...`), so a
reader is made per request (`GeminiFormat`) with the path's model and the stream's framing. The
reader checks every part, role and setting first (litellm's adapter drops what it does not know),
then has litellm's `GoogleGenAIAdapter` (gateway/upstream/translate/gemini.py) make the OpenAI
chat request, then runs the checks every format shares. The reply is rendered here from the
panel's events: `?alt=sse` is Server-Sent Events, otherwise one JSON array streamed element by
element; a chunk per seat section as it finishes. Gemini replies have no place for `bench`, so
it goes in the headers (`X-Bench-Panel`, `X-Bench-Seats`) and on the record. Tools, function
calls and their responses go to route mode (route_gemini.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from starlette.responses import JSONResponse, Response, StreamingResponse

from gateway import reply
from gateway.asking import (
    Ask,
    chat_messages,
    collection_named,
    nominees_of,
    reply_asked,
    reply_merged,
    sampling_of,
    shape_asked,
)
from gateway.bodies import bounded
from gateway.errors import BadRequest, GatewayError
from gateway.panel import KeepAlive, PanelEnded, PanelRun, SeatFinished
from gateway.route import RouteAsk, RouteTurn
from gateway.settings import Config
from gateway.upstream.translate.gemini import to_chat
from routing import conversation_text, estimate_tokens

MODELS_PREFIX = "models/"
METHODS = ["generateContent", "streamGenerateContent", "countTokens"]
ROUTE_HINT = "tools are not supported on a panel; use the collection's `:route` model for tools"
_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "UNIMPLEMENTED",
    413: "INVALID_ARGUMENT",
    415: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
}
_TOP_FIELDS = frozenset({"contents", "systemInstruction", "generationConfig", "with", "bench"})
_REFUSED_FIELDS = {
    "tools": ROUTE_HINT,
    "toolConfig": ROUTE_HINT,
    "cachedContent": "cached content is stored with Google; send the contents themselves",
    "safetySettings": "safety thresholds cannot be applied to a panel's seats",
}
# generationConfig -> the OpenAI sampling field it is passed on as (the adapter maps the first
# four; the rest it leaves out, so they are mapped here).
_CONFIG = {
    "temperature": "temperature",
    "topP": "top_p",
    "maxOutputTokens": "max_tokens",
    "stopSequences": "stop",
    "seed": "seed",
    "presencePenalty": "presence_penalty",
    "frequencyPenalty": "frequency_penalty",
}
_CONFIG_ALSO = frozenset(
    {"candidateCount", "responseMimeType", "responseSchema", "responseJsonSchema",
     "responseModalities"}
)  # fmt: skip
_JSON = "application/json"


def camel(name: str) -> str:
    """Google's JSON takes snake_case names too; one spelling is checked."""
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def camel_keys(body: dict[str, Any]) -> dict[str, Any]:
    return {camel(k) if isinstance(k, str) else k: v for k, v in body.items()}


# -- read ---------------------------------------------------------------------------------------


class GeminiFormat:
    """One Gemini request: *model* from the path, *stream* from the method, *sse* from `alt`."""

    def __init__(self, model: str, *, stream: bool = False, sse: bool = False) -> None:
        self.model = model
        self.stream = stream
        self.sse = sse

    # The body's bound, pure (it may run in the body reader's child process, gateway/bodies.py,
    # which must not import this module: litellm comes with it). The checks of the format's
    # own fields run in `read`, on a body this has made small. (A partial is no descriptor:
    # `self.check` is the partial itself, which pickles by `bounded`'s name.)
    check = partial(bounded, listed="contents")

    def read(self, body: dict[str, Any], headers: dict[str, str], config: Config) -> Ask:
        """A generateContent body (bounded by `check`; the X-Panel-* headers, lower-cased) as an
        Ask."""
        body = camel_keys(body)
        _check_fields(body)
        collection, merged_by_name = collection_named(self.model)
        request = chat_request(body)
        messages = chat_messages(request.pop("messages"), config.gateway.max_messages)
        return Ask.of(
            requested_model=self.model,
            collection=collection,
            shape=shape_asked(headers, collection, config),
            nominees=nominees_of(body.get("with"), headers.get("x-panel-with")),
            messages=messages,
            sampling=sampling_of(request),
            stream=self.stream,
            merged=merged_by_name
            or reply_merged(reply_asked(body.get("bench")), collection, config),
        )

    async def render_run(self, run: PanelRun) -> Response:
        if self.stream:
            return streamed(self._pieces(run), sse=self.sse, headers=dict(run.headers))
        await run.run()
        error = run.failure()
        if error is not None:
            return self.render_error(error)
        done = run.completion()
        headers = dict(run.headers)
        body = _chunk(run, done.text, usage=done.usage)
        return JSONResponse(body, headers=headers)

    def render_error(self, error: GatewayError) -> Response:
        return render_error(error)

    # Route mode (`bench/<c>:route`) lives in route_gemini, which reads this module's helpers;
    # so it is imported when first used, not here.
    def read_route(self, body: dict[str, Any], collection: str) -> RouteAsk:
        from gateway.formats import route_gemini

        return route_gemini.read_route(body, collection, self.model, stream=self.stream)

    async def render_route(self, turn: RouteTurn) -> Response:
        from gateway.formats import route_gemini

        return await route_gemini.render_route(turn, sse=self.sse)

    async def _pieces(self, run: PanelRun) -> AsyncIterator[dict[str, Any]]:
        """The reply's chunks: the header, a section per seat as it finishes, the last with
        `finishReason` and `usageMetadata`; an empty text chunk as a keep-alive."""
        merged = run.ask.merged
        if not merged:
            yield _chunk(run, reply.header_line(run.facts) + "\n", last=False)
        async for event in run.events():
            if isinstance(event, KeepAlive):
                yield _chunk(run, "", last=False)
            elif isinstance(event, SeatFinished):
                if not merged:
                    yield _chunk(run, reply.section(event.seat) + "\n", last=False)
            elif isinstance(event, PanelEnded):
                if event.completion is None:
                    assert event.error is not None
                    yield error_body(event.error)
                    return
                done = event.completion
                yield _chunk(run, done.text if merged else "", usage=done.usage)


def streamed(
    pieces: AsyncIterator[dict[str, Any]], *, sse: bool, headers: dict[str, str]
) -> Response:
    """A reply's chunks as Gemini streams them: Server-Sent Events (`?alt=sse`), else the
    elements of one JSON array, each sent as it comes."""
    if sse:
        headers = {**headers, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(_sse(pieces), media_type="text/event-stream", headers=headers)
    return StreamingResponse(_array(pieces), media_type=_JSON, headers=headers)


async def _sse(pieces: AsyncIterator[dict[str, Any]]) -> AsyncIterator[bytes]:
    async for piece in pieces:
        yield b"data: " + _dumps(piece) + b"\r\n\r\n"


async def _array(pieces: AsyncIterator[dict[str, Any]]) -> AsyncIterator[bytes]:
    separator = b"["
    async for piece in pieces:
        yield separator + _dumps(piece)
        separator = b",\r\n"
    yield b"[]" if separator == b"[" else b"]"


def model_of(path_name: str) -> str:
    """The model in a path (`bench/core`, `core`, `models/bench/core`) as the client named it."""
    return path_name.removeprefix(MODELS_PREFIX)


def chat_request(body: dict[str, Any]) -> dict[str, Any]:
    """A generateContent body (keys in camelCase) -> OpenAI chat `messages` and sampling."""
    contents = _contents(body.get("contents"))
    system = system_text(body.get("systemInstruction"))
    config = generation_config(body.get("generationConfig"))
    request = to_chat(contents, system, config)
    with_config(request, config)
    return request


def with_config(request: dict[str, Any], config: dict[str, Any]) -> None:
    """The generationConfig fields the adapter leaves out of *request*, and checks of its work."""
    for name, field in _CONFIG.items():
        if name in config and field not in request:
            request[field] = config[name]
    if config.get("responseMimeType") == _JSON and "response_format" not in request:
        if config.get("responseSchema") is not None or config.get("responseJsonSchema") is not None:
            raise BadRequest(
                "`generationConfig.responseSchema` must describe an object.",
                param="generationConfig.responseSchema",
            )
        request["response_format"] = {"type": "json_object"}


# countTokens' bound: its contents may also sit in `generateContentRequest`, which the count of
# values bounds.
COUNT_CHECK = partial(bounded, listed="contents")


def count_tokens(body: dict[str, Any], max_messages: int) -> int:
    """`countTokens`: an estimate from the text (no model is called), as every reader sizes a
    prompt. The body (bounded by `COUNT_CHECK`) is checked as generateContent's is."""
    body = camel_keys(body)
    inner = body.pop("generateContentRequest", None)
    if inner is not None:
        if not isinstance(inner, dict):
            raise BadRequest("`generateContentRequest` must be an object.")
        body = {**camel_keys(inner), **body}
        body.pop("model", None)
    _check_fields(body)
    messages = chat_messages(chat_request(body)["messages"], max_messages)
    return estimate_tokens(len(conversation_text(messages)))


def _check_fields(body: dict[str, Any]) -> None:
    for field in body:
        if field in _REFUSED_FIELDS:
            raise BadRequest(f"`{field}`: {_REFUSED_FIELDS[field]}.", param=field)
        if field not in _TOP_FIELDS:
            raise BadRequest(f"`{field}` is not a field the gateway knows.", param=field)


def _contents(contents: Any) -> list[dict[str, Any]]:
    if isinstance(contents, dict):
        contents = [contents]
    if not isinstance(contents, list) or not contents:
        raise BadRequest("`contents` must be a non-empty list.", param="contents")
    for i, content in enumerate(contents):
        where = f"contents[{i}]"
        if not isinstance(content, dict):
            raise BadRequest(f"`{where}` must be an object.", param=where)
        content = camel_keys(content)
        contents[i] = content
        for field in content:
            if field not in ("role", "parts"):
                raise BadRequest(f"`{where}.{field}` is not a content field.", param=where)
        if content.get("role", "user") not in ("user", "model"):
            raise BadRequest(f"`{where}.role` must be user or model.", param=f"{where}.role")
        _parts(content.get("parts"), f"{where}.parts")
    return contents


def _parts(parts: Any, where: str, *, text_only: bool = False) -> list[dict[str, Any]]:
    """The parts, checked, with their keys in camelCase."""
    if not isinstance(parts, list) or not parts:
        raise BadRequest(f"`{where}` must be a non-empty list of parts.", param=where)
    for j, part in enumerate(parts):
        here = f"{where}[{j}]"
        if not isinstance(part, dict):
            raise BadRequest(f"`{here}` must be an object.", param=here)
        part = camel_keys(part)
        parts[j] = part
        kinds = set(part)
        if kinds == {"text"} and isinstance(part["text"], str):
            continue
        if not text_only and kinds == {"inlineData"}:
            inline_image(part["inlineData"], f"{here}.inlineData")
            continue
        raise BadRequest(f"`{here}`: {_why_not(kinds, text_only)}.", param=here)
    return parts


def _why_not(kinds: set[str], text_only: bool) -> str:
    if kinds & {"functionCall", "functionResponse"}:
        return ROUTE_HINT
    if "fileData" in kinds:
        return "uploaded files cannot reach a panel's seats; send the image bytes as inlineData"
    if kinds & {"executableCode", "codeExecutionResult"}:
        return "code execution is a Gemini tool; " + ROUTE_HINT
    if text_only:
        return "a system instruction takes only text parts"
    return "a part must be exactly one of text (a string) or inlineData (an image)"


def inline_image(data: Any, where: str) -> None:
    if not isinstance(data, dict):
        raise BadRequest(f"`{where}` must be an object.", param=where)
    data = camel_keys(data)
    mime, payload = data.get("mimeType"), data.get("data")
    if not isinstance(mime, str) or not mime.lower().startswith("image/"):
        raise BadRequest(
            f"`{where}.mimeType` must be an image type; audio, video and documents cannot "
            "reach a panel's seats.",
            param=where,
        )
    if not isinstance(payload, str) or not re.fullmatch(r"[A-Za-z0-9+/_-]+=*", payload):
        raise BadRequest(f"`{where}.data` must be base64.", param=where)
    if set(data) - {"mimeType", "data"}:
        raise BadRequest(f"`{where}` takes only mimeType and data.", param=where)


def system_text(system: Any) -> str | None:
    if system is None:
        return None
    if isinstance(system, str):
        return system
    if not isinstance(system, dict) or set(camel_keys(system)) - {"role", "parts"}:
        raise BadRequest(
            "`systemInstruction` must be a content with text parts.", param="systemInstruction"
        )
    parts = _parts(system.get("parts"), "systemInstruction.parts", text_only=True)
    return "\n\n".join(part["text"] for part in parts)


def generation_config(given: Any) -> dict[str, Any]:
    if given is None:
        return {}
    if not isinstance(given, dict):
        raise BadRequest("`generationConfig` must be an object.", param="generationConfig")
    config = {k: v for k, v in camel_keys(given).items() if v is not None}
    for name in config:
        if name not in _CONFIG and name not in _CONFIG_ALSO:
            raise BadRequest(
                f"`generationConfig.{name}` cannot be passed on to a panel's seats; it takes "
                f"{', '.join(sorted(_CONFIG))}, candidateCount 1 and a JSON responseMimeType.",
                param=f"generationConfig.{name}",
            )
    if config.get("candidateCount", 1) != 1:
        raise BadRequest(
            "`generationConfig.candidateCount` must be 1: a panel's answers come as one "
            "candidate, side by side.",
            param="generationConfig.candidateCount",
        )
    if config.get("responseMimeType", "text/plain") not in ("text/plain", _JSON):
        raise BadRequest(
            "`generationConfig.responseMimeType` must be text/plain or application/json.",
            param="generationConfig.responseMimeType",
        )
    if config.get("responseModalities", ["TEXT"]) not in (["TEXT"], ["text"]):
        raise BadRequest(
            "`generationConfig.responseModalities`: a panel answers in text only.",
            param="generationConfig.responseModalities",
        )
    return config


# -- render -------------------------------------------------------------------------------------


def error_body(error: GatewayError) -> dict[str, Any]:
    status = _STATUS.get(error.status, "INTERNAL")
    return {"error": {"code": error.status, "message": error.message, "status": status}}


def render_error(error: GatewayError) -> Response:
    """Google's `{"error": {code, message, status}}`; a failed panel's seats are in the headers
    (a failed route turn's conversation is already there)."""
    headers = dict(error.headers)
    bench = error.extra.get("bench")
    if bench is not None and "seats" in bench:
        seats = [{k: s[k] for k in ("call", "seat", "alias", "status")} for s in bench["seats"]]
        headers["X-Bench-Seats"] = json.dumps(seats, separators=(",", ":"))
    return JSONResponse(error_body(error), status_code=error.status, headers=headers)


def _chunk(
    run: PanelRun, text: str, *, last: bool = True, usage: dict[str, int] | None = None
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}}
    if last:
        candidate["finishReason"] = "STOP"
    candidate["index"] = 0
    body: dict[str, Any] = {"candidates": [candidate]}
    if usage is not None:
        body["usageMetadata"] = {
            "promptTokenCount": usage["prompt_tokens"],
            "candidatesTokenCount": usage["completion_tokens"],
            "totalTokenCount": usage["total_tokens"],
        }
    body["modelVersion"] = run.ask.requested_model
    body["responseId"] = run.facts.panel_id
    return body


def model_body(entry: dict[str, Any]) -> dict[str, Any]:
    """A collection as Gemini's `Model`."""
    return {
        "name": MODELS_PREFIX + entry["id"],
        "baseModelId": entry["id"],
        "version": "bench",
        "displayName": entry["id"],
        "description": entry["description"],
        "supportedGenerationMethods": METHODS,
    }


def _dumps(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()
