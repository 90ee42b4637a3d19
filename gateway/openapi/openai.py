"""OpenAI's formats: chat completions, Responses, legacy completions and the model list."""

from __future__ import annotations

from typing import Any

from gateway.openapi.common import (
    NULLABLE_STR,
    SEATS_HEADER,
    SESSION_PARAMETERS,
    Schema,
    json_reply,
    operation,
    ref,
)

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
        "usage": ref("Usage"),
        "bench": ref("Bench"),
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
                "param": NULLABLE_STR,
                "code": NULLABLE_STR,
            },
        },
        "bench": ref("Bench"),
    },
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


def chat_op() -> Schema:
    op = operation(
        "Ask a panel: every seat's answer side by side (or streamed, or merged)",
        {
            "description": "the panel's reply (text/event-stream when stream is true)",
            "headers": SEATS_HEADER,
            "content": {
                "application/json": {"schema": ref("ChatCompletion")},
                "text/event-stream": {"schema": {"type": "string"}},
            },
        },
        "ChatRequest",
        ("400", "401", "403", "404", "429"),
    )
    op["responses"]["413"] = json_reply(
        "Error", "body over the limit, or a prompt no member can hold"
    )
    op["responses"]["502"] = json_reply("Error", "no seat answered (bench carries every seat)")
    op["responses"]["503"] = json_reply("Error", "no model can be seated")
    op["parameters"] = [
        {"name": "X-Panel-Shape", "in": "header", "schema": {"type": "string"}},
        {"name": "X-Panel-With", "in": "header", "schema": {"type": "string"}},
        *SESSION_PARAMETERS,
    ]
    return {"post": op}


# -- OpenAI Responses, legacy completions, one model (issue 13) ---------------------------------

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
        "bench": ref("Bench"),
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
        "usage": ref("Usage"),
        "bench": ref("Bench"),
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
    op = chat_op()["post"]
    op = {**op, "summary": summary, "requestBody": operation("", {}, request)["requestBody"]}
    ok = {
        "description": "the panel's reply (text/event-stream when stream is true)",
        "headers": SEATS_HEADER,
        "content": {
            "application/json": {"schema": ref(reply)},
            "text/event-stream": {"schema": {"type": "string"}},
        },
    }
    op["responses"] = {**op["responses"], "200": ok}
    return {"post": op}


def _model_op() -> dict[str, Any]:
    op = operation("One listed model", json_reply("Model", "the model"), errors=("401", "404"))
    op["parameters"] = [
        {"name": "model", "in": "path", "required": True, "schema": {"type": "string"}}
    ]
    return {"get": op}


CHAT_SCHEMAS: dict[str, Schema] = {
    "Usage": USAGE,
    "ChatCompletion": COMPLETION,
    "ChatRequest": CHAT_REQUEST,
    "Error": ERROR,
}
OPENAI_SCHEMAS = {
    "Response": RESPONSE,
    "ResponseRequest": RESPONSE_REQUEST,
    "TextCompletion": TEXT_COMPLETION,
    "CompletionRequest": COMPLETION_REQUEST,
    "Model": MODEL,
}


def models_op() -> Schema:
    """/v1/models: the collections a key may use, as models."""
    return {
        "get": operation(
            "Collections as models", json_reply("ModelList", "the list"), errors=("401",)
        )
    }


def paths() -> dict[str, Any]:
    responses = _panel_op("Ask a panel, OpenAI Responses", "Response", "ResponseRequest")
    completions = _panel_op(
        "Ask a panel, legacy completions", "TextCompletion", "CompletionRequest"
    )
    return {
        "/v1/responses": responses,
        "/responses": responses,
        "/v1/completions": completions,
        "/completions": completions,
        "/models": models_op(),
        "/v1/models/{model}": _model_op(),
        "/models/{model}": _model_op(),
    }
