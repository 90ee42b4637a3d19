"""What every part of the description shares: references, operations, the error replies and
the `bench` object (the seats) that every panel reply carries."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gateway.panel.fanout import SeatStatus
from gateway.panel.reply import SEAT_FIELDS
from gateway.request.failure import FailureClass

# A JSON Schema (or an OpenAPI object) is arbitrary JSON: its values have no one type.
Schema = dict[str, Any]

_REF = "#/components/schemas/"


def ref(name: str) -> dict[str, str]:
    return {"$ref": _REF + name}


def json_reply(name: str, description: str) -> Schema:
    return {"description": description, "content": {"application/json": {"schema": ref(name)}}}


ERRORS: dict[str, Schema] = {
    "400": json_reply("Error", "malformed request"),
    "401": json_reply("Error", "missing, malformed or unknown gateway key"),
    "403": json_reply("Error", "outside the key's collections"),
    "404": json_reply("Error", "unknown collection, panel or call"),
    "429": json_reply("Error", "rate limited"),
}
# With keys on, another key's panel or call is unknown to this one: 404, in the same words.
NOT_YOURS = json_reply("Error", "unknown panel or call, or one made with another gateway key")

# A collection as a model: `bench/<name>` or the bare name, `:merged` for one merged answer,
# `:route` for route mode (one member, tools passed through).
_NAME = r"^(bench/)?[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
MODEL_PATTERN = _NAME + "(:merged|:route)?$"
PANEL_MODEL = _NAME + "(:merged)?$"
ROUTE_MODEL = _NAME + ":route$"

NULLABLE_STR: Schema = {"type": ["string", "null"]}
NULLABLE_NUM: Schema = {"type": ["number", "null"]}

SEAT: Schema = {
    "type": "object",
    "required": ["call", *SEAT_FIELDS],
    "properties": {
        "call": {"type": "string"},
        "seat": {"type": "string"},
        "alias": {"type": "string"},
        "connection": {"type": "string"},
        "status": {"enum": [status.value for status in SeatStatus]},
        "seconds": {"type": "number"},
        "answer": NULLABLE_STR,
        "error": NULLABLE_STR,
        "failure": {
            "enum": [*(failure.value for failure in FailureClass), None],
            "description": "why a seat that did not answer failed (null when it answered), "
            "read from the provider's status and words",
        },
        "replaces": NULLABLE_STR,
        "replaced_by": NULLABLE_STR,
    },
}

BENCH: Schema = {
    "type": "object",
    "required": ["panel", "collection", "shape", "shape_by", "seats", "skipped", "notes"],
    "properties": {
        "panel": {"type": "string"},
        "collection": {"type": "string"},
        "shape": {"type": "string"},
        "shape_by": {"enum": ["header", "collection", "default", "images"]},
        "seats": {"type": "array", "items": ref("Seat")},
        "skipped": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["alias", "seat", "why"],
                "properties": {
                    "alias": {"type": "string"},
                    "seat": NULLABLE_STR,
                    "why": {"type": "string"},
                },
            },
        },
        "notes": {"type": "array", "items": {"type": "string"}},
        "merger": ref("Seat"),
        "note": {"type": "string"},
    },
}

SEATS_HEADER = {
    "X-Bench-Seats": {
        "description": "JSON list of {call, seat, alias, status}: final statuses on a plain "
        "reply; on a stream the seated plan, each `seated` (final statuses are in the "
        "stream's bench)",
        "schema": {"type": "string"},
    },
    "X-Bench-Dropped": {
        "description": "what of the request a model was not given, comma-separated as the "
        "client named it (hint fields, hosted tools, `tools` on a panel), each character a "
        "header cannot carry (controls, non-ASCII) and `%` and `,` percent-encoded in UTF-8; "
        "absent when nothing was. Each call's record lists its own (`dropped`), as named",
        "schema": {"type": "string"},
    },
    "X-Bench-Conversation": {
        "description": "route mode: the conversation the turn belongs to",
        "schema": {"type": "string"},
    },
    "X-Bench-Model": {
        "description": "route mode: the member that answered (the reply's model names it too)",
        "schema": {"type": "string"},
    },
}
# The headers a client may name its session in (route mode's conversations, contract §11).
SESSION_PARAMETERS = [
    {
        "name": "X-Bench-Conversation",
        "in": "header",
        "schema": {"type": "string"},
        "description": "route mode: the session a turn continues (agents' own session headers "
        "and ids in the body count too)",
    }
]


def query(name: str, schema: Schema, description: str = "") -> Schema:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": schema,
        "description": description,
    }


def operation(
    summary: str,
    ok: Schema,
    body: str | None = None,
    errors: Iterable[str] = (),
    mine: bool = False,
    body_required: bool = True,
) -> Schema:
    """*mine*: the route reaches only the caller's own records (404 for another key's);
    *body_required*: False when a request without a body means `{}`."""
    op: Schema = {"summary": summary, "responses": {"200": ok}}
    for code in errors:
        op["responses"][code] = ERRORS[code]
    if mine:
        op["responses"]["404"] = NOT_YOURS
    if body:
        op["requestBody"] = {
            "required": body_required,
            "content": {"application/json": {"schema": ref(body)}},
        }
    return op


SCHEMAS: dict[str, Schema] = {"Seat": SEAT, "Bench": BENCH}
