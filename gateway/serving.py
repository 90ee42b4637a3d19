"""Running an ASGI app on a real uvicorn server in a background thread.

The demo runs the simulated upstream and the gateway side by side this way, and the tests use
it to drive both over real loopback HTTP. Served with the gateway's own protocol (request heads
bounded in size and time: gateway/protocol.py), as `serve` serves.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any, cast

import uvicorn

from gateway.protocol import HeadLimitedProtocol


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
        self.server = uvicorn.Server(config)
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
