"""The dashboard's routes (contract §13), described as the server serves them.

The pages are HTML; open on loopback without keys, else after signing in with the admin token
(401 with the sign-in page). Every form post repeats its CSRF cookie in `X-CSRF-Token` (403
otherwise), so a post the page did not make changes nothing. `/ui/events` is a server-sent
event stream that the page keeps open (each stream ends after a while and the browser
reconnects).
"""

from __future__ import annotations

from typing import Any

from gateway.access.keys import KEY_NAME
from gateway.openapi.common import Schema, json_reply, query
from gateway.records.usage import MONTH_PATTERN

_HTML = {"text/html": {"schema": {"type": "string"}}}
_MONTH: Schema = {"type": "string", "pattern": MONTH_PATTERN}
_PAGE_QUERY = [
    query("limit", {"type": "integer", "minimum": 1, "maximum": 100}),
    query("before", {"type": "string", "maxLength": 200}, "a panel id: the page after it"),
    query("owed", {"type": "boolean"}, "only panels owing a verdict"),
]


def _page(summary: str, statuses: dict[str, str], parameters: list[Schema]) -> Schema:
    """A page's errors: the sign-in page or the not-found page (HTML), or a query's error."""
    responses: dict[str, Any] = {"200": {"description": "the page", "content": _HTML}}
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for code, why in statuses.items():
        responses[code] = {"description": why, "content": {**_HTML, **error}}
    return {"get": {"summary": summary, "parameters": parameters, "responses": responses}}


def _error(description: str) -> Schema:
    return json_reply("Error", description)


def _post(summary: str, body: Schema, ok: Schema, codes: dict[str, str]) -> Schema:
    csrf = [
        {"name": "X-CSRF-Token", "in": "header", "required": False, "schema": {"type": "string"},
         "description": "the page's CSRF cookie, repeated"},
        {"name": "bench_csrf", "in": "cookie", "required": False, "schema": {"type": "string"}},
    ]  # fmt: skip
    responses = {"200": {"description": "done", "content": {"application/json": {
        "schema": ok}}}}  # fmt: skip
    responses.update({code: _error(why) for code, why in codes.items()})
    responses["403"] = _error("no CSRF token, or not the cookie's")
    return {
        "post": {
            "summary": summary,
            "parameters": csrf,
            "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
            "responses": responses,
        }
    }


def _with_alias(item: Schema) -> Schema:
    alias = {"name": "alias", "in": "path", "required": True, "schema": {"type": "string"}}
    item["post"]["parameters"].append(alias)
    return item


_SIGNED_IN = {"type": "object", "required": ["signed_in"], "properties": {"signed_in": {
    "type": "boolean"}}}  # fmt: skip
_UNSIGNED = {"401": "sign in first (the admin token)"}

# One event of `/ui/events` (OpenAPI 3.1: an event stream's schema describes each event); its
# data is JSON text: the newest panel, seat and verdict row ids (gateway/dashboard/page.py).
_EVENT: Schema = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {
        "event": {"enum": ["hello", "change"]},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": {
                "type": "array",
                "items": {"type": "integer", "minimum": 0},
                "minItems": 3,
                "maxItems": 3,
            },
        },
    },
}
PATHS: dict[str, Any] = {
    "/": _page(
        "The dashboard: recent panels with every seat, owed verdicts, models, limits, keys",
        {"400": "a query it cannot mean", "401": "the sign-in page", "404": "unknown `before`"},
        [
            *_PAGE_QUERY,
            query("month", {"type": "string", "pattern": MONTH_PATTERN}, "usage's month"),
        ],
    ),
    "/panels/{panel}": _page(
        "One panel's judging page",
        {"401": "the sign-in page", "404": "unknown panel"},
        [{"name": "panel", "in": "path", "required": True, "schema": {"type": "string"}}],
    ),
    "/ui/panels": _page(
        "The dashboard's panel list alone (what the page swaps in on a change)",
        {"400": "a query it cannot mean", "401": "sign in first", "404": "unknown `before`"},
        _PAGE_QUERY,
    ),
    "/ui/events": {
        "get": {
            "summary": "Server-sent events: `change` whenever a panel, seat or verdict is written",
            "responses": {
                "200": {
                    "description": "an event stream: `hello` first, then `change`; each "
                    "event's data is the newest panel, seat and verdict row ids, as JSON",
                    "content": {"text/event-stream": {"schema": _EVENT}},
                },
                "401": _error("sign in first"),
            },
        }
    },  # fmt: skip
    "/ui/signin": _post(
        "Sign in with the admin token (an HttpOnly, SameSite=Strict session cookie)",
        {
            "type": "object",
            "required": ["token"],
            "properties": {
                "token": {"type": "string"},
                "device": {
                    "type": ["string", "null"],
                    "description": "the device token an earlier sign-in gave this browser: "
                    "its wrong tokens are counted apart from its address's",
                },
            },
        },
        _SIGNED_IN,
        {"400": "no token", "401": "wrong token", "429": "too many wrong tokens"},
    ),
    "/ui/signout": _post("Sign out", {"type": "object"}, _SIGNED_IN, {}),
    "/ui/verdict": _post(
        "A verdict given on the dashboard (the fields of POST /bench/verdict)",
        {"$ref": "#/components/schemas/Verdict"},
        {"type": "object", "required": ["call", "recorded"]},
        {"400": "malformed", **_UNSIGNED, "404": "unknown call"},
    ),
    "/ui/keys": _post(
        "Create a gateway key (shown this once)",
        {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {
                    "type": "string",
                    "pattern": KEY_NAME.pattern,
                    "not": {"enum": ["local", "admin"]},
                },
                "collections": {"type": ["array", "null"], "items": {"type": "string"}},
                "rpm": {"type": ["integer", "null"], "minimum": 1},
            },
        },
        {"type": "object", "required": ["name", "key"]},
        {"400": "malformed", **_UNSIGNED, "409": "a key of that name exists"},
    ),  # fmt: skip
    "/ui/keys/revoke": _post(
        "Revoke a gateway key",
        {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
        {"type": "object", "required": ["name", "revoked"]},
        {"400": "malformed", **_UNSIGNED, "404": "no active key of that name"},
    ),
    "/ui/models/{alias}/retire": _with_alias(
        _post(
            "Retire a model from the Models table (what POST /bench/models/{alias}/retire does)",
            {"$ref": "#/components/schemas/Retirement"},
            {"$ref": "#/components/schemas/HealthChanged"},
            {"400": "no `why`", **_UNSIGNED, "404": "no such model"},
        )
    ),
    "/ui/models/{alias}/restore": _with_alias(
        _post(
            "Restore a model from the Models table (what POST /bench/models/{alias}/restore does)",
            {"type": "object"},
            {"$ref": "#/components/schemas/HealthChanged"},
            {**_UNSIGNED, "404": "no such model"},
        )
    ),
}
