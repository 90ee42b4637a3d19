"""The OpenAPI description served at /openapi.json, written by hand to match the contract.

A test checks every route of the app is described here (and nothing more), and that real
replies validate against these schemas, so the description cannot drift from the code.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gateway import openapi_formats
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
# With keys on, another key's panel or call is unknown to this one: 404, in the same words.
_NOT_YOURS = _json("Error", "unknown panel or call, or one made with another gateway key")

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
        "shape_by": {"enum": ["header", "collection", "default", "images"]},
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
        "failed_over": {"type": ["array", "null"], "items": {"type": "object"}},
    },
}
CONVERSATION_RECORD: Schema = {
    "type": "object",
    "description": "A route-mode conversation: its panel-like record and every turn's call.",
    "required": ["conversation", "collection", "key_name", "turns"],
    "properties": {
        "conversation": {"type": "string"},
        "turns": {"type": "array", "items": _ref("CallRecord")},
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
                    "rpd",
                    "used_today",
                ],
                "properties": {
                    "cooling_until": {"type": ["number", "null"]},
                    "cooling_why": {"type": ["string", "null"]},
                    "cooling_source": {
                        "type": ["string", "null"],
                        "description": "where the limit was learned: header <name>, body, "
                        "config (an rpd cap), default",
                    },
                    "rpm_used": {"type": ["integer", "null"]},
                    "rpd": {"type": ["integer", "null"], "description": "the configured rpd"},
                    "used_today": {
                        "type": "integer",
                        "description": "calls started today (gateway.quota_day_tz)",
                    },
                },
            },
        }
    },
}

_USAGE_SUMS = {name: {"type": "integer"} for name in ("calls", "tokens_in", "tokens_out", "errors")}
BENCH_USAGE: Schema = {
    "type": "object",
    "required": ["month", "time_zone", "rows", "models", "totals"],
    "properties": {
        "month": {"type": "string", "description": "YYYY-MM"},
        "time_zone": {"type": "string"},
        "rows": {
            "type": "array",
            "description": "per day, model, connection and key",
            "items": {
                "type": "object",
                "required": ["day", "alias", "connection", "key", *_USAGE_SUMS],
                "properties": {
                    "day": {"type": "string", "description": "YYYY-MM-DD"},
                    "alias": {"type": "string"},
                    "connection": {"type": "string"},
                    "key": {"type": "string"},
                    **_USAGE_SUMS,
                },
            },
        },
        "models": {"type": "array", "items": {"type": "object", "properties": _USAGE_SUMS}},
        "totals": {"type": "object", "properties": _USAGE_SUMS},
    },
}


ANTHROPIC_REQUEST = {
    "type": "object",
    "required": ["model", "messages", "max_tokens"],
    "properties": {
        "model": {"type": "string", "description": "bench/<collection>[:merged] or bench/panel"},
        "messages": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["role", "content"],
                "properties": {
                    "role": {"enum": ["user", "assistant"]},
                    "content": {"type": ["string", "array"]},
                },
            },
        },
        "system": {"type": ["string", "array"]},
        "max_tokens": {"type": "integer", "minimum": 1},
        "stream": {"type": "boolean"},
        "temperature": {"type": "number"},
        "top_p": {"type": "number"},
        "top_k": {"type": "integer"},
        "stop_sequences": {"type": "array", "items": {"type": "string"}},
        "metadata": {"type": "object"},
        "thinking": {"type": "object"},
        "with": {"type": "array", "items": {"type": "string"}},
        "bench": {"type": "object", "properties": {"reply": {"enum": ["panel", "merged"]}}},
    },
}

ANTHROPIC_MESSAGE = {
    "type": "object",
    "required": ["id", "type", "role", "model", "content", "stop_reason", "usage", "bench"],
    "properties": {
        "id": {"type": "string", "pattern": "^msg_"},
        "type": {"const": "message"},
        "role": {"const": "assistant"},
        "model": {"type": "string"},
        "content": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["type", "text"],
                "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
            },
        },
        "stop_reason": {"const": "end_turn"},
        "usage": {
            "type": "object",
            "required": ["input_tokens", "output_tokens"],
            "properties": {
                "input_tokens": {"type": "integer", "minimum": 0},
                "output_tokens": {"type": "integer", "minimum": 0},
            },
        },
        "bench": _ref("Bench"),
    },
}

ANTHROPIC_ERROR = {
    "type": "object",
    "required": ["type", "error"],
    "properties": {
        "type": {"const": "error"},
        "error": {
            "type": "object",
            "required": ["type", "message"],
            "properties": {"type": {"type": "string"}, "message": {"type": "string"}},
        },
        "bench": _ref("Bench"),
    },
}

TOKEN_COUNT = {
    "type": "object",
    "required": ["input_tokens"],
    "properties": {"input_tokens": {"type": "integer", "minimum": 0}},
}


_IDS: Schema = {"type": "array", "items": {"type": "string"}}
PENDING_REQUEST: Schema = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "calls": {**_IDS, "maxItems": 1000},
        "limit": {"type": "integer", "minimum": 1, "maximum": 500},
    },
}
# Another key's call is `unknown`, in the same words as one that does not exist.
PENDING: Schema = {
    "type": "object",
    "required": ["pending"],
    "properties": {
        "pending": _IDS,
        "judged": _IDS,
        "unanswered": _IDS,
        "unknown": _IDS,
        "owed": {"type": "array", "items": {"type": "object"}},
    },
}
PANEL_PAGE: Schema = {
    "type": "object",
    "required": ["panels", "next", "owed", "owed_capped"],
    "properties": {
        "panels": {"type": "array", "items": _ref("PanelRecord")},
        "next": {"type": ["string", "null"], "description": "`before` for the next page"},
        "owed": {"type": "integer", "description": "answered, unjudged seats (newest 2,000)"},
        "owed_capped": {"type": "boolean", "description": "older seats were not counted"},
    },
}


def _query(name: str, schema: Schema, description: str = "") -> Schema:
    return {"name": name, "in": "query", "required": False, "schema": schema,
            "description": description}


def _op(
    summary: str,
    ok: Schema,
    body: str | None = None,
    errors: Iterable[str] = (),
    mine: bool = False,
) -> Schema:
    """*mine*: the route reaches only the caller's own records (404 for another key's)."""
    op: Schema = {"summary": summary, "responses": {"200": ok}}
    for code in errors:
        op["responses"][code] = _ERRORS[code]
    if mine:
        op["responses"]["404"] = _NOT_YOURS
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
            "headers": _SEATS_HEADER,
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


def _anthropic() -> tuple[dict[str, Any], dict[str, Any]]:
    """/v1/messages and /v1/messages/count_tokens, with errors in Anthropic's shape."""

    def error(description: str) -> dict[str, Any]:
        return _json("AnthropicError", description)

    errors = {
        "400": error("malformed request, or an input a panel cannot honour (tools: use :route)"),
        "401": error("missing, malformed or unknown gateway key"),
        "403": error("outside the key's collections"),
        "404": error("unknown collection"),
        "413": error("body over the limit, or a prompt no member can hold"),
        "429": error("rate limited"),
        "502": error("no seat answered (bench carries every seat)"),
        "503": error("no model can be seated"),
    }
    messages = {
        "summary": "Ask a panel in Anthropic's Messages format",
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": _ref("AnthropicRequest")}},
        },
        "responses": {
            "200": {
                "description": "the panel's message (text/event-stream when stream is true)",
                "content": {
                    "application/json": {"schema": _ref("AnthropicMessage")},
                    "text/event-stream": {"schema": {"type": "string"}},
                },
            },
            **errors,
        },
        "parameters": [
            {"name": "X-Panel-Shape", "in": "header", "schema": {"type": "string"}},
            {"name": "X-Panel-With", "in": "header", "schema": {"type": "string"}},
        ],
    }
    count = {
        "summary": "The gateway's estimate of a Messages prompt's tokens (no model is called)",
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": _ref("AnthropicRequest")}},
        },
        "responses": {
            "200": _json("TokenCount", "the estimate"),
            **{k: errors[k] for k in ("400", "401", "403", "404", "413")},
        },
    }
    return {"post": messages}, {"post": count}


