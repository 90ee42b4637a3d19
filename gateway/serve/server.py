"""The uvicorn server the gateway runs on, and running an ASGI app on one in a background thread.

The demo runs the simulated upstream and the gateway side by side in threads, and the tests use
them to drive both over real loopback HTTP. Served with the gateway's own protocol (request heads
bounded in size and time: gateway/serve/connection.py), as `serve` serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import uvicorn

from gateway.serve import process
from gateway.serve.connection import HeadLimitedProtocol, linger
from gateway.serve.ports import bound_socket, free_port, url_of

__all__ = ["Server", "ServerThread", "free_port", "run_server"]

TICK_S = 1.0  # how often an idle server wakes: the Date header's resolution

log = logging.getLogger("uvicorn.error")


class Server(uvicorn.Server):
    """uvicorn's server, woken when it is told to stop rather than polling for it.

    Why: uvicorn's main loop wakes ten times a second to see whether it should stop (every tenth
    time it also refreshes the Date header). An idle worker spent 1.7 ms of CPU a second on
    those wake-ups here, more than the gateway's own work on a route turn. This one wakes once a
    second for the Date header (and uvicorn's other once-a-second duties), and at once when
    `should_exit` is set: by a signal, or from any thread (a test's `ServerThread.stop`, a
    worker's orphan watch)."""

    def __init__(
        self,
        config: uvicorn.Config,
        *,
        tick_s: float = TICK_S,
        listening: Callable[[], None] | None = None,
        reload: Callable[[], None] | None = None,
        replaceable: bool = False,
    ) -> None:
        """*listening*: called once, as soon as the server takes connections (`serve` prints
        its URL then, in every worker mode). *reload*: what SIGHUP does, called on the loop
        (`serve` reloads its config: gateway/serve/reload.py); None: drain and stop, as on
        SIGTERM (the simulated upstream). *replaceable*: a worker of `serve --workers N`,
        which SIGUSR1 stops as replaced (`replaced`)."""
        self.tick_s = tick_s
        self.listening = listening
        self.reload = reload
        self.replaceable = replaceable
        self.lingering = False
        self._hung_up = False  # a SIGHUP came before the loop ran
        self._exiting = False
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        super().__init__(config)

    @property  # (uvicorn's is a plain attribute; this one also wakes the loop)
    def should_exit(self) -> bool:
        return self._exiting

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        self._exiting = value
        wake, loop = self._wake, self._loop
        if value and wake is not None and loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nothing to wake
                loop.call_soon_threadsafe(wake.set)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """uvicorn's (SIGINT, SIGTERM), and SIGHUP: left to its default, a terminal's hang-up
        ended a foreground server at once, cutting every request in flight."""
        with super().capture_signals():
            if threading.current_thread() is not threading.main_thread():
                yield  # (signals reach only the main thread: a server in a thread has none)
                return
            before = signal.signal(signal.SIGHUP, self.hang_up)
            if self.replaceable:
                signal.signal(signal.SIGUSR1, self.replaced)
            try:
                yield
            finally:
                signal.signal(signal.SIGHUP, before)

    def hang_up(self, sig: int, frame: FrameType | None) -> None:
        """SIGHUP: `reload`, on the loop (a signal handler may not touch it); without one,
        drain the requests in flight and stop, as on SIGTERM (the exit is 0: nothing is
        re-raised)."""
        loop = self._loop
        if self.reload is not None and loop is not None:
            loop.call_soon_threadsafe(self.reload)
            return
        if self.reload is not None:  # not serving yet: reloaded once it is (`main_loop`)
            log.info("Received SIGHUP while starting: the config is read again once serving.")
            self._hung_up = True
            return
        log.info("Received SIGHUP: finishing the requests in flight, then stopping.")
        self.should_exit = True

    def replaced(self, sig: int, frame: FrameType | None) -> None:
        """SIGUSR1, from the supervisor once this worker's successor listens on its socket:
        stop as on SIGTERM, but answer what comes on the connections already open before
        closing them (gateway/serve/connection.py `shutdown`), so no client reusing one meets
        a reset."""
        log.info("Replaced on a reload: finishing what is in flight, then stopping.")
        self.lingering = True
        self.should_exit = True

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.lingering:
            linger(self.server_state)
        await super().shutdown(sockets)

    async def main_loop(self) -> None:
        self._wake = asyncio.Event()
        self._loop = asyncio.get_running_loop()  # (after the event: the setter needs both)
        if self.listening is not None:
            self.listening()
        if self.reload is not None and (self._hung_up or process.hung_up_while_starting()):
            self.reload()  # a SIGHUP that came while starting
        while not await self.on_tick(0):  # tick 0: the Date header and the checks, each time
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.tick_s):
                    await self._wake.wait()


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
            proxy_headers=False,  # believed from gateway.trusted_proxies only (gateway/app.py)
            timeout_graceful_shutdown=10,
            http=http or HeadLimitedProtocol,
        )
        self.server = Server(config)
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return url_of(self.host, self.port)

    def start(self, timeout: float = 30.0) -> ServerThread:
        """Binds the port here, in the caller's thread, so that a busy port is `PortInUse`
        (an OSError, errno EADDRINUSE) to the caller, not a log line in the server's thread."""
        sock = bound_socket(self.host, self.port)
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


def run_server(
    app: Any,
    sock: socket.socket,
    listening: Callable[[], None] | None = None,
    reload: Callable[[], None] | None = None,
    **options: Any,
) -> int:
    """Serve *app* on *sock* (from `bound_socket`) in this thread until told to stop, as
    `uvicorn.run(app, **options)` does for one process, on the gateway's `Server`: 0, or 3
    (uvicorn's) when it never started."""
    server = Server(uvicorn.Config(app, **options), listening=listening, reload=reload)
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])
    return 0 if server.started else 3
