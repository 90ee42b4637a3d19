"""The one path from a caller to a running panel, whatever door it came in by (a client format's
route, an MCP `ask`): worker admission, the key's scope and rpm, seating, the run started.

Kept in one place so the MCP tools cannot drift from the HTTP routes: the same 503 at capacity,
the same 403 outside a key's scope, the same 429 over its rpm, counted once per panel.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from gateway.access.keys import Client
from gateway.panel.ask import Ask
from gateway.panel.run import PanelRun, seat
from gateway.runtime import Runtime
from gateway.state.admission import Ticket


@contextmanager
def admitted(runtime: Runtime) -> Iterator[Ticket]:
    """A ticket for a panel of up to `gateway.max_calls` seats (503 at capacity), given back
    if what follows fails; once a run holds it, the run's end gives it back."""
    ticket = runtime.admission.admit(runtime.config.gateway.max_calls)
    try:
        yield ticket
    except BaseException:
        ticket.release()
        raise


async def start_panel(runtime: Runtime, client: Client, ask: Ask, ticket: Ticket) -> PanelRun:
    """Seat *ask* for *client* (403 outside its scope, 429 over its rpm) and start the run,
    which holds *ticket* until it ends. A refusal seats nobody and calls nothing."""
    with runtime.keys.admitted(client, ask.collection):  # scope, then the key's rpm
        run = await seat(runtime, ask, client)
    ticket.resize(len(run.facts.plan.seats))
    run.start().add_done_callback(ticket.release)
    return run
