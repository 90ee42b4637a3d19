"""`POST /mcp` (contract §12), described as it answers: MCP's streamable HTTP, run stateless.

The body is one JSON-RPC 2.0 message, described as gateway/mcp/message.py checks it (change the
two together). A request is answered 200 with an event stream of messages (progress
notifications, then its result or error); a notification, result or error is taken with a bare
202. What is not a message, and an `Accept` that does not take both JSON and event streams, are
JSON-RPC errors (400, 406); the gateway's own refusals (no key, a body too large or not JSON)
are its errors, as on every route.
"""

from __future__ import annotations

from typing import Any

from gateway.openapi.common import Schema, json_reply

_VERSION = {"const": "2.0"}
_ID = {"type": ["string", "integer"]}
_OBJECT = {"type": "object"}
_ERROR: Schema = {
    "title": "error",
    "type": "object",
    "required": ["jsonrpc", "id", "error"],
    "properties": {
        "jsonrpc": _VERSION,
        "id": {"type": ["string", "integer", "null"]},
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {"code": {"type": "integer"}, "message": {"type": "string"}},
        },
    },
}
MESSAGE: Schema = {
    "description": "a JSON-RPC 2.0 message: a request (a method and an id), a notification "
    "(a method, no id), a result or an error (each answering an id)",
    "anyOf": [
        {
            "title": "request or notification",
            "type": "object",
            "required": ["jsonrpc", "method"],
            "properties": {"jsonrpc": _VERSION, "method": {"type": "string"}, "id": _ID,
                           "params": _OBJECT},
        },
        {
            "title": "result",
            "type": "object",
            "required": ["jsonrpc", "id", "result"],
            "properties": {"jsonrpc": _VERSION, "id": _ID, "result": _OBJECT},
        },
        _ERROR,
    ],
}  # fmt: skip
# One event of a request's stream: a message, as JSON text.
_EVENT: Schema = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {
        "event": {"const": "message"},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": MESSAGE,
        },
    },
}


def _rpc_error(description: str) -> Schema:
    return {"description": description, "content": {"application/json": {"schema": _ERROR}}}


PATHS: dict[str, Any] = {
    "/mcp": {
        "post": {
            "summary": "MCP over streamable HTTP: list_collections, ask, verdict, "
            "pending_verdicts (contract §12); same keys and scopes as every route",
            "requestBody": {"required": True, "content": {"application/json": {"schema": MESSAGE}}},
            "responses": {
                "200": {
                    "description": "a request's answer: an event stream of messages (progress "
                    "notifications, then its result or error)",
                    "content": {"text/event-stream": {"schema": _EVENT}},
                },
                "202": {"description": "a notification, result or error, taken"},
                "400": _rpc_error("not JSON, or not a JSON-RPC message"),
                "401": json_reply("Error", "no valid key"),
                "406": _rpc_error("`Accept` must take both JSON and event streams"),
                "413": json_reply("Error", "the body is over the limit"),
                "415": json_reply("Error", "the body is not JSON"),
                "431": json_reply("Error", "the head is too large"),
            },
        }
    },
}
