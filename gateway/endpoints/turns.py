"""A route-mode turn, from a request's body to its reply: the format reads the turn in its own
words, the key's scope and rpm are checked, the turn goes to a member (gateway/route/start.py),
and the format renders the member's reply both ways (tool calls included)."""

from __future__ import annotations

import dataclasses
from typing import Any

from starlette.responses import Response

from gateway.formats.format import Format
from gateway.request.client import Client
from gateway.route.ask import session_named
from gateway.route.start import start_turn
from gateway.runtime import Runtime
from gateway.state.admission import Ticket


async def take_turn(
    runtime: Runtime,
    fmt: Format,
    client: Client,
    ticket: Ticket,
    body: dict[str, Any],
    collection: str,
    headers: dict[str, str],
) -> Response:
    """The turn holds one seat of *ticket*, given back when its reply ends. *headers*: the
    request's, lower-cased (a format reads its betas and the session a client names there)."""
    ticket.resize(1)
    ask = fmt.read_route(body, headers, collection)
    ask = dataclasses.replace(ask, session=session_named(headers, ask.session))
    with runtime.keys.admitted(client, collection):  # scope, then the key's rpm
        turn = await start_turn(runtime, ask, client)
    turn.on_end.append(ticket.release)
    return await fmt.render_route(turn)
