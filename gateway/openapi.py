"""The OpenAPI description served at /openapi.json, written by hand to match the contract.

A test checks every route of the app is described here (and nothing more), and that real
replies validate against these schemas, so the description cannot drift from the code.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gateway.fanout import SeatStatus
from gateway.reply import SEAT_FIELDS
from gateway.store import CALL_FIELDS, PANEL_FIELDS

# A JSON Schema (or an OpenAPI object) is arbitrary JSON: its values have no one type.
Schema = dict[str, Any]

_REF = "#/components/schemas/"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": _REF + name}


def _json(name: str, description: str) -> Schema:
    return {"description": description, "content": {"application/json": {"schema": _ref(name)}}}


_ERRORS: dict[str, Schema] = {
    "400": _json("Error", "malformed request"),
    "401": _json("Error", "missing, malformed or unknown gateway key"),
    "403": _json("Error", "outside the key's collections"),
    "404": _json("Error", "unknown collection, panel or call"),
    "429": _json("Error", "rate limited"),
}

_NULLABLE_STR: Schema = {"type": ["string", "null"]}
_NULLABLE_NUM: Schema = {"type": ["number", "null"]}

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
        "answer": _NULLABLE_STR,
        "error": _NULLABLE_STR,
        "replaces": _NULLABLE_STR,
        "replaced_by": _NULLABLE_STR,
    },
}

BENCH: Schema = {
    "type": "object",
    "required": ["panel", "collection", "shape", "shape_by", "seats", "skipped", "notes"],
    "properties": {
        "panel": {"type": "string"},
        "collection": {"type": "string"},
        "shape": {"type": "string"},
        "shape_by": {"enum": ["header", "collection", "default"]},
        "seats": {"type": "array", "items": _ref("Seat")},
        "skipped": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["alias", "seat", "why"],
                "properties": {
                    "alias": {"type": "string"},
                    "seat": _NULLABLE_STR,
                    "why": {"type": "string"},
                },
            },
        },
        "notes": {"type": "array", "items": {"type": "string"}},
        "merger": _ref("Seat"),
        "note": {"type": "string"},
    },
}

USAGE: Schema = {
    "type": "object",
    "required": ["prompt_tokens", "completion_tokens", "total_tokens"],
    "properties": {
        k: {"type": "integer", "minimum": 0}
        for k in ("prompt_tokens", "completion_tokens", "total_tokens")
    },
}

COMPLETION: Schema = {
    "type": "object",
    "required": ["id", "object", "created", "model", "choices", "usage", "bench"],
    "properties": {
        "id": {"type": "string"},
        "object": {"const": "chat.completion"},
        "created": {"type": "integer"},
        "model": {"type": "string"},
        "choices": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["index", "finish_reason", "message"],
                "properties": {
                    "index": {"type": "integer"},
                    "finish_reason": {"const": "stop"},
                    "message": {
                        "type": "object",
                        "required": ["role", "content"],
                        "properties": {
                            "role": {"const": "assistant"},
                            "content": {"type": "string"},
                        },
                    },
                },
            },
        },
        "usage": _ref("Usage"),
        "bench": _ref("Bench"),
    },
}

CHAT_REQUEST: Schema = {
    "type": "object",
    "required": ["model", "messages"],
    "properties": {
        "model": {"type": "string", "description": "bench/<collection>[:merged] or bench/panel"},
        "messages": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["role", "content"],
                "properties": {
                    "role": {"enum": ["system", "developer", "user", "assistant"]},
                    "content": {"type": ["string", "array"]},
                },
            },
        },
        "stream": {"type": "boolean"},
        "with": {"type": "array", "items": {"type": "string"}},
        "bench": {"type": "object", "properties": {"reply": {"enum": ["panel", "merged"]}}},
        "temperature": {"type": "number"},
        "max_tokens": {"type": "integer"},
    },
}

ERROR: Schema = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["message", "type", "param", "code"],
            "properties": {
                "message": {"type": "string"},
                "type": {"type": "string"},
                "param": _NULLABLE_STR,
                "code": _NULLABLE_STR,
            },
        },
        "bench": _ref("Bench"),
    },
}

VERDICT: Schema = {
    "type": "object",
    "required": ["call", "useful"],
    "additionalProperties": False,
    "properties": {
        "call": {"type": "string"},
        "useful": {"type": "boolean"},
        "note": {"type": "string"},
        "real": {"type": "array", "items": {"type": "string"}},
        "false": {"type": "array", "items": {"type": "string"}},
    },
}

RECORDED: Schema = {
    "type": "object",
    "required": ["call", "recorded"],
    "properties": {"call": {"type": "string"}, "recorded": {"type": "boolean"}},
}

CALL_RECORD: Schema = {
    "type": "object",
    "required": [*CALL_FIELDS, "collection", "verdict"],
    "properties": {
        "id": {"type": "string"},
        "panel_id": {"type": "string"},
        "status": SEAT["properties"]["status"],
        "seconds": _NULLABLE_NUM,
        "first_token_s": _NULLABLE_NUM,
        "verdict": {"type": ["object", "null"]},
    },
}

PANEL_RECORD: Schema = {
    "type": "object",
    "required": [*PANEL_FIELDS, "seats"],
    "properties": {"seats": {"type": "array", "items": {"type": "object"}}},
}

MODEL_LIST: Schema = {
    "type": "object",
    "required": ["object", "data"],
    "properties": {
        "object": {"const": "list"},
        "data": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "id",
                    "object",
                    "description",
                    "tags",
                    "members",
                    "explorers",
                    "shape",
                ],
            },
        },
    },
}

BENCH_MODELS: Schema = {
    "type": "object",
    "required": ["models"],
    "properties": {
        "models": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "alias",
                    "connection",
                    "role",
                    "family",
                    "seated",
                    "answered",
                    "useful",
                    "judged",
                    "last_seated",
                    "cooling_until",
                    "cooling_why",
                ],
            },
        }
    },
}


def _op(
    summary: str, ok: Schema, body: str | None = None, errors: Iterable[str] = ()
) -> Schema:
    op: Schema = {"summary": summary, "responses": {"200": ok}}
    for code in errors:
        op["responses"][code] = _ERRORS[code]
    if body:
        op["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": _ref(body)}},
        }
    return op


def _chat() -> Schema:
    op = _op(
        "Ask a panel: every seat's answer side by side (or streamed, or merged)",
        {
            "description": "the panel's reply (text/event-stream when stream is true)",
            "content": {
                "application/json": {"schema": _ref("ChatCompletion")},
                "text/event-stream": {"schema": {"type": "string"}},
            },
        },
        "ChatRequest",
        ("400", "401", "403", "404", "429"),
    )
    op["responses"]["413"] = _json("Error", "body over the limit, or a prompt no member can hold")
    op["responses"]["502"] = _json("Error", "no seat answered (bench carries every seat)")
    op["responses"]["503"] = _json("Error", "no model can be seated")
    op["parameters"] = [
        {"name": "X-Panel-Shape", "in": "header", "schema": {"type": "string"}},
        {"name": "X-Panel-With", "in": "header", "schema": {"type": "string"}},
    ]
    return {"post": op}


def describe() -> Schema:
    chat = _chat()
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Bench Gateway",
            "version": "0.1.0",
            "description": "An OpenAI-compatible panel gateway.",
        },
        "components": {
            "schemas": {
                "Seat": SEAT,
                "Bench": BENCH,
                "Usage": USAGE,
                "ChatCompletion": COMPLETION,
                "ChatRequest": CHAT_REQUEST,
                "Error": ERROR,
                "Verdict": VERDICT,
                "Recorded": RECORDED,
                "CallRecord": CALL_RECORD,
                "PanelRecord": PANEL_RECORD,
                "ModelList": MODEL_LIST,
                "BenchModels": BENCH_MODELS,
            },
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "apiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"},
            },
        },
        "paths": {
            "/v1/chat/completions": chat,
            "/chat/completions": chat,
            "/v1/models": {
                "get": _op("Collections as models", _json("ModelList", "the list"), errors=("401",))
            },
            "/bench/verdict": {
                "post": _op(
                    "A verdict on a call",
                    _json("Recorded", "recorded"),
                    "Verdict",
                    ("400", "401", "403", "404"),
                )
            },
            "/bench/panels/{panel}": {
                "get": {
                    **_op(
                        "A panel as recorded",
                        _json("PanelRecord", "the panel"),
                        errors=("401", "403", "404"),
                    ),
                    "parameters": [
                        {
                            "name": "panel",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string"},
                        }
                    ],
                }
            },
            "/bench/calls/{call}": {
                "get": {
                    **_op(
                        "One seat's record",
                        _json("CallRecord", "the call"),
                        errors=("401", "403", "404"),
                    ),
                    "parameters": [
                        {
                            "name": "call",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string"},
                        }
                    ],
                }
            },
            "/bench/models": {
                "get": _op(
                    "Every model's figures", _json("BenchModels", "the models"), errors=("401",)
                )
            },
            "/healthz": {"get": _op("Ready?", {"description": "ready"})},
            "/openapi.json": {"get": _op("This description", {"description": "OpenAPI 3.1"})},
        },
    }
