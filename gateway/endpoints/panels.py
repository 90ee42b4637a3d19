"""A panel, from a request's checked body to its run: the format reads it into an Ask, and the
panel is seated and started (gateway/panel/seating.py); the format then renders the run, plain
or streamed from the same run. A refusal before seating seats nobody and calls no upstream."""

from __future__ import annotations

from typing import Any

from gateway.formats.format import Format
from gateway.panel.ask import refuse_panel_loop
from gateway.panel.run import PanelRun
from gateway.panel.seating import start_panel
from gateway.request.client import Client
from gateway.runtime import Runtime
from gateway.state.admission import Ticket


async def ask_panel(
    runtime: Runtime,
    fmt: Format,
    client: Client,
    ticket: Ticket,
    body: dict[str, Any],
    headers: dict[str, str],
) -> PanelRun:
    """Read and seat *body*, as the format's check made it (*headers* lower-cased). The started
    run holds *ticket* until it ends; a refusal here leaves it to the caller
    (endpoints/asking.py), which gives it back."""
    ask = fmt.read(body, headers, runtime.config)
    refuse_panel_loop(ask.messages, runtime.config.gateway.panel_turns_max)
    return await start_panel(runtime, client, ask, ticket)
