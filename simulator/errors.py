"""The error body an OpenAI-compatible upstream sends, with the type and code a client reads."""

from __future__ import annotations

from typing import Any


def error_body(status: int, message: str) -> dict[str, Any]:
    kind, code = {
        400: ("invalid_request_error", None),
        401: ("invalid_request_error", "invalid_api_key"),
        404: ("invalid_request_error", "model_not_found"),
        429: ("requests", "rate_limit_exceeded"),
    }.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
    if "context length" in message:
        code = "context_length_exceeded"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
