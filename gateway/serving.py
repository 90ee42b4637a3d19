"""The uvicorn server every gateway process runs, and running one in a background thread.

`Server` is uvicorn's, woken once a second when idle instead of ten times. uvicorn's main loop
sleeps 0.1 s between checks of whether to stop: an idle gateway spent 1.0 ms of CPU a second on
them here (each wake-up finds cold caches), which on a route turn against a 0.3 s member was
about 0.6 ms of the gateway's ~9 ms per turn. Being told to stop (a signal, a supervisor gone,
`ServerThread.stop`) wakes it at once, so stopping is as quick as before.

The demo runs the simulated upstream and the gateway side by side in threads, and the tests use
it to drive both over real loopback HTTP. Served with the gateway's own protocol (request heads
bounded in size and time: gateway/protocol.py), as `serve` serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
import threading
import time
from typing import Any, cast

import uvicorn
from uvicorn.config import STARTUP_FAILURE

from gateway.protocol import HeadLimitedProtocol

TICK_S = 1.0


class Server(uvicorn.Server):
    """uvicorn's server with a one-second tick (see the module's docstring)."""

    def __init__(self, config: uvicorn.Config, tick_s: float = TICK_S) -> None:
        self.tick_s = tick_s
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._stop = False
        super().__init__(config)

    @property
    def should_exit(self) -> bool:
        return self._stop

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        self._stop = value
        loop, wake = self._loop, self._wake
        if value and loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already closed
                loop.call_soon_threadsafe(wake.set)

    async def main_loop(self) -> None:
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        ticks = 0
        while not await self.on_tick(ticks):
            ticks = (ticks + round(self.tick_s / 0.1)) % 864000  # (uvicorn's are 0.1 s)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.tick_s):
                    await self._wake.wait()


def run(app: Any, sockets: list[socket.socket] | None = None, **options: Any) -> None:
    """`uvicorn.run(app, **options)` for one process, on `Server`: exits as uvicorn does
    (STARTUP_FAILURE) when the server never started."""
    server = Server(uvicorn.Config(app, **options))
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=sockets)
    if not server.started:
        sys.exit(STARTUP_FAILURE)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return cast(int, sock.getsockname()[1])  # (typeshed: Any, as address shapes vary)


class ServerThread:
    def __init__(
        self,
        app: Any,
        host: str = "127.0.0.1",
        port: int | None = None,
        *,
        http: type | None = None,
    ) -> None:
        """*http*: the protocol class (e.g. `HeadLimitedProtocol.limited(...)`)."""
        self.host = host
        self.port = port or free_port(host)
        config = uvicorn.Config(
            app,
            host=host,
            port=self.port,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=10,
            http=http or HeadLimitedProtocol,
        )
        self.server = Server(config)
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 30.0) -> ServerThread:
        """Binds the port here, in the caller's thread, so that a busy port is an OSError
        (errno EADDRINUSE) to the caller, not a log line in the server's thread."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self.port))
        except OSError:
            sock.close()
            raise
        self.thread = threading.Thread(
            target=self.server.run, args=([sock],), name=f"uvicorn:{self.port}", daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"server on port {self.port} did not start")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 30.0) -> None:
        self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout)

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
