"""`Format`: what every client format implements, and all that gateway/endpoints/asking.py
calls on one (gateway/formats/__init__.py says what each half does)."""

from __future__ import annotations

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


class Format(Protocol):
    """What every client format implements (gateway/endpoints/asking.py calls nothing else)."""

    def check(self, body: dict[str, Any], settings: GatewaySettings) -> dict[str, Any]: ...

    def read(self, body: dict[str, Any], headers: dict[str, str], config: Config) -> Ask: ...

    async def render_run(self, run: PanelRun) -> Response: ...

    def read_route(
        self, body: dict[str, Any], headers: dict[str, str], collection: str
    ) -> RouteAsk: ...

    async def render_route(self, turn: RouteTurn) -> Response: ...

    def render_error(self, error: GatewayError) -> Response: ...
