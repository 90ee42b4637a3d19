"""gateway/serving.py: the server every gateway process runs wakes once a tick when idle, and at
once when told to stop."""

from __future__ import annotations

import httpx
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from gateway.serving import ServerThread


def _app() -> Starlette:
    return Starlette(routes=[Route("/", lambda request: PlainTextResponse("here"))])


def test_a_server_told_to_stop_stops_without_waiting_out_its_tick():
    """With an hour's tick, a server that waited for its next tick to notice would still be
    running when the join below gives up."""
    server = ServerThread(_app())
    server.server.tick_s = 3600
    server.start()
    assert httpx.get(server.url).text == "here"
    server.stop(timeout=30)
    assert server.thread is not None and not server.thread.is_alive()
