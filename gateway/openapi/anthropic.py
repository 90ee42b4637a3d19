"""Anthropic's Messages routes, with errors in Anthropic's shape."""

from __future__ import annotations

from typing import Any

from gateway.openapi.common import SEATS_HEADER, SESSION_PARAMETERS, Schema, json_reply, ref
from gateway.openapi.sampling import REPLY, REPLY_NO_ROUTE
from gateway.request.checks import MAX_STOP

MAX_MESSAGES = 1000  # gateway.max_messages' default

_TEXT = {"type": "object", "required": ["type", "text"],
         "properties": {"type": {"const": "text"}, "text": {"type": "string"}}}  # fmt: skip
_IMAGE = {
    "type": "object",
    "required": ["type", "source"],
    "properties": {
        "type": {"const": "image"},
        "source": {
            "anyOf": [
                {
                    "type": "object",
                    "required": ["type", "media_type", "data"],
                    "properties": {
                        "type": {"const": "base64"},
                        "media_type": {"type": "string", "pattern": "^image/"},
                        "data": {"type": "string", "minLength": 1},
                    },
                },
                {
                    "type": "object",
                    "required": ["type", "url"],
                    "properties": {
                        "type": {"const": "url"},
                        "url": {"type": "string", "pattern": "^https?://"},
                    },
                },
            ]
        },
    },
}
# earlier tool turns: the seats read them as text (route mode passes them on)
_TOOL_USE, _TOOL_RESULT = (
    {"type": "object", "required": ["type"], "properties": {"type": {"const": kind}}}
    for kind in ("tool_use", "tool_result")
)


def _message(role: str, blocks: list[Schema], least: int = 0) -> Schema:
    return {
        "type": "object",
        "required": ["role", "content"],
        "properties": {
            "role": {"const": role},
            "content": {
                "anyOf": [
                    {"type": "string", "minLength": least},
                    {"type": "array", "minItems": 1, "items": {"anyOf": blocks}},
                ]
            },
        },
    }


_SYSTEM = {"anyOf": [{"type": ["string", "null"]}, {"type": "array", "items": _TEXT}]}
_SYSTEM_MESSAGE = {  # folded into the system text, as the Messages API keeps it
    "type": "object",
    "required": ["role"],
    "properties": {"role": {"const": "system"}, "content": _SYSTEM},
}
_INT64 = 2**63 - 1
_THINKING = {
    "anyOf": [
        {"type": "null"},
        {
            "type": "object",
            "required": ["type", "budget_tokens"],
            "properties": {
                "type": {"const": "enabled"},
                "budget_tokens": {"type": "integer", "minimum": 0},
            },
        },
        {"type": "object", "required": ["type"],
         "properties": {"type": {"enum": ["adaptive", "disabled"]}}},
    ]
}  # fmt: skip
_OUTPUT_CONFIG = {
    "type": ["object", "null"],
    "properties": {
        "effort": {"enum": ["low", "medium", "high", "max", "xhigh", None]},
        "format": {
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "required": ["type", "schema"],
                    "properties": {"type": {"const": "json_schema"}, "schema": {"type": "object"}},
                },
            ]
        },
    },
    "description": "effort offered as reasoning_effort, format as response_format; any other "
    "field named in X-Bench-Dropped",
}
_HINT = {"description": "a hint: given where a seat takes it, else named in X-Bench-Dropped"}
ANTHROPIC_REQUEST: Schema = {
    "type": "object",
    "required": ["model", "messages", "max_tokens"],
    "properties": {
        "model": {
            "type": "string",
            "description": "bench/<collection>[:merged|:route] or bench/panel",
        },
        "messages": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_MESSAGES,
            "items": {
                "anyOf": [
                    _message("user", [_TEXT, _IMAGE, _TOOL_RESULT], least=1),
                    _message("assistant", [_TEXT, _TOOL_USE]),
                    _SYSTEM_MESSAGE,
                ]
            },
            "contains": {"properties": {"role": {"enum": ["user", "assistant"]}}},
        },
        "system": _SYSTEM,
        "max_tokens": {"type": "integer", "minimum": 1, "maximum": _INT64},
        "stream": {"type": "boolean"},
        "temperature": {"type": ["number", "null"], "minimum": 0, "maximum": 2},
        "top_p": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
        "top_k": {"type": ["integer", "null"], "minimum": 0, **_HINT},
        "stop_sequences": {
            "type": ["array", "null"],
            "maxItems": MAX_STOP,
            "items": {"type": "string"},
        },
        "metadata": {
            "type": ["object", "null"],
            "additionalProperties": False,
            "properties": {"user_id": {"type": ["string", "null"]}},
        },
        "thinking": _THINKING,
        "output_config": _OUTPUT_CONFIG,
        "context_management": _HINT,
        "cache_control": _HINT,
        "tools": {"description": "a panel answers in prose: named in X-Bench-Dropped"},
        "tool_choice": {
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "required": ["type"],
                    "properties": {"type": {"enum": ["auto", "none"]}},
                },
            ],
            "description": "one that demands a call (any, tool) is refused on a panel: ask "
            "bench/<collection>:route",
        },
        "with": {"type": ["array", "null"], "items": {"type": "string"}},
        "bench": REPLY,
    },
    "description": "any other field is named in X-Bench-Dropped, not passed on",
}
# count_tokens reads the same body (as a panel's: no route mode); max_tokens may be left out
ANTHROPIC_COUNT_REQUEST = {
    **ANTHROPIC_REQUEST,
    "required": ["model", "messages"],
    "properties": {**ANTHROPIC_REQUEST["properties"], "bench": REPLY_NO_ROUTE},
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
        "bench": ref("Bench"),
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
        "bench": ref("Bench"),
    },
}

TOKEN_COUNT = {
    "type": "object",
    "required": ["input_tokens"],
    "properties": {"input_tokens": {"type": "integer", "minimum": 0}},
}


def messages_ops() -> tuple[dict[str, Any], dict[str, Any]]:
    """/v1/messages and /v1/messages/count_tokens, with errors in Anthropic's shape."""

    def error(description: str) -> dict[str, Any]:
        return json_reply("AnthropicError", description)

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
            "content": {"application/json": {"schema": ref("AnthropicRequest")}},
        },
        "responses": {
            "200": {
                "description": "the panel's message (text/event-stream when stream is true)",
                "headers": SEATS_HEADER,
                "content": {
                    "application/json": {"schema": ref("AnthropicMessage")},
                    "text/event-stream": {"schema": {"type": "string"}},
                },
            },
            **errors,
        },
        "parameters": [
            {"name": "X-Panel-Shape", "in": "header", "schema": {"type": "string"}},
            {"name": "X-Panel-With", "in": "header", "schema": {"type": "string"}},
            *SESSION_PARAMETERS,
        ],
    }
    count = {
        "summary": "The gateway's estimate of a Messages prompt's tokens (no model is called)",
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": ref("AnthropicCountRequest")}},
        },
        "responses": {
            "200": json_reply("TokenCount", "the estimate"),
            **{k: errors[k] for k in ("400", "401", "403", "404", "413")},
        },
    }
    return {"post": messages}, {"post": count}


SCHEMAS: dict[str, Schema] = {
    "AnthropicRequest": ANTHROPIC_REQUEST,
    "AnthropicCountRequest": ANTHROPIC_COUNT_REQUEST,
    "AnthropicMessage": ANTHROPIC_MESSAGE,
    "AnthropicError": ANTHROPIC_ERROR,
    "TokenCount": TOKEN_COUNT,
}
