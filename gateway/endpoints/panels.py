"""A panel, from a request's body to its run: the format reads the body into an Ask, and the
panel is seated and started (gateway/panel/seating.py); the format then renders the run, plain
or streamed from the same run. A refusal before seating seats nobody and calls no upstream."""

from __future__ import annotations

from starlette.requests import Request

from gateway.formats.format import Format
from gateway.panel.run import PanelRun
from gateway.panel.seating import start_panel
from gateway.request.client import Client
from gateway.runtime import Runtime
from gateway.state.admission import Ticket


async def ask_panel(
    request: Request, runtime: Runtime, fmt: Format, client: Client, ticket: Ticket, raw: bytes
) -> PanelRun:
    """Read and seat. The started run holds *ticket* until it ends; a refusal here leaves it to
    the caller (endpoints/asking.py), which gives it back."""
    body = await runtime.bodies.read(raw, fmt.check)  # a heavy one off the loop
    ask = fmt.read(body, {k.lower(): v for k, v in request.headers.items()}, runtime.config)
    return await start_panel(runtime, client, ask, ticket)
