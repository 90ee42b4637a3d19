"""The request fields OpenAI's panel routes share, as the server checks them
(gateway/panel/ask.py): the sampling fields and their ranges, the fields a panel refuses
(tools, `n` other than 1), the reply asked for, and chat messages with their content parts."""

from __future__ import annotations

from gateway.openapi.common import Schema
from gateway.panel.ask import MAX_LOGIT_BIAS, MAX_STOP, RANGES

_NUMBER_FIELDS = ("temperature", "top_p", "presence_penalty", "frequency_penalty")
_INTEGER_FIELDS = ("max_tokens", "max_completion_tokens", "seed")
# refused on a panel whatever their value (route mode's), so only null is taken
_TOOL_FIELDS = ("function_call", "functions", "parallel_tool_calls", "tool_choice", "tools")


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
    **{field: {"type": "null", "description": "route mode's"} for field in _TOOL_FIELDS},
}

REPLY: Schema = {
    "type": ["object", "null"],
    "additionalProperties": False,
    "properties": {"reply": {"enum": ["panel", "merged", None]}},
}

_TEXT_PART: Schema = {
    "type": "object",
    "required": ["type", "text"],
    "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
}
_IMAGE_PART: Schema = {
    "type": "object",
    "required": ["type", "image_url"],
    "properties": {
        "type": {"const": "image_url"},
        "image_url": {
            "type": "object",
            "required": ["url"],
            "properties": {"url": {"type": "string", "pattern": "^(https?://|data:image/)"}},
        },
    },
}


def messages(most: int) -> Schema:
    """Chat messages as a panel takes them: a role of four, a string or text and image parts,
    no tool call or result."""
    return {
        "type": "array",
        "minItems": 1,
        "maxItems": most,
        "items": {
            "type": "object",
            "required": ["role", "content"],
            "properties": {
                "role": {"enum": ["system", "developer", "user", "assistant"]},
                "content": {
                    "anyOf": [
                        {"type": "string"},
                        {
                            "type": "array",
                            "maxItems": most,
                            "items": {"anyOf": [_TEXT_PART, _IMAGE_PART]},
                        },
                    ]
                },
                "name": {"type": ["string", "null"]},
                "tool_calls": {"type": "null"},
                "function_call": {"type": "null"},
            },
        },
    }