# -- OpenAI Responses, legacy completions, one model (issue 13) ---------------------------------

_SEATS_HEADER = {
    "X-Bench-Seats": {
        "description": "JSON list of {call, seat, alias, status}: final statuses on a plain "
        "reply; on a stream the seated plan, each `seated` (final statuses are in the "
        "stream's bench)",
        "schema": {"type": "string"},
    }
}

RESPONSE = {
    "type": "object",
    "required": ["id", "object", "created_at", "model", "status", "output", "usage", "bench"],
    "properties": {
        "id": {"type": "string", "pattern": "^resp_"},
        "object": {"const": "response"},
        "created_at": {"type": "integer"},
        "model": {"type": "string"},
        "status": {"const": "completed"},
        "store": {"const": False},
        "output": {"type": "array", "minItems": 1, "items": {"type": "object"}},
        "usage": {
            "type": "object",
            "required": ["input_tokens", "output_tokens", "total_tokens"],
        },
        "bench": _ref("Bench"),
    },
}

RESPONSE_REQUEST = {
    "type": "object",
    "required": ["model", "input"],
    "properties": {
        "model": {"type": "string", "description": "bench/<collection>[:merged] or bench/panel"},
        "input": {"type": ["string", "array"]},
        "instructions": {"type": "string"},
        "store": {"const": False, "description": "true is refused: no responses are kept"},
        "stream": {"type": "boolean"},
        "text": {"type": "object"},
        "with": {"type": "array", "items": {"type": "string"}},
        "bench": {"type": "object", "properties": {"reply": {"enum": ["panel", "merged"]}}},
    },
}

