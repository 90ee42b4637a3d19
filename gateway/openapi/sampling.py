"""The request fields OpenAI's panel routes share, as the server checks them
(gateway/request/checks.py): the sampling fields and their ranges, `n` (only 1), tools (a panel
answers in prose: named as dropped; route mode passes them on) and a tool choice that does not
demand a call, the reply asked for, and chat messages with their content parts. Every format's
messages reach the seats as chat messages, so the content part bounds are shared too."""

from __future__ import annotations

from gateway.openapi.common import Schema
from gateway.request.checks import MAX_LOGIT_BIAS, MAX_STOP, RANGES

_NUMBER_FIELDS = ("temperature", "top_p", "presence_penalty", "frequency_penalty")
_INTEGER_FIELDS = ("max_tokens", "max_completion_tokens", "seed")
# A tool choice a panel can honour: none, or leaving the choice to the model; one that demands
# a call is refused (route mode's), naming `:route`.
_CALM = ("auto", "none")
TOOL_CHOICE: Schema = {
    "anyOf": [
        {"enum": [None, *_CALM]},
        {"type": "object", "required": ["type"], "properties": {"type": {"enum": list(_CALM)}}},
    ],
    "description": "a choice that demands a call (required, a named function) is refused on a "
    "panel: ask bench/<collection>:route",
}
ANY: Schema = {}


def _ranged(field: str, kind: str) -> Schema:
    low, high = RANGES[field]
    return {"type": [kind, "null"], "minimum": low, "maximum": high}


SAMPLING: dict[str, Schema] = {
    **{field: _ranged(field, "number") for field in _NUMBER_FIELDS},
    **{field: _ranged(field, "integer") for field in _INTEGER_FIELDS},
    "stop": {
        "anyOf": [
            {"type": ["string", "null"]},
            {"type": "array", "maxItems": MAX_STOP, "items": {"type": "string"}},
        ]
    },
    "user": {"type": ["string", "null"]},
    "reasoning_effort": {"type": ["string", "null"]},
    "response_format": {"type": ["object", "null"]},
    "logit_bias": {
        "type": ["object", "null"],
        "maxProperties": MAX_LOGIT_BIAS,
        "propertyNames": {"pattern": "^[0-9]{1,10}$"},
        "additionalProperties": {"type": "number", "minimum": -100, "maximum": 100},
    },
    "n": {"enum": [1, None], "description": "a panel gives one reply"},
    "tools": {
        "description": "a panel answers in prose: named in X-Bench-Dropped; route mode "
        "passes them on"
    },
    "functions": {"description": "as tools"},
    "tool_choice": TOOL_CHOICE,
    "function_call": TOOL_CHOICE,
}
# OpenAI's hint fields (gateway/request/hints.py): given where a seat's provider takes them, else
# named in X-Bench-Dropped; any value.
HINTS = ("parallel_tool_calls", "store", "metadata", "service_tier", "logprobs", "top_logprobs",
         "prompt_cache_key", "prompt_cache_retention", "safety_identifier", "verbosity", "top_k",
         "web_search_options", "modalities", "prediction")  # fmt: skip

REPLY: Schema = {
    "type": ["object", "null"],
    "additionalProperties": False,
    "properties": {"reply": {"enum": ["panel", "merged", "route", None]}},
}
# legacy completions carry no tools, so no route mode
REPLY_NO_ROUTE: Schema = {
    **REPLY,
    "properties": {"reply": {"enum": ["panel", "merged", None]}},
}

# A content part: its own fields, and at most a few others (each a plain value, or an object of
# a few plain values, such as `cache_control`), passed on as they are: what a seat is given is
# bounded (gateway/panel/ask.py `part_extras`).
PART_PROPERTIES = 8
EXTRA_VALUES = 4
_PLAIN: Schema = {"type": ["string", "number", "boolean", "null"]}
EXTRA: Schema = {
    "anyOf": [
        _PLAIN,
        {"type": "object", "maxProperties": EXTRA_VALUES, "additionalProperties": _PLAIN},
    ]
}


def _part(kind: str, field: str, value: Schema) -> Schema:
    return {
        "type": "object",
        "required": ["type", field],
        "maxProperties": PART_PROPERTIES,
        "properties": {"type": {"const": kind}, field: value},
        "additionalProperties": EXTRA,
    }


_IMAGE_URL: Schema = {
    "type": "object",
    "required": ["url"],
    "maxProperties": PART_PROPERTIES,
    "properties": {"url": {"type": "string", "pattern": "^(https?://|data:image/)"}},
    "additionalProperties": EXTRA,
}
PARTS: Schema = {
    "type": "array",
    "items": {"anyOf": [_part("text", "text", {"type": "string"}),
                        _part("image_url", "image_url", _IMAGE_URL)]},
}  # fmt: skip
_ROLES = ["system", "developer", "user", "assistant"]
_NO_CALLS: Schema = {"anyOf": [{"type": "null"}, {"type": "array", "maxItems": 0}]}
_NO_CALL: Schema = {"anyOf": [{"type": "null"}, {"type": "object", "maxProperties": 0}]}


def messages(most: int) -> Schema:
    """Chat messages as a panel takes them: a role of four with a string or text and image parts
    (at most *most* parts in all); an assistant's earlier tool calls and tool results, which
    the seats read as text."""
    plain = {
        "type": "object",
        "required": ["role", "content"],
        "properties": {
            "role": {"enum": _ROLES},
            "content": {"anyOf": [{"type": "string"}, {**PARTS, "maxItems": most}]},
            "name": {"type": ["string", "null"]},
            "tool_calls": _NO_CALLS,
            "function_call": _NO_CALL,
        },
    }
    calling = {
        "type": "object",
        "required": ["role"],
        "properties": {
            "role": {"enum": _ROLES},
            "tool_calls": {"type": ["array", "null"]},
            "function_call": {"type": ["object", "null"]},
        },
        "anyOf": [
            {
                "required": ["tool_calls"],
                "properties": {"tool_calls": {"type": "array", "minItems": 1}},
            },
            {
                "required": ["function_call"],
                "properties": {"function_call": {"type": "object", "minProperties": 1}},
            },
        ],
    }
    result = {
        "type": "object",
        "required": ["role"],
        "properties": {
            "role": {"enum": ["tool", "function"]},
            "tool_calls": {"type": ["array", "null"]},
            "function_call": {"type": ["object", "null"]},
        },
    }
    return {
        "type": "array",
        "minItems": 1,
        "maxItems": most,
        "items": {"anyOf": [plain, calling, result]},
        "description": f"at most {most} messages, and {most} content parts in all",
    }
