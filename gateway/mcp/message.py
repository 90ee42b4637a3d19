"""What `POST /mcp` takes: one JSON-RPC 2.0 message as MCP has them, checked before the SDK.

Why: the SDK reads a body more loosely than MCP writes it (an object with a method and an `id`
of null or 1.5 is taken as a notification, answered 202 and dropped; `params: null` passes), so
a message a client got wrong vanished unsaid. Here a body that parses as JSON but is not a
message is refused with a JSON-RPC error (400, `-32600 Invalid Request`) that says what is
wrong, in the SDK's own error shape. The API document describes the body as this check reads
it (gateway/openapi/mcp.py: change the two together); the fuzzer holds them to each other
(tests/openapi/test_fuzz.py).
"""

from __future__ import annotations

import json
from typing import Any

INVALID_REQUEST = -32600


def refusal(raw: bytes) -> str | None:
    """Why *raw* is not a message (None when it is, or when it is not JSON at all: the SDK
    answers that with its parse error)."""
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return "a message is one JSON object (MCP has no batches)"
    if body.get("jsonrpc") != "2.0":
        return '`jsonrpc` must be "2.0"'
    # Any of the three shapes will do (the schema's `anyOf`); else the first one the body
    # names says what is wrong.
    reasons = [
        (name, check(body))
        for name, check in (("method", _request), ("result", _result), ("error", _error))
    ]
    if any(reason is None for _, reason in reasons):
        return None
    for name, reason in reasons:
        if name in body:
            return reason
    return "a message has a `method` (a request or notification), a `result` or an `error`"


def _request(body: dict[str, Any]) -> str | None:
    if "id" in body and not _is_id(body["id"]):
        return "`id` must be a string or an integer"
    return _field(body, "method", str, "a string") or (
        _field(body, "params", dict, "an object") if "params" in body else None
    )


def _answer(body: dict[str, Any], null: bool = False) -> str | None:
    if "id" not in body:
        return "a result or an error answers an `id`"
    if _is_id(body["id"]) or (null and body["id"] is None):
        return None
    return "`id` must be a string or an integer" + (", or null" if null else "")


def _result(body: dict[str, Any]) -> str | None:
    return _answer(body) or _field(body, "result", dict, "an object")


def _error(body: dict[str, Any]) -> str | None:
    error = body.get("error")
    if (wrong := _answer(body, null=True)) is not None:
        return wrong
    if not isinstance(error, dict):
        return "`error` must be an object"
    if not _is_int(error.get("code")):
        return "`error.code` must be an integer"
    return _field(error, "message", str, "a string")


def _field(body: dict[str, Any], name: str, kind: type, what: str) -> str | None:
    return None if isinstance(body.get(name), kind) else f"`{name}` must be {what}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_id(value: Any) -> bool:
    return isinstance(value, str) or _is_int(value)


def error_body(message: str) -> bytes:
    """The SDK's error shape (`id` null: a message it cannot read answers no request)."""
    error = {"code": INVALID_REQUEST, "message": f"Invalid Request: {message}"}
    return json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": error}, separators=(",", ":")
    ).encode()