TEXT_COMPLETION = {
    "type": "object",
    "required": ["id", "object", "created", "model", "choices", "usage", "bench"],
    "properties": {
        "id": {"type": "string"},
        "object": {"const": "text_completion"},
        "choices": {
            "type": "array",
            "minItems": 1,
            "items": {"type": "object", "required": ["index", "text", "finish_reason"]},
        },
        "usage": _ref("Usage"),
        "bench": _ref("Bench"),
    },
}

COMPLETION_REQUEST = {
    "type": "object",
    "required": ["model", "prompt"],
    "properties": {
        "model": {"type": "string"},
        "prompt": {"type": ["string", "array"], "description": "a string, or a list of one"},
        "stream": {"type": "boolean"},
    },
}

MODEL = {"type": "object", "required": MODEL_LIST["properties"]["data"]["items"]["required"]}


def _panel_op(summary: str, reply: str, request: str) -> dict[str, Any]:
    """A panel route of another OpenAI format: same statuses as chat, its own bodies."""
    op = _chat()["post"]
    op = {**op, "summary": summary, "requestBody": _op("", {}, request)["requestBody"]}
    ok = {
        "description": "the panel's reply (text/event-stream when stream is true)",
        "headers": _SEATS_HEADER,
        "content": {
            "application/json": {"schema": _ref(reply)},
            "text/event-stream": {"schema": {"type": "string"}},
        },
    }
    op["responses"] = {**op["responses"], "200": ok}
    return {"post": op}


def _model_op() -> dict[str, Any]:
    op = _op("One listed model", _json("Model", "the model"), errors=("401", "404"))
    op["parameters"] = [
        {"name": "model", "in": "path", "required": True, "schema": {"type": "string"}}
    ]
    return {"get": op}


OPENAI_SCHEMAS = {
    "Response": RESPONSE,
    "ResponseRequest": RESPONSE_REQUEST,
    "TextCompletion": TEXT_COMPLETION,
    "CompletionRequest": COMPLETION_REQUEST,
    "Model": MODEL,
}


