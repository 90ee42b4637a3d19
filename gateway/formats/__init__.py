"""Client formats: one module per format, each with the same two halves.

- **read**: the format's request -> an `Ask` (gateway/asking.py), in two steps: `check`, pure
  and bounded, refuses a body too large in structure and returns what `read` needs (it may run
  in another process: gateway/bodies.py); then `read` makes the Ask from that and the headers.
  Chat, completions and Ollama check every field in `check` and hand `read` chat-shaped
  messages and sampling. Anthropic, Responses and Gemini translate through litellm, which the
  child process must not import, so their `check` is the generic bound (`bodies.bounded`) and
  their own fields are checked in `read`, on a body that bound has made small. Either way every
  format's messages and sampling pass the shared chat checks (`chat_messages`, `sampling_of`);
- **render**: a `PanelRun` -> the format's reply: its plain body from `completion()` or
  `failure()`, its stream from `events()`, and its errors in its own shape.

Every panel endpoint is read -> seat -> render (gateway/endpoints/); a new format is a new
module here and a route, and nothing else changes. The modules:

- `chat`: OpenAI chat completions (`/v1/chat/completions`);
- `completions`: OpenAI legacy completions (`/v1/completions`);
- `responses`: OpenAI Responses (`/v1/responses`), its typed stream in `response_events`;
- `anthropic`: Anthropic Messages (`/v1/messages`, `/v1/messages/count_tokens`);
- `ollama`: Ollama (`/api/chat`, `/api/generate`, `/api/tags`, `/api/show`), its read half in
  `ollama_request`;
- `gemini`: Gemini (`/v1beta/models/{collection}:generateContent` and its siblings), its read
  half in `gemini_request`.

An error raised before any format has read the request (the guard's 403 and 415, the app's 404,
405 and 500) is still the caller's: `error_renderer_for(path)` picks the format by the path the
client called, so an Anthropic client gets `{"type": "error", ...}` and its SDK raises the
right exception, not a JSON parse error on OpenAI's shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from starlette.responses import Response

    from gateway.asking import Ask
    from gateway.config_schema import GatewaySettings
    from gateway.errors import GatewayError
    from gateway.panel import PanelRun
    from gateway.settings import Config

    ErrorRenderer = Callable[[GatewayError], Response]


class Format(Protocol):
    """The two halves of a client format; each format module is one (gateway/endpoints/)."""

    def check(self, body: dict[str, Any], settings: GatewaySettings) -> dict[str, Any]: ...

    def read(self, body: dict[str, Any], headers: dict[str, str], config: Config) -> Ask: ...

    async def render_run(self, run: PanelRun) -> Response: ...

    def render_error(self, error: GatewayError) -> Response: ...


# The first path segments each format's clients call; every other path answers as OpenAI does
# (chat, completions, Responses, models, records: all OpenAI-shaped errors).
_FIRST_SEGMENTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("v1", "messages"), "anthropic"),
    (("messages",), "anthropic"),
    (("api",), "ollama"),
    (("v1beta",), "gemini"),
)


def format_of_path(path: str) -> str:
    """The format whose clients call *path*: anthropic, ollama, gemini, or openai."""
    segments = tuple(path.strip("/").split("/"))
    for prefix, name in _FIRST_SEGMENTS:
        if segments[: len(prefix)] == prefix:
            return name
    return "openai"


def error_renderer_for(path: str) -> ErrorRenderer:
    """How an error on *path* is shown: the render_error of the format its clients speak."""
    # Imported here: the guard needs this before any route, and the format modules pull in
    # the panel and litellm's translators, which the package itself must not need to load.
    from gateway.formats import anthropic, chat, gemini, ollama

    renderers: dict[str, ErrorRenderer] = {
        "anthropic": anthropic.render_error,
        "ollama": ollama.render_error,
        "gemini": gemini.render_error,
        "openai": chat.render_error,
    }
    return renderers[format_of_path(path)]
