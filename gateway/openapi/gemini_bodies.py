"""Gemini's generateContent body as a panel reads it (gateway/formats/gemini/read.py): contents
of text, images and earlier function calls and responses (which the seats read as text), a
system instruction of text, generationConfig's sampling and checked fields (its hints named in
X-Bench-Dropped where no seat takes them), tools named as dropped (a panel answers in prose),
and any other top-level field named as dropped. Google's snake_case spellings are read too."""

from __future__ import annotations

from gateway.openapi.common import Schema
from gateway.openapi.sampling import REPLY_NO_ROUTE
from gateway.request.checks import MAX_STOP, RANGES


def _only(name: str, value: Schema) -> Schema:
    """A part that is exactly one thing (and Google's signature for its own model's turns)."""
    return {
        "type": "object",
        "required": [name],
        "properties": {name: value, "thoughtSignature": {}},
        "additionalProperties": False,
    }


_NAMED: Schema = {"type": "object", "required": ["name"], "properties": {"name": {
    "type": "string"}}}  # fmt: skip
_INLINE: Schema = {
    "type": "object",
    "required": ["mimeType", "data"],
    "properties": {
        "mimeType": {"type": "string", "pattern": "^image/"},
        "data": {"type": "string", "pattern": "^[A-Za-z0-9+/_-]+=*$"},
    },
    "additionalProperties": False,
}
PART: Schema = {
    "anyOf": [
        _only("text", {"type": "string"}),
        _only("inlineData", _INLINE),
        _only("functionCall", _NAMED),
        _only("functionResponse", _NAMED),
    ]
}
CONTENT: Schema = {
    "type": "object",
    "required": ["parts"],
    "properties": {
        "role": {"enum": ["user", "model"]},
        "parts": {"type": "array", "minItems": 1, "items": PART},
    },
    "additionalProperties": False,
}
_SYSTEM: Schema = {
    "anyOf": [
        {"type": ["string", "null"]},
        {
            "type": "object",
            "required": ["parts"],
            "properties": {
                "role": {},
                "parts": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["text"],
                        "properties": {"text": {"type": "string"}},
                        "additionalProperties": False,
                    },
                },
            },
            "additionalProperties": False,
        },
    ]
}


def _ranged(field: str, kind: str) -> Schema:
    low, high = RANGES[field]
    return {"type": [kind, "null"], "minimum": low, "maximum": high}


_LEVEL = "|".join("".join(f"[{c}{c.lower()}]" for c in w) for w in ("MINIMAL", "LOW", "MEDIUM",
                                                                    "HIGH"))  # fmt: skip
_HINT = {"description": "a hint: given where a seat takes it, else named in X-Bench-Dropped"}
GENERATION_CONFIG: Schema = {
    "type": ["object", "null"],
    "properties": {
        "temperature": _ranged("temperature", "number"),
        "topP": _ranged("top_p", "number"),
        "maxOutputTokens": _ranged("max_tokens", "integer"),
        "seed": _ranged("seed", "integer"),
        "presencePenalty": _ranged("presence_penalty", "number"),
        "frequencyPenalty": _ranged("frequency_penalty", "number"),
        "stopSequences": {"type": ["array", "null"], "maxItems": MAX_STOP,
                          "items": {"type": "string"}},
        "candidateCount": {"enum": [1, None], "description": "a panel's answers are one "
                           "candidate, side by side"},
        "responseMimeType": {"enum": ["text/plain", "application/json", None]},
        "responseSchema": {"type": "null", "description": "a schema: see responseJsonSchema"},
        "responseJsonSchema": {"type": "null"},
        "responseModalities": {"anyOf": [{"type": "null"}, {"enum": [["TEXT"], ["text"]]}]},
        "topK": {"type": ["number", "null"], "minimum": 0, **_HINT},
        "thinkingConfig": {
            "type": ["object", "null"],
            "properties": {
                "thinkingLevel": {"type": ["string", "null"], "pattern": f"^({_LEVEL})$"},
                "thinkingBudget": {"type": ["integer", "null"]},
            },
            **_HINT,
        },
    },
    "description": "any other field is named in X-Bench-Dropped",
}  # fmt: skip
_DECLARATION: Schema = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "description": {"type": "string"},
        "parameters": {"type": "object"},
        "parametersJsonSchema": {"type": "object"},
        "response": {},
        "responseJsonSchema": {},
    },
    "additionalProperties": False,
    "not": {"required": ["parameters", "parametersJsonSchema"]},
}
_TOOL: Schema = {
    "type": "object",
    "properties": {"functionDeclarations": {"type": "array", "items": _DECLARATION}},
    "description": "a panel answers in prose: named in X-Bench-Dropped, as Google's own tools",
}
_DEMANDING: Schema = {  # mode ANY demands a call, which a panel cannot make
    "type": "object",
    "required": ["functionCallingConfig"],
    "properties": {
        "functionCallingConfig": {
            "type": "object",
            "required": ["mode"],
            "properties": {"mode": {"type": "string", "pattern": "^[Aa][Nn][Yy]$"}},
        }
    },
}
GEMINI_REQUEST: Schema = {
    "type": "object",
    "required": ["contents"],
    "properties": {
        "contents": {
            "anyOf": [CONTENT, {"type": "array", "minItems": 1, "maxItems": 1000,
                                "items": CONTENT}]
        },
        "systemInstruction": _SYSTEM,
        "generationConfig": GENERATION_CONFIG,
        "safetySettings": {"type": ["array", "null"], **_HINT},
        "tools": {"type": ["array", "null"], "items": _TOOL},
        "toolConfig": {"not": _DEMANDING},
        "cachedContent": {"enum": [None, []], "description": "stored content is refused"},
        "with": {"type": ["array", "null"], "items": {"type": "string"}},
        "bench": REPLY_NO_ROUTE,
    },
    "description": "any other field is named in X-Bench-Dropped",
}  # fmt: skip
