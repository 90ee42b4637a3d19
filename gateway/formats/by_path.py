"""How an error is shown to the clients of a path, before (or without) any format reading the
request: the guard's 403 and 415, the app's 404, 405 and 500. The format is picked by the path
the client called, so an Anthropic client gets `{"type": "error", ...}` and its SDK raises the
right exception, not a JSON parse error on OpenAI's shape."""

from __future__ import annotations

from collections.abc import Callable

from starlette.responses import Response

from gateway.errors import GatewayError
from gateway.formats import anthropic, chat, gemini, ollama

ErrorRenderer = Callable[[GatewayError], Response]

# The first path segments each format's clients call; every other path answers as OpenAI does
# (chat, completions, Responses, models, records: all OpenAI-shaped errors).
_FIRST_SEGMENTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("v1", "messages"), "anthropic"),
    (("messages",), "anthropic"),
    (("api",), "ollama"),
    (("v1beta",), "gemini"),
)


# Gemini's v1 methods (`/v1/models/<model>:generateContent`) share OpenAI's `/v1/models`.
_GEMINI_METHODS = (":generateContent", ":streamGenerateContent", ":countTokens")


def format_of_path(path: str) -> str:
    """The format whose clients call *path*: anthropic, ollama, gemini, or openai."""
    segments = tuple(path.strip("/").split("/"))
    if segments[:2] == ("v1", "models") and segments[-1].endswith(_GEMINI_METHODS):
        return "gemini"
    for prefix, name in _FIRST_SEGMENTS:
        if segments[: len(prefix)] == prefix:
            return name
    return "openai"


def error_renderer_for(path: str) -> ErrorRenderer:
    """How an error on *path* is shown: the render_error of the format its clients speak."""
    renderers: dict[str, ErrorRenderer] = {
        "anthropic": anthropic.render_error,
        "ollama": ollama.render_error,
        "gemini": gemini.render_error,
        "openai": chat.render_error,
    }
    return renderers[format_of_path(path)]
