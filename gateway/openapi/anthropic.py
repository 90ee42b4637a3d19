"""Anthropic's Messages routes, with errors in Anthropic's shape."""

from __future__ import annotations

from typing import Any

from gateway.openapi.common import SEATS_HEADER, SESSION_PARAMETERS, Schema, json_reply, ref

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
            "content": {"application/json": {"schema": ref("AnthropicRequest")}},
        },
        "responses": {
            "200": json_reply("TokenCount", "the estimate"),
            **{k: errors[k] for k in ("400", "401", "403", "404", "413")},
        },
    }
    return {"post": messages}, {"post": count}


SCHEMAS: dict[str, Schema] = {
    "AnthropicRequest": ANTHROPIC_REQUEST,
    "AnthropicMessage": ANTHROPIC_MESSAGE,
    "AnthropicError": ANTHROPIC_ERROR,
    "TokenCount": TOKEN_COUNT,
}
