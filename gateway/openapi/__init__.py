"""The OpenAPI description served at /openapi.json, written by hand to match the contract.

A test checks every route of the app is described here (and nothing more), and that real
replies validate against these schemas, so the description cannot drift from the code.
`describe()` assembles it from one module per part: what they share (common), the records
under /bench and their figures, and the client formats (OpenAI, Anthropic, Ollama and Gemini).

May import: panel (seat statuses, the reply's fields), store (the records' fields).
"""

from __future__ import annotations

from gateway.openapi import anthropic, common, figures, ollama_gemini, openai, records
from gateway.openapi.common import Schema, operation

__all__ = ["Schema", "describe"]


def describe() -> Schema:
    chat = openai.chat_op()
    messages, count_tokens = anthropic.messages_ops()
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Bench Gateway",
            "version": "0.1.0",
            "description": "An OpenAI-compatible panel gateway.",
        },
        "components": {
            "schemas": {
                **common.SCHEMAS,
                **openai.CHAT_SCHEMAS,
                **records.SCHEMAS,
                "ModelList": openai.MODEL_LIST,
                **figures.FIGURES,
                **anthropic.SCHEMAS,
                **ollama_gemini.SCHEMAS,
                **openai.OPENAI_SCHEMAS,
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
            "/v1/models": openai.models_op(),
            **records.PATHS,
            "/healthz": {"get": operation("Ready?", {"description": "ready"})},
            "/openapi.json": {"get": operation("This description", {"description": "OpenAPI 3.1"})},
            **ollama_gemini.PATHS,
            **openai.paths(),
        },
    }
