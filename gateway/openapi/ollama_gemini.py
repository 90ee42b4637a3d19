"""The OpenAPI description of the Ollama and Gemini routes (`describe()` merges it in).

Their bodies are the formats' own (Ollama's API, Google's generateContent), documented by their
owners, so only the shape of each route, what it answers and how its errors look are given here.
"""

from __future__ import annotations

from typing import Any

_OLLAMA_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {"type": "string"}, "bench": {"type": "object"}},
}
_GEMINI_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "status"],
            "properties": {
                "code": {"type": "integer"},
                "message": {"type": "string"},
                "status": {"type": "string"},
            },
        }
    },
}
_OBJECT = {"type": "object"}
SCHEMAS = {"OllamaError": _OLLAMA_ERROR, "GeminiError": _GEMINI_ERROR}


def _body(
    schema: dict[str, Any], description: str, media: str = "application/json"
) -> dict[str, Any]:
    return {"description": description, "content": {media: {"schema": schema}}}


def _op(
    summary: str, ok: dict[str, Any], error: str, codes: tuple[str, ...], body: bool = True
) -> dict[str, Any]:
    op: dict[str, Any] = {"summary": summary, "responses": {"200": ok}}
    for code in codes:
        op["responses"][code] = _body({"$ref": f"#/components/schemas/{error}"}, "refused")
    if body:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": _OBJECT}}}
    return op


_PANEL_CODES = ("400", "401", "403", "404", "413", "429", "502", "503")
_MODEL = {"name": "model", "in": "path", "required": True, "schema": {"type": "string"}}


def _ollama_panel(summary: str) -> dict[str, Any]:
    ok = {
        "description": "NDJSON lines, the last `done` with `bench`; one object if stream false",
        "content": {
            "application/x-ndjson": {"schema": _OBJECT},
            "application/json": {"schema": _OBJECT},
        },
    }
    return {"post": _op(summary, ok, "OllamaError", _PANEL_CODES)}


def _gemini(
    summary: str, ok: dict[str, Any], codes: tuple[str, ...] = _PANEL_CODES
) -> dict[str, Any]:
    return {"post": {**_op(summary, ok, "GeminiError", codes), "parameters": [_MODEL]}}


PATHS: dict[str, Any] = {
    "/api/chat": _ollama_panel(
        "Ollama chat: ask a panel, or in route mode (`bench/<c>:route`) one member, tools passed "
        "through both ways"
    ),
    "/api/generate": _ollama_panel("Ollama generate: ask a panel (route mode is on /api/chat)"),
    "/api/tags": {
        "get": _op("Collections as Ollama models", _body(_OBJECT, "the list"), "OllamaError",
                   ("401",), body=False)
    },
    "/api/show": {
        "post": _op("One collection's details", _body(_OBJECT, "the model"), "OllamaError",
                    ("400", "401", "403", "404"))
    },
    "/api/version": {"get": _op("The gateway's version", _body(_OBJECT, "version"), "OllamaError",
                                (), body=False)},
    "/v1beta/models/{model}:generateContent": _gemini(
        "Gemini generateContent: ask a panel, or in route mode (`<c>:route`) one member, function "
        "calls passed through both ways (bench in the X-Bench-* headers)",
        _body(_OBJECT, "a GenerateContentResponse"),
    ),
    "/v1beta/models/{model}:streamGenerateContent": _gemini(
        "Gemini streamGenerateContent: SSE with alt=sse, else a JSON array",
        {
            "description": "a chunk per seat section (route mode: per piece of the member's text)",
            "content": {"text/event-stream": {"schema": {"type": "string"}},
                        "application/json": {"schema": {"type": "array"}}},
        },
    ),
    "/v1beta/models/{model}:countTokens": _gemini(
        "An estimate of the prompt's tokens; no model is called",
        _body(_OBJECT, "{totalTokens}"),
        ("400", "401", "403", "404"),
    ),
    "/v1beta/models": {
        "get": _op("Collections as Gemini models", _body(_OBJECT, "{models}"), "GeminiError",
                   ("401",), body=False)
    },
    "/v1beta/models/{name}": {
        "get": {
            **_op("One collection as a Gemini model", _body(_OBJECT, "a Model"), "GeminiError",
                  ("401", "403", "404"), body=False),
            "parameters": [{**_MODEL, "name": "name"}],
        }
    },
}  # fmt: skip

# Gemini's v1 methods, served as v1beta's (langchain-google-genai asks v1 by default).
PATHS.update(
    {
        path.replace("/v1beta/", "/v1/", 1): PATHS[path]
        for path in (
            "/v1beta/models/{model}:generateContent",
            "/v1beta/models/{model}:streamGenerateContent",
            "/v1beta/models/{model}:countTokens",
        )
    }
)
