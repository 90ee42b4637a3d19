"""The one path from a caller to a running panel, whatever door it came in by (a client format's
route, an MCP `ask`): worker admission, the key's scope and rpm, seating, the run started.

Kept in one place so the MCP tools cannot drift from the HTTP routes: the same 503 at capacity,
the same 403 outside a key's scope, the same 429 over its rpm, counted once per panel.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from gateway.asking import Ask
from gateway.keys import Client
from gateway.panel import PanelRun, seat
from gateway.runtime import Runtime


async def start_panel(
    runtime: Runtime, client: Client, read: Callable[[], Awaitable[Ask]]
) -> PanelRun:
    """Admit, read what is asked, seat it and start it; the worker's ticket is held until the
    run ends. *read* runs after admission, so a worker at capacity refuses before reading a
    body. A refusal (a GatewayError) seats nobody, calls nothing and gives the ticket back."""
    ticket = runtime.admission.admit(runtime.config.gateway.max_calls)
    try:
        ask = await read()
        with runtime.gatekeeper.admitted(client, ask.collection):  # scope, then the key's rpm
            run = await seat(runtime, ask, key_name=client.name)
    except BaseException:
        ticket.release()
        raise
    ticket.resize(len(run.facts.plan.seats))
    run.start().add_done_callback(ticket.release)
    return run
