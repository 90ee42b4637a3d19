"""Client formats: one module per format, each with the same two halves.

- **read**: the format's request -> an `Ask` (gateway/asking.py), in two steps: `check`, pure,
  turns the parsed body into the fields the format reads, each bounded, refusing what is
  malformed in the format's own words (it may run in another process: gateway/bodies.py); then
  `read` makes the Ask from them and the headers;
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
