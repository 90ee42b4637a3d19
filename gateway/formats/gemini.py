"""Gemini's API (`generateContent`, `streamGenerateContent`, `countTokens`, the model list), so
`google-genai` and the Gemini CLI can ask a panel.

The collection is in the path (`models/bench/core:generateContent` or `models/core:...`), so a
reader is made per request (`GeminiFormat`) with the path's model and the stream's framing. The
format is two modules, one per half, so that neither passes ~250 lines: gemini_request.py reads
(checks every part, role and setting, has litellm's adapter make the OpenAI chat request, and
counts tokens); this module is the `Format` itself and everything sent back. The reply is
rendered here from the panel's events: `?alt=sse` is Server-Sent Events, otherwise one JSON
array streamed element by element; a chunk per seat section as it finishes. Gemini replies have
no place for `bench`, so it goes in the headers (`X-Bench-Panel`, `X-Bench-Seats`) and on the
record. Tools, function calls and their responses go to route mode (route_gemini.py).
"""

from __future__ import annotations

import json
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
from gateway.errors import GatewayError
from gateway.formats.gemini_request import camel_keys, chat_request, check_fields
from gateway.panel import KeepAlive, PanelEnded, PanelRun, SeatFinished
from gateway.route import RouteAsk, RouteTurn
from gateway.settings import Config

MODELS_PREFIX = "models/"
METHODS = ["generateContent", "streamGenerateContent", "countTokens"]
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
        check_fields(body)
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
    return StreamingResponse(_array(pieces), media_type="application/json", headers=headers)


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
