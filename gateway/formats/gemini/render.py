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
record. A tool-calling turn is route mode's (route_gemini.py); a panel answers in prose.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import Response, StreamingResponse

from gateway.errors import GatewayError
from gateway.panel.run import PanelRun
from gateway.replies import JSONResponse

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


def reply_chunk(
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
