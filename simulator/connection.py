"""The TCP connection under a request, for the faults that must break it (`reset`, `cut`).

ASGI has no message that closes a connection without a response, or resets it; the simulator
must, because that is what a failing upstream does. Raising is the only public way to break a
response, and it is not the same: uvicorn answers a raise before the response starts with a 500
(a reset would become a 500), and logs each raise as the app's error. So under uvicorn the
connection's transport is reached through the server's own ``send`` callable, a bound method of
uvicorn's request cycle (``send.__self__.transport``: `RequestResponseCycle.send`, or the
gateway's protocol's replacement for it, also bound to the cycle), remembered in the scope
before any middleware wraps it. There is no public seam for it in uvicorn 0.54.0: the scope
holds the peer's address (``client``) but no transport, no ASGI extension closes a connection,
and a protocol class of the simulator's own (``http=``) would subclass uvicorn's (its module and
constructor are internal too) to catch each transport in ``connection_made``, and would have to
be passed by every server that runs the simulator, the tests' (the gateway's protocol) too. Under
any other server there is no transport, and the fault is raised instead, which still breaks the
response, just less precisely.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from typing import Any

from starlette.types import Scope

SERVER_SEND = "bench_gateway.sim.server_send"  # scope key holding uvicorn's unwrapped send


def transport_of(scope: Scope) -> Any:
    """The request's transport, or None when the server is not uvicorn."""
    transport = getattr(getattr(scope.get(SERVER_SEND), "__self__", None), "transport", None)
    if transport is None or not callable(getattr(transport, "abort", None)):  # asyncio, uvloop
        return None
    return transport


async def close(transport: Any, *, abrupt: bool, gone: asyncio.Event) -> None:
    """Close *transport*: RST if *abrupt* (no response at all), else a plain FIN; then wait (a
    while) for the server to notice the client gone, so it logs no error."""
    if abrupt:  # SO_LINGER 0 makes close() send RST: the client sees ECONNRESET
        with contextlib.suppress(OSError, AttributeError):
            transport.get_extra_info("socket").setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
            )
        transport.abort()
    else:
        transport.close()  # flushes what was written, then FIN mid chunked body
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(gone.wait(), 5)