def _openai_paths() -> dict[str, Any]:
    responses = _panel_op("Ask a panel, OpenAI Responses", "Response", "ResponseRequest")
    completions = _panel_op(
        "Ask a panel, legacy completions", "TextCompletion", "CompletionRequest"
    )
    models = {"get": _op("Collections as models", _json("ModelList", "the list"), errors=("401",))}
    return {
        "/v1/responses": responses,
        "/responses": responses,
        "/v1/completions": completions,
        "/completions": completions,
        "/models": models,
        "/v1/models/{model}": _model_op(),
        "/models/{model}": _model_op(),
    }


def describe() -> Schema:
    chat = _chat()
    messages, count_tokens = _anthropic()
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
                "PendingRequest": PENDING_REQUEST,
                "Pending": PENDING,
                "CallRecord": CALL_RECORD,
                "PanelRecord": PANEL_RECORD,
                "ConversationRecord": CONVERSATION_RECORD,
                "PanelPage": PANEL_PAGE,
                "ModelList": MODEL_LIST,
                "BenchModels": BENCH_MODELS,
                "BenchUsage": BENCH_USAGE,
                "AnthropicRequest": ANTHROPIC_REQUEST,
                "AnthropicMessage": ANTHROPIC_MESSAGE,
                "AnthropicError": ANTHROPIC_ERROR,
                "TokenCount": TOKEN_COUNT,
                **openapi_formats.SCHEMAS,
                **OPENAI_SCHEMAS,
            },
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "apiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"},
            },
        },
        "paths": {
            "/v1/chat/completions": chat,
            "/chat/completions": chat,
            "/v1/messages": messages,
            "/messages": messages,
            "/v1/messages/count_tokens": count_tokens,
            "/messages/count_tokens": count_tokens,
            "/v1/models": {
                "get": _op("Collections as models", _json("ModelList", "the list"), errors=("401",))
            },
            "/bench/verdict": {
                "post": _op(
                    "A verdict on a call",
                    _json("Recorded", "recorded"),
                    "Verdict",
                    ("400", "401"),
                    mine=True,
                )
            },
            "/bench/pending": {
                "post": _op(
                    "Which calls are answered and unjudged (without calls: the newest owed)",
                    _json("Pending", "the calls sorted by verdict state"),
                    "PendingRequest",
                    ("400", "401"),
                )
            },
            "/bench/panels": {
                "get": {
                    **_op(
                        "Recent panels, newest first, with every seat",
                        _json("PanelPage", "a page of panels"),
                        errors=("400", "401", "404"),
                        mine=True,
                    ),
                    "parameters": [
                        _query("limit", {"type": "integer", "minimum": 1, "maximum": 100}),
                        _query("before", {"type": "string"}, "the `next` of the previous page"),
                        _query("owed", {"type": "boolean"}, "only panels owing a verdict"),
                    ],
                }
            },
            "/bench/panels/{panel}": {
                "get": {
                    **_op(
                        "A panel as recorded",
                        _json("PanelRecord", "the panel"),
                        errors=("401",),
                        mine=True,
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
                        errors=("401",),
                        mine=True,
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
            "/bench/conversations/{conversation}": {
                "get": {
                    **_op(
                        "A route conversation and its turns",
                        _json("ConversationRecord", "the conversation"),
                        errors=("401",),
                        mine=True,
                    ),
                    "parameters": [
                        {
                            "name": "conversation",
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
            "/bench/usage": {
                "get": {
                    **_op(
                        "Calls, tokens and errors per day, model, connection and key",
                        _json("BenchUsage", "the month's usage (a key's own; local: all)"),
                        errors=("400", "401"),
                    ),
                    "parameters": [
                        {
                            "name": "month",
                            "in": "query",
                            "required": False,
                            "schema": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}$"},
                        }
                    ],
                }
            },
            "/healthz": {"get": _op("Ready?", {"description": "ready"})},
            "/openapi.json": {"get": _op("This description", {"description": "OpenAPI 3.1"})},
            **openapi_formats.PATHS,
            **_openai_paths(),
        },
    }
