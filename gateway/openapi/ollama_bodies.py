"""Ollama's request bodies as the gateway reads them (gateway/formats/ollama): every field is
one it knows (any other is refused), options passed on as sampling or, for a local runtime's
own, taken without effect. /api/chat reads a panel's body and a route turn's
(`bench/<c>:route`) differently, so each has its own."""

from __future__ import annotations

from gateway.openapi.common import PANEL_MODEL, ROUTE_MODEL, Schema
from gateway.openapi.sampling import REPLY_NO_ROUTE
from gateway.request.checks import MAX_STOP, RANGES

MAX_MESSAGES = 1000  # gateway.max_messages' default
_LATEST = "(:latest)?$"  # a listed name as Ollama clients send it
_PANEL_MODEL = {"type": "string", "pattern": PANEL_MODEL.removesuffix("$") + _LATEST}
_ROUTE_MODEL = {"type": "string", "pattern": ROUTE_MODEL}
# base64 as Python decodes it strictly: whole groups of four, padding only at the end
BASE64 = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)$"
_IMAGES: Schema = {"type": ["array", "null"], "items": {"type": "string", "pattern": BASE64}}
_RUNTIME = ("num_ctx", "num_batch", "num_gpu", "main_gpu", "low_vram", "f16_kv", "logits_all",
            "vocab_only", "use_mmap", "use_mlock", "num_thread", "numa", "num_keep")  # fmt: skip


def _ranged(field: str, kind: str) -> Schema:
    low, high = RANGES[field]
    return {"type": [kind, "null"], "minimum": low, "maximum": high}


OPTIONS: Schema = {
    "type": ["object", "null"],
    "properties": {
        "temperature": _ranged("temperature", "number"),
        "top_p": _ranged("top_p", "number"),
        "presence_penalty": _ranged("presence_penalty", "number"),
        "frequency_penalty": _ranged("frequency_penalty", "number"),
        "seed": _ranged("seed", "integer"),
        "num_predict": {
            "anyOf": [{"enum": [-1, -2, None]}, _ranged("max_tokens", "integer")],
            "description": "-1 (or -2): no limit",
        },
        "stop": {
            "anyOf": [
                {"type": ["string", "null"]},
                {"type": "array", "maxItems": MAX_STOP, "items": {"type": "string"}},
            ]
        },
        **{name: {"description": "a local runtime's: taken without effect"} for name in _RUNTIME},
    },
    "additionalProperties": {"type": "null"},
    "description": "an option that changes the answer and has no OpenAI equivalent (top_k, "
    "repeat_penalty, mirostat, ...) is refused",
}
_COMMON: Schema = {
    "format": {
        "anyOf": [{"enum": ["json", "", None]}, {"type": "object"}],
        "description": '"json" or a JSON schema',
    },
    "options": OPTIONS,
    "stream": {"type": "boolean"},
    "keep_alive": {"type": ["string", "number", "boolean", "null"]},
    "think": {"enum": [False, None], "description": "a reply carries no separate thinking"},
}
_PANEL: Schema = {
    **_COMMON,
    "logprobs": {"enum": [False, None]},
    "top_logprobs": {"enum": [0, None]},
    "with": {"type": ["array", "null"], "items": {"type": "string"}},
    "bench": REPLY_NO_ROUTE,
}
_PLAIN_MESSAGE: Schema = {
    "type": "object",
    "required": ["role"],
    "properties": {
        "role": {"enum": ["system", "user", "assistant"]},
        "content": {"type": "string"},
        "images": _IMAGES,
        "thinking": {"description": "an earlier turn's: left out, as Ollama's templates do"},
    },
    "additionalProperties": False,
}
_PANEL_MESSAGE: Schema = {
    "anyOf": [
        {**_PLAIN_MESSAGE, "properties": {**_PLAIN_MESSAGE["properties"], "role": {
            "enum": ["system", "developer", "user", "assistant"]}, "tool_name": {},
            "tool_calls": {"type": ["array", "null"], "maxItems": 0}}},
        {  # earlier tool turns: a panel's seats read them as text
            "type": "object",
            "required": ["role"],
            "properties": {
                "role": {"enum": ["tool", "system", "developer", "user", "assistant"]},
                "tool_calls": {"type": ["array", "null"]},
                "content": {}, "images": {}, "thinking": {}, "tool_name": {},
            },
            "anyOf": [{"properties": {"role": {"const": "tool"}}},
                      {"required": ["tool_calls"],
                       "properties": {"tool_calls": {"type": "array", "minItems": 1}}}],
            "additionalProperties": False,
        },
    ]
}  # fmt: skip
_FUNCTION_TOOL: Schema = {
    "type": "object",
    "required": ["function"],
    "properties": {
        "type": {"const": "function"},
        "function": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}, "parameters": {"type": "object"}},
        },
    },
}
_MESSAGES: Schema = {"type": "array", "minItems": 1, "maxItems": MAX_MESSAGES}

OLLAMA_CHAT: Schema = {
    "anyOf": [
        {
            "type": "object",
            "required": ["model", "messages"],
            "properties": {
                "model": _PANEL_MODEL,
                "messages": {**_MESSAGES, "items": _PANEL_MESSAGE},
                "tools": {"description": "a panel answers in prose: named in X-Bench-Dropped"},
                **_PANEL,
            },
            "additionalProperties": False,
        },
        {
            "type": "object",
            "required": ["model", "messages"],
            "properties": {
                "model": _ROUTE_MODEL,
                "messages": {**_MESSAGES, "items": _PLAIN_MESSAGE},
                "tools": {"type": ["array", "null"], "items": _FUNCTION_TOOL},
                "bench": {"type": ["object", "null"]},
                **_COMMON,
            },
            "additionalProperties": False,
            "description": "route mode: tools, tool calls and results pass through (a tool "
            "message answers a call of the assistant message before it)",
        },
    ]
}
OLLAMA_GENERATE: Schema = {
    "type": "object",
    "required": ["model"],
    "properties": {
        "model": _PANEL_MODEL,
        "prompt": {"type": "string"},
        "images": _IMAGES,
        "system": {"type": ["string", "null"]},
        "suffix": {"enum": ["", None], "description": "fill-in-the-middle is refused"},
        "template": {"enum": ["", None], "description": "templates are refused"},
        "context": {"type": ["array", "null"], "maxItems": 0, "description": "refused"},
        "raw": {"enum": [False, None], "description": "a raw prompt is refused"},
        **_PANEL,
    },
    "anyOf": [
        {"required": ["prompt"], "properties": {"prompt": {"pattern": r"\S"}}},
        {"required": ["images"], "properties": {"images": {"type": "array", "minItems": 1}}},
    ],
    "additionalProperties": False,
    "description": "a prompt that is not blank, or images",
}
OLLAMA_SHOW: Schema = {"type": "object", "required": ["model"], "properties": {"model": {
    "type": "string"}}}  # fmt: skip
