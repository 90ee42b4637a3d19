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

Every panel endpoint is read -> seat -> render (gateway/endpoints.py); a new format is a new
module here and a route, and nothing else changes. `chat` is OpenAI chat completions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from starlette.responses import Response

    from gateway.asking import Ask
    from gateway.config_schema import GatewaySettings
    from gateway.errors import GatewayError
    from gateway.panel import PanelRun
    from gateway.settings import Config


class Format(Protocol):
    """The two halves of a client format; each format module is one (gateway/endpoints.py)."""

    def check(self, body: dict[str, Any], settings: GatewaySettings) -> dict[str, Any]: ...

    def read(self, body: dict[str, Any], headers: dict[str, str], config: Config) -> Ask: ...

    async def render_run(self, run: PanelRun) -> Response: ...

    def render_error(self, error: GatewayError) -> Response: ...
