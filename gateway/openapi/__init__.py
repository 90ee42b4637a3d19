"""The OpenAPI description served at /openapi.json, written by hand to match the contract.

A test checks every route of the app is described here (and nothing more), and that real
replies validate against these schemas, so the description cannot drift from the code.
`describe()` assembles it from one module per part: what they share (common), the records
under /bench and their figures, and the client formats (OpenAI, Anthropic, Ollama and Gemini).

May import: panel (seat statuses, the reply's fields, the bounds a panel checks), store (the
records' fields), records (their bounds), config, access (a key's name).
"""

from __future__ import annotations

from gateway.openapi import (
    anthropic,
    common,
    dashboard,
    figures,
    mcp,
    ollama_gemini,
    openai,
    records,
    reload,
    suite,
)
from gateway.openapi.common import Schema, operation
from gateway.openapi.enforced import Config, enforced

__all__ = ["Schema", "describe"]


def describe(config: Config | None = None) -> Schema:
    """The description; for *config*, with what the server enforces that depends on it
    (gateway/openapi/enforced.py): the one a gateway serves."""
    document = _described()
    return document if config is None else enforced(document, config)


def _described() -> Schema:
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
                **suite.SCHEMAS,
                **reload.SCHEMAS,
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
            **suite.PATHS,
            **reload.PATHS,
            "/healthz": {"get": operation("Ready?", {"description": "ready"})},
            "/openapi.json": {"get": operation("This description", {"description": "OpenAPI 3.1"})},
            **ollama_gemini.PATHS,
            **openai.paths(),
            **dashboard.PATHS,
            **mcp.PATHS,
        },
    }
