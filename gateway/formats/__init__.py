"""Client formats: one folder per format, each with the same halves.

- **read** (`read.py`): the format's request -> an `Ask` (gateway/panel/ask.py), in two steps:
  `check`, pure and bounded, refuses a body too large in structure and returns what `read`
  needs (it may run in another process: gateway/bodies.py); then `read` makes the Ask from that
  and the headers. Chat, completions and Ollama check every field in `check`; Anthropic,
  Responses and Gemini translate through litellm, which the child process must not import, so
  their `check` is the generic bound (`bodies.bounded`) and their own fields are checked in
  `read`. Either way every format's messages and sampling pass the shared chat checks;
- **render** (`render.py`): a `PanelRun` -> the format's reply, plain or streamed from the same
  run, and its errors in its own shape;
- **route** (`route.py`): an agent's turn both ways (gateway/route/): `read_route` the request
  as a `RouteAsk`, `render_route` the member's reply.

Each format package is a `Format` (Ollama's two, `CHAT` and `GENERATE`, and Gemini's, made per
request because the collection is in the path, are objects). The folders: `chat`,
`completions` (no tools: its route half refuses), `responses`, `anthropic`, `ollama`, `gemini`;
`sse` is what the SSE formats share (chat and completions one stream writer).

An error raised before any format has read the request (the guard's 403 and 415, the app's 404,
405 and 500) is still the caller's: `error_renderer_for(path)` picks the format by the path the
client called, so an Anthropic client gets `{"type": "error", ...}` and its SDK raises the
right exception, not a JSON parse error on OpenAI's shape.

May import: panel, route, records, access, state, upstream (litellm's format adapters), runtime,
config, errors, routing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from starlette.responses import Response

    from gateway.config.schema import GatewaySettings
    from gateway.config.settings import Config
    from gateway.errors import GatewayError
    from gateway.panel.ask import Ask
    from gateway.panel.run import PanelRun
    from gateway.route.ask import RouteAsk
    from gateway.route.turn import RouteTurn

    ErrorRenderer = Callable[[GatewayError], Response]


class Format(Protocol):
    """What every client format implements (gateway/endpoints/asking.py calls nothing else)."""

    def check(self, body: dict[str, Any], settings: GatewaySettings) -> dict[str, Any]: ...

    def read(self, body: dict[str, Any], headers: dict[str, str], config: Config) -> Ask: ...

    async def render_run(self, run: PanelRun) -> Response: ...

    def read_route(self, body: dict[str, Any], collection: str) -> RouteAsk: ...

    async def render_route(self, turn: RouteTurn) -> Response: ...

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
