"""OpenAI Responses' request body, as a panel reads it (gateway/formats/responses/read.py):
`input` a string or items (messages, and earlier tool calls and results the seats read as
text), the fields the gateway cannot honour (stored responses, stored prompts, background)
refused, its hint fields named where no seat takes them, any other field named as dropped."""

from __future__ import annotations

from gateway.openapi.common import Schema
from gateway.openapi.sampling import REPLY, TOOL_CHOICE

_TEXT_PART: Schema = {
    "type": "object",
    "required": ["type", "text"],
    "properties": {"type": {"enum": ["input_text", "output_text"]}, "text": {"type": "string"}},
}
_IMAGE_PART: Schema = {
    "type": "object",
    "required": ["type", "image_url"],
    "properties": {
        "type": {"const": "input_image"},
        "image_url": {"type": "string", "pattern": "^(https?://|data:image/)"},
        "file_id": {"type": "null", "description": "file ids cannot be honoured"},
    },
}
_MESSAGE: Schema = {
    "type": "object",
    "required": ["role", "content"],
    "properties": {
        "type": {"const": "message"},
        "role": {"enum": ["user", "assistant", "system", "developer"]},
        "content": {
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {"anyOf": [_TEXT_PART, _IMAGE_PART]}},
            ]
        },
    },
}
_CALLS = ["function_call", "custom_tool_call"]
_RESULTS = ["function_call_output", "custom_tool_call_output"]
_TOOL_ITEM: Schema = {
    "type": "object",
    "required": ["type"],
    "properties": {"type": {"enum": [*_CALLS, *_RESULTS, "reasoning"]}},
    "description": "the seats read earlier calls and results as text; reasoning is named in "
    "X-Bench-Dropped",
}
# Something the seats read: a message, a call, or a result that names its call.
_READ: Schema = {
    "anyOf": [
        _MESSAGE,
        {"type": "object", "required": ["type"], "properties": {"type": {"enum": _CALLS}}},
        {
            "type": "object",
            "required": ["type", "call_id"],
            "properties": {"type": {"enum": _RESULTS}, "call_id": {"type": "string",
                                                                  "minLength": 1}},
        },
    ]
}  # fmt: skip
_FUNCTION: Schema = {
    "type": "object",
    "required": ["type", "name"],
    "properties": {"type": {"const": "function"}, "name": {"type": "string", "minLength": 1}},
}
_NAMESPACE: Schema = {
    "type": "object",
    "required": ["type", "name"],
    "properties": {
        "type": {"const": "namespace"},
        "name": {"type": "string"},
        "tools": {
            "type": ["array", "null"],
            "items": {
                "anyOf": [
                    _FUNCTION,
                    {"type": "object", "properties": {"type": {"not": {"const": "function"}}}},
                ]
            },
        },
    },
}
_HOSTED: Schema = {
    "type": "object",
    "properties": {"type": {"not": {"enum": ["function", "namespace"]}}},
    "description": "a hosted tool: named in X-Bench-Dropped",
}
_HINT: Schema = {
    "description": "a hint: given where a seat takes it, else named in X-Bench-Dropped"
}
_FORMAT: Schema = {
    "anyOf": [
        {"type": "null"},
        {"type": "object", "required": ["type"],
         "properties": {"type": {"enum": ["text", "json_object"]}}},
        {"type": "object", "required": ["type", "schema"],
         "properties": {"type": {"const": "json_schema"}, "schema": {"type": "object"}}},
    ]
}  # fmt: skip
_INT64 = 2**63 - 1

RESPONSE_REQUEST: Schema = {
    "type": "object",
    "required": ["model", "input"],
    "properties": {
        "model": {
            "type": "string",
            "description": "bench/<collection>[:merged|:route] or bench/panel",
        },
        "input": {
            "anyOf": [
                {"type": "string", "minLength": 1},
                {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 1000,
                    "items": {"anyOf": [_MESSAGE, _TOOL_ITEM]},
                    "contains": _READ,
                },
            ]
        },
        "instructions": {"type": ["string", "null"]},
        "store": {"enum": [False, None], "description": "true is refused: no responses are kept"},
        "previous_response_id": {"type": "null", "description": "refused: nothing is stored"},
        "conversation": {"type": "null", "description": "refused: nothing is stored"},
        "prompt": {"type": "null", "description": "refused: no stored prompts"},
        "background": {"enum": [False, None], "description": "a panel answers in the request"},
        "stream": {"type": "boolean"},
        "n": {"enum": [1, None]},
        "temperature": {"type": ["number", "null"], "minimum": 0, "maximum": 2},
        "top_p": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
        "max_output_tokens": {"type": ["integer", "null"], "minimum": 1, "maximum": _INT64},
        "user": {"type": ["string", "null"]},
        "text": {
            "type": ["object", "null"],
            "properties": {"format": _FORMAT, "verbosity": _HINT},
        },
        "reasoning": {
            "type": ["object", "null"],
            "properties": {"effort": {"type": ["string", "null"], **_HINT}},
            "description": "effort is a hint; any other field is named in X-Bench-Dropped",
        },
        "tools": {
            "type": ["array", "null"],
            "items": {"anyOf": [_FUNCTION, _NAMESPACE, _HOSTED]},
            "description": "a panel answers in prose: named in X-Bench-Dropped",
        },
        "tool_choice": TOOL_CHOICE,
        "include": _HINT,
        "client_metadata": _HINT,
        "with": {"type": ["array", "null"], "items": {"type": "string"}},
        "bench": REPLY,
    },
    "description": "OpenAI's hint fields (parallel_tool_calls, prompt_cache_key, ...) are given "
    "where a seat takes them; any other field is named in X-Bench-Dropped",
}
